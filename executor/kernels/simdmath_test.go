package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// mathInputs: a sweep over [lo, hi], the float32 neighbours of the
// exponential's and Gelu's thresholds, specials, and random values.
func mathInputs(lo, hi float32) []float32 {
	var xs []float32
	for v := lo; v <= hi; v += (hi - lo) / 200003 {
		xs = append(xs, v)
	}
	for _, b := range []float32{88.72283, -87.33654, 88.0, -87.0, 0, 1, -1, 5, -5, 0.5, -0.5} {
		v := b
		for i := 0; i < 40; i++ {
			xs = append(xs, v, -v)
			v = math.Nextafter32(v, float32(math.Inf(1)))
		}
		v = b
		for i := 0; i < 40; i++ {
			v = math.Nextafter32(v, float32(math.Inf(-1)))
			xs = append(xs, v)
		}
	}
	inf := float32(math.Inf(1))
	xs = append(xs, inf, -inf, float32(math.NaN()), float32(math.Copysign(0, -1)),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-30, -1e-30)
	r := rand.New(rand.NewPCG(46, 2))
	for i := 0; i < 100000; i++ {
		xs = append(xs, float32(r.NormFloat64()*float64(hi)/3))
	}
	return xs
}

func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// TestSIMDMathMatchesGo: the exponentials of Softmax (expSub) and Gelu,
// with AVX2 when the CPU has it, are bit-identical to the Go code (NaN
// for NaN), for every length (the tail goes through a copy) and offset.
func TestSIMDMathMatchesGo(t *testing.T) {
	t.Logf("SGEMM kernel %s", KernelName())
	xs := mathInputs(-100, 100)
	for _, sub := range []float32{0, 3.5, -2, 80} {
		got, want := make([]float32, len(xs)), make([]float32, len(xs))
		expSub(xs, sub, got)
		expSubGeneric(xs, sub, want)
		for i := range xs {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("exp32(%g − %g) = %g, Go %g", xs[i], sub, got[i], want[i])
			}
		}
	}
	gs := mathInputs(-20, 20)
	got, want := make([]float32, len(gs)), make([]float32, len(gs))
	Gelu(gs, got)
	geluGeneric(gs, want)
	for i := range gs {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("Gelu(%g) = %g, Go %g", gs[i], got[i], want[i])
		}
	}
	// Every length and offset: same values as one call over everything.
	for off := 0; off < 9; off++ {
		for n := 0; n < 27; n++ {
			y := make([]float32, n)
			Gelu(gs[off:off+n], y)
			e := make([]float32, n)
			expSub(xs[off:off+n], 1, e)
			for i := range y {
				if !sameBits(y[i], want[off+i]) {
					t.Fatalf("Gelu over [%d, %d): y[%d] = %g, want %g", off, off+n, i, y[i], want[off+i])
				}
				if w := exp32(xs[off+i] - 1); !sameBits(e[i], w) {
					t.Fatalf("expSub over [%d, %d): y[%d] = %g, want %g", off, off+n, i, e[i], w)
				}
			}
		}
	}
}

// TestSIMDRowOps: Softmax's row maximum and scaling and DivScalar with
// AVX2 give the Go loops' values bit for bit (NaN anywhere gives NaN for
// the maximum); the float64 sum in 8 lanes stays within 1e-12 relative of
// the sequential sum. Every length 0–40 and offsets 0–8.
func TestSIMDRowOps(t *testing.T) {
	xs := mathInputs(-50, 50)
	for off := 0; off < 9; off++ {
		for n := 0; n <= 40; n++ {
			x := xs[off : off+n]
			if got, want := rowMax(x), rowMaxGeneric(x); !sameBits(got, want) {
				t.Fatalf("rowMax over [%d, %d) = %g, Go %g", off, off+n, got, want)
			}
			if got, want := sumF64(x), sumF64Generic(x); math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
				t.Fatalf("sumF64 over [%d, %d) = %g, Go %g", off, off+n, got, want)
			}
			for _, a := range []float32{0.125, -3, 7e-3} {
				got, want := make([]float32, n), make([]float32, n)
				scale(a, x, got)
				scaleGeneric(a, x, want)
				d, dw := make([]float32, n), make([]float32, n)
				DivScalar(x, a, d)
				divScalarGeneric(x, a, dw)
				for i := range got {
					if !sameBits(got[i], want[i]) || !sameBits(d[i], dw[i]) {
						t.Fatalf("a=%g over [%d, %d) at %d: scale %g (Go %g), div %g (Go %g)", a, off, off+n, i, got[i], want[i], d[i], dw[i])
					}
				}
			}
		}
	}
	for _, at := range []int{0, 5, 8, 13, 31} {
		x := make([]float32, 32)
		for i := range x {
			x[i] = float32(i)
		}
		x[at] = float32(math.NaN())
		if got := rowMax(x); got == got {
			t.Fatalf("rowMax with NaN at %d = %g, want NaN", at, got)
		}
	}
}

