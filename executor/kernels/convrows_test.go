package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestConvRowsMatchesIm2col: the fused row-block convolution (convRows)
// gives results bit-identical to the im2col path and within rounding of
// the float64 direct convolution, on 1 to 4 threads, on the mobile nets'
// first convolution (3 channels, 3×3 stride 2 on 224×224, 16 and 24
// outputs) and on odd shapes: odd sizes, 3 and 13 outputs (partial
// tiles), asymmetric pads, stride 3, dilation, groups, batch 2, stride 1
// (U-Net's first layer), 7×7 with 64 outputs (ResNet's first).
func TestConvRowsMatchesIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 1))
	cases := []Conv2D{
		{N: 1, C: 3, H: 224, W: 224, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 224, W: 224, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 61, W: 57, M: 13, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 2, C: 3, H: 33, W: 35, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 0, PL: 1, PB: 2, PR: 0, Groups: 1},
		{N: 1, C: 3, H: 9, W: 7, M: 3, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 5, W: 67, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 37, W: 41, M: 16, KH: 3, KW: 3, SH: 3, SW: 3, DH: 1, DW: 1, PT: 1, PL: 2, PB: 1, PR: 0, Groups: 1},
		{N: 1, C: 3, H: 29, W: 31, M: 8, KH: 3, KW: 3, SH: 2, SW: 2, DH: 2, DW: 2, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 1},
		{N: 1, C: 6, H: 27, W: 25, M: 10, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2},
		{N: 1, C: 2, H: 45, W: 43, M: 32, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 70, W: 67, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 5, H: 20, W: 19, M: 7, KH: 2, KW: 5, SH: 1, SW: 2, DH: 1, DW: 1, PT: 0, PL: 2, PB: 1, PR: 1, Groups: 1},
		// A 1-D convolution wider than its input (ONNX backend test
		// test_Conv1d_pad2size1: one input column, kernel 5, pads 2).
		{N: 1, C: 4, H: 1, W: 1, M: 4, KH: 1, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, PL: 2, PR: 2, Groups: 1},
		{N: 1, C: 3, H: 2, W: 3, M: 5, KH: 3, KW: 5, SH: 1, SW: 2, DH: 1, DW: 1, PT: 1, PL: 2, PB: 1, PR: 3, Groups: 1},
		// RegNetX's grouped 3×3 (groups of 16 and 24 channels): a last
		// panel of 4 pixels (half-width kernels) and of 17, 16-row
		// groups (an edge tile of 4 rows).
		{N: 1, C: 64, H: 14, W: 14, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 4},
		{N: 1, C: 48, H: 7, W: 7, M: 48, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 3},
		{N: 1, C: 48, H: 28, W: 28, M: 48, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2},
		// ResNet's first (7×7 stride 2 pad 3, 64 outputs), smaller.
		{N: 1, C: 3, H: 95, W: 89, M: 64, KH: 7, KW: 7, SH: 2, SW: 2, DH: 1, DW: 1, PT: 3, PL: 3, PB: 3, PR: 3, Groups: 1},
		// Outputs of rowsChanOuter bytes and more (channel panel by
		// channel panel): SqueezeNet 1.1's first (3×3/2, no pads, 64 on
		// 111²), 37 outputs (an edge tile of 1 row) on odd sizes with
		// asymmetric pads, a 7×7/2 with 64 outputs on 95×100.
		{N: 1, C: 3, H: 224, W: 224, M: 64, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 3, H: 241, W: 239, M: 37, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 0, PB: 0, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 190, W: 200, M: 64, KH: 7, KW: 7, SH: 2, SW: 2, DH: 1, DW: 1, PT: 3, PL: 3, PB: 2, PR: 3, Groups: 1},
	}
	big := 0
	for i, p := range cases {
		if oh, ow := p.Out(); p.M/p.Groups*oh*ow*4 >= rowsChanOuter {
			big++
		}
		if path := convPath(p); path != "rows" {
			if best.name == genericKernel.name {
				// The generic kernel's 4×16 tile sends some of these
				// shapes to another path (case 13: swapped pixels),
				// which its own tests check.
				continue
			}
			t.Fatalf("case %d %+v takes the %s path, want rows", i, p, path)
		}
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		oh, ow := p.Out()
		pw, err := PackConvWeights(p, w)
		if err != nil {
			t.Fatal(err)
		}
		for _, bias := range [][]float32{nil, randSlice(r, p.M)} {
			want := make([]float32, p.N*p.M*oh*ow)
			if err := NewContext(1).Conv2D(p, x, w, bias, want); err != nil {
				t.Fatal(err)
			}
			exact := naiveConv(p, x, w, bias)
			for j, v := range want {
				if d := math.Abs(float64(v) - exact[j]); !(d <= 1e-5*float64(p.C*p.KH*p.KW)+1e-5) {
					t.Fatalf("case %d: im2col y[%d] = %g, direct %g", i, j, v, exact[j])
				}
			}
			for _, th := range []int{1, 2, 3, 4} {
				y := make([]float32, len(want))
				for j := range y {
					y[j] = float32(math.NaN()) // every element must be written
				}
				x1 := NewContext(th)
				if err := x1.Conv2DPacked(p, x, nil, pw, bias, y); err != nil {
					t.Fatal(err)
				}
				x1.Close()
				name := fmt.Sprintf("case %d %+v, %d threads, bias %v", i, p, th, bias != nil)
				for j := range y {
					if math.Float32bits(y[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s: y[%d] = %v, im2col path %v", name, j, y[j], want[j])
					}
				}
			}
		}
	}
	if big != 3 {
		t.Fatalf("%d cases of rowsChanOuter bytes of output or more, want 3", big)
	}
}

