//go:build cgo

package xgboost

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// openORT opens ONNX Runtime, or skips the test when the library is absent
// (counted and reported by TestMain, which fails the package unless
// ONNXCONV_SKIP_ORT=1).
func openORT(t *testing.T) *ort.Runtime {
	t.Helper()
	lib := testpaths.ORT(t)
	rt, err := ort.Open(lib, 1)
	if err != nil {
		t.Fatalf("ONNX Runtime: %v", err)
	}
	return rt
}

// runORT writes mp to a temporary file and runs it on ONNX Runtime.
func runORT(t *testing.T, rt *ort.Runtime, mp *onnxpb.ModelProto, in *onnxpb.TensorProto) map[string]*onnxpb.TensorProto {
	t.Helper()
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	p := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err := rt.Run(p, []*onnxpb.TensorProto{in})
	if err != nil {
		t.Fatalf("ONNX Runtime run: %v", err)
	}
	res := map[string]*onnxpb.TensorProto{}
	for _, o := range outs {
		res[o.GetName()] = o
	}
	return res
}

const (
	rtol = 1e-5
	atol = 1e-6
)

// compare checks got against the stored xgboost output name.npy.
func compare(t *testing.T, what string, got *onnxpb.TensorProto, want npyArray, exact bool) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: output missing", what)
		return
	}
	if len(got.GetDims()) != len(want.shape) {
		t.Errorf("%s: rank %v, xgboost gives %v", what, got.GetDims(), want.shape)
		return
	}
	for i := range want.shape {
		if got.GetDims()[i] != want.shape[i] {
			t.Errorf("%s: shape %v, xgboost gives %v", what, got.GetDims(), want.shape)
			return
		}
	}
	g, err := tensorValues(got)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range want.f {
		w := want.f[i]
		ok := g[i] == w
		if !exact {
			ok = math.Abs(g[i]-w) <= atol+rtol*math.Abs(w)
		}
		if !ok {
			if bad < 3 {
				t.Errorf("%s[%d]: got %.9g, xgboost %.9g", what, i, g[i], w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ", what, bad, len(want.f))
	}
}

// TestORTFixtures converts every fixture model and checks ONNX Runtime's
// outputs against the predictions xgboost stored with the fixture.
func TestORTFixtures(t *testing.T) {
	rt := openORT(t)
	man := loadManifest(t)
	for _, fm := range man.Models {
		in := inputTensor(readNpy(t, fm.Name+".input.npy"))
		for _, ml := range []int{5, 3} {
			for _, output := range []string{OutputPredict, OutputMargin} {
				name := fm.Name + "/ml" + string(rune('0'+ml)) + "/" + output
				t.Run(name, func(t *testing.T) {
					mp, err := importProto(readFixture(t, fm.Name+".json"), Options{MLOpset: ml, Output: output})
					if strings.HasPrefix(fm.Name, "categorical") && ml < 5 {
						if err == nil || !strings.Contains(err.Error(), "ml opset 5") {
							t.Fatalf("categorical model with ml opset %d: want an error naming ml opset 5, got %v", ml, err)
						}
						return
					}
					if err != nil {
						t.Fatalf("import: %v", err)
					}
					res := runORT(t, rt, mp, in)
					if output == OutputMargin {
						if len(res) != 1 {
							t.Errorf("margin model has %d outputs, want 1", len(res))
						}
						compare(t, "margin", res["margin"], readNpy(t, fm.Name+".margin.npy"), false)
						return
					}
					compare(t, "predict", res["predict"], readNpy(t, fm.Name+".predict.npy"), fm.Objective == "multi:softmax" || fm.Objective == "binary:hinge")
					wantOutputs := 1
					for _, o := range fm.Outputs {
						switch o {
						case "label":
							compare(t, "label", res["label"], readNpy(t, fm.Name+".label.npy"), true)
							wantOutputs++
						case "probabilities":
							compare(t, "probabilities", res["probabilities"], readNpy(t, fm.Name+".probabilities.npy"), false)
							wantOutputs++
						}
					}
					if len(res) != wantOutputs {
						t.Errorf("model has outputs %v, want %d", outputNames(mp.GetGraph()), wantOutputs)
					}
				})
			}
		}
	}
}

// TestORTHandModels runs hand-written models whose outputs are worked out
// by hand, on both TreeEnsemble (ml 5) and TreeEnsembleRegressor (ml 3).
func TestORTHandModels(t *testing.T) {
	rt := openORT(t)
	nan := math.NaN()
	rows := npyArray{shape: []int64{4, 2}, f: []float64{0.2, 0, 0.7, 0, nan, 0, 0.5, 0}}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	logit25 := math.Log(0.25 / 0.75)
	cases := []struct {
		name, model string
		mls         []int
		rows        npyArray
		output      string
		want        []float64
	}{
		// x0 < 0.5 -> -1 else 2; base 0.5; missing left. 0.5 is not < 0.5.
		{"squarederror", handModel("reg:squarederror", "5E-1", 1), []int{5, 4, 3, 1}, rows, "predict", []float64{-0.5, 2.5, -0.5, 2.5}},
		{"missing_right", handModel("reg:squarederror", "5E-1", 0), []int{5, 4, 3, 1}, rows, "predict", []float64{-0.5, 2.5, 2.5, 2.5}},
		{"logistic", handModel("binary:logistic", "2.5E-1", 1), []int{5, 4, 3, 1}, rows, "predict",
			[]float64{sig(-1 + logit25), sig(2 + logit25), sig(-1 + logit25), sig(2 + logit25)}},
		{"logistic_margin", handModel("binary:logistic", "2.5E-1", 1), []int{5, 4, 3, 1}, rows, "margin",
			[]float64{-1 + logit25, 2 + logit25, -1 + logit25, 2 + logit25}},
		{"poisson", handModel("count:poisson", "2E0", 1), []int{5, 4, 3, 1}, rows, "predict",
			[]float64{2 * math.Exp(-1), 2 * math.Exp(2), 2 * math.Exp(-1), 2 * math.Exp(2)}},
		{"hinge", handModel("binary:hinge", "5E-1", 1), []int{5, 4, 3, 1}, rows, "predict", []float64{0, 1, 0, 1}},
		// Feature 1 in {1, 3} -> 5, other categories -> -3, missing -> 5.
		{"categorical", handCategorical, []int{5}, npyArray{shape: []int64{6, 2}, f: []float64{0, 1, 0, 3, 0, 0, 0, 2, 0, nan, 0, 7}},
			"predict", []float64{5, 5, -3, -3, 5, -3}},
	}
	// Three classes: tree 0 (class 0) is a single leaf 1, tree 1 (class 1)
	// is the x0 < 0.5 split, class 2 has no tree; base_score 0.5 for all.
	multi := `{"learner":{"gradient_booster":{"name":"gbtree","model":{"tree_info":[0,1],"trees":[
 {"left_children":[-1],"right_children":[-1],"split_indices":[0],"split_conditions":[1],"default_left":[0]},
 {"left_children":[1,-1,-1],"right_children":[2,-1,-1],"split_indices":[0,0,0],"split_conditions":[0.5,-1,2],"default_left":[1,0,0]}]}},
 "learner_model_param":{"base_score":"5E-1","num_class":"3","num_feature":"2"},"objective":{"name":"multi:softprob"}}}`
	softmax := func(a, b, c float64) []float64 {
		s := math.Exp(a) + math.Exp(b) + math.Exp(c)
		return []float64{math.Exp(a) / s, math.Exp(b) / s, math.Exp(c) / s}
	}
	lo, hi := softmax(1.5, -0.5, 0.5), softmax(1.5, 2.5, 0.5)
	two := npyArray{shape: []int64{3, 2}, f: []float64{0.2, 0, 0.7, 0, nan, 0}}
	cases = append(cases,
		struct {
			name, model string
			mls         []int
			rows        npyArray
			output      string
			want        []float64
		}{"multiclass_margin", multi, []int{5, 3}, two, "margin", []float64{1.5, -0.5, 0.5, 1.5, 2.5, 0.5, 1.5, -0.5, 0.5}},
		struct {
			name, model string
			mls         []int
			rows        npyArray
			output      string
			want        []float64
		}{"multiclass_proba", multi, []int{5, 3}, two, "probabilities", append(append(append([]float64{}, lo...), hi...), lo...)},
		struct {
			name, model string
			mls         []int
			rows        npyArray
			output      string
			want        []float64
		}{"multiclass_label", multi, []int{5, 3}, two, "label", []float64{0, 1, 0}},
	)
	for _, c := range cases {
		for _, ml := range c.mls {
			t.Run(fmt.Sprintf("%s/ml%d", c.name, ml), func(t *testing.T) {
				output := OutputPredict
				if c.output == OutputMargin {
					output = OutputMargin
				}
				mp, err := importProto([]byte(c.model), Options{MLOpset: ml, Output: output})
				if err != nil {
					t.Fatal(err)
				}
				res := runORT(t, rt, mp, inputTensor(c.rows))
				shape := []int64{int64(len(c.want))}
				if n := c.rows.shape[0]; int64(len(c.want)) != n {
					shape = []int64{n, int64(len(c.want)) / n}
				}
				compare(t, c.output, res[c.output], npyArray{shape: shape, f: c.want}, c.output == "label")
			})
		}
	}
}

// TestORTOldOpsets runs some fixtures with the oldest opsets supported
// (ai.onnx 9, ai.onnx.ml 1) and ai.onnx 13 (Softmax changed semantics).
func TestORTOldOpsets(t *testing.T) {
	rt := openORT(t)
	for _, name := range []string{"binary_logistic", "multi_softprob", "multi_softmax", "count_poisson", "gblinear_softprob", "binary_hinge"} {
		in := inputTensor(readNpy(t, name+".input.npy"))
		for _, o := range []Options{{AIOpset: MinAIOpset, MLOpset: 1}, {AIOpset: 13, MLOpset: 3}} {
			t.Run(fmt.Sprintf("%s/ai%d/ml%d", name, o.AIOpset, o.MLOpset), func(t *testing.T) {
				mp, err := importProto(readFixture(t, name+".ubj"), o)
				if err != nil {
					t.Fatal(err)
				}
				res := runORT(t, rt, mp, in)
				exact := name == "multi_softmax" || name == "binary_hinge"
				compare(t, "predict", res["predict"], readNpy(t, name+".predict.npy"), exact)
				if res["probabilities"] != nil {
					compare(t, "probabilities", res["probabilities"], readNpy(t, name+".probabilities.npy"), false)
					compare(t, "label", res["label"], readNpy(t, name+".label.npy"), true)
				}
			})
		}
	}
}
