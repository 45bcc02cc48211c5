package xgboost

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/options"
)

// handModel is a one-tree model: x0 < 0.5 (missing goes left when
// defaultLeft) -> leaf -1, else -> leaf 2.
func handModel(objective, baseScore string, defaultLeft int) string {
	return fmt.Sprintf(`{"learner":{
 "gradient_booster":{"model":{"gbtree_model_param":{"num_parallel_tree":"1","num_trees":"1"},
  "tree_info":[0],
  "trees":[{"id":0,"left_children":[1,-1,-1],"right_children":[2,-1,-1],
   "split_indices":[0,0,0],"split_conditions":[0.5,-1.0,2.0],"default_left":[%d,0,0],
   "split_type":[0,0,0],"categories":[],"categories_nodes":[],"categories_segments":[],"categories_sizes":[],
   "base_weights":[0,0,0],"loss_changes":[0,0,0],"parents":[2147483647,0,0],"sum_hessian":[1,1,1],
   "tree_param":{"num_deleted":"0","num_feature":"2","num_nodes":"3","size_leaf_vector":"0"}}]},
  "name":"gbtree"},
 "learner_model_param":{"base_score":%q,"num_class":"0","num_feature":"2","num_target":"1"},
 "objective":{"name":%q}},
 "version":[1,7,4]}`, defaultLeft, baseScore, objective)
}

// handCategorical: node 0 is categorical on feature 1 with set {1, 3}
// (those go right to leaf 5), others go left to leaf -3; missing goes right.
const handCategorical = `{"learner":{
 "gradient_booster":{"model":{"tree_info":[0],
  "trees":[{"left_children":[1,-1,-1],"right_children":[2,-1,-1],
   "split_indices":[1,0,0],"split_conditions":[0,-3,5],"default_left":[0,0,0],
   "split_type":[1,0,0],"categories":[1,3],"categories_nodes":[0],"categories_segments":[0],"categories_sizes":[2],
   "tree_param":{"num_nodes":"3","size_leaf_vector":"0"}}]},
  "name":"gbtree"},
 "learner_model_param":{"base_score":"0E0","num_class":"0","num_feature":"2"},
 "objective":{"name":"reg:squarederror"}}}`

func mustImport(t *testing.T, data string, o Options) *onnxpb.ModelProto {
	t.Helper()
	mp, err := importProto([]byte(data), o)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return mp
}

func ints(t *testing.T, n *onnxpb.NodeProto, name string) []int64 {
	t.Helper()
	a := attr(n, name)
	if a == nil {
		t.Fatalf("%s: attribute %s missing", n.GetOpType(), name)
	}
	return a.GetInts()
}

func tensorFloats(t *testing.T, n *onnxpb.NodeProto, name string) []float32 {
	t.Helper()
	a := attr(n, name)
	if a == nil || a.GetT() == nil {
		t.Fatalf("%s: tensor attribute %s missing", n.GetOpType(), name)
	}
	return floatsOf(a.GetT())
}

