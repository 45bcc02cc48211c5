package xgboost_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// leavesDir holds real pre-1.0 xgboost binaries with xgboost's stored
// predictions, from the test data of the Go leaves library (MIT), under
// their names there (testdata/xg*.model, *_true_*predictions.txt,
// agaricus_test.libsvm, dermatology_test.libsvm).
func leavesDir(t *testing.T) string {
	d := testpaths.Shared(t, "models", "leaves_legacy")
	if _, err := os.Stat(filepath.Join(d, "xgagaricus.model")); err != nil {
		t.Skipf("%s has no leaves test data (copy leaves' testdata/xg*.model, their predictions and the .libsvm files there to run this test)", d)
	}
	return d
}

// TestLeavesLegacyFiles: real xgboost < 1.0 binaries (no "binf" header,
// base_score stored as a margin) are detected without a format and
// reproduce the predictions xgboost stored with them to 1e-6.
func TestLeavesLegacyFiles(t *testing.T) {
	d := leavesDir(t)
	for _, c := range []struct {
		model, data, pred, raw string
		cols                   int
	}{
		{"xgagaricus.model", "agaricus_test.libsvm", "xgagaricus_true_predictions.txt", "false", 127},
		{"xgblin_agaricus.model", "agaricus_test.libsvm", "xgblin_agaricus_true_raw_predictions.txt", "true", 127},
		{"xgblin_agaricus.model", "agaricus_test.libsvm", "xgblin_agaricus_true_predictions.txt", "false", 127},
		{"xgdermatology.model", "dermatology_test.libsvm", "xgdermatology_true_predictions.txt", "true", 33},
	} {
		t.Run(c.pred, func(t *testing.T) {
			rows := treetest.ReadTable(t, filepath.Join(d, c.data), true, c.cols)
			for i := range rows {
				rows[i] = rows[i][1:] // the label
			}
			var want []float64
			for _, r := range treetest.ReadTable(t, filepath.Join(d, c.pred), false, 0) {
				want = append(want, r...)
			}
			path := filepath.Join(d, c.model)
			imp := treetest.Detect(t, builtin.Registry(), path, "xgboost")
			in := treetest.Input(canonical.Float, rows)
			opts := importers.Options{"raw_score": c.raw}
			out := "predict"
			if c.raw == "true" {
				out = "margin"
			}
			for who, o := range map[string]treetest.Outputs{"executor": treetest.RunONNX(t, imp, path, opts, in), "Go predictor": treetest.RunSource(t, imp, path, opts, in)} {
				e := treetest.MaxRelErr(o[out].Values, want, 1)
				if e > 1e-6 {
					t.Errorf("%s: largest difference %.3g from xgboost's stored %s", who, e, out)
				}
				t.Logf("%s %s: %d values, largest difference %.3g", who, out, len(want), e)
			}
		})
	}
}
