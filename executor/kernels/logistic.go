package kernels

import "math"

// Float32 sigmoid: y = 1/(1 + E), E = e^−u with u = x clamped to
// [−88, 86.5]. E is Cephes expf's range reduction (−u = n·ln2 + ρ,
// |ρ| ≤ ln2/2, 2^n from the exponent bits) with a degree-5 polynomial for
// e^ρ = 1 + ρ + ρ²·P(ρ) (relative error 1.06e-7 with its float32
// coefficients; fitted by scripts/fit_sigmoid_exp_poly.py: Cephes's
// degree 7 cost two more multiply-adds per lane), evaluated with fused
// multiply-adds in r = −ρ, so y's relative error is a few float32 ulps
// wherever y is a normal float32 (2.2e-7 measured, TestSigmoidError),
// also in the tail below −4 where a framework's exact sigmoid is compared
// by relative tolerance (TF.js's human_facemesh scores). Where x < −88
// (exact value below 6.1e-39) y is 0; above 86.5 y is 1 (it is from 17.33
// on); NaN x gives x quieted: every NaN on the way derives from x's, so
// SiLU's x·y has the bits of Mul(x, Sigmoid(x)) in either operand order.
// With AVX2 (sigmoidExpAVX2, siluExpAVX2) 8 lanes at a time, the same
// float32 operations in the same order: bit-identical to the Go functions
// (fma32 where the assembly has an FMA), NaNs included.

const (
	sigExpLo    = -88  // below: y = 0
	sigExpHi    = 86.5 // above: u clamped (E stays a normal float32, y = 1)
	sigExpLog2e = 1.44269504088896341
	sigExpMagic = 12582912 // 1.5·2²³: adding it rounds to an integer, kept in the low mantissa bits
	sigExpLn2Hi = 0.693359375
	sigExpLn2Lo = -2.12194440e-4
	sigExpC0    = 8.3125270903e-03 // P(ρ) = C3 + C2·ρ + C1·ρ² + C0·ρ³
	sigExpC1    = 4.1890114546e-02
	sigExpC2    = 1.6667114198e-01
	sigExpC3    = 4.9999231100e-01
	sigExpBias  = 127 << 23
)

// sigmoidExp is 1/(1+e^−x) as described above.
func sigmoidExp(x float32) float32 {
	u := x // the clamps as VMAXPS/VMINPS with u as second source: x where x is NaN
	if sigExpLo > u {
		u = sigExpLo
	}
	if sigExpHi < u {
		u = sigExpHi
	}
	b := fma32(u, -sigExpLog2e, sigExpMagic) // n = round(−u·log2e) in the low bits
	n := b - sigExpMagic
	r := fma32(n, sigExpLn2Hi, u) // r = u + n·ln2 = −ρ
	r = fma32(n, sigExpLn2Lo, r)
	p := fma32(-sigExpC0, r, sigExpC1) // Horner in ρ = −r
	p = fma32(-p, r, sigExpC2)
	p = fma32(-p, r, sigExpC3)
	p = fma32(p, float32(r*r), -r) // e^ρ − 1 = ρ + ρ²·P(ρ)
	p = float32(p + 1)
	e := float32(p * math.Float32frombits(math.Float32bits(b)<<23+sigExpBias)) // ·2^n
	y := 1 / float32(1+e)
	if x < sigExpLo {
		y = 0
	}
	return y
}

// fma32 is a·b + c rounded once to float32 (VFMADD's value): the product
// is exact in float64, the sum s is rounded to float64 and its rounding
// error err recovered exactly (TwoSum); float32(s) is then the correctly
// rounded value unless s fell exactly halfway between two float32
// values, where err decides the direction (double rounding).
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b))
	cd := float64(c)
	s := float64(p + cd)
	r := float32(s)
	bv := float64(s - p)
	err := float64(p-float64(s-bv)) + float64(cd-bv)
	if err == 0 || err != err || float64(r) == s {
		return r
	}
	lo, hi := r, r
	if float64(r) < s {
		hi = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		lo = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if float64(float64(lo)+float64(hi))/2 != s {
		return r
	}
	if err > 0 {
		return hi
	}
	return lo
}

// Sigmoid sets y = 1/(1+e^−x) (the ONNX Sigmoid op; y may be x):
// sigmoidExp per element, 8 lanes at a time with AVX2.
func Sigmoid(x, y []float32) { sigmoidVec32(x, y) }

// SiLU sets y = x·Sigmoid(x) (y may be x): Sigmoid's float32 value, then
// the product, bit-identical to Sigmoid followed by a Mul of x and its
// output.
func SiLU(x, y []float32) { siluVec(x, y) }

// sigmoidVec32, siluVec and clipVec are Sigmoid's, SiLU's and Clip's
// loops, or SIMD versions set during package initialization (never
// changed afterwards).
var (
	sigmoidVec32 = sigmoidExpGeneric
	siluVec      = siluExpGeneric
	clipVec      = clipGeneric
)

func sigmoidExpGeneric(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = sigmoidExp(v)
	}
}

func siluExpGeneric(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = v * sigmoidExp(v)
	}
}

// Clip sets y = min(max(x, lo), hi) (NaN stays NaN); AVX2 8 lanes at a
// time, bit-identical to the Go loop.
func Clip(x, y []float32, lo, hi float32) { clipVec(x, y, lo, hi) }

func clipGeneric(x, y []float32, lo, hi float32) {
	y = y[:len(x)]
	for i, v := range x {
		if v < lo {
			v = lo
		}
		if v > hi {
			v = hi
		}
		y[i] = v
	}
}
