package kernels

import (
	"math"
	"math/rand"
	"testing"
)

// TestAddVecMat checks g += h·M against a float64 sum for widths that use
// the wide blocks, the narrow blocks and the axpy tail, and that each
// element is the same chain of multiply-adds as one axpy per row of M.
func TestAddVecMat(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, c := range []struct{ rows, k, n int }{
		{1, 128, 512}, {2, 64, 256}, {1, 33, 200}, {3, 7, 19}, {1, 1, 5}, {1, 20, 144}, {2, 96, 384},
	} {
		h := make([]float32, c.rows*c.k)
		m := make([]float32, c.k*c.n)
		g := make([]float32, c.rows*c.n)
		for _, s := range [][]float32{h, m, g} {
			for i := range s {
				s[i] = float32(rng.NormFloat64())
			}
		}
		want := make([]float64, len(g))
		chain := append([]float32(nil), g...)
		for r := 0; r < c.rows; r++ {
			for j := 0; j < c.n; j++ {
				s := float64(g[r*c.n+j])
				for i := 0; i < c.k; i++ {
					s += float64(h[r*c.k+i]) * float64(m[i*c.n+j])
				}
				want[r*c.n+j] = s
			}
			for i := 0; i < c.k; i++ {
				axpy(h[r*c.k+i], m[i*c.n:(i+1)*c.n], chain[r*c.n:(r+1)*c.n])
			}
		}
		AddVecMat(h, m, g, c.k, c.n)
		for i := range g {
			if d := math.Abs(float64(g[i]) - want[i]); d > 1e-4*(1+math.Abs(want[i])) {
				t.Fatalf("%+v: g[%d] = %v, want %v", c, i, g[i], want[i])
			}
			if g[i] != chain[i] {
				t.Fatalf("%+v: g[%d] = %v, the axpy chain gives %v", c, i, g[i], chain[i])
			}
		}
	}
}

func BenchmarkAddVecMat(b *testing.B) {
	const k, n = 128, 512
	h, m, g := make([]float32, k), make([]float32, k*n), make([]float32, n)
	for i := range m {
		m[i] = float32(i%13) * 0.01
	}
	for i := range h {
		h[i] = 0.5
	}
	b.Run("blocks", func(b *testing.B) {
		b.SetBytes(int64(4 * k * n))
		for i := 0; i < b.N; i++ {
			AddVecMat(h, m, g, k, n)
		}
	})
	b.Run("axpy", func(b *testing.B) { // one axpy per row of M (the kernel before)
		b.SetBytes(int64(4 * k * n))
		for i := 0; i < b.N; i++ {
			for r, v := range h {
				axpy(v, m[r*n:(r+1)*n], g)
			}
		}
	})
}
