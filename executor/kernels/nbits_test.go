package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestMatMulNBits: a · dequant(B) against a float64 reference that
// unpacks every value on its own, for 2-, 4- and 8-bit blocks of 16 to
// 128 values, a padded last block, N over and under a chunk (and under
// the fast path's 4 columns, and not a multiple of 4), up to 8 rows,
// default, given and packed zero points, on 1, 2 and 3 threads (the
// same bits). The error bound is relative to Σ|a·w| (float32 sums in
// another order).
func TestMatMulNBits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct{ m, k, n, bits, block int }{
		{1, 40, 5, 4, 16}, {3, 64, 130, 4, 32}, {2, 512, 300, 4, 128}, {1, 96, 33, 4, 32}, {2, 100, 257, 8, 32}, {1, 33, 70, 2, 16}, {6, 256, 128, 4, 64},
		{5, 256, 37, 8, 64}, {8, 512, 66, 4, 128}, {1, 2048, 19, 4, 32}, {2, 128, 3, 4, 32}, {3, 96, 9, 8, 32}, {4, 64, 8, 4, 16},
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
		perByte := 8 / c.bits
		rowBytes := (blocks + perByte - 1) / perByte
		packed := make([]byte, c.n*rowBytes)
		for n := 0; n < c.n; n++ {
			for kb := 0; kb < blocks; kb++ {
				packed[n*rowBytes+kb/perByte] |= byte(zeros[n*blocks+kb]) << (c.bits * (kb % perByte))
			}
		}
		for zk := 0; zk < 3; zk++ {
			p := NBits{K: c.k, N: c.n, Bits: c.bits, Block: c.block, B: b, Scales: scales}
			if zk == 1 {
				p.Zero = func(n, kb int) float32 { return zeros[n*blocks+kb] }
			} else if zk == 2 {
				p.ZeroPoints = packed
			}
			want := make([]float64, c.m*c.n)
			bound := make([]float64, c.m*c.n)
			for n := 0; n < c.n; n++ {
				for k := 0; k < c.k; k++ {
					kb, i := k/c.block, k%c.block
					bit := i * c.bits
					q := int(b[(n*blocks+kb)*blob+bit/8]>>(bit%8)) & (1<<c.bits - 1)
					z := float64(int(1) << (c.bits - 1))
					if zk > 0 {
						z = float64(zeros[n*blocks+kb])
					}
					wv := (float64(q) - z) * float64(scales[n*blocks+kb])
					for m := 0; m < c.m; m++ {
						want[m*c.n+n] += float64(a[m*c.k+k]) * wv
						bound[m*c.n+n] += math.Abs(float64(a[m*c.k+k]) * wv)
					}
				}
			}
			var first []float32
			for _, threads := range []int{1, 2, 3} {
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
					if d := math.Abs(float64(y[i]) - want[i]); !(d <= 1e-6*(1+bound[i])) {
						t.Fatalf("%+v zero %d threads %d: y[%d] = %v, want %v (Σ|a·w| %v)", c, zk, threads, i, y[i], want[i], bound[i])
					}
					if first != nil && math.Float32bits(y[i]) != math.Float32bits(first[i]) {
						t.Fatalf("%+v zero %d: y[%d] on %d threads %v, on 1 %v", c, zk, i, threads, y[i], first[i])
					}
				}
				if first == nil {
					first = y
				}
			}
		}
	}
	if err := NewContext(1).MatMulNBits(NBits{K: 8, N: 2, Bits: 4, Block: 8, B: make([]byte, 3), Scales: make([]float32, 2)}, make([]float32, 8), 1, make([]float32, 2)); err == nil {
		t.Fatal("short B accepted")
	}
}

