package verify_test

import (
	"context"
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/importers/lightgbm"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify"
)

// TestCategoricalInputs: a LightGBM model of categorical features
// (lleaves' pure_categorical, a real LightGBM file; its trees split on
// features 0 and 1 by category sets) gets whole category codes, never
// fractions, in those columns of its generated input.
func TestCategoricalInputs(t *testing.T) {
	p := testpaths.Shared(t, "models", "lightgbm", "lleaves_pure_categorical", "model.txt")
	res, err := lightgbm.New().Import(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Model.Close() }()
	dims := verify.FillDims(res.Model, map[string]int64{})
	for k := range dims {
		dims[k] = 64
	}
	ins, err := verify.GenerateInputs(res.Model, verify.GenOptions{Dims: dims}, 0)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := ins[0].Float64s()
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[float64]bool{}
	cols := int(ins[0].Dims[1])
	for i, x := range vs {
		if i%cols > 1 {
			continue // no split tests this feature
		}
		if x != math.Trunc(x) || x < 0 || x > 10 {
			t.Fatalf("generated %v in a categorical column of %v", x, ins[0].Dims)
		}
		distinct[x] = true
	}
	if len(distinct) < 3 {
		t.Errorf("only %d distinct codes", len(distinct))
	}
}
