package convert

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers/xgboost"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// runModel checks m against the schemas and runs it on the executor,
// through the file format.
func runModel(t *testing.T, m *canonical.Model, ins []*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	if err := check.Error(check.Check(m)); err != nil {
		t.Fatal(err)
	}
	p, err := m.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	back, err := canonical.FromProto(p, "")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(back, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	outs, err := ex.Run(context.Background(), ins)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// mlOpTypes counts the op types of the main graph.
func mlOpTypes(m *canonical.Model) map[string]int {
	c := map[string]int{}
	for _, n := range m.Graph.Nodes {
		c[n.OpType]++
	}
	return c
}

// compareTensor compares numbers with rtol/atol (rtol 0: exactly) and
// strings exactly.
func compareTensor(t *testing.T, what string, got, want *canonical.Tensor, rtol, atol float64) {
	t.Helper()
	if want.DataType == canonical.String || got.DataType == canonical.String {
		g, err1 := got.Strings()
		w, err2 := want.Strings()
		if err1 != nil || err2 != nil || len(g) != len(w) {
			t.Fatalf("%s: strings %v / %v, %d vs %d", what, err1, err2, len(g), len(w))
		}
		for i := range w {
			if string(g[i]) != string(w[i]) {
				t.Fatalf("%s element %d: %q, want %q", what, i, g[i], w[i])
			}
		}
		return
	}
	nums := func(x *canonical.Tensor) []float64 {
		if v, err := tensorFloats(x); err == nil {
			return v
		}
		if v, err := tensorInts(x); err == nil {
			f := make([]float64, len(v))
			for i := range v {
				f[i] = float64(v[i])
			}
			return f
		}
		b, err := x.Bytes()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if x.DataType == canonical.Int16 {
			f := make([]float64, len(b)/2)
			for i := range f {
				f[i] = float64(int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8))
			}
			return f
		}
		t.Fatalf("%s: cannot read %v", what, x.DataType)
		return nil
	}
	g, w := nums(got), nums(want)
	if len(g) != len(w) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(w))
	}
	for i := range w {
		if math.IsNaN(g[i]) && math.IsNaN(w[i]) {
			continue
		}
		if d := math.Abs(g[i] - w[i]); d > atol+rtol*math.Abs(w[i]) {
			t.Fatalf("%s element %d: %.9g, want %.9g", what, i, g[i], w[i])
		}
	}
}

type xgbManifest struct {
	Models []struct {
		Name    string   `json:"name"`
		Booster string   `json:"booster"`
		Outputs []string `json:"outputs"`
	} `json:"models"`
}

// TestXGBoostMLOpsets imports every xgboost tree fixture at ml opset 3 and
// 5, converts it to the other one and compares the executor's outputs
// with xgboost's own predictions.
func TestXGBoostMLOpsets(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "fixtures", "xgboost")
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man xgbManifest
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	converted := map[[2]int]int{}
	trees, categorical := 0, 0
	for _, fm := range man.Models {
		if fm.Booster == "gblinear" {
			continue // no ai.onnx.ml op
		}
		trees++
		if strings.HasPrefix(fm.Name, "categorical") {
			categorical++
		}
		data, err := os.ReadFile(filepath.Join(dir, fm.Name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		input, err := tensorio.ReadNpyFile(filepath.Join(dir, fm.Name+".input.npy"))
		if err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]int{{3, 5}, {5, 3}} {
			from, to := pair[0], pair[1]
			t.Run(fm.Name+"/"+itoa(from)+"_to_"+itoa(to), func(t *testing.T) {
				m, err := xgboost.Import(data, xgboost.Options{MLOpset: from})
				if err != nil {
					if from < 5 && strings.HasPrefix(fm.Name, "categorical") {
						t.Skipf("source not importable at ml %d: %v", from, err)
					}
					t.Fatal(err)
				}
				if _, err := Convert(m, Options{ToML: to}); err != nil {
					t.Fatalf("ml %d -> %d: %v", from, to, err)
				}
				if got := m.Opset(canonical.MLDomain); got != int64(to) {
					t.Fatalf("ml opset_import says %d", got)
				}
				ops := mlOpTypes(m)
				want := map[int]string{3: "TreeEnsembleRegressor", 5: "TreeEnsemble"}[to]
				if ops[want] != 1 || ops["TreeEnsembleRegressor"]+ops["TreeEnsemble"] != 1 {
					t.Fatalf("ops after conversion: %v", ops)
				}
				outs := runModel(t, m, []*canonical.Tensor{input})
				checked := 0
				for i, o := range m.Graph.Outputs {
					path := filepath.Join(dir, fm.Name+"."+o.Name+".npy")
					if _, err := os.Stat(path); err != nil {
						continue
					}
					ref, err := tensorio.ReadNpyFile(path)
					if err != nil {
						t.Fatal(err)
					}
					if o.Name == "label" {
						compareTensor(t, o.Name, outs[i], ref, 0, 0)
					} else {
						compareTensor(t, o.Name, outs[i], ref, 1e-5, 1e-6)
					}
					checked++
				}
				if checked == 0 {
					t.Fatal("no output compared")
				}
				converted[pair]++
			})
		}
	}
	// Every tree fixture goes down; the categorical ones have no ml 3
	// source to go up from.
	if trees < 20 || converted[[2]int{5, 3}] != trees || converted[[2]int{3, 5}] != trees-categorical {
		t.Fatalf("converted %v of %d tree fixtures (%d categorical)", converted, trees, categorical)
	}
}

