package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestElementwiseAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{1, 3, 17, 255} {
		for _, inner := range []int{1, 3, 8, 17, 40} { // 8, 17, 40: the SIMD rows' blocks and tails
			x := randSlice(r, n*inner)
			for i := range x {
				x[i] *= 8 // past the clip and hard-sigmoid bounds
			}
			b := randSlice(r, n)
			bs := randSlice(r, inner)
			y := make([]float32, len(x))
			check := func(name string, want func(i int) float64, tol float64) {
				t.Helper()
				for i := range y {
					if w := want(i); math.Abs(float64(y[i])-w) > tol*(1+math.Abs(w)) {
						t.Fatalf("%s n=%d inner=%d: y[%d] = %g, want %g", name, n, inner, i, y[i], w)
					}
				}
			}
			Relu(x, y)
			check("Relu", func(i int) float64 { return math.Max(float64(x[i]), 0) }, 0)
			Clip(x, y, -1.5, 2)
			check("Clip", func(i int) float64 { return math.Min(math.Max(float64(x[i]), -1.5), 2) }, 0)
			HardSigmoid(x, y, 0.2, 0.5)
			check("HardSigmoid", func(i int) float64 { return math.Max(0, math.Min(1, 0.2*float64(x[i])+0.5)) }, 1e-6)
			HardSwish(x, y)
			check("HardSwish", func(i int) float64 { v := float64(x[i]); return v * math.Max(0, math.Min(1, v/6+0.5)) }, 1e-6)
			AddBlocks(x, b, y, inner)
			check("AddBlocks", func(i int) float64 { return float64(x[i]) + float64(b[i/inner]) }, 1e-7)
			MulBlocks(x, b, y, inner)
			check("MulBlocks", func(i int) float64 { return float64(float32(float64(x[i]) * float64(b[i/inner]))) }, 0) // the float32 product exactly
			AddSuffix(x, bs, y)
			check("AddSuffix", func(i int) float64 { return float64(float32(float64(x[i]) + float64(bs[i%inner]))) }, 0) // the float32 sum exactly
			MulSuffix(x, bs, y)
			check("MulSuffix", func(i int) float64 { return float64(float32(float64(x[i]) * float64(bs[i%inner]))) }, 0)
			g := make([]float32, n)
			GlobalAveragePool(x, g, inner)
			for i := range g {
				s := 0.0
				for _, v := range x[i*inner : (i+1)*inner] {
					s += float64(v)
				}
				if w := s / float64(inner); math.Abs(float64(g[i])-w) > 1e-6*(1+math.Abs(w)) {
					t.Fatalf("GlobalAveragePool n=%d inner=%d: y[%d] = %g, want %g", n, inner, i, g[i], w)
				}
			}
		}
	}
	nan := float32(math.NaN())
	y := make([]float32, 1)
	for name, f := range map[string]func(){
		"Relu": func() { Relu([]float32{nan}, y) },
		"Clip": func() { Clip([]float32{nan}, y, 0, 6) },
	} {
		f()
		if !math.IsNaN(float64(y[0])) {
			t.Errorf("%s(NaN) = %g, want NaN", name, y[0])
		}
	}
}

func TestReluLanes(t *testing.T) {
	for _, n := range []int{8, 19, 33} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%5) - 2
		}
		x[0], x[n/2] = float32(math.NaN()), float32(math.NaN())
		y := make([]float32, n)
		Relu(x, y)
		for i, v := range x {
			switch {
			case v != v:
				if y[i] == y[i] {
					t.Fatalf("n=%d: Relu(NaN) at %d = %g", n, i, y[i])
				}
			case y[i] != max(v, 0):
				t.Fatalf("n=%d: Relu(%g) at %d = %g", n, v, i, y[i])
			}
		}
	}
}

func TestFill(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 100, 1023} {
		for _, v := range []float32{0, float32(math.Copysign(0, -1)), -0.5, 3} {
			s := make([]float32, n+2)
			for i := range s {
				s[i] = 9
			}
			fill(s[1:n+1], v)
			for i := range s {
				want := v
				if i == 0 || i == n+1 {
					want = 9
				}
				if math.Float32bits(s[i]) != math.Float32bits(want) {
					t.Fatalf("n %d v %g: s[%d] = %g, want %g", n, v, i, s[i], want)
				}
			}
		}
	}
}
