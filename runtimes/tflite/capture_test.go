package tflite

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// RunNamed hands out the int8 intermediate tensors of the int8 fixture
// (qcnn: the convolution's output and the fully connected layer's, before
// they are dequantized) from a copy of the model with them as outputs; they
// are the quantized values of the outputs numpy computed in integer
// arithmetic (fixtures/tflite/gen.py: features is the convolution's output
// twice, dequantized with scale 0.05 and zero point 5; logits the fully
// connected layer's, scale 0.08, zero point -3). The model's own output,
// asked for by name among them, is what Run computes.
func TestRunNamedInt8(t *testing.T) {
	env := realEnv(t)
	fixtures := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite")
	s, err := Open(context.Background(), env, filepath.Join(fixtures, "qcnn.tflite"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := []*onnxpb.TensorProto{npyProto(t, filepath.Join(fixtures, "qcnn.input_0.npy"), "input")}
	got, err := s.RunNamed(context.Background(), in, []string{"conv/Relu", "features", "fc/BiasAdd"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d tensors, want 3", len(got))
	}
	features := floats(t, npyProto(t, filepath.Join(fixtures, "qcnn.output_1.npy"), ""))
	logits := floats(t, npyProto(t, filepath.Join(fixtures, "qcnn.output_0.npy"), ""))
	for _, c := range []struct {
		tp        *onnxpb.TensorProto
		ref       []float64
		scale, zp float64
	}{{got[0], features[:36], 0.05, 5}, {got[2], logits, 0.08, -3}} {
		if onnxpb.TensorProto_DataType(c.tp.GetDataType()) != onnxpb.TensorProto_INT8 {
			t.Fatalf("element type %v, want int8", c.tp.GetDataType())
		}
		raw := c.tp.GetRawData()
		if len(raw) != len(c.ref) {
			t.Fatalf("%d elements, want %d", len(raw), len(c.ref))
		}
		for i, b := range raw {
			if want := math.Round(c.ref[i]/c.scale) + c.zp; float64(int8(b)) != want {
				t.Fatalf("element %d: %d, want %g (numpy, integer arithmetic)", i, int8(b), want)
			}
		}
	}
	res, err := s.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	a, b := floats(t, res.Outputs[1]), floats(t, got[1])
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("features[%d]: %g by name, %g as the model's output", i, b[i], a[i])
		}
	}
	if _, err := s.RunNamed(context.Background(), in, []string{"no/such/tensor"}); err == nil {
		t.Error("an unknown tensor name gave no error")
	}
}
