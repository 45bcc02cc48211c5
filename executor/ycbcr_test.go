package executor_test

import (
	"context"
	"testing"

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
