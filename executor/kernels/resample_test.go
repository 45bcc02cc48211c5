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
