package kernels

import (
	"math"
	"testing"
)

// TestMaxPoolWidePads: column and row pads as wide as the window or
// wider (ONNX Runtime refuses them; a model can still hold them) give
// an error or the reference's values, never a panic.
func TestMaxPoolWidePads(t *testing.T) {
	for _, c := range []struct{ h, w, kh, kw, pt, pl, pb, pr, s, d int }{
		{3, 4, 1, 2, 0, 2, 0, 0, 1, 1}, {3, 4, 1, 2, 0, 0, 0, 3, 1, 1}, {3, 4, 2, 2, 2, 0, 0, 0, 1, 1},
		{5, 6, 3, 3, 0, 3, 0, 4, 1, 1}, {2, 2, 1, 1, 0, 1, 0, 1, 1, 1}, {4, 3, 3, 1, 3, 0, 3, 0, 1, 1},
		{5, 9, 3, 3, 0, 4, 0, 5, 2, 1}, {5, 9, 3, 2, 1, 2, 1, 3, 1, 2}, {6, 20, 2, 3, 2, 3, 2, 3, 1, 1},
		{7, 30, 3, 3, 1, 1, 1, 1, 1, 1}, {7, 30, 3, 3, 0, 5, 0, 6, 2, 2},
	} {
		p := Pool2D{N: 1, C: 2, H: c.h, W: c.w, KH: c.kh, KW: c.kw, SH: c.s, SW: c.s, DH: c.d, DW: c.d, PT: c.pt, PL: c.pl,
			OH: (c.h+c.pt+c.pb-(c.kh-1)*c.d-1)/c.s + 1, OW: (c.w+c.pl+c.pr-(c.kw-1)*c.d-1)/c.s + 1}
		x := make([]float32, p.N*p.C*p.H*p.W)
		for i := range x {
			x[i] = float32(math.Sin(float64(i)))
		}
		y := make([]float32, p.N*p.C*p.OH*p.OW)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%+v: panic %v", c, r)
				}
			}()
			if err := NewContext(1).MaxPool2D(p, x, y); err != nil {
				return
			}
			for i, want := range windowMaxPool(p, x) {
				if got := y[i]; got != want {
					t.Errorf("%+v: y[%d] = %v, want %v", c, i, got, want)
					return
				}
			}
		}()
	}
}
