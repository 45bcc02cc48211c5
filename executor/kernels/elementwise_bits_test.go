package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHardSwishLanes: HardSwish (AVX2 on 8 lanes where the CPU has it,
// the Go loop for the tail) is bit-identical to the Go loop on random bit
// patterns (NaNs with payloads, ±Inf, subnormals among them), ±0 and the
// clamp bounds, at every length and offset up to 40.
func TestHardSwishLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(62, 28))
	x := make([]float32, 4096)
	for i := range x {
		x[i] = math.Float32frombits(r.Uint32())
		if i%3 == 0 {
			x[i] = float32(r.NormFloat64() * 4)
		}
	}
	for i, b := range []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7f800000, 0xff800000, 0, 0x80000000, 1, 0x80000001, 0x40400000, 0xc0400000} {
		x[7*i] = math.Float32frombits(b)
	}
	want := make([]float32, len(x))
	hardSwishGeneric(x, want)
	y := make([]float32, len(x))
	HardSwish(x, y)
	for i := range x {
		if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
			t.Fatalf("x = %#08x: HardSwish %#08x, Go loop %#08x", math.Float32bits(x[i]), math.Float32bits(y[i]), math.Float32bits(want[i]))
		}
	}
	for off := 0; off < 8; off++ {
		for n := 0; n <= 40; n++ {
			clear(y)
			HardSwish(x[off:off+n], y[off:off+n])
			for i := off; i < off+n; i++ {
				if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
					t.Fatalf("off %d n %d: y[%d] = %#08x, Go loop %#08x", off, n, i, math.Float32bits(y[i]), math.Float32bits(want[i]))
				}
			}
			if y[off+n] != 0 || off > 0 && y[off-1] != 0 {
				t.Fatalf("off %d n %d: wrote outside y", off, n)
			}
		}
	}
}

// TestGlobalAveragePoolOrder: each block's mean is its float64 sum in
// order from the block's start, bit for bit, for every count of blocks
// and any range of them. The blocks hold ±2^60 at two random places:
// the values in between vanish in the sum taken in order (2^60 + v
// rounds to 2^60), so that a sum in another grouping (lanes, pairs)
// gives another mean.
func TestGlobalAveragePoolOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(62, 53))
	for _, inner := range []int{1, 3, 4, 7, 49, 196} {
		for nb := 1; nb <= 19; nb++ {
			x := make([]float32, nb*inner)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(20)-10)))
			}
			if inner >= 2 {
				for b := 0; b < nb; b++ {
					p := r.IntN(inner - 1)
					q := p + 1 + r.IntN(inner-1-p)
					x[b*inner+p], x[b*inner+q] = 0x1p60, -0x1p60
				}
			}
			want := make([]float32, nb)
			for i := range want {
				s := 0.0
				for _, v := range x[i*inner : (i+1)*inner] {
					s += float64(v)
				}
				want[i] = float32(s / float64(inner))
			}
			for lo := 0; lo < nb; lo++ {
				for hi := lo; hi <= nb; hi++ {
					y := make([]float32, nb)
					GlobalAveragePoolRows(x, y, inner, lo, hi)
					for i := range y {
						w := want[i]
						if i < lo || i >= hi {
							w = 0
						}
						if math.Float32bits(y[i]) != math.Float32bits(w) {
							t.Fatalf("inner %d, %d blocks, rows [%d, %d): y[%d] = %g, want %g", inner, nb, lo, hi, i, y[i], w)
						}
					}
				}
			}
		}
	}
}
