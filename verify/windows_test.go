package verify

import (
	"encoding/binary"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

func TestLeastFor(t *testing.T) {
	for _, c := range []struct{ w, num, den, want int64 }{
		{9, 1, 1, 9}, {10, 3, 1, 4}, {5, 1, 2, 10}, {5, 3, 4, 8}, {1, 1, 1, 1}, {3, 0, 1, 0}, {1 << 21, 1, 1, 0},
	} {
		if got := leastFor(c.w, c.num, c.den); got != c.want {
			t.Errorf("leastFor(%d, %d, %d) = %d, want %d", c.w, c.num, c.den, got, c.want)
		}
	}
}

// TestMinDimsThroughSqueeze: a window read behind Unsqueeze then Squeeze
// (the time axis moves to 3 and back to 2) and behind an Add of a
// constant of lower rank; a Squeeze of the traced axis stops the trace.
func TestMinDimsThroughSqueeze(t *testing.T) {
	i64 := func(name string, v ...int64) *canonical.Tensor {
		var raw []byte
		for _, x := range v {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(x))
		}
		return canonical.NewTensor(name, canonical.Int64, []int64{int64(len(v))}, raw)
	}
	g := canonical.NewGraph("sq")
	x, err := g.AddInput("x", symType(canonical.Float, 1, 2, "time"))
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := g.AddInitializer(i64("a1", 0))
	u, _ := g.AddNode("u", "", "Unsqueeze", []*canonical.Value{x, a1}, []string{"u"})
	a2, _ := g.AddInitializer(i64("a2", 0))
	s, _ := g.AddNode("s", "", "Squeeze", []*canonical.Value{u.Outputs[0], a2}, []string{"s"})
	b, _ := g.AddInitializer(f32("b", []int64{1}, 1))
	add, _ := g.AddNode("add", "", "Add", []*canonical.Value{s.Outputs[0], b}, []string{"a"})
	w, _ := g.AddInitializer(f32("w", []int64{1, 2, 4}, 1, 1, 1, 1, 1, 1, 1, 1))
	c, err := g.AddNode("conv", "", "Conv", []*canonical.Value{add.Outputs[0], w}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	// A second branch squeezes the time axis away after an Unsqueeze
	// that leaves it at 2: that branch must not count.
	a3, _ := g.AddInitializer(i64("a3", 2))
	s2, _ := g.AddNode("s2", "", "Squeeze", []*canonical.Value{x, a3}, []string{"s2"})
	g.Outputs = []*canonical.Value{c.Outputs[0], s2.Outputs[0]}
	m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: g}
	if got := MinDims(m)["time"]; got != 4 {
		t.Errorf("MinDims[time] = %d, want 4", got)
	}
}
