package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestDepthwiseSmallBits checks the depthwise convolution on small
// planes with 8 channels in a vector (depthwiseSmall) against the plane
// by plane path (plane1, dwRows) bit for bit on random geometries:
// planes 3–16 wide and high, kernels 3×3, 5×5 and others, strides 1–3,
// dilation, pads 0–3 on each side, channel counts with tails and
// several images, bias or not, no clamp, Relu, ReLU6 and a Clip, a few
// NaN inputs, 1–3 threads; and that the epilogue sees every element once.
// Run it with ONNXCONV_SGEMM_KERNEL=avx2 too (the old path's AVX2 rows).
func TestDepthwiseSmallBits(t *testing.T) {
	if dwPix8 == nil {
		t.Skip("no channels-in-vectors kernels")
	}
	r := rand.New(rand.NewPCG(23, 24))
	pix8 := dwPix8
	defer func() { dwPix8 = pix8 }()
	ran := 0
	for it := 0; it < 600; it++ {
		k := []int{3, 5, 3, 5, 1, 7}[r.IntN(6)]
		kw := k
		if k == 1 {
			kw = 9
		}
		s := 1 + r.IntN(2)
		if it%10 == 0 {
			s = 3
		}
		dil := 1
		if it%13 == 0 {
			dil = 2
		}
		c := 1 + r.IntN(50)
		p := Conv2D{N: 1 + r.IntN(2), C: c, M: c, H: 2 + r.IntN(15), W: 2 + r.IntN(15), KH: k, KW: kw, SH: s, SW: s, DH: dil, DW: dil,
			PT: r.IntN(4), PL: r.IntN(4), PB: r.IntN(4), PR: r.IntN(4), Groups: c}
		oh, ow := p.Out()
		if oh < 1 || ow < 1 || (k-1)*dil >= p.H+p.PT+p.PB || (kw-1)*dil >= p.W+p.PL+p.PR {
			continue
		}
		g := newDwGeom(&p)
		if !dwSmallOK(&p, g) {
			continue
		}
		ran++
		dwCompare(t, r, it, &p, func() { dwPix8 = nil }, func() { dwPix8 = pix8 })
	}
	if ran < 200 {
		t.Fatalf("only %d geometries ran channels in vectors", ran)
	}
}

// dwClamps are the clamps the depthwise tests take in turn: none, Relu,
// ReLU6 and a Clip.
var dwClamps = [][2]float32{{float32(math.Inf(-1)), float32(math.Inf(1))}, {0, float32(math.Inf(1))}, {0, 6}, {-0.3, 0.4}}

// dwCompare runs p's depthwise convolution on random inputs (a NaN in
// every fourth case, a bias in two of three, dwClamps[it%4], 1 + it%3
// threads) once the reference way (after old(), one thread) and once the
// way under test (after cur(), an epilogue counting each element), and
// fails t unless the two agree bit for bit and the epilogue saw every
// element once. It returns the inputs, the clamp and the output, and a
// name for the case.
func dwCompare(t *testing.T, r *rand.Rand, it int, p *Conv2D, old, cur func()) (x, w, bias []float32, cl [2]float32, got []float32, name string) {
	t.Helper()
	oh, ow := p.Out()
	x = randSlice(r, p.N*p.C*p.H*p.W)
	if it%4 == 0 {
		x[r.IntN(len(x))] = float32(math.NaN())
	}
	w = randSlice(r, p.M*p.KH*p.KW)
	if it%3 != 0 {
		bias = randSlice(r, p.M)
	}
	cl = dwClamps[it%len(dwClamps)]
	th := 1 + it%3
	want := make([]float32, p.N*p.M*oh*ow)
	got = make([]float32, len(want))
	for i := range got {
		got[i] = float32(math.NaN())
	}
	seen := make([]int, len(got))
	epi := func(off, n int) {
		for i := off; i < off+n; i++ {
			seen[i]++
		}
	}
	old()
	NewContext(1).depthwise(p, x, w, bias, want, cl[0], cl[1], nil)
	cur()
	NewContext(th).depthwise(p, x, w, bias, got, cl[0], cl[1], epi)
	name = fmt.Sprintf("%+v clamp %v threads %d bias %v", *p, cl, th, bias != nil)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: y[%d] = %g, want %g", name, i, got[i], want[i])
		}
		if seen[i] != 1 {
			t.Fatalf("%s: epilogue on y[%d] %d times", name, i, seen[i])
		}
	}
	return x, w, bias, cl, got, name
}

