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
			oh, ow := p.Out()
			pw, err := PackDepthwise(p, w)
			if err != nil {
				t.Fatal(err)
			}
			pc, err := PackConvWeights(p, w)
			if err != nil {
				t.Fatal(err)
			}
			xn := toNHWC(x, p.N, p.C, p.H, p.W)
			for _, threads := range []int{1, 2, 3} {
				ctx := NewContext(threads)
				planes := make([]float32, p.N*p.C*oh*ow)
				err := ctx.Conv2DPackedAct(p, x, w, pc, bias, planes, act, nil)
				y := make([]float32, len(planes))
				if err == nil {
					err = ctx.DepthwiseNHWC(p, xn, pw, bias, y, act, nil)
				}
				ctx.Close()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want := toNHWC(planes, p.N, p.C, oh, ow)
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(want[i]) && !(y[i] == 0 && want[i] == 0) {
						t.Fatalf("%s, %d threads: element %d = %v, NCHW %v", name, threads, i, y[i], want[i])
					}
				}
			}
		}
	}
}
