package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxPoolWholeRowsRandom: MaxPool2D's 2×2/2, 3×3/2 and 3×3/1 pools
// (the whole-row kernels where the CPU has them: maxPoolWholeRows; the
// row path and the gapped blocks otherwise, ONNXCONV_SGEMM_KERNEL=avx2) against the window-by-
// window loop (windowMaxPool) on random geometries: planes of 1–150 rows
// and columns (the kernels' 16-output steps, their masked last steps and
// rows shorter than one step), pads under the window on each side (top
// and left pads, floor and ceil modes' last rows and columns), the stems'
// pools, values with NaN, ±0 and ±Inf, 1–3 threads, the output filled
// with NaN first (every element written) and a sentinel after it. Values
// equal, any NaN for a NaN, either zero for a zero.
func TestMaxPoolWholeRowsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1))}
	fixed := []Pool2D{
		{N: 1, C: 64, H: 111, W: 111, KH: 3, KW: 3, OH: 55, OW: 55},               // SqueezeNet 1.1, ceil
		{N: 1, C: 128, H: 55, W: 55, KH: 3, KW: 3, OH: 27, OW: 27},                // SqueezeNet 1.1
		{N: 1, C: 256, H: 27, W: 27, KH: 3, KW: 3, OH: 13, OW: 13},                // SqueezeNet 1.1
		{N: 1, C: 64, H: 112, W: 112, KH: 3, KW: 3, OH: 56, OW: 56},               // GoogLeNet, ceil
		{N: 1, C: 24, H: 112, W: 112, KH: 3, KW: 3, PT: 1, PL: 1, OH: 56, OW: 56}, // ShuffleNet, ResNet
		{N: 1, C: 832, H: 14, W: 14, KH: 2, KW: 2, OH: 7, OW: 7},                  // GoogLeNet, ceil
		{N: 2, C: 3, H: 33, W: 33, KH: 2, KW: 2, OH: 17, OW: 17},                  // ceil
	}
	n := 0
	for it := 0; it < 1000; it++ {
		var p Pool2D
		st := 2
		if it < len(fixed) {
			p = fixed[it]
			if p.SH != 1 {
				st = 2
			} else {
				st = 1
			}
		} else {
			k := 2 + r.IntN(2)
			if it%3 == 0 {
				k, st = 3, 1
			}
			p = Pool2D{N: 1 + r.IntN(2), C: 1 + r.IntN(20), H: 1 + r.IntN(40), W: 1 + r.IntN(80), KH: k, KW: k}
			if it%5 == 0 {
				p.C, p.H, p.W = 1+r.IntN(4), 1+r.IntN(150), 1+r.IntN(150)
			}
			p.PT, p.PL = r.IntN(k), r.IntN(k)
			pb, pr := r.IntN(k), r.IntN(k)
			if p.H+p.PT+pb < k || p.W+p.PL+pr < k {
				continue
			}
			p.OH, p.OW = (p.H+p.PT+pb-k)/st+1, (p.W+p.PL+pr-k)/st+1
		}
		p.SH, p.SW, p.DH, p.DW = st, st, 1, 1
		n++
		x := randSlice(r, p.N*p.C*p.H*p.W)
		for i := range x {
			if r.IntN(8) == 0 {
				x[i] = special[r.IntN(len(special))]
			}
		}
		want := windowMaxPool(p, x)
		for th := 1; th <= 3; th++ {
			y := make([]float32, len(want)+1)
			for i := range y {
				y[i] = float32(math.NaN())
			}
			y[len(want)] = 42
			if err := NewContext(th).MaxPool2D(p, x, y[:len(want)]); err != nil {
				t.Fatal(err)
			}
			if y[len(want)] != 42 {
				t.Fatalf("%+v: wrote past the output", p)
			}
			for i, w := range want {
				g := y[i]
				if g != w && !(g != g && w != w) {
					t.Fatalf("%+v, %d threads: y[%d] = %v, want %v", p, th, i, g, w)
				}
			}
		}
	}
	if n < 800 {
		t.Fatalf("only %d geometries", n)
	}
	t.Logf("%d geometries, whole-row kernels: %v", n, maxPoolS2K3.long != nil && maxPoolS1K3.long != nil)
}

// TestMaxPoolS2Bits: where the row path takes every maximum with its SIMD
// head (rows of whole 8-output blocks, no edges: 3×3/2 on 2·16m+1
// columns but for the last output column, whose last input column is in
// vmax's Go tail; 2×2/2 on 2·16m with at least smallRow outputs), the
// whole-row kernel gives its bits, NaN payloads and ±0 ties included, on
// the rows inside the plane and on those with window rows in the top
// and bottom pads (given to the kernel as repeated rows).
func TestMaxPoolS2Bits(t *testing.T) {
	if maxPoolS2K3.long == nil {
		t.Skip("no whole-row kernels on this CPU or with ONNXCONV_SGEMM_KERNEL")
	}
	r := rand.New(rand.NewPCG(43, 44))
	vals := []float32{float32(math.NaN()), math.Float32frombits(0x7fc01234), math.Float32frombits(0xffc04321),
		float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1)), 1, -1}
	for _, p := range []Pool2D{
		{N: 1, C: 5, H: 9, W: 33, KH: 3, KW: 3, OH: 4, OW: 16},
		{N: 1, C: 3, H: 21, W: 65, KH: 3, KW: 3, OH: 10, OW: 32},
		{N: 1, C: 4, H: 8, W: 64, KH: 2, KW: 2, OH: 4, OW: 32},
		{N: 1, C: 2, H: 10, W: 96, KH: 2, KW: 2, OH: 5, OW: 48},
		{N: 1, C: 3, H: 8, W: 64, KH: 2, KW: 2, PT: 1, OH: 5, OW: 32},
		{N: 1, C: 3, H: 12, W: 33, KH: 3, KW: 3, PT: 1, OH: 7, OW: 16},
		{N: 1, C: 3, H: 11, W: 65, KH: 3, KW: 3, PT: 2, OH: 7, OW: 32},
	} {
		p.SH, p.SW, p.DH, p.DW = 2, 2, 1, 1
		x := make([]float32, p.N*p.C*p.H*p.W)
		for i := range x {
			x[i] = vals[r.IntN(len(vals))]
		}
		got := make([]float32, p.N*p.C*p.OH*p.OW)
		want := make([]float32, len(got))
		if err := NewContext(1).MaxPool2D(p, x, got); err != nil {
			t.Fatal(err)
		}
		v := make([]float32, p.W+1)
		ph := make([]float32, p.W+1)
		hw, npix := p.H*p.W, p.OH*p.OW
		for pl := 0; pl < p.N*p.C; pl++ {
			maxPoolPlane(&p, x[pl*hw:(pl+1)*hw], want[pl*npix:(pl+1)*npix], v, ph)
		}
		for i := range want {
			if p.KW == 3 && i%p.OW == p.OW-1 {
				continue
			}
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: y[%d] = %#x, row path %#x", p, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}
