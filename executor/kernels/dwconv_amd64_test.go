package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestDwRowsAVX512Bits checks the AVX-512 depthwise rows against the
// AVX2 ones bit for bit, and both against Go's, on random shapes: rows
// 1–9 (the four-row loop and the rows after it), 1–13 blocks of 8 (the
// 16-column head and the 8 after it), random taps, strides and pitches,
// no clamp (±Inf), Relu's (0, +Inf) and a Clip's, a few NaN inputs.
func TestDwRowsAVX512Bits(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512F")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for it := 0; it < 300; it++ {
		rows := 1 + r.IntN(9)
		n := 8 * (1 + r.IntN(13))
		taps := 1 + r.IntN(25)
		offs := make([]int, taps)
		for i := range offs {
			offs[i] = r.IntN(40)
		}
		ss := n + r.IntN(30)
		ldy := n + r.IntN(5)
		w := randSlice(r, taps)
		x := randSlice(r, (rows-1)*ss+n+40)
		if it%3 == 0 {
			x[r.IntN(len(x))] = float32(math.NaN())
		}
		bias := float32(r.NormFloat64())
		lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
		switch it % 4 {
		case 1:
			lo = 0
		case 2:
			lo, hi = -0.5, 0.5
		}
		a := make([]float32, (rows-1)*ldy+n)
		b := make([]float32, len(a))
		g := make([]float32, len(a))
		dwRowsSIMD512(rows, n, x, ss, offs, w, bias, lo, hi, a, ldy)
		dwRowsSIMD(rows, n, x, ss, offs, w, bias, lo, hi, b, ldy)
		dwRowsGo(rows, n, x, ss, offs, w, bias, lo, hi, g, ldy)
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				t.Fatalf("rows %d n %d taps %d: y[%d] = %g (AVX-512), %g (AVX2)", rows, n, taps, j, a[j], b[j])
			}
			if a[j] != a[j] || g[j] != g[j] {
				if a[j] == a[j] || g[j] == g[j] {
					t.Fatalf("rows %d n %d taps %d: y[%d] = %g, Go %g", rows, n, taps, j, a[j], g[j])
				}
				continue
			}
			if a[j] < lo || a[j] > hi {
				t.Fatalf("rows %d n %d taps %d: y[%d] = %g outside [%g, %g]", rows, n, taps, j, a[j], lo, hi)
			}
			if math.Abs(float64(a[j]-g[j])) > 1e-5*float64(taps)+1e-5 {
				t.Fatalf("rows %d n %d taps %d: y[%d] = %g, Go %g", rows, n, taps, j, a[j], g[j])
			}
		}
	}
}

// TestDwFillRows checks the one-call plane fill (AVX2 row copies and
// column splits, masked tails) against fill's row-by-row Go copies on
// random geometries: stride 1 and 2, widths 1–40, pads 0–3, NaN
// guards around the plane.
func TestDwFillRows(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("no AVX2")
	}
	simd := dwFillRows
	defer func() { dwFillRows = simd }()
	r := rand.New(rand.NewPCG(19, 20))
	for it := 0; it < 500; it++ {
		s := 1 + r.IntN(2)
		p := Conv2D{N: 1, C: 1, M: 1, H: 1 + r.IntN(20), W: 1 + r.IntN(40), KH: 3, KW: 3, SH: s, SW: s, DH: 1, DW: 1,
			PT: r.IntN(4), PL: r.IntN(4), PB: r.IntN(4), PR: r.IntN(4), Groups: 1}
		if oh, ow := p.Out(); oh < 1 || ow < 1 {
			continue
		}
		g := newDwGeom(&p)
		xc := randSlice(r, p.H*p.W)
		got := make([]float32, g.plane+16)
		want := make([]float32, len(got))
		for i := range got {
			got[i] = float32(math.NaN())
			want[i] = got[i]
		}
		dwFillRows = simd
		g.fill(&p, xc, got[8:8+g.plane])
		dwFillRows = func(int, int, int, []float32, []float32, int, int, int) bool { return false }
		g.fill(&p, xc, want[8:8+g.plane])
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: pp[%d] = %g, want %g", p, i-8, got[i], want[i])
			}
		}
	}
}

// TestSigmoidAVX512Bits checks the 16-lane sigmoid and SiLU against the
// AVX2 ones bit for bit (NaNs included) on a sweep, the exponential's
// bounds' neighbours, ±Inf, NaN and −0, every length 0–50.
func TestSigmoidAVX512Bits(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512F")
	}
	xs := append(mathInputs(-100, 100), mathInputs(-30, 30)...)
	for _, v := range []float32{sigExpLo, -sigExpLo, sigExpHi, -sigExpHi, 0, float32(math.Inf(1)), float32(math.NaN())} {
		for range 20 {
			xs = append(xs, v, -v)
			v = math.Nextafter32(v, float32(math.Inf(-1)))
		}
	}
	for _, silu := range []bool{false, true} {
		a, b := make([]float32, len(xs)), make([]float32, len(xs))
		sigmoidSIMD512(xs, a, silu)
		sigmoidSIMD(xs, b, silu)
		for n := 0; n <= 50; n++ {
			sigmoidSIMD512(xs[7:7+n], a[7:7+n], silu)
		}
		for i := range xs {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("silu %v: f(%g) = %g (AVX-512), %g (AVX2)", silu, xs[i], a[i], b[i])
			}
		}
	}
}