// TestConvRowsOneCall: the first convolution of the mobile nets is one
// parallel call on 2 threads (planes, packing, bias and output in each
// chunk), and stays on the caller when it is too small to split.
func TestConvRowsOneCall(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 2))
	for _, c := range []struct {
		p     Conv2D
		calls uint64
	}{
		{Conv2D{N: 1, C: 3, H: 224, W: 224, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}, 1},
		{Conv2D{N: 1, C: 3, H: 16, W: 16, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}, 0},
	} {
		p := c.p
		oh, ow := p.Out()
		pw, err := PackConvWeights(p, randSlice(r, p.M*p.C*p.KH*p.KW))
		if err != nil {
			t.Fatal(err)
		}
		x := NewContext(2)
		if err := x.Conv2DPacked(p, randSlice(r, p.C*p.H*p.W), nil, pw, randSlice(r, p.M), make([]float32, p.M*oh*ow)); err != nil {
			t.Fatal(err)
		}
		if got := x.Calls(); got != c.calls {
			t.Errorf("%+v: %d parallel calls, want %d", p, got, c.calls)
		}
		x.Close()
	}
}

// TestSplit2: even and odd elements of every length, from 8-byte
// aligned and unaligned starts (the SIMD head: 8 pairs a step).
func TestSplit2(t *testing.T) {
	buf := make([]float32, 80)
	for i := range buf {
		buf[i] = float32(i) + 0.5
	}
	for start := 0; start < 2; start++ {
		for n := 0; n < 70; n++ {
			src := buf[start : start+n]
			ev, od := make([]float32, (n+1)/2), make([]float32, n/2)
			split2(src, ev, od)
			for j, v := range src {
				got := ev
				if j%2 == 1 {
					got = od
				}
				if got[j/2] != v {
					t.Fatalf("start %d, length %d: element %d is %v, want %v", start, n, j, got[j/2], v)
				}
			}
		}
	}
}

// TestConvRowsPackedMismatch: weights packed for another geometry are an
// error, not a read past them.
func TestConvRowsPackedMismatch(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 3))
	p := Conv2D{N: 1, C: 3, H: 20, W: 20, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}
	q := p
	q.M = 8
	pw, err := PackConvWeights(q, randSlice(r, q.M*q.C*q.KH*q.KW))
	if err != nil {
		t.Fatal(err)
	}
	oh, ow := p.Out()
	err = NewContext(1).Conv2DPacked(p, randSlice(r, p.C*p.H*p.W), nil, pw, nil, make([]float32, p.M*oh*ow))
	var se *ShapeError
	if !asShape(err, &se) {
		t.Fatalf("got %v, want a ShapeError", err)
	}
}