// backendMLCase converts one ai.onnx.ml backend node test through the
// given ml opsets in turn and compares with its stored outputs.
func TestBackendMLNodeTests(t *testing.T) {
	root := filepath.Join(sharedDir(t), "onnx-v1.22", "backend-tests", "node")
	cases := []struct {
		name string
		path []int
		// refused: the step that must block (index into path), -1 none.
		refused int
		op      string // op type at the end
	}{
		{"test_ai_onnx_ml_tree_ensemble_single_tree", []int{3}, -1, "TreeEnsembleRegressor"},
		{"test_ai_onnx_ml_tree_ensemble_single_tree", []int{3, 5}, -1, "TreeEnsemble"},
		{"test_ai_onnx_ml_tree_ensemble_single_tree", []int{1}, 0, ""}, // doubles need *_as_tensor
		{"test_ai_onnx_ml_tree_ensemble_set_membership", []int{3}, -1, "TreeEnsembleRegressor"},
		{"test_ai_onnx_ml_tree_ensemble_set_membership", []int{1}, -1, "TreeEnsembleRegressor"},
		{"test_ai_onnx_ml_tree_ensemble_set_membership", []int{3, 5}, -1, "TreeEnsemble"},
		{"test_ai_onnx_ml_label_encoder_string_int", []int{2}, -1, "LabelEncoder"},
		{"test_ai_onnx_ml_label_encoder_string_int", []int{2, 4}, -1, "LabelEncoder"},
		{"test_ai_onnx_ml_label_encoder_string_int_no_default", []int{2, 4}, -1, "LabelEncoder"},
		{"test_ai_onnx_ml_label_encoder_tensor_mapping", []int{2}, 0, ""},
		{"test_ai_onnx_ml_label_encoder_tensor_value_only_mapping", []int{2}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+fmtInts(tc.path), func(t *testing.T) {
			m := loadModel(t, filepath.Join(root, tc.name, "model.onnx"))
			for i, to := range tc.path {
				_, err := Convert(m, Options{ToML: to})
				if i == tc.refused {
					var be *BlockedError
					if !errors.As(err, &be) || len(be.Blockers) != 1 || be.Blockers[0].Kind != KindNotExpressible {
						t.Fatalf("to ml %d: want one not-expressible blocker, got %v", to, err)
					}
					t.Logf("refused: %s", be.Blockers[0])
					return
				}
				if err != nil {
					t.Fatalf("to ml %d: %v", to, err)
				}
			}
			if ops := mlOpTypes(m); ops[tc.op] != 1 {
				t.Fatalf("ops %v, want one %s", ops, tc.op)
			}
			ds := filepath.Join(root, tc.name, "test_data_set_0")
			ins := readPbSet(t, ds, "input")
			want := readPbSet(t, ds, "output")
			if len(ins) == 0 || len(want) == 0 {
				t.Fatal("no test data")
			}
			outs := runModel(t, m, ins)
			for i, w := range want {
				compareTensor(t, "output "+itoa(i), outs[i], w, 1e-5, 1e-6)
			}
		})
	}
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = itoa(x)
	}
	return "ml" + strings.Join(s, "_")
}

