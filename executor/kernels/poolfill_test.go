package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxPoolWritesEveryElement: MaxPool2D writes every element of y
// (the executor takes its output buffer unzeroed): y filled with NaN
// beforehand, random shapes (short rows, long rows, strides 1–3,
// dilations, pads up to the window, windows wholly in the padding),
// 1 and 2 threads, against the plain window maximum.
func TestMaxPoolWritesEveryElement(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	checked := 0
	for it := 0; it < 300; it++ {
		kh, kw := 1+r.IntN(4), 1+r.IntN(4)
		s, d := 1+r.IntN(3), 1+r.IntN(2)
		h, w := 1+r.IntN(20), 1+r.IntN(70)
		pt, pl, pb, pr := r.IntN(kh+1), r.IntN(kw+1), r.IntN(kh+1), r.IntN(kw+1)
		oh := (h+pt+pb-(kh-1)*d-1)/s + 1
		ow := (w+pl+pr-(kw-1)*d-1)/s + 1
		if oh < 1 || ow < 1 {
			continue
		}
		p := Pool2D{N: 1 + r.IntN(2), C: 1 + r.IntN(5), H: h, W: w, KH: kh, KW: kw, SH: s, SW: s, DH: d, DW: d, PT: pt, PL: pl, OH: oh, OW: ow}
		x := make([]float32, p.N*p.C*p.H*p.W)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for _, th := range []int{1, 2} {
			y := make([]float32, p.N*p.C*p.OH*p.OW)
			for i := range y {
				y[i] = float32(math.NaN())
			}
			x2 := NewContext(th)
			err := x2.MaxPool2D(p, x, y)
			x2.Close()
			if err != nil {
				continue // a shape the kernel refuses
			}
			checked++
			for i, w := range naiveMaxPool(p, x) {
				if got := y[i]; got != float32(w) {
					t.Fatalf("%+v, %d threads: y[%d] = %v, want %v", p, th, i, got, w)
				}
			}
		}
	}
	if checked < 300 {
		t.Fatalf("only %d pools checked", checked)
	}
}
