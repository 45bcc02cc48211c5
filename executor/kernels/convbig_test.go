package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConvLargeChannels reports GFLOP/s and thread CPU ns/op of the
// convolutions of 64–2048 channels that carry ResNet-50's and
// DenseNet-121's time (packed weights, bias), one thread.
func BenchmarkConvLargeChannels(b *testing.B) {
	conv := func(k, s, c, m, h int) Conv2D {
		pd := k / 2
		return Conv2D{N: 1, C: c, H: h, W: h, M: m, KH: k, KW: k, SH: s, SW: s, DH: 1, DW: 1, PT: pd, PL: pd, PB: pd, PR: pd, Groups: 1}
	}
	r := rand.New(rand.NewPCG(15, 16))
	for _, p := range []Conv2D{
		conv(7, 2, 3, 64, 224), conv(3, 1, 64, 64, 56), conv(3, 1, 128, 128, 28), conv(3, 1, 256, 256, 14), conv(3, 1, 512, 512, 7),
		conv(3, 2, 256, 256, 28), conv(1, 1, 64, 256, 56), conv(1, 1, 256, 1024, 14), conv(1, 1, 1024, 256, 14),
		conv(1, 1, 512, 2048, 7), conv(1, 2, 512, 1024, 28),
		conv(3, 1, 128, 32, 56), conv(3, 1, 128, 32, 28), conv(3, 1, 128, 32, 14), conv(1, 1, 224, 128, 56),
		conv(1, 1, 480, 128, 28), conv(1, 1, 992, 128, 14),
	} {
		oh, ow := p.Out()
		b.Run(fmt.Sprintf("k%d_s%d_c%d_m%d_%d", p.KH, p.SH, p.C, p.M, p.H), func(b *testing.B) {
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