// BenchmarkMatMulNBitsGEMV: a 2048×2048 MatMulNBits (4-bit blocks of
// 32 and 128, 8-bit blocks of 32) for one row (the decode step) and 4
// rows, on one locked thread: CPU ns per call and GB/s of packed weights
// per CPU second.
func BenchmarkMatMulNBitsGEMV(b *testing.B) {
	for _, c := range []struct{ bits, block, m int }{{4, 32, 1}, {4, 128, 1}, {8, 32, 1}, {4, 32, 4}} {
		b.Run(fmt.Sprintf("bits%d_block%d_m%d", c.bits, c.block, c.m), func(b *testing.B) {
			const k, n = 2048, 2048
			blocks := k / c.block
			r := rand.New(rand.NewPCG(1, 2))
			p := NBits{K: k, N: n, Bits: c.bits, Block: c.block, B: make([]byte, n*blocks*c.block*c.bits/8), Scales: randSlice(r, n*blocks)}
			for i := range p.B {
				p.B[i] = byte(r.IntN(256))
			}
			a, y := randSlice(r, c.m*k), make([]float32, c.m*n)
			x := NewContext(1)
			defer x.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			t0 := ThreadCPUTime()
			for i := 0; i < b.N; i++ {
				if err := x.MatMulNBits(p, a, c.m, y); err != nil {
					b.Fatal(err)
				}
			}
			cpu := float64((ThreadCPUTime() - t0).Nanoseconds()) / float64(b.N)
			b.ReportMetric(cpu, "cpu-ns/op")
			b.ReportMetric(float64(len(p.B))/cpu, "GB/s-cpu")
		})
	}
}

// BenchmarkMatMulNBitsRoofline sets the int4 GEMV against the memory it
// reads: the machine's read bandwidth on 1 and 2 threads (a streaming
// sum, gapSum8, over 64 MB: GB/s read) and one row times a 4096×11008
// MatMulNBits (a Llama-7B MLP's up projection: 22.5 MB of 4-bit weights
// and 5.6 MB of scales at block 32, 22.5 + 1.4 MB at block 128), float32
// and with A quantized to int8 (Int8A, accuracy_level 4), on 1 and 2
// threads (GB/s of weights and scales per wall second), each much
// larger than the caches, as a decode step streams them.
func BenchmarkMatMulNBitsRoofline(b *testing.B) {
	if gapSum8 == nil {
		b.Skip("no SIMD streaming sum")
	}
	const n = 16 << 20 // floats: 64 MB
	buf := make([]float32, n)
	for i := range buf {
		buf[i] = float32(i & 255)
	}
	for _, th := range []int{1, 2} {
		x := NewContext(th)
		release := x.Hold()
		b.Run(fmt.Sprintf("read64MB/t%d", th), func(b *testing.B) {
			for b.Loop() {
				x.parallel(th, func(i int) {
					var s [8]float64
					h := buf[i*n/th : (i+1)*n/th]
					gapSum8(h, len(h)/8, len(h)/8, &s)
				})
			}
			b.ReportMetric(float64(4*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		for _, c := range []struct {
			block int
			int8A bool
		}{{32, false}, {128, false}, {32, true}, {128, true}} {
			const k, cols = 4096, 11008
			block := c.block
			r := rand.New(rand.NewPCG(3, 4))
			blocks := k / block
			p := NBits{K: k, N: cols, Bits: 4, Block: block, B: make([]byte, cols*blocks*block/2), Scales: randSlice(r, cols*blocks), Int8A: c.int8A}
			for i := range p.B {
				p.B[i] = byte(r.IntN(256))
			}
			a, y := randSlice(r, k), make([]float32, cols)
			kind := "int4"
			if c.int8A {
				kind = "int4_int8A"
			}
			b.Run(fmt.Sprintf("%s_block%d_%dx%d/t%d", kind, block, k, cols, th), func(b *testing.B) {
				for b.Loop() {
					if err := x.MatMulNBits(p, a, 1, y); err != nil {
						b.Fatal(err)
					}
				}
				bytes := len(p.B) + 4*len(p.Scales)
				b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
		release()
		x.Close()
	}
}
