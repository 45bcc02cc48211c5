package verify

import (
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// A graph with float32 inputs and outputs that computes in float16 inside
// (a Cast to float16, or float16 weights) is held to the fp16 profile; a
// float32 graph is not.
func TestInsidePrecision(t *testing.T) {
	f32 := smallModel(t, []float32{1, 2}, true)
	if p := InsidePrecision(f32); p != "" {
		t.Errorf("float32 graph: %q, want none", p)
	}
	g := f32.Graph
	if _, err := g.AddNode("to16", "", "Cast", []*canonical.Value{g.Inputs[0]}, []string{"x16"}, canonical.IntAttr("to", int64(canonical.Float16))); err != nil {
		t.Fatal(err)
	}
	if p := InsidePrecision(f32); p != "fp16" {
		t.Errorf("a Cast to float16: %q, want fp16", p)
	}
	bf := reluModel(t, canonical.Float, 4)
	if _, err := bf.Graph.AddInitializer(canonical.NewTensor("w", canonical.BFloat16, []int64{1}, []byte{0, 0})); err != nil {
		t.Fatal(err)
	}
	if p := InsidePrecision(f32, bf); p != "bf16" {
		t.Errorf("bfloat16 weights beside a float16 cast: %q, want bf16 (the least precise)", p)
	}
}
