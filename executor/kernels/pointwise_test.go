package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// pointwiseCase is one NHWC 1×1 convolution: pix pixels, c → m channels.
type pointwiseCase struct{ pix, c, m int }

// pointwiseCases covers the rows kernels' edges (pixels not a multiple
// of 12), the column masks (m not a multiple of 16 or 32), one and two
// registers a row, several k-blocks (c > 256) and a mobile net's shapes.
func pointwiseCases() []pointwiseCase {
	return []pointwiseCase{
		{1, 1, 1}, {5, 3, 7}, {12, 8, 16}, {13, 16, 17}, {23, 24, 33},
		{49, 40, 24}, {100, 24, 88}, {197, 88, 24}, {60, 300, 40},
		{37, 600, 72}, {7, 1280, 5}, {784, 24, 88}, {144, 96, 576},
	}
}

// naivePointwise is the float64 reference of PointwiseNHWC (w m×c).
func naivePointwise(tc pointwiseCase, x, w, bias []float32, act Act) []float64 {
	y := make([]float64, tc.pix*tc.m)
	for p := 0; p < tc.pix; p++ {
		for j := 0; j < tc.m; j++ {
			s := 0.0
			if bias != nil {
				s = float64(bias[j])
			}
			for i := 0; i < tc.c; i++ {
				s += float64(x[p*tc.c+i]) * float64(w[j*tc.c+i])
			}
			switch act {
			case ActRelu:
				s = max(s, 0)
			case ActRelu6:
				s = min(max(s, 0), 6)
			}
			y[p*tc.m+j] = s
		}
	}
	return y
}

func TestPointwiseNHWC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range pointwiseCases() {
		for _, act := range []Act{ActNone, ActRelu, ActRelu6} {
			for _, withBias := range []bool{true, false} {
				name := fmt.Sprintf("%dpx_%dto%d_act%d_bias%v", tc.pix, tc.c, tc.m, act, withBias)
				x, w := randSlice(r, tc.pix*tc.c), randSlice(r, tc.m*tc.c)
				// Scaled so that ReLU6 clips some outputs.
				for i := range w {
					w[i] *= 4
				}
				var bias []float32
				if withBias {
					bias = randSlice(r, tc.m)
				}
				pw, err := PackPointwise(tc.c, tc.m, w)
				if err != nil {
					t.Fatal(err)
				}
				want := naivePointwise(tc, x, w, bias, act)
				var first []float32
				for _, threads := range []int{1, 2, 3} {
					ctx := NewContext(threads)
					// A canary past the output: nothing written beyond it.
					y := make([]float32, tc.pix*tc.m+1)
					y[len(y)-1] = 42
					if err := ctx.PointwiseNHWC(1, tc.pix, tc.c, tc.m, x, pw, bias, y, act, nil); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					ctx.Close()
					if y[len(y)-1] != 42 {
						t.Fatalf("%s: wrote past the output", name)
					}
					y = y[:len(y)-1]
					tol := 1e-5 * float64(tc.c)
					first = checkThreads(t, fmt.Sprintf("%s, %d threads", name, threads), y, want, tol, first)
				}
			}
		}
	}
}

