package kernels

import (
	"math"
	"testing"
)

// TestSIMDLogisticClip: Sigmoid (MLAS logistic) and Clip, with AVX2 when
// the CPU has it, are bit-identical to their Go loops (NaN for NaN) for
// every length 0–20 and offset 0–8 (the tail runs in Go), over a sweep,
// the clamp points' neighbours, ±Inf, NaN and −0.
func TestSIMDLogisticClip(t *testing.T) {
	xs := append(mathInputs(-30, 30), 18, -18, math.Nextafter32(18, 19), math.Nextafter32(-18, -19), 6, -6,
		math.Nextafter32(6, 7), math.Nextafter32(6, 5))
	type unary struct {
		name     string
		vec, ref func(x, y []float32)
	}
	fs := []unary{{"logistic", func(x, y []float32) { logisticVec(x, y) }, logisticGeneric}}
	for _, b := range [][2]float32{{0, 6}, {-1, 1}, {0, 0}, {float32(math.Inf(-1)), 6}, {0, float32(math.Inf(1))},
		{float32(math.Copysign(0, -1)), 6}, {float32(math.NaN()), 6}, {0, float32(math.NaN())}} {
		lo, hi := b[0], b[1]
		fs = append(fs, unary{"clip", func(x, y []float32) { Clip(x, y, lo, hi) }, func(x, y []float32) { clipGeneric(x, y, lo, hi) }})
	}
	got, want := make([]float32, len(xs)), make([]float32, len(xs))
	for k, f := range fs {
		f.vec(xs, got)
		f.ref(xs, want)
		for i := range xs {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("%s #%d (%g) = %g, Go %g", f.name, k, xs[i], got[i], want[i])
			}
		}
		for off := 0; off < 9; off++ {
			for n := 0; n <= 20; n++ {
				y := make([]float32, n)
				f.vec(xs[off:off+n], y)
				for i := range y {
					if !sameBits(y[i], want[off+i]) {
						t.Fatalf("%s #%d over [%d, %d): y[%d] = %g, want %g", f.name, k, off, off+n, i, y[i], want[off+i])
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

// TestLogisticError: the approximation against float64 1/(1+e^−x) over
// [−30, 30]: absolute error below 1e-6 (measured 2.0e-7 at most),
// relative error below 1e-6 for x in (−87, −4) (the exponential's tail),
// 0 and 1 at ±Inf, NaN for NaN, never outside [0, 1].
func TestLogisticError(t *testing.T) {
	xs := mathInputs(-30, 30)
	y := make([]float32, len(xs))
	Sigmoid(xs, y)
	worst, worstRel := 0.0, 0.0
	for i, v := range xs {
		if v != v {
			if y[i] == y[i] {
				t.Fatalf("sigmoid(NaN) = %g", y[i])
			}
			continue
		}
		if y[i] < 0 || y[i] > 1 {
			t.Fatalf("sigmoid(%g) = %g outside [0, 1]", v, y[i])
		}
		ref := 1 / (1 + math.Exp(-float64(v)))
		worst = max(worst, math.Abs(float64(y[i])-ref))
		if v < -4 && v > -87 {
			worstRel = max(worstRel, math.Abs(float64(y[i])-ref)/ref)
		}
	}
	t.Logf("max abs error %.3g, relative below -4 %.3g", worst, worstRel)
	if worst > 1e-6 || worstRel > 1e-6 {
		t.Fatalf("max abs error %g, want ≤ 1e-6; relative below -4 %g, want ≤ 1e-6", worst, worstRel)
	}
}