func TestHandTreeEnsemble(t *testing.T) {
	mp := mustImport(t, handModel("reg:squarederror", "5E-1", 1), Options{})
	g := mp.GetGraph()
	if got := outputNames(g); !slices.Equal(got, []string{"predict"}) {
		t.Fatalf("outputs %v, want [predict]", got)
	}
	te := findNode(g, "TreeEnsemble")
	if te == nil || te.GetDomain() != "ai.onnx.ml" {
		t.Fatalf("no ai.onnx.ml TreeEnsemble node in %v", g.GetNode())
	}
	checks := map[string][]int64{
		"tree_roots": {0}, "nodes_featureids": {0},
		"nodes_truenodeids": {0}, "nodes_trueleafs": {1},
		"nodes_falsenodeids": {1}, "nodes_falseleafs": {1},
		"nodes_missing_value_tracks_true": {1}, "leaf_targetids": {0, 0},
	}
	for name, want := range checks {
		if got := ints(t, te, name); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := attr(te, "nodes_modes").GetT().GetRawData(); !slices.Equal(got, []byte{1}) {
		t.Errorf("nodes_modes = %v, want [1] (BRANCH_LT)", got)
	}
	if got := tensorFloats(t, te, "nodes_splits"); !slices.Equal(got, []float32{0.5}) {
		t.Errorf("nodes_splits = %v", got)
	}
	// base_score 0.5 is folded into the leaves: -1+0.5, 2+0.5.
	if got := tensorFloats(t, te, "leaf_weights"); !slices.Equal(got, []float32{-0.5, 2.5}) {
		t.Errorf("leaf_weights = %v, want [-0.5 2.5]", got)
	}
	if attr(te, "post_transform").GetI() != 0 || attr(te, "aggregate_function").GetI() != 1 || attr(te, "n_targets").GetI() != 1 {
		t.Errorf("post_transform/aggregate_function/n_targets = %d/%d/%d", attr(te, "post_transform").GetI(),
			attr(te, "aggregate_function").GetI(), attr(te, "n_targets").GetI())
	}
	if findNode(g, "Reshape") == nil {
		t.Error("predict should be reshaped to [N]")
	}
	var ml, ai int64
	for _, o := range mp.GetOpsetImport() {
		switch o.GetDomain() {
		case "ai.onnx.ml":
			ml = o.GetVersion()
		case "":
			ai = o.GetVersion()
		}
	}
	if ml != 5 || ai != 21 || mp.GetIrVersion() != 10 {
		t.Errorf("ml opset %d, ai opset %d, IR %d; want 5, 21, 10", ml, ai, mp.GetIrVersion())
	}
	in := g.GetInput()[0]
	dims := in.GetType().GetTensorType().GetShape().GetDim()
	if in.GetName() != "input" || len(dims) != 2 || dims[0].GetDimParam() != "N" || dims[1].GetDimValue() != 2 {
		t.Errorf("input %v", in)
	}
}

func TestHandTreeEnsembleRegressor(t *testing.T) {
	for _, ml := range []int{1, 2, 3, 4} {
		mp := mustImport(t, handModel("reg:squarederror", "5E-1", 0), Options{MLOpset: ml})
		te := findNode(mp.GetGraph(), "TreeEnsembleRegressor")
		if te == nil {
			t.Fatalf("ml %d: no TreeEnsembleRegressor", ml)
		}
		var modes []string
		for _, s := range attr(te, "nodes_modes").GetStrings() {
			modes = append(modes, string(s))
		}
		if !slices.Equal(modes, []string{"BRANCH_LT", "LEAF", "LEAF"}) {
			t.Errorf("modes %v", modes)
		}
		// base_score 0.5 is folded into the leaves, no base_values.
		if attr(te, "base_values") != nil {
			t.Error("base_values set")
		}
		if got := attr(te, "target_weights").GetFloats(); !slices.Equal(got, []float32{-0.5, 2.5}) {
			t.Errorf("target_weights %v, want [-0.5 2.5]", got)
		}
		if got := ints(t, te, "nodes_missing_value_tracks_true"); !slices.Equal(got, []int64{0, 0, 0}) {
			t.Errorf("missing tracks %v", got)
		}
		if got := ints(t, te, "nodes_truenodeids"); !slices.Equal(got, []int64{1, 0, 0}) {
			t.Errorf("true ids %v", got)
		}
		if got := ints(t, te, "nodes_falsenodeids"); !slices.Equal(got, []int64{2, 0, 0}) {
			t.Errorf("false ids %v", got)
		}
		if string(attr(te, "post_transform").GetS()) != "NONE" {
			t.Errorf("post_transform %q", attr(te, "post_transform").GetS())
		}
	}
}

func TestBaseScoreMargin(t *testing.T) {
	cases := []struct {
		objective, base string
		want            float32 // base margin folded into leaf 0 (-1 + margin)
		post            string  // op after the trees
	}{
		{"binary:logistic", "2.5E-1", float32(-1 + math.Log(0.25/0.75)), "Sigmoid"},
		{"reg:logistic", "[2.5E-1]", float32(-1 + math.Log(0.25/0.75)), "Sigmoid"},
		{"count:poisson", "2E0", float32(-1 + math.Log(2)), "Exp"},
		{"reg:gamma", "[5E-1]", float32(-1 + math.Log(0.5)), "Exp"},
		{"survival:cox", "1E0", -1, "Exp"},
		{"reg:absoluteerror", "3.25", 2.25, ""},
		{"binary:hinge", "5E-1", -0.5, "Greater"},
	}
	for _, c := range cases {
		mp := mustImport(t, handModel(c.objective, c.base, 1), Options{})
		lw := tensorFloats(t, findNode(mp.GetGraph(), "TreeEnsemble"), "leaf_weights")
		if math.Abs(float64(lw[0]-c.want)) > 1e-6 {
			t.Errorf("%s base %s: leaf 0 = %g, want %g", c.objective, c.base, lw[0], c.want)
		}
		if c.post != "" && findNode(mp.GetGraph(), c.post) == nil {
			t.Errorf("%s: no %s node", c.objective, c.post)
		}
	}
	if _, err := importProto([]byte(handModel("binary:logistic", "1.5", 1)), Options{}); err == nil || !strings.Contains(err.Error(), "(0, 1)") {
		t.Errorf("base_score 1.5 for logistic: got %v", err)
	}
}

func TestHandCategorical(t *testing.T) {
	mp := mustImport(t, handCategorical, Options{})
	te := findNode(mp.GetGraph(), "TreeEnsemble")
	if got := attr(te, "nodes_modes").GetT().GetRawData(); !slices.Equal(got, []byte{6}) {
		t.Errorf("nodes_modes %v, want [6] (BRANCH_MEMBER)", got)
	}
	mv := tensorFloats(t, te, "membership_values")
	if len(mv) != 3 || mv[0] != 1 || mv[1] != 3 || !math.IsNaN(float64(mv[2])) {
		t.Errorf("membership_values %v, want [1 3 NaN]", mv)
	}
	// Members go right (leaf 1 = 5), others left (leaf 0 = -3); missing right.
	if got := ints(t, te, "nodes_truenodeids"); !slices.Equal(got, []int64{1}) {
		t.Errorf("true ids %v", got)
	}
	if got := ints(t, te, "nodes_missing_value_tracks_true"); !slices.Equal(got, []int64{1}) {
		t.Errorf("missing tracks %v", got)
	}
	if got := ints(t, te, "nodes_featureids"); !slices.Equal(got, []int64{1}) {
		t.Errorf("feature ids %v", got)
	}
	for _, ml := range []int{1, 3, 4} {
		_, err := importProto([]byte(handCategorical), Options{MLOpset: ml})
		if err == nil || !strings.Contains(err.Error(), "categorical splits") || !strings.Contains(err.Error(), "ml opset 5") {
			t.Errorf("ml %d: want categorical error, got %v", ml, err)
		}
	}
}

// TestFixtureStructure checks every fixture: JSON and UBJSON give the same
// ONNX model, and the graph has the ops and outputs the objective needs.
func TestFixtureStructure(t *testing.T) {
	man := loadManifest(t)
	if man.Version == "" {
		t.Error("manifest does not record the xgboost version")
	}
	for _, fm := range man.Models {
		t.Run(fm.Name, func(t *testing.T) {
			js := readFixture(t, fm.Name+".json")
			ub := readFixture(t, fm.Name+".ubj")
			if New().Detect(fm.Name+".json", js[:min(len(js), 64)]) != 1 || New().Detect(fm.Name+".ubj", ub[:min(len(ub), 64)]) != 1 {
				t.Error("Detect does not recognise the fixture")
			}
			a, err := importProto(js, Options{})
			if err != nil {
				t.Fatalf("json: %v", err)
			}
			b, err := importProto(ub, Options{})
			if err != nil {
				t.Fatalf("ubj: %v", err)
			}
			if !proto.Equal(a, b) {
				t.Error("JSON and UBJSON imports differ")
			}
			meta := map[string]string{}
			for _, e := range a.GetMetadataProps() {
				meta[e.GetKey()] = e.GetValue()
			}
			if meta["xgboost.objective"] != fm.Objective || meta["xgboost.version"] != man.Version {
				t.Errorf("metadata %v: want objective %s, version %s", meta, fm.Objective, man.Version)
			}
			if fm.Name == "categorical_reg" && (meta["xgboost.feature_names"] != `["c","x1"]` || meta["xgboost.feature_types"] != `["c","float"]`) {
				t.Errorf("feature metadata %q %q", meta["xgboost.feature_names"], meta["xgboost.feature_types"])
			}
			g := a.GetGraph()
			wantOut := []string{"predict"}
			if slices.Contains(fm.Outputs, "label") {
				wantOut = append(wantOut, "label", "probabilities")
			}
			if got := outputNames(g); !slices.Equal(got, wantOut) {
				t.Errorf("outputs %v, want %v", got, wantOut)
			}
			wantOps := map[string]string{
				"binary:logistic": "Sigmoid", "reg:logistic": "Sigmoid", "multi:softprob": "Softmax",
				"multi:softmax": "ArgMax", "count:poisson": "Exp", "reg:tweedie": "Exp", "reg:gamma": "Exp",
				"survival:cox": "Exp", "binary:hinge": "Greater",
			}
			if op, ok := wantOps[fm.Objective]; ok && findNode(g, op) == nil {
				t.Errorf("objective %s: no %s node", fm.Objective, op)
			}
			if fm.Booster == "gblinear" {
				if findNode(g, "MatMul") == nil || findNode(g, "IsNaN") == nil {
					t.Error("gblinear: want IsNaN and MatMul")
				}
				for _, o := range a.GetOpsetImport() {
					if o.GetDomain() == "ai.onnx.ml" {
						t.Error("gblinear should not import ai.onnx.ml")
					}
				}
			} else if te := findNode(g, "TreeEnsemble"); te == nil {
				t.Error("no TreeEnsemble")
			} else if attr(te, "post_transform").GetI() != 0 {
				t.Error("TreeEnsemble post_transform should be NONE")
			}
			m, err := importProto(js, Options{Output: OutputMargin})
			if err != nil {
				t.Fatal(err)
			}
			if got := outputNames(m.GetGraph()); !slices.Equal(got, []string{"margin"}) {
				t.Errorf("margin outputs %v", got)
			}
			for _, op := range []string{"Sigmoid", "Softmax", "Exp", "ArgMax"} {
				if findNode(m.GetGraph(), op) != nil {
					t.Errorf("margin model has a %s node", op)
				}
			}
		})
	}
}

func TestDartWeights(t *testing.T) {
	js := readFixture(t, "dart_reg.json")
	doc, _, err := parse(js)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeModel(&doc)
	if err != nil {
		t.Fatal(err)
	}
	// weight_drop written by xgboost 1.7.4 for this fixture.
	want := []float32{0.35012782, 0.591716, 0.35012782, 0.45516616, 0.7692308, 0.7692308}
	if len(m.trees) != len(want) {
		t.Fatalf("%d trees, want %d", len(m.trees), len(want))
	}
	for i, tr := range m.trees {
		if tr.weight != want[i] {
			t.Errorf("tree %d weight %g, want %g", i, tr.weight, want[i])
		}
	}
	mp, err := importProto(js, Options{MLOpset: 3})
	if err != nil {
		t.Fatal(err)
	}
	// The first leaf of tree 0 (pre-order) is scaled by weight_drop[0].
	tw := attr(findNode(mp.GetGraph(), "TreeEnsembleRegressor"), "target_weights").GetFloats()
	var leaf0 float32
	for _, nd := range m.trees[0].nodes {
		if nd.leaf {
			leaf0 = nd.threshold
			break
		}
	}
	// ... plus the base margin (base_score 0.5, identity link).
	if tw[0] != want[0]*leaf0+0.5 {
		t.Errorf("target_weights[0] = %g, want %g*%g+0.5", tw[0], want[0], leaf0)
	}
}

func TestOptions(t *testing.T) {
	data := []byte(handModel("reg:squarederror", "0", 0))
	for _, o := range []Options{{MLOpset: 6}, {MLOpset: -1}, {AIOpset: 8}, {AIOpset: 99}, {Output: "proba"}} {
		if _, err := importProto(data, o); err == nil {
			t.Errorf("options %+v: want an error", o)
		}
	}
	mp := mustImport(t, string(data), Options{AIOpset: 13, MLOpset: 3})
	if mp.GetIrVersion() != 7 {
		t.Errorf("IR %d for opset 13, want 7", mp.GetIrVersion())
	}
}

func TestDetectDescribe(t *testing.T) {
	imp := New()
	d := imp.Describe()
	if d.Name != "xgboost" || !slices.Equal(d.Extensions, []string{".json", ".ubj"}) || len(d.Magic) == 0 ||
		!slices.Equal(options.Names(d.Options), []string{"ml_opset", "opset", "output", "raw_score", "iteration_range"}) {
		t.Errorf("Describe() = %+v", d)
	}
	cases := []struct {
		head, path string
		want       float32
	}{
		{`{"learner":{"attributes":{}`, "m.json", 1},
		{"  {\n \"learner\": {", "model", 1},
		{"{L\x00\x00\x00\x00\x00\x00\x00\x07learner{", "m.bin", 1},
		{"{i\x07learner{", "m", 1},
		{`{"name": "x"}`, "m.json", 0},
		{"\x89PNG", "m.ubj", 0},
		{"", "m.json", 0},
		{"TFL3", "m.tflite", 0},
	}
	for _, c := range cases {
		if got := imp.Detect(c.path, []byte(c.head)); got != c.want {
			t.Errorf("Detect(%q, %q) = %v, want %v", c.path, c.head, got, c.want)
		}
	}
}

func BenchmarkImport(b *testing.B) {
	for _, name := range []string{"multi_softprob.json", "multi_softprob.ubj", "categorical_reg.ubj"} {
		data := readFixture(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				if _, err := importProto(data, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestXGBoost3Forms covers forms newer xgboost writes: a per-class
// base_score vector string, booleans in default_left, iteration_indptr.
func TestXGBoost3Forms(t *testing.T) {
	model := `{"learner":{"gradient_booster":{"name":"gbtree","model":{"iteration_indptr":[0,3],"tree_info":[0,1,2],"trees":[
 {"left_children":[1,-1,-1],"right_children":[2,-1,-1],"split_indices":[0,0,0],"split_conditions":[0.5,-1,2],"default_left":[true,false,false]},
 {"left_children":[-1],"right_children":[-1],"split_indices":[0],"split_conditions":[3],"default_left":[false]},
 {"left_children":[-1],"right_children":[-1],"split_indices":[0],"split_conditions":[4],"default_left":[false]}]}},
 "learner_model_param":{"base_score":"[1E-1,2E-1,3E-1]","num_class":"3","num_feature":"1","num_target":"1"},
 "objective":{"name":"multi:softprob"}},"version":[3,0,0]}`
	mp := mustImport(t, model, Options{})
	te := findNode(mp.GetGraph(), "TreeEnsemble")
	want := []float32{-1 + 0.1, 2 + 0.1, 3 + 0.2, 4 + 0.3}
	if got := tensorFloats(t, te, "leaf_weights"); !slices.Equal(got, want) {
		t.Errorf("leaf_weights %v, want %v", got, want)
	}
	if got := ints(t, te, "leaf_targetids"); !slices.Equal(got, []int64{0, 0, 1, 2}) {
		t.Errorf("leaf_targetids %v", got)
	}
	if got := ints(t, te, "nodes_missing_value_tracks_true"); !slices.Equal(got, []int64{1, 0, 0}) {
		t.Errorf("missing tracks %v (booleans in default_left)", got)
	}
	if got := ints(t, te, "tree_roots"); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Errorf("tree_roots %v", got)
	}
	bad := strings.Replace(model, "[1E-1,2E-1,3E-1]", "[1E-1,2E-1]", 1)
	if _, err := importProto([]byte(bad), Options{}); err == nil || !strings.Contains(err.Error(), "2 values for 3 targets") {
		t.Errorf("2 base scores for 3 classes: %v", err)
	}
}
