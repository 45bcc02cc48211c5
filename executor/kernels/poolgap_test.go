package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxPoolGappedRandom: MaxPool2D at strides 1 and 2 (maxPoolGapped,
// a block of planes at a time) against the window-by-window loop with Go's
// max (windowMaxPool), on random geometries with many planes (blocks of one to dozens of
// planes, a short last block; every eighth of 44–53 rows and columns, one
// plane a block), windows 1–5, dilations 1–2, pads under the
// window on each side, values with NaN, ±0 and ±Inf; 1 and 3 threads.
// Values equal, any NaN for a NaN, either zero for a zero (vmax keeps
// VMAXPS's order for a ±0 tie in its SIMD head).
func TestMaxPoolGappedRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1))}
	gapped := 0
	for it := 0; it < 600; it++ {
		p := Pool2D{N: 1 + r.IntN(2), C: 1 + r.IntN(70), H: 1 + r.IntN(30), W: 1 + r.IntN(30),
			KH: 1 + r.IntN(5), KW: 1 + r.IntN(5), SH: 1 + r.IntN(2), SW: 1 + r.IntN(2), DH: 1 + r.IntN(2), DW: 1 + r.IntN(2)}
		if it%8 == 0 {
			// Planes past a block (one plane a block, gapPoolFloats)
			// but under gapStride2Floats.
			p.C, p.H, p.W = 1+r.IntN(3), 44+r.IntN(10), 44+r.IntN(10)
		}
		p.PT, p.PL = r.IntN(p.KH), r.IntN(p.KW)
		pb, pr := r.IntN(p.KH), r.IntN(p.KW)
		ekh, ekw := (p.KH-1)*p.DH+1, (p.KW-1)*p.DW+1
		if p.H+p.PT+pb < ekh || p.W+p.PL+pr < ekw {
			continue
		}
		p.OH, p.OW = (p.H+p.PT+pb-ekh)/p.SH+1, (p.W+p.PL+pr-ekw)/p.SW+1
		if !gapPool(&p) {
			t.Fatalf("%+v: not pooled as gapped blocks", p)
		}
		gapped++
		x := randSlice(r, p.N*p.C*p.H*p.W)
		for i := range x {
			if r.IntN(8) == 0 {
				x[i] = special[r.IntN(len(special))]
			}
		}
		want := windowMaxPool(p, x)
		for _, th := range []int{1, 3} {
			y := make([]float32, len(want)+1)
			for i := range y {
				y[i] = 42
			}
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
	if gapped < 400 {
		t.Fatalf("only %d geometries", gapped)
	}
}

// TestMax3Bits: max3 against a copy and two vmax passes, bit for bit (NaN
// payloads and ±0 included), lengths 0–70 (the SIMD blocks and the tail).
func TestMax3Bits(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	special := []float32{math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1))}
	for n := 0; n <= 70; n++ {
		a, b, c := randSlice(r, n), randSlice(r, n), randSlice(r, n)
		for _, s := range [][]float32{a, b, c} {
			for i := range s {
				if r.IntN(4) == 0 {
					s[i] = special[r.IntN(len(special))]
				}
			}
		}
		want := make([]float32, n)
		copy(want, a)
		vmax(want, b)
		vmax(want, c)
		got := make([]float32, n)
		max3(got, a, b, c)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d: [%d] = %#x, want %#x (a %v b %v c %v)", n, i, math.Float32bits(got[i]), math.Float32bits(want[i]), a[i], b[i], c[i])
			}
		}
	}
}
