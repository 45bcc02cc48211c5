package xgboost_test

import (
	"context"
	"errors"
	"strings"

	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/importers/xgboost"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// leavesDir holds real pre-1.0 xgboost binaries with xgboost's stored
// predictions, the test data of the Go leaves library (MIT), under their
// names there (xg*.model, *_true_*predictions.txt, agaricus_test.libsvm,
// dermatology_test.libsvm).
func leavesDir(t *testing.T) string {
	return testpaths.LeavesTestdata(t)
}

// TestLeavesLegacyFiles: real xgboost < 1.0 binaries (no "binf" header,
// base_score stored as a margin) are detected without a format and
// reproduce the predictions xgboost stored with them to 1e-6, the
// first boosting rounds alone with iteration_range where xgboost
// predicted with ntree_limit.
func TestLeavesLegacyFiles(t *testing.T) {
	d := leavesDir(t)
	for _, c := range []struct {
		model, data, pred, raw string
		cols                   int
		rounds                 string
	}{
		{"xgagaricus.model", "agaricus_test.libsvm", "xgagaricus_true_predictions.txt", "false", 127, ""},
		{"xgblin_agaricus.model", "agaricus_test.libsvm", "xgblin_agaricus_true_raw_predictions.txt", "true", 127, ""},
		{"xgblin_agaricus.model", "agaricus_test.libsvm", "xgblin_agaricus_true_predictions.txt", "false", 127, ""},
		{"xgdermatology.model", "dermatology_test.libsvm", "xgdermatology_true_predictions.txt", "true", 33, ""},
		// Trained for 20 rounds with DART's parameters but booster
		// gbtree (leaves' testdata/README.md); xgboost stored the margins
		// of predict(output_margin=True, ntree_limit=10).
		{"xg_dart_agaricus.model", "agaricus_test.libsvm", "xg_dart_agaricus_true_predictions.txt", "true", 127, "0:10"},
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
			if c.rounds != "" {
				opts["iteration_range"] = c.rounds
			}
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

// TestIterationRangeRefused: a range past the model's boosting rounds,
// or one given for a gblinear model, is a *xgboost.RoundsError naming
// the rounds the model has; a malformed one is an option error.
func TestIterationRangeRefused(t *testing.T) {
	d := leavesDir(t)
	for _, c := range []struct{ model, rounds, want string }{
		{"xg_dart_agaricus.model", "0:21", "20 boosting rounds"},
		{"xg_dart_agaricus.model", "5:5", "BEGIN < END"},
		{"xgblin_agaricus.model", "0:1", "gblinear"},
	} {
		_, err := xgboost.New().Import(context.Background(), filepath.Join(d, c.model), importers.Options{"iteration_range": c.rounds})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s iteration_range=%s: %v, want an error saying %q", c.model, c.rounds, err, c.want)
		}
		var re *xgboost.RoundsError
		if c.rounds != "5:5" && !errors.As(err, &re) {
			t.Errorf("%s iteration_range=%s: %T, want *xgboost.RoundsError", c.model, c.rounds, err)
		}
	}
}
