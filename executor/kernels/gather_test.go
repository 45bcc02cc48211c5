package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGatherRows checks the packing copy (SIMD for widths of 8, 16, 32)
// against Go's copy.
func TestGatherRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	src := randSlice(r, 4000)
	for _, w := range []int{6, 8, 12, 16, 32} {
		for _, k := range []int{0, 1, 5, 27} {
			offs := make([]int, k)
			for i := range offs {
				offs[i] = r.IntN(len(src) - w)
			}
			got, want := make([]float32, k*w), make([]float32, k*w)
			gatherRows(got, src, offs, w)
			gatherRowsGo(want, src, offs, w)
			for j := range got {
				if got[j] != want[j] {
					t.Fatalf("w %d k %d: dst[%d] = %v, want %v", w, k, j, got[j], want[j])
				}
			}
		}
	}
}

// BenchmarkConvSmallChannels reports GFLOP/s and thread CPU ns/op of the
// 3×3 convolutions of 16–64 channels of the U-Nets and SqueezeNet (packed
// weights, bias), one thread.
func BenchmarkConvSmallChannels(b *testing.B) {
	conv3 := func(c, m, h int) Conv2D {
		return Conv2D{N: 1, C: c, H: h, W: h, M: m, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, p := range []Conv2D{conv3(16, 16, 128), conv3(32, 32, 64), conv3(64, 64, 32), conv3(16, 64, 55), conv3(32, 128, 27)} {
		b.Run(fmt.Sprintf("c%d_m%d_%d", p.C, p.M, p.H), func(b *testing.B) {
			oh, ow := p.Out()
			x, w, bias := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*p.C*p.KH*p.KW), randSlice(r, p.M)
			pw, err := PackConvWeights(p, w)
			if err != nil {
				b.Fatal(err)
			}
			y := make([]float32, p.N*p.M*oh*ow)
			ctx := NewContext(1)
			benchConv(b, 2*float64(p.N*p.M*oh*ow*p.C*p.KH*p.KW), func() error { return ctx.Conv2DPacked(p, x, nil, pw, bias, y) })
		})
	}
}
