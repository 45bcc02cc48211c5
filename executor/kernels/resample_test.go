package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDup2: every length 0–70 (the SIMD blocks of 8 and the Go tail),
// NaN payloads and −0 kept bit for bit, nothing written past 2·len(src).
func TestDup2(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 70; n++ {
		src := randSlice(r, n)
		if n > 3 {
			src[1] = math.Float32frombits(0x7fc00123)
			src[2] = float32(math.Copysign(0, -1))
		}
		dst := make([]float32, 2*n+1)
		dst[2*n] = 42
		Dup2(dst, src)
		for i, v := range src {
			for _, g := range dst[2*i : 2*i+2] {
				if math.Float32bits(g) != math.Float32bits(v) {
					t.Fatalf("n %d: dst[%d] = %#x, want %#x", n, 2*i, math.Float32bits(g), math.Float32bits(v))
				}
			}
		}
		if dst[2*n] != 42 {
			t.Fatalf("n %d: wrote past 2n", n)
		}
	}
}

// TestLerpRowsAndLerp2x: LerpRows and Lerp2x against their Go expressions
// bit for bit, lengths 0–40 (the SIMD blocks and the tail), weights of
// either sign (and the 0.25/0.75 of a half-pixel 2× up-sampling), inputs
// with ±0, ±Inf and NaN.
func TestLerpRowsAndLerp2x(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for n := 0; n <= 40; n++ {
		for _, ws := range [][4]float64{{0.25, 0.75, 0.75, 0.25}, {r.Float64()*3 - 1, r.Float64()*3 - 1, r.Float64()*3 - 1, r.Float64()*3 - 1}} {
			r0, r1 := randSlice(r, n), randSlice(r, n)
			for _, s := range [][]float32{r0, r1} {
				for i := range s {
					if r.IntN(6) == 0 {
						s[i] = special[r.IntN(len(special))]
					}
				}
			}
			row := make([]float64, n)
			LerpRows(row, r0, r1, ws[0], ws[1])
			for i := range row {
				w := ws[0]*float64(r0[i]) + ws[1]*float64(r1[i])
				if math.Float64bits(row[i]) != math.Float64bits(w) && !(w != w && row[i] != row[i]) {
					t.Fatalf("LerpRows n %d: [%d] = %v, want %v", n, i, row[i], w)
				}
			}
			src := make([]float64, n+2)
			for i := range src {
				src[i] = r.Float64()*8 - 4
			}
			y := make([]float32, 2*n+1)
			y[2*n] = 42
			Lerp2x(y[:2*n], src, &ws)
			for j := 0; j < n; j++ {
				e := float32(ws[0]*src[j] + ws[1]*src[j+1])
				o := float32(ws[2]*src[j+1] + ws[3]*src[j+2])
				if math.Float32bits(y[2*j]) != math.Float32bits(e) || math.Float32bits(y[2*j+1]) != math.Float32bits(o) {
					t.Fatalf("Lerp2x n %d: pair %d = %v %v, want %v %v", n, j, y[2*j], y[2*j+1], e, o)
				}
			}
			if y[2*n] != 42 {
				t.Fatalf("Lerp2x n %d: wrote past 2n", n)
			}
		}
	}
}
