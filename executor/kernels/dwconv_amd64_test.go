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
// 16-column head and the 8 after it), random taps, strides and pitches.
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
		bias := float32(r.NormFloat64())
		a := make([]float32, (rows-1)*ldy+n)
		b := make([]float32, len(a))
		g := make([]float32, len(a))
		dwRowsSIMD512(rows, n, x, ss, offs, w, bias, a, ldy)
		dwRowsSIMD(rows, n, x, ss, offs, w, bias, b, ldy)
		dwRowsGo(rows, n, x, ss, offs, w, bias, g, ldy)
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				t.Fatalf("rows %d n %d taps %d: y[%d] = %g (AVX-512), %g (AVX2)", rows, n, taps, j, a[j], b[j])
			}
			if math.Abs(float64(a[j]-g[j])) > 1e-5*float64(taps)+1e-5 {
				t.Fatalf("rows %d n %d taps %d: y[%d] = %g, Go %g", rows, n, taps, j, a[j], g[j])
			}
		}
	}
}
