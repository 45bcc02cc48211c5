package executor

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// expandDwSteps counts the expandDwSteps of e's plans and those whose
// expansion was deferred to the depthwise kernel on the last run.
func expandDwSteps(e *Executor) (pairs, deferred int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.plans {
		for _, st := range p.steps {
			if x, ok := st.(*expandDwStep); ok {
				pairs++
				if x.deferred.Load() {
					deferred++
				}
			}
		}
	}
	return pairs, deferred
}

// TestFuseExpandDepthwise builds a mobile net's inverted-residual block
// as torch exports it: a 1×1 expansion with its ReLU6 (Clip with
// Constant bounds), a depthwise 3×3 convolution with a Relu, a 1×1
// projection. The plan pairs the expansion and the depthwise step
// (fuseExpandDw) and the expansion runs inside the depthwise kernel
// (kernels.Conv2DAfter); the outputs over a build and two replays on 1–3
// threads are bit-identical to the unfused plan's. A batch of two is
// paired but not deferred (kernels.Defer takes one image), and an
// expansion that is also a graph output is not paired; both still give
// the unfused plan's bits.
func TestFuseExpandDepthwise(t *testing.T) {
	for _, c := range []struct {
		n, stride     int
		expandOut     bool
		pairs, deferd int
	}{
		{1, 1, false, 1, 1},
		{1, 2, false, 1, 1},
		{2, 1, false, 1, 0},
		{1, 1, true, 0, 0},
	} {
		t.Run(fmt.Sprintf("n%d_s%d_out%v", c.n, c.stride, c.expandOut), func(t *testing.T) {
			r := rand.New(rand.NewSource(7))
			m, g := newModel(13)
			in := must(g.AddInput("in", nil))
			node := nodeAdder(t, g)
			init := func(name string, shape ...int) *canonical.Value {
				tt, _ := f16Tensor(t, name, canonical.Float, shape, r)
				return must(g.AddInitializer(tt))
			}
			const cin, cexp, cout = 8, 40, 16
			feed, _ := f16Tensor(t, "in", canonical.Float, []int{c.n, cin, 20, 19}, r)
			e := node("Conv", []*canonical.Value{in, init("we", cexp, cin, 1, 1), init("be", cexp)})
			lo := node("Constant", nil, canonical.TensorAttr("value", f32Tensor("lo", []int64{}, 0)))
			hi := node("Constant", nil, canonical.TensorAttr("value", f32Tensor("hi", []int64{}, 6)))
			e6 := node("Clip", []*canonical.Value{e, lo, hi})
			d := node("Conv", []*canonical.Value{e6, init("wd", cexp, 1, 3, 3), init("bd", cexp)},
				canonical.IntAttr("group", cexp), canonical.IntsAttr("pads", 1, 1, 1, 1), canonical.IntsAttr("strides", int64(c.stride), int64(c.stride)))
			dr := node("Relu", []*canonical.Value{d})
			y := node("Conv", []*canonical.Value{dr, init("wp", cout, cexp, 1, 1), init("bp", cout)})
			g.Outputs = []*canonical.Value{y}
			if c.expandOut {
				g.Outputs = append(g.Outputs, e6)
			}
			var want [][]float32
			for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}, {Threads: 3}} {
				ex, outs := runPlan(t, m, opts, []*canonical.Tensor{feed}, 3)
				pairs, deferred := expandDwSteps(ex)
				ex.Close()
				if k == 0 {
					want = outs
					continue
				}
				if pairs != c.pairs || deferred != c.deferd {
					t.Fatalf("%+v: %d pairs, %d deferred; want %d, %d", opts, pairs, deferred, c.pairs, c.deferd)
				}
				for o := range outs {
					if !slices.EqualFunc(outs[o], want[o], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
						t.Fatalf("%+v: output %d differs from the unfused plan's", opts, o)
					}
				}
			}
			// Not all zero: the Relu and the clip leave values to compare.
			if slices.Max(want[0]) == slices.Min(want[0]) {
				t.Fatal("constant output")
			}
		})
	}
}
