package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// naiveConv is the float64 direct convolution.
func naiveConv(p Conv2D, x, w, bias []float32) []float64 {
	oh, ow := p.Out()
	cg, mg := p.C/p.Groups, p.M/p.Groups
	y := make([]float64, p.N*p.M*oh*ow)
	for n := 0; n < p.N; n++ {
		for m := 0; m < p.M; m++ {
			g := m / mg
			for o := 0; o < oh; o++ {
				for q := 0; q < ow; q++ {
					s := 0.0
					if bias != nil {
						s = float64(bias[m])
					}
					for c := 0; c < cg; c++ {
						for kh := 0; kh < p.KH; kh++ {
							for kw := 0; kw < p.KW; kw++ {
								ih, iw := o*p.SH-p.PT+kh*p.DH, q*p.SW-p.PL+kw*p.DW
								if ih < 0 || ih >= p.H || iw < 0 || iw >= p.W {
									continue
								}
								s += float64(x[((n*p.C+g*cg+c)*p.H+ih)*p.W+iw]) * float64(w[((m*cg+c)*p.KH+kh)*p.KW+kw])
							}
						}
					}
					y[((n*p.M+m)*oh+o)*ow+q] = s
				}
			}
		}
	}
	return y
}

func convCases() []Conv2D {
	return []Conv2D{
		{N: 1, C: 3, H: 17, W: 17, M: 5, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 2, C: 4, H: 9, W: 13, M: 17, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 4, H: 9, W: 13, M: 6, KH: 1, KW: 1, SH: 2, SW: 2, DH: 1, DW: 1, Groups: 2},
		// Strided 1×1 (ResNet's shortcut): run on the gathered pixels.
		{N: 2, C: 8, H: 11, W: 9, M: 20, KH: 1, KW: 1, SH: 2, SW: 3, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 64, H: 14, W: 14, M: 40, KH: 1, KW: 1, SH: 2, SW: 2, DH: 2, DW: 1, Groups: 1},
		{N: 1, C: 6, H: 5, W: 40, M: 9, KH: 1, KW: 1, SH: 1, SW: 2, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 3, H: 23, W: 19, M: 8, KH: 7, KW: 7, SH: 2, SW: 2, DH: 1, DW: 1, PT: 3, PL: 3, PB: 3, PR: 3, Groups: 1},
		{N: 1, C: 6, H: 11, W: 12, M: 9, KH: 3, KW: 2, SH: 2, SW: 3, DH: 2, DW: 2, PT: 0, PL: 2, PB: 3, PR: 1, Groups: 3},
		{N: 2, C: 8, H: 15, W: 15, M: 8, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 8},
		{N: 1, C: 5, H: 14, W: 9, M: 10, KH: 5, KW: 3, SH: 2, SW: 2, DH: 1, DW: 2, PT: 2, PL: 0, PB: 1, PR: 2, Groups: 5},
		{N: 2, C: 7, H: 13, W: 15, M: 7, KH: 5, KW: 5, SH: 2, SW: 2, DH: 1, DW: 1, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 7},
		{N: 1, C: 3, H: 8, W: 16, M: 6, KH: 3, KW: 4, SH: 1, SW: 3, DH: 1, DW: 1, PT: 1, PL: 1, PB: 0, PR: 2, Groups: 3},
		{N: 1, C: 16, H: 1, W: 31, M: 255, KH: 1, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PL: 1, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 3, W: 3, M: 1, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 2, H: 4, W: 4, M: 2, KH: 3, KW: 3, SH: 3, SW: 3, DH: 1, DW: 1, PT: 4, PL: 4, PB: 4, PR: 4, Groups: 2},
		// Large enough for the thread split (SGEMM columns, depthwise channels).
		{N: 1, C: 32, H: 20, W: 21, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 64, H: 57, W: 55, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 64},
		// Depthwise with strided rows of 32 outputs and more (rows split
		// into column phases): stride 2, a channel multiplier, stride 3.
		{N: 2, C: 5, H: 70, W: 67, M: 5, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 5},
		{N: 1, C: 4, H: 71, W: 69, M: 8, KH: 5, KW: 5, SH: 2, SW: 2, DH: 1, DW: 1, PT: 2, PL: 2, PB: 1, PR: 2, Groups: 4},
		{N: 1, C: 3, H: 20, W: 101, M: 3, KH: 3, KW: 4, SH: 1, SW: 3, DH: 1, DW: 2, PT: 0, PL: 3, PB: 1, PR: 0, Groups: 3},
		// im2col matrices over maxCols: run in chunks of output rows.
		{N: 1, C: 16, H: 100, W: 101, M: 5, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 2, C: 64, H: 90, W: 90, M: 3, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
	}
}

func TestConv2DAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i, p := range convCases() {
		for _, withBias := range []bool{false, true} {
			x := randSlice(r, p.N*p.C*p.H*p.W)
			w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
			var bias []float32
			if withBias {
				bias = randSlice(r, p.M)
			}
			want := naiveConv(p, x, w, bias)
			var first []float32
			for _, th := range []int{1, 2} {
				oh, ow := p.Out()
				y := make([]float32, p.N*p.M*oh*ow)
				for j := range y {
					y[j] = float32(math.NaN()) // every element must be written
				}
				var pw []*Packed
				if withBias { // packed weights in half of the runs
					var err error
					if pw, err = PackConvWeights(p, w); err != nil {
						t.Fatal(err)
					}
				}
				if err := NewContext(th).Conv2DPacked(p, x, w, pw, bias, y); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("case %d %+v threads %d bias %v", i, p, th, withBias)
				checkConvOut(t, name, y, want, first, 1e-5*float64(p.C*p.KH*p.KW)+1e-5)
				if first == nil {
					first = y
				}
			}
		}
	}
}

