package sklearn_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/sklearn"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestSkopsRealFile reads the real skops file in ../shared (skops 0.11,
// protocol 2, a DecisionTreeClassifier written by scikit-learn 1.6),
// detected through the registry, and checks the ONNX graph on the
// executor and the Go predictor against scikit-learn's predict (exactly)
// and predict_proba (to 1e-12) on every row of its data.
func TestSkopsRealFile(t *testing.T) {
	dir := testpaths.Shared(t, "models", "sklearn_skops", "stratus_decision_tree")
	path := dir + "/model.skops"
	var meta struct {
		Rows     int    `json:"rows"`
		Protocol int    `json:"skops_protocol"`
		Class    string `json:"estimator"`
	}
	b, err := os.ReadFile(dir + "/meta.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	x := readNpyFile(t, dir+"/X.npy")
	wantLabel := readNpyFile(t, dir+"/predict.npy")
	wantProba := readNpyFile(t, dir+"/predict_proba.npy")
	if int(x.shape[0]) != meta.Rows || meta.Rows != 2922 {
		t.Fatalf("X has %d rows, meta.json says %d", x.shape[0], meta.Rows)
	}
	imp, conf, err := builtin.Registry().Detect(path)
	if err != nil {
		t.Fatal(err)
	}
	if imp.Describe().Name != sklearn.Name || conf != 1 {
		t.Fatalf("detected as %s (%.2f)", imp.Describe().Name, conf)
	}
	res, err := imp.Import(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	ex, err := executor.New(res.Model, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	in := []*canonical.Tensor{inputTensor(x)}
	outs, err := ex.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	src, err := imp.(importers.Predictor).Source(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	direct, err := src.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range res.Model.Graph.Outputs {
		for _, got := range []struct {
			who string
			t   *canonical.Tensor
		}{{"executor", outs[i]}, {"Go predictor", direct[i]}} {
			switch o.Name {
			case "label":
				compare(t, got.who+" label", got.t, wantLabel, true)
			case "probabilities":
				g, err := got.t.Float64s()
				if err != nil {
					t.Fatal(err)
				}
				if len(g) != len(wantProba.f) {
					t.Fatalf("%s probabilities: %d values, scikit-learn %d", got.who, len(g), len(wantProba.f))
				}
				worst := 0.0
				for j, w := range wantProba.f {
					worst = math.Max(worst, math.Abs(g[j]-w))
				}
				if worst > 1e-12 {
					t.Errorf("%s probabilities: largest difference %.3g from scikit-learn's predict_proba, want <= 1e-12", got.who, worst)
				}
				t.Logf("%s probabilities: largest absolute difference %.3g over %d rows", got.who, worst, meta.Rows)
			}
		}
	}
}
