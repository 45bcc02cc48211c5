package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.Float64()*2 - 1)
	}
	return s
}

// naiveGemm is the float64 reference: C = alpha·op(A)·op(B) + beta·C.
func naiveGemm(transA, transB bool, m, n, k int, alpha float64, a []float32, lda int, b []float32, ldb int, beta float64, c []float32, ldc int) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			cv := 0.0
			if beta != 0 {
				cv = beta * float64(c[i*ldc+j])
			}
			out[i*n+j] = alpha*s + cv
		}
	}
	return out
}

func TestSgemmAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 3, 17, 33, 255}
	for _, mk := range available {
		for _, m := range sizes {
			for _, n := range sizes {
				for _, k := range []int{1, 3, 17, 300} {
					for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
						if (m == 255 || n == 255) && k == 300 && (tr[0] || tr[1]) && mk.name == "generic" {
							continue
						}
						alpha, beta := float32(1), float32(0)
						if (m+n+k)%2 == 1 {
							alpha, beta = 0.5, -1.5
						}
						lda, ldb, ldc := k+2, n+1, n+3
						ar, br := m, k
						if tr[0] {
							lda, ar = m+1, k
						}
						if tr[1] {
							ldb, br = k+3, n
						}
						a := randSlice(r, ar*lda)
						b := randSlice(r, br*ldb)
						c := randSlice(r, m*ldc)
						want := naiveGemm(tr[0], tr[1], m, n, k, float64(alpha), a, lda, b, ldb, float64(beta), c, ldc)
						ctx := NewContext(2)
						// Pack A, B, both or neither, by the shape.
						var pa, pb *Packed
						var err error
						mode := (m + 2*n + 3*k) % 4
						if mode&1 != 0 {
							if pa, err = packAll(mk, true, tr[0], m, k, alpha, a, lda); err != nil {
								t.Fatal(err)
							}
						}
						if mode&2 != 0 {
							if pb, err = packAll(mk, false, tr[1], n, k, 1, b, ldb); err != nil {
								t.Fatal(err)
							}
						}
						al := alpha
						if pa != nil {
							al = 1
						}
						if err := ctx.sgemm(mk, tr[0], tr[1], m, n, k, al, a, lda, pa, b, ldb, pb, beta, c, ldc); err != nil {
							t.Fatal(err)
						}
						name := fmt.Sprintf("%s m=%d n=%d k=%d trans=%v packed A %v B %v", mk.name, m, n, k, tr, pa != nil, pb != nil)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								got, w := float64(c[i*ldc+j]), want[i*n+j]
								if math.Abs(got-w) > 2e-6*float64(k)+1e-5*math.Abs(w) {
									t.Fatalf("%s: C[%d,%d] = %g, want %g", name, i, j, got, w)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestSgemmThreadsIdentical: the result is bit-identical for 1, 2 and 3
// threads.
func TestSgemmThreadsIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][3]int{{64, 3136, 576}, {517, 49, 700}, {33, 1000, 17}} {
		m, n, k := sh[0], sh[1], sh[2]
		a, b := randSlice(r, m*k), randSlice(r, k*n)
		var ref []float32
		for _, th := range []int{1, 2, 3} {
			c := make([]float32, m*n)
			if err := NewContext(th).Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n); err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = c
				continue
			}
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%v: %d threads differ from 1 at %d: %g vs %g", sh, th, i, c[i], ref[i])
				}
			}
		}
	}
}

func TestSgemmShapeErrors(t *testing.T) {
	var ctx *Context
	err := ctx.Sgemm(false, false, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, make([]float32, 4), 2)
	var se *ShapeError
	if err == nil || !asShape(err, &se) {
		t.Fatalf("got %v, want a ShapeError", err)
	}
}

func asShape(err error, target **ShapeError) bool {
	se, ok := err.(*ShapeError)
	if ok {
		*target = se
	}
	return ok
}

