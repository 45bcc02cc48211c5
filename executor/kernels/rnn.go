package kernels

import "math"

// Float32 activations for the recurrent cells: a rational approximation
// of tanh (the one Eigen and MLAS use, clamped at ±9, where it is ±1 in
// float32) and sigmoid(x) = ½·tanh(x/2) + ½. Absolute error below 1e-6.

const (
	tanhA1  = 4.89352455891786e-03
	tanhA3  = 6.37261928875436e-04
	tanhA5  = 1.48572235717979e-05
	tanhA7  = 5.12229709037114e-08
	tanhA9  = -8.60467152213735e-11
	tanhA11 = 2.00018790482477e-13
	tanhA13 = -2.76076847742355e-16
	tanhB0  = 4.89352518554385e-03
	tanhB2  = 2.26843463243900e-03
	tanhB4  = 1.18534705686654e-04
	tanhB6  = 1.19825839466702e-06
)

func tanh32(x float32) float32 {
	if x > 9 {
		x = 9
	} else if x < -9 {
		x = -9
	} else if x != x {
		return x
	}
	x2 := x * x
	p := ((((((tanhA13*x2+tanhA11)*x2+tanhA9)*x2+tanhA7)*x2+tanhA5)*x2+tanhA3)*x2 + tanhA1) * x
	q := ((tanhB6*x2+tanhB4)*x2+tanhB2)*x2 + tanhB0
	return p / q
}

// TanhFast sets y = tanh(x) (the approximation above).
func TanhFast(x, y []float32) { tanhVec(x, y) }

// SigmoidFast sets y = 1/(1+exp(−x)) as ½·tanh(x/2) + ½.
func SigmoidFast(x, y []float32) { sigmoidVec(x, y) }

// tanhVec and sigmoidVec are TanhFast's and SigmoidFast's loops, or SIMD
// versions (bit-identical but for NaN signs) set during package
// initialization (never changed afterwards).
var (
	tanhVec    = tanhGeneric
	sigmoidVec = sigmoidGeneric
)

func tanhGeneric(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = tanh32(v)
	}
}

func sigmoidGeneric(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = 0.5*tanh32(0.5*v) + 0.5
	}
}

// LSTMCell advances one LSTM step (ONNX gate order i, o, f, c; default
// activations sigmoid, tanh, tanh; no peepholes) for rows of gates g
// ([rows, 4H]: the input and recurrent products plus both biases): c
// and h ([rows, H]) are updated in place, g is overwritten. The
// activations run over whole gate vectors (SigmoidFast over i, o, f,
// TanhFast over c and the new cell state), then c = f·c + i·g and
// h = o·tanh(c) elementwise: the same float32 values as one loop per
// element.
func LSTMCell(g, c, h []float32, hidden int) {
	rows := len(c) / hidden
	for r := 0; r < rows; r++ {
		gr := g[r*4*hidden : (r+1)*4*hidden]
		sigmoidVec(gr[:3*hidden], gr[:3*hidden])
		tanhVec(gr[3*hidden:], gr[3*hidden:])
		gi, go_, gf, gc := gr[:hidden], gr[hidden:2*hidden], gr[2*hidden:3*hidden], gr[3*hidden:]
		cr, hr := c[r*hidden:(r+1)*hidden], h[r*hidden:(r+1)*hidden]
		for j := range cr {
			cr[j] = gf[j]*cr[j] + gi[j]*gc[j]
		}
		tanhVec(cr, hr)
		for j := range hr {
			hr[j] *= go_[j]
		}
	}
}

// AddVecMat sets g += h·M for each row of h ([rows, k]) and g ([rows, n])
// with M [k, n] row-major: every element of g is its value plus one
// multiply-add per row of M, in k order. With AVX2 (AVX-512 when there is
// one) blocks of g stay in registers over all of k, so M is the only
// stream read (the recurrent step of LSTM/GRU is a GEMV that reads M once
// per step); the tail columns take the axpy path with the same chain.
func AddVecMat(h, m, g []float32, k, n int) {
	rows := len(h) / k
	for r := 0; r < rows; r++ {
		hr, gr := h[r*k:(r+1)*k], g[r*n:(r+1)*n]
		done := addVecMatBlocks(hr, m, gr, k, n)
		if done == n {
			continue
		}
		for i, v := range hr {
			axpy(v, m[i*n+done:(i+1)*n], gr[done:])
		}
	}
}

// addVecMatBlocks adds h·M into the first columns of g that a SIMD block
// kernel covers and returns their count (addVecMatNone: none).
var addVecMatBlocks = addVecMatNone

func addVecMatNone(h, m, g []float32, k, n int) int { return 0 }

// exp32 is e^x in float32 (Cephes expf: x = n·ln2 + r, |r| ≤ ln2/2, a
// degree-6 polynomial for e^r, scaled by 2^n; relative error about 1e-7).
// Below −87.3 it returns 0 (no subnormals), above 88.7 +Inf; NaN stays NaN.
func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72283:
		return float32(math.Inf(1))
	case x < -87.33654:
		return 0
	}
	const log2e, ln2hi, ln2lo = 1.44269504088896341, 0.693359375, -2.12194440e-4
	n := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - n*ln2hi - n*ln2lo
	p := ((((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r+5.0000001201e-1)*r*r + r + 1)
	if n > 127 { // x close to the overflow bound: 2^n in two steps
		return p * math.Float32frombits(uint32(127+127)<<23) * 2
	}
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// Gelu sets y = x·½·(1 + erf(x/√2)) with erf from Abramowitz and Stegun
// 7.1.26 (absolute error below 1.5e-7) on exp32: |y − gelu(x)| stays
// below 1e-6·(1+|x|). With AVX2 it runs 8 lanes at a time (the same
// float32 operations: bit-identical but for the sign of NaNs).
func Gelu(x, y []float32) { gelu(x, y) }

// gelu is Gelu's implementation: geluGeneric, or a SIMD version set
// during package initialization when the CPU has AVX2 (never changed
// afterwards).
var gelu = geluGeneric

// expSub sets y[i] = exp32(x[i] − sub) (Softmax's exponentials):
// expSubGeneric, or a SIMD version set like gelu's.
var expSub = expSubGeneric

func expSubGeneric(x []float32, sub float32, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = exp32(v - sub)
	}
}

// geluGeneric is Gelu in Go.
func geluGeneric(x, y []float32) {
	y = y[:len(x)]
	const (
		p                          = 0.3275911
		a1, a2, a3, a4, a5         = 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429
		invSqrt2           float32 = 0.70710678118654752
	)
	for i, v := range x {
		u := v * invSqrt2
		au := u
		if au < 0 {
			au = -au
		}
		t := 1 / (1 + p*au)
		e := 1 - ((((a5*t+a4)*t+a3)*t+a2)*t+a1)*t*exp32(-au*au)
		if u < 0 {
			e = -e
		}
		y[i] = 0.5 * v * (1 + e)
	}
}
