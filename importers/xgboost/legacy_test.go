package xgboost_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

const legacyDir = "../../fixtures/xgboost/legacy"

// TestLegacyBinaryFixtures: every legacy binary model written by
// fixtures/xgboost/legacy/make_legacy.py (xgboost 1.7's save_model to
// .model, which equals save_raw("deprecated")), and its pre-1.0 layout,
// is detected by content (no format named), and the ONNX graph on the
// executor and the direct Go predictor reproduce xgboost's margins and
// predictions to 1e-6 (relative to max(1, |value|)).
func TestLegacyBinaryFixtures(t *testing.T) {
	var man struct {
		Version string `json:"xgboost_version"`
		Models  []struct {
			Name  string `json:"name"`
			Pre10 bool   `json:"pre10"`
		} `json:"models"`
	}
	b, err := os.ReadFile(filepath.Join(legacyDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	if len(man.Models) < 7 {
		t.Fatalf("manifest lists %d models", len(man.Models))
	}
	for _, fm := range man.Models {
		variants := []string{""}
		if fm.Pre10 {
			variants = append(variants, ".pre10")
		}
		for _, v := range variants {
			t.Run(fm.Name+v, func(t *testing.T) {
				path := filepath.Join(legacyDir, fm.Name+v+".model")
				imp := treetest.Detect(t, builtin.Registry(), path, "xgboost")
				in := readInput(t, filepath.Join(legacyDir, fm.Name+".input.npy"))
				for _, c := range []struct {
					raw, out, file string
				}{{"true", "margin", ".margin.npy"}, {"false", "predict", ".predict.npy"}} {
					want := readFloats(t, filepath.Join(legacyDir, fm.Name+v+c.file))
					opts := importers.Options{"raw_score": c.raw}
					for _, got := range []struct {
						who string
						o   treetest.Outputs
					}{{"executor", treetest.RunONNX(t, imp, path, opts, in)}, {"Go predictor", treetest.RunSource(t, imp, path, opts, in)}} {
						o, ok := got.o[c.out]
						if !ok {
							t.Fatalf("%s: no output %q", got.who, c.out)
						}
						e := treetest.MaxRelErr(o.Values, want, 1)
						if e > 1e-6 {
							t.Errorf("%s %s: largest difference %.3g from xgboost %s, want <= 1e-6", got.who, c.out, e, man.Version)
						}
						t.Logf("%s %s: largest difference %.3g over %d values", got.who, c.out, e, len(want))
					}
				}
			})
		}
	}
}

// TestLegacyMatchesJSON: the legacy binary and the JSON file of each
// booster give the same predictions on the Go predictor.
func TestLegacyMatchesJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(legacyDir, "*.json"))
	n := 0
	for _, js := range files {
		if filepath.Base(js) == "manifest.json" {
			continue
		}
		n++
		stem := js[:len(js)-len(".json")]
		imp := treetest.Detect(t, builtin.Registry(), js, "xgboost")
		in := readInput(t, stem+".input.npy")
		opts := importers.Options{"raw_score": "true"}
		a := treetest.RunSource(t, imp, stem+".model", opts, in)
		b := treetest.RunSource(t, imp, js, opts, in)
		if e := treetest.SameOutputs(t, filepath.Base(stem), a, b, 0); e != 0 {
			t.Errorf("%s: legacy and JSON differ by %.3g", stem, e)
		}
	}
	if n < 7 {
		t.Fatalf("%d JSON twins", n)
	}
}

func readFloats(t *testing.T, path string) []float64 {
	t.Helper()
	x, err := tensorio.ReadNpyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
