package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSerialRowStarts: serial on row ranges starting anywhere (within a
// packed panel of A: gemm's row chunks in equal rows) computes the same
// bits as serial on all rows, for every kernel with edge kernels (AVX-512
// and AVX2 when the CPU has them): A packed beforehand, B plain (read in
// place), transposed (packed by serial) or packed beforehand, the
// column-tail kernels (49 and 51 columns: 32 + 16 + 1 or 3), more rows
// than a block (blockM), k over several k-blocks, beta ≠ 0, a bias,
// ReLU and ReLU6.
func TestSerialRowStarts(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 1))
	type tc struct {
		m, n, k   int
		tb, packB bool
		beta      float32
		bias      bool
		relu, six bool
	}
	cases := []tc{
		{m: 128, n: 49, k: 600, bias: true, relu: true},
		{m: 250, n: 51, k: 300, beta: 0.5},
		{m: 37, n: 77, k: 520, tb: true, beta: -1, relu: true},
		{m: 200, n: 64, k: 100, packB: true, bias: true, relu: true, six: true},
		{m: 64, n: 17, k: 700, bias: true},
		{m: 401, n: 33, k: 257, packB: true, beta: 1, relu: true},
		{m: 30, n: 5, k: 64},
	}
	tested := 0
	for _, mk := range available {
		if mk.edge == nil {
			continue
		}
		tested++
		for _, c := range cases {
			lda, ldb, br := c.k+1, c.n+2, c.k
			if c.tb {
				ldb, br = c.k+2, c.n
			}
			a, b := randSlice(r, c.m*lda), randSlice(r, br*ldb)
			c0 := randSlice(r, c.m*c.n)
			for i := range c0 {
				c0[i] *= 4 // some values past 6 and below 0 for ReLU6
			}
			pa, err := packAll(mk, true, false, c.m, c.k, 1, a, lda)
			if err != nil {
				t.Fatal(err)
			}
			ob := operand{trans: c.tb, s: b, ld: ldb}
			if c.packB {
				if ob.packed, err = packAll(mk, false, c.tb, c.n, c.k, 1, b, ldb); err != nil {
					t.Fatal(err)
				}
			}
			var bias []float32
			if c.bias {
				bias = randSlice(r, c.m)
			}
			st := store{bias: bias, relu: c.relu, six: c.relu && c.six}
			x := NewContext(1)
			ref := append([]float32{}, c0...)
			x.serial(mk, c.m, c.n, c.k, 1, operand{packed: pa}, ob, c.beta, ref, c.n, st)
			cuts := [][]int{{1}, {mk.mr - 1}, {5}, {c.m / 2}, {c.m - 1}, {3, 7, 11, c.m / 3, c.m - 2}}
			for q := 0; q < 4; q++ {
				cuts = append(cuts, []int{1 + r.IntN(c.m-1)})
			}
			for _, cut := range cuts {
				y := append([]float32{}, c0...)
				bounds := append(append([]int{0}, cut...), c.m)
				for i := 0; i+1 < len(bounds); i++ {
					i0, i1 := bounds[i], bounds[i+1]
					if i0 >= i1 {
						continue
					}
					sti := st
					if bias != nil {
						sti.bias = bias[i0:i1]
					}
					x.serial(mk, i1-i0, c.n, c.k, 1, operand{packed: pa}.rowsFrom(i0), ob, c.beta, y[i0*c.n:], c.n, sti)
				}
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("%s %+v, rows cut at %v: element %d (row %d) = %v, all rows %v", mk.name, c, cut, i, i/c.n, y[i], ref[i])
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no kernel with edge kernels on this CPU")
	}
}

// TestGemmEqualRowsIdentical: gemm's row chunks in equal rows (A packed
// beforehand and the implicit im2col B of convolutions: read in place
// through the offsets kernels, packed, or a 1×1 convolution's input;
// bias, ReLU, ReLU6) are bit-identical to one thread for 2, 3 and 4
// threads, with the kernel in use (run under ONNXCONV_SGEMM_KERNEL=avx2
// and generic too); and 2 threads cut a product of 128 rows with edge
// kernels 64 | 64.
func TestGemmEqualRowsIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(62, 1))
	conv := func(c, h, m, kh, s int) Conv2D {
		p := kh / 2
		return Conv2D{N: 1, C: c, H: h, W: h, M: m, KH: kh, KW: kh, SH: s, SW: s, DH: 1, DW: 1, PT: p, PL: p, PB: p, PR: p, Groups: 1}
	}
	for _, p := range []Conv2D{
		conv(64, 7, 128, 3, 1),
		conv(128, 14, 128, 3, 2),
		conv(96, 7, 200, 3, 1),
		conv(256, 7, 128, 1, 1),
		conv(128, 13, 64, 1, 1),
		conv(160, 9, 132, 3, 1),
	} {
		kk := p.C * p.KH * p.KW
		in, w, bias := randSlice(r, p.C*p.H*p.W), randSlice(r, p.M*kk), randSlice(r, p.M)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			t.Fatal(err)
		}
		oh, ow := p.Out()
		for _, act := range []Act{ActNone, ActRelu, ActRelu6} {
			var ref []float32
			for _, th := range []int{1, 2, 3, 4} {
				x := NewContext(th)
				y := make([]float32, p.M*oh*ow)
				if err := x.Conv2DPackedAct(p, in, nil, pw, bias, y, act, nil); err != nil {
					t.Fatal(err)
				}
				x.Close()
				if ref == nil {
					ref = y
					continue
				}
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("%+v (%s) act %d: %d threads differ from 1 at %d: %v vs %v", p, convPath(p), act, th, i, y[i], ref[i])
					}
				}
			}
		}
	}
	if best.edge != nil {
		x := NewContext(2)
		defer x.Close()
		unit := rowUnit(best, operand{packed: &Packed{}})
		if byCols, nc := x.gemmSplit(best, 128, 49, 1152, unit); byCols || nc%2 != 0 {
			t.Fatalf("128×49×1152 at 2 threads: columns %v, %d chunks; want an even count of row chunks", byCols, nc)
		} else if parts := split(128, nc, unit); parts[len(parts)/2] != 64 {
			t.Errorf("128 rows in %d chunks: %v, want 64 | 64", nc, parts)
		}
	}
}
