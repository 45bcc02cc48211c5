package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDepthwiseNHWCBitsOfNCHW checks DepthwiseNHWC against the NCHW
// depthwise convolution (Conv2DPackedAct), bit for bit, on one to three
// threads: a plan's replays run the NHWC kernel where its first run ran
// the NCHW one, and the two must give the same outputs (TestNHWCPlan),
// whatever the micro-kernel (ONNXCONV_SGEMM_KERNEL).
func TestDepthwiseNHWCBitsOfNCHW(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, p := range dwNHWCCases() {
		for _, act := range []Act{ActNone, ActRelu, ActRelu6} {
			name := fmt.Sprintf("%dx%dx%dx%d_k%dx%d_s%d_d%d_act%d", p.N, p.C, p.H, p.W, p.KH, p.KW, p.SH, p.DH, act)
			x, w, bias := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.C*p.KH*p.KW), randSlice(r, p.C)
			pw, err := PackDepthwise(p, w)
			if err != nil {
				t.Fatal(err)
			}
			xn := toNHWC(x, p.N, p.C, p.H, p.W)
			// The NCHW depthwise kernels add a padded tap's 0·w: the
			// sign of a zero may differ.
			checkBitsOfNCHW(t, name, p, x, w, bias, act, true, func(ctx *Context, y []float32) error {
				return ctx.DepthwiseNHWC(p, xn, pw, bias, y, act, nil)
			})
		}
	}
}

// checkBitsOfNCHW runs the convolution p (weights w, packed for
// Conv2DPackedAct) in NCHW on x and each NHWC kernel in run (writing y,
// channels last) on 1, 2 and 3 threads, and fails t unless every run of
// every kernel has the NCHW path's bits (anyZero: a zero of either sign
// matches a zero). It returns the NCHW output channels last.
func checkBitsOfNCHW(t *testing.T, name string, p Conv2D, x, w, bias []float32, act Act, anyZero bool, run ...func(ctx *Context, y []float32) error) []float32 {
	t.Helper()
	pc, err := PackConvWeights(p, w)
	if err != nil {
		t.Fatal(err)
	}
	oh, ow := p.Out()
	var first []float32
	for _, threads := range []int{1, 2, 3} {
		ctx := NewContext(threads)
		planes := make([]float32, p.N*p.M*oh*ow)
		if err := ctx.Conv2DPackedAct(p, x, w, pc, bias, planes, act, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := toNHWC(planes, p.N, p.M, oh, ow)
		if first == nil {
			first = want
		}
		for k, f := range run {
			y := make([]float32, len(planes))
			if err := f(ctx, y); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(want[i]) && !(anyZero && y[i] == 0 && want[i] == 0) {
					t.Fatalf("%s, %d threads, kernel %d: element %d = %v, NCHW %v", name, threads, k, i, y[i], want[i])
				}
			}
		}
		ctx.Close()
	}
	return first
}
