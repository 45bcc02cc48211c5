package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func closeTo(t *testing.T, name string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: y[%d] = %g, want %g", name, i, got[i], want[i])
		}
	}
}

func TestNormsAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	for _, planes := range []int{1, 3, 7} {
		for _, inner := range []int{1, 5, 17, 255} {
			x := randSlice(r, planes*inner)
			for i := range x {
				x[i] = 3*x[i] + 1.5 // off zero mean, off unit variance
			}
			y := make([]float32, len(x))
			// Per-plane normalization (InstanceNorm) and per-row (LayerNorm).
			sc, bi := randSlice(r, planes), randSlice(r, planes)
			want := make([]float64, len(x))
			for p := 0; p < planes; p++ {
				m, q := 0.0, 0.0
				for _, v := range x[p*inner : (p+1)*inner] {
					m += float64(v)
				}
				m /= float64(inner)
				for _, v := range x[p*inner : (p+1)*inner] {
					q += (float64(v) - m) * (float64(v) - m)
				}
				sd := math.Sqrt(q/float64(inner) + 1e-5)
				for j := p * inner; j < (p+1)*inner; j++ {
					want[j] = (float64(x[j])-m)/sd*float64(sc[p]) + float64(bi[p])
				}
			}
			InstanceNorm(x, sc, bi, y, inner, 0, 1e-5)
			closeTo(t, "InstanceNorm", y, want, 1e-5)

			ls, lb := randSlice(r, inner), randSlice(r, inner)
			for p := 0; p < planes; p++ {
				m, q := 0.0, 0.0
				for _, v := range x[p*inner : (p+1)*inner] {
					m += float64(v)
				}
				m /= float64(inner)
				for _, v := range x[p*inner : (p+1)*inner] {
					q += (float64(v) - m) * (float64(v) - m)
				}
				sd := math.Sqrt(q/float64(inner) + 1e-5)
				for j := 0; j < inner; j++ {
					want[p*inner+j] = (float64(x[p*inner+j])-m)/sd*float64(ls[j]) + float64(lb[j])
				}
			}
			LayerNorm(x, ls, lb, y, 1e-5)
			closeTo(t, "LayerNorm", y, want, 1e-5)

			for p := 0; p < planes; p++ {
				mx := math.Inf(-1)
				for _, v := range x[p*inner : (p+1)*inner] {
					mx = math.Max(mx, float64(v))
				}
				s := 0.0
				for _, v := range x[p*inner : (p+1)*inner] {
					s += math.Exp(float64(v) - mx)
				}
				for j := p * inner; j < (p+1)*inner; j++ {
					want[j] = math.Exp(float64(x[j])-mx) / s
				}
			}
			Softmax(x, y, inner)
			closeTo(t, "Softmax", y, want, 1e-6)

			// BatchNormalization over N=planes images of C=3 channels.
			if (planes*inner)%3 == 0 {
				inner3 := planes * inner / 3 / planes
				if inner3 > 0 && planes*3*inner3 == len(x) {
					g, be, mu, va := randSlice(r, 3), randSlice(r, 3), randSlice(r, 3), randSlice(r, 3)
					for i := range va {
						va[i] = va[i]*va[i] + 0.1
					}
					s, b := make([]float32, 3), make([]float32, 3)
					BatchNormScaleShift(g, be, mu, va, 1e-3, s, b)
					ScaleShiftBlocks(x, s, b, y, inner3, 0)
					for i := range want {
						ch := (i / inner3) % 3
						want[i] = (float64(x[i])-float64(mu[ch]))/math.Sqrt(float64(va[ch])+1e-3)*float64(g[ch]) + float64(be[ch])
					}
					closeTo(t, "BatchNorm", y, want, 1e-5)
				}
			}

			Sigmoid(x, y)
			for i, v := range x {
				want[i] = 1 / (1 + math.Exp(-float64(v)))
			}
			closeTo(t, "Sigmoid", y, want, 1e-6)
			Tanh(x, y)
			for i, v := range x {
				want[i] = math.Tanh(float64(v))
			}
			closeTo(t, "Tanh", y, want, 1e-6)
		}
	}
}

