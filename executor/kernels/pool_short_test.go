package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestShortPoolRandom: MaxPool2D on short rows at column stride 1 (the
// plane-wide shortPool, rows' maxima in one run per window row when the
// row stride is 1) against the window-by-window loop with Go's max (the
// same values; any NaN for a NaN) and against shortPool's row-by-row
// loop as it was (shortPlaneRows: the same bits, but for NaN payloads
// and signs and the sign of a zero where a window holds +0 and −0: vmax
// takes those as VMAXPS does in its SIMD head and as Go's max in its
// tail, and a run of rows puts other elements in the tail than a row at
// a time), on random geometries: window sizes 1–4,
// dilations 1–3, row pads 0–4 (output rows whose window rows are all
// padding too), column pads under the window, row strides 1 and 2, values with NaN, ±0 and ±Inf;
// 1 and 3 threads.
func TestShortPoolRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1))}
	short := 0
	for it := 0; it < 400; it++ {
		p := Pool2D{N: 1 + r.IntN(2), C: 1 + r.IntN(4), H: 1 + r.IntN(16), W: 1 + r.IntN(20),
			KH: 1 + r.IntN(4), KW: 1 + r.IntN(4), SH: 1 + r.IntN(2), SW: 1, DH: 1 + r.IntN(3), DW: 1 + r.IntN(3),
			PT: r.IntN(5)}
		// Column pads under the window (ONNX Runtime's rule); row pads
		// up to 4 whatever the window.
		p.PL = r.IntN(p.KW)
		pb, pr := r.IntN(5), r.IntN(p.KW)
		ekh, ekw := (p.KH-1)*p.DH+1, (p.KW-1)*p.DW+1
		if p.H+p.PT+pb < ekh || p.W+p.PL+pr < ekw {
			continue
		}
		p.OH, p.OW = (p.H+p.PT+pb-ekh)/p.SH+1, p.W+p.PL+pr-ekw+1
		if interiorCols(&p) < smallRow {
			short++
		}
		x := randSlice(r, p.N*p.C*p.H*p.W)
		for i := range x {
			if r.IntN(8) == 0 {
				x[i] = special[r.IntN(len(special))]
			}
		}
		want := windowMaxPool(p, x)
		for _, th := range []int{1, 3} {
			y := make([]float32, len(want))
			for i := range y {
				y[i] = 42
			}
			if err := NewContext(th).MaxPool2D(p, x, y); err != nil {
				t.Fatal(err)
			}
			for i := range y {
				g, w := y[i], want[i]
				if g != w && !(g != g && w != w) {
					t.Fatalf("%+v, %d threads: y[%d] = %v, want %v", p, th, i, g, w)
				}
			}
			if interiorCols(&p) >= smallRow {
				continue
			}
			sp := newShortPool(&p)
			npix := p.OH * p.OW
			for pl := 0; pl < p.N*p.C; pl++ {
				ref := make([]float32, npix)
				shortPlaneRows(sp, x[pl*p.H*p.W:(pl+1)*p.H*p.W], ref)
				for i, w := range ref {
					g := y[pl*npix+i]
					if math.Float32bits(g) != math.Float32bits(w) && !(g == 0 && w == 0) && !(g != g && w != w) {
						t.Fatalf("%+v, %d threads: plane %d [%d] = %v (%#x), row-by-row %v (%#x)", p, th, pl, i, g, math.Float32bits(g), w, math.Float32bits(w))
					}
				}
			}
		}
	}
	if short < 100 {
		t.Fatalf("only %d geometries on short rows", short)
	}
}

// shortPlaneRows is shortPool.plane as it was before the rows' maxima
// were taken plane-wide (rowsMax): a copy and a vmax per output row and
// window row, a copy per output row.
func shortPlaneRows(sp *shortPool, xc, yc []float32) {
	p := sp.p
	ninf := float32(math.Inf(-1))
	w, n := p.W, sp.qhi-sp.qlo
	for o := 0; o < p.OH; o++ {
		v := sp.v[o*w : (o+1)*w]
		first := true
		for kh := 0; kh < p.KH; kh++ {
			ih := o*p.SH - p.PT + kh*p.DH
			if ih < 0 || ih >= p.H {
				continue
			}
			src := xc[ih*w : (ih+1)*w]
			if first {
				copy(v, src)
				first = false
			} else {
				vmax(v, src)
			}
		}
		sp.empty[o] = first
	}
	if n > 0 && p.OH > 0 {
		run := (p.OH-1)*w + n
		d := sp.t[sp.qlo : sp.qlo+run]
		for kw := 0; kw < p.KW; kw++ {
			off := kw*p.DW - p.PL
			src := sp.v[sp.qlo+off : sp.qlo+off+run]
			if kw == 0 {
				copy(d, src)
			} else {
				vmax(d, src)
			}
		}
	}
	for o := 0; o < p.OH; o++ {
		yr := yc[o*p.OW : (o+1)*p.OW]
		if sp.empty[o] {
			for q := range yr {
				yr[q] = ninf
			}
			continue
		}
		copy(yr[sp.qlo:sp.qhi], sp.t[o*w+sp.qlo:o*w+sp.qhi])
		v := sp.v[o*w : (o+1)*w]
		for q := 0; q < sp.qlo; q++ {
			yr[q] = maxEdge(p, v, q)
		}
		for q := sp.qhi; q < p.OW; q++ {
			yr[q] = maxEdge(p, v, q)
		}
	}
}

// windowMaxPool is MaxPool2D window by window with Go's max (NaN wins,
// as vmax; naiveMaxPool's math.Max gives +Inf for a window holding +Inf
// and NaN), padding cells left out, −Inf for a window all in padding.
func windowMaxPool(p Pool2D, x []float32) []float32 {
	want := make([]float32, p.N*p.C*p.OH*p.OW)
	for pl := 0; pl < p.N*p.C; pl++ {
		for o := 0; o < p.OH; o++ {
			for q := 0; q < p.OW; q++ {
				m := float32(math.Inf(-1))
				for kh := 0; kh < p.KH; kh++ {
					for kw := 0; kw < p.KW; kw++ {
						ih, iw := o*p.SH-p.PT+kh*p.DH, q*p.SW-p.PL+kw*p.DW
						if ih >= 0 && ih < p.H && iw >= 0 && iw < p.W {
							m = max(m, x[(pl*p.H+ih)*p.W+iw])
						}
					}
				}
				want[(pl*p.OH+o)*p.OW+q] = m
			}
		}
	}
	return want
}
