package convert

import (
	"fmt"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// synthetic builds a chain of n nodes at opset 7 on a [4, 8] float input
// cycling through ops whose versions change between 7 and 27: Relu, Add,
// Softmax (axis semantics at 13), Unsqueeze/Squeeze (axes attribute to
// input at 13), ReduceSum (axes to input at 13), Clip (min/max to inputs at
// 11) and Mul.
func synthetic(tb testing.TB, n int) *canonical.Model {
	tb.Helper()
	g := canonical.NewGraph("synthetic")
	x, err := g.AddInput("x", canonical.TensorType(canonical.Float, []int64{4, 8}))
	if err != nil {
		tb.Fatal(err)
	}
	one, err := g.AddInitializer(canonical.NumberTensor("one", canonical.Float, []int64{8}, []float64{1, 1, 1, 1, 1, 1, 1, 1}))
	if err != nil {
		tb.Fatal(err)
	}
	cur := x
	add := func(i int, op string, ins []*canonical.Value, attrs ...*canonical.Attribute) {
		nd, err := g.AddNode(fmt.Sprintf("n%d", i), "", op, ins, []string{fmt.Sprintf("v%d", i)}, attrs...)
		if err != nil {
			tb.Fatal(err)
		}
		cur = nd.Outputs[0]
		cur.Type = canonical.TensorType(canonical.Float, []int64{4, 8})
	}
	for i := 0; i < n; {
		switch i % 7 {
		case 0:
			add(i, "Relu", []*canonical.Value{cur})
		case 1:
			add(i, "Add", []*canonical.Value{cur, one})
		case 2:
			add(i, "Softmax", []*canonical.Value{cur}, canonical.IntAttr("axis", 1))
		case 3:
			add(i, "Clip", []*canonical.Value{cur}, canonical.FloatAttr("min", -1), canonical.FloatAttr("max", 1))
		case 4:
			nd, err := g.AddNode(fmt.Sprintf("n%d", i), "", "Unsqueeze", []*canonical.Value{cur}, []string{fmt.Sprintf("v%d", i)}, canonical.IntsAttr("axes", 0))
			if err != nil {
				tb.Fatal(err)
			}
			nd.Outputs[0].Type = canonical.TensorType(canonical.Float, []int64{1, 4, 8})
			i++
			add(i, "Squeeze", []*canonical.Value{nd.Outputs[0]}, canonical.IntsAttr("axes", 0))
		case 6:
			add(i, "Mul", []*canonical.Value{cur, one})
		default:
			add(i, "Relu", []*canonical.Value{cur})
		}
		i++
	}
	g.Outputs = append(g.Outputs, cur)
	m := &canonical.Model{IRVersion: 3, Graph: g}
	m.SetOpset("", 7)
	return m
}

// BenchmarkConvert100k converts a 100,000-node model from opset 7 to 27
// (sub-benchmark up) and from 27 back to 7 (down).
func BenchmarkConvert100k(b *testing.B) {
	b.Run("7to27", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			m := synthetic(b, 100_000)
			b.StartTimer()
			if _, err := Convert(m, Options{To: 27}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("27to7", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			m := synthetic(b, 100_000)
			if _, err := Convert(m, Options{To: 27}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := Convert(m, Options{To: 7}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSyntheticRoundTrip checks what the benchmark converts: every node
// survives 7 -> 27 -> 7 with its name, and the ops are those of opset 7.
func TestSyntheticRoundTrip(t *testing.T) {
	m := synthetic(t, 700)
	if _, err := Convert(m, Options{To: 27}); err != nil {
		t.Fatal(err)
	}
	checkAtOpset(t, "synthetic", m.Graph, 27)
	if _, err := Convert(m, Options{To: 7}); err != nil {
		t.Fatal(err)
	}
	checkAtOpset(t, "synthetic", m.Graph, 7)
	names := map[string]bool{}
	for _, n := range m.Graph.Nodes {
		names[n.Name] = true
		if n.OpType == "Clip" && (n.Attr("min") == nil || n.Attr("max") == nil || len(n.Inputs) != 1) {
			t.Fatalf("Clip %s did not get its attributes back: %d inputs", n.Name, len(n.Inputs))
		}
	}
	for i := 0; i < 700; i++ {
		if !names[fmt.Sprintf("n%d", i)] {
			t.Fatalf("node n%d lost its name", i)
		}
	}
	if len(m.Graph.Initializers) != 1 {
		t.Fatalf("%d initializers left; the constants made going up were not dropped going down", len(m.Graph.Initializers))
	}
}
