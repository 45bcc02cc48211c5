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

// halfPixel2x returns the taps of a linear ×2 up-sampling of in elements
// with half_pixel coordinates, as hostResize makes them: output 2i from
// i−1 and i (¼, ¾), 2i+1 from i and i+1 (¾, ¼), indices clamped.
func halfPixel2x(in int) []taps {
	tp := make([]taps, 2*in)
	for o := range tp {
		i := o / 2
		if o%2 == 0 {
			tp[o] = taps{idx: []int{max(i-1, 0), i}, w: []float64{0.25, 0.75}}
		} else {
			tp[o] = taps{idx: []int{i, min(i+1, in-1)}, w: []float64{0.75, 0.25}}
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
	if _, ok := doubled(pairTaps(halfPixel2x(21)), 21); !ok {
		t.Fatal("half-pixel ×2 taps not taken as doubled")
	}
	cases := []struct{ h, w axis }{
		{axis{7, 14, 1}, axis{5, 10, 1}}, // nearest ×2
		{axis{3, 6, 1}, axis{19, 38, 1}}, // nearest ×2, SIMD blocks and a tail (kernels.Dup2)
		{axis{7, 14, 2}, axis{5, 10, 2}}, // linear ×2
		{axis{9, 4, 4}, axis{6, 13, 4}},  // cubic, down and up
		{axis{6, 6, 0}, axis{5, 11, 2}},  // columns only
		{axis{6, 12, 1}, axis{5, 5, 0}},  // rows only, nearest
		{axis{3, 8, 2}, axis{4, 4, 0}},   // rows only, linear
		{axis{1, 3, 2}, axis{1, 2, 1}},   // one-element axes
		// Half-pixel linear ×2 (n 3: halfPixel2x's taps), rows and
		// columns: the columns through kernels.Lerp2x (SIMD blocks and a
		// tail), the rows through kernels.LerpRows.
		{axis{5, 10, 3}, axis{21, 42, 3}},
		{axis{3, 6, 3}, axis{3, 6, 3}},
	}
	for ci, tc := range cases {
		planes := 3
		var ty, tx []taps
		mk := func(a axis) []taps {
			switch a.n {
			case 0:
				return nil
			case 3:
				return halfPixel2x(a.in)
			}
			return randTaps(r, a.in, a.on, a.n)
		}
		ty, tx = mk(tc.h), mk(tc.w)
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