// readPbSet reads prefix_N.pb of a backend test data set.
func readPbSet(t *testing.T, dir, prefix string) []*canonical.Tensor {
	t.Helper()
	var out []*canonical.Tensor
	for i := 0; ; i++ {
		p := filepath.Join(dir, prefix+"_"+itoa(i)+".pb")
		if _, err := os.Stat(p); err != nil {
			return out
		}
		ct, err := tensorio.ReadTensorFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ct)
	}
}

// ---- hand-made TreeEnsembleClassifier / Regressor models ----

func aInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func aFloats(name string, v ...float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOATS.Enum(), Floats: v}
}

func aStr(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func aStrs(name string, v ...string) *onnxpb.AttributeProto {
	a := &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRINGS.Enum()}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

func vi(name string, dt onnxpb.TensorProto_DataType, dims ...int64) *onnxpb.ValueInfoProto {
	sh := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		if d < 0 {
			sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}})
			continue
		}
		sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: sh}}}}
}

// twoTrees is the tree structure shared by the hand-made models: tree 0
// splits x0 < 0.5 then x1 <= 0; tree 1 splits x1 > 1 (NaN goes true).
func twoTrees() []*onnxpb.AttributeProto {
	return []*onnxpb.AttributeProto{
		aInts("nodes_treeids", 0, 0, 0, 0, 0, 1, 1, 1),
		aInts("nodes_nodeids", 0, 1, 2, 3, 4, 0, 1, 2),
		aInts("nodes_featureids", 0, 1, 0, 0, 0, 1, 0, 0),
		aStrs("nodes_modes", "BRANCH_LT", "BRANCH_LEQ", "LEAF", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"),
		aFloats("nodes_values", 0.5, 0, 0, 0, 0, 1, 0, 0),
		aInts("nodes_truenodeids", 1, 2, 0, 0, 0, 1, 0, 0),
		aInts("nodes_falsenodeids", 4, 3, 0, 0, 0, 2, 0, 0),
		aInts("nodes_missing_value_tracks_true", 0, 0, 0, 0, 0, 1, 0, 0),
	}
}

// leaves of twoTrees: (tree, node).
var twoTreeLeaves = [][2]int64{{0, 2}, {0, 3}, {0, 4}, {1, 1}, {1, 2}}

func treeModel(op string, mlOpset int64, attrs []*onnxpb.AttributeProto, outs []*onnxpb.ValueInfoProto) *onnxpb.ModelProto {
	var names []string
	for _, o := range outs {
		names = append(names, o.GetName())
	}
	return &onnxpb.ModelProto{
		IrVersion: proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)},
			{Domain: proto.String("ai.onnx.ml"), Version: proto.Int64(mlOpset)}},
		Graph: &onnxpb.GraphProto{
			Name:   proto.String("g"),
			Input:  []*onnxpb.ValueInfoProto{vi("X", onnxpb.TensorProto_FLOAT, -1, 2)},
			Output: outs,
			Node: []*onnxpb.NodeProto{{OpType: proto.String(op), Domain: proto.String("ai.onnx.ml"), Name: proto.String("trees"),
				Input: []string{"X"}, Output: names, Attribute: attrs}},
		},
	}
}

// classifier builds TreeEnsembleClassifier-3 with the votes given per leaf
// of twoTrees (class -> weight).
func classifier(votes []map[int64]float32, labels []int64, base []float32, post string) *onnxpb.ModelProto {
	attrs := twoTrees()
	var ct, cn, ci []int64
	var cw []float32
	for l, v := range votes {
		for c := int64(0); c < 8; c++ {
			if w, ok := v[c]; ok {
				ct, cn, ci, cw = append(ct, twoTreeLeaves[l][0]), append(cn, twoTreeLeaves[l][1]), append(ci, c), append(cw, w)
			}
		}
	}
	attrs = append(attrs, aInts("class_treeids", ct...), aInts("class_nodeids", cn...), aInts("class_ids", ci...),
		aFloats("class_weights", cw...), aInts("classlabels_int64s", labels...), aStr("post_transform", post))
	if base != nil {
		attrs = append(attrs, aFloats("base_values", base...))
	}
	return treeModel("TreeEnsembleClassifier", 3, attrs, []*onnxpb.ValueInfoProto{
		vi("label", onnxpb.TensorProto_INT64, -1), vi("probabilities", onnxpb.TensorProto_FLOAT, -1, int64(len(labels)))})
}

