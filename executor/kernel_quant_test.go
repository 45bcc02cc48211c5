package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestIntegerSlowPathNoted: a 3-D ConvInteger (outside the integer GEMM's
// cases) still runs, on the per-element path, and the executor says so
// (SlowPaths, which bench prints); a 2-D one does not.
func TestIntegerSlowPathNoted(t *testing.T) {
	for _, dims := range [][]int64{{1, 1, 2, 2, 2}, {1, 1, 2, 2}} {
		m, g := newModel(13)
		x := must(g.AddInput("x", nil))
		wdims := append([]int64{1, 1}, dims[2:]...)
		w := must(g.AddInitializer(canonical.NewTensor("w", canonical.Uint8, wdims, make([]byte, numel(toInts(wdims))))))
		n := must(g.AddNode("conv", "", "ConvInteger", []*canonical.Value{x, w}, []string{"y"}))
		g.Outputs = []*canonical.Value{n.Outputs[0]}
		e := must(New(m, Options{}))
		in := canonical.NewTensor("x", canonical.Uint8, dims, make([]byte, numel(toInts(dims))))
		if _, err := e.Run(context.Background(), []*canonical.Tensor{in}); err != nil {
			t.Fatal(err)
		}
		slow := e.SlowPaths()
		e.Close()
		if want := len(dims) == 5; want != (len(slow) == 1 && strings.HasPrefix(slow[0], `ConvInteger "conv": `)) || !want && len(slow) > 0 {
			t.Errorf("input %v: slow paths %q", dims, slow)
		}
	}
}

// TestSliceListsMismatchIsAnError: a Slice whose ends (computed at run
// time) is empty while starts has a value is an error naming the node
// and the input, not an index out of range.
func TestSliceListsMismatchIsAnError(t *testing.T) {
	m, g := newModel(13)
	x := must(g.AddInput("x", nil))
	ends := must(g.AddInput("ends", nil))
	starts := must(g.AddInitializer(i64Tensor("starts", []int64{1}, 0)))
	n := must(g.AddNode("cut", "", "Slice", []*canonical.Value{x, starts, ends}, []string{"y"}))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	_, err := e.Run(context.Background(), []*canonical.Tensor{f32Tensor("x", []int64{3}, 1, 2, 3), i64Tensor("ends", []int64{0})})
	if err == nil || !strings.Contains(err.Error(), `Slice "cut": input 2 (ends, named "ends") has 0 values`) {
		t.Fatalf("error %v, want one naming Slice \"cut\" and its input 2", err)
	}
}

// TestFloat16AsORTKeepsTypes: with Float16AsORT a float16 graph keeps its
// float16 input and output (the output rounded once), and the sum of
// float16 values comes out as float16 arithmetic rounds it.
func TestFloat16AsORTKeepsTypes(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", canonical.TensorType(canonical.Float16, []int64{2})))
	half := func(v ...float32) []byte {
		var b []byte
		for _, f := range v {
			h := canonical.Float32ToFloat16(f)
			b = append(b, byte(h), byte(h>>8))
		}
		return b
	}
	c := must(g.AddInitializer(canonical.NewTensor("c", canonical.Float16, []int64{2}, half(1, 2048))))
	n := must(g.AddNode("add", "", "Add", []*canonical.Value{x, c}, []string{"y"}))
	n.Outputs[0].Type = canonical.TensorType(canonical.Float16, []int64{2})
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	e := must(New(m, Options{Float16AsORT: true}))
	defer e.Close()
	out := must(e.Run(context.Background(), []*canonical.Tensor{canonical.NewTensor("x", canonical.Float16, []int64{2}, half(0.5, 1))}))
	if out[0].DataType != canonical.Float16 || out[0].Name != "y" {
		t.Fatalf("output %q of type %v, want y of float16", out[0].Name, out[0].DataType)
	}
	got := must(out[0].Float32s())
	// 2048 + 1 is not a float16 (its step there is 2): rounded to even.
	if got[0] != 1.5 || got[1] != 2048 {
		t.Errorf("y = %v, want [1.5 2048]", got)
	}
}
