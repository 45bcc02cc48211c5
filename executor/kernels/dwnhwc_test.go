package kernels

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// toNHWC returns the N × C × H × W tensor x as N × H × W × C.
func toNHWC(x []float32, n, c, h, w int) []float32 {
	y := make([]float32, len(x))
	for i := 0; i < n; i++ {
		for ch := 0; ch < c; ch++ {
			for p := 0; p < h*w; p++ {
				y[(i*h*w+p)*c+ch] = x[(i*c+ch)*h*w+p]
			}
		}
	}
	return y
}

func dwNHWCCases() []Conv2D {
	dw := func(n, c, h, w, k, s, d, pt, pl, pb, pr int) Conv2D {
		return Conv2D{N: n, C: c, H: h, W: w, M: c, KH: k, KW: k, SH: s, SW: s, DH: d, DW: d, PT: pt, PL: pl, PB: pb, PR: pr, Groups: c}
	}
	return []Conv2D{
		dw(1, 88, 28, 28, 3, 1, 1, 1, 1, 1, 1), // split mid-row on 2 and 3 threads
		dw(2, 96, 20, 19, 5, 1, 1, 2, 2, 2, 2), // and across the images
		dw(1, 17, 13, 11, 3, 2, 1, 1, 1, 1, 1),
		dw(2, 40, 14, 14, 5, 1, 1, 2, 2, 2, 2),
		dw(1, 72, 28, 28, 5, 2, 1, 1, 1, 2, 2), // TF "same" padding: more after
		dw(1, 16, 7, 7, 3, 1, 1, 1, 1, 1, 1),
		dw(1, 7, 9, 10, 3, 1, 2, 2, 2, 2, 2), // dilated
		dw(1, 1, 5, 5, 3, 1, 1, 0, 0, 0, 0),
		dw(1, 33, 1, 1, 3, 1, 1, 1, 1, 1, 1),
		dw(1, 24, 6, 23, 3, 3, 1, 0, 2, 1, 0),
		dw(1, 5, 4, 4, 1, 1, 1, 2, 2, 2, 2), // rows and columns with no tap inside
		{N: 1, C: 20, H: 9, W: 12, M: 20, KH: 3, KW: 5, SH: 1, SW: 2, DH: 1, DW: 1, PT: 1, PL: 2, PB: 1, PR: 2, Groups: 20},
	}
}

func TestDepthwiseNHWC(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range dwNHWCCases() {
		for _, act := range []Act{ActNone, ActRelu, ActRelu6} {
			name := fmt.Sprintf("%dx%dx%dx%d_k%dx%d_s%d_d%d_act%d", p.N, p.C, p.H, p.W, p.KH, p.KW, p.SH, p.DH, act)
			x := randSlice(r, p.N*p.C*p.H*p.W)
			w := randSlice(r, p.C*p.KH*p.KW)
			for i := range w {
				w[i] *= 4
			}
			bias := randSlice(r, p.C)
			ref := naiveConv(p, x, w, bias)
			oh, ow := p.Out()
			refF := make([]float32, len(ref))
			for i, v := range ref {
				refF[i] = float32(v)
			}
			want := toNHWC(refF, p.N, p.C, oh, ow)
			switch act {
			case ActRelu:
				for i := range want {
					want[i] = max(want[i], 0)
				}
			case ActRelu6:
				for i := range want {
					want[i] = min(max(want[i], 0), 6)
				}
			}
			pw, err := PackDepthwise(p, w)
			if err != nil {
				t.Fatal(err)
			}
			xn := toNHWC(x, p.N, p.C, p.H, p.W)
			want64 := make([]float64, len(want))
			for i, v := range want {
				want64[i] = float64(v)
			}
			var first []float32
			for _, threads := range []int{1, 2, 3} {
				ctx := NewContext(threads)
				buf := make([]float32, len(want)+1)
				buf[len(want)] = 42
				y := buf[:len(want)]
				err := ctx.DepthwiseNHWC(p, xn, pw, bias, y, act, nil)
				ctx.Close()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if buf[len(want)] != 42 {
					t.Fatalf("%s: wrote past the output", name)
				}
				first = checkThreads(t, fmt.Sprintf("%s, %d threads", name, threads), y, want64, 1e-5*float64(p.KH*p.KW), first)
			}
		}
	}
}

