package lightgbm_test

import (
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/lightgbm"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
)

// TestLinearTree checks linear_tree leaves on the hand-made
// testdata/linear_tree.txt (see testdata/README.md: no real LightGBM
// linear_tree model is available) against predictions worked out by hand
// from LightGBM's Tree::Predict: leaf_const + sum(coeff_i * x[feature_i]),
// or the leaf's leaf_value when one of its features is NaN.
func TestLinearTree(t *testing.T) {
	nan := math.NaN()
	rows := [][]float64{
		{0.2, 7, 4},    // tree 0 leaf 0: 1.5 + 0.5*0.2 - 2*4 = -6.4; tree 1: 0.125 + 0.25*4 = 1.125
		{0.9, 3, -1},   // leaf 1: -0.25 + 3*3 = 8.75; tree 1: 0.125 - 0.25 = -0.125
		{0.2, 7, nan},  // leaf 0 uses x2 = NaN: leaf_value 0.1; tree 1 likewise: 0.05
		{nan, 2, 1},    // x0 NaN goes left (default left): leaf 0 uses x0: 0.1; tree 1: 0.375
		{0.9, nan, 2},  // leaf 1 uses x1 = NaN: 0.2; tree 1: 0.125 + 0.5 = 0.625
		{0.5, nan, -4}, // 0.5 <= 0.5: leaf 0: 1.5 + 0.25 + 8 = 9.75 (x1 unused); tree 1: 0.125 - 1 = -0.875
	}
	want := []float64{-6.4 + 1.125, 8.75 - 0.125, 0.1 + 0.05, 0.1 + 0.375, 0.2 + 0.625, 9.75 - 0.875}
	path := "testdata/linear_tree.txt"
	imp := treetest.Detect(t, builtin.Registry(), path, lightgbm.Name)
	in := treetest.Input(canonical.Double, rows)
	for _, ml := range []string{"5", "3"} {
		t.Run("ml"+ml, func(t *testing.T) {
			opts := importers.Options{"ml_opset": ml}
			src := treetest.RunSource(t, imp, path, opts, in)
			if e := treetest.MaxRelErr(src["predict"].Values, want, 1e-300); e > 1e-12 {
				t.Errorf("predictor vs hand calculation: max relative error %.3g: %v, want %v", e, src["predict"].Values, want)
			}
			got := treetest.RunONNX(t, imp, path, opts, in)
			// At ml opset 3 too: the leaf numbers pass through the float
			// TreeEnsembleRegressor exactly; the sums are double.
			if e := treetest.MaxRelErr(got["predict"].Values, want, 1e-300); e > 1e-12 {
				t.Errorf("ONNX vs hand calculation: max relative error %.3g: %v, want %v", e, got["predict"].Values, want)
			}
			e := treetest.SameOutputs(t, "predictor vs ONNX", src, got, 1e-12)
			t.Logf("predictor vs ONNX: %.3g", e)
		})
	}
}
