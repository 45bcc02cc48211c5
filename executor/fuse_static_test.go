package executor

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestFuseAcrossConstants: torch exports ReLU6 at opset 11 and later as
// Clip(x, min, max) with both bounds Constant nodes placed between the
// Conv and the Clip (mobilenet_v2), so the plan holds two staticSteps
// between them. fuseSteps still chains Conv+Clip (the Constants' steps go
// before the fused step) and Conv+Clip+Add with a Constant before the
// Add too; outputs over a build and two replays on 1 and 2 threads are
// bit-identical to the unfused plan's, and the clipped values lie in
// [0, 0.25] with some at each bound.
func TestFuseAcrossConstants(t *testing.T) {
	for _, residual := range []bool{false, true} {
		t.Run(fmt.Sprintf("residual_%v", residual), func(t *testing.T) {
			r := rand.New(rand.NewSource(42))
			m, g := newModel(13)
			in := must(g.AddInput("in", nil))
			node := nodeAdder(t, g)
			constant := func(v ...float32) *canonical.Value {
				dims := []int64{}
				if len(v) > 1 {
					dims = []int64{1, 7, 23, 19}
				}
				return node("Constant", nil, canonical.TensorAttr("value", f32Tensor("c", dims, v...)))
			}
			feed, _ := f16Tensor(t, "in", canonical.Float, []int{1, 5, 23, 19}, r)
			wt, _ := f16Tensor(t, "w", canonical.Float, []int{7, 5, 3, 3}, r)
			bt, _ := f16Tensor(t, "b", canonical.Float, []int{7}, r)
			x := node("Conv", []*canonical.Value{in, must(g.AddInitializer(wt)), must(g.AddInitializer(bt))}, canonical.IntsAttr("pads", 1, 1, 1, 1))
			lo, hi := constant(0), constant(0.25)
			y := node("Clip", []*canonical.Value{x, lo, hi})
			want := "Conv+Clip"
			if residual {
				res := make([]float32, 7*23*19)
				for i := range res {
					res[i] = float32(r.Float64())
				}
				y = node("Add", []*canonical.Value{y, constant(res...)})
				want = "Conv+Clip+Add"
			}
			g.Outputs = []*canonical.Value{y}
			var got [3][]uint32
			var vals []float32
			for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}} {
				ex, outs := runPlan(t, m, opts, []*canonical.Tensor{feed}, 3)
				for _, v := range outs[0] {
					got[k] = append(got[k], math.Float32bits(v))
				}
				if k == 0 {
					vals = outs[0]
				}
				chains, _ := planChains(ex)
				if k > 0 && !slices.Equal(chains, []string{want}) {
					t.Fatalf("%+v: chains %v, want %s", opts, chains, want)
				}
				ex.Close()
			}
			for k := 1; k < 3; k++ {
				if !slices.Equal(got[k], got[0]) {
					t.Fatalf("outputs fused (%d) differ from unfused", k)
				}
			}
			if !residual {
				atLo, atHi := 0, 0
				for _, v := range vals {
					if v < 0 || v > 0.25 {
						t.Fatalf("Clip output %g outside [0, 0.25]", v)
					}
					atLo += b2i(v == 0)
					atHi += b2i(v == 0.25)
				}
				if atLo == 0 || atHi == 0 {
					t.Fatalf("%d values at 0, %d at 0.25: the bounds were not applied", atLo, atHi)
				}
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
