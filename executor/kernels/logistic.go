package kernels

// Float32 logistic (sigmoid) as ONNX Runtime's MLAS computes it
// (MlasComputeLogistic, Eigen's coefficients): x clamped to [−18, 18],
// p/q + ½ with p = x·(odd polynomial in x²) and q an even polynomial in
// x², clamped to [0, 1]. Absolute error against float64 1/(1+e^−x)
// below 1e-6, 2.0e-7 measured (TestLogisticError).

const (
	logisticA9  = 4.37031012579801e-11
	logisticA7  = 1.15627324459942e-07
	logisticA5  = 6.08574864600143e-05
	logisticA3  = 8.51377133304701e-03
	logisticA1  = 2.48287947061529e-01
	logisticB10 = 6.10247389755681e-13
	logisticB8  = 5.76102136993427e-09
	logisticB6  = 6.29106785017040e-06
	logisticB4  = 1.70198817374094e-03
	logisticB2  = 1.16817656904453e-01
	logisticB0  = 9.93151921023180e-01
)

// logistic32 is the approximation above; every product is rounded to
// float32 before the sum (never a fused multiply-add), as logisticAVX2
// computes it.
func logistic32(x float32) float32 {
	if x > 18 {
		x = 18
	} else if x < -18 {
		x = -18
	} else if x != x {
		return x
	}
	x2 := float32(x * x)
	p := float32(float32(logisticA9)*x2) + logisticA7
	p = float32(p*x2) + logisticA5
	p = float32(p*x2) + logisticA3
	p = float32(p*x2) + logisticA1
	p = float32(p * x)
	q := float32(float32(logisticB10)*x2) + logisticB8
	q = float32(q*x2) + logisticB6
	q = float32(q*x2) + logisticB4
	q = float32(q*x2) + logisticB2
	q = float32(q*x2) + logisticB0
	v := float32(p/q) + 0.5
	if v < 0 {
		v = 0
	}
	if v > 1 {
		v = 1
	}
	return v
}

// Sigmoid sets y = 1 / (1 + exp(−x)) for the ONNX Sigmoid op: the MLAS
// logistic approximation above (AVX2 8 lanes at a time), not float64
// math.Exp per element (60 % of efficientnet_b0's executor time, whose
// SiLU is exported as Mul(x, Sigmoid(x))).
//
// Below −4 (y < 0.018) the approximation's absolute error (2e-7) is a
// relative one above 1e-5 that grows toward 1 in the far tail, where a
// framework's exact sigmoid is compared by relative tolerance (TF.js's
// human_facemesh scores: 1.03e-4 off at y = 1.9e-4); there y is
// e/(1+e) with e = exp32(x) (relative error about 2e-7) instead.
func Sigmoid(x, y []float32) {
	y = y[:len(x)]
	buf := sigmoidBuf(len(x))
	for lo := 0; lo < len(x); lo += len(buf) {
		xs := x[lo:min(lo+len(buf), len(x))]
		s := buf[:len(xs)]
		sigmoidBlock(xs, s)
		copy(y[lo:], s)
	}
}

// sigmoidBuf returns Sigmoid's block buffer for n values, one
// allocation per call (an array on the stack would escape through the
// kernel function variable and be allocated per block).
func sigmoidBuf(n int) []float32 { return make([]float32, min(n, 256)) }

// sigmoidTail is where Sigmoid leaves the rational approximation.
const sigmoidTail = -4

// sigmoidBlock sets s = Sigmoid(xs) (s not xs): the approximation, then
// the exponential below sigmoidTail.
func sigmoidBlock(xs, s []float32) {
	logisticVec(xs, s)
	for i, v := range xs {
		if v < sigmoidTail {
			e := exp32(v)
			s[i] = e / (1 + e)
		}
	}
}

// logisticVec and clipVec are Sigmoid's and Clip's loops, or SIMD
// versions set during package initialization (never changed afterwards).
var (
	logisticVec = logisticGeneric
	clipVec     = clipGeneric
)

func logisticGeneric(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = logistic32(v)
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

// SiLU sets y = x·Sigmoid(x) (y may be x): Sigmoid's float32 value, then
// the product, bit-identical to Sigmoid followed by a Mul of x and its
// output; blocks of 256 through a buffer.
func SiLU(x, y []float32) {
	y = y[:len(x)]
	buf := sigmoidBuf(len(x))
	for lo := 0; lo < len(x); lo += len(buf) {
		xs := x[lo:min(lo+len(buf), len(x))]
		s := buf[:len(xs)]
		sigmoidBlock(xs, s)
		ys := y[lo : lo+len(xs)]
		for i, v := range xs {
			ys[i] = v * s[i]
		}
	}
}