// checkConvOut fails t unless every y[j] is within tol of want[j] and,
// when first is not nil (the run on one thread), has its bits.
func checkConvOut(t *testing.T, name string, y []float32, want []float64, first []float32, tol float64) {
	t.Helper()
	for j := range y {
		if d := math.Abs(float64(y[j]) - want[j]); !(d <= tol) {
			t.Fatalf("%s: y[%d] = %g, want %g", name, j, y[j], want[j])
		}
		if first != nil && math.Float32bits(y[j]) != math.Float32bits(first[j]) {
			t.Fatalf("%s: y[%d] = %g, %g on 1 thread", name, j, y[j], first[j])
		}
	}
}

// benchConv runs conv b.N times on one locked thread and reports GFLOP/s
// (flops per call) and the thread's CPU ns per call (steadier than the
// wall time on a shared machine).
func benchConv(b *testing.B, flops float64, conv func() error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	t0 := ThreadCPUTime()
	for i := 0; i < b.N; i++ {
		if err := conv(); err != nil {
			b.Fatal(err)
		}
	}
	cpu := ThreadCPUTime() - t0
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func TestConv2DErrors(t *testing.T) {
	p := Conv2D{N: 1, C: 3, H: 4, W: 4, M: 2, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 2}
	if err := NewContext(1).Conv2D(p, make([]float32, 48), make([]float32, 54), nil, make([]float32, 8)); err == nil {
		t.Fatal("want an error for 3 channels in 2 groups")
	}
}

// BenchmarkConv2D reports GFLOP/s of ResNet-50's first convolution and a
// MobileNet depthwise 3×3 layer, one thread.
func BenchmarkConv2D(b *testing.B) {
	cases := []struct {
		name string
		p    Conv2D
	}{
		{"resnet50_conv1", Conv2D{N: 1, C: 3, H: 224, W: 224, M: 64, KH: 7, KW: 7, SH: 2, SW: 2, DH: 1, DW: 1, PT: 3, PL: 3, PB: 3, PR: 3, Groups: 1}},
		{"resnet50_l1_3x3", Conv2D{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}},
		{"mobilenet_dw3x3_112", Conv2D{N: 1, C: 32, H: 112, W: 112, M: 32, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 32}},
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := c.p
			oh, ow := p.Out()
			x, w := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
			y := make([]float32, p.N*p.M*oh*ow)
			ctx := NewContext(1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ctx.Conv2D(p, x, w, nil, y); err != nil {
					b.Fatal(err)
				}
			}
			flops := 2 * float64(p.N*p.M*oh*ow*p.C/p.Groups*p.KH*p.KW)
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func naiveMaxPool(p Pool2D, x []float32) []float64 {
	y := make([]float64, p.N*p.C*p.OH*p.OW)
	for pl := 0; pl < p.N*p.C; pl++ {
		for o := 0; o < p.OH; o++ {
			for q := 0; q < p.OW; q++ {
				m := math.Inf(-1)
				for kh := 0; kh < p.KH; kh++ {
					for kw := 0; kw < p.KW; kw++ {
						ih, iw := o*p.SH-p.PT+kh*p.DH, q*p.SW-p.PL+kw*p.DW
						if ih >= 0 && ih < p.H && iw >= 0 && iw < p.W {
							m = math.Max(m, float64(x[(pl*p.H+ih)*p.W+iw]))
						}
					}
				}
				y[(pl*p.OH+o)*p.OW+q] = m
			}
		}
	}
	return y
}

func TestMaxPool2DAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cases := []Pool2D{
		{N: 1, C: 3, H: 17, W: 17, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, OH: 9, OW: 9},
		{N: 2, C: 5, H: 9, W: 13, KH: 2, KW: 3, SH: 1, SW: 3, DH: 2, DW: 1, PT: 0, PL: 1, OH: 7, OW: 5},
		{N: 1, C: 1, H: 1, W: 255, KH: 1, KW: 4, SH: 1, SW: 4, DH: 1, DW: 1, OH: 1, OW: 64}, // ceil-mode last window
		{N: 1, C: 2, H: 3, W: 3, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 2, PL: 2, OH: 5, OW: 5},
		// Short strided rows (maxColumns): squeezenet's pools, ceil mode
		// (last window past the edge), dilations, windows all in padding.
		{N: 1, C: 4, H: 31, W: 31, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, OH: 15, OW: 15},
		{N: 2, C: 3, H: 30, W: 30, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, OH: 15, OW: 15},
		{N: 1, C: 3, H: 7, W: 11, KH: 2, KW: 3, SH: 2, SW: 2, DH: 1, DW: 2, PT: 1, PL: 2, OH: 4, OW: 6},
		{N: 1, C: 2, H: 3, W: 5, KH: 2, KW: 2, SH: 3, SW: 2, DH: 1, DW: 1, PT: 2, PL: 1, OH: 2, OW: 3},
		{N: 1, C: 2, H: 6, W: 9, KH: 1, KW: 5, SH: 1, SW: 3, DH: 1, DW: 1, PL: 2, OH: 6, OW: 4},
		// Rows long enough for the SIMD runs over the window columns:
		// stride 2 (split into phases), stride 1 (26 and 45 columns),
		// stride 3 with dilation, padding on every side.
		{N: 1, C: 2, H: 40, W: 70, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, OH: 20, OW: 35},
		{N: 1, C: 3, H: 28, W: 28, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, OH: 28, OW: 28},
		{N: 1, C: 2, H: 12, W: 100, KH: 2, KW: 3, SH: 1, SW: 3, DH: 1, DW: 2, PL: 2, OH: 11, OW: 33},
		{N: 1, C: 2, H: 9, W: 50, KH: 3, KW: 4, SH: 2, SW: 1, DH: 2, DW: 3, PT: 2, PL: 4, OH: 4, OW: 45},
		// Short rows at stride 1, pooled plane-wide (shortPool):
		// dilations, output rows whose window rows are all padding.
		{N: 1, C: 2, H: 10, W: 12, KH: 3, KW: 3, SH: 1, SW: 1, DH: 2, DW: 2, PT: 3, PL: 3, OH: 9, OW: 11},
		{N: 2, C: 3, H: 6, W: 9, KH: 2, KW: 2, SH: 1, SW: 1, DH: 1, DW: 1, PT: 5, PL: 1, OH: 10, OW: 9},
		{N: 1, C: 4, H: 7, W: 7, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, OH: 7, OW: 7},
	}
	for i, p := range cases {
		x := randSlice(r, p.N*p.C*p.H*p.W)
		y := make([]float32, p.N*p.C*p.OH*p.OW)
		if err := NewContext(2).MaxPool2D(p, x, y); err != nil {
			t.Fatal(err)
		}
		want := naiveMaxPool(p, x)
		for j := range y {
			if float64(y[j]) != want[j] {
				t.Fatalf("case %d: y[%d] = %g, want %g", i, j, y[j], want[j])
			}
		}
	}
}

func BenchmarkMaxPool2D(b *testing.B) {
	for _, tc := range []struct {
		name string
		p    Pool2D
	}{
		{"3x3s2_64x112", Pool2D{N: 1, C: 64, H: 112, W: 112, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, OH: 56, OW: 56}},
		{"3x3s1_192x28", Pool2D{N: 1, C: 192, H: 28, W: 28, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, OH: 28, OW: 28}},
		{"3x3s2_64x31_squeezenet", Pool2D{N: 1, C: 64, H: 31, W: 31, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, OH: 15, OW: 15}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x := randSlice(r, tc.p.N*tc.p.C*tc.p.H*tc.p.W)
			y := make([]float32, tc.p.N*tc.p.C*tc.p.OH*tc.p.OW)
			for b.Loop() {
				if err := (*Context)(nil).MaxPool2D(tc.p, x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func naiveConvT(p ConvT2D, x, w, bias []float32) []float64 {
	y := make([]float64, p.N*p.M*p.OH*p.OW)
	cg, mg := p.C/p.Groups, p.M/p.Groups
	for n := 0; n < p.N; n++ {
		for ci := 0; ci < p.C; ci++ {
			g := ci / cg
			for ih := 0; ih < p.H; ih++ {
				for iw := 0; iw < p.W; iw++ {
					xv := float64(x[((n*p.C+ci)*p.H+ih)*p.W+iw])
					for oc := 0; oc < mg; oc++ {
						for kh := 0; kh < p.KH; kh++ {
							for kw := 0; kw < p.KW; kw++ {
								oh, ow := ih*p.SH+kh*p.DH-p.PT, iw*p.SW+kw*p.DW-p.PL
								if oh < 0 || oh >= p.OH || ow < 0 || ow >= p.OW {
									continue
								}
								y[((n*p.M+g*mg+oc)*p.OH+oh)*p.OW+ow] += xv * float64(w[((ci*mg+oc)*p.KH+kh)*p.KW+kw])
							}
						}
					}
				}
			}
		}
	}
	if bias != nil {
		for i := range y {
			y[i] += float64(bias[(i/(p.OH*p.OW))%p.M])
		}
	}
	return y
}

func TestConvTranspose2DAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 4))
	for i, p := range []ConvT2D{
		{N: 1, C: 4, H: 5, W: 7, M: 3, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 10, OW: 14, Groups: 1},
		{N: 2, C: 3, H: 4, W: 5, M: 5, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, OH: 4, OW: 5, Groups: 1},
		{N: 1, C: 4, H: 3, W: 6, M: 6, KH: 3, KW: 2, SH: 2, SW: 3, DH: 1, DW: 2, PT: 1, PL: 2, OH: 6, OW: 17, Groups: 2},
		{N: 1, C: 17, H: 1, W: 9, M: 33, KH: 1, KW: 4, SH: 1, SW: 2, DH: 1, DW: 1, PL: 1, OH: 1, OW: 19, Groups: 1}, // 1-D, output_padding
		// U-Net's up-sampling (2×2 stride 2), large enough for col2im to
		// split by output channels; with groups and 3×3 overlapping
		// taps (stride 2: several columns add into one output).
		{N: 1, C: 64, H: 32, W: 32, M: 32, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 64, OW: 64, Groups: 1},
		{N: 2, C: 16, H: 20, W: 21, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, OH: 40, OW: 42, Groups: 2},
		{N: 1, C: 8, H: 30, W: 30, M: 40, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, OH: 30, OW: 30, Groups: 1},
	} {
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.C*p.M/p.Groups*p.KH*p.KW)
		for _, bias := range [][]float32{nil, randSlice(r, p.M)} {
			want := naiveConvT(p, x, w, bias)
			var first []float32
			for _, th := range []int{1, 2, 3} {
				y := make([]float32, p.N*p.M*p.OH*p.OW)
				for j := range y {
					y[j] = float32(math.NaN()) // every element must be written
				}
				if err := NewContext(th).ConvTranspose2D(p, x, w, bias, y); err != nil {
					t.Fatal(err)
				}
				for j := range y {
					if !(math.Abs(float64(y[j])-want[j]) <= 1e-4*(1+math.Abs(want[j]))) {
						t.Fatalf("case %d threads %d: y[%d] = %g, want %g", i, th, j, y[j], want[j])
					}
					if first != nil && math.Float32bits(y[j]) != math.Float32bits(first[j]) {
						t.Fatalf("case %d threads %d: y[%d] = %g, %g on 1 thread", i, th, j, y[j], first[j])
					}
				}
				if first == nil {
					first = y
				}
			}
		}
	}
}

// TestCol2im2x2MatchesCol2im: the 2×2 stride-2 up-sampling's col2im
// (each output written once) stores col2im's bits (bias fill, then the
// one addition), −0 and NaN included, and ConvTranspose2D takes it only
// for that geometry.
func TestCol2im2x2MatchesCol2im(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 10))
	p := ConvT2D{N: 1, C: 8, H: 5, W: 9, M: 3, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 10, OW: 18, Groups: 1}
	if !up2(&p) {
		t.Fatalf("%+v is not an up-sampling", p)
	}
	for _, q := range []ConvT2D{
		{N: 1, C: 8, H: 5, W: 9, M: 3, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 11, OW: 18, Groups: 1},
		{N: 1, C: 8, H: 5, W: 9, M: 3, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, PL: 1, OH: 10, OW: 17, Groups: 1},
		{N: 1, C: 8, H: 5, W: 9, M: 3, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, OH: 10, OW: 18, Groups: 1},
	} {
		if up2(&q) {
			t.Fatalf("%+v taken for an up-sampling", q)
		}
	}
	cols := randSlice(r, p.M*4*p.H*p.W)
	cols[5], cols[77] = float32(math.Copysign(0, -1)), float32(math.NaN())
	for _, v := range []float32{0, 0.375, float32(math.Copysign(0, -1))} {
		for oc := 0; oc < p.M; oc++ {
			want, got := make([]float32, p.OH*p.OW), make([]float32, p.OH*p.OW)
			col2im(&p, cols, oc, want, v)
			col2im2x2(&p, cols, oc, got, v)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("bias %v, channel %d: y[%d] = %v, col2im %v", v, oc, i, got[i], want[i])
				}
			}
		}
	}
}

