//go:build cgo

package passes

import (
	"context"
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/opset/convert"
	"github.com/onnxconv/onnxconv/verify"
)

// sdpaModel builds multi-head self-attention at opset 23 as exporters
// write it: x [1, 8, 32] projected to Q, K, V (MatMul), heads split
// (Reshape [1, 8, 4, 8], Transpose; K to [0, 2, 3, 1]), MatMul(Q, Kᵀ),
// Mul by 1/sqrt(8), Add of a [1, 1, 8, 8] mask input, Softmax,
// MatMul(·, V), heads merged (Transpose, Reshape [1, 8, 32]).
func sdpaModel(t *testing.T) *canonical.Model {
	t.Helper()
	m := &canonical.Model{IRVersion: 10, Graph: canonical.NewGraph("sdpa")}
	m.SetOpset("", 23)
	g := m.Graph
	x, _ := g.AddInput("x", canonical.TensorType(canonical.Float, []int64{1, 8, 32}))
	mask, _ := g.AddInput("mask", canonical.TensorType(canonical.Float, []int64{1, 1, 8, 8}))
	c := func(name string, dims []int64, v []float64) *canonical.Value {
		tt := canonical.NumberTensor(name, canonical.Float, dims, v)
		val, err := g.AddInitializer(tt)
		if err != nil {
			t.Fatal(err)
		}
		return val
	}
	shape := func(name string, d ...int64) *canonical.Value {
		val, err := g.AddInitializer(canonical.Int64Tensor(name, []int64{int64(len(d))}, d))
		if err != nil {
			t.Fatal(err)
		}
		return val
	}
	node := func(op string, in []*canonical.Value, out string, attrs ...*canonical.Attribute) *canonical.Value {
		n, err := g.AddNode(out+"_node", "", op, in, []string{out}, attrs...)
		if err != nil {
			t.Fatal(err)
		}
		return n.Output(0)
	}
	split := func(name string, seed float64, perm ...int64) *canonical.Value {
		w := make([]float64, 32*32)
		for i := range w {
			w[i] = 0.3 * math.Sin(seed+float64(i)*0.7)
		}
		p := node("MatMul", []*canonical.Value{x, c(name+"_w", []int64{32, 32}, w)}, name)
		r := node("Reshape", []*canonical.Value{p, shape(name+"_shape", 1, 8, 4, 8)}, name+"_heads")
		return node("Transpose", []*canonical.Value{r}, name+"_t", canonical.IntsAttr("perm", perm...))
	}
	q := split("q", 1, 0, 2, 1, 3)
	kt := split("k", 2, 0, 2, 3, 1)
	v := split("v", 3, 0, 2, 1, 3)
	s := node("MatMul", []*canonical.Value{q, kt}, "scores")
	s = node("Mul", []*canonical.Value{s, c("scale", nil, []float64{1 / math.Sqrt(8)})}, "scaled")
	s = node("Add", []*canonical.Value{s, mask}, "masked")
	s = node("Softmax", []*canonical.Value{s}, "probs", canonical.IntAttr("axis", -1))
	y := node("MatMul", []*canonical.Value{s, v}, "context")
	y = node("Transpose", []*canonical.Value{y}, "context_t", canonical.IntsAttr("perm", 0, 2, 1, 3))
	y = node("Reshape", []*canonical.Value{y, shape("merge_shape", 1, 8, 32)}, "y")
	y.Type = canonical.TensorType(canonical.Float, []int64{1, 8, 32})
	g.Outputs = append(g.Outputs, y)
	return m
}

// fuseAndCompareInORT runs the default passes (each checked on the
// executor), asserts the attention pattern became n Attention nodes, and
// compares input and result in ONNX Runtime 1.30 (Attention-23) on one
// generated sample.
func fuseAndCompareInORT(t *testing.T, m *canonical.Model, n int) *Report {
	t.Helper()
	res, rep, err := Run(context.Background(), m, Builtin(), RunOptions{Check: &Check{Samples: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	for _, p := range rep.Passes {
		if p.Name == "fuse-attention" {
			t.Logf("%s", p.line())
		}
	}
	if len(rep.RolledBack()) > 0 {
		t.Fatalf("rolled back: %+v", rep.RolledBack())
	}
	t.Logf("nodes %d -> %d: %s", rep.Before.Nodes, rep.After.Nodes, rep.After.OpsString())
	if rep.After.Ops["Attention"] != n || rep.After.Ops["Softmax"] != 0 {
		t.Fatalf("Attention %d Softmax %d, want %d and 0", rep.After.Ops["Attention"], rep.After.Ops["Softmax"], n)
	}
	if rep.MaxRel > 1e-5 && rep.MaxAbs > 1e-6 {
		t.Errorf("executor: max abs %g rel %g", rep.MaxAbs, rep.MaxRel)
	}
	rt := openORT(t)
	x, err := verify.GenerateInputs(m, verify.GenOptions{Seed: 5}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ya := runORT(t, rt, save(t, m, "in.onnx"), x)
	yb := runORT(t, rt, save(t, res, "fused.onnx"), x)
	for i := range ya {
		abs, rel := maxDiff(t, ya[i], yb[i])
		t.Logf("ONNX Runtime, output %d: max abs %.3g rel %.3g", i, abs, rel)
		if abs > 1e-6 && rel > 1e-5 {
			t.Errorf("output %d on ONNX Runtime: max abs %g rel %g", i, abs, rel)
		}
	}
	return rep
}

func TestFuseAttentionOpset23(t *testing.T) {
	m := sdpaModel(t)
	rep := fuseAndCompareInORT(t, m, 1)
	// Q/K/V MatMuls and the Attention: the head split/merge is gone.
	if rep.After.Nodes != 4 {
		t.Errorf("nodes %d -> %d (%s), want 4", rep.Before.Nodes, rep.After.Nodes, rep.After.OpsString())
	}
	// Below opset 23 nothing is fused.
	m.SetOpset("", 22)
	res, rep22, err := Run(context.Background(), m, []Pass{{Name: "fuse-attention", Run: fuseAttention}}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if rep22.After.Ops["Attention"] != 0 {
		t.Error("fused at opset 22")
	}
}

func TestFuseAttentionTransformerBlock(t *testing.T) {
	m, _ := fixture(t, "transformer_block_opset21")
	if _, err := convert.Convert(m, convert.Options{To: 23}); err != nil {
		t.Fatal(err)
	}
	fuseAndCompareInORT(t, m, 1)
}
