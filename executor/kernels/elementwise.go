package kernels

import "math"

// Relu sets y = max(x, 0) (NaN stays NaN); len(y) must be len(x).
func Relu(x, y []float32) { relu(x, y) }

// relu is Relu's implementation: AVX2 when the CPU has it (set during
// package initialization, never changed afterwards).
var relu = reluGeneric

func reluGeneric(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		if v < 0 {
			v = 0 // NaN and -0 stay as they are, as in the AVX2 kernel
		}
		y[i] = v
	}
}

// AddSuffix sets y = x + b with b repeated along x (len(b) divides
// len(x); b is x's trailing axes, as a bias). len(y) must be len(x).
func AddSuffix(x, b, y []float32) { suffix(x, b, y, addRowsAsm, false) }

// MulSuffix sets y = x · b with b repeated along x, as AddSuffix.
func MulSuffix(x, b, y []float32) { suffix(x, b, y, mulRowsAsm, true) }

// mulRowsAsm and addRowsAsm (nil: none) are mulRowsAVX2 and addRowsAVX2:
// rows of x against one row b over their first n (a multiple of 8)
// elements; set during package initialization, read-only afterwards.
var mulRowsAsm, addRowsAsm func(rows, n, ld int, x, b, y *float32)

// suffix sets y = x · b (mul) or x + b with b repeated along x: the
// multiple-of-8 head of every row in one asm call, each row's tail (and
// everything without asm) in Go; one IEEE operation an element either
// way.
func suffix(x, b, y []float32, asm func(rows, n, ld int, x, b, y *float32), mul bool) {
	n := len(b)
	if n == 0 {
		return
	}
	rows := len(x) / n
	y = y[:rows*n]
	head := 0
	if asm != nil && n >= 8 && rows > 0 {
		head = n &^ 7
		asm(rows, head, n, &x[0], &b[0], &y[0])
		if head == n {
			return
		}
	}
	bt := b[head:]
	for o := 0; o < rows*n; o += n {
		xs, ys := x[o+head:o+n], y[o+head:o+n]
		if mul {
			for i, v := range xs {
				ys[i] = v * bt[i]
			}
		} else {
			for i, v := range xs {
				ys[i] = v + bt[i]
			}
		}
	}
}

// AddBlocks sets y = x + b[i] over the i-th block of inner elements of x
// (a per-channel bias: len(x) == len(b)·inner).
func AddBlocks(x, b, y []float32, inner int) {
	for i, v := range b {
		xs, ys := x[i*inner:(i+1)*inner], y[i*inner:(i+1)*inner]
		for j := range xs {
			ys[j] = xs[j] + v
		}
	}
}

// MulBlocks sets y = x · b[i] over the i-th block of inner elements of x
// (a squeeze-and-excitation block's channel scale): scale per block, AVX2
// over its multiple-of-8 head, or all blocks in one AVX-512 call (the
// same IEEE products either way).
func MulBlocks(x, b, y []float32, inner int) { mulBlocks(x, b, y, inner) }

// mulBlocks is MulBlocks' implementation: mulBlocksSIMD512 when the CPU
// has AVX-512F (set during package initialization, never changed
// afterwards).
var mulBlocks = mulBlocksScale

func mulBlocksScale(x, b, y []float32, inner int) {
	for i, v := range b {
		scale(v, x[i*inner:(i+1)*inner], y[i*inner:(i+1)*inner])
	}
}

// HardSigmoid sets y = max(0, min(1, alpha·x + beta)).
func HardSigmoid(x, y []float32, alpha, beta float32) {
	y = y[:len(x)]
	for i, v := range x {
		v = float32(alpha*v) + beta // rounded product: never a fused multiply-add
		if v < 0 {
			v = 0
		}
		if v > 1 {
			v = 1
		}
		y[i] = v
	}
}

