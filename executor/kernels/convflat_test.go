package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// convPath names the path Conv2DPacked takes with weights packed by
// PackConvWeights.
func convPath(p Conv2D) string {
	direct := p.KH == 1 && p.KW == 1 && p.SH == 1 && p.SW == 1 && p.PT == 0 && p.PL == 0 && p.PB == 0 && p.PR == 0
	switch {
	case p.C == p.Groups:
		return "depthwise"
	case convSwapped(&p, best) && realPixels(&p, best):
		return "swapped pixels"
	case convSwapped(&p, best):
		return "swapped"
	case direct:
		return "direct"
	case useRows(&p, best, &Packed{isA: true}):
		return "rows"
	case useFlat(&p, best.nr):
		return "flat"
	}
	return "implicit"
}

// TestConvFlatMatchesIm2col: the phase-plane grid paths (convFlat, and
// convFlatT with the weights transposed) give results bit-identical to
// the im2col path, on 1 to 4 threads, on odd shapes (strides, dilations,
// asymmetric pads, groups, batches, chunked grids); and the cases cover
// every path Conv2DPacked chooses.
func TestConvFlatMatchesIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 1))
	cases := []Conv2D{
		// resnet_small-like layers: 16 channels at 16×16, 128 at 2×2.
		{N: 1, C: 16, H: 16, W: 16, M: 16, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 128, H: 2, W: 2, M: 128, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 64, H: 4, W: 4, M: 128, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 16, H: 16, W: 16, M: 32, KH: 1, KW: 1, SH: 2, SW: 2, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 3, H: 33, W: 31, M: 16, KH: 7, KW: 7, SH: 2, SW: 2, DH: 1, DW: 1, PT: 3, PL: 3, PB: 3, PR: 3, Groups: 1},
		// Odd: strides 2×3, dilations, asymmetric pads, groups, batch 2.
		{N: 2, C: 6, H: 11, W: 12, M: 9, KH: 3, KW: 2, SH: 2, SW: 3, DH: 2, DW: 2, PT: 0, PL: 2, PB: 3, PR: 1, Groups: 3},
		{N: 2, C: 10, H: 5, W: 7, M: 70, KH: 3, KW: 2, SH: 1, SW: 2, DH: 2, DW: 1, PT: 2, PL: 0, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 9, H: 13, W: 9, M: 13, KH: 2, KW: 3, SH: 3, SW: 1, DH: 1, DW: 3, PT: 1, PL: 3, PB: 0, PR: 2, Groups: 1},
		{N: 1, C: 24, H: 3, W: 3, M: 100, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 2},
		{N: 1, C: 5, H: 1, W: 29, M: 7, KH: 1, KW: 5, SH: 1, SW: 2, DH: 1, DW: 1, PL: 2, PR: 2, Groups: 1},
		{N: 1, C: 8, H: 6, W: 6, M: 8, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		// One pixel, 1×1 (the SE blocks' convolutions): a GEMV on the
		// packed weights; batch 2 and groups too.
		{N: 1, C: 576, H: 1, W: 1, M: 144, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 2, C: 24, H: 1, W: 1, M: 70, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 2},
		// Grids over maxCols: chunks of output rows.
		{N: 1, C: 4, H: 200, W: 190, M: 40, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		// Wide rows, many output pixels: the convB implicit GEMM.
		{N: 1, C: 16, H: 2, W: 100, M: 16, KH: 2, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 0, PL: 1, PB: 0, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 7, W: 40, M: 4, KH: 1, KW: 3, SH: 1, SW: 3, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 5, H: 40, W: 2, M: 8, KH: 1, KW: 7, SH: 1, SW: 1, DH: 1, DW: 1, PL: 3, PR: 3, Groups: 1},
		// Inputs over maxCols: no phase planes (the implicit GEMM).
		{N: 1, C: 64, H: 130, W: 129, M: 8, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		// Tiny outputs: the transposed path on the output pixels
		// themselves (a 3×3 output is a 3×5 grid), squeezenet's last
		// fire modules and resnet's second stage.
		{N: 1, C: 48, H: 3, W: 3, M: 192, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 2, C: 32, H: 8, W: 8, M: 32, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 16, H: 2, W: 3, M: 40, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 6, H: 5, W: 4, M: 70, KH: 2, KW: 3, SH: 2, SW: 1, DH: 1, DW: 2, PT: 1, PL: 2, PB: 0, PR: 1, Groups: 2},
		// 1×1 convolutions on few pixels (squeezenet's last fire modules).
		{N: 1, C: 256, H: 3, W: 3, M: 48, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 48, H: 3, W: 3, M: 192, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 2, C: 7, H: 9, W: 13, M: 17, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		// 1×1 projections to few channels on planes whose rows alias in
		// L1 (B read in place for at most 2 panels of A).
		{N: 1, C: 32, H: 112, W: 112, M: 16, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 144, H: 56, W: 56, M: 24, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		{N: 1, C: 300, H: 32, W: 32, M: 20, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1},
		// Enough work that the phase-plane copy, the bias fill and the
		// output copy split over the threads too (TestFlatSplits).
		{N: 1, C: 64, H: 28, W: 28, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 33, H: 57, W: 55, M: 48, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 0, PR: 1, Groups: 1},
		{N: 1, C: 16, H: 3, W: 3, M: 4100, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		// A 7×7 plane: a 63-column grid padded to 64 (tilePad), the last
		// panel's tiles stored by the micro-kernel in each of 3 k-blocks.
		{N: 1, C: 64, H: 7, W: 7, M: 100, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
	}
	seen := map[string]bool{}
	for i, p := range cases {
		path := convPath(p)
		seen[path] = true
		if oh, _ := p.Out(); path == "flat" && oh*(p.W+p.PL+p.PR)%tilePad(best) != 0 && p.C/p.Groups*p.KH*p.KW > blockK {
			seen["flat, padded grid, k-blocks"] = true
		}
		x := randSlice(r, p.N*p.C*p.H*p.W)
		w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
		oh, ow := p.Out()
		for _, bias := range [][]float32{nil, randSlice(r, p.M)} {
			want := make([]float32, p.N*p.M*oh*ow)
			if err := NewContext(1).Conv2D(p, x, w, bias, want); err != nil {
				t.Fatal(err)
			}
			pw, err := PackConvWeights(p, w)
			if err != nil {
				t.Fatal(err)
			}
			// Every geometry also transposed, whatever convSwapped says.
			mg, kk := p.M/p.Groups, p.C/p.Groups*p.KH*p.KW
			pt := make([]*Packed, p.Groups)
			for g := range pt {
				if pt[g], err = PackB(true, kk, mg, w[g*mg*kk:(g+1)*mg*kk], kk); err != nil {
					t.Fatal(err)
				}
			}
			for _, run := range []struct {
				name string
				pw   []*Packed
			}{{path, pw}, {"transposed", pt}} {
				for _, th := range []int{1, 2, 3, 4} {
					y := make([]float32, len(want))
					for j := range y {
						y[j] = float32(math.NaN())
					}
					if err := NewContext(th).Conv2DPacked(p, x, nil, run.pw, bias, y); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("case %d %+v (%s), %d threads, bias %v", i, p, run.name, th, bias != nil)
					for j := range y {
						if math.Float32bits(y[j]) != math.Float32bits(want[j]) {
							t.Fatalf("%s: y[%d] = %v, im2col path %v", name, j, y[j], want[j])
						}
					}
				}
			}
		}
	}
	for _, path := range []string{"swapped", "swapped pixels", "rows", "flat", "implicit", "direct", "flat, padded grid, k-blocks"} {
		if !seen[path] {
			t.Errorf("no case takes the %s path", path)
		}
	}
}

// TestFlatSplits: the phase-plane copy, and convFlat's and convFlatT's
// bias fill and output copy, split over the threads on large layers
// (counted by Context.Calls) and stay on the caller on small ones (the
// minimum-work rule); the planes are bit-identical for 1 to 4 threads.
func TestFlatSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 1))
	large := Conv2D{N: 1, C: 64, H: 28, W: 28, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}
	strided := Conv2D{N: 1, C: 33, H: 57, W: 55, M: 48, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 0, PR: 1, Groups: 1}
	small := Conv2D{N: 1, C: 16, H: 16, W: 16, M: 16, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}
	for _, c := range []struct {
		p     Conv2D
		split bool
	}{{large, true}, {strided, true}, {small, false}} {
		p := c.p
		in := randSlice(r, p.C*p.H*p.W)
		kk := p.C * p.KH * p.KW
		var ref []float32
		for _, th := range []int{1, 2, 3, 4} {
			x := NewContext(th)
			buf := make([]float32, flatSize(&p, p.C, 32))
			for i := range buf {
				buf[i] = float32(math.NaN())
			}
			x.newFlat(&p, in, p.C, buf, make([]int, kk))
			if got := x.Calls() > 0; th > 1 && got != c.split {
				t.Errorf("%+v, %d threads: phase-plane copy split %v, want %v", p, th, got, c.split)
			}
			if ref == nil {
				ref = buf
			}
			for i := range buf {
				if math.Float32bits(buf[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%+v, %d threads: plane element %d = %v, 1 thread %v", p, th, i, buf[i], ref[i])
				}
			}
			x.Close()
		}
		if !c.split {
			continue
		}
		// The whole convolution on 2 threads splits more calls than its
		// SGEMM alone: the planes' copy and the output copy; a bias adds
		// none (the micro-kernel adds it: no fill pass).
		w := randSlice(r, p.M*kk)
		bias := randSlice(r, p.M)
		oh, ow := p.Out()
		pw, err := PackConvWeights(p, w)
		if err != nil {
			t.Fatal(err)
		}
		if convPath(p) != "flat" {
			t.Fatalf("%+v takes the %s path, want flat", p, convPath(p))
		}
		y := make([]float32, p.M*oh*ow)
		calls := func(bias []float32) uint64 {
			x := NewContext(2)
			defer x.Close()
			if err := x.Conv2DPacked(p, in, nil, pw, bias, y); err != nil {
				t.Fatal(err)
			}
			return x.Calls()
		}
		without, with := calls(nil), calls(bias)
		if with != without || without < 3 {
			t.Errorf("%+v: %d split calls with a bias, %d without; want the copy, the SGEMM and the output copy split, and no bias fill", p, with, without)
		}
	}
}

// BenchmarkConvSmallMaps times resnet_small's 3×3 convolutions (16 to 128
// channels on 16×16 to 2×2 maps, ReLU) on one thread, on the path
// Conv2DPackedAct takes (convSwapped).
func BenchmarkConvSmallMaps(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range []Conv2D{
		{N: 1, C: 16, H: 16, W: 16, M: 16, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 16, H: 16, W: 16, M: 32, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 32, H: 8, W: 8, M: 32, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 64, H: 4, W: 4, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 128, H: 2, W: 2, M: 128, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
	} {
		x, w, bias := randSlice(r, p.C*p.H*p.W), randSlice(r, p.M*p.C*p.KH*p.KW), randSlice(r, p.M)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			b.Fatal(err)
		}
		oh, ow := p.Out()
		y := make([]float32, p.M*oh*ow)
		ctx := NewContext(1)
		b.Run(fmt.Sprintf("%dx%dx%dto%ds%d/%s", p.C, p.H, p.W, p.M, p.SH, convPath(p)), func(b *testing.B) {
			for range b.N {
				if err := ctx.Conv2DPackedAct(p, x, w, pw, bias, y, ActRelu, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		ctx.Close()
	}
}
