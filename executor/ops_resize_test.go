package executor

import (
	"math/rand"
	"testing"
)

// randTaps makes on taps of n each into an axis of in elements: indices
// clamped as Resize clamps them, weights of either sign (cubic), or one
// tap of weight 1 (nearest, each input repeated when up-sampling).
func randTaps(r *rand.Rand, in, on, n int) []taps {
	tp := make([]taps, on)
	for o := range tp {
		if n == 1 {
			tp[o] = taps{idx: []int{o * in / on}, w: []float64{1}}
			continue
		}
		base := o*in/on - n/2 + 1
		for k := 0; k < n; k++ {
			tp[o].idx = append(tp[o].idx, min(max(base+k, 0), in-1))
			tp[o].w = append(tp[o].w, r.Float64()*2-0.5)
		}
	}
	return tp
}

// TestResizePlanesF32 checks the float32 plane kernel against a naive
// per-element sum, in the generic path's order (rows first, float64):
// bit-identical, for nearest, linear and cubic taps, each axis resized or
// not, split into plane ranges as the threads split it.
func TestResizePlanesF32(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	type axis struct{ in, on, n int }
	cases := []struct{ h, w axis }{
		{axis{7, 14, 1}, axis{5, 10, 1}}, // nearest ×2
		{axis{3, 6, 1}, axis{19, 38, 1}}, // nearest ×2, SIMD blocks and a tail (kernels.Dup2)
		{axis{7, 14, 2}, axis{5, 10, 2}}, // linear ×2
		{axis{9, 4, 4}, axis{6, 13, 4}},  // cubic, down and up
		{axis{6, 6, 0}, axis{5, 11, 2}},  // columns only
		{axis{6, 12, 1}, axis{5, 5, 0}},  // rows only, nearest
		{axis{3, 8, 2}, axis{4, 4, 0}},   // rows only, linear
		{axis{1, 3, 2}, axis{1, 2, 1}},   // one-element axes
	}
	for ci, tc := range cases {
		planes := 3
		var ty, tx []taps
		if tc.h.n > 0 {
			ty = randTaps(r, tc.h.in, tc.h.on, tc.h.n)
		}
		if tc.w.n > 0 {
			tx = randTaps(r, tc.w.in, tc.w.on, tc.w.n)
		}
		ih, iw, oh, ow := tc.h.in, tc.w.in, tc.h.on, tc.w.on
		x := make([]float32, planes*ih*iw)
		for i := range x {
			x[i] = r.Float32()*4 - 2
		}
		one := func(tp []taps, o int) taps {
			if tp == nil {
				return taps{idx: []int{o}, w: []float64{1}}
			}
			return tp[o]
		}
		want := make([]float32, planes*oh*ow)
		for p := 0; p < planes; p++ {
			for oy := 0; oy < oh; oy++ {
				for ox := 0; ox < ow; ox++ {
					a, b := one(ty, oy), one(tx, ox)
					s := 0.0
					for i, ix := range b.idx {
						col := 0.0
						for j, iy := range a.idx {
							col += a.w[j] * float64(x[(p*ih+iy)*iw+ix])
						}
						s += b.w[i] * col
					}
					want[(p*oh+oy)*ow+ox] = float32(s)
				}
			}
		}
		got := make([]float32, len(want))
		resizePlanesF32(x, ih, iw, ty, tx, got, oh, ow, 0, 1)
		resizePlanesF32(x, ih, iw, ty, tx, got, oh, ow, 1, planes)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("case %d: y[%d] = %v, want %v", ci, i, got[i], want[i])
			}
		}
	}
}
