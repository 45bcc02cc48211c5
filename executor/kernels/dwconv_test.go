package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// dwCases are the depthwise layers of the mobile nets (3×3 and 5×5,
// stride 1 and 2, rows of 112 down to 7) and edge geometries: rows
// narrower than a vector, a channel multiplier, dilation, uneven pads,
// stride 3.
func dwCases() []Conv2D {
	dw := func(c, h, w, k, s, pad int) Conv2D {
		return Conv2D{N: 1, C: c, H: h, W: w, M: c, KH: k, KW: k, SH: s, SW: s, DH: 1, DW: 1,
			PT: pad, PL: pad, PB: pad, PR: pad, Groups: c}
	}
	return []Conv2D{
		dw(16, 112, 112, 3, 1, 1), dw(8, 112, 112, 3, 2, 1), dw(24, 56, 56, 3, 1, 1),
		dw(40, 28, 28, 5, 1, 2), dw(48, 28, 28, 5, 2, 2), dw(96, 14, 14, 3, 1, 1),
		dw(96, 14, 14, 5, 2, 2), dw(160, 7, 7, 3, 1, 1), dw(144, 7, 7, 5, 1, 2),
		dw(3, 9, 9, 3, 1, 0), dw(5, 33, 31, 3, 2, 1),
		{N: 2, C: 3, H: 12, W: 19, M: 6, KH: 3, KW: 3, SH: 1, SW: 1, DH: 2, DW: 2, PT: 2, PL: 1, PB: 0, PR: 3, Groups: 3},
		{N: 1, C: 4, H: 20, W: 40, M: 4, KH: 3, KW: 5, SH: 3, SW: 3, DH: 1, DW: 1, PT: 0, PL: 3, PB: 2, PR: 1, Groups: 4},
		{N: 1, C: 2, H: 5, W: 6, M: 2, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 2},
	}
}

// TestDepthwiseAgainstNaive checks the depthwise kernel (SIMD and Go
// rows) against a float64 direct convolution and its bits on 1–4
// threads.
func TestDepthwiseAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 1))
	simd := dwRows
	defer func() { dwRows = simd }()
	for _, impl := range []string{"simd", "go"} {
		dwRows = simd
		if impl == "go" {
			dwRows = dwRowsGo
		}
		for i, p := range dwCases() {
			x := randSlice(r, p.N*p.C*p.H*p.W)
			w := randSlice(r, p.M*p.KH*p.KW)
			bias := randSlice(r, p.M)
			want := naiveConv(p, x, w, bias)
			oh, ow := p.Out()
			var first []float32
			for th := 1; th <= 4; th++ {
				y := make([]float32, p.N*p.M*oh*ow)
				for j := range y {
					y[j] = float32(math.NaN())
				}
				if err := NewContext(th).Conv2D(p, x, w, bias, y); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s case %d %+v threads %d", impl, i, p, th)
				checkConvOut(t, name, y, want, first, 1e-5*float64(p.KH*p.KW)+1e-5)
				if first == nil {
					first = y
				}
			}
		}
	}
}

// TestDwRowsSIMD checks the SIMD rows against Go's (the same sums; fused
// multiply-adds round once per tap, so within a few ulps).
func TestDwRowsSIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ rows, n, ss, ldy int }{{1, 8, 0, 8}, {3, 40, 50, 41}, {2, 64, 70, 64}, {5, 24, 30, 24}} {
		offs := []int{0, 1, 2, 9, 10, 11, 20, 21, 22}
		w := randSlice(r, len(offs))
		x := randSlice(r, (c.rows-1)*c.ss+c.n+22)
		got := make([]float32, (c.rows-1)*c.ldy+c.n)
		want := make([]float32, len(got))
		dwRows(c.rows, c.n, x, c.ss, offs, w, 0.25, -0.5, 0.75, got, c.ldy)
		dwRowsGo(c.rows, c.n, x, c.ss, offs, w, 0.25, -0.5, 0.75, want, c.ldy)
		for j := range got {
			if math.Abs(float64(got[j]-want[j])) > 1e-5 {
				t.Fatalf("%+v: y[%d] = %g, want %g", c, j, got[j], want[j])
			}
		}
	}
}

// BenchmarkDepthwise reports GFLOP/s and thread CPU ns/op of the mobile
// nets' depthwise layers, one thread.
func BenchmarkDepthwise(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, p := range dwCases()[:9] {
		b.Run(fmt.Sprintf("%dx%d_k%d_s%d", p.H, p.W, p.KH, p.SH), func(b *testing.B) {
			oh, ow := p.Out()
			x, w := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*p.KH*p.KW)
			y := make([]float32, p.N*p.M*oh*ow)
			ctx := NewContext(1)
			benchConv(b, 2*float64(p.N*p.M*oh*ow*p.KH*p.KW), func() error { return ctx.Conv2D(p, x, w, nil, y) })
		})
	}
}
