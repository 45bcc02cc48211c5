package build_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// TestModel builds a graph with a forward reference (the graph input is
// declared at the end), an initializer read from a subgraph, an If whose
// branches read an outer value, a multi-output node and an ai.onnx.ml node,
// and checks the result is a valid, linked canonical model that survives
// encoding.
func TestModel(t *testing.T) {
	b := build.New(17)
	b.Reserve("x", "y", "k")
	one := b.Scalar("one", 1)
	sum := b.Op("Add", "sum", []string{"x", one})
	cond := b.Op("ReduceMax", "cond", []string{sum}, canonical.IntAttr("keepdims", 0))
	condB := b.Op("Cast", "condb", []string{cond}, canonical.IntAttr("to", int64(canonical.Bool)))
	branch := func(op string) *canonical.Graph {
		sb := b.Sub()
		two := sb.Scalar("two", 2)
		out := sb.Op(op, "br", []string{sum, two})
		return sb.Graph(op+"_branch", nil, []build.Info{build.TensorInfo(out, canonical.Float, []int64{-1, 3}, false)})
	}
	y := b.OpTo("If", "y", []string{condB}, canonical.GraphAttr("then_branch", branch("Mul")), canonical.GraphAttr("else_branch", branch("Sub")))
	parts := b.OpN("Split", "part", 3, []string{y, b.Ints("split", 1, 1, 1)}, canonical.IntAttr("axis", 1))
	b.Import(canonical.MLDomain, 3)
	b.NodeIn(canonical.MLDomain, "Normalizer", "norm", []string{parts[2]}, []string{"k"}, canonical.StringAttr("norm", "MAX"))

	m, err := b.Model("g", []build.Info{build.TensorInfo("x", canonical.Float, []int64{-1, 3}, false)},
		[]build.Info{build.TensorInfo("y", canonical.Float, []int64{-1, 3}, false), build.TensorInfo("k", canonical.Float, []int64{-1, 1}, false)})
	if err != nil {
		t.Fatal(err)
	}
	if ps := canonical.Validate(m); len(ps) > 0 {
		t.Fatalf("invalid model: %v", ps)
	}
	if m.Opset("") != 17 || m.Opset(canonical.MLDomain) != 3 || m.IRVersion != 8 {
		t.Fatalf("opsets %v IR %d", m.OpsetImports, m.IRVersion)
	}
	if got := len(m.Graph.Initializers); got != 4 {
		t.Fatalf("%d initializers, want 4 (one, two twice, split) all in the main graph", got)
	}
	x := m.Graph.Inputs[0]
	if len(x.Uses()) != 1 || x.Uses()[0].Node.OpType != "Add" {
		t.Fatalf("input x: uses %v, want the Add", x.Uses())
	}
	ifNode, _ := m.Graph.Outputs[0].Producer()
	if ifNode == nil || ifNode.OpType != "If" {
		t.Fatalf("output y produced by %v", ifNode)
	}
	then := ifNode.Attr("then_branch").G
	if then.Parent != m.Graph || then.Owner != ifNode || len(then.Nodes) != 1 {
		t.Fatalf("then branch: parent %p owner %v nodes %d", then.Parent, then.Owner, len(then.Nodes))
	}
	if in := then.Nodes[0].Inputs[0]; in == nil || in.Graph() != m.Graph || in.Name != sum {
		t.Fatalf("then branch reads %v, want the outer %q", in, sum)
	}
	split, _ := m.Graph.Lookup(parts[1]).Producer()
	if split == nil || len(split.Outputs) != 3 {
		t.Fatalf("split: %v", split)
	}
	var buf bytes.Buffer
	if err := canonical.Encode(&buf, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := canonical.Decode(buf.Bytes(), "", canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Graph.Nodes) != len(m.Graph.Nodes) || back.Graph.Nodes[len(back.Graph.Nodes)-1].Domain != canonical.MLDomain {
		t.Fatalf("round trip: %d nodes, want %d", len(back.Graph.Nodes), len(m.Graph.Nodes))
	}
}

func TestUndefined(t *testing.T) {
	b := build.New(0)
	b.Op("Relu", "r", []string{"nowhere"})
	_, err := b.Model("g", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `"nowhere"`) {
		t.Fatalf("err = %v, want the undefined name", err)
	}
	b = build.New(0)
	_, err = b.Model("g", nil, []build.Info{{Name: "missing"}})
	if err == nil {
		t.Fatal("an undefined output was accepted")
	}
}

func TestTensorInfo(t *testing.T) {
	i := build.TensorInfo("v", canonical.Int64, []int64{-1, 4, -1}, false)
	dt, dims, hasShape, ok := canonical.TensorTypeOf(i.Type)
	if !ok || !hasShape || dt != canonical.Int64 || len(dims) != 3 || dims[0].Param != "N" || dims[1].Value != 4 || dims[2].Param != "d2" {
		t.Fatalf("%v %v %v %v", dt, dims, hasShape, ok)
	}
	if _, _, hasShape, _ := canonical.TensorTypeOf(build.TensorInfo("v", canonical.Float, nil, true).Type); hasShape {
		t.Fatal("unknown rank has a shape")
	}
}
