package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// convNHWCCases are convolutions ConvNHWC takes: RegNet's groups of 16
// and 8 channels at stride 1 and 2, two images, groups of 24 and 32 (two
// registers, the last masked), 5×5 and dilated taps, no padding, a tiny
// image whose every pixel is an edge, and the mobile nets' stems (3
// channels in, one group of 16, 24 or 32 out, stride 2, odd sizes).
func convNHWCCases() []Conv2D {
	g := func(n, c, h, w, m, groups, k, s, pad, d int) Conv2D {
		return Conv2D{N: n, C: c, H: h, W: w, M: m, KH: k, KW: k, SH: s, SW: s, DH: d, DW: d, PT: pad, PL: pad, PB: pad, PR: pad, Groups: groups}
	}
	return []Conv2D{
		g(1, 64, 28, 28, 64, 4, 3, 1, 1, 1),
		g(1, 64, 28, 28, 64, 4, 3, 2, 1, 1),
		g(2, 48, 14, 14, 48, 6, 3, 1, 1, 1),
		g(1, 160, 7, 7, 160, 10, 3, 1, 1, 1),
		g(1, 48, 9, 11, 48, 2, 3, 1, 1, 1),
		g(1, 64, 10, 10, 64, 2, 3, 2, 1, 1),
		g(1, 32, 12, 12, 40, 4, 5, 1, 2, 1),
		g(1, 32, 13, 13, 32, 2, 3, 1, 2, 2),
		g(1, 32, 9, 9, 32, 2, 3, 1, 0, 1),
		g(1, 32, 2, 2, 32, 2, 3, 1, 1, 1),
		g(1, 3, 224, 224, 16, 1, 3, 2, 1, 1),
		g(1, 3, 57, 61, 24, 1, 3, 2, 1, 1),
		g(2, 3, 30, 30, 32, 1, 3, 2, 1, 1),
		g(1, 8, 20, 20, 12, 1, 3, 1, 1, 1),
	}
}

// TestConvNHWC checks ConvNHWC, from NHWC and from NCHW (planar)
// input, against a float64 convolution and, bit for bit, against the
// NCHW paths of Conv2DPackedAct on 1 to 3 threads.
func TestConvNHWC(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ran := 0
	for _, p := range convNHWCCases() {
		if !ConvNHWCFits(p) {
			continue
		}
		ran++
		for _, act := range []Act{ActNone, ActRelu, ActRelu6} {
			for _, withBias := range []bool{true, false} {
				name := fmt.Sprintf("%dx%dx%dx%d→%d_g%d_k%d_s%d_p%d_d%d_act%d_bias%v", p.N, p.C, p.H, p.W, p.M, p.Groups, p.KH, p.SH, p.PT, p.DH, act, withBias)
				x := randSlice(r, p.N*p.C*p.H*p.W)
				w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
				var bias []float32
				if withBias {
					bias = randSlice(r, p.M)
				}
				oh, ow := p.Out()
				pg, err := PackConvNHWC(p, w)
				if err != nil {
					t.Fatal(err)
				}
				xn := toNHWC(x, p.N, p.C, p.H, p.W)
				want := checkBitsOfNCHW(t, name, p, x, w, bias, act, false,
					func(ctx *Context, y []float32) error { return ctx.ConvNHWC(p, xn, false, pg, bias, y, act, nil) },
					func(ctx *Context, y []float32) error { return ctx.ConvNHWC(p, x, true, pg, bias, y, act, nil) }) // planar input
				ref := naiveConv(p, x, w, bias)
				refN := make([]float32, len(ref))
				for i, v := range ref {
					refN[i] = float32(v)
				}
				refN = toNHWC(refN, p.N, p.M, oh, ow)
				for i, g := range want {
					v := float64(refN[i])
					switch act {
					case ActRelu:
						v = max(v, 0)
					case ActRelu6:
						v = min(max(v, 0), 6)
					}
					if d := math.Abs(float64(g) - v); d > 1e-4*(1+math.Abs(v)) {
						t.Fatalf("%s: element %d = %v, float64 convolution %v", name, i, g, v)
					}
				}
			}
		}
	}
	if ran == 0 {
		t.Skip("no AVX-512 table rows kernels here")
	}
}
