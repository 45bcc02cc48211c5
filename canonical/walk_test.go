package canonical

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

func loadBackend(t *testing.T, name string) *Model {
	t.Helper()
	p := filepath.Join(repoRoot(t), "..", "shared", "onnx-v1.22", "backend-tests", "node", name, "model.onnx")
	m, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestWalkVisitsSubgraphsFirst(t *testing.T) {
	m := loadBackend(t, "test_if")
	var got []string
	err := Walk(m.Graph, func(g *Graph, path string, idx int, n *Node) error {
		got = append(got, fmt.Sprintf("%s #%d %s", path, idx, n.OpType))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// test_if: one If node whose attributes are else_branch then then_branch
	// (file order), each holding one Constant.
	want := []string{
		"main/If_0.else_branch #0 Constant",
		"main/If_0.then_branch #0 Constant",
		"main #0 If",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Walk visited %q, want %q", got, want)
	}
}

func TestWalkLoopBodyAndStop(t *testing.T) {
	m := loadBackend(t, "test_loop11")
	var ops []string
	if err := Walk(m.Graph, func(g *Graph, path string, idx int, n *Node) error {
		if path == "main/Loop_0.body" && g != n.Graph {
			t.Errorf("node %s: graph argument differs from n.Graph", n)
		}
		ops = append(ops, n.OpType)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Identity", "Constant", "Constant", "Add", "Unsqueeze", "Unsqueeze", "Slice", "Add", "Identity", "Loop"}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("ops %v, want %v", ops, want)
	}
	stop := errors.New("stop")
	count := 0
	err := Walk(m.Graph, func(*Graph, string, int, *Node) error {
		count++
		if count == 3 {
			return fmt.Errorf("third node: %w", stop)
		}
		return nil
	})
	if !errors.Is(err, stop) || count != 3 {
		t.Fatalf("Walk returned %v after %d nodes, want the stop error after 3", err, count)
	}
	var paths []string
	_ = WalkGraphs(m.Graph, func(g *Graph, path string) error {
		paths = append(paths, path)
		return nil
	})
	if fmt.Sprint(paths) != "[main main/Loop_0.body]" {
		t.Fatalf("WalkGraphs paths %v", paths)
	}
}

func TestNamerAvoidsSubgraphNames(t *testing.T) {
	m := loadBackend(t, "test_loop11")
	body := m.Graph.Nodes[0].Attr("body").G
	nm := NewNamer(m)
	var names []string
	for _, v := range body.Inputs {
		names = append(names, v.Name)
	}
	for _, n := range body.Nodes {
		for _, o := range n.Outputs {
			names = append(names, o.Name)
		}
	}
	if len(names) < 5 {
		t.Fatalf("test_loop11 body has only names %v", names)
	}
	seen := map[string]bool{}
	for _, s := range names {
		f := nm.Fresh(s)
		if f == s || seen[f] {
			t.Errorf("Fresh(%q) = %q, a name the body uses or already handed out", s, f)
		}
		seen[f] = true
	}
	if got := nm.Fresh("a_name_nobody_uses"); got != "a_name_nobody_uses" {
		t.Errorf("Fresh of a free name = %q", got)
	}
	if got := nm.Fresh(""); got != "onnxconv" {
		t.Errorf(`Fresh("") = %q, want "onnxconv"`, got)
	}
	nm.Release("onnxconv")
	if nm.Used("onnxconv") {
		t.Errorf("Release did not free the name")
	}
}
