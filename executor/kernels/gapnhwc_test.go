package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGlobalAveragePoolNHWC checks the channels-last pool against the
// NCHW one (GlobalAveragePoolNCHW on the same values transposed) bit for
// bit, and both against float64 sums, on channel counts around the SIMD
// blocks of 8 to 32 and the groups of 16 the work splits by, images
// summed whole and in chunks of pixels (3136 pixels of 21 channels or
// more; in two halves, 196 pixels of 48 channels or more), one and two
// images, one to three threads; bad sizes are refused.
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
				exact := make([]float64, n*c)
				for i := range n {
					for p := range pix {
						for k := range c {
							planes[(i*c+k)*pix+p] = in[(i*pix+p)*c+k]
							exact[i*c+k] += float64(in[(i*pix+p)*c+k])
						}
					}
				}
				for _, threads := range []int{1, 2, 3} {
					ctx := NewContext(threads)
					got, want := make([]float32, n*c), make([]float32, n*c)
					if err := ctx.GlobalAveragePoolNHWC(n, pix, c, in, got); err != nil {
						t.Fatal(err)
					}
					if err := ctx.GlobalAveragePoolNCHW(n, c, pix, planes, want); err != nil {
						t.Fatal(err)
					}
					ctx.Close()
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%d images of %d pixels of %d channels, %d threads: mean %d = %v, NCHW %v", n, pix, c, threads, i, got[i], want[i])
						}
						if e := exact[i] / float64(pix); math.Abs(float64(got[i])-e) > 1e-6 {
							t.Fatalf("%d images of %d pixels of %d channels, %d threads: mean %d = %v, want %v", n, pix, c, threads, i, got[i], e)
						}
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
	if err := ctx.GlobalAveragePoolNCHW(1, 8, 4, make([]float32, 31), make([]float32, 8)); err == nil {
		t.Error("a short NCHW input accepted")
	}
}