// TestConvTransposeColsSplit: U-Net's 2×2 stride-2 ConvTranspose of 64
// channels on 32×32 splits col2im by output channels (a parallel call
// besides the SGEMM's) on 2 threads.
func TestConvTransposeColsSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 5))
	p := ConvT2D{N: 1, C: 64, H: 32, W: 32, M: 32, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 64, OW: 64, Groups: 1}
	x := randSlice(r, p.N*p.C*p.H*p.W)
	w := randSlice(r, p.C*p.M/p.Groups*p.KH*p.KW)
	y := make([]float32, p.N*p.M*p.OH*p.OW)
	one, two := NewContext(2), NewContext(2)
	defer one.Close()
	defer two.Close()
	if err := two.ConvTranspose2D(p, x, w, nil, y); err != nil {
		t.Fatal(err)
	}
	if err := one.Sgemm(true, false, p.M*p.KH*p.KW, p.H*p.W, p.C, 1, w, p.M*p.KH*p.KW, x, p.H*p.W, 0, make([]float32, p.M*p.KH*p.KW*p.H*p.W), p.H*p.W); err != nil {
		t.Fatal(err)
	}
	if two.Calls() != one.Calls()+1 {
		t.Fatalf("%d parallel calls, the SGEMM alone %d: want col2im as one more", two.Calls(), one.Calls())
	}
}