func regressor(votes []map[int64]float32, k int64, agg, post string, base []float32) *onnxpb.ModelProto {
	attrs := twoTrees()
	var tt, tn, ti []int64
	var tw []float32
	for l, v := range votes {
		for c := int64(0); c < 8; c++ {
			if w, ok := v[c]; ok {
				tt, tn, ti, tw = append(tt, twoTreeLeaves[l][0]), append(tn, twoTreeLeaves[l][1]), append(ti, c), append(tw, w)
			}
		}
	}
	attrs = append(attrs, aInts("target_treeids", tt...), aInts("target_nodeids", tn...), aInts("target_ids", ti...),
		aFloats("target_weights", tw...), &onnxpb.AttributeProto{Name: proto.String("n_targets"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(k)},
		aStr("aggregate_function", agg), aStr("post_transform", post))
	if base != nil {
		attrs = append(attrs, aFloats("base_values", base...))
	}
	return treeModel("TreeEnsembleRegressor", 3, attrs, []*onnxpb.ValueInfoProto{vi("Y", onnxpb.TensorProto_FLOAT, -1, k)})
}

// probeInput covers every leaf of twoTrees, and NaN.
func probeInput() *canonical.Tensor {
	nan := math.NaN()
	rows := [][2]float64{{0, -1}, {0, 0.5}, {1, 0}, {0.2, 2}, {0.7, 3}, {-3, nan}, {nan, 1.5}, {0.5, 1}}
	var vals []float64
	for _, r := range rows {
		vals = append(vals, r[0], r[1])
	}
	return canonical.NumberTensor("X", canonical.Float, []int64{int64(len(rows)), 2}, vals)
}

// checkUp5 converts mp to ml 5 and compares with the executor's run of
// the original op (which follows ONNX Runtime's rules).
func checkUp5(t *testing.T, mp *onnxpb.ModelProto) {
	t.Helper()
	orig, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	x := probeInput()
	want := runModel(t, orig, []*canonical.Tensor{x})
	m, err := canonical.FromProto(proto.Clone(mp).(*onnxpb.ModelProto), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(m, Options{ToML: 5}); err != nil {
		t.Fatal(err)
	}
	ops := mlOpTypes(m)
	if ops["TreeEnsemble"] != 1 || ops["TreeEnsembleClassifier"]+ops["TreeEnsembleRegressor"] != 0 {
		t.Fatalf("ops %v", ops)
	}
	got := runModel(t, m, []*canonical.Tensor{x})
	for i := range want {
		if want[i].DataType == canonical.Int64 {
			compareTensor(t, "output "+itoa(i), got[i], want[i], 0, 0)
		} else {
			compareTensor(t, "output "+itoa(i), got[i], want[i], 1e-5, 1e-6)
		}
	}
	// And back down: TreeEnsemble becomes TreeEnsembleRegressor again.
	if _, err := Convert(m, Options{ToML: 3}); err != nil {
		t.Fatal(err)
	}
	back := runModel(t, m, []*canonical.Tensor{x})
	for i := range want {
		compareTensor(t, "down output "+itoa(i), back[i], want[i], 1e-5, 1e-6)
	}
}

func TestTreeEnsembleClassifierUp5(t *testing.T) {
	all3 := []map[int64]float32{{0: 1, 1: 0.2, 2: -0.5}, {0: -1, 1: 2, 2: 0.1}, {0: 0.3, 1: 0.3, 2: 0.9}, {0: 0.5, 1: -0.5, 2: 0}, {0: -0.25, 1: 0.75, 2: 0.5}}
	cases := []struct {
		name string
		mp   *onnxpb.ModelProto
	}{
		{"multi_none", classifier(all3, []int64{10, 20, 30}, nil, "NONE")},
		{"multi_softmax_base", classifier(all3, []int64{7, 8, 9}, []float32{0.1, -0.2, 0.3}, "SOFTMAX")},
		{"multi_logistic", classifier(all3, []int64{1, 2, 3}, nil, "LOGISTIC")},
		{"binary_class1_logistic", classifier([]map[int64]float32{{1: 1.5}, {1: -2}, {1: 0.25}, {1: -0.5}, {1: 0.75}}, []int64{0, 1}, nil, "LOGISTIC")},
		{"binary_class0_allpos", classifier([]map[int64]float32{{0: 0.1}, {0: 0.4}, {0: 0.15}, {0: 0.3}, {0: 0.05}}, []int64{4, 5}, nil, "NONE")},
		{"binary_class0_logistic_base", classifier([]map[int64]float32{{0: 1}, {0: -2}, {0: 0.5}, {0: -0.5}, {0: 0.75}}, []int64{0, 1}, []float32{0.2}, "LOGISTIC")},
		{"two_classes_softmax", classifier([]map[int64]float32{{0: 1, 1: -1}, {0: -2, 1: 2}, {0: 0.5, 1: 0.1}, {0: 0.3, 1: 0}, {0: -0.1, 1: 0.4}}, []int64{0, 1}, nil, "SOFTMAX")},
	}
	// String labels: classlabels_strings instead of classlabels_int64s.
	for _, tc := range cases[:2] {
		mp := proto.Clone(tc.mp).(*onnxpb.ModelProto)
		nd := mp.Graph.Node[0]
		for i, a := range nd.Attribute {
			if a.GetName() == "classlabels_int64s" {
				var names []string
				for _, l := range a.Ints {
					names = append(names, "class"+itoa(int(l)))
				}
				nd.Attribute[i] = aStrs("classlabels_strings", names...)
			}
		}
		mp.Graph.Output[0] = vi("label", onnxpb.TensorProto_STRING, -1)
		cases = append(cases, struct {
			name string
			mp   *onnxpb.ModelProto
		}{tc.name + "_strings", mp})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkUp5(t, tc.mp) })
	}
}

