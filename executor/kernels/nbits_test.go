package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMulNBits: a · dequant(B) against a float64 reference that
// unpacks every value on its own, for 2-, 4- and 8-bit blocks, a padded
// last block, N over and under a chunk, default and given zero points, on
// 1 and 2 threads.
func TestMatMulNBits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct{ m, k, n, bits, block int }{
		{1, 40, 5, 4, 16}, {3, 64, 130, 4, 32}, {2, 512, 300, 4, 128}, {1, 96, 33, 4, 32}, {2, 100, 257, 8, 32}, {1, 33, 70, 2, 16}, {6, 256, 128, 4, 64},
	} {
		blocks := (c.k + c.block - 1) / c.block
		blob := c.block * c.bits / 8
		b := make([]byte, c.n*blocks*blob)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		scales := randSlice(r, c.n*blocks)
		zeros := make([]float32, c.n*blocks)
		for i := range zeros {
			zeros[i] = float32(r.IntN(1 << c.bits))
		}
		a := randSlice(r, c.m*c.k)
		for _, withZero := range []bool{false, true} {
			p := NBits{K: c.k, N: c.n, Bits: c.bits, Block: c.block, B: b, Scales: scales}
			if withZero {
				p.Zero = func(n, kb int) float32 { return zeros[n*blocks+kb] }
			}
			want := make([]float64, c.m*c.n)
			for n := 0; n < c.n; n++ {
				for k := 0; k < c.k; k++ {
					kb, i := k/c.block, k%c.block
					bit := i * c.bits
					q := int(b[(n*blocks+kb)*blob+bit/8]>>(bit%8)) & (1<<c.bits - 1)
					z := float64(int(1) << (c.bits - 1))
					if withZero {
						z = float64(zeros[n*blocks+kb])
					}
					wv := (float64(q) - z) * float64(scales[n*blocks+kb])
					for m := 0; m < c.m; m++ {
						want[m*c.n+n] += float64(a[m*c.k+k]) * wv
					}
				}
			}
			for _, threads := range []int{1, 2} {
				x := NewContext(threads)
				y := make([]float32, c.m*c.n)
				for i := range y {
					y[i] = float32(math.NaN()) // every element must be written
				}
				if err := x.MatMulNBits(p, a, c.m, y); err != nil {
					t.Fatal(err)
				}
				x.Close()
				for i := range y {
					if d := math.Abs(float64(y[i]) - want[i]); !(d <= 1e-4*(1+math.Abs(want[i]))) {
						t.Fatalf("%+v zero %v threads %d: y[%d] = %v, want %v", c, withZero, threads, i, y[i], want[i])
					}
				}
			}
		}
	}
	// The 4-bit path's group sums: the Go loop and the AVX2 kernel agree.
	b := make([]byte, 16*5)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	av, g1, g2 := randSlice(r, 32*5), make([]float32, 5), make([]float32, 5)
	int4Dot(5, b, av, g1)
	int4DotGeneric(5, b, av, g2)
	for i := range g1 {
		if math.Abs(float64(g1[i]-g2[i])) > 1e-4*(1+math.Abs(float64(g2[i]))) {
			t.Fatalf("group %d: %v, Go %v", i, g1[i], g2[i])
		}
	}
	if err := NewContext(1).MatMulNBits(NBits{K: 8, N: 2, Bits: 4, Block: 8, B: make([]byte, 3), Scales: make([]float32, 2)}, make([]float32, 8), 1, make([]float32, 2)); err == nil {
		t.Fatal("short B accepted")
	}
}

func BenchmarkMatMulNBitsGEMV(b *testing.B) {
	const k, n, block = 2048, 2048, 32
	blocks := k / block
	p := NBits{K: k, N: n, Bits: 4, Block: block, B: make([]byte, n*blocks*block/2), Scales: make([]float32, n*blocks)}
	for i := range p.Scales {
		p.Scales[i] = 0.01
	}
	a, y := make([]float32, k), make([]float32, n)
	x := NewContext(1)
	defer x.Close()
	b.SetBytes(int64(len(p.B)))
	for i := 0; i < b.N; i++ {
		if err := x.MatMulNBits(p, a, 1, y); err != nil {
			b.Fatal(err)
		}
	}
}
