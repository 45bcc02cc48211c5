package kernels

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestSIMDSigmoidClip: Sigmoid, SiLU and Clip, with AVX2 when the CPU has
// it, are bit-identical to their Go loops (NaN for NaN) for every length
// 0–20 and offset 0–8 and in place, over a sweep, the exponential's
// bounds' neighbours, ±Inf, NaN and −0.
func TestSIMDSigmoidClip(t *testing.T) {
	t.Logf("SGEMM kernel %s", KernelName())
	xs := append(mathInputs(-100, 100), mathInputs(-30, 30)...)
	for _, v := range []float32{sigExpLo, -sigExpLo, sigExpHi, -sigExpHi, -87.33654, 0, -4} {
		for range 40 {
			xs = append(xs, v, -v)
			v = math.Nextafter32(v, float32(math.Inf(-1)))
		}
	}
	type unary struct {
		name     string
		vec, ref func(x, y []float32)
	}
	fs := []unary{{"sigmoid", Sigmoid, sigmoidExpGeneric}, {"silu", SiLU, siluExpGeneric}}
	for _, b := range [][2]float32{{0, 6}, {-1, 1}, {0, 0}, {float32(math.Inf(-1)), 6}, {0, float32(math.Inf(1))},
		{float32(math.Copysign(0, -1)), 6}, {float32(math.NaN()), 6}, {0, float32(math.NaN())}} {
		lo, hi := b[0], b[1]
		fs = append(fs, unary{"clip", func(x, y []float32) { Clip(x, y, lo, hi) }, func(x, y []float32) { clipGeneric(x, y, lo, hi) }})
	}
	// Sigmoid and SiLU: the exact bits, NaNs too (x quieted, checked below).
	same := func(k int, a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b) || k > 1 && sameBits(a, b)
	}
	got, want := make([]float32, len(xs)), make([]float32, len(xs))
	for k, f := range fs {
		f.vec(xs, got)
		f.ref(xs, want)
		for i := range xs {
			if !same(k, got[i], want[i]) {
				t.Fatalf("%s #%d (%g) = %g, Go %g", f.name, k, xs[i], got[i], want[i])
			}
		}
		for off := 0; off < 9; off++ {
			for n := 0; n <= 20; n++ {
				y := make([]float32, n)
				f.vec(xs[off:off+n], y)
				in := append([]float32(nil), xs[off:off+n]...)
				f.vec(in, in)
				for i := range y {
					if !same(k, y[i], want[off+i]) || !same(k, in[i], want[off+i]) {
						t.Fatalf("%s #%d over [%d, %d): y[%d] = %g (in place %g), want %g", f.name, k, off, off+n, i, y[i], in[i], want[off+i])
					}
				}
			}
		}
	}
}

// TestClipValues: Clip's values against the definition, ReLU6 bounds:
// NaN stays NaN, ±Inf go to the bounds, −0 stays −0 (not below 0).
func TestClipValues(t *testing.T) {
	inf := float32(math.Inf(1))
	x := []float32{-inf, -1, float32(math.Copysign(0, -1)), 0, 3.5, 6, 7, inf, float32(math.NaN()), -2, 5.9999995}
	want := []float32{0, 0, float32(math.Copysign(0, -1)), 0, 3.5, 6, 6, 6, float32(math.NaN()), 0, 5.9999995}
	x = append(x, x...)
	want = append(want, want...)
	y := make([]float32, len(x))
	Clip(x, y, 0, 6)
	for i := range y {
		if !sameBits(y[i], want[i]) {
			t.Fatalf("Clip(%g) = %g, want %g", x[i], y[i], want[i])
		}
	}
}

