package kernels

import (
	"math"
	"math/rand"
	"testing"
)

// TestInterleave2 checks Interleave2 against its definition, bit for bit
// (a −0 and a NaN payload among the values), on lengths around the SIMD
// blocks of 8, with the values past 2·len(a) left alone and a short
// output refused.
func TestInterleave2(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 58, 1003} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = r.Float32()-0.5, r.Float32()-0.5
		}
		if n > 2 {
			a[1] = float32(math.Copysign(0, -1))
			b[2] = math.Float32frombits(0x7fc01234)
		}
		y := make([]float32, 2*n+3)
		for i := range y {
			y[i] = 42
		}
		if err := Interleave2(a, b, y); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if math.Float32bits(y[2*i]) != math.Float32bits(a[i]) || math.Float32bits(y[2*i+1]) != math.Float32bits(b[i]) {
				t.Fatalf("n %d: y[%d], y[%d] = %v, %v; want %v, %v", n, 2*i, 2*i+1, y[2*i], y[2*i+1], a[i], b[i])
			}
		}
		for i := 2 * n; i < len(y); i++ {
			if y[i] != 42 {
				t.Fatalf("n %d: y[%d] = %v written past the end", n, i, y[i])
			}
		}
		if n > 0 {
			if err := Interleave2(a, b, y[:2*n-1]); err == nil {
				t.Fatalf("n %d: a short output accepted", n)
			}
		}
	}
}