func TestMaxIntoNaN(t *testing.T) {
	nan := float32(math.NaN())
	for _, n := range []int{1, 8, 19} {
		for _, at := range []int{0, n / 2, n - 1} {
			for _, inD := range []bool{false, true} {
				d, s := make([]float32, n), make([]float32, n)
				for i := range d {
					d[i], s[i] = float32(i), float32(n-i)
				}
				if inD {
					d[at] = nan
				} else {
					s[at] = nan
				}
				maxInto(d, s)
				for i, v := range d {
					want := float32(max(i, n-i))
					if i == at {
						if v == v {
							t.Fatalf("n=%d NaN at %d (in d: %v): got %g, want NaN", n, at, inD, v)
						}
					} else if v != want {
						t.Fatalf("n=%d: d[%d] = %g, want %g", n, i, v, want)
					}
				}
			}
		}
	}
}

// TestConvImplicitMatchesIm2col: with packed weights the convolution
// packs B straight from the input (convB); the result is bit-identical
// to the im2col matrix path (unpacked weights), on 1 and 2 threads.
func TestConvImplicitMatchesIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 6))
	for _, p := range []Conv2D{
		{N: 1, C: 64, H: 90, W: 90, M: 33, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 2, C: 6, H: 11, W: 12, M: 9, KH: 3, KW: 2, SH: 2, SW: 3, DH: 2, DW: 2, PT: 0, PL: 2, PB: 3, PR: 1, Groups: 3},
		{N: 1, C: 16, H: 100, W: 101, M: 40, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 61, W: 7, M: 5, KH: 7, KW: 7, SH: 2, SW: 2, DH: 1, DW: 1, PT: 3, PL: 3, PB: 3, PR: 3, Groups: 1},
		// More channels than pixels: row chunks over one shared B.
		{N: 1, C: 96, H: 15, W: 13, M: 250, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 2, C: 64, H: 15, W: 15, M: 300, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 0, PB: 1, PR: 2, Groups: 1},
	} {
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		b := randSlice(r, p.M)
		oh, ow := p.Out()
		pw, err := PackConvWeights(p, w)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, p.N*p.M*oh*ow)
		if err := NewContext(1).Conv2D(p, x, w, b, want); err != nil {
			t.Fatal(err)
		}
		for _, th := range []int{1, 2, 3} {
			y := make([]float32, len(want))
			if err := NewContext(th).Conv2DPacked(p, x, w, pw, b, y); err != nil {
				t.Fatal(err)
			}
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v, %d threads: y[%d] = %v, im2col path %v", p, th, i, y[i], want[i])
				}
			}
		}
	}
}

