package kernels

import (
	"math"
	"os"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestSigmoidAVX512AllInputs checks the 16-lane sigmoid and SiLU
// (sigmoidExpAVX512, siluExpAVX512: VSCALEFPS for 2ⁿ) against the AVX2
// ones bit for bit on float32 bit patterns: every 37th one by default
// (116 M values, every exponent, the significands' low bits in every
// residue), every one of the 2³² with ONNXCONV_EXHAUSTIVE=1 (about a
// minute).
func TestSigmoidAVX512AllInputs(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512F")
	}
	step := uint64(37)
	if os.Getenv("ONNXCONV_EXHAUSTIVE") == "1" {
		step = 1
	}
	const chunk = 1 << 16
	x := make([]float32, chunk)
	a, b := make([]float32, chunk), make([]float32, chunk)
	for base := uint64(0); base < 1<<32; base += chunk * step {
		n := 0
		for i := range x {
			v := base + uint64(i)*step
			if v >= 1<<32 {
				break
			}
			x[i] = math.Float32frombits(uint32(v))
			n++
		}
		n &^= 15
		if n == 0 {
			break
		}
		for _, silu := range []bool{false, true} {
			if silu {
				siluExpAVX2(n, &x[0], &a[0])
				siluExpAVX512(n, &x[0], &b[0])
			} else {
				sigmoidExpAVX2(n, &x[0], &a[0])
				sigmoidExpAVX512(n, &x[0], &b[0])
			}
			for i := range n {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("silu %v: f(%g = %#08x) = %g (%#08x) with AVX-512, %g (%#08x) with AVX2",
						silu, x[i], math.Float32bits(x[i]), b[i], math.Float32bits(b[i]), a[i], math.Float32bits(a[i]))
				}
			}
		}
	}
}
