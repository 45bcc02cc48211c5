package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestMulBlocksAVX512Bits checks mulBlocksSIMD512 against MulBlocks'
// per-block scale (AVX2 head, Go tail) bit for bit on random block
// counts and lengths (every tail 0–15, 7×7 and 14×14 planes), NaNs in x
// and b, in place too, with guards after y that must stay untouched.
func TestMulBlocksAVX512Bits(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512F")
	}
	r := rand.New(rand.NewPCG(42, 43))
	nan := math.Float32frombits(0x7fc12345)
	for it := range 400 {
		blocks := r.IntN(10)
		inner := 1 + r.IntN(70)
		switch it % 5 {
		case 0:
			inner = 49
		case 1:
			inner = 196
		}
		n := blocks * inner
		x, b := make([]float32, n), make([]float32, blocks)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 100)
			if r.IntN(50) == 0 {
				x[i] = nan
			}
		}
		for i := range b {
			b[i] = float32(r.Float64())
			if r.IntN(20) == 0 {
				b[i] = math.Float32frombits(0xffc00077)
			}
		}
		const guard = 20
		want, got := make([]float32, n+guard), make([]float32, n+guard)
		for i := range got {
			got[i], want[i] = -7, -7
		}
		mulBlocksScale(x, b, want[:n], inner)
		mulBlocksSIMD512(x, b, got[:n], inner)
		in := append([]float32(nil), x...)
		mulBlocksSIMD512(in, b, in, inner)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("blocks %d inner %d: y[%d] = %g (%#x), want %g (%#x)", blocks, inner, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
			if i < n && math.Float32bits(in[i]) != math.Float32bits(want[i]) {
				t.Fatalf("blocks %d inner %d, in place: y[%d] = %g, want %g", blocks, inner, i, in[i], want[i])
			}
		}
	}
}

// BenchmarkMulBlocks: the squeeze-and-excitation scale on 672×14×14,
// 1152×7×7 and 96×112×112 (efficientnet_b0), per-block scale (AVX2) and
// mulBlocksSIMD512.
func BenchmarkMulBlocks(b *testing.B) {
	if !cpu.X86.HasAVX512F {
		b.Skip("no AVX-512F")
	}
	for _, s := range [][2]int{{672, 196}, {1152, 49}, {96, 12544}} {
		x, y, sc := make([]float32, s[0]*s[1]), make([]float32, s[0]*s[1]), make([]float32, s[0])
		for i := range x {
			x[i] = float32(i % 13)
		}
		for i := range sc {
			sc[i] = 0.5
		}
		b.Run(fmt.Sprintf("scale_%dx%d", s[0], s[1]), func(b *testing.B) {
			for b.Loop() {
				mulBlocksScale(x, sc, y, s[1])
			}
		})
		b.Run(fmt.Sprintf("avx512_%dx%d", s[0], s[1]), func(b *testing.B) {
			for b.Loop() {
				mulBlocksSIMD512(x, sc, y, s[1])
			}
		})
	}
}