func TestTreeEnsembleRegressorUp5(t *testing.T) {
	one := []map[int64]float32{{0: 1}, {0: -2}, {0: 0.5}, {0: 3}, {0: -0.25}}
	multi := []map[int64]float32{{0: 1, 1: 2}, {0: -2, 1: 1}, {0: 0.5, 1: 0}, {0: 3, 1: -1}, {0: -0.25, 1: 4}}
	cases := []struct {
		name string
		mp   *onnxpb.ModelProto
	}{
		{"sum_none", regressor(one, 1, "SUM", "NONE", nil)},
		{"sum_logistic_base", regressor(one, 1, "SUM", "LOGISTIC", []float32{0.5})},
		{"average", regressor(one, 1, "AVERAGE", "NONE", nil)},
		{"max", regressor(one, 1, "MAX", "NONE", nil)},
		{"multi_vote_sum_softmax", regressor(multi, 2, "SUM", "SOFTMAX", []float32{1, -1})},
		{"multi_vote_average", regressor(multi, 2, "AVERAGE", "NONE", nil)},
	}
	// From ml 1: 1 -> 3 is the generic step, then 3 -> 5.
	for _, tc := range cases[:2] {
		mp := proto.Clone(tc.mp).(*onnxpb.ModelProto)
		mp.OpsetImport[1].Version = proto.Int64(1)
		cases = append(cases, struct {
			name string
			mp   *onnxpb.ModelProto
		}{tc.name + "_from_ml1", mp})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkUp5(t, tc.mp) })
	}
}

// TestMLRefusals checks steps that cannot be expressed and their reasons.
func TestMLRefusals(t *testing.T) {
	multi := []map[int64]float32{{0: 1, 1: 2}, {0: -2, 1: 1}, {0: 0.5, 1: 0}, {0: 3, 1: -1}, {0: -0.25, 1: 4}}
	cases := []struct {
		name, reason string
		mp           *onnxpb.ModelProto
	}{
		{"multi_vote_min", "one vote per leaf", regressor(multi, 2, "MIN", "NONE", nil)},
		{"probit_classifier", "PROBIT", classifier(multi, []int64{0, 1}, nil, "PROBIT")},
		{"probit_after_base", "PROBIT", regressor(multi, 2, "SUM", "PROBIT", []float32{1, 2})},
		{"class_sometimes_scored", "not scored for every input",
			classifier([]map[int64]float32{{0: 1}, {1: 1}, {2: 1}, {0: 1}, {1: 1}}, []int64{0, 1, 2}, nil, "NONE")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := canonical.FromProto(tc.mp, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Convert(m, Options{ToML: 5})
			var be *BlockedError
			if !errors.As(err, &be) || len(be.Blockers) != 1 {
				t.Fatalf("want one blocker, got %v", err)
			}
			bl := be.Blockers[0]
			if bl.Kind != KindNotExpressible || !strings.Contains(bl.Reason, tc.reason) || !strings.HasSuffix(bl.Step, "3 -> 5") {
				t.Fatalf("blocker %+v", bl)
			}
		})
	}
}