// TestSIMDTanhSigmoid: TanhFast and SigmoidFast with AVX2 give the Go
// loops' values bit for bit (NaN for NaN), over a sweep with the clamp's
// neighbours, every length 0–20 and offsets 0–8; LSTMCell gives the
// values of one loop per element (the cell before the activations ran
// over whole gate vectors).
func TestSIMDTanhSigmoid(t *testing.T) {
	xs := append(mathInputs(-30, 30), 9, -9, math.Nextafter32(9, 10), math.Nextafter32(-9, -10), math.Nextafter32(9, 0), 18, -18)
	got, want := make([]float32, len(xs)), make([]float32, len(xs))
	for _, f := range []struct {
		name     string
		vec, ref func(x, y []float32)
	}{{"tanh", TanhFast, tanhGeneric}, {"sigmoid", SigmoidFast, sigmoidGeneric}} {
		f.vec(xs, got)
		f.ref(xs, want)
		for i := range xs {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("%s(%g) = %g, Go %g", f.name, xs[i], got[i], want[i])
			}
		}
		for off := 0; off < 9; off++ {
			for n := 0; n <= 20; n++ {
				y := make([]float32, n)
				f.vec(xs[off:off+n], y)
				for i := range y {
					if !sameBits(y[i], want[off+i]) {
						t.Fatalf("%s over [%d, %d): y[%d] = %g, want %g", f.name, off, off+n, i, y[i], want[off+i])
					}
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, hidden := range []int{1, 5, 8, 37, 128} {
		const rows = 3
		g := randSlice(r, rows*4*hidden)
		for i := range g {
			g[i] *= 6
		}
		c, h := randSlice(r, rows*hidden), make([]float32, rows*hidden)
		wc, wh := append([]float32(nil), c...), make([]float32, len(h))
		for row := 0; row < rows; row++ {
			gr := g[row*4*hidden : (row+1)*4*hidden]
			for j := 0; j < hidden; j++ {
				i := 0.5*tanh32(0.5*gr[j]) + 0.5
				o := 0.5*tanh32(0.5*gr[hidden+j]) + 0.5
				f := 0.5*tanh32(0.5*gr[2*hidden+j]) + 0.5
				cn := f*wc[row*hidden+j] + i*tanh32(gr[3*hidden+j])
				wc[row*hidden+j] = cn
				wh[row*hidden+j] = o * tanh32(cn)
			}
		}
		LSTMCell(g, c, h, hidden)
		for i := range c {
			if !sameBits(c[i], wc[i]) || !sameBits(h[i], wh[i]) {
				t.Fatalf("hidden %d: c[%d] = %g (want %g), h = %g (want %g)", hidden, i, c[i], wc[i], h[i], wh[i])
			}
		}
	}
}

// TestLayerNormDecomposedRow: the row kernel against the nine kernels'
// operations written out one element at a time (sums sequential): the
// same values but for the last bits of the float64 sums (at most 2 ulp
// of float32 here), for row lengths 1–70.
func TestLayerNormDecomposedRow(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for inner := 1; inner <= 70; inner++ {
		x, g, b := randSlice(r, inner), randSlice(r, inner), randSlice(r, inner)
		for i := range x {
			x[i] = x[i]*3 + 0.5
		}
		const eps = float32(1e-5)
		s := 0.0
		for _, v := range x {
			s += float64(v)
		}
		m := float32(s / float64(inner))
		want := make([]float32, inner)
		q := 0.0
		for i, v := range x {
			d := v - m
			want[i] = d
			q += float64(float32(d * d))
		}
		sd := float32(math.Sqrt(float64(float32(q/float64(inner)) + eps)))
		for i, d := range want {
			want[i] = float32(float32(d/sd)*g[i]) + b[i]
		}
		got := make([]float32, inner)
		LayerNormDecomposedRow(x, got, g, b, eps)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 2*float64(math.Nextafter32(float32(math.Abs(float64(want[i]))), 10)-float32(math.Abs(float64(want[i])))) {
				t.Fatalf("inner %d: y[%d] = %g, want %g", inner, i, got[i], want[i])
			}
		}
	}
}