// TestSigmoidError: Sigmoid against float64 1/(1+e^−x) over [−100, 100]
// and random bit patterns: relative error below 3e-7 wherever the exact
// value is a normal float32 (x > −87.34; measured 1.9e-7), within one
// spacing more where it is subnormal (x in [−88, −87.34]), hence
// absolute error below 3e-7 everywhere; exactly 0 below −88 and 1 where
// the exact value rounds to 1; ½ at ±0, 0 and 1 at ∓Inf, x quieted
// for NaN x, never outside [0, 1]. SiLU's relative error follows (one more
// rounding).
func TestSigmoidError(t *testing.T) {
	xs := append(mathInputs(-100, 100), mathInputs(-10, 10)...)
	r := rand.New(rand.NewPCG(7, 42))
	for range 1 << 16 {
		xs = append(xs, math.Float32frombits(r.Uint32()))
	}
	y, z := make([]float32, len(xs)), make([]float32, len(xs))
	Sigmoid(xs, y)
	SiLU(xs, z)
	worst, worstRel, worstAt := 0.0, 0.0, float32(0)
	for i, v := range xs {
		if v != v {
			if y[i] == y[i] || z[i] == z[i] {
				t.Fatalf("sigmoid(NaN) = %g, silu %g", y[i], z[i])
			}
			continue
		}
		if y[i] < 0 || y[i] > 1 {
			t.Fatalf("sigmoid(%g) = %g outside [0, 1]", v, y[i])
		}
		ref := 1 / (1 + math.Exp(-float64(v)))
		worst = max(worst, math.Abs(float64(y[i])-ref))
		if v < sigExpLo {
			if y[i] != 0 {
				t.Fatalf("sigmoid(%g) = %g, want 0 below %g", v, y[i], float32(sigExpLo))
			}
			continue
		}
		if float32(ref) == 1 && y[i] != 1 {
			t.Fatalf("sigmoid(%g) = %.9g, want 1", v, y[i])
		}
		if ref < 0x1p-126 { // y subnormal: within one spacing and the relative bound
			if d := math.Abs(float64(y[i]) - ref); d > 0x1p-149+3e-7*ref {
				t.Fatalf("sigmoid(%g) = %g, want %g (subnormal)", v, y[i], ref)
			}
		} else if rel := math.Abs(float64(y[i])-ref) / ref; rel > worstRel {
			worstRel, worstAt = rel, v
		}
		if v != 0 && !math.IsInf(float64(v), 0) {
			refSiLU := float64(v) * ref
			if math.Abs(refSiLU) > 0x1p-126 && math.Abs(float64(z[i])-refSiLU) > 5e-7*math.Abs(refSiLU) {
				t.Fatalf("silu(%g) = %g, want %g", v, z[i], refSiLU)
			}
		}
	}
	t.Logf("max abs error %.3g, relative %.3g at %g", worst, worstRel, worstAt)
	if worst > 3e-7 || worstRel > 3e-7 {
		t.Fatalf("max abs error %g, want ≤ 3e-7; relative %g (at %g), want ≤ 3e-7", worst, worstRel, worstAt)
	}
	inf := float32(math.Inf(1))
	x := []float32{0, float32(math.Copysign(0, -1)), inf, -inf}
	want := []float32{0.5, 0.5, 1, 0}
	x, want = append(x, x...), append(want, want...) // once through the SIMD block, once through the tail
	x, want = append(x, x[:5]...), append(want, want[:5]...)
	got := make([]float32, len(x))
	Sigmoid(x, got)
	for i := range x {
		if got[i] != want[i] {
			t.Fatalf("sigmoid(%g) = %g, want %g", x[i], got[i], want[i])
		}
	}
	// NaN: x quieted, sign and payload kept, by both functions and paths.
	var nans []float32
	for _, b := range []uint32{0x7fc00000, 0xffc00000, 0x7fc12345, 0xffd54321, 0x7f800001, 0xff812345, 0x7fbfffff} {
		nans = append(nans, math.Float32frombits(b))
	}
	nans = append(nans, nans...)
	for _, f := range []func(x, y []float32){Sigmoid, SiLU, sigmoidExpGeneric, siluExpGeneric} {
		y := make([]float32, len(nans))
		f(nans, y)
		for i, v := range nans {
			if want := math.Float32bits(v) | 0x400000; math.Float32bits(y[i]) != want {
				t.Fatalf("sigmoid/silu(%#08x) = %#08x, want %#08x", math.Float32bits(v), math.Float32bits(y[i]), want)
			}
		}
	}
}

// TestFma32: fma32 is a·b + c rounded once (to nearest even) as math/big
// computes it exactly, on random operands, on sums that fall halfway
// between two float32 values before the last bits of c (the double
// rounding float32(math.FMA(…)) gets wrong), and on NaN and ±Inf.
func TestFma32(t *testing.T) {
	exact := func(a, b, c float32) float32 {
		if a != a || b != b || c != c || math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) {
			return float32(float64(a)*float64(b) + float64(c))
		}
		p := new(big.Float).SetPrec(1000).SetFloat64(float64(a))
		p.Mul(p, new(big.Float).SetFloat64(float64(b)))
		p.Add(p, new(big.Float).SetFloat64(float64(c)))
		f, _ := p.Float32()
		return f
	}
	r := rand.New(rand.NewPCG(3, 5))
	type triple struct{ a, b, c float32 }
	var cases []triple
	for range 200000 {
		cases = append(cases, triple{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())})
		cases = append(cases, triple{math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32())})
		// a·b = 1 + 2^−24 (halfway between 1 and its successor) plus a tiny c
		// of either sign: the float64 sum rounds to the midpoint.
		a := float32(1 + 0x1p-12)
		b := float32(1 + 0x1p-12)
		cases = append(cases, triple{a, b, float32(r.NormFloat64()) * 0x1p-60})
		cases = append(cases, triple{a * float32(1+r.IntN(1000)), b, -float32(r.Float64()) * 0x1p-55})
	}
	inf := float32(math.Inf(1))
	cases = append(cases, triple{inf, 0, 1}, triple{inf, 1, -inf}, triple{float32(math.NaN()), 1, 1}, triple{1, 1, inf})
	fails := 0
	for _, c := range cases {
		got, want := fma32(c.a, c.b, c.c), exact(c.a, c.b, c.c)
		if !sameBits(got, want) {
			if fails++; fails < 5 {
				t.Errorf("fma32(%g, %g, %g) = %#08x, exact %#08x", c.a, c.b, c.c, math.Float32bits(got), math.Float32bits(want))
			}
		}
	}
	if fails > 0 {
		t.Fatalf("%d of %d wrong", fails, len(cases))
	}
	// The midpoint cases do catch double rounding.
	a := float32(1 + 0x1p-12)
	if c := float32(0x1p-60); float32(math.FMA(float64(a), float64(a), float64(c))) == fma32(a, a, c) {
		t.Fatalf("double rounding not exercised: %#08x", math.Float32bits(fma32(a, a, c)))
	}
}

// BenchmarkSigmoid: Sigmoid and SiLU (in place, as the Conv epilogue runs
// it) over an activation of efficientnet_b0's first block (32×112×112)
// and of a late one (672×14×14), and 4096 values in L1 (a Conv epilogue's
// part): thread CPU ns per call, elements/ns as
// GFLOP/s.
func BenchmarkSigmoid(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{32 * 112 * 112, 672 * 14 * 14, 4096} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 4)
		}
		y := make([]float32, n)
		b.Run(fmt.Sprintf("sigmoid_%d", n), func(b *testing.B) {
			benchConv(b, float64(n), func() error { Sigmoid(x, y); return nil })
		})
		b.Run(fmt.Sprintf("silu_%d", n), func(b *testing.B) {
			benchConv(b, float64(n), func() error { copy(y, x); SiLU(y, y); return nil })
		})
	}
}