// TestLabelEncoderSteps moves LabelEncoder 1 -> 2 -> 4 -> 2 -> 1 both
// ways (string -> index and index -> string) and runs each version.
func TestLabelEncoderSteps(t *testing.T) {
	mk := func(toInt bool) *onnxpb.ModelProto {
		in, out := onnxpb.TensorProto_STRING, onnxpb.TensorProto_INT64
		def := &onnxpb.AttributeProto{Name: proto.String("default_int64"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(-7)}
		if !toInt {
			in, out = out, in
			def = aStr("default_string", "none")
		}
		return &onnxpb.ModelProto{
			IrVersion:   proto.Int64(8),
			OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String("ai.onnx.ml"), Version: proto.Int64(1)}},
			Graph: &onnxpb.GraphProto{Name: proto.String("g"),
				Input: []*onnxpb.ValueInfoProto{vi("X", in, 6)}, Output: []*onnxpb.ValueInfoProto{vi("Y", out, 6)},
				Node: []*onnxpb.NodeProto{{OpType: proto.String("LabelEncoder"), Domain: proto.String("ai.onnx.ml"), Name: proto.String("le"),
					Input: []string{"X"}, Output: []string{"Y"}, Attribute: []*onnxpb.AttributeProto{aStrs("classes_strings", "a", "b", "c", "b"), def}}}},
		}
	}
	strIn := canonical.NewStringTensor("X", []int64{6}, [][]byte{[]byte("c"), []byte("a"), []byte("zz"), []byte("b"), []byte(""), []byte("a")})
	intIn := canonical.Int64Tensor("X", []int64{6}, []int64{2, 0, 9, 3, -1, 1})
	// A repeated string maps to its last position (as ONNX Runtime does).
	wantInt := canonical.Int64Tensor("Y", []int64{6}, []int64{2, 0, -7, 3, -7, 0})
	wantStr := canonical.NewStringTensor("Y", []int64{6}, [][]byte{[]byte("c"), []byte("a"), []byte("none"), []byte("b"), []byte("none"), []byte("b")})
	for _, toInt := range []bool{true, false} {
		in, want := strIn, wantInt
		if !toInt {
			in, want = intIn, wantStr
		}
		m, err := canonical.FromProto(mk(toInt), "")
		if err != nil {
			t.Fatal(err)
		}
		compareTensor(t, "ml 1", runModel(t, m, []*canonical.Tensor{in})[0], want, 0, 0)
		for _, to := range []int{2, 4, 2, 1} {
			if _, err := Convert(m, Options{ToML: to}); err != nil {
				t.Fatalf("toInt=%v to ml %d: %v", toInt, to, err)
			}
			compareTensor(t, "ml "+itoa(to), runModel(t, m, []*canonical.Tensor{in})[0], want, 0, 0)
		}
	}
}

// TestMLBackendMatrix converts every ai.onnx.ml backend node test to every
// ml opset: each result must give the stored outputs on the executor, and
// each refusal must say why.
func TestMLBackendMatrix(t *testing.T) {
	root := filepath.Join(sharedDir(t), "onnx-v1.22", "backend-tests", "node")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var converted, refused int
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "test_ai_onnx_ml_") {
			continue
		}
		for to := 1; to <= 5; to++ {
			m := loadModel(t, filepath.Join(root, e.Name(), "model.onnx"))
			if m.Opset(canonical.MLDomain) == int64(to) {
				continue
			}
			_, err := Convert(m, Options{ToML: to})
			var be *BlockedError
			if errors.As(err, &be) {
				for _, b := range be.Blockers {
					if b.Reason == "" || b.Kind == "" {
						t.Errorf("%s -> ml %d: blocker without reason: %+v", e.Name(), to, b)
					}
					t.Logf("refused %s -> ml %d: %s: %s", e.Name(), to, b.Step, b.Reason)
				}
				refused++
				continue
			}
			if err != nil {
				t.Fatalf("%s -> ml %d: %v", e.Name(), to, err)
			}
			ds := filepath.Join(root, e.Name(), "test_data_set_0")
			outs := runModel(t, m, readPbSet(t, ds, "input"))
			for i, w := range readPbSet(t, ds, "output") {
				compareTensor(t, e.Name()+" -> ml "+itoa(to)+" output "+itoa(i), outs[i], w, 1e-5, 1e-6)
			}
			converted++
		}
	}
	t.Logf("%d converted and checked, %d refused", converted, refused)
	if converted < 20 {
		t.Fatalf("only %d conversions", converted)
	}
}