// BenchmarkConvFirst times the first convolution of the mobile nets (3
// input channels, 3×3 stride 2 pad 1 on 224×224, weights packed at load,
// with a bias) on 1 and 2 threads, the helpers held awake as in a model
// run.
func BenchmarkConvFirst(b *testing.B) {
	r := rand.New(rand.NewPCG(28, 63))
	for _, m := range []int{16, 24} {
		p := Conv2D{N: 1, C: 3, H: 224, W: 224, M: m, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}
		oh, ow := p.Out()
		x, w, bias := randSlice(r, p.C*p.H*p.W), randSlice(r, p.M*p.C*p.KH*p.KW), randSlice(r, p.M)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			b.Fatal(err)
		}
		y := make([]float32, p.M*oh*ow)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("M%d/threads%d", m, th), func(b *testing.B) {
				ctx := NewContext(th)
				defer ctx.Close()
				release := ctx.Hold()
				defer release()
				for b.Loop() {
					if err := ctx.Conv2DPacked(p, x, nil, pw, bias, y); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestConvEpilogue checks that Conv2DPackedEpilogue gives what
// Conv2DPacked followed by the epilogue over all of y gives, bit for bit,
// on 1–4 threads, with the epilogue run exactly once on every element and
// at the right offsets (a residual Add and a Relu), on every path: 1×1
// direct (one SGEMM), depthwise, rows, phase-plane, transposed and
// unpacked weights.
func TestConvEpilogue(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	cases := []struct {
		p      Conv2D
		packed bool
	}{
		{Conv2D{N: 1, C: 16, H: 14, W: 14, M: 116, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}, true},
		{Conv2D{N: 2, C: 13, H: 9, W: 11, M: 17, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}, true},
		{Conv2D{N: 1, C: 8, H: 1, W: 1, M: 40, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}, true},
		// Large enough to split: by columns, then by rows.
		{Conv2D{N: 1, C: 64, H: 28, W: 29, M: 48, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}, true},
		{Conv2D{N: 1, C: 256, H: 7, W: 7, M: 500, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}, true},
		{Conv2D{N: 1, C: 12, H: 30, W: 30, M: 16, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 2}, true},
		{Conv2D{N: 1, C: 16, H: 14, W: 14, M: 116, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}, false},
		{Conv2D{N: 1, C: 24, H: 37, W: 35, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 24}, false},
		{Conv2D{N: 1, C: 7, H: 9, W: 40, M: 7, KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 7}, false},
		{Conv2D{N: 1, C: 3, H: 61, W: 57, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}, true},
		{Conv2D{N: 1, C: 32, H: 28, W: 28, M: 40, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}, true},
		{Conv2D{N: 1, C: 64, H: 7, W: 7, M: 96, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}, true},
		{Conv2D{N: 1, C: 9, H: 12, W: 10, M: 11, KH: 3, KW: 2, SH: 2, SW: 1, DH: 1, DW: 2, PT: 1, PL: 0, PB: 2, PR: 1, Groups: 1}, false},
		// Grouped (RegNet, ResNeXt): whole groups per chunk (convRows,
		// the direct 1×1 SGEMM, im2col with its scratch per chunk, the
		// implicit GEMM), and two large groups each split on their own.
		{Conv2D{N: 1, C: 64, H: 28, W: 28, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 4}, true},
		{Conv2D{N: 1, C: 400, H: 7, W: 7, M: 400, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 25}, true},
		{Conv2D{N: 1, C: 128, H: 14, W: 14, M: 128, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 8}, true},
		{Conv2D{N: 2, C: 48, H: 21, W: 20, M: 48, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 3}, false},
		{Conv2D{N: 1, C: 96, H: 15, W: 15, M: 64, KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 4}, true},
		{Conv2D{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2}, true},
		// convRows with the epilogue after each block of rows, channel
		// panel by channel panel (rowsChanOuter), batch 2.
		{Conv2D{N: 2, C: 3, H: 241, W: 239, M: 37, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 0, PB: 0, PR: 1, Groups: 1}, true},
	}
	for i, c := range cases {
		p := c.p
		oh, ow := p.Out()
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		other := randSlice(r, p.N*p.M*oh*ow)
		var pw []*Packed
		if c.packed {
			var err error
			if pw, err = PackConvWeights(p, w); err != nil {
				t.Fatal(err)
			}
		}
		for _, bias := range [][]float32{nil, randSlice(r, p.M)} {
			want := make([]float32, len(other))
			if err := NewContext(1).Conv2DPacked(p, x, w, pw, bias, want); err != nil {
				t.Fatal(err)
			}
			for j := range want {
				want[j] += other[j]
				Relu(want[j:j+1], want[j:j+1])
			}
			for _, th := range []int{1, 2, 3, 4} {
				ctx := NewContext(th)
				got := make([]float32, len(other))
				seen := make([]int32, len(other))
				epi := func(off, n int) {
					for j := off; j < off+n; j++ {
						seen[j]++ // segments never overlap, so never at once
					}
					s := got[off : off+n]
					AddSuffix(s, other[off:off+n], s)
					Relu(s, s)
				}
				if err := ctx.Conv2DPackedEpilogue(p, x, w, pw, bias, got, epi); err != nil {
					t.Fatal(err)
				}
				ctx.Close()
				for j := range got {
					if seen[j] != 1 {
						t.Fatalf("case %d threads %d: epilogue ran %d times on y[%d]", i, th, seen[j], j)
					}
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("case %d threads %d bias %v: y[%d] = %g, want %g", i, th, bias != nil, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestConvGroupsSplit: a convolution of many small groups (RegNet's last
// stage: 25 groups of 16 channels on 7×7, each below the split
// threshold) is one parallel call of whole groups on 2 threads, not 25
// serial groups; two large groups are split each on its own (a call or
// more per group). The bits are TestConvEpilogue's.
func TestConvGroupsSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	for _, c := range []struct {
		p          Conv2D
		calls, max uint64
	}{
		{Conv2D{N: 1, C: 400, H: 7, W: 7, M: 400, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 25}, 1, 1},
		{Conv2D{N: 1, C: 64, H: 56, W: 56, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2}, 2, 100},
	} {
		p := c.p
		oh, ow := p.Out()
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			t.Fatal(err)
		}
		ctx := NewContext(2)
		y := make([]float32, p.N*p.M*oh*ow)
		if err := ctx.Conv2DPacked(p, x, w, pw, nil, y); err != nil {
			t.Fatal(err)
		}
		ctx.Close()
		if got := ctx.Calls(); got < c.calls || got > c.max {
			t.Errorf("%+v: %d parallel calls on 2 threads, want %d to %d", p, got, c.calls, c.max)
		}
	}
}

// TestConvActRelu checks ActRelu and ActRelu6 (in the micro-kernel of
// direct, implicit-GEMM, row-block and grid convolutions, a pass on the
// others), then the epilogue, against the convolution followed by Relu
// or Clip(0, 6) and the epilogue: bit-identical on every path and thread
// count, with a bias or not, several k-blocks (C > 256), tiles of fewer
// rows than the kernel's, NaN inputs and −0 outputs (all-zero input with
// negative weights).
func TestConvActRelu(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	cases := []Conv2D{
		{N: 1, C: 58, H: 28, W: 28, M: 58, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 300, H: 7, W: 7, M: 37, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 2, C: 13, H: 9, W: 11, M: 17, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 600, H: 14, W: 14, M: 100, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 12, H: 30, W: 30, M: 16, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 2},
		{N: 1, C: 24, H: 37, W: 35, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 24},
		{N: 1, C: 3, H: 61, W: 57, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 32, H: 28, W: 28, M: 40, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		// convRows with 16 channels (Relu in its micro-kernel, edge
		// kernels for the last channels), the grid with a stride.
		{N: 1, C: 16, H: 40, W: 40, M: 20, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 40, H: 29, W: 29, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		// Depthwise (Relu in the row kernel): the flat run, rows of 8
		// and more (with the last 8 columns again), rows narrower than 8,
		// a channel multiplier.
		{N: 1, C: 20, H: 14, W: 14, M: 20, KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 20},
		{N: 2, C: 9, H: 40, W: 45, M: 9, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 9},
		{N: 1, C: 7, H: 11, W: 11, M: 14, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 7},
		// B packed (rows aliasing in L1), 49 pixels (column kernels).
		{N: 1, C: 72, H: 56, W: 56, M: 24, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 160, H: 7, W: 7, M: 200, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		// The grid padded to whole tiles (tilePad), several k-blocks:
		// Relu in the micro-kernel's store of the last panel too.
		{N: 1, C: 64, H: 7, W: 7, M: 100, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		// convRows channel panel by channel panel (rowsChanOuter).
		{N: 1, C: 3, H: 241, W: 239, M: 37, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 0, PB: 0, PR: 1, Groups: 1},
		// The grid in two chunks of output rows (its product past
		// maxCols): the epilogue as each chunk's rows are copied.
		{N: 1, C: 32, H: 128, W: 128, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		// The implicit GEMM (phase planes past maxCols), in two halves
		// of k (the activation and epilogue in gemmSplitK's fold).
		{N: 1, C: 260, H: 64, W: 64, M: 8, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
	}
	if best.name != genericKernel.name {
		for i, want := range []string{"flat", "implicit"} {
			p := cases[len(cases)-2+i]
			if path := convPath(p); path != want {
				t.Fatalf("%+v takes the %s path, want %s", p, path, want)
			}
		}
		if p := cases[len(cases)-2]; p.M*p.H*(p.W+2) <= maxCols {
			t.Fatalf("%+v: the grid fits in one chunk", p)
		}
	}
	for i, p := range cases {
		oh, ow := p.Out()
		x := randSlice(r, p.N*p.C*p.H*p.W)
		// The first image's first plane is zero (−0 where the weights
		// are negative and there is no bias); one input is NaN.
		clear(x[:p.H*p.W])
		x[len(x)-1] = float32(math.NaN())
		w0 := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		for j := range w0[:p.C/p.Groups*p.KH*p.KW] {
			w0[j] = -float32(math.Abs(float64(w0[j])))
		}
		other := randSlice(r, p.N*p.M*oh*ow)
		for _, act := range []Act{ActRelu, ActRelu6} {
			w := w0
			if act == ActRelu6 {
				// Larger values: many outputs above 6.
				w = make([]float32, len(w0))
				for j, v := range w0 {
					w[j] = 8 * v
				}
			}
			pw, err := PackConvWeights(p, w)
			if err != nil {
				t.Fatal(err)
			}
			for _, bias := range [][]float32{nil, randSlice(r, p.M)} {
				for _, withEpi := range []bool{false, true} {
					want := make([]float32, len(other))
					if err := NewContext(1).Conv2DPacked(p, x, w, pw, bias, want); err != nil {
						t.Fatal(err)
					}
					if act == ActRelu6 {
						Clip(want, want, 0, 6)
					} else {
						Relu(want, want)
					}
					if withEpi {
						AddSuffix(want, other, want)
					}
					checkConvAct(t, fmt.Sprintf("case %d act %d bias %v epilogue %v", i, act, bias != nil, withEpi), p, x, w, pw, bias, act, withEpi, other, want)
				}
			}
		}
	}
}

// TestMaxPool2DEmptyOutput: a pool with no output rows or columns
// writes nothing and does not fail.
func TestMaxPool2DEmptyOutput(t *testing.T) {
	for _, p := range []Pool2D{
		{N: 1, C: 2, H: 3, W: 5, KH: 2, KW: 2, SH: 1, SW: 1, DH: 1, DW: 1, OH: 0, OW: 4},
		{N: 1, C: 2, H: 3, W: 5, KH: 2, KW: 2, SH: 1, SW: 1, DH: 1, DW: 1, OH: 2, OW: 0},
		{N: 1, C: 2, H: 3, W: 40, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 0, OW: 20},
	} {
		if err := NewContext(2).MaxPool2D(p, make([]float32, p.N*p.C*p.H*p.W), nil); err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
	}
}

// TestMaxWin3S2: the stride-2 window maximum (AVX2 where the CPU has it)
// equals the window-by-window maximum for every length, with x of
// exactly 2n+1 values (the Go path) or one more (the SIMD path, its tail
// as an overlapping block), NaN winning wherever it is, and writes no
// value past y.
func TestMaxWin3S2(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	nan := float32(math.NaN())
	for n := 0; n <= 41; n++ {
		for extra := 0; extra <= 1; extra++ {
			x := randSlice(r, 2*n+1+extra)
			if n > 3 {
				x[r.IntN(len(x))] = nan
			}
			buf := make([]float32, n+4)
			for i := range buf {
				buf[i] = 12345
			}
			y := buf[:n]
			maxWin3S2(x, y)
			for i := 0; i < n; i++ {
				a, b, c := x[2*i], x[2*i+1], x[2*i+2]
				isNaN := a != a || b != b || c != c
				if isNaN != (y[i] != y[i]) || !isNaN && y[i] != max(a, b, c) {
					t.Fatalf("n %d (+%d): y[%d] = %g, window %g %g %g", n, extra, i, y[i], a, b, c)
				}
			}
			for i := n; i < len(buf); i++ {
				if buf[i] != 12345 {
					t.Fatalf("n %d: wrote past y at %d", n, i)
				}
			}
		}
	}
}

// TestConvClip: Conv2DPackedClip (in the row kernel of a depthwise
// convolution, a pass on the others) gives the bits of the convolution
// followed by Clip, then the epilogue: ReLU6's bounds and others, NaN
// inputs, 1 and 2 threads.
func TestConvClip(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	cases := []Conv2D{
		{N: 1, C: 24, H: 37, W: 35, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 24},
		{N: 1, C: 20, H: 14, W: 14, M: 20, KH: 5, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 20},
		{N: 1, C: 7, H: 7, W: 7, M: 7, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 7},
		{N: 1, C: 16, H: 20, W: 20, M: 24, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 8, H: 15, W: 15, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
	}
	for i, p := range cases {
		oh, ow := p.Out()
		x := randSlice(r, p.N*p.C*p.H*p.W)
		for j := range x {
			x[j] *= 8
		}
		x[len(x)-1] = float32(math.NaN())
		w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		bias := randSlice(r, p.M)
		other := randSlice(r, p.N*p.M*oh*ow)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range [][2]float32{{0, 6}, {-1, 1}, {float32(math.Inf(-1)), 0.5}} {
			want := make([]float32, len(other))
			if err := NewContext(1).Conv2DPacked(p, x, w, pw, bias, want); err != nil {
				t.Fatal(err)
			}
			Clip(want, want, b[0], b[1])
			AddSuffix(want, other, want)
			for _, th := range []int{1, 2} {
				ctx := NewContext(th)
				got := make([]float32, len(other))
				epi := func(off, n int) { s := got[off : off+n]; AddSuffix(s, other[off:off+n], s) }
				if err := ctx.Conv2DPackedClip(p, x, w, pw, bias, got, b[0], b[1], epi); err != nil {
					t.Fatal(err)
				}
				ctx.Close()
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("case %d clip %v threads %d: y[%d] = %g, want %g", i, b, th, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestConvOnePixel: 1×1 convolutions of one-pixel images (an SE block's)
// run on PointwiseNHWC's rows kernels when the CPU has them; their values
// are the SGEMM path's bit for bit (convGroups, the path they took
// before), on 1 to 3 threads, with either activation and an epilogue, and
// the float64 convolution's within rounding.
func TestConvOnePixel(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	cases := []Conv2D{
		{N: 1, C: 576, H: 1, W: 1, M: 144, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 144, H: 1, W: 1, M: 576, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 3, C: 24, H: 1, W: 1, M: 97, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 2, C: 2304, H: 1, W: 1, M: 40, KH: 1, KW: 1, SH: 2, SW: 2, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 1280, H: 1, W: 1, M: 1000, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 2, C: 640, H: 1, W: 1, M: 200, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
	}
	for i, p := range cases {
		x := randSlice(r, p.N*p.C)
		w := randSlice(r, p.M*p.C)
		bias := randSlice(r, p.M)
		other := randSlice(r, p.N*p.M)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			t.Fatal(err)
		}
		ref := naiveConv(p, x, w, bias)
		for _, act := range []Act{ActNone, ActRelu, ActRelu6} {
			for _, withEpi := range []bool{false, true} {
				want := make([]float32, p.N*p.M)
				ctx := NewContext(1)
				var wantEpi Epilogue
				if withEpi {
					wantEpi = func(off, n int) { s := want[off : off+n]; AddSuffix(s, other[off:off+n], s) }
				}
				if err := ctx.convGroups(p, x, w, pw, bias, want, act, wantEpi); err != nil {
					t.Fatal(err)
				}
				ctx.Close()
				if act == ActNone && !withEpi {
					for j, v := range ref {
						if d := math.Abs(float64(want[j]) - v); d > 1e-4*(1+math.Abs(v)) {
							t.Fatalf("case %d: y[%d] = %g, float64 convolution %g", i, j, want[j], v)
						}
					}
				}
				checkConvAct(t, fmt.Sprintf("case %d act %d epilogue %v", i, act, withEpi), p, x, w, pw, bias, act, withEpi, other, want)
			}
		}
	}
}

// checkConvAct runs Conv2DPackedAct (act; with withEpi, an epilogue
// adding other) on 1 to 3 threads and fails unless every output has
// want's bits.
func checkConvAct(t *testing.T, name string, p Conv2D, x, w []float32, pw []*Packed, bias []float32, act Act, withEpi bool, other, want []float32) {
	t.Helper()
	for _, th := range []int{1, 2, 3} {
		ctx := NewContext(th)
		got := make([]float32, len(want))
		var epi Epilogue
		if withEpi {
			epi = func(off, n int) { s := got[off : off+n]; AddSuffix(s, other[off:off+n], s) }
		}
		if err := ctx.Conv2DPackedAct(p, x, w, pw, bias, got, act, epi); err != nil {
			t.Fatal(err)
		}
		ctx.Close()
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("%s, %d threads: y[%d] = %g (%#x), want %g (%#x)", name, th, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
			}
		}
	}
}
