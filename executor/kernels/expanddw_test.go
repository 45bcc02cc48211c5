package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestExpandDepthwise checks Conv2DAfter against the two steps it
// replaces (Conv2DPackedAct, then Conv2DPackedClip), bit for bit, on 1–4
// threads: the expansion's output and the depthwise output, each
// element's epilogue run exactly once, on the planes of one thread
// (per-plane depthwise), of depthwiseSmall's blocks of 16 and 8 and its
// tail planes, with and without packed weights, bias and activations.
func TestExpandDepthwise(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	inf := float32(math.Inf(1))
	type dw struct{ k, s, pad int }
	cases := []struct {
		c, m, h, w int
		d          dw
		packed     bool
	}{
		{16, 96, 28, 28, dw{3, 2, 1}, true},  // planes
		{16, 72, 56, 56, dw{3, 1, 1}, true},  // planes, tiles or rows
		{13, 37, 30, 31, dw{3, 2, 1}, true},  // odd sizes
		{24, 144, 14, 14, dw{3, 1, 1}, true}, // blocks of 16, one after the other on 2 threads
		{24, 192, 14, 14, dw{3, 1, 1}, true}, // blocks of 16
		{48, 576, 7, 7, dw{5, 1, 2}, true},
		{40, 240, 7, 7, dw{5, 1, 2}, true},
		{24, 56, 14, 14, dw{5, 2, 2}, true}, // a block of 8 at the end
		{8, 20, 9, 11, dw{3, 1, 1}, true},   // tail planes
		{16, 96, 28, 28, dw{3, 1, 1}, false},
		{24, 144, 14, 14, dw{3, 2, 1}, false},
		{40, 240, 14, 14, dw{5, 1, 2}, true}, // two chunks of 120 on 2 threads: blocks of 16, then 8
		{24, 240, 28, 28, dw{3, 1, 1}, true}, // pieces of 48 within the chunks
	}
	for i, c := range cases {
		pe := Conv2D{N: 1, C: c.c, H: c.h, W: c.w, M: c.m, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
		pd := Conv2D{N: 1, C: c.m, H: c.h, W: c.w, M: c.m, KH: c.d.k, KW: c.d.k, SH: c.d.s, SW: c.d.s, DH: 1, DW: 1,
			PT: c.d.pad, PL: c.d.pad, PB: c.d.pad, PR: c.d.pad, Groups: c.m}
		oh, ow := pd.Out()
		x := randSlice(r, c.c*c.h*c.w)
		we := randSlice(r, c.m*c.c)
		wd := randSlice(r, c.m*c.d.k*c.d.k)
		var pw []*Packed
		if c.packed {
			var err error
			if pw, err = PackConvWeights(pe, we); err != nil {
				t.Fatal(err)
			}
		}
		for v, act := range []Act{ActNone, ActRelu, ActRelu6} {
			var be, bd []float32
			if v > 0 {
				be, bd = randSlice(r, c.m), randSlice(r, c.m)
			}
			lo, hi := -inf, inf
			if v == 2 {
				lo, hi = 0, 6
			}
			// The epilogues: an element-by-element step, counting the
			// times each element is seen.
			epi := func(y []float32, seen []int32) Epilogue {
				return func(off, n int) {
					for j := off; j < off+n; j++ {
						y[j] = y[j]*0.75 + 0.125
						seen[j]++
					}
				}
			}
			nMid, nOut := c.m*c.h*c.w, c.m*oh*ow
			wantMid, wantOut := make([]float32, nMid), make([]float32, nOut)
			one := NewContext(1)
			if err := one.Conv2DPackedAct(pe, x, we, pw, be, wantMid, act, epi(wantMid, make([]int32, nMid))); err != nil {
				t.Fatal(err)
			}
			if err := one.Conv2DPackedClip(pd, wantMid, wd, nil, bd, wantOut, lo, hi, epi(wantOut, make([]int32, nOut))); err != nil {
				t.Fatal(err)
			}
			for _, th := range []int{1, 2, 3, 4} {
				ctx := NewContext(th)
				mid, out := make([]float32, nMid), make([]float32, nOut)
				seenMid, seenOut := make([]int32, nMid), make([]int32, nOut)
				d, ok := ctx.Defer(pe, x, we, pw, be, mid, act, epi(mid, seenMid))
				if !ok || !d.Feeds(pd, mid) {
					t.Fatalf("case %d: not deferred (%v) or not fed", i, ok)
				}
				if err := ctx.Conv2DAfter(&d, pd, mid, wd, bd, out, lo, hi, epi(out, seenOut)); err != nil {
					t.Fatal(err)
				}
				ctx.Close()
				for j := range mid {
					if math.Float32bits(mid[j]) != math.Float32bits(wantMid[j]) || seenMid[j] != 1 {
						t.Fatalf("case %d, act %d, %d threads: expansion element %d = %v (epilogue %d times), want %v", i, act, th, j, mid[j], seenMid[j], wantMid[j])
					}
				}
				for j := range out {
					if math.Float32bits(out[j]) != math.Float32bits(wantOut[j]) || seenOut[j] != 1 {
						t.Fatalf("case %d, act %d, %d threads: output element %d = %v (epilogue %d times), want %v", i, act, th, j, out[j], seenOut[j], wantOut[j])
					}
				}
			}
		}
	}
}

// TestFuseParts checks the chunks of Conv2DAfter: one on one thread or
// for little work; else the count whose chunks the threads finish
// soonest, a chunk that is not whole blocks of 16 channels costing more;
// none when they cannot be even.
func TestFuseParts(t *testing.T) {
	for _, c := range []struct {
		m, align, t, chWork, pen int
		want                     []int
	}{
		{240, 24, 1, 10000, 4000, []int{0, 240}},
		{240, 24, 2, 10, 4, []int{0, 240}}, // too little work to split
		// Four chunks (48, 72, 48, 72) leave one thread 144 channels
		// taking them in turn, three (72, 72, 96) 168: two of 120.
		{240, 24, 2, 10000, 4000, []int{0, 120, 240}},
		{576, 24, 2, 10000, 0, []int{0, 144, 288, 432, 576}},
		{36, 24, 2, 10000, 0, nil}, // 24 + 12
		{96, 12, 2, 10000, 0, []int{0, 24, 48, 72, 96}},
	} {
		got := fuseParts(c.m, c.align, c.t, c.chWork, c.pen)
		if !slices.Equal(got, c.want) {
			t.Errorf("fuseParts(%d, %d, %d, %d, %d) = %v, want %v", c.m, c.align, c.t, c.chWork, c.pen, got, c.want)
		}
	}
	// Pieces: whole blocks of 16 where they fit in fuseBlock.
	for _, c := range []struct{ m, align, hw, sub int }{
		{240, 24, 14 * 14, 240},
		{240, 24, 28 * 28, 48}, // 83 fit: 48, not 72 (16 + 8 in three)
		{72, 24, 56 * 56, 24},  // 20 fit: one block of 24 at least
		{96, 12, 112 * 112, 12},
	} {
		if got := fuseSub(c.m, c.align, c.hw, c.align == 24); got != c.sub {
			t.Errorf("fuseSub(%d, %d, %d) = %d, want %d", c.m, c.align, c.hw, got, c.sub)
		}
	}
	if fuseEights([]int{0, 48, 96}, 48) || !fuseEights([]int{0, 120, 240}, 240) || !fuseEights([]int{0, 96}, 72) {
		t.Error("fuseEights")
	}
}

// TestDeferRefuses checks that Defer keeps to what Conv2DAfter runs and
// that Feeds names the depthwise convolutions of its output only.
func TestDeferRefuses(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	ctx := NewContext(2)
	defer ctx.Close()
	base := Conv2D{N: 1, C: 8, H: 10, W: 10, M: 24, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
	for _, mod := range []func(p *Conv2D){
		func(p *Conv2D) { p.N = 2 },
		func(p *Conv2D) { p.M = 12 }, // not an expansion
		func(p *Conv2D) { p.Groups = 2 },
		func(p *Conv2D) { p.SH, p.SW = 2, 2 },
		func(p *Conv2D) { p.KH, p.KW, p.PT, p.PL, p.PB, p.PR = 3, 3, 1, 1, 1, 1 },
	} {
		p := base
		mod(&p)
		oh, ow := p.Out()
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		y := make([]float32, p.N*p.M*oh*ow)
		if _, ok := ctx.Defer(p, x, w, nil, nil, y, ActNone, nil); ok {
			t.Errorf("%+v deferred", p)
		}
	}
	x := randSlice(r, 8*100)
	y := make([]float32, 24*100)
	d, ok := ctx.Defer(base, x, randSlice(r, 24*8), nil, nil, y, ActNone, nil)
	if !ok {
		t.Fatal("not deferred")
	}
	dw := Conv2D{N: 1, C: 24, H: 10, W: 10, M: 24, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 24}
	if !d.Feeds(dw, y) {
		t.Error("a depthwise convolution of the output not fed")
	}
	if d.Feeds(dw, make([]float32, len(y))) {
		t.Error("fed a convolution of another tensor")
	}
	full := dw
	full.Groups = 1
	if d.Feeds(full, y) {
		t.Error("fed a convolution that mixes channels")
	}
	if err := ctx.Conv2DAfter(&d, full, y, randSlice(r, 24*24*9), nil, make([]float32, 24*100), 0, 0, nil); err == nil {
		t.Error("Conv2DAfter ran a convolution it does not feed")
	}
}

// BenchmarkExpandDepthwise times Conv2DAfter against the two steps it
// replaces on mobile-net layers (ReLU6 after both, packed weights).
func BenchmarkExpandDepthwise(b *testing.B) {
	r := rand.New(rand.NewPCG(85, 86))
	for _, c := range []struct {
		name          string
		c, m, h, k, s int
	}{
		{"16-96x112-3s2", 16, 96, 112, 3, 2},
		{"16-72x56-3s2", 16, 72, 56, 3, 2},
		{"24-144x56-3s1", 24, 144, 56, 3, 1},
		{"24-88x28-3s1", 24, 88, 28, 3, 1},
		{"24-96x28-5s2", 24, 96, 28, 5, 2},
		{"40-240x14-5s1", 40, 240, 14, 5, 1},
		{"96-576x7-5s1", 96, 576, 7, 5, 1},
	} {
		pe := Conv2D{N: 1, C: c.c, H: c.h, W: c.h, M: c.m, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
		pad := c.k / 2
		pd := Conv2D{N: 1, C: c.m, H: c.h, W: c.h, M: c.m, KH: c.k, KW: c.k, SH: c.s, SW: c.s, DH: 1, DW: 1, PT: pad, PL: pad, PB: pad, PR: pad, Groups: c.m}
		oh, ow := pd.Out()
		x, we, wd := randSlice(r, c.c*c.h*c.h), randSlice(r, c.m*c.c), randSlice(r, c.m*c.k*c.k)
		be, bd := randSlice(r, c.m), randSlice(r, c.m)
		pw, err := PackConvWeights(pe, we)
		if err != nil {
			b.Fatal(err)
		}
		mid, out := make([]float32, c.m*c.h*c.h), make([]float32, c.m*oh*ow)
		for _, th := range []int{1, 2} {
			ctx := NewContext(th)
			b.Run(fmt.Sprintf("%s/t%d/steps", c.name, th), func(b *testing.B) {
				for b.Loop() {
					if err := ctx.Conv2DPackedAct(pe, x, we, pw, be, mid, ActRelu6, nil); err != nil {
						b.Fatal(err)
					}
					if err := ctx.Conv2DPackedClip(pd, mid, wd, nil, bd, out, 0, 6, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/t%d/fused", c.name, th), func(b *testing.B) {
				for b.Loop() {
					d, ok := ctx.Defer(pe, x, we, pw, be, mid, ActRelu6, nil)
					if !ok {
						b.Fatal("not deferred")
					}
					if err := ctx.Conv2DAfter(&d, pd, mid, wd, bd, out, 0, 6, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			ctx.Close()
		}
	}
}
