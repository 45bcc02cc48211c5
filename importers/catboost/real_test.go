package catboost_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/catboost"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

func dir(t testing.TB, elem ...string) string {
	return testpaths.Shared(t, append([]string{"models", "catboost"}, elem...)...)
}

// npy reads a float64 .npy file as rows (a 1-D array is one column).
func npy(t testing.TB, path string) [][]float64 {
	t.Helper()
	x, err := tensorio.ReadNpyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	cols := 1
	if len(x.Dims) == 2 {
		cols = int(x.Dims[1])
	}
	var rows [][]float64
	for i := 0; i+cols <= len(v); i += cols {
		rows = append(rows, v[i:i+cols])
	}
	return rows
}

func flat(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// oneHotRows joins the float columns of X_float.npy and the categorical
// string columns of cat_cols.json (hashed as CatBoost does) into the
// model's flat feature order.
func oneHotRows(t testing.TB, folder string) [][]float64 {
	floats := npy(t, filepath.Join(folder, "X_float.npy"))
	b, err := os.ReadFile(filepath.Join(folder, "cat_cols.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cc struct {
		Indices []int      `json:"cat_feature_indices_in_x_all"`
		Columns [][]string `json:"columns"`
	}
	if err := json.Unmarshal(b, &cc); err != nil {
		t.Fatal(err)
	}
	if len(cc.Indices) != len(cc.Columns) {
		t.Fatalf("cat_cols.json: %d indices, %d columns", len(cc.Indices), len(cc.Columns))
	}
	rows := make([][]float64, len(floats))
	for i, fr := range floats {
		n := len(fr) + len(cc.Columns)
		row := make([]float64, n)
		isCat := map[int]int{}
		for k, idx := range cc.Indices {
			isCat[idx] = k
		}
		f := 0
		for c := 0; c < n; c++ {
			if k, ok := isCat[c]; ok {
				if i >= len(cc.Columns[k]) {
					t.Fatalf("cat column %d has %d rows", k, len(cc.Columns[k]))
				}
				row[c] = float64(catboost.CatFeatureHash(cc.Columns[k][i]))
			} else {
				row[c] = fr[f]
				f++
			}
		}
		rows[i] = row
	}
	return rows
}

// ctrRows are ctr_load's rows: f0 from X_float.npy, then c0 and c1 of
// cat_cols.json (the categories as strings, hashed as CatBoost does).
func ctrRows(t testing.TB) [][]float64 {
	folder := dir(t, "catboost_rs_oracle", "ctr_load")
	floats := npy(t, filepath.Join(folder, "X_float.npy"))
	b, err := os.ReadFile(filepath.Join(folder, "cat_cols.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cc struct{ C0, C1 []string }
	if err := json.Unmarshal(b, &cc); err != nil {
		t.Fatal(err)
	}
	if len(cc.C0) != len(floats) || len(cc.C1) != len(floats) {
		t.Fatalf("cat_cols.json: %d and %d categories for %d rows", len(cc.C0), len(cc.C1), len(floats))
	}
	rows := make([][]float64, len(floats))
	for i, f := range floats {
		rows[i] = []float64{f[0], h(cc.C0[i]), h(cc.C1[i])}
	}
	return rows
}

// stored is a real model with CatBoost's own outputs.
type stored struct {
	model  string
	rows   func(t testing.TB) [][]float64
	output string // the output compared: "margin" (raw_score) or "predict", "probabilities", "label"
	want   func(t testing.TB) []float64
	// column picks one column of a [N, K] output (-1: all).
	column int
}

func fromNpy(elem ...string) func(t testing.TB) [][]float64 {
	return func(t testing.TB) [][]float64 { return npy(t, dir(t, elem...)) }
}

func wantNpy(elem ...string) func(t testing.TB) []float64 {
	return func(t testing.TB) []float64 { return flat(npy(t, dir(t, elem...))) }
}

func literal(v ...float64) func(t testing.TB) []float64 {
	return func(testing.TB) []float64 { return v }
}

func literalRows(rows ...[]float64) func(t testing.TB) [][]float64 {
	return func(testing.TB) [][]float64 { return rows }
}

func h(s string) float64 { return float64(catboost.CatFeatureHash(s)) }

var (
	tiny       = fromNpy("catboost_rs_oracle", "inputs", "numeric_tiny", "X.npy")
	cgoClfRows = literalRows([]float64{h("a"), h("b"), 2, 4, 6, 8}, []float64{h("a"), h("d"), 1, 4, 50, 60})
	cgoMCRows  = literalRows([]float64{h("winter"), 1996, 197}, []float64{h("winter"), 1968, 37},
		[]float64{h("summer"), 2002, 77}, []float64{h("summer"), 1948, 59})
)

func oneHot(name string) func(t testing.TB) [][]float64 {
	return func(t testing.TB) [][]float64 {
		return oneHotRows(t, dir(t, "catboost_rs_oracle", "one_hot_train", name))
	}
}

// staged takes the last stage of staged_predict (all 10 trees).
func lastStage(t testing.TB) []float64 {
	s := npy(t, dir(t, "catboost_rs_oracle", "staged_predict", "staged_period1.npy"))
	return s[len(s)-1]
}

var storedCases = []stored{
	{model: "catboost_rs_oracle/model_serde/binclf/model.cbm", rows: tiny, output: "margin", want: wantNpy("catboost_rs_oracle", "model_serde", "binclf", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/model_serde/binclf/model.json", rows: tiny, output: "margin", want: wantNpy("catboost_rs_oracle", "model_serde", "binclf", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/model_serde/regression/model.cbm", rows: tiny, output: "margin", want: wantNpy("catboost_rs_oracle", "model_serde", "regression", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/model_serde/regression/model.json", rows: tiny, output: "predict", want: wantNpy("catboost_rs_oracle", "model_serde", "regression", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/non_symmetric/depthwise_simplest/model.cbm", rows: fromNpy("catboost_rs_oracle", "non_symmetric", "depthwise_simplest", "X.npy"), output: "margin", want: wantNpy("catboost_rs_oracle", "non_symmetric", "depthwise_simplest", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/non_symmetric/depthwise_simplest/model.json", rows: fromNpy("catboost_rs_oracle", "non_symmetric", "depthwise_simplest", "X.npy"), output: "predict", want: wantNpy("catboost_rs_oracle", "non_symmetric", "depthwise_simplest", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/one_hot_train/default_binary/model.cbm", rows: oneHot("default_binary"), output: "margin", want: wantNpy("catboost_rs_oracle", "one_hot_train", "default_binary", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/one_hot_train/default_binary/model.json", rows: oneHot("default_binary"), output: "margin", want: wantNpy("catboost_rs_oracle", "one_hot_train", "default_binary", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/one_hot_train/multi/model.cbm", rows: oneHot("multi"), output: "margin", want: wantNpy("catboost_rs_oracle", "one_hot_train", "multi", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/one_hot_train/multi/model.json", rows: oneHot("multi"), output: "margin", want: wantNpy("catboost_rs_oracle", "one_hot_train", "multi", "predictions.npy"), column: -1},
	{model: "catboost_rs_oracle/model_sum/m0.cbm", rows: fromNpy("catboost_rs_oracle", "model_sum", "X.npy"), output: "margin", want: wantNpy("catboost_rs_oracle", "model_sum", "expected_m0.npy"), column: -1},
	{model: "catboost_rs_oracle/model_sum/m1.cbm", rows: fromNpy("catboost_rs_oracle", "model_sum", "X.npy"), output: "predict", want: wantNpy("catboost_rs_oracle", "model_sum", "expected_m1.npy"), column: -1},
	{model: "catboost_rs_oracle/staged_predict/model.cbm", rows: tiny, output: "margin", want: lastStage, column: -1},
	// CTR models (Borders and Counter CTRs; combo: combinations of two
	// categorical features); RawFormulaVal.
	{model: "catboost_rs_oracle/ctr_load/simple.cbm", rows: ctrRows, output: "margin", want: wantNpy("catboost_rs_oracle", "ctr_load", "simple_preds.npy"), column: -1},
	{model: "catboost_rs_oracle/ctr_load/simple.json", rows: ctrRows, output: "margin", want: wantNpy("catboost_rs_oracle", "ctr_load", "simple_preds.npy"), column: -1},
	{model: "catboost_rs_oracle/ctr_load/combo.cbm", rows: ctrRows, output: "margin", want: wantNpy("catboost_rs_oracle", "ctr_load", "combo_preds.npy"), column: -1},
	{model: "catboost_rs_oracle/ctr_load/combo.json", rows: ctrRows, output: "margin", want: wantNpy("catboost_rs_oracle", "ctr_load", "combo_preds.npy"), column: -1},
	// catboost-cgo's tests (literal values from CatBoost's C API).
	{model: "catboost_cgo/regressor/regressor.cbm", rows: literalRows([]float64{2, 4, 6, 8}, []float64{1, 4, 50, 60}), output: "margin", want: literal(15.625, 18.125), column: -1},
	{model: "catboost_cgo/regressor/regressor.cbm", rows: literalRows([]float64{2, 4, 6, 8}, []float64{1, 4, 50, 60}), output: "predict", want: literal(15.625, 18.125), column: -1},
	{model: "catboost_cgo/classifier/classifier.cbm", rows: cgoClfRows, output: "probabilities", want: literal(0.629855013297618, 0.5358421019868945), column: 1},
	{model: "catboost_cgo/classifier/classifier.cbm", rows: cgoClfRows, output: "label", want: literal(1, 1), column: -1},
	{model: "catboost_cgo/multiclassification/multiclassification.cbm", rows: cgoMCRows, output: "label", want: literal(2, 2, 1, 2), column: -1},
	{model: "catboost_cgo/multiclassification/multiclassification.cbm", rows: func(t testing.TB) [][]float64 { return cgoMCRows(t)[:2] }, output: "probabilities",
		want: literal(0.2006095939361826, 0.2862616005077138, 0.5131288055561035, 0.07388963079437862, 0.060717262866699366, 0.8653931063389221), column: -1},
}

// TestStoredPredictions converts each real model with stored outputs
// through the registry (detected, no --from), runs it on the executor at
// ml opsets 5 and 3, and checks CatBoost's outputs and the direct
// predictor.
func TestStoredPredictions(t *testing.T) {
	for _, c := range storedCases {
		for _, ml := range []string{"5", "3"} {
			t.Run(fmt.Sprintf("%s/%s/ml%s", c.model, c.output, ml), func(t *testing.T) {
				path := dir(t, strings.Split(c.model, "/")...)
				imp := treetest.Detect(t, builtin.Registry(), path, catboost.Name)
				in := treetest.Input(canonical.Double, c.rows(t))
				opts := importers.Options{"ml_opset": ml}
				if c.output == "margin" {
					opts["raw_score"] = "true"
				}
				got := treetest.RunONNX(t, imp, path, opts, in)
				want := c.want(t)
				o, ok := got[c.output]
				if !ok {
					t.Fatalf("no output %q", c.output)
				}
				vals := o.Values
				if c.column >= 0 {
					k := int(o.Dims[1])
					vals = nil
					for i := c.column; i < len(o.Values); i += k {
						vals = append(vals, o.Values[i])
					}
				}
				tol := 1e-6
				if c.output == "label" {
					tol = 0
				}
				if e := treetest.MaxRelErr(vals, want, 1e-300); e > tol {
					t.Errorf("%s vs CatBoost: max relative error %.3g (got %v, want %v)", c.output, e, head(vals), head(want))
				} else {
					t.Logf("%s vs CatBoost: max relative error %.3g (%d values)", c.output, e, len(want))
				}
				src := treetest.RunSource(t, imp, path, opts, in)
				t.Logf("predictor vs ONNX: %.3g", treetest.SameOutputs(t, "predictor vs ONNX", src, got, tol3(ml)))
			})
		}
	}
}

func head(v []float64) []float64 {
	if len(v) > 6 {
		return v[:6]
	}
	return v
}

// tol3 is how close the direct predictor (float64) and the ONNX result
// must be: exact up to summation order at ml opset 5; at ml opset 3
// TreeEnsembleRegressor's output is float.
func tol3(ml string) float64 {
	if ml == "5" {
		return 1e-12
	}
	return 2e-7
}

// refused are the real files that use CTR or text features: each is an
// *importers.UnsupportedOpsError naming the feature.
// invalid are files not written by CatBoost that CatBoost could not load
// either: the Rust port's hand-built CTR baseline splits on categorical
// feature 0 but declares no categorical feature (and lists no model parts).
var invalid = map[string]string{
	"catboost_rs_oracle/ctr_nonmean_byte_identity/baseline.cbm": "a split uses categorical feature 0, which the model does not declare",
}

var refused = map[string]string{
	"catboost_cgo/text/text.cbm": `text feature "review_text"`,
}

func modelFiles(t *testing.T) []string {
	root := dir(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := d.Name()
		if !d.IsDir() && (strings.HasSuffix(n, ".cbm") || n == "model.json" || strings.HasSuffix(n, "_model.json") || n == "simple.json" || n == "combo.json") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestAllRealFiles converts every CatBoost model file under
// ../shared/models/catboost without --from at ml opsets 5 and 3, raw and
// not, and checks that the direct predictor and the ONNX result agree on
// generated inputs; the files with CTR or text features are refused with
// an *importers.UnsupportedOpsError naming the feature.
func TestAllRealFiles(t *testing.T) {
	files := modelFiles(t)
	if len(files) < 40 {
		t.Fatalf("found %d CatBoost files", len(files))
	}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			p := dir(t, strings.Split(rel, "/")...)
			imp := treetest.Detect(t, builtin.Registry(), p, catboost.Name)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			m, err := catboost.Parse(data)
			if want, ok := invalid[rel]; ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("want an error naming %q, got %v", want, err)
				}
				return
			}
			if want, ok := refused[rel]; ok {
				var ue *importers.UnsupportedOpsError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
					t.Fatalf("want an UnsupportedError naming %q, got %v", want, err)
				}
				if _, err := imp.Import(t.Context(), p, nil); !errors.As(err, &ue) {
					t.Fatalf("Import: want an UnsupportedError, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rows := treetest.Generated(100, m.Ensemble.NumFeatures, 7)
			// Categorical columns: half the rows take a value of a one-hot split.
			in := treetest.Input(canonical.Double, rows)
			for _, ml := range []string{"5", "3"} {
				for _, raw := range []string{"false", "true"} {
					opts := importers.Options{"ml_opset": ml, "raw_score": raw}
					got := treetest.RunONNX(t, imp, p, opts, in)
					src := treetest.RunSource(t, imp, p, opts, in)
					treetest.SameOutputs(t, "predictor vs ONNX ml"+ml+" raw="+raw, src, got, tol3(ml))
					for name, o := range got {
						for _, v := range o.Values {
							if math.IsNaN(v) {
								t.Fatalf("NaN in output %s", name)
							}
						}
					}
				}
			}
		})
	}
}