func TestCoalesceAxes(t *testing.T) {
	for _, tc := range []struct{ shape, perm, cs, cp []int }{
		{[]int{1, 2, 58, 28, 28}, []int{0, 2, 1, 3, 4}, []int{2, 58, 784}, []int{1, 0, 2}},
		{[]int{2, 3, 4, 5}, []int{2, 3, 0, 1}, []int{6, 20}, []int{1, 0}},
		{[]int{2, 3, 4}, []int{0, 1, 2}, []int{24}, []int{0}},
		{[]int{4, 1, 1, 3}, []int{2, 0, 3, 1}, []int{12}, []int{0}},
		{[]int{1, 1}, []int{1, 0}, []int{1}, []int{0}},
		{[]int{2, 3, 5}, []int{2, 0, 1}, []int{6, 5}, []int{1, 0}},
	} {
		cs, cp := coalesceAxes(tc.shape, tc.perm)
		if !slices.Equal(cs, tc.cs) || !slices.Equal(cp, tc.cp) {
			t.Errorf("coalesceAxes(%v, %v) = %v, %v; want %v, %v", tc.shape, tc.perm, cs, cp, tc.cs, tc.cp)
		}
	}
}

func TestTransposeAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	for _, tc := range []struct{ shape, perm []int }{
		{[]int{5}, []int{0}},
		{[]int{3, 7}, []int{1, 0}},
		{[]int{2, 3, 5}, []int{0, 2, 1}},
		{[]int{2, 3, 5}, []int{2, 0, 1}},
		{[]int{1, 4, 3, 7}, []int{0, 2, 1, 3}}, // channel shuffle, heads
		{[]int{3, 1, 5, 2}, []int{3, 2, 1, 0}},
		{[]int{1, 2, 5, 3, 4}, []int{0, 2, 1, 3, 4}}, // ShuffleNet's: planes move whole
		{[]int{2, 3, 4, 5, 6}, []int{0, 1, 3, 4, 2}},
		{[]int{2, 3, 4, 5}, []int{2, 3, 0, 1}},
		{[]int{4, 1, 1, 3}, []int{2, 0, 3, 1}},
		{[]int{1, 1}, []int{1, 0}},
		{[]int{3, 0, 2}, []int{2, 0, 1}},
		// Batches of matrices transposed in tiles: NCHW → NHWC and back,
		// sides not multiples of the tile.
		{[]int{1, 24, 28, 28}, []int{0, 2, 3, 1}},
		{[]int{2, 17, 9, 11}, []int{0, 2, 3, 1}},
		{[]int{2, 9, 11, 17}, []int{0, 3, 1, 2}},
		{[]int{19, 13}, []int{1, 0}},
		{[]int{3, 16, 8}, []int{0, 2, 1}},
	} {
		x := randSlice(r, numel(tc.shape))
		y := make([]float32, len(x))
		Transpose(x, tc.shape, tc.perm, y)
		r := len(tc.shape)
		st := make([]int, r)
		s := 1
		for i := r - 1; i >= 0; i-- {
			st[i], s = s, s*tc.shape[i]
		}
		out := make([]int, r)
		for i, p := range tc.perm {
			out[i] = tc.shape[tc.perm[i]]
			_ = p
		}
		idx := make([]int, r)
		for o := range y {
			src := 0
			for i, v := range idx {
				src += v * st[tc.perm[i]]
			}
			if y[o] != x[src] {
				t.Fatalf("Transpose %v %v: y[%d] = %g, want x[%d] = %g", tc.shape, tc.perm, o, y[o], src, x[src])
			}
			for d := r - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < out[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
}

func numel(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

func naiveAvgPool(p Pool2D, pb, pr int, includePad bool, x []float32) []float64 {
	y := make([]float64, p.N*p.C*p.OH*p.OW)
	for pl := 0; pl < p.N*p.C; pl++ {
		for oh := 0; oh < p.OH; oh++ {
			for ow := 0; ow < p.OW; ow++ {
				s, cnt, all := 0.0, 0, 0
				for kh := 0; kh < p.KH; kh++ {
					for kw := 0; kw < p.KW; kw++ {
						ih, iw := oh*p.SH-p.PT+kh*p.DH, ow*p.SW-p.PL+kw*p.DW
						if ih >= p.H+pb || iw >= p.W+pr {
							continue
						}
						all++
						if ih >= 0 && ih < p.H && iw >= 0 && iw < p.W {
							s += float64(x[(pl*p.H+ih)*p.W+iw])
							cnt++
						}
					}
				}
				d := cnt
				if includePad {
					d = all
				}
				if d > 0 {
					y[(pl*p.OH+oh)*p.OW+ow] = s / float64(d)
				}
			}
		}
	}
	return y
}

func TestAvgPool2DAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 3))
	for _, tc := range []struct {
		p      Pool2D
		pb, pr int
	}{
		{Pool2D{N: 1, C: 3, H: 7, W: 9, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 3, OW: 4}, 0, 0},
		{Pool2D{N: 2, C: 1, H: 5, W: 5, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, OH: 5, OW: 5}, 1, 1},
		// ceil mode: the last window runs past the padded input.
		{Pool2D{N: 1, C: 2, H: 6, W: 7, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, OH: 3, OW: 3}, 0, 0},
		{Pool2D{N: 1, C: 1, H: 1, W: 11, KH: 1, KW: 4, SH: 1, SW: 3, DH: 1, DW: 1, PL: 2, OH: 1, OW: 4}, 0, 1},
		// Every window inside the input (avgPoolInside): DenseNet's 2×2
		// stride 2, and 3×3 with dilation and uneven strides.
		{Pool2D{N: 2, C: 3, H: 14, W: 14, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 7, OW: 7}, 0, 0},
		{Pool2D{N: 1, C: 2, H: 11, W: 13, KH: 3, KW: 2, SH: 2, SW: 3, DH: 2, DW: 3, OH: 4, OW: 3}, 0, 0},
	} {
		for _, inc := range []bool{false, true} {
			x := randSlice(r, tc.p.N*tc.p.C*tc.p.H*tc.p.W)
			y := make([]float32, tc.p.N*tc.p.C*tc.p.OH*tc.p.OW)
			if err := (*Context)(nil).AvgPool2D(tc.p, tc.pb, tc.pr, inc, x, y); err != nil {
				t.Fatal(err)
			}
			closeTo(t, "AvgPool2D", y, naiveAvgPool(tc.p, tc.pb, tc.pr, inc, x), 1e-6)
		}
	}
}

