package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGlobalAveragePoolNHWC checks the channels-last pool against the
// NCHW one (GlobalAveragePoolRows on the same values transposed) on
// channel counts around the SIMD blocks of 8 to 32 and the groups of 16
// the work splits by, one and two images, one to three threads: bit for
// bit on images summed whole, within float64 rounding on the large ones
// summed in chunks of pixels, and there bit for bit the same on every
// thread count; bad sizes are refused.
func TestGlobalAveragePoolNHWC(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 2} {
		for _, pix := range []int{1, 5, 49, 196, 3136} {
			for _, c := range []int{1, 7, 8, 9, 16, 23, 24, 31, 32, 33, 40, 48, 56, 72, 100} {
				in := make([]float32, n*pix*c)
				for i := range in {
					in[i] = r.Float32()*2 - 1
				}
				planes := make([]float32, len(in))
				for i := range n {
					for p := range pix {
						for k := range c {
							planes[(i*c+k)*pix+p] = in[(i*pix+p)*c+k]
						}
					}
				}
				want := make([]float32, n*c)
				GlobalAveragePoolRows(planes, want, pix, 0, n*c)
				chunked := pix*c >= 2*gapChunkValues
				var first []float32
				for _, threads := range []int{1, 2, 3} {
					ctx := NewContext(threads)
					got := make([]float32, n*c)
					if err := ctx.GlobalAveragePoolNHWC(n, pix, c, in, got); err != nil {
						t.Fatal(err)
					}
					ctx.Close()
					for i := range want {
						same := math.Float32bits(got[i]) == math.Float32bits(want[i])
						if !same && (!chunked || math.Abs(float64(got[i]-want[i])) > 1e-6) {
							t.Fatalf("%d images of %d pixels of %d channels, %d threads: mean %d = %v, NCHW %v", n, pix, c, threads, i, got[i], want[i])
						}
						if first != nil && math.Float32bits(got[i]) != math.Float32bits(first[i]) {
							t.Fatalf("%d images of %d pixels of %d channels: mean %d = %v on %d threads, %v on one", n, pix, c, i, got[i], threads, first[i])
						}
					}
					if first == nil {
						first = got
					}
				}
			}
		}
	}
	ctx := NewContext(1)
	defer ctx.Close()
	if err := ctx.GlobalAveragePoolNHWC(1, 4, 8, make([]float32, 31), make([]float32, 8)); err == nil {
		t.Error("a short input accepted")
	}
	if err := ctx.GlobalAveragePoolNHWC(1, 0, 8, nil, make([]float32, 8)); err == nil {
		t.Error("no pixels accepted")
	}
}
