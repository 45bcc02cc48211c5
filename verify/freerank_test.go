package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// freeRankModel is y = OP(Relu(x), w) with x of unknown rank and w a
// constant of shape wdims.
func freeRankModel(t *testing.T, op string, wdims []int64) *canonical.Model {
	t.Helper()
	g := canonical.NewGraph("free")
	x, err := g.AddInput("x", canonical.TensorTypeNoShape(canonical.Float))
	if err != nil {
		t.Fatal(err)
	}
	n := int64(1)
	for _, d := range wdims {
		n *= d
	}
	w, err := g.AddInitializer(canonical.NumberTensor("w", canonical.Float, wdims, make([]float64, n)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.AddNode("relu", "", "Relu", []*canonical.Value{x}, []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	y, err := g.AddNode("y", "", op, []*canonical.Value{r.Outputs[0], w}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	g.Outputs = []*canonical.Value{y.Outputs[0]}
	return &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: g}
}

// TestFreeRankShape: an input of unknown rank that only elementwise ops
// read is generated in the shape its constant operands broadcast to (or
// 64 values beside scalars); one that a MatMul reads is refused, naming
// the input and --inputs.
func TestFreeRankShape(t *testing.T) {
	for _, tc := range []struct {
		op    string
		w     []int64
		shape []int64
	}{
		{"Add", nil, []int64{freeRankRows}},
		{"Mul", []int64{2, 3}, []int64{2, 3}},
		{"Max", []int64{3, 1}, []int64{3, 1}},
	} {
		m := freeRankModel(t, tc.op, tc.w)
		ins, err := GenerateInputs(m, GenOptions{Seed: 1}, 0)
		if err != nil || !slices.Equal(ins[0].Dims, tc.shape) {
			t.Errorf("%s with w %v: %v, %v; want shape %v", tc.op, tc.w, ins, err, tc.shape)
		}
	}
	_, err := GenerateInputs(freeRankModel(t, "MatMul", []int64{3, 3}), GenOptions{Seed: 1}, 0)
	if err == nil || !strings.Contains(err.Error(), `input "x" has no shape`) || !strings.Contains(err.Error(), "--inputs") {
		t.Errorf("MatMul: %v, want a refusal naming x and --inputs", err)
	}
}