func TestFastActivations(t *testing.T) {
	worst := 0.0
	for i := -200000; i <= 200000; i++ {
		x := float32(i) * 1e-4 // [-20, 20]
		y := make([]float32, 2)
		TanhFast([]float32{x}, y[:1])
		SigmoidFast([]float32{x}, y[1:])
		et := math.Abs(float64(y[0]) - math.Tanh(float64(x)))
		es := math.Abs(float64(y[1]) - 1/(1+math.Exp(-float64(x))))
		worst = math.Max(worst, math.Max(et, es))
	}
	if worst > 1e-6 {
		t.Fatalf("largest absolute error %g, want ≤ 1e-6", worst)
	}
	n := float32(math.NaN())
	y := []float32{0}
	TanhFast([]float32{n}, y)
	if y[0] == y[0] {
		t.Fatalf("tanh(NaN) = %g", y[0])
	}
}

func TestLSTMCellAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 5))
	for _, hidden := range []int{1, 7, 33} {
		rows := 3
		g := randSlice(r, rows*4*hidden)
		for i := range g {
			g[i] *= 4
		}
		c, h := randSlice(r, rows*hidden), make([]float32, rows*hidden)
		c0, g0 := append([]float32{}, c...), append([]float32{}, g...)
		LSTMCell(g, c, h, hidden) // overwrites g
		sig := func(v float32) float64 { return 1 / (1 + math.Exp(-float64(v))) }
		for rr := 0; rr < rows; rr++ {
			for j := 0; j < hidden; j++ {
				gr := g0[rr*4*hidden:]
				cn := sig(gr[2*hidden+j])*float64(c0[rr*hidden+j]) + sig(gr[j])*math.Tanh(float64(gr[3*hidden+j]))
				hn := sig(gr[hidden+j]) * math.Tanh(cn)
				if math.Abs(float64(c[rr*hidden+j])-cn) > 1e-5 || math.Abs(float64(h[rr*hidden+j])-hn) > 1e-5 {
					t.Fatalf("H=%d row %d unit %d: c %g h %g, want %g %g", hidden, rr, j, c[rr*hidden+j], h[rr*hidden+j], cn, hn)
				}
			}
		}
	}
}

