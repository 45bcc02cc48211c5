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
			for pl0 := 0; pl0 < p.N*p.C; pl0++ {
				for oy := 0; oy < p.OH; oy++ {
					for ox := 0; ox < p.OW; ox++ {
						want := float32(math.Inf(-1))
						for ky := 0; ky < p.KH; ky++ {
							for kx := 0; kx < p.KW; kx++ {
								iy, ix := oy*p.SH-p.PT+ky*p.DH, ox*p.SW-p.PL+kx*p.DW
								if iy >= 0 && iy < p.H && ix >= 0 && ix < p.W {
									want = max(want, x[pl0*p.H*p.W+iy*p.W+ix])
								}
							}
						}
						if got := y[pl0*p.OH*p.OW+oy*p.OW+ox]; got != want {
							t.Fatalf("%+v, %d threads: y[%d,%d,%d] = %v, want %v", p, th, pl0, oy, ox, got, want)
						}
					}
				}
			}
		}
	}
	if checked < 300 {
		t.Fatalf("only %d pools checked", checked)
	}
}
