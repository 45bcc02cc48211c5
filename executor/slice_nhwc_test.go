package executor

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// TestSliceNHWC checks the Slice of a tensor stored channels last
// (sliceNHWC) against the same Slice of its NCHW values: some channels of
// every pixel (rows copied), every other channel, and a band of rows,
// on one and two threads; the result is stored channels last too.
func TestSliceNHWC(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	n, ch, h, w := 2, 40, 16, 16 // large enough for two chunks
	nchw := make([]float32, n*ch*h*w)
	for i := range nchw {
		nchw[i] = r.Float32()
	}
	nhwc := make([]float32, len(nchw))
	for i := range n {
		for k := range ch {
			for p := range h * w {
				nhwc[(i*h*w+p)*ch+k] = nchw[(i*ch+k)*h*w+p]
			}
		}
	}
	whole := func(d int) sliceSpec { return sliceSpec{0, 1, d} }
	for _, cs := range []struct {
		name  string
		specs []sliceSpec
	}{
		{"channels 8 to 32", []sliceSpec{whole(n), {8, 1, 24}, whole(h), whole(w)}},
		{"every other channel", []sliceSpec{whole(n), {0, 2, 20}, whole(h), whole(w)}},
		{"rows 1 to 3 of image 1", []sliceSpec{{1, 1, 1}, whole(ch), {1, 1, 2}, whole(w)}},
	} {
		out := make([]int, 4)
		for d, s := range cs.specs {
			out[d] = s.count
		}
		want := make([]float32, numel(out))
		sliceF32Rows(nchw, []int{n, ch, h, w}, cs.specs, want, 0, numel(out[:3]))
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, %d threads", cs.name, threads), func(t *testing.T) {
				kc := kernels.NewContext(threads)
				defer kc.Close()
				c := &lctx{e: &Executor{kern: kc}}
				x := &htensor{dt: canonical.Float, shape: []int{n, ch, h, w}, data: append([]float32{}, nhwc...), nhwc: true}
				y := c.sliceNHWC(x, out, cs.specs)
				if !y.nhwc || !shapeEq(y.shape, out) {
					t.Fatalf("output shape %v, nhwc %v; want %v stored channels last", y.shape, y.nhwc, out)
				}
				got, _ := f32(nchwOf(y))
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("element %d = %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}