// HardSwish sets y = x · max(0, min(1, x·(1/6) + 1/2)) (alpha = 1/6 as
// a float32 multiplier, as ONNX defines it): bit for bit x times
// HardSigmoid(x; 1/6, 1/2) (the executor rewrites that pair into it).
func HardSwish(x, y []float32) { hardSwish(x, y) }

// hardSwish is HardSwish's implementation: AVX2 when the CPU has it
// (set during package initialization, never changed afterwards).
var hardSwish = hardSwishGeneric

// hardSwishGeneric clamps the factor on its bits, without branches
// (values on both sides of the clamps mispredict them: up to 9× slower):
// a negative factor becomes +0 (it is never −0: a sum with 0.5 is −0
// only when both terms are, and HardSigmoid's comparison makes +0 too)
// and one above 1 (as integers: positive floats order as their bits)
// becomes 1. A NaN x gives a NaN factor, made 0 or 1, so the product is
// x quieted, as x·HardSigmoid(x) is whichever operand the product keeps
// (both are x's NaN).
func hardSwishGeneric(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		b := math.Float32bits(float32(v*(1.0/6)) + 0.5) // as HardSigmoid: no fused multiply-add
		b &^= uint32(int32(b) >> 31)
		y[i] = v * math.Float32frombits(min(b, 0x3f800000))
	}
}

// GlobalAveragePool sets y[i] to the mean of the i-th block of inner
// elements of x (len(x) == len(y)·inner), summed in float64.
func GlobalAveragePool(x, y []float32, inner int) {
	GlobalAveragePoolRows(x, y, inner, 0, len(y))
}

// gapSum8 sets s[c] to the float64 sum, in order from 0, of the first k
// of the n elements from x[c·stride] on (8 rows stride apart) and returns
// k, a multiple of 4 (0: none summed); nil without SIMD (dwconv_amd64.go
// installs the AVX2 one).
var gapSum8 func(x []float32, stride, n int, s *[8]float64) int

// GlobalAveragePoolRows is GlobalAveragePool for y[lo:hi] only. Each
// block is summed in order from 0, whichever blocks it runs with: eight
// blocks at a time with SIMD (gapSum8, then the last columns in Go),
// then four blocks at a time, in four independent chains of additions (the
// latency of one chain bounded the loop), then one at a time.
func GlobalAveragePoolRows(x, y []float32, inner, lo, hi int) {
	n := float64(inner)
	if gapSum8 != nil && inner >= 4 && lo+8 <= hi {
		// One sum array a call (it escapes through the function value
		// gapSum8: one heap allocation), cleared for every 8 blocks.
		s := new([8]float64)
		for ; lo+8 <= hi; lo += 8 {
			*s = [8]float64{}
			k := gapSum8(x[lo*inner:(lo+8)*inner], inner, inner, s)
			for c := range s {
				for _, v := range x[(lo+c)*inner+k : (lo+c+1)*inner] {
					s[c] += float64(v)
				}
				y[lo+c] = float32(s[c] / n)
			}
		}
	}
	for ; lo+4 <= hi; lo += 4 {
		p := x[lo*inner : (lo+4)*inner]
		p0 := p[:inner]
		p1, p2, p3 := p[inner:2*inner], p[2*inner:3*inner], p[3*inner:]
		p1, p2, p3 = p1[:len(p0)], p2[:len(p0)], p3[:len(p0)]
		var s0, s1, s2, s3 float64
		for j, v := range p0 {
			s0 += float64(v)
			s1 += float64(p1[j])
			s2 += float64(p2[j])
			s3 += float64(p3[j])
		}
		y[lo], y[lo+1], y[lo+2], y[lo+3] = float32(s0/n), float32(s1/n), float32(s2/n), float32(s3/n)
	}
	for i := lo; i < hi; i++ {
		s := 0.0
		for _, v := range x[i*inner : (i+1)*inner] {
			s += float64(v)
		}
		y[i] = float32(s / float64(inner))
	}
}
