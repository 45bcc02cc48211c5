package xgboost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/xgboost"
)

// TestHostileLegacy: each file of fixtures/hostile/xgboost-legacy (made by
// its make_hostile.py from a real xgboost 1.7 model) is refused, by Import
// and by Source, with a *xgboost.LegacyError naming the part of the model
// at fault; none panics, hangs or allocates what the file declares.
func TestHostileLegacy(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "hostile", "xgboost-legacy")
	cases := map[string]string{ // file: the part named, and what the message says
		"truncated.model":             "gbtree parameters|num_trees 8 for 198 remaining bytes",
		"huge_num_trees.model":        "gbtree parameters|num_trees",
		"huge_num_nodes.model":        "tree 0|num_nodes",
		"cycle.model":                 "tree 0 nodes|cycle",
		"child_out_of_range.model":    "tree 0 nodes|out of range",
		"feature_out_of_range.model":  "tree 0 nodes|feature 5000",
		"bad_group.model":             "tree_info|group 7",
		"multi_root.model":            "tree 0|multi-root",
		"huge_attributes.model":       "attributes|attributes",
		"huge_objective_name.model":   "objective name|objective name of",
		"no_features.model":           "learner parameters|num_feature 0",
		"dart_weight_count.model":     "dart weight_drop|3 weights for 10 trees",
		"gblinear_huge_weights.model": "gblinear weights|floats",
		"base64_header.model":         "header|base64",
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.model"))
	if len(files) != len(cases) {
		t.Errorf("%d hostile models in %s, %d cases: every file needs its case", len(files), dir, len(cases))
	}
	imp := xgboost.New()
	for file, want := range cases {
		part, says, _ := strings.Cut(want, "|")
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(dir, file)
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			_, err := imp.Import(context.Background(), path, nil)
			_, serr := imp.(importers.Predictor).Source(context.Background(), path, nil)
			for _, e := range []error{err, serr} {
				if e == nil {
					t.Fatal("accepted")
				}
				var le *xgboost.LegacyError
				if !errors.As(e, &le) {
					t.Fatalf("want a *xgboost.LegacyError, got %T: %v", e, e)
				}
				if le.Part != part {
					t.Errorf("part %q, want %q (%v)", le.Part, part, e)
				}
				if !strings.Contains(e.Error(), says) {
					t.Errorf("message %q does not say %q", e, says)
				}
			}
			if !strings.Contains(err.Error(), file) {
				t.Errorf("the message does not name the file: %v", err)
			}
			t.Log(err)
		})
	}
}
