package canonical

import (
	"strings"
	"testing"
)

func TestAddNodeUseDefAndTopoSort(t *testing.T) {
	g := NewGraph("g")
	x, err := g.AddInput("x", TensorType(Float, []int64{2}))
	if err != nil {
		t.Fatal(err)
	}
	// Appended out of order on purpose: b consumes a's output but comes first.
	a, _ := g.AddNode("a", "", "Relu", []*Value{x}, []string{"y"})
	y := a.Outputs[0]
	b, err := g.AddNode("b", "", "Neg", []*Value{y}, []string{"z"})
	if err != nil {
		t.Fatal(err)
	}
	g.Nodes[0], g.Nodes[1] = g.Nodes[1], g.Nodes[0]
	order, err := g.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	if order[0] != a || order[1] != b {
		t.Fatalf("order = %v, %v; want a, b", order[0], order[1])
	}
	if p, i := y.Producer(); p != a || i != 0 {
		t.Fatalf("producer of y = %v,%d", p, i)
	}
	if u := y.Uses(); len(u) != 1 || u[0].Node != b || u[0].Index != 0 {
		t.Fatalf("uses of y = %v", u)
	}
	// Rewire b to read x directly: y loses its use.
	b.SetInput(0, x)
	if len(y.Uses()) != 0 || len(x.Uses()) != 2 {
		t.Fatalf("after SetInput: uses y=%d x=%d", len(y.Uses()), len(x.Uses()))
	}
	if _, err := g.AddNode("c", "", "Abs", []*Value{x}, []string{"y"}); err == nil {
		t.Fatal("defining y twice was accepted")
	}
}

func TestTopoSortFindsCycle(t *testing.T) {
	g := NewGraph("cyc")
	x, _ := g.AddInput("x", nil)
	a, _ := g.AddNode("a", "", "Add", []*Value{x, nil}, []string{"p"})
	b, _ := g.AddNode("b", "", "Neg", []*Value{a.Outputs[0]}, []string{"q"})
	a.SetInput(1, b.Outputs[0])
	_, err := g.TopoSort()
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("TopoSort error = %v, want a cycle", err)
	}
}

func TestNumElementsOverflow(t *testing.T) {
	if n, err := NumElements([]int64{3, 4, 5}); err != nil || n != 60 {
		t.Fatalf("NumElements = %d, %v", n, err)
	}
	if _, err := NumElements([]int64{1 << 32, 1 << 32}); err == nil {
		t.Fatal("overflowing dims accepted")
	}
	if _, err := NumElements([]int64{2, -1}); err == nil {
		t.Fatal("negative dim accepted")
	}
}

func TestTensorBytesChecksSize(t *testing.T) {
	tt := NewTensor("w", Float, []int64{2, 2}, make([]byte, 15))
	if _, err := tt.Bytes(); err == nil {
		t.Fatal("15 bytes for 4 floats accepted")
	}
	tt = NewTensor("q", Int4, []int64{3}, []byte{0x21, 0x03})
	b, err := tt.Bytes()
	if err != nil || len(b) != 2 {
		t.Fatalf("int4 x3 = %v, %v; want 2 packed bytes", b, err)
	}
}
