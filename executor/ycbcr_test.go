package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// TestImageDecoderLikePIL: ImageDecoder gives the pixels the ONNX reference
// implementation stored (PIL on libwebp and libjpeg-turbo) for the backend
// tests' 4:2:0 WebP and JPEG noise images exactly: WebP with its chroma
// interpolated as libwebp does (repeated, as image.YCbCr.At does, 2,970 of
// 3,072 values differed, by up to 64), JPEG decoded by internal/ljpeg with
// libjpeg's islow inverse DCT (with Go's, 93 values differed by up to 2),
// and the JPEG 2000 (JP2, 5/3) image decoded by internal/jpeg2k as
// OpenJPEG decodes it (before, refused: ImageDecoder had no JPEG 2000).
func TestImageDecoderLikePIL(t *testing.T) {
	for name, within := range map[string]int{
		"test_image_decoder_decode_webp_rgb":   0,
		"test_image_decoder_decode_jpeg_rgb":   0,
		"test_image_decoder_decode_jpeg_bgr":   0,
		"test_image_decoder_decode_jpeg2k_rgb": 0,
	} {
		c, err := backendtest.Load(testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", name))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		e, err := executor.New(c.Model, executor.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer e.Close()
		ds := c.DataSets[0]
		outs, err := e.RunValues(context.Background(), ds.Inputs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := outs[0].Tensor.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		want, err := ds.Outputs[0].Tensor.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, stored %d", name, len(got), len(want))
		}
		worst, equal := 0, 0
		for i := range got {
			d := max(int(got[i])-int(want[i]), int(want[i])-int(got[i]))
			worst = max(worst, d)
			if d == 0 {
				equal++
			}
		}
		if worst > within || equal < len(got)*9/10 {
			t.Errorf("%s: %d of %d values equal, the worst %d apart, want all within %d", name, equal, len(got), worst, within)
		}
	}
}

// TestImageDecoderProgressiveLikePIL: progressive JPEG files PIL wrote
// (libjpeg-turbo's default progressive script: DC and AC first scans with
// end-of-band runs and successive-approximation refinement scans; 4:2:0,
// 4:4:4 with restart intervals, grayscale) decode to the pixels PIL
// decoded from them, every one (testdata/jpeg/make_progressive.py wrote
// both). Through Go's image/jpeg (before internal/ljpeg decoded
// progressive scans) 272, 284 and 52 values differed, by up to 2.
func TestImageDecoderProgressiveLikePIL(t *testing.T) {
	for _, c := range []struct{ file, model string }{
		{"progressive_420", "test_image_decoder_decode_jpeg_rgb"},
		{"progressive_444_restart", "test_image_decoder_decode_jpeg_rgb"},
		{"progressive_gray", "test_image_decoder_decode_jpeg_grayscale"},
	} {
		bc, err := backendtest.Load(testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", c.model))
		if err != nil {
			t.Fatal(err)
		}
		defer bc.Close()
		// the backend model's input is the length of its own file
		bc.Model.Graph.Inputs[0].Type.GetTensorType().GetShape().GetDim()[0].Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "bytes"}
		e, err := executor.New(bc.Model, executor.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		data, err := os.ReadFile(filepath.Join("testdata", "jpeg", c.file+".jpg"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "jpeg", c.file+".pixels"))
		if err != nil {
			t.Fatal(err)
		}
		in := &executor.Value{Tensor: canonical.NewTensor(bc.Model.Graph.Inputs[0].Name, canonical.Uint8, []int64{int64(len(data))}, data)}
		outs, err := e.RunValues(context.Background(), []*executor.Value{in})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		got, err := outs[0].Tensor.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, PIL decoded %d", c.file, len(got), len(want))
		}
		differ, worst := 0, 0
		for i := range got {
			if d := max(int(got[i])-int(want[i]), int(want[i])-int(got[i])); d != 0 {
				differ++
				worst = max(worst, d)
			}
		}
		if differ != 0 {
			t.Errorf("%s: %d of %d values differ from PIL's, by up to %d", c.file, differ, len(got), worst)
		}
	}
}
