package executor

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestAttentionCore runs torch's nn.MultiheadAttention core as exported
// (Q, K, V of shape [S, H, D] transposed to heads, Q divided by √D, Q·Kᵀ,
// an optional additive causal mask (−Inf above the diagonal), Softmax,
// ·V, the heads transposed back) on odd and even sizes and head counts:
// the kernel plans on 1, 2 and 3 threads give the unfused kernel plan's
// bits (the folded Transposes and Div, the AVX-512 Softmax rows and
// packing where the CPU has them) and stay within float32 rounding of
// the plan without kernels.
func TestAttentionCore(t *testing.T) {
	for _, cs := range []struct {
		s, h, d int
		mask    bool
	}{
		{64, 8, 32, false}, {64, 8, 32, true}, {7, 3, 5, false}, {17, 2, 24, true},
		{40, 1, 16, true}, {9, 5, 8, false}, {48, 6, 12, true},
	} {
		t.Run(fmt.Sprintf("s%d_h%d_d%d_mask%v", cs.s, cs.h, cs.d, cs.mask), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(cs.s*131 + cs.h*7 + cs.d)))
			m, g := newModel(17)
			var feeds []*canonical.Tensor
			in := func(name string, shape []int) *canonical.Value {
				v := must(g.AddInput(name, nil))
				ct, _ := f16Tensor(t, name, canonical.Float, shape, r)
				feeds = append(feeds, ct)
				return v
			}
			tr := func(name string, x *canonical.Value, perm ...int64) *canonical.Value {
				return must(g.AddNode(name, "", "Transpose", []*canonical.Value{x}, []string{name + "_y"}, canonical.IntsAttr("perm", perm...))).Outputs[0]
			}
			op := func(name, typ string, ins ...*canonical.Value) *canonical.Value {
				return must(g.AddNode(name, "", typ, ins, []string{name + "_y"})).Outputs[0]
			}
			q, k, v := in("q", []int{cs.s, cs.h, cs.d}), in("k", []int{cs.s, cs.h, cs.d}), in("v", []int{cs.s, cs.h, cs.d})
			scale := must(g.AddNode("c", "", "Constant", nil, []string{"sqrt_d"}, canonical.TensorAttr("value", f32Tensor("sqrt_d", nil, float32(math.Sqrt(float64(cs.d))))))).Outputs[0]
			qs := op("div", "Div", tr("tq", q, 1, 0, 2), scale)
			scores := op("qk", "MatMul", qs, tr("tk", k, 1, 2, 0))
			if cs.mask {
				// Causal: −Inf above the diagonal, small values on and below it.
				mv := make([]float32, cs.s*cs.s)
				for i := range cs.s {
					for j := range cs.s {
						mv[i*cs.s+j] = float32(r.NormFloat64() * 0.1)
						if j > i {
							mv[i*cs.s+j] = float32(math.Inf(-1))
						}
					}
				}
				scores = op("mask", "Add", scores, must(g.AddInput("m", nil)))
				feeds = append(feeds, f32Tensor("m", []int64{int64(cs.s), int64(cs.s)}, mv...))
			}
			p := must(g.AddNode("softmax", "", "Softmax", []*canonical.Value{scores}, []string{"p"}, canonical.IntAttr("axis", -1))).Outputs[0]
			g.Outputs = []*canonical.Value{tr("to", op("pv", "MatMul", p, tr("tv", v, 1, 0, 2)), 1, 0, 2)}
			var got [5][]float32
			for i, opts := range []Options{{DisableKernels: true}, {Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}, {Threads: 3}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				for run := 0; run < 3; run++ { // build, then replays
					res, err := ex.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					got[i] = append([]float32{}, hostValues(t, res[0])...)
				}
				if i >= 2 && (hasHostStep(ex, "Transpose") || !hasHostStep(ex, "Div")) {
					t.Fatalf("%+v: a Transpose step is left (or the Div is gone)", opts)
				}
				ex.Close()
			}
			for i, v := range got[0] {
				if d := math.Abs(float64(got[1][i]) - float64(v)); d > 1e-5*(1+math.Abs(float64(v))) {
					t.Fatalf("value %d = %v, reference %v", i, got[1][i], v)
				}
			}
			for k := 2; k < 5; k++ {
				for i, v := range got[1] {
					if math.Float32bits(got[k][i]) != math.Float32bits(v) {
						t.Fatalf("value %d: %d threads fused %v, unfused %v", i, k-1, got[k][i], v)
					}
				}
			}
		})
	}
}