func TestExp32(t *testing.T) {
	worst := 0.0
	for i := -873000; i <= 887000; i++ {
		x := float32(i) * 1e-4
		got, want := float64(exp32(x)), math.Exp(float64(x))
		worst = math.Max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Fatalf("largest relative error %g, want ≤ 3e-7", worst)
	}
	if v := exp32(-100); v != 0 {
		t.Fatalf("exp32(-100) = %g", v)
	}
	if v := exp32(float32(math.NaN())); v == v {
		t.Fatalf("exp32(NaN) = %g", v)
	}
	if v := exp32(float32(math.Inf(-1))); v != 0 {
		t.Fatalf("exp32(-Inf) = %g", v)
	}
}

func TestGeluAgainstErf(t *testing.T) {
	var xs []float32
	for i := -120000; i <= 120000; i++ {
		xs = append(xs, float32(i)*1e-4)
	}
	ys := make([]float32, len(xs))
	Gelu(xs, ys)
	for i, v := range xs {
		want := 0.5 * float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2))
		if d := math.Abs(float64(ys[i]) - want); d > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("Gelu(%g) = %g, want %g", v, ys[i], want)
		}
	}
	y := []float32{0}
	Gelu([]float32{float32(math.NaN())}, y)
	if y[0] == y[0] {
		t.Fatalf("Gelu(NaN) = %g", y[0])
	}
}

// TestTransposeRowsParts: the Transpose of parts read in place equals the
// Transpose of their concatenation, whatever the parts' sizes (empty ones
// too, runs across their boundaries, strided runs) and the row ranges.
// TestTransposeRowsSplit: TransposeRows over row ranges that cut the
// tiles and the batches writes what one call over all rows does.
func TestTransposeRowsSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3))
	for _, tc := range []struct{ shape, perm []int }{
		{[]int{3, 21, 5, 7}, []int{0, 2, 3, 1}},
		{[]int{2, 35, 21}, []int{0, 2, 1}},
	} {
		x := randSlice(r, numel(tc.shape))
		whole := make([]float32, len(x))
		Transpose(x, tc.shape, tc.perm, whole)
		rows := TransposeRowCount(tc.shape, tc.perm)
		for _, cuts := range [][]int{{0, 1, rows}, {0, 7, 13, 36, rows}, {0, rows - 3, rows}} {
			y := make([]float32, len(x))
			for i := 0; i+1 < len(cuts); i++ {
				TransposeRows(x, tc.shape, tc.perm, y, cuts[i], cuts[i+1])
			}
			if !slices.Equal(y, whole) {
				t.Errorf("TransposeRows %v %v in pieces %v differs from one call", tc.shape, tc.perm, cuts)
			}
		}
	}
}

func TestTransposeRowsParts(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3))
	for _, tc := range []struct{ shape, perm []int }{
		{[]int{1, 2, 5, 3, 4}, []int{0, 2, 1, 3, 4}},
		{[]int{2, 3, 5}, []int{2, 0, 1}},
		{[]int{4, 6}, []int{1, 0}},
		{[]int{3, 4, 5}, []int{0, 1, 2}},
	} {
		x := randSlice(r, numel(tc.shape))
		want := make([]float32, len(x))
		Transpose(x, tc.shape, tc.perm, want)
		for it := 0; it < 20; it++ {
			var parts [][]float32
			for rest := x; len(rest) > 0 || len(parts) == 0; {
				k := min(len(rest), r.IntN(len(x)/2+2))
				parts, rest = append(parts, rest[:k]), rest[k:]
			}
			rows := TransposeRowCount(tc.shape, tc.perm)
			got := make([]float32, len(x))
			for r0 := 0; r0 < rows; {
				r1 := min(rows, r0+1+r.IntN(3))
				TransposeRowsParts(parts, tc.shape, tc.perm, got, r0, r1)
				r0 = r1
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%v %v, %d parts: y[%d] = %g, want %g", tc.shape, tc.perm, len(parts), i, got[i], want[i])
				}
			}
		}
	}
}

