package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestColKernelsMatchTiles checks serial's column kernels (the last 1–3
// columns of a panel, after a half tile or alone) against the same GEMM
// on the tile kernels alone: bit-identical C for every way serial reads
// A and B, with C added, a bias and ReLU, over several k-blocks and
// row blocks, on 1 and 3 threads.
func TestColKernelsMatchTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	for _, mk := range available {
		if mk.col == nil {
			continue
		}
		ref := mk
		ref.col = nil
		for _, m := range []int{1, 11, 12, 13, 37, 50, 200} {
			for _, n := range []int{1, 2, 3, 4, 16, 17, 18, 19, 20, 49, 81, 115, 128, 161, 300} {
				for _, k := range []int{1, 5, 300} {
					for v := 0; v < 6; v++ {
						name := fmt.Sprintf("%s m%d n%d k%d v%d", mk.name, m, n, k, v)
						a, b := randSlice(r, m*k), randSlice(r, k*n)
						if v == 5 && len(b) > 3 {
							b[3] = float32(math.NaN())
						}
						c0 := randSlice(r, m*n)
						bias := randSlice(r, m)
						run := func(mk microKernel, th int) []float32 {
							x := NewContext(th)
							defer x.Close()
							c := append([]float32(nil), c0...)
							var err error
							switch v {
							case 0: // plain, B read in place (or its tail packed)
								err = x.sgemm(mk, false, false, m, n, k, 1, a, k, nil, b, n, nil, 0, c, n)
							case 1: // C added, A transposed
								err = x.sgemm(mk, true, false, m, n, k, 1, a, m, nil, b, n, nil, 1, c, n)
							case 2: // B transposed (packed per block)
								err = x.sgemm(mk, false, true, m, n, k, 1, a, k, nil, b, k, nil, 0.5, c, n)
							case 3, 5: // bias and ReLU
								err = x.sgemmFinish(mk, false, false, m, n, k, 1, a, k, nil, b, n, nil, 0, c, n, &finish{bias: bias, relu: true})
							case 4: // both operands packed beforehand
								pa, e := packAll(mk, true, false, m, k, 1, a, k)
								if e != nil {
									t.Fatal(e)
								}
								pb, e := packAll(mk, false, false, n, k, 1, b, n)
								if e != nil {
									t.Fatal(e)
								}
								err = x.sgemmFinish(mk, false, false, m, n, k, 1, nil, k, pa, nil, n, pb, 0, c, n, &finish{relu: true})
							}
							if err != nil {
								t.Fatal(err)
							}
							return c
						}
						want := run(ref, 1)
						for _, th := range []int{1, 3} {
							got := run(mk, th)
							for i := range got {
								if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
									t.Fatalf("%s threads %d: C[%d] = %g, want %g", name, th, i, got[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkPointwiseFew times the 1×1 convolutions of the mobile nets'
// last stages (7×7 and 14×14 pixels) on the direct SGEMM.
func BenchmarkPointwiseFew(b *testing.B) {
	benchPointwise(b, [][3]int{{7, 160, 960}, {7, 960, 160}, {7, 960, 320}, {7, 320, 1280}, {7, 96, 576}, {14, 96, 576}, {14, 576, 96}})
}

// BenchmarkPointwisePacked times 1×1 convolutions on planes whose rows
// alias in L1 (56×56, 112×112): B is packed, not read in place.
func BenchmarkPointwisePacked(b *testing.B) {
	benchPointwise(b, [][3]int{{56, 24, 144}, {56, 144, 24}, {112, 16, 96}, {112, 32, 16}, {28, 192, 32}})
}

// benchPointwise times 1×1 convolutions {H = W, C, M} with a bias and ReLU.
func benchPointwise(b *testing.B, shapes [][3]int) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sh := range shapes {
		hw, c, m := sh[0], sh[1], sh[2]
		p := Conv2D{N: 1, C: c, H: hw, W: hw, M: m, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
		x, w, bias := randSlice(r, c*hw*hw), randSlice(r, m*c), randSlice(r, m)
		y := make([]float32, m*hw*hw)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dx%d_%d_%d", hw, hw, c, m), func(b *testing.B) {
			ctx := NewContext(1)
			defer ctx.Close()
			for i := 0; i < b.N; i++ {
				if err := ctx.Conv2DPackedAct(p, x, nil, pw, bias, y, ActRelu, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(2*c*m*hw*hw)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

// BenchmarkGemvRow times single-row SGEMMs on packed B (a classifier's
// Gemm, an SE block's 1×1 convolutions on one pixel). They are bound by
// streaming B from L2/L3, not by kernelAVX512R1's two chains of FMAs: a
// kernel with four tiles (eight chains) side by side, with or without
// prefetching, measured the same (docs/speed.md, eighth wave: pointwise).
func BenchmarkGemvRow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sh := range [][2]int{{1024, 1000}, {576, 1024}, {96, 24}, {576, 144}, {144, 576}} {
		k, n := sh[0], sh[1]
		a, w := randSlice(r, k), randSlice(r, k*n)
		pb, err := PackB(true, k, n, w, k)
		if err != nil {
			b.Fatal(err)
		}
		c := make([]float32, n)
		b.Run(fmt.Sprintf("%dx%d", k, n), func(b *testing.B) {
			ctx := NewContext(1)
			defer ctx.Close()
			for i := 0; i < b.N; i++ {
				if err := ctx.SgemmPacked(false, false, 1, n, k, 1, a, k, nil, nil, n, pb, 0, c, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(2*k*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

// TestPackRowsMatchesCopy checks the SIMD row copies packB uses for full
// panels against element-by-element copies (odd strides and offsets).
func TestPackRowsMatchesCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, nr := range []int{16, 32} {
		fast := packRowsFor(nr)
		if fast == nil {
			t.Logf("no SIMD row copy for %d columns", nr)
			continue
		}
		for _, ldb := range []int{nr, 33, 49, 197, 3136} {
			if ldb < nr {
				continue
			}
			for _, kc := range []int{1, 7, 256} {
				for _, off := range []int{0, 1, 5} {
					b := randSlice(r, off+(kc-1)*ldb+nr+3)
					got := make([]float32, kc*nr+1)
					got[kc*nr] = 42
					fast(kc, &b[off], ldb, &got[0])
					for p := 0; p < kc; p++ {
						for j := 0; j < nr; j++ {
							if want := b[off+p*ldb+j]; math.Float32bits(got[p*nr+j]) != math.Float32bits(want) {
								t.Fatalf("nr %d ldb %d kc %d off %d: [%d][%d] = %g, want %g", nr, ldb, kc, off, p, j, got[p*nr+j], want)
							}
						}
					}
					if got[kc*nr] != 42 {
						t.Fatalf("nr %d ldb %d kc %d: wrote past the panel", nr, ldb, kc)
					}
				}
			}
		}
	}
}

// BenchmarkPointwiseMid times the 1×1 convolutions of RegNetX-400MF
// (32 at 56×56, 64 at 28×28, 160 at 14×14, 400 at 7×7) and of the mobile
// nets on 14×14 and 28×28 planes.
func BenchmarkPointwiseMid(b *testing.B) {
	benchPointwise(b, [][3]int{{56, 32, 32}, {28, 64, 64}, {14, 160, 160}, {7, 400, 400},
		{14, 64, 384}, {14, 384, 64}, {14, 384, 96}, {28, 32, 192}, {28, 192, 32}, {14, 480, 80}})
}
