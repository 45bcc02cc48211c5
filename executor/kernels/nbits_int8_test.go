package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMulNBitsInt8 checks MatMulNBits with Int8A (accuracy_level 4):
// against the formula ONNX Runtime computes — A quantized per block
// (amax/127, round half to even), scale_a·scale_b·Σ q_a·(q_b − zero) —
// in float64 (within 1e-6 of Σ|scale_a·scale_b·q_a·(q_b − zero)|), and
// bit for bit against nbitsInt8Go column by column (the kernel's lanes
// and order in Go) on 1, 2 and 3 threads: blocks of 16 to 256, default,
// packed and given zero points (and on 2 threads as floats kept by the
// caller, NBits.ZeroF), 1 to 8 rows, N under 4 and not a multiple of 4,
// 2-, 4- and 8-bit B, K not a multiple of the kernels' chunk (the Go loop)
// and not of the block (a last block padded); shapes the int8 path does
// not take, and an A holding NaN or ±Inf, give the float32 product.
func TestMatMulNBitsInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct {
		m, k, n, bits, block int
		zp                   string
	}{
		{1, 128, 4, 4, 32, ""}, {1, 256, 37, 4, 32, "packed"}, {3, 512, 20, 4, 128, "packed"}, {2, 512, 9, 4, 256, "func"},
		{8, 256, 12, 4, 64, ""}, {1, 1024, 3, 4, 32, "packed"}, {2, 384, 16, 4, 128, ""}, {3, 256, 10, 4, 16, "packed"},
		{1, 64, 4, 8, 32, ""}, {3, 256, 21, 8, 32, "packed"}, {2, 512, 8, 8, 64, "packed"}, {5, 384, 12, 8, 128, ""},
		{2, 192, 6, 8, 16, "func"}, {4, 512, 7, 8, 256, "packed"},
		// K not a multiple of the chunk (128 values, 64 for 8 bits).
		{2, 96, 7, 4, 32, "packed"}, {1, 64, 5, 4, 16, ""}, {3, 320, 9, 4, 64, "func"}, {3, 48, 6, 8, 16, "packed"}, {2, 96, 4, 8, 32, ""},
		// A last block that K does not fill (A padded by zeros).
		{2, 112, 6, 4, 32, "packed"}, {1, 200, 5, 8, 64, ""}, {3, 40, 9, 4, 16, "func"}, {2, 1000, 8, 4, 128, "packed"},
		// 2-bit B (the Go loop).
		{2, 256, 7, 2, 32, "packed"}, {1, 96, 5, 2, 32, "func"}, {3, 512, 9, 2, 128, ""}, {2, 200, 4, 2, 64, "packed"},
	} {
		name := fmt.Sprintf("m%d_k%d_n%d_bits%d_block%d_%s", c.m, c.k, c.n, c.bits, c.block, c.zp)
		blocks := (c.k + c.block - 1) / c.block
		per := 8 / c.bits
		rowBytes := (blocks + per - 1) / per
		blob := c.block * c.bits / 8
		p := NBits{K: c.k, N: c.n, Bits: c.bits, Block: c.block, B: make([]byte, c.n*blocks*blob), Scales: make([]float32, c.n*blocks), Int8A: true}
		for i := range p.B {
			p.B[i] = byte(r.IntN(256))
		}
		for i := range p.Scales {
			p.Scales[i] = float32(0.01 + 0.2*r.Float64())
		}
		switch c.zp {
		case "packed":
			p.ZeroPoints = make([]byte, c.n*rowBytes)
			for i := range p.ZeroPoints {
				p.ZeroPoints[i] = byte(r.IntN(256))
			}
		case "func":
			p.Zero = func(n, kb int) float32 { return float32((n + 3*kb) % (1 << c.bits)) }
		}
		a := make([]float32, c.m*c.k)
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}

		if !int8Fits(&p) {
			t.Fatalf("%s: not taken by the int8 path", name)
		}
		// The formula in float64, A quantized as MLAS does.
		want := make([]float64, c.m*c.n)
		mag := make([]float64, c.m*c.n)
		for m := 0; m < c.m; m++ {
			for kb := 0; kb < blocks; kb++ {
				blk := a[m*c.k+kb*c.block : m*c.k+min((kb+1)*c.block, c.k)]
				amax := float32(0)
				for _, v := range blk {
					amax = max(amax, float32(math.Abs(float64(v))))
				}
				if amax == 0 {
					continue
				}
				sa, inv := float64(amax/127), 127/amax
				for n := 0; n < c.n; n++ {
					z := float64(p.zero(n, kb, rowBytes))
					sb := float64(p.Scales[n*blocks+kb])
					for i, v := range blk {
						qa := math.RoundToEven(float64(v * inv))
						qb := float64(int(p.B[(n*blocks+kb)*blob+i/per]>>(c.bits*(i%per))) & (1<<c.bits - 1))
						want[m*c.n+n] += sa * sb * qa * (qb - z)
						mag[m*c.n+n] += math.Abs(sa * sb * qa * (qb - z))
					}
				}
			}
		}
		// The kernel's order in Go, column by column.
		exact := make([]float32, c.m*c.n)
		lay := int8LayoutOf(c.bits)
		cpb, bpc := max(1, c.block/lay.chunk), max(1, lay.chunk/c.block)
		var idx [16]int32
		for j := range idx {
			idx[j] = int32(lay.lane * j / min(c.block, lay.chunk) % bpc)
		}
		for m := 0; m < c.m; m++ {
			var row int8Row
			quantizeInt8Row(a[m*c.k:(m+1)*c.k], c.block, lay, &row)
			for n := 0; n < c.n; n++ {
				z := make([]float32, blocks)
				for kb := range z {
					z[kb] = p.zero(n, kb, rowBytes)
				}
				exact[m*c.n+n] = nbitsInt8Go(blocks*c.block, cpb, bpc, lay, p.B[n*blocks*blob:], &row, p.Scales[n*blocks:], z, &idx)
			}
		}
		for _, th := range []int{1, 2, 3} {
			x := NewContext(th)
			y := make([]float32, c.m*c.n)
			q := p
			if th == 2 {
				// The zero points as a caller keeps them.
				q.ZeroF = p.ZeroFloats()
			}
			if err := x.MatMulNBits(q, a, c.m, y); err != nil {
				t.Fatal(err)
			}
			x.Close()
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(exact[i]) {
					t.Fatalf("%s, %d threads: y[%d] = %v, the Go loop %v", name, th, i, y[i], exact[i])
				}
				if d := math.Abs(float64(y[i]) - want[i]); d > 1e-6*mag[i] {
					t.Fatalf("%s, %d threads: y[%d] = %v, the formula %v (Σ|·| %v)", name, th, i, y[i], want[i], mag[i])
				}
			}
		}
	}
	// Shapes the int8 path does not take, and A not finite: the float32
	// product.
	for _, c := range []struct {
		bits, k, block int
		bad            float32 // put in A (0: none)
	}{{4, 96, 8, 0}, {2, 64, 16, 0}, {2, 512, 256, 0}, {4, 256, 16, float32(math.NaN())}, {8, 256, 32, float32(math.NaN())}, {4, 256, 64, float32(math.Inf(-1))}} {
		blocks := (c.k + c.block - 1) / c.block
		p := NBits{K: c.k, N: 5, Bits: c.bits, Block: c.block, B: make([]byte, 5*blocks*c.block*c.bits/8), Scales: make([]float32, 5*blocks)}
		for i := range p.B {
			p.B[i] = byte(r.IntN(256))
		}
		for i := range p.Scales {
			p.Scales[i] = 0.1
		}
		a := randSlice(r, c.k)
		if c.bad != 0 {
			a[c.k/2+3] = c.bad
		}
		x := NewContext(1)
		y, f := make([]float32, 5), make([]float32, 5)
		if err := x.MatMulNBits(p, a, 1, f); err != nil {
			t.Fatal(err)
		}
		p.Int8A = true
		if int8Fits(&p) != (c.bad != 0) {
			t.Fatalf("%d bits, K %d, block %d: int8Fits %v", c.bits, c.k, c.block, int8Fits(&p))
		}
		if err := x.MatMulNBits(p, a, 1, y); err != nil {
			t.Fatal(err)
		}
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(f[i]) {
				t.Fatalf("%d bits, K %d, block %d, A holding %v: y[%d] = %v, the float32 product %v", c.bits, c.k, c.block, c.bad, i, y[i], f[i])
			}
		}
	}
}
