package lightgbm_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/lightgbm"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// stored is a real model with LightGBM's own predictions.
type stored struct {
	model, data string
	libsvm      bool // data is libsvm with a label column
	dropFirst   bool // data's first column is the label
	features    int
	want        string // predictions file
	output      string // the output they are ("predict" or "margin")
	raw         bool
	objective   string // the objective option, for a dump that names none
}

var storedCases = []stored{
	{model: "leaves_dart_breast_cancer/lg_dart_breast_cancer.model", data: "leaves_dart_breast_cancer/breast_cancer_test.tsv", features: 30,
		want: "leaves_dart_breast_cancer/lg_dart_breast_cancer_true_predictions.txt", output: "predict"},
	{model: "leaves_dart_breast_cancer/lg_dart_breast_cancer.json", data: "leaves_dart_breast_cancer/breast_cancer_test.tsv", features: 30,
		want: "leaves_dart_breast_cancer/lg_dart_breast_cancer_true_predictions.txt", output: "predict", objective: "binary sigmoid:1"},
	{model: "leaves_multiclass5/lgmulticlass.model", data: "leaves_multiclass5/multiclass_test.tsv", dropFirst: true, features: 28,
		want: "leaves_multiclass5/lgmulticlass_true_predictions.txt", output: "predict"},
	{model: "leaves_multiclass5/lgmulticlass.model", data: "leaves_multiclass5/multiclass_test.tsv", dropFirst: true, features: 28,
		want: "leaves_multiclass5/lgmulticlass_true_raw_predictions.txt", output: "margin", raw: true},
	{model: "leaves_rf_iris/lg_rf_iris.model", data: "leaves_rf_iris/iris_test.libsvm", libsvm: true, features: 4,
		want: "leaves_rf_iris/lg_rf_iris_true_predictions.txt", output: "predict"},
	{model: "treelite_toy_categorical/toy_categorical_model.txt", data: "treelite_toy_categorical/toy_categorical.test", libsvm: true, features: 2,
		want: "treelite_toy_categorical/toy_categorical.test.pred", output: "predict"},
}

func dir(t testing.TB, elem ...string) string {
	return testpaths.Shared(t, append([]string{"models", "lightgbm"}, elem...)...)
}

func loadRows(t *testing.T, c stored) [][]float64 {
	rows := treetest.ReadTable(t, dir(t, c.data), c.libsvm, c.features)
	for i, r := range rows {
		if c.libsvm || c.dropFirst {
			r = r[1:]
		}
		if len(r) < c.features {
			t.Fatalf("%s row %d: %d values for %d features", c.data, i, len(r), c.features)
		}
		rows[i] = r[:c.features]
	}
	return rows
}

// TestStoredPredictions converts each real model with stored predictions
// through the registry (detected, no --from), runs it on the executor at
// ml opsets 5 and 3, and checks LightGBM's predictions and the direct
// predictor.
func TestStoredPredictions(t *testing.T) {
	for _, c := range storedCases {
		for _, ml := range []string{"5", "3"} {
			t.Run(fmt.Sprintf("%s/%s/ml%s", c.model, c.output, ml), func(t *testing.T) {
				path := dir(t, c.model)
				imp := treetest.Detect(t, builtin.Registry(), path, lightgbm.Name)
				rows := loadRows(t, c)
				in := treetest.Input(canonical.Double, rows)
				opts := importers.Options{"ml_opset": ml}
				if c.raw {
					opts["raw_score"] = "true"
				}
				if c.objective != "" {
					opts["objective"] = c.objective
				}
				got := treetest.RunONNX(t, imp, path, opts, in)
				wantRows := treetest.ReadTable(t, dir(t, c.want), false, 0)
				var want []float64
				for _, r := range wantRows {
					want = append(want, r...)
				}
				o, ok := got[c.output]
				if !ok {
					t.Fatalf("no output %q in %v", c.output, keys(got))
				}
				if e := treetest.MaxRelErr(o.Values, want, 1e-300); e > 1e-6 {
					t.Errorf("%s vs LightGBM: max relative error %.3g", c.output, e)
				} else {
					t.Logf("%s vs LightGBM: max relative error %.3g (%d values)", c.output, e, len(want))
				}
				src := treetest.RunSource(t, imp, path, opts, in)
				e := treetest.SameOutputs(t, "predictor vs ONNX", src, got, tol(ml))
				t.Logf("predictor vs ONNX: %.3g", e)
			})
		}
	}
}