// BenchmarkSgemm reports GFLOP/s on one thread at 512³ and at the GEMM
// shapes of ResNet-50's convolutions (M = output channels, N = output
// pixels, K = input channels × kernel size).
func BenchmarkSgemm(b *testing.B) {
	shapes := []struct {
		name    string
		m, n, k int
	}{
		{"512x512x512", 512, 512, 512},
		{"resnet50_conv1_64x12544x147", 64, 12544, 147},
		{"resnet50_l1_3x3_64x3136x576", 64, 3136, 576},
		{"resnet50_l2_3x3_128x784x1152", 128, 784, 1152},
		{"resnet50_l3_3x3_256x196x2304", 256, 196, 2304},
		{"resnet50_l4_3x3_512x49x4608", 512, 49, 4608},
		{"resnet50_l1_1x1_256x3136x64", 256, 3136, 64},
		{"resnet50_l4_1x1_2048x49x512", 2048, 49, 512},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, mk := range available {
		for _, s := range shapes {
			// "packedA": A (the weights, M×K) packed once, as the executor
			// does for constant weights; "raw": everything packed per call.
			for _, mode := range []string{"raw", "packedA"} {
				b.Run(mk.name+"/"+mode+"/"+s.name, func(b *testing.B) {
					a, bb, c := randSlice(r, s.m*s.k), randSlice(r, s.k*s.n), make([]float32, s.m*s.n)
					var pa *Packed
					if mode == "packedA" {
						var err error
						if pa, err = packAll(mk, true, false, s.m, s.k, 1, a, s.k); err != nil {
							b.Fatal(err)
						}
					}
					ctx := NewContext(1)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if err := ctx.sgemm(mk, false, false, s.m, s.n, s.k, 1, a, s.k, pa, bb, s.n, nil, 0, c, s.n); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

func TestAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 1, 3, 7, 8, 9, 17, 255} {
		x, y := randSlice(r, n), randSlice(r, n)
		want := make([]float64, n)
		for i := range want {
			want[i] = float64(y[i]) + 0.75*float64(x[i])
		}
		axpy(0.75, x, y)
		for i := range y {
			if math.Abs(float64(y[i])-want[i]) > 1e-6 {
				t.Fatalf("n=%d: y[%d] = %g, want %g", n, i, y[i], want[i])
			}
		}
	}
}

// TestEdgeKernelsMatchFullTile checks that each edge kernel computes the
// first r rows of its micro-kernel's tile bit for bit (set and add), from
// panels of mr rows, and writes nothing past row r.
func TestEdgeKernelsMatchFullTile(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, mk := range available {
		if mk.edge == nil {
			continue
		}
		if len(mk.edge) != mk.mr {
			t.Fatalf("%s: %d edge kernels for %d rows", mk.name, len(mk.edge), mk.mr)
		}
		for _, kc := range []int{0, 1, 7, 37} {
			a, b := randSlice(r, kc*mk.mr+1), randSlice(r, kc*mk.nr+1)
			c0 := randSlice(r, mk.mr*(mk.nr+3))
			for add := 0; add <= 1; add++ {
				full := append([]float32(nil), c0...)
				mk.fn(kc, &a[0], &b[0], mk.nr, &full[0], mk.nr+3, add, nil, 0)
				for rows := 1; rows < mk.mr; rows++ {
					got := append([]float32(nil), c0...)
					mk.edge[rows](kc, &a[0], &b[0], mk.nr, &got[0], mk.nr+3, add, nil, 0)
					for i := range got {
						want := full[i]
						if i/(mk.nr+3) >= rows || i%(mk.nr+3) >= mk.nr {
							want = c0[i] // untouched
						}
						if math.Float32bits(got[i]) != math.Float32bits(want) {
							t.Fatalf("%s rows %d kc %d add %d: c[%d] = %g, want %g", mk.name, rows, kc, add, i, got[i], want)
						}
					}
				}
			}
		}
	}
}

// TestSgemmDirectBMatchesPacked: B read in place (a row stride that is
// not a multiple of 64) and B packed (the same matrix stored with a row
// stride of 1024·q) give bit-identical products, serial and split, with
// a tail panel, one or several k-blocks, and with A packed or not; and
// strides of multiples of 64 are read in place up to 4 rows per L1 set
// position.
func TestSgemmDirectBMatchesPacked(t *testing.T) {
	for _, c := range []struct {
		ld, k int
		in    bool
	}{{3136, 64, true}, {3136, 65, false}, {12544, 16, true}, {12544, 17, false}, {64, 64, true}, {1024, 4, true}, {1024, 5, false}, {2048, 300, false}, {100, 600, true}} {
		if got := (operand{ld: c.ld}).direct(c.k, 3, 32); got != c.in {
			t.Errorf("stride %d, k %d: read in place %v, want %v", c.ld, c.k, got, c.in)
		}
		// Panels of B used by at most 2 panels of A: in place whatever
		// the stride.
		if !(operand{ld: c.ld}).direct(c.k, 2, 32) {
			t.Errorf("stride %d, k %d, 2 panels of A: packed", c.ld, c.k)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, sh := range [][3]int{{58, 49, 58}, {232, 196, 300}, {12, 45, 7}, {100, 64, 600}, {40, 3136, 48}, {24, 3136, 300}, {16, 1024, 100}} {
		m, n, k := sh[0], sh[1], sh[2]
		a := randSlice(r, m*k)
		bd := randSlice(r, k*n)
		ldp := (n + 1023) / 1024 * 1024
		bp := make([]float32, k*ldp)
		for p := 0; p < k; p++ {
			copy(bp[p*ldp:p*ldp+n], bd[p*n:(p+1)*n])
		}
		if !(operand{s: bd, ld: n}).direct(k, 3, 32) && n%64 != 0 {
			t.Fatalf("%v: B of stride %d is not read in place", sh, n)
		}
		if (operand{s: bp, ld: ldp}).direct(k, 3, 32) {
			t.Fatalf("%v: B of stride %d is read in place", sh, ldp)
		}
		for _, th := range []int{1, 2, 3} {
			for _, packA := range []bool{false, true} {
				cd, cp := productAtStrides(t, th, packA, m, n, k, a, bd, n, bp, ldp)
				for i := range cd {
					if math.Float32bits(cd[i]) != math.Float32bits(cp[i]) {
						t.Fatalf("%v, %d threads, A packed %v: C[%d] = %g in place, %g packed", sh, th, packA, i, cd[i], cp[i])
					}
				}
			}
		}
	}
}

// TestSgemmBiasReluStore: every kernel (with or without edge kernels)
// stores bias + product, then ReLU (or ReLU6), with the bits of a C filled with the
// bias, the product added to it, then Relu (Clip(0, 6)) — on partial tiles, several
// k-blocks, B packed or read in place, 1 to 3 threads.
func TestSgemmBiasReluStore(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, mk := range available {
		for _, sh := range [][3]int{{17, 45, 300}, {5, 33, 7}, {40, 64, 20}, {13, 1, 600}, {30, 49, 300}, {1, 200, 50}} {
			for _, six := range []bool{false, true} {
				m, n, k := sh[0], sh[1], sh[2]
				a, b, bias := randSlice(r, m*k), randSlice(r, k*n), randSlice(r, m)
				if six {
					// Larger values: many above 6 (ReLU6).
					for i := range a {
						a[i] *= 8
					}
				}
				want := make([]float32, m*n)
				for i := 0; i < m; i++ {
					fill(want[i*n:(i+1)*n], bias[i])
				}
				if err := NewContext(1).sgemm(mk, false, false, m, n, k, 1, a, k, nil, b, n, nil, 1, want, n); err != nil {
					t.Fatal(err)
				}
				if six {
					clipGeneric(want, want, 0, 6)
				} else {
					reluGeneric(want, want)
				}
				for _, th := range []int{1, 2, 3} {
					x := NewContext(th)
					got := randSlice(r, m*n) // ignored: the bias replaces C
					fin := &finish{bias: bias, relu: true, six: six}
					if err := x.sgemmFinish(mk, false, false, m, n, k, 1, a, k, nil, b, n, nil, 0, got, n, fin); err != nil {
						t.Fatal(err)
					}
					x.Close()
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %v six %v threads %d: C[%d] = %g, want %g", mk.name, sh, six, th, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestSgemmUnalignedBPacked: a B whose rows are not 64-byte aligned is
// packed for the 32-wide kernel when many panels of A read it and its
// k-blocks are long (operand.direct), and the products are bit-identical
// to those reading the same B in place (stored with an aligned stride
// that is not a multiple of 64) and close to the plain triple loop: a
// tail panel, one or several k-blocks, several blocks of A, 1 to 3
// threads, A packed or not.
func TestSgemmUnalignedBPacked(t *testing.T) {
	for _, c := range []struct {
		ld, k, panels, nr int
		in                bool
	}{{169, 512, 84, 32, false}, {169, 192, 20, 32, false}, {196, 300, 20, 32, false}, {49, 1024, 86, 32, false},
		{176, 512, 84, 32, true}, {169, 191, 84, 32, true}, {169, 512, 19, 32, true}, {169, 512, 84, 16, true}, {3136, 512, 84, 32, false}} {
		if got := (operand{ld: c.ld}).direct(c.k, c.panels, c.nr); got != c.in {
			t.Errorf("stride %d, k %d, %d panels of A, nr %d: read in place %v, want %v", c.ld, c.k, c.panels, c.nr, got, c.in)
		}
	}
	r := rand.New(rand.NewPCG(42, 43))
	for _, sh := range [][3]int{{1000, 169, 512}, {250, 196, 300}, {300, 49, 1024}, {241, 13, 200}, {500, 171, 193}} {
		m, n, k := sh[0], sh[1], sh[2]
		a := randSlice(r, m*k)
		bu := randSlice(r, k*n)
		lda := (n + 15) / 16 * 16
		if lda%64 == 0 {
			lda += 16
		}
		ba := make([]float32, k*lda)
		for p := 0; p < k; p++ {
			copy(ba[p*lda:p*lda+n], bu[p*n:(p+1)*n])
		}
		want := make([]float64, m*n)
		for i := 0; i < m; i++ {
			for p := 0; p < k; p++ {
				av := float64(a[i*k+p])
				for j := 0; j < n; j++ {
					want[i*n+j] += av * float64(bu[p*n+j])
				}
			}
		}
		for _, th := range []int{1, 2, 3} {
			for _, packA := range []bool{false, true} {
				cu, ca := productAtStrides(t, th, packA, m, n, k, a, bu, n, ba, lda)
				for i := range cu {
					if math.Float32bits(cu[i]) != math.Float32bits(ca[i]) {
						t.Fatalf("%v, %d threads, A packed %v: C[%d] = %g (stride %d), %g (stride %d)", sh, th, packA, i, cu[i], n, ca[i], lda)
					}
					if d := math.Abs(float64(cu[i]) - want[i]); d > 1e-3*math.Sqrt(float64(k)) {
						t.Fatalf("%v, %d threads, A packed %v: C[%d] = %g, triple loop %g", sh, th, packA, i, cu[i], want[i])
					}
				}
			}
		}
	}
}

// productAtStrides returns A·B (m×n, A m×k row-major, packed first when
// packA) with B given twice, b1 at row stride ld1 and b2 at ld2 (the same
// values), on th threads: the two products the stride tests compare bit
// for bit.
func productAtStrides(t *testing.T, th int, packA bool, m, n, k int, a, b1 []float32, ld1 int, b2 []float32, ld2 int) (c1, c2 []float32) {
	t.Helper()
	x := NewContext(th)
	defer x.Close()
	var pa *Packed
	if packA {
		var err error
		if pa, err = PackA(false, m, k, 1, a, k); err != nil {
			t.Fatal(err)
		}
	}
	c1, c2 = make([]float32, m*n), make([]float32, m*n)
	if err := x.SgemmPacked(false, false, m, n, k, 1, a, k, pa, b1, ld1, nil, 0, c1, n); err != nil {
		t.Fatal(err)
	}
	if err := x.SgemmPacked(false, false, m, n, k, 1, a, k, pa, b2, ld2, nil, 0, c2, n); err != nil {
		t.Fatal(err)
	}
	return c1, c2
}
