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

// BenchmarkConvPointwise reports GFLOP/s and thread CPU ns/op of 1×1
// convolutions on 56×56 and 112×112 pixels (row strides 3136 and 12544:
// multiples of 64 floats) of the mobile nets and ResNet-50's bottlenecks
// at 56×56 and 28×28 (packed weights, bias), one thread.
func BenchmarkConvPointwise(b *testing.B) {
	conv1 := func(c, m, h int) Conv2D {
		return Conv2D{N: 1, C: c, H: h, W: h, M: m, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
	}
	r := rand.New(rand.NewPCG(13, 15))
	for _, p := range []Conv2D{conv1(16, 48, 56), conv1(48, 24, 56), conv1(24, 72, 56), conv1(72, 24, 56), conv1(16, 16, 112), conv1(32, 16, 112), conv1(64, 256, 56), conv1(256, 64, 56), conv1(64, 64, 56), conv1(512, 128, 28), conv1(128, 512, 28)} {
		b.Run(fmt.Sprintf("c%d_m%d_%d", p.C, p.M, p.H), func(b *testing.B) {
			x, w, bias := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*p.C), randSlice(r, p.M)
			pw, err := PackConvWeights(p, w)
			if err != nil {
				b.Fatal(err)
			}
			y := make([]float32, p.N*p.M*p.H*p.W)
			ctx := NewContext(1)
			benchConv(b, 2*float64(p.N*p.M*p.H*p.W*p.C), func() error { return ctx.Conv2DPacked(p, x, nil, pw, bias, y) })
		})
	}
}

// BenchmarkConvTailPanel reports GFLOP/s and thread CPU ns/op of
// convolutions whose pixels end in a panel of at most 16 columns
// (GoogLeNet's 1×1 at 14×14: 196 = 6·32 + 4; SqueezeNet's 3×3 at 13×13:
// a grid of 195 = 6·32 + 3), packed weights, bias, one thread.
func BenchmarkConvTailPanel(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 16))
	for _, p := range []Conv2D{
		{N: 1, C: 480, H: 14, W: 14, M: 192, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 528, H: 14, W: 14, M: 128, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 64, H: 13, W: 13, M: 256, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
	} {
		b.Run(fmt.Sprintf("c%d_m%d_k%d_%d", p.C, p.M, p.KH, p.H), func(b *testing.B) {
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

// BenchmarkConvGrouped reports GFLOP/s of RegNetX-400MF's grouped 3×3
// convolutions (groups of 16 channels, convRows group by group: last
// panels of 4 and 17 pixels, 16-row groups), packed weights, bias, one
// thread; "nhwc" the same on NHWC activations (ConvNHWC, where the
// table rows kernels are there).
func BenchmarkConvGrouped(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 17))
	for _, p := range []Conv2D{
		{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 4},
		{N: 1, C: 160, H: 14, W: 14, M: 160, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 10},
		{N: 1, C: 400, H: 7, W: 7, M: 400, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 25},
	} {
		oh, ow := p.Out()
		kk := p.C / p.Groups * p.KH * p.KW
		x, w, bias := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*kk), randSlice(r, p.M)
		y := make([]float32, p.N*p.M*oh*ow)
		ctx := NewContext(1)
		name := fmt.Sprintf("c%d_g%d_s%d_%d", p.C, p.Groups, p.SH, p.H)
		b.Run(name, func(b *testing.B) {
			pw, err := PackConvWeights(p, w)
			if err != nil {
				b.Fatal(err)
			}
			benchConv(b, 2*float64(p.N*p.M*oh*ow*kk), func() error { return ctx.Conv2DPacked(p, x, nil, pw, bias, y) })
		})
		if ConvNHWCFits(p) {
			b.Run(name+"_nhwc", func(b *testing.B) {
				pw, err := PackConvNHWC(p, w)
				if err != nil {
					b.Fatal(err)
				}
				benchConv(b, 2*float64(p.N*p.M*oh*ow*kk), func() error { return ctx.ConvNHWC(p, x, false, pw, bias, y, ActNone, nil) })
			})
		}
		ctx.Close()
	}
}
