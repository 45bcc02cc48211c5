package executor_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
)

// Hand-computed cases for the ai.onnx.ml, string and recurrent kernels
// that the ONNX backend tests do not cover.

func mlF32(name string, dims []int64, v ...float64) *canonical.Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
	}
	return canonical.NewTensor(name, canonical.Float, dims, b)
}

func mlI64(name string, dims []int64, v ...int64) *canonical.Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return canonical.NewTensor(name, canonical.Int64, dims, b)
}

func mlU8(name string, v ...uint8) *canonical.Tensor {
	return canonical.NewTensor(name, canonical.Uint8, []int64{int64(len(v))}, append([]byte{}, v...))
}

func mlStr(name string, dims []int64, v ...string) *canonical.Tensor {
	b := make([][]byte, len(v))
	for i, s := range v {
		b[i] = []byte(s)
	}
	return canonical.NewStringTensor(name, dims, b)
}

// mlRunValues builds a one-node model (ai.onnx 21, ai.onnx.ml mlOpset)
// and runs it.
func mlRunValues(t *testing.T, domain string, mlOpset int64, op string, nOut int, attrs []*canonical.Attribute, ins ...*executor.Value) []*executor.Value {
	t.Helper()
	g := canonical.NewGraph("t")
	m := &canonical.Model{IRVersion: 8, Graph: g}
	m.SetOpset("", 21)
	m.SetOpset(canonical.MLDomain, mlOpset)
	var vals []*canonical.Value
	for i := range ins {
		v, err := g.AddInput(fmt.Sprintf("in%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	var outs []string
	for i := 0; i < nOut; i++ {
		outs = append(outs, fmt.Sprintf("out%d", i))
	}
	n, err := g.AddNode("n", domain, op, vals, outs, attrs...)
	if err != nil {
		t.Fatal(err)
	}
	g.Outputs = n.Outputs
	e, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.RunValues(context.Background(), ins)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return res
}

func mlRunOp(t *testing.T, domain string, mlOpset int64, op string, nOut int, attrs []*canonical.Attribute, ins ...*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	vals := make([]*executor.Value, len(ins))
	for i, x := range ins {
		vals[i] = executor.TensorValue(x)
	}
	res := mlRunValues(t, domain, mlOpset, op, nOut, attrs, vals...)
	out := make([]*canonical.Tensor, len(res))
	for i, r := range res {
		if r.Tensor == nil {
			t.Fatalf("%s: output %d is not a tensor", op, i)
		}
		out[i] = r.Tensor
	}
	return out
}

func mlCheckF(t *testing.T, what string, got *canonical.Tensor, dims []int64, want ...float64) {
	t.Helper()
	if fmt.Sprint(got.Dims) != fmt.Sprint(dims) {
		t.Fatalf("%s: shape %v, want %v", what, got.Dims, dims)
	}
	g, err := got.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(want))
	}
	for i := range want {
		if math.Abs(g[i]-want[i]) > 1e-6+1e-5*math.Abs(want[i]) {
			t.Errorf("%s[%d] = %.8g, want %.8g (all: %v)", what, i, g[i], want[i], g)
			return
		}
	}
}

func mlCheckS(t *testing.T, what string, got *canonical.Tensor, want ...string) {
	t.Helper()
	ss, err := got.Strings()
	if err != nil {
		t.Fatal(err)
	}
	gs := make([]string, len(ss))
	for i, s := range ss {
		gs[i] = string(s)
	}
	if fmt.Sprint(gs) != fmt.Sprint(want) {
		t.Errorf("%s = %q, want %q", what, gs, want)
	}
}

func TestMLTreeEnsembleRegressorAverageBaseMissing(t *testing.T) {
	// tree 0: x0 <= 0.5 (NaN goes true) ? leaf1 {t0: 1, t1: 10} : leaf2 {t0: 2}
	// tree 1: a single leaf {t0: 0.5}
	attrs := []*canonical.Attribute{
		canonical.IntsAttr("nodes_treeids", 0, 0, 0, 1),
		canonical.IntsAttr("nodes_nodeids", 0, 1, 2, 0),
		canonical.IntsAttr("nodes_featureids", 0, 0, 0, 0),
		canonical.StringsAttr("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF", "LEAF"),
		canonical.FloatsAttr("nodes_values", 0.5, 0, 0, 0),
		canonical.IntsAttr("nodes_truenodeids", 1, 0, 0, 0),
		canonical.IntsAttr("nodes_falsenodeids", 2, 0, 0, 0),
		canonical.IntsAttr("nodes_missing_value_tracks_true", 1, 0, 0, 0),
		canonical.IntsAttr("target_treeids", 0, 0, 0, 1),
		canonical.IntsAttr("target_nodeids", 1, 1, 2, 0),
		canonical.IntsAttr("target_ids", 0, 1, 0, 0),
		canonical.FloatsAttr("target_weights", 1, 10, 2, 0.5),
		canonical.IntAttr("n_targets", 2),
		canonical.StringAttr("aggregate_function", "AVERAGE"),
		canonical.FloatsAttr("base_values", 100, 200),
	}
	out := mlRunOp(t, canonical.MLDomain, 3, "TreeEnsembleRegressor", 1, attrs, mlF32("x", []int64{3, 1}, 0.2, 0.9, math.NaN()))
	mlCheckF(t, "Y", out[0], []int64{3, 2}, 100.75, 205, 101.25, 200, 100.75, 205)
}

func TestMLTreeEnsembleModes(t *testing.T) {
	// tree 0: x1 > 1 ? 2 : -1; tree 1: x0 in {1, 3} ? 0.5 : 4
	base := []*canonical.Attribute{
		canonical.IntsAttr("tree_roots", 0, 1),
		canonical.TensorAttr("nodes_modes", mlU8("nodes_modes", 3, 6)),
		canonical.IntsAttr("nodes_featureids", 1, 0),
		canonical.TensorAttr("nodes_splits", mlF32("nodes_splits", []int64{2}, 1, 0)),
		canonical.IntsAttr("nodes_truenodeids", 0, 2),
		canonical.IntsAttr("nodes_trueleafs", 1, 1),
		canonical.IntsAttr("nodes_falsenodeids", 1, 3),
		canonical.IntsAttr("nodes_falseleafs", 1, 1),
		canonical.TensorAttr("membership_values", mlF32("membership_values", []int64{3}, 1, 3, math.NaN())),
		canonical.IntsAttr("leaf_targetids", 0, 0, 0, 0),
		canonical.TensorAttr("leaf_weights", mlF32("leaf_weights", []int64{4}, 2, -1, 0.5, 4)),
		canonical.IntAttr("n_targets", 1),
	}
	x := mlF32("x", []int64{2, 2}, 1, 2, 2, 0)
	for _, c := range []struct {
		agg, post int64
		want      []float64
	}{
		{3, 0, []float64{2, 4}},                   // MAX
		{2, 0, []float64{0.5, -1}},                // MIN
		{0, 0, []float64{1.25, 1.5}},              // AVERAGE
		{1, 2, []float64{0.92414182, 0.95257413}}, // SUM, LOGISTIC
	} {
		attrs := append([]*canonical.Attribute{canonical.IntAttr("aggregate_function", c.agg), canonical.IntAttr("post_transform", c.post)}, base...)
		out := mlRunOp(t, canonical.MLDomain, 5, "TreeEnsemble", 1, attrs, x)
		mlCheckF(t, fmt.Sprintf("agg %d post %d", c.agg, c.post), out[0], []int64{2, 1}, c.want...)
	}
}

func TestMLTreeEnsembleClassifier(t *testing.T) {
	tree := []*canonical.Attribute{
		canonical.IntsAttr("nodes_treeids", 0, 0, 0),
		canonical.IntsAttr("nodes_nodeids", 0, 1, 2),
		canonical.IntsAttr("nodes_featureids", 0, 0, 0),
		canonical.StringsAttr("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"),
		canonical.FloatsAttr("nodes_values", 0.5, 0, 0),
		canonical.IntsAttr("nodes_truenodeids", 1, 0, 0),
		canonical.IntsAttr("nodes_falsenodeids", 2, 0, 0),
	}
	x := mlF32("x", []int64{2, 1}, 0.1, 0.9)
	// Binary, one scored class with positive weights: [1-p, p].
	bin := append([]*canonical.Attribute{
		canonical.IntsAttr("class_treeids", 0, 0),
		canonical.IntsAttr("class_nodeids", 1, 2),
		canonical.IntsAttr("class_ids", 0, 0),
		canonical.FloatsAttr("class_weights", 0.2, 0.8),
		canonical.IntsAttr("classlabels_int64s", 7, 9),
	}, tree...)
	out := mlRunOp(t, canonical.MLDomain, 3, "TreeEnsembleClassifier", 2, bin, x)
	mlCheckF(t, "binary label", out[0], []int64{2}, 7, 9)
	mlCheckF(t, "binary scores", out[1], []int64{2, 2}, 0.8, 0.2, 0.2, 0.8)
	// Three classes, string labels, softmax; class 2 unscored on leaf 1.
	multi := append([]*canonical.Attribute{
		canonical.IntsAttr("class_treeids", 0, 0, 0),
		canonical.IntsAttr("class_nodeids", 1, 1, 2),
		canonical.IntsAttr("class_ids", 0, 1, 2),
		canonical.FloatsAttr("class_weights", 1, 2, 3),
		canonical.StringsAttr("classlabels_strings", "a", "b", "c"),
		canonical.StringAttr("post_transform", "SOFTMAX"),
	}, tree...)
	out = mlRunOp(t, canonical.MLDomain, 3, "TreeEnsembleClassifier", 2, multi, x)
	mlCheckS(t, "multi label", out[0], "b", "c")
	mlCheckF(t, "multi scores", out[1], []int64{2, 3},
		0.24472847, 0.66524096, 0.09003057, 0.0452785, 0.0452785, 0.909443)
}

func TestMLLinearModels(t *testing.T) {
	out := mlRunOp(t, canonical.MLDomain, 1, "LinearClassifier", 2, []*canonical.Attribute{
		canonical.FloatsAttr("coefficients", 1, 0, 0, 1, 1, 1),
		canonical.FloatsAttr("intercepts", 0, 0.5, -1),
		canonical.IntsAttr("classlabels_ints", 10, 20, 30),
	}, mlF32("x", []int64{1, 2}, 1, 2))
	mlCheckF(t, "multi label", out[0], []int64{1}, 20)
	mlCheckF(t, "multi scores", out[1], []int64{1, 3}, 1, 2.5, 2)

	out = mlRunOp(t, canonical.MLDomain, 1, "LinearClassifier", 2, []*canonical.Attribute{
		canonical.FloatsAttr("coefficients", 2, -1),
		canonical.FloatsAttr("intercepts", -1.5),
		canonical.StringsAttr("classlabels_strings", "no", "yes"),
	}, mlF32("x", []int64{2, 2}, 1, 1, 2, 0))
	mlCheckS(t, "binary label", out[0], "no", "yes")
	mlCheckF(t, "binary scores", out[1], []int64{2, 2}, 1.5, -0.5, -1.5, 2.5)

	out = mlRunOp(t, canonical.MLDomain, 1, "LinearRegressor", 1, []*canonical.Attribute{
		canonical.FloatsAttr("coefficients", 1, 2, 3, 4),
		canonical.FloatsAttr("intercepts", 1, -1),
		canonical.IntAttr("targets", 2),
	}, mlF32("x", []int64{2, 2}, 1, 1, 0, 2))
	mlCheckF(t, "regressor", out[0], []int64{2, 2}, 4, 6, 5, 7)
}

func TestMLSVM(t *testing.T) {
	out := mlRunOp(t, canonical.MLDomain, 1, "SVMRegressor", 1, []*canonical.Attribute{
		canonical.StringAttr("kernel_type", "RBF"),
		canonical.FloatsAttr("kernel_params", 0.5, 0, 0),
		canonical.FloatsAttr("support_vectors", 0, 0, 1, 1),
		canonical.FloatsAttr("coefficients", 1, -1),
		canonical.FloatsAttr("rho", 0.1),
		canonical.IntAttr("n_supports", 2),
	}, mlF32("x", []int64{2, 2}, 0, 0, 1, 0))
	mlCheckF(t, "svr", out[0], []int64{2, 1}, 0.73212056, 0.1)

	out = mlRunOp(t, canonical.MLDomain, 1, "SVMClassifier", 2, []*canonical.Attribute{
		canonical.StringAttr("kernel_type", "LINEAR"),
		canonical.IntsAttr("vectors_per_class", 1, 1),
		canonical.FloatsAttr("support_vectors", 0, 0, 2, 2),
		canonical.FloatsAttr("coefficients", 1, -1),
		canonical.FloatsAttr("rho", 0.5),
		canonical.IntsAttr("classlabels_ints", 3, 4),
	}, mlF32("x", []int64{2, 2}, 1, 1, -1, 0))
	mlCheckF(t, "svc label", out[0], []int64{2}, 4, 3)
	mlCheckF(t, "svc scores", out[1], []int64{2, 2}, 3.5, -3.5, -2.5, 2.5)
}

func TestMLTransforms(t *testing.T) {
	out := mlRunOp(t, canonical.MLDomain, 1, "Scaler", 1, []*canonical.Attribute{
		canonical.FloatsAttr("offset", 1, 2), canonical.FloatsAttr("scale", 2, 0.5),
	}, mlI64("x", []int64{1, 2}, 3, 4))
	mlCheckF(t, "scaler", out[0], []int64{1, 2}, 4, 1)

	for _, c := range []struct {
		norm string
		in   []float64
		want []float64
	}{{"L1", []float64{1, -3}, []float64{0.25, -0.75}}, {"L2", []float64{3, 4}, []float64{0.6, 0.8}}, {"MAX", []float64{1, 4}, []float64{0.25, 1}}} {
		out = mlRunOp(t, canonical.MLDomain, 1, "Normalizer", 1, []*canonical.Attribute{canonical.StringAttr("norm", c.norm)}, mlF32("x", []int64{1, 2}, c.in...))
		mlCheckF(t, c.norm, out[0], []int64{1, 2}, c.want...)
	}

	out = mlRunOp(t, canonical.MLDomain, 1, "OneHotEncoder", 1, []*canonical.Attribute{canonical.IntsAttr("cats_int64s", 1, 5, 7)}, mlI64("x", []int64{1, 2}, 5, 2))
	mlCheckF(t, "onehot", out[0], []int64{1, 2, 3}, 0, 1, 0, 0, 0, 0)

	out = mlRunOp(t, canonical.MLDomain, 1, "Imputer", 1, []*canonical.Attribute{
		canonical.FloatsAttr("imputed_value_floats", 9, 8), canonical.FloatAttr("replaced_value_float", float32(math.NaN())),
	}, mlF32("x", []int64{2, 2}, math.NaN(), 1, 2, math.NaN()))
	mlCheckF(t, "imputer", out[0], []int64{2, 2}, 9, 1, 2, 8)

	cm := []*canonical.Attribute{canonical.StringsAttr("cats_strings", "a", "b"), canonical.IntsAttr("cats_int64s", 1, 2), canonical.IntAttr("default_int64", -5)}
	out = mlRunOp(t, canonical.MLDomain, 1, "CategoryMapper", 1, cm, mlStr("x", []int64{2}, "b", "z"))
	mlCheckF(t, "category to int", out[0], []int64{2}, 2, -5)
	cm = []*canonical.Attribute{canonical.StringsAttr("cats_strings", "a", "b"), canonical.IntsAttr("cats_int64s", 1, 2), canonical.StringAttr("default_string", "?")}
	out = mlRunOp(t, canonical.MLDomain, 1, "CategoryMapper", 1, cm, mlI64("x", []int64{2}, 1, 3))
	mlCheckS(t, "category to string", out[0], "a", "?")

	out = mlRunOp(t, canonical.MLDomain, 1, "FeatureVectorizer", 1, []*canonical.Attribute{canonical.IntsAttr("inputdimensions", 1, 2)},
		mlF32("a", []int64{2, 1}, 1, 2), mlF32("b", []int64{2, 2}, 3, 4, 5, 6))
	mlCheckF(t, "featurevectorizer", out[0], []int64{2, 3}, 1, 3, 4, 2, 5, 6)

	out = mlRunOp(t, canonical.MLDomain, 2, "LabelEncoder", 1, []*canonical.Attribute{
		canonical.FloatsAttr("keys_floats", float32(math.NaN()), 1.5), canonical.StringsAttr("values_strings", "nan", "x"), canonical.StringAttr("default_string", "d"),
	}, mlF32("x", []int64{3}, math.NaN(), 1.5, 2))
	mlCheckS(t, "labelencoder 2", out[0], "nan", "x", "d")
	out = mlRunOp(t, canonical.MLDomain, 1, "LabelEncoder", 1, []*canonical.Attribute{canonical.StringsAttr("classes_strings", "a", "b", "c")}, mlStr("x", []int64{2}, "c", "q"))
	mlCheckF(t, "labelencoder 1", out[0], []int64{2}, 2, -1)
}

func TestMLZipMapAndDictVectorizer(t *testing.T) {
	res := mlRunValues(t, canonical.MLDomain, 1, "ZipMap", 1, []*canonical.Attribute{canonical.IntsAttr("classlabels_int64s", 4, 8)},
		executor.TensorValue(mlF32("x", []int64{2, 2}, 0.25, 0.75, 1, 0)))
	if !res[0].IsSequence || len(res[0].Sequence) != 2 {
		t.Fatalf("ZipMap gave %+v, want a sequence of 2", res[0])
	}
	mlCheckF(t, "zipmap row 0", res[0].Sequence[0], []int64{2}, 0.25, 0.75)
	mlCheckF(t, "zipmap row 1", res[0].Sequence[1], []int64{2}, 1, 0)

	m := &executor.Value{IsSequence: true, Sequence: []*canonical.Tensor{mlStr("k", []int64{2}, "c", "a"), mlF32("v", []int64{2}, 8, 4)}}
	res = mlRunValues(t, canonical.MLDomain, 1, "DictVectorizer", 1, []*canonical.Attribute{canonical.StringsAttr("string_vocabulary", "a", "c", "b", "z")}, m)
	mlCheckF(t, "dictvectorizer", res[0].Tensor, []int64{1, 4}, 4, 8, 0, 0)
}

func TestRNNBidirectionalLayout(t *testing.T) {
	// hidden 1, input 1, two steps, W = 0.5, R = 2, tanh; layout 1.
	out := mlRunOp(t, "", 1, "RNN", 2, []*canonical.Attribute{
		canonical.IntAttr("hidden_size", 1), canonical.StringAttr("direction", "bidirectional"), canonical.IntAttr("layout", 1),
	}, mlF32("x", []int64{1, 2, 1}, 1, 2), mlF32("w", []int64{2, 1, 1}, 0.5, 0.5), mlF32("r", []int64{2, 1, 1}, 2, 2))
	mlCheckF(t, "Y", out[0], []int64{1, 2, 2, 1}, 0.46211716, 0.96562975, 0.95826478, 0.76159416)
	mlCheckF(t, "Y_h", out[1], []int64{1, 2, 1}, 0.95826478, 0.96562975)

	out = mlRunOp(t, "", 1, "RNN", 2, []*canonical.Attribute{
		canonical.IntAttr("hidden_size", 1), canonical.StringsAttr("activations", "LeakyRelu"), canonical.FloatsAttr("activation_alpha", 0.1),
	}, mlF32("x", []int64{1, 1, 1}, -1), mlF32("w", []int64{1, 1, 1}, 1), mlF32("r", []int64{1, 1, 1}, 0))
	mlCheckF(t, "leaky Y_h", out[1], []int64{1, 1, 1}, -0.1)
}

func TestLSTMClipPeepholesInputForget(t *testing.T) {
	ins := []*canonical.Tensor{
		mlF32("x", []int64{1, 1, 1}, 1),
		mlF32("w", []int64{1, 4, 1}, 1, 0.5, -1, 2), // i, o, f, c
		mlF32("r", []int64{1, 4, 1}, 0, 0, 0, 0),
		mlF32("b", []int64{1, 8}, 0, 0, 0, 0, 0, 0, 0, 0),
		mlI64("len", []int64{1}, 1),
		mlF32("h0", []int64{1, 1, 1}, 0),
		mlF32("c0", []int64{1, 1, 1}, 0.5),
		mlF32("p", []int64{1, 3}, 0.1, 0.2, 0.3), // i, o, f
	}
	attrs := []*canonical.Attribute{canonical.IntAttr("hidden_size", 1), canonical.FloatAttr("clip", 1.5)}
	out := mlRunOp(t, "", 1, "LSTM", 3, attrs, ins...)
	mlCheckF(t, "Y_h", out[1], []int64{1, 1, 1}, 0.44574166)
	mlCheckF(t, "Y_c", out[2], []int64{1, 1, 1}, 0.82022754)
	out = mlRunOp(t, "", 1, "LSTM", 3, append(attrs, canonical.IntAttr("input_forget", 1)), ins...)
	mlCheckF(t, "input_forget Y_h", out[1], []int64{1, 1, 1}, 0.4378224)
	mlCheckF(t, "input_forget Y_c", out[2], []int64{1, 1, 1}, 0.80012366)
}

func TestGRULinearBeforeReset(t *testing.T) {
	ins := []*canonical.Tensor{
		mlF32("x", []int64{1, 1, 1}, 1),
		mlF32("w", []int64{1, 3, 1}, 0.5, -0.5, 1), // z, r, h
		mlF32("r", []int64{1, 3, 1}, 1, 1, 2),
		mlF32("b", []int64{1, 6}, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
	}
	h0 := mlF32("h0", []int64{1, 1, 1}, 0.5)
	for lbr, want := range []float64{0.58908035, 0.58804644} {
		g := canonical.NewGraph("t")
		m := &canonical.Model{IRVersion: 8, Graph: g}
		m.SetOpset("", 22)
		var vals []*canonical.Value
		for _, x := range append(ins, nil, h0) {
			if x == nil {
				vals = append(vals, nil)
				continue
			}
			v, err := g.AddInput(x.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
		n, err := g.AddNode("gru", "", "GRU", vals, []string{"", "yh"}, canonical.IntAttr("hidden_size", 1), canonical.IntAttr("linear_before_reset", int64(lbr)))
		if err != nil {
			t.Fatal(err)
		}
		g.Outputs = []*canonical.Value{n.Outputs[1]}
		e, err := executor.New(m, executor.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(context.Background(), append(append([]*canonical.Tensor{}, ins...), h0))
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		mlCheckF(t, fmt.Sprintf("linear_before_reset=%d", lbr), res[0], []int64{1, 1, 1}, want)
	}
}

// TestRecurrentLoweringMatchesHost runs each recurrent op twice on the
// same random data: with all inputs as graph inputs (the GoMLX lowering)
// and with all inputs as initializers (folded by the float64 host kernel).
func TestRecurrentLoweringMatchesHost(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := func(name string, dims ...int64) *canonical.Tensor {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64()*2 - 1
		}
		return mlF32(name, dims, v...)
	}
	const S, N, I, H = 4, 3, 2, 3
	type tc struct {
		kind  string
		attrs []*canonical.Attribute
		lens  []int64
	}
	cases := []tc{
		{"RNN", []*canonical.Attribute{canonical.StringAttr("direction", "bidirectional"), canonical.StringsAttr("activations", "Relu", "HardSigmoid"), canonical.FloatsAttr("activation_alpha", 0.3), canonical.FloatsAttr("activation_beta", 0.4)}, nil},
		{"RNN", []*canonical.Attribute{canonical.IntAttr("layout", 1), canonical.FloatAttr("clip", 0.3)}, []int64{4, 2, 1}},
		{"GRU", []*canonical.Attribute{canonical.StringAttr("direction", "reverse"), canonical.IntAttr("linear_before_reset", 1)}, nil},
		{"GRU", []*canonical.Attribute{canonical.StringAttr("direction", "bidirectional"), canonical.IntAttr("layout", 1)}, []int64{4, 4, 4}},
		{"GRU", nil, []int64{1, 3, 4}},
		{"LSTM", []*canonical.Attribute{canonical.StringAttr("direction", "bidirectional"), canonical.IntAttr("input_forget", 1), canonical.FloatAttr("clip", 0.5)}, nil},
		{"LSTM", []*canonical.Attribute{canonical.IntAttr("layout", 1), canonical.StringsAttr("activations", "Sigmoid", "Softsign", "Elu")}, []int64{2, 4, 3}},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprintf("%d_%s", ci, c.kind), func(t *testing.T) {
			G := map[string]int64{"RNN": 1, "GRU": 3, "LSTM": 4}[c.kind]
			dirs := int64(1)
			layout := int64(0)
			for _, a := range c.attrs {
				if a.Name == "direction" && string(a.S) == "bidirectional" {
					dirs = 2
				}
				if a.Name == "layout" {
					layout = a.I
				}
			}
			xd, sd := []int64{S, N, I}, []int64{dirs, N, H}
			if layout == 1 {
				xd, sd = []int64{N, S, I}, []int64{N, dirs, H}
			}
			ins := []*canonical.Tensor{rnd("x", xd...), rnd("w", dirs, G*H, I), rnd("r", dirs, G*H, H), rnd("b", dirs, 2*G*H), nil, rnd("h0", sd...)}
			if c.lens != nil {
				ins[4] = mlI64("lens", []int64{N}, c.lens...)
			}
			nOut := 2
			if c.kind == "LSTM" {
				ins = append(ins, rnd("c0", sd...), rnd("p", dirs, 3*H))
				nOut = 3
			}
			attrs := append([]*canonical.Attribute{canonical.IntAttr("hidden_size", H)}, c.attrs...)
			run := func(asInit bool) []*canonical.Tensor {
				g := canonical.NewGraph("t")
				m := &canonical.Model{IRVersion: 8, Graph: g}
				m.SetOpset("", 22)
				var vals []*canonical.Value
				var feed []*canonical.Tensor
				for _, x := range ins {
					var v *canonical.Value
					var err error
					switch {
					case x == nil:
					case asInit:
						v, err = g.AddInitializer(x)
					default:
						v, err = g.AddInput(x.Name, nil)
						feed = append(feed, x)
					}
					if err != nil {
						t.Fatal(err)
					}
					vals = append(vals, v)
				}
				outs := []string{"y", "yh", "yc"}[:nOut]
				n, err := g.AddNode("n", "", c.kind, vals, outs, attrs...)
				if err != nil {
					t.Fatal(err)
				}
				g.Outputs = n.Outputs
				e, err := executor.New(m, executor.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				res, err := e.Run(context.Background(), feed)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			lowered, host := run(false), run(true)
			for i := range host {
				want, err := host[i].Float64s()
				if err != nil {
					t.Fatal(err)
				}
				nz := 0
				for _, v := range want {
					if v != 0 {
						nz++
					}
				}
				if nz < len(want)/2 {
					t.Fatalf("output %d is mostly zeros: %v", i, want)
				}
				mlCheckF(t, fmt.Sprintf("output %d", i), lowered[i], host[i].Dims, want...)
			}
		})
	}
}

func TestStringSplitWhitespaceMaxsplit(t *testing.T) {
	out := mlRunOp(t, "", 1, "StringSplit", 2, []*canonical.Attribute{canonical.IntAttr("maxsplit", 1)},
		mlStr("x", []int64{3}, "  a  b c ", "", "x\ty"))
	mlCheckS(t, "Y", out[0], "a", "b c ", "", "", "x", "y")
	mlCheckF(t, "Z", out[1], []int64{3}, 2, 0, 2)
	out = mlRunOp(t, "", 1, "RegexFullMatch", 1, []*canonical.Attribute{canonical.StringAttr("pattern", `(?m)a$`)},
		mlStr("x", []int64{2}, "a\nb", "a"))
	mlCheckF(t, "full match", out[0], []int64{2}, 0, 1)
}