func keys(o treetest.Outputs) []string {
	var k []string
	for n := range o {
		k = append(k, n)
	}
	return k
}

// TestPredLeaves checks the leaf each row reaches in each tree against
// LightGBM's predict(pred_leaf=True) for the breast cancer model.
func TestPredLeaves(t *testing.T) {
	data, err := os.ReadFile(dir(t, "leaves_breast_cancer_binary/lg_breast_cancer.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := lightgbm.Ensemble(data, lightgbm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := treetest.ReadTable(t, dir(t, "leaves_breast_cancer_binary/lg_breast_cancer_data.txt"), false, 0)
	leaves := treetest.ReadTable(t, dir(t, "leaves_breast_cancer_binary/lg_breast_cancer_data_pred_leaves.txt"), false, 0)
	if len(rows) != len(leaves) || len(rows) == 0 {
		t.Fatalf("%d rows, %d leaf rows", len(rows), len(leaves))
	}
	checked := 0
	for i, r := range rows {
		if len(leaves[i]) != len(e.Trees) {
			t.Fatalf("row %d: %d leaves for %d trees", i, len(leaves[i]), len(e.Trees))
		}
		for ti := range e.Trees {
			tr := &e.Trees[ti]
			first := 0
			for first < len(tr.Nodes) && !tr.Nodes[first].Leaf {
				first++
			}
			got := tr.Leaf(r, false) - first
			if float64(got) != leaves[i][ti] {
				t.Errorf("row %d tree %d: leaf %d, LightGBM %v", i, ti, got, leaves[i][ti])
			}
			checked++
		}
	}
	t.Logf("%d leaf indices checked", checked)
}

// TestAllRealFiles converts every LightGBM file under ../shared/models
// without --from, at ml opsets 5 and 3, and checks that the direct
// predictor and the ONNX result agree on generated inputs (NaN, zero,
// small integers, large values).
func TestAllRealFiles(t *testing.T) {
	root := dir(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := d.Name()
		if !d.IsDir() && (strings.HasSuffix(n, ".model") || strings.HasSuffix(n, ".json") ||
			(strings.HasSuffix(n, ".txt") && !strings.Contains(n, "pred") && !strings.Contains(n, "_data"))) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("found %d LightGBM files under %s", len(files), root)
	}
	for _, p := range files {
		rel, _ := filepath.Rel(root, p)
		for _, ml := range []string{"5", "3"} {
			for _, raw := range []string{"false", "true"} {
				t.Run(rel+"/ml"+ml+"/raw="+raw, func(t *testing.T) {
					imp := treetest.Detect(t, builtin.Registry(), p, lightgbm.Name)
					data, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					e, err := lightgbm.Ensemble(data, lightgbm.Options{})
					if err != nil {
						t.Fatal(err)
					}
					in := treetest.Input(canonical.Double, treetest.Generated(200, e.NumFeatures, 7))
					opts := importers.Options{"ml_opset": ml, "raw_score": raw}
					got := treetest.RunONNX(t, imp, p, opts, in)
					src := treetest.RunSource(t, imp, p, opts, in)
					if e := treetest.SameOutputs(t, "predictor vs ONNX", src, got, tol(ml)); e > 0 {
						t.Logf("predictor vs ONNX: %.3g", e)
					}
					for _, o := range got {
						for _, v := range o.Values {
							if math.IsNaN(v) {
								t.Fatal("NaN in the output")
							}
						}
					}
				})
			}
		}
	}
}

// tol is how close the direct predictor (float64) and the ONNX result
// must be: exact up to summation rounding at ml opset 5 (double
// throughout); at ml opset 3 TreeEnsembleRegressor's output is float.
func tol(ml string) float64 {
	if ml == "5" {
		return 1e-12
	}
	return 2e-7
}