// dwLayer is a depthwise layer of the mobile nets: c channels of h×h, k×k
// taps at stride s, padded k/2 on each side.
func dwLayer(c, h, k, s int) Conv2D {
	return Conv2D{N: 1, C: c, H: h, W: h, M: c, KH: k, KW: k, SH: s, SW: s, DH: 1, DW: 1,
		PT: k / 2, PL: k / 2, PB: k / 2, PR: k / 2, Groups: c}
}

// BenchmarkDepthwiseSmall reports GFLOP/s and thread CPU ns/op of the
// mobile nets' depthwise layers on small planes, one thread, by planes
// (plane1: "planes") and with channels in vectors ("vectors", when the
// layer runs so).
func BenchmarkDepthwiseSmall(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	dw := dwLayer
	pix8 := dwPix8
	defer func() { dwPix8 = pix8 }()
	for _, p := range []Conv2D{dw(240, 14, 5, 1), dw(96, 14, 3, 1), dw(288, 14, 5, 2), dw(192, 14, 3, 2), dw(576, 7, 5, 1), dw(960, 7, 3, 1), dw(144, 28, 3, 2)} {
		oh, ow := p.Out()
		x, w := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*p.KH*p.KW)
		y := make([]float32, p.N*p.M*oh*ow)
		ctx := NewContext(1)
		for _, v := range []string{"planes", "vectors"} {
			b.Run(fmt.Sprintf("%dx%dx%d_k%d_s%d/%s", p.C, p.H, p.W, p.KH, p.SH, v), func(b *testing.B) {
				dwPix8 = pix8
				if v == "planes" {
					dwPix8 = nil
				}
				benchConv(b, 2*float64(p.N*p.M*oh*ow*p.KH*p.KW), func() error { return ctx.Conv2D(p, x, w, nil, y) })
			})
		}
	}
}

// TestDwLayoutCache: a Context builds a geometry's depthwise tables once
// (the same tables for any channel count), equal to fresh ones, and keeps
// at most maxDwLayouts geometries.
func TestDwLayoutCache(t *testing.T) {
	x := NewContext(1)
	p := Conv2D{N: 1, C: 96, H: 14, W: 14, M: 96, KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 96}
	g := newDwGeom(&p)
	a := x.dwLayout(&p, g, 16)
	q := p
	q.C, q.M, q.Groups = 240, 240, 240
	if b := x.dwLayout(&q, newDwGeom(&q), 16); b != a {
		t.Error("the same geometry with other channels built its tables again")
	}
	if !reflect.DeepEqual(a, newDwLayout(&p, g, 16)) {
		t.Error("cached tables differ from fresh ones")
	}
	if c := x.dwLayout(&p, g, 8); c == a || c.lanes != 8 {
		t.Error("8 lanes got the 16-lane tables")
	}
	for h := 8; h < 8+2*maxDwLayouts; h++ {
		r := p
		r.H = h
		if d := x.dwLayout(&r, newDwGeom(&r), 16); !reflect.DeepEqual(d, newDwLayout(&r, newDwGeom(&r), 16)) {
			t.Fatalf("H %d: tables differ from fresh ones", h)
		}
	}
	n := 0
	x.layouts.Range(func(any, any) bool { n++; return true })
	if n > maxDwLayouts || x.nLayouts.Load() != int64(n) {
		t.Errorf("%d tables cached (count %d), want at most %d", n, x.nLayouts.Load(), maxDwLayouts)
	}
	var nilx *Context
	if d := nilx.dwLayout(&p, g, 16); !reflect.DeepEqual(d, a) {
		t.Error("a nil Context's tables differ")
	}
}