func TestDepthwiseNHWCErrors(t *testing.T) {
	p := Conv2D{N: 1, C: 8, H: 5, W: 5, M: 8, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 8}
	pw, err := PackDepthwise(p, make([]float32, 72))
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]float32, 200), make([]float32, 200)
	q := p
	q.C, q.M, q.Groups = 4, 4, 4
	full := p
	full.Groups = 1
	big := p
	big.KH, big.KW = 9, 9
	var ctx *Context
	for name, call := range map[string]func() error{
		"short input":   func() error { return ctx.DepthwiseNHWC(p, x[:199], pw, nil, y, ActNone, nil) },
		"short output":  func() error { return ctx.DepthwiseNHWC(p, x, pw, nil, y[:199], ActNone, nil) },
		"wrong weights": func() error { return ctx.DepthwiseNHWC(q, x[:100], pw, nil, y[:100], ActNone, nil) },
		"bad act":       func() error { return ctx.DepthwiseNHWC(p, x, pw, nil, y, Act(7), nil) },
		"not depthwise": func() error { _, err := PackDepthwise(full, make([]float32, 576)); return err },
		"too many taps": func() error { _, err := PackDepthwise(big, make([]float32, 648)); return err },
		"short weights": func() error { _, err := PackDepthwise(p, make([]float32, 71)); return err },
	} {
		var se *ShapeError
		if err := call(); !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a ShapeError", name, err)
		}
	}
}

// BenchmarkDepthwiseLayouts times a mobile net's depthwise convolutions
// (MobileNet-v3-small and -v2) as NHWC steps (DepthwiseNHWC) and as the
// NCHW steps the executor runs today (Conv2DPackedAct), at 1 and 2
// threads.
func BenchmarkDepthwiseLayouts(b *testing.B) {
	dw := func(c, hw, k, s int) Conv2D {
		return Conv2D{N: 1, C: c, H: hw, W: hw, M: c, KH: k, KW: k, SH: s, SW: s, DH: 1, DW: 1, PT: k / 2, PL: k / 2, PB: k / 2, PR: k / 2, Groups: c}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, p := range []Conv2D{dw(16, 112, 3, 2), dw(72, 56, 3, 2), dw(88, 28, 3, 1), dw(96, 28, 5, 2), dw(240, 14, 5, 1),
		dw(576, 7, 5, 1), dw(144, 56, 3, 1), dw(384, 14, 3, 1), dw(960, 7, 3, 1)} {
		oh, ow := p.Out()
		x, w, bias := randSlice(r, p.C*p.H*p.W), randSlice(r, p.C*p.KH*p.KW), randSlice(r, p.C)
		y := make([]float32, p.C*oh*ow)
		pw, err := PackDepthwise(p, w)
		if err != nil {
			b.Fatal(err)
		}
		pc, err := PackConvWeights(p, w)
		if err != nil {
			b.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			ctx := NewContext(threads)
			b.Run(fmt.Sprintf("%dch_%d²_k%ds%d/nhwc/%dt", p.C, p.H, p.KH, p.SH, threads), func(b *testing.B) {
				defer ctx.Hold()()
				for b.Loop() {
					if err := ctx.DepthwiseNHWC(p, x, pw, bias, y, ActRelu, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%dch_%d²_k%ds%d/nchw/%dt", p.C, p.H, p.KH, p.SH, threads), func(b *testing.B) {
				defer ctx.Hold()()
				for b.Loop() {
					if err := ctx.Conv2DPackedAct(p, x, w, pc, bias, y, ActRelu, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			ctx.Close()
		}
	}
}
