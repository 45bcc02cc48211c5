package build_test

import (
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// The Editor adds linked nodes and constants with fresh names, and keeps
// the first error: later calls do nothing.
func TestEditor(t *testing.T) {
	g := canonical.NewGraph("g")
	x, err := g.AddInput("x", canonical.TensorType(canonical.Float, []int64{2}))
	if err != nil {
		t.Fatal(err)
	}
	m := &canonical.Model{Graph: g}
	e := build.On(g, canonical.NewNamer(m), "x")
	y := e.Op("Add", []*canonical.Value{x, e.Number(canonical.Float, nil, 1)})
	parts := e.OpN("Split", 2, []*canonical.Value{y, e.Int64s([]int64{2}, 1, 1)})
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	if y.Name != "x_Add_out" || len(parts) != 2 || parts[1].Name != "x_Split_out1" || len(e.Added) != 2 {
		t.Fatalf("names %q %v, %d nodes", y.Name, parts, len(e.Added))
	}
	if p, _ := y.Producer(); p == nil || p.Inputs[0] != x || p.Inputs[1].Const == nil || p.Inputs[1].Name != "x_const" {
		t.Fatalf("Add reads %v", p.Inputs)
	}
	if len(x.Uses()) != 1 || len(g.Initializers) != 2 {
		t.Fatalf("x has %d uses, the graph %d initializers", len(x.Uses()), len(g.Initializers))
	}

	// A namer that does not know the graph's names: the clash is an error,
	// kept, and the next call adds nothing.
	e2 := build.On(g, canonical.NewNamer(nil), "x")
	if v := e2.Op("Add", []*canonical.Value{x, x}); v != nil || e2.Err() == nil {
		t.Fatalf("clash: %v, err %v", v, e2.Err())
	}
	n := len(g.Nodes)
	if v := e2.Op("Relu", []*canonical.Value{x}); v != nil || len(g.Nodes) != n {
		t.Fatal("an Editor with an error still added a node")
	}
}

// OpTo keeps the name it is given; Copy repeats a node of another graph
// (op, domain, attributes) on new inputs with fresh names, keeping absent
// outputs absent.
func TestEditorOpToCopy(t *testing.T) {
	src := canonical.NewGraph("src")
	a, err := src.AddInput("a", canonical.TensorType(canonical.Float, []int64{4}))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := src.AddNode("drop", "", "Dropout", []*canonical.Value{a}, []string{"y", ""}, canonical.FloatAttr("ratio", 0.25))
	if err != nil {
		t.Fatal(err)
	}

	g := canonical.NewGraph("g")
	x, err := g.AddInput("x", canonical.TensorType(canonical.Float, []int64{4}))
	if err != nil {
		t.Fatal(err)
	}
	e := build.On(g, canonical.NewNamer(&canonical.Model{Graph: g}), "x")
	outs := e.Copy(orig, []*canonical.Value{x})
	kept := e.OpTo("Relu", []*canonical.Value{outs[0]}, "kept")
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[1] != nil || outs[0].Name != "x_Dropout_out0" {
		t.Fatalf("copy outputs %v", outs)
	}
	p, _ := outs[0].Producer()
	if p == orig || p.Graph != g || p.OpType != "Dropout" || p.Inputs[0] != x || p.Attr("ratio") == nil || p.Attr("ratio").F != 0.25 {
		t.Fatalf("copy %+v", p)
	}
	if kept.Name != "kept" || g.Lookup("kept") != kept {
		t.Fatalf("OpTo named its output %q", kept.Name)
	}
	// The name is taken now: a second OpTo to it is an error, kept.
	if v := e.OpTo("Relu", []*canonical.Value{x}, "kept"); v != nil || e.Err() == nil {
		t.Fatalf("OpTo to a taken name: %v, err %v", v, e.Err())
	}
}
