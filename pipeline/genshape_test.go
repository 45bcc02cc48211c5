package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxtext"
)

// TestConvertSaysGeneratedShapes: a plain verified convert of a model
// whose image input has free batch, height and width and whose other
// input has no shape at all says, with the comparison (its summary and
// report), which shape each got and why — and those are the shapes the
// inputs were generated at (the report's inputs). The convolution's
// weights and the broadcast operand are initializers, or Constant nodes
// (seen through: a 1x1 image failed the Conv, and x was refused, before).
func TestConvertSaysGeneratedShapes(t *testing.T) {
	weights := strings.TrimSuffix(strings.Repeat("0.1,", 108), ",")
	for name, src := range map[string]string{
		"initializers": `<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N,3,H,W] images, float x) => (float[N,4,H2,W2] feat, float y)
    <float[4,3,3,3] w = {` + weights + `}, float[1,3] b = {1,2,3}> {
  feat = Conv <kernel_shape = [3,3], strides = [2,2]> (images, w)
  s = Add (x, b)
  y = Relu (s)
}`,
		"Constant nodes": `<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N,3,H,W] images, float x) => (float[N,4,H2,W2] feat, float y) {
  w = Constant <value = float[4,3,3,3] {` + weights + `}> ()
  b = Constant <value = float[1,3] {1,2,3}> ()
  feat = Conv <kernel_shape = [3,3], strides = [2,2]> (images, w)
  s = Add (x, b)
  y = Relu (s)
}`,
	} {
		t.Run(name, func(t *testing.T) { saysGeneratedShapes(t, src) })
	}
}

func saysGeneratedShapes(t *testing.T, src string) {
	mp, err := onnxtext.Parse("m.onnxtxt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// x and y have no shape at all (unknown rank: the text syntax's
	// "float x" is a scalar).
	mp.GetGraph().GetInput()[1].GetType().GetTensorType().Shape = nil
	mp.GetGraph().GetOutput()[1].GetType().GetTensorType().Shape = nil
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Convert(context.Background(), in, filepath.Join(dir, "out.onnx"), Options{Env: builtins(), Verify: &VerifyOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Comparisons) == 0 {
		t.Fatal("no comparison")
	}
	rep := res.Comparisons[0].Report
	shapes := map[string][]int64{}
	for _, i := range rep.Inputs {
		shapes[i.Name] = i.Shape
	}
	if !slices.Equal(shapes["images"], []int64{1, 3, 224, 224}) || !slices.Equal(shapes["x"], []int64{1, 3}) {
		t.Errorf("generated shapes %v, want images [1 3 224 224] and x [1 3]", shapes)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{
		"generated input images: free dims → [1,3,224,224] (dim 0 (N) = 1: nothing in the graph fixes it; " +
			"dim 2 (H) = 224: an image's height or width: a convolution or pooling window reads it; dim 3 (W) = 224: an image's height or width",
		"generated input x: rank unknown, only elementwise ops read it (Add, Relu) → [1,3]: the broadcast of their operands' shapes ([1,3])",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the comparison's notes do not say %q:\n%s", want, notes)
		}
	}
	var sb strings.Builder
	if err := rep.WriteSummary(&sb, res.Comparisons[0].What); err != nil || !strings.Contains(sb.String(), "note: generated input x: rank unknown") {
		t.Errorf("summary (%v):\n%s", err, sb.String())
	}
}