// TestConvRowsRandom: convRows on random geometries (groups, kernels of
// 1–5 taps a side, strides 1–3, dilations, asymmetric pads, odd sizes,
// blocks and chunks of rows starting inside and outside the padding,
// last panels of any width read in place, Relu in the micro-kernel) is
// bit-identical to the im2col path on 1 to 3 threads and on a Context
// running every geometry in turn. It covers the stride-1 planes shifted
// from the input's rows (OW = W) and the stride-2 planes shifted from a
// whole column phase, or from the first OW elements of a longer phase
// and the input row (setCut2).
func TestConvRowsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 4))
	var flat1, derived, cut2, n int
	// One more run of each geometry on a Context kept throughout: its
	// scratch's lists and row tables were made for other geometries.
	kept := NewContext(2)
	defer kept.Close()
	for iter := 0; iter < 3000 && n < 150; iter++ {
		g := 1 + r.IntN(3)
		p := Conv2D{N: 1 + r.IntN(2), C: g * (1 + r.IntN(20)), H: 1 + r.IntN(48), W: 1 + r.IntN(48), M: g * (1 + r.IntN(28)),
			KH: 1 + r.IntN(5), KW: 1 + r.IntN(5), SH: 1 + r.IntN(3), SW: 1 + r.IntN(3), DH: 1 + r.IntN(2), DW: 1 + r.IntN(2), Groups: g}
		if r.IntN(2) == 0 {
			// Most often RegNet's: 3×3, pads 1, stride 1 or 2.
			p.KH, p.KW, p.DH, p.DW = 3, 3, 1, 1
			p.SH = 1 + r.IntN(2)
			p.SW = p.SH
			p.PT, p.PL, p.PB, p.PR = 1, 1, 1, 1
		} else {
			p.PT, p.PL, p.PB, p.PR = r.IntN(p.KH), r.IntN(p.KW), r.IntN(p.KH), r.IntN(p.KW)
		}
		if oh, ow := p.Out(); oh < 1 || ow < 1 || convPath(p) != "rows" {
			continue
		}
		n++
		oh, ow := p.Out()
		if p.SH == 1 && p.SW == 1 && ow == p.W {
			flat1++
		}
		if p.SW == 2 && p.KW > 1 {
			derived++
		}
		if r.IntN(2) == 0 && p.SW == 2 {
			// No right pad, W odd or W > 2·OW: the phases longer than OW
			// (setCut2).
			p.PR = 0
			if oh, ow := p.Out(); oh < 1 || ow < 1 || convPath(p) != "rows" {
				continue
			}
		}
		oh, ow = p.Out()
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		var bias []float32
		if r.IntN(3) > 0 {
			bias = randSlice(r, p.M)
		}
		act := Act(r.IntN(2))
		pw, err := PackConvWeights(p, w)
		if err != nil {
			t.Fatal(err)
		}
		var rc rowsConv
		if rc.set(&p, best, pw[0], nil, p.C/p.Groups, p.M/p.Groups, nil, nil); rc.cut2 {
			cut2++
		}
		want := make([]float32, p.N*p.M*oh*ow)
		if err := NewContext(1).Conv2D(p, x, w, bias, want); err != nil {
			t.Fatal(err)
		}
		if act == ActRelu {
			for j, v := range want {
				if v < 0 {
					want[j] = 0
				}
			}
		}
		for th := 1; th <= 4; th++ {
			y := make([]float32, len(want))
			for j := range y {
				y[j] = float32(math.NaN())
			}
			x1 := kept
			if th < 4 {
				x1 = NewContext(th)
			}
			if err := x1.Conv2DPackedAct(p, x, nil, pw, bias, y, act, nil); err != nil {
				t.Fatal(err)
			}
			if th < 4 {
				x1.Close()
			}
			for j := range y {
				if math.Float32bits(y[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%+v, %d threads, bias %v, act %d: y[%d] = %v, im2col path %v", p, th, bias != nil, act, j, y[j], want[j])
				}
			}
		}
	}
	t.Logf("%d geometries: %d stride-1 OW = W, %d stride-2 columns, %d stride-2 phases longer than OW", n, flat1, derived, cut2)
	if n < 100 || flat1 < 20 || derived < 20 || cut2 < 10 {
		t.Fatalf("%d geometries on the rows path (%d stride-1 OW = W, %d stride-2 columns, %d phases longer than OW), want at least 100, 20, 20, 10", n, flat1, derived, cut2)
	}
}

// TestShiftPlane: shiftPlane against element-by-element copies, for
// shifts reaching before and past the source, any columns [lo, hi).
func TestShiftPlane(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 5))
	for iter := 0; iter < 2000; iter++ {
		ow := 1 + r.IntN(12)
		rows := 1 + r.IntN(6)
		src := randSlice(r, r.IntN(rows*ow+2*ow+1))
		at := r.IntN(len(src)+2*ow+1) - ow - ow/2
		lo, hi := r.IntN(ow+1), r.IntN(ow+1)
		d := make([]float32, rows*ow)
		for j := range d {
			d[j] = float32(math.NaN())
		}
		shiftPlane(d, src, at, ow, lo, hi)
		for j, v := range d {
			want := float32(0)
			if q := j % ow; q >= lo && q < hi && at+j >= 0 && at+j < len(src) {
				want = src[at+j]
			}
			if math.Float32bits(v) != math.Float32bits(want) {
				t.Fatalf("ow %d, %d rows, %d source elements, at %d, columns [%d, %d): d[%d] = %v, want %v", ow, rows, len(src), at, lo, hi, j, v, want)
			}
		}
	}
}
