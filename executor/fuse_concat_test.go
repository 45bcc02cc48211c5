package executor

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestConcatArena: two Conv+Relu branches concatenated (a squeezenet fire
// module) run as one concatStep whose Conv outputs share a buffer, so the
// Concat is a view; its outputs over a build and four replays are
// bit-identical to the unfused plan's, on 1 and 2 threads; layouts where
// the inputs cannot line up (batch 2, a later axis) give the same values
// through the copy.
func TestConcatArena(t *testing.T) {
	for _, cs := range []struct {
		n, axis int
	}{{1, 1}, {2, 1}, {1, 2}} {
		t.Run(fmt.Sprintf("n%d_axis%d", cs.n, cs.axis), func(t *testing.T) {
			r := rand.New(rand.NewSource(46))
			m, g := newModel(13)
			x := must(g.AddInput("x", nil))
			feed, _ := f16Tensor(t, "x", canonical.Float, []int{cs.n, 5, 7, 6}, r)
			var branches []*canonical.Value
			for i, k := range []int{1, 3} {
				mo := 4
				if cs.axis == 1 {
					mo += i // the branches differ along the Concat axis only
				}
				wt, _ := f16Tensor(t, fmt.Sprintf("w%d", i), canonical.Float, []int{mo, 5, k, k}, r)
				w := must(g.AddInitializer(wt))
				pad := int64(k / 2)
				conv, err := g.AddNode(fmt.Sprintf("conv%d", i), "", "Conv", []*canonical.Value{x, w}, []string{fmt.Sprintf("c%d", i)},
					canonical.IntsAttr("pads", pad, pad, pad, pad))
				if err != nil {
					t.Fatal(err)
				}
				relu, err := g.AddNode(fmt.Sprintf("relu%d", i), "", "Relu", conv.Outputs, []string{fmt.Sprintf("r%d", i)})
				if err != nil {
					t.Fatal(err)
				}
				branches = append(branches, relu.Outputs[0])
			}
			cat, err := g.AddNode("cat", "", "Concat", branches, []string{"y"}, canonical.IntAttr("axis", int64(cs.axis)))
			if err != nil {
				t.Fatal(err)
			}
			g.Outputs = cat.Outputs
			var got [3][]float32
			for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				got[k] = runRepeatable(t, ex, opts, feed, 5)
				if k > 0 && !hasConcatStep(ex) {
					t.Fatalf("%+v: no concatStep in the plan", opts)
				}
				ex.Close()
			}
			for k := 1; k < 3; k++ {
				for i, v := range got[0] {
					if math.Float32bits(got[k][i]) != math.Float32bits(v) {
						t.Fatalf("y[%d] = %v fused (%d), unfused %v", i, got[k][i], k, v)
					}
				}
			}
		})
	}
}

// hasConcatStep reports whether a plan of e holds a concatStep that ran
// (learned its output size).
func hasConcatStep(e *Executor) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.plans {
		for _, st := range p.steps {
			if c, ok := st.(*concatStep); ok && c.size.Load() > 0 {
				return true
			}
		}
	}
	return false
}