// TestScaleShiftBlocksBits: the SIMD runs of ScaleShiftBlocks give the
// bits of float32(x·s) + b element by element (two roundings), in place
// and not, for blocks shorter than a vector, than the splat buffer and
// longer, with NaN, ±Inf and −0 among the values.
func TestScaleShiftBlocksBits(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0, 3e38}
	for _, inner := range []int{1, 7, 15, 16, 17, 49, 196, 255, 256, 257, 600, 3136} {
		for _, inPlace := range []bool{false, true} {
			const c = 5
			x := randSlice(r, 2*c*inner)
			for i, v := range special {
				x[(i*37)%len(x)] = v
			}
			s, b := randSlice(r, c), randSlice(r, c)
			s[1], b[2] = 0, float32(math.Copysign(0, -1))
			want := make([]float32, len(x))
			for i, v := range x {
				ch := (i/inner + 3) % c
				want[i] = float32(v*s[ch]) + b[ch]
			}
			y := make([]float32, len(x))
			if inPlace {
				copy(y, x)
				ScaleShiftBlocks(y, s, b, y, inner, 3)
			} else {
				ScaleShiftBlocks(x, s, b, y, inner, 3)
			}
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
					t.Fatalf("inner %d in place %v: y[%d] = %v, want %v (x %v)", inner, inPlace, i, y[i], want[i], x[i])
				}
			}
		}
	}
}

// TestAvgPoolInsideBits: the inside-only path has the bits of the general
// loop (the same sums in the same order) on the geometries it takes,
// with −0, ±Inf and NaN among the values.
func TestAvgPoolInsideBits(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 4))
	for _, p := range []Pool2D{
		{N: 1, C: 4, H: 8, W: 10, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: 4, OW: 5},
		{N: 2, C: 2, H: 9, W: 9, KH: 2, KW: 2, SH: 1, SW: 3, DH: 1, DW: 1, OH: 8, OW: 3},
		{N: 1, C: 3, H: 11, W: 13, KH: 3, KW: 2, SH: 2, SW: 3, DH: 2, DW: 3, OH: 4, OW: 3},
	} {
		x := randSlice(r, p.N*p.C*p.H*p.W)
		for i := range x[:8] {
			x[i] = float32(math.Copysign(0, -1))
		}
		x[20], x[41], x[63] = float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())
		got, want := make([]float32, p.N*p.C*p.OH*p.OW), make([]float32, p.N*p.C*p.OH*p.OW)
		if err := NewContext(2).AvgPool2D(p, 0, 0, false, x, got); err != nil {
			t.Fatal(err)
		}
		avgPoolGeneral(&p, 0, 0, false, x, want, 0, p.N*p.C)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: y[%d] = %v, want %v", p, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkTransposeLayouts times NCHW → NHWC and back on a mobile net's
// tensors (one thread).
func BenchmarkTransposeLayouts(b *testing.B) {
	r := rand.New(rand.NewPCG(30, 4))
	for _, s := range [][3]int{{24, 28, 28}, {88, 28, 28}, {16, 112, 112}, {576, 7, 7}} {
		x := randSlice(r, s[0]*s[1]*s[2])
		y := make([]float32, len(x))
		for _, dir := range []struct {
			name        string
			shape, perm []int
		}{{"to_nhwc", []int{1, s[0], s[1], s[2]}, []int{0, 2, 3, 1}}, {"to_nchw", []int{1, s[1], s[2], s[0]}, []int{0, 3, 1, 2}}} {
			b.Run(fmt.Sprintf("%dch_%d²/%s", s[0], s[1], dir.name), func(b *testing.B) {
				for b.Loop() {
					Transpose(x, dir.shape, dir.perm, y)
				}
			})
		}
	}
}