// TestPointwiseNHWCStrided checks PointwiseNHWCStrided (the input a
// window of a wider tensor's channels, as a ShuffleNet unit's Slice hands
// its 1×1 convolution) against PointwiseNHWC on the window copied, bit for
// bit, at both ends of the wider rows and in between, on the cases'
// shapes, one and two images, one to three threads; nothing outside the
// window is read (NaN there).
func TestPointwiseNHWCStrided(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range pointwiseCases() {
		for _, n := range []int{1, 2} {
			for _, pad := range [][2]int{{0, 3}, {tc.c, 0}, {5, 17}} {
				lda := pad[0] + tc.c + pad[1]
				pix := n * tc.pix
				wide := make([]float32, (pix-1)*lda+pad[0]+tc.c+pad[1])
				for i := range wide {
					wide[i] = float32(math.NaN())
				}
				dense := randSlice(r, pix*tc.c)
				for p := range pix {
					copy(wide[p*lda+pad[0]:], dense[p*tc.c:(p+1)*tc.c])
				}
				w, bias := randSlice(r, tc.m*tc.c), randSlice(r, tc.m)
				pw, err := PackPointwise(tc.c, tc.m, w)
				if err != nil {
					t.Fatal(err)
				}
				want := make([]float32, pix*tc.m)
				if err := NewContext(1).PointwiseNHWC(n, tc.pix, tc.c, tc.m, dense, pw, bias, want, ActRelu, nil); err != nil {
					t.Fatal(err)
				}
				for _, threads := range []int{1, 2, 3} {
					ctx := NewContext(threads)
					got := make([]float32, pix*tc.m)
					if err := ctx.PointwiseNHWCStrided(n, tc.pix, tc.c, lda, tc.m, wide[pad[0]:], pw, bias, got, ActRelu, nil); err != nil {
						t.Fatal(err)
					}
					ctx.Close()
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%+v, %d images, rows of %d from %d, %d threads: y[%d] = %g, the copied window's %g", tc, n, lda, pad[0], threads, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestPointwiseNHWCSubsampled checks the strided 1×1 convolution on
// NHWC activations bit for bit against the NCHW one (Conv2DPackedAct
// on the same values in planes) on 1 to 3 threads: ResNet's and RegNet's
// downsampling shortcuts, odd sizes, two images.
func TestPointwiseNHWCSubsampled(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, p := range []Conv2D{
		{N: 1, C: 32, H: 56, W: 56, M: 64, KH: 1, KW: 1, SH: 2, SW: 2, DH: 1, DW: 1, Groups: 1},
		{N: 2, C: 24, H: 15, W: 13, M: 40, KH: 1, KW: 1, SH: 2, SW: 2, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 512, H: 14, W: 14, M: 1024, KH: 1, KW: 1, SH: 2, SW: 2, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 16, H: 9, W: 12, M: 8, KH: 1, KW: 1, SH: 3, SW: 2, DH: 1, DW: 1, Groups: 1},
	} {
		x, w, bias := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*p.C), randSlice(r, p.M)
		pw, err := PackPointwise(p.C, p.M, w)
		if err != nil {
			t.Fatal(err)
		}
		xn := toNHWC(x, p.N, p.C, p.H, p.W)
		checkBitsOfNCHW(t, fmt.Sprintf("%+v", p), p, x, w, bias, ActRelu, false, func(ctx *Context, y []float32) error {
			return ctx.PointwiseNHWCSubsampled(p, xn, pw, bias, y, ActRelu, nil)
		})
	}
}

// TestPointwiseNHWCBitsOfNCHW checks PointwiseNHWC against the NCHW
// 1×1 convolution (Conv2DPackedAct on the same values in planes) bit for
// bit — the executor's NHWC plans keep the NCHW plan's bits — on shapes
// whose SGEMM sums k in one chain of k-blocks and in two halves
// (gemmSplitK: 7² × 1152 → 192, 14² × 1344 → 224), one and two images,
// ReLU or none, one to three threads.
func TestPointwiseNHWCBitsOfNCHW(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ side, c, m int }{{14, 40, 24}, {7, 600, 72}, {7, 1152, 192}, {14, 1344, 224}, {7, 1280, 40}} {
		pix := tc.side * tc.side
		w, bias := randSlice(r, tc.m*tc.c), randSlice(r, tc.m)
		pw, err := PackPointwise(tc.c, tc.m, w)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2} {
			p := Conv2D{N: n, C: tc.c, H: tc.side, W: tc.side, M: tc.m, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
			pc, err := PackConvWeights(p, w)
			if err != nil {
				t.Fatal(err)
			}
			x := randSlice(r, n*pix*tc.c)
			planes := make([]float32, len(x))
			for i := range n {
				for q := range pix {
					for k := range tc.c {
						planes[(i*tc.c+k)*pix+q] = x[(i*pix+q)*tc.c+k]
					}
				}
			}
			for _, act := range []Act{ActNone, ActRelu} {
				for _, threads := range []int{1, 2, 3} {
					ctx := NewContext(threads)
					want := make([]float32, n*pix*tc.m)
					if err := ctx.Conv2DPackedAct(p, planes, w, pc, bias, want, act, nil); err != nil {
						t.Fatal(err)
					}
					y := make([]float32, n*pix*tc.m)
					if err := ctx.PointwiseNHWC(n, pix, tc.c, tc.m, x, pw, bias, y, act, nil); err != nil {
						t.Fatal(err)
					}
					ctx.Close()
					for i := range n {
						for q := range pix {
							for j := range tc.m {
								got, w := y[(i*pix+q)*tc.m+j], want[(i*tc.m+j)*pix+q]
								if math.Float32bits(got) != math.Float32bits(w) {
									t.Fatalf("%d images of %d² × %d → %d, act %d, %d threads: image %d pixel %d channel %d = %v, NCHW %v", n, tc.side, tc.c, tc.m, act, threads, i, q, j, got, w)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestPointwiseNHWCScaled checks the scaled pointwise convolution
// against the Mul by channel (MulSuffix) and then PointwiseNHWC, bit for
// bit: one scale for all images and one per image, blocks of scaled
// pixels (3136 pixels of 32 channels: two blocks; 1152 channels: a block
// of 48 pixels), one to three threads.
func TestPointwiseNHWCScaled(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := append(pointwiseCases(), pointwiseCase{3136, 32, 16}, pointwiseCase{98, 1152, 40})
	for _, tc := range cases {
		for _, images := range []int{1, 2} {
			if tc.pix%images != 0 {
				continue
			}
			imgPix := tc.pix / images
			for _, perImage := range []bool{false, true} {
				name := fmt.Sprintf("%dpx_%dto%d_images%d_perImage%v", tc.pix, tc.c, tc.m, images, perImage)
				x, w, bias := randSlice(r, tc.pix*tc.c), randSlice(r, tc.m*tc.c), randSlice(r, tc.m)
				scale := randSlice(r, tc.c)
				if perImage {
					scale = randSlice(r, images*tc.c)
				}
				pw, err := PackPointwise(tc.c, tc.m, w)
				if err != nil {
					t.Fatal(err)
				}
				xs := make([]float32, len(x))
				for k := range images {
					row := scale[:tc.c]
					if perImage {
						row = scale[k*tc.c : (k+1)*tc.c]
					}
					MulSuffix(x[k*imgPix*tc.c:(k+1)*imgPix*tc.c], row, xs[k*imgPix*tc.c:])
				}
				want := make([]float32, tc.pix*tc.m)
				if err := (*Context)(nil).PointwiseNHWC(1, tc.pix, tc.c, tc.m, xs, pw, bias, want, ActRelu, nil); err != nil {
					t.Fatal(err)
				}
				for _, threads := range []int{1, 2, 3} {
					ctx := NewContext(threads)
					y := make([]float32, tc.pix*tc.m)
					err := ctx.PointwiseNHWCScaled(images, imgPix, tc.c, tc.m, x, scale, pw, bias, y, ActRelu, nil)
					ctx.Close()
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for i := range y {
						if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s, %d threads: y[%d] = %v, Mul then PointwiseNHWC %v", name, threads, i, y[i], want[i])
						}
					}
				}
			}
		}
	}
	pw, err := PackPointwise(4, 6, make([]float32, 24))
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]float32, 40), make([]float32, 60)
	for name, call := range map[string]func() error{
		"short scale": func() error {
			return (*Context)(nil).PointwiseNHWCScaled(1, 10, 4, 6, x, make([]float32, 3), pw, nil, y, ActNone, nil)
		},
		"scale per image": func() error {
			return (*Context)(nil).PointwiseNHWCScaled(2, 5, 4, 6, x, make([]float32, 12), pw, nil, y, ActNone, nil)
		},
		"short input": func() error {
			return (*Context)(nil).PointwiseNHWCScaled(2, 5, 4, 6, x[:39], make([]float32, 4), pw, nil, y, ActNone, nil)
		},
		"negative images": func() error {
			return (*Context)(nil).PointwiseNHWCScaled(-1, 10, 4, 6, x, make([]float32, 4), pw, nil, y, ActNone, nil)
		},
	} {
		var se *ShapeError
		if err := call(); !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a ShapeError", name, err)
		}
	}
}

// checkThreads fails t when y is not within tol of want, or (first not
// nil: the output of one thread) not bit for bit first; it returns the
// first output.
func checkThreads(t *testing.T, name string, y []float32, want []float64, tol float64, first []float32) []float32 {
	t.Helper()
	for i, v := range y {
		if d := math.Abs(float64(v) - want[i]); d > tol {
			t.Fatalf("%s: y[%d] = %v, want %v", name, i, v, want[i])
		}
	}
	if first == nil {
		return y
	}
	for i := range y {
		if math.Float32bits(y[i]) != math.Float32bits(first[i]) {
			t.Fatalf("%s: differs from one thread at %d: %v against %v", name, i, y[i], first[i])
		}
	}
	return first
}

func TestPointwiseNHWCErrors(t *testing.T) {
	pw, err := PackPointwise(4, 6, make([]float32, 24))
	if err != nil {
		t.Fatal(err)
	}
	other, err := PackPointwise(6, 4, make([]float32, 24))
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]float32, 40), make([]float32, 60)
	var ctx *Context
	for name, call := range map[string]func() error{
		"short input":  func() error { return ctx.PointwiseNHWC(1, 11, 4, 6, x, pw, nil, y, ActNone, nil) },
		"short output": func() error { return ctx.PointwiseNHWC(1, 10, 4, 6, x, pw, nil, y[:59], ActNone, nil) },
		"short bias":   func() error { return ctx.PointwiseNHWC(1, 10, 4, 6, x, pw, make([]float32, 5), y, ActNone, nil) },
		"wrong pack":   func() error { return ctx.PointwiseNHWC(1, 10, 4, 6, x, other, nil, y, ActNone, nil) },
		"no pack":      func() error { return ctx.PointwiseNHWC(1, 10, 4, 6, x, nil, nil, y, ActNone, nil) },
		"bad act":      func() error { return ctx.PointwiseNHWC(1, 10, 4, 6, x, pw, nil, y, Act(9), nil) },
		"no channels":  func() error { return ctx.PointwiseNHWC(1, 10, 0, 6, x, pw, nil, y, ActNone, nil) },
		"narrow rows":  func() error { return ctx.PointwiseNHWCStrided(1, 10, 4, 3, 6, x, pw, nil, y, ActNone, nil) },
		"short window": func() error { return ctx.PointwiseNHWCStrided(1, 10, 4, 5, 6, x, pw, nil, y, ActNone, nil) },
	} {
		var se *ShapeError
		if err := call(); !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a ShapeError", name, err)
		}
	}
}

// pointwiseBenchShapes are a mobile net's 1×1 convolutions (MobileNet-v3
// small, ShuffleNet-v2, MobileNet-v2) as pixels, in and out channels.
var pointwiseBenchShapes = []pointwiseCase{
	{56 * 56, 16, 72}, {56 * 56, 72, 24}, {28 * 28, 24, 88}, {28 * 28, 88, 24},
	{28 * 28, 58, 58}, {14 * 14, 116, 116}, {14 * 14, 96, 576}, {14 * 14, 576, 96},
	{7 * 7, 160, 960}, {7 * 7, 960, 160},
}

// BenchmarkPointwiseLayouts times each shape as an NHWC step
// (PointwiseNHWC) and as the NCHW step the executor runs today
// (Conv2DPackedAct), at 1 and 2 threads.
func BenchmarkPointwiseLayouts(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range pointwiseBenchShapes {
		x, w, bias := randSlice(r, s.pix*s.c), randSlice(r, s.m*s.c), randSlice(r, s.m)
		y := make([]float32, s.pix*s.m)
		pw, err := PackPointwise(s.c, s.m, w)
		if err != nil {
			b.Fatal(err)
		}
		side := int(math.Sqrt(float64(s.pix)))
		p := Conv2D{N: 1, C: s.c, H: side, W: side, M: s.m, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
		pc, err := PackConvWeights(p, w)
		if err != nil {
			b.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			ctx := NewContext(threads)
			b.Run(fmt.Sprintf("%dpx_%dto%d/nhwc/%dt", s.pix, s.c, s.m, threads), func(b *testing.B) {
				defer ctx.Hold()()
				for b.Loop() {
					if err := ctx.PointwiseNHWC(1, s.pix, s.c, s.m, x, pw, bias, y, ActRelu, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%dpx_%dto%d/nchw/%dt", s.pix, s.c, s.m, threads), func(b *testing.B) {
				defer ctx.Hold()()
				for b.Loop() {
					if err := ctx.Conv2DPackedAct(p, x, w, pc, bias, y, ActRelu, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			ctx.Close()
		}
	}
}

// epilogueRecorder is an Epilogue that adds 1 to each element of its
// segments and records them: the NHWC kernels must call it once for
// every element, after the element is final.
type epilogueRecorder struct {
	mu   sync.Mutex
	y    []float32
	hits []int
}

func (e *epilogueRecorder) run(off, n int) {
	for i := off; i < off+n; i++ {
		e.y[i]++
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := off; i < off+n; i++ {
		e.hits[i]++
	}
}

// check reports an element the epilogue missed or ran twice on, or whose
// value is not want's plus 1 (want: the kernel's output without it).
func (e *epilogueRecorder) check(t *testing.T, name string, want []float32) {
	t.Helper()
	for i, h := range e.hits {
		if h != 1 {
			t.Fatalf("%s: the epilogue ran %d times on element %d", name, h, i)
		}
		if e.y[i] != want[i]+1 {
			t.Fatalf("%s: y[%d] = %v after the epilogue, want %v + 1", name, i, e.y[i], want[i])
		}
	}
}

func TestNHWCEpilogues(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, threads := range []int{1, 2, 3} {
		ctx := NewContext(threads)
		for _, tc := range []pointwiseCase{{784, 24, 88}, {197, 88, 24}, {37, 600, 72}} {
			x, w, bias := randSlice(r, tc.pix*tc.c), randSlice(r, tc.m*tc.c), randSlice(r, tc.m)
			pw, err := PackPointwise(tc.c, tc.m, w)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float32, tc.pix*tc.m)
			if err := ctx.PointwiseNHWC(1, tc.pix, tc.c, tc.m, x, pw, bias, want, ActRelu6, nil); err != nil {
				t.Fatal(err)
			}
			e := &epilogueRecorder{y: make([]float32, len(want)), hits: make([]int, len(want))}
			if err := ctx.PointwiseNHWC(1, tc.pix, tc.c, tc.m, x, pw, bias, e.y, ActRelu6, e.run); err != nil {
				t.Fatal(err)
			}
			e.check(t, fmt.Sprintf("pointwise %v, %d threads", tc, threads), want)
		}
		for _, p := range dwNHWCCases()[:3] {
			oh, ow := p.Out()
			x, w, bias := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.C*p.KH*p.KW), randSlice(r, p.C)
			pw, err := PackDepthwise(p, w)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float32, p.N*p.C*oh*ow)
			if err := ctx.DepthwiseNHWC(p, x, pw, bias, want, ActRelu, nil); err != nil {
				t.Fatal(err)
			}
			e := &epilogueRecorder{y: make([]float32, len(want)), hits: make([]int, len(want))}
			if err := ctx.DepthwiseNHWC(p, x, pw, bias, e.y, ActRelu, e.run); err != nil {
				t.Fatal(err)
			}
			e.check(t, fmt.Sprintf("depthwise %+v, %d threads", p, threads), want)
		}
		ctx.Close()
	}
}

// BenchmarkPointwiseScaled times EfficientNet-b0's projections after a
// squeeze-and-excitation (pixels, in and out channels) on one thread as
// the Mul by channel and then the 1×1 convolution (sep) and as one
// PointwiseNHWCScaled call (fused).
func BenchmarkPointwiseScaled(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []pointwiseCase{{112 * 112, 32, 16}, {56 * 56, 144, 24}, {28 * 28, 240, 40}, {14 * 14, 672, 112}, {7 * 7, 1152, 320}} {
		x, w, bias := randSlice(r, tc.pix*tc.c), randSlice(r, tc.m*tc.c), randSlice(r, tc.m)
		s := randSlice(r, tc.c)
		pw, err := PackPointwise(tc.c, tc.m, w)
		if err != nil {
			b.Fatal(err)
		}
		y, xs := make([]float32, tc.pix*tc.m), make([]float32, len(x))
		ctx := NewContext(1)
		b.Run(fmt.Sprintf("%dx%dto%d/sep", tc.pix, tc.c, tc.m), func(b *testing.B) {
			for range b.N {
				MulSuffix(x, s, xs)
				if err := ctx.PointwiseNHWC(1, tc.pix, tc.c, tc.m, xs, pw, bias, y, ActNone, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dx%dto%d/fused", tc.pix, tc.c, tc.m), func(b *testing.B) {
			for range b.N {
				if err := ctx.PointwiseNHWCScaled(1, tc.pix, tc.c, tc.m, x, s, pw, bias, y, ActNone, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		ctx.Close()
	}
}
