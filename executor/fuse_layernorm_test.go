package executor

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestLayerNormDecomposed builds the nine-node LayerNormalization of
// pre-opset-17 exports on odd shapes and checks that the plan runs it as
// one step, bit-identical to the unfused plan on 1 and 2 threads and
// within float32 rounding of the reference path; and that a run whose
// intermediate value is read elsewhere (here: also a graph output) or
// whose ReduceMean is over another axis stays unfused, with the same
// values.
func TestLayerNormDecomposed(t *testing.T) {
	cases := []struct {
		shape        []int
		axes         int64
		exposeSub    bool
		wantFused    bool
		eps, gammaSh int
	}{
		{[]int{1, 16, 64}, -1, false, true, 5, 64},
		{[]int{3, 5, 17}, -1, false, true, 3, 17},
		{[]int{2, 301, 300}, -1, false, true, 5, 300}, // split over 2 threads
		{[]int{3, 5, 17}, -1, true, false, 5, 17},
		{[]int{3, 5, 5}, 1, false, false, 5, 5},
	}
	for ci, cs := range cases {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			r := rand.New(rand.NewSource(46))
			m, g := newModel(13)
			x := must(g.AddInput("x", nil))
			feed, _ := f16Tensor(t, "x", canonical.Float, cs.shape, r)
			scalar := func(name string, v float64) *canonical.Value {
				return must(g.AddInitializer(must(fromF64(canonical.Float, []int{}, []float64{v}).toCanonical(name))))
			}
			gt, _ := f16Tensor(t, "gamma", canonical.Float, []int{cs.gammaSh}, r)
			bt, _ := f16Tensor(t, "beta", canonical.Float, []int{cs.gammaSh}, r)
			gamma, beta := must(g.AddInitializer(gt)), must(g.AddInitializer(bt))
			two, eps := scalar("two", 2), scalar("eps", math.Pow(10, -float64(cs.eps)))
			node := nodeAdder(t, g)
			mean := node("ReduceMean", []*canonical.Value{x}, canonical.IntsAttr("axes", cs.axes))
			d := node("Sub", []*canonical.Value{x, mean})
			p := node("Pow", []*canonical.Value{d, two})
			v := node("ReduceMean", []*canonical.Value{p}, canonical.IntsAttr("axes", cs.axes))
			s := node("Sqrt", []*canonical.Value{node("Add", []*canonical.Value{v, eps})})
			y := node("Add", []*canonical.Value{node("Mul", []*canonical.Value{node("Div", []*canonical.Value{d, s}), gamma}), beta})
			g.Outputs = []*canonical.Value{y}
			if cs.exposeSub {
				g.Outputs = append(g.Outputs, d)
			}
			var got [4][]float32
			for k, opts := range []Options{{DisableKernels: true}, {Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}} {
				ex, outs := runPlan(t, m, opts, []*canonical.Tensor{feed}, 3)
				got[k] = outs[0]
				if k >= 2 {
					if has := hasHostStep(ex, "LayerNormalization (decomposed)"); has != cs.wantFused {
						t.Fatalf("%+v: fused step in the plan: %v, want %v", opts, has, cs.wantFused)
					}
				}
				ex.Close()
			}
			for i, v := range got[0] {
				if d := math.Abs(float64(got[1][i]) - float64(v)); d > 1e-5*(1+math.Abs(float64(v))) {
					t.Fatalf("y[%d] = %v, reference %v", i, got[1][i], v)
				}
			}
			for k := 2; k < 4; k++ {
				for i, v := range got[1] {
					if math.Float32bits(got[k][i]) != math.Float32bits(v) {
						t.Fatalf("y[%d]: fused (%d) %v, unfused %v", i, k, got[k][i], v)
					}
				}
			}
		})
	}
}
