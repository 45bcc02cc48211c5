package kernels

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd asmgen && go run . -pkg kernels -out ../sgemm_amd64.s -stubs ../sgemm_amd64.go"

// The SIMD kernels join the list before kernels.go's init picks the last
// one (package-level variable initialization runs before init functions).
var _ = func() bool {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		available = append(available, microKernel{name: "avx2", mr: 6, nr: 16, fn: kernelAVX2,
			edge:     []tileFunc{nil, kernelAVX2R1, kernelAVX2R2, kernelAVX2R3, kernelAVX2R4, kernelAVX2R5},
			offs:     kernelOffsAVX2,
			offsEdge: []offsFunc{nil, kernelOffsAVX2R1, kernelOffsAVX2R2, kernelOffsAVX2R3, kernelOffsAVX2R4, kernelOffsAVX2R5}})
		axpy = axpySIMD
		packRows16 = packRows16AVX2
		copyStridedAsm = copyStridedAVX2
		transpose8x8 = transpose8x8AVX2
		interleave2Blocks = interleave2AVX2
		gapNHWCAsm = [4]func(pix int, x *float32, ldx int, s *float64){gapNHWC8AVX2, gapNHWC16AVX2, gapNHWC24AVX2, gapNHWC32AVX2}
		mulRowsAsm, addRowsAsm = mulRowsAVX2, addRowsAVX2
		addVecMatBlocks = addVecMatAVX2
		rowMax = rowMaxSIMD
		sumF64 = sumF64SIMD
		sum16 = sum16SIMD
		sqDev16 = sqDev16SIMD
		normApply = normApplySIMD
		scale = scaleSIMD
		divSc = divScalarSIMD
		subSq = subSqSIMD
		nbitsFast = nbitsKernels{w: 8, four: nbits4GemvAVX2, eight: nbits8GemvAVX2}
		normAffine = normAffineSIMD
		tanhVec = func(x, y []float32) { unarySIMD(tanhAVX2, tanhGeneric, x, y) }
		sigmoidVec = func(x, y []float32) { unarySIMD(sigmoidAVX2, sigmoidGeneric, x, y) }
		vmax = maxSIMD
		dup2Asm = dup2AVX2
		max3Asm = max3AVX2
		lerpRowsAsm, lerp2xAsm = lerpRowsF64AVX2, lerp2xF64AVX2
		maxWin3S2 = maxWin3S2SIMD
		relu = reluSIMD
		expSub = expSubSIMD
		gelu = geluSIMD
		hardSwish = hardSwishSIMD
		sigmoidVec32 = func(x, y []float32) { sigmoidSIMD(x, y, false) }
		siluVec = func(x, y []float32) { sigmoidSIMD(x, y, true) }
		clipVec = clipSIMD
		availableI = append(availableI, iKernel{name: "avx2", mr: 6, nr: 16, fn: igemmAVX2})
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ {
		available = append(available, microKernel{name: "avx512", mr: 12, nr: 32, fn: kernelAVX512,
			edge: []tileFunc{nil, kernelAVX512R1, kernelAVX512R2, kernelAVX512R3, kernelAVX512R4,
				kernelAVX512R5, kernelAVX512R6, kernelAVX512R7, kernelAVX512R8, kernelAVX512R9, kernelAVX512R10, kernelAVX512R11},
			offs: kernelOffsAVX512,
			offsEdge: []offsFunc{nil, kernelOffsAVX512R1, kernelOffsAVX512R2, kernelOffsAVX512R3, kernelOffsAVX512R4,
				kernelOffsAVX512R5, kernelOffsAVX512R6, kernelOffsAVX512R7, kernelOffsAVX512R8, kernelOffsAVX512R9, kernelOffsAVX512R10, kernelOffsAVX512R11},
			half: &halfKernels{fn: kernelAVX512H,
				edge: []tileFunc{nil, kernelAVX512HR1, kernelAVX512HR2, kernelAVX512HR3, kernelAVX512HR4,
					kernelAVX512HR5, kernelAVX512HR6, kernelAVX512HR7, kernelAVX512HR8, kernelAVX512HR9, kernelAVX512HR10, kernelAVX512HR11},
				offs: kernelOffsAVX512H,
				offsEdge: []offsFunc{nil, kernelOffsAVX512HR1, kernelOffsAVX512HR2, kernelOffsAVX512HR3, kernelOffsAVX512HR4,
					kernelOffsAVX512HR5, kernelOffsAVX512HR6, kernelOffsAVX512HR7, kernelOffsAVX512HR8, kernelOffsAVX512HR9, kernelOffsAVX512HR10, kernelOffsAVX512HR11}},
			col: &colKernels{x1: kernelCol12x1, x2: kernelCol12x2, x4: kernelCol12x4}})
		addVecMatBlocks = addVecMatAVX512
		dwNHWCAsm = dwNHWCAVX512
		rowsKernels = [2][13]rowsKernel{
			{nil, rowsAVX512R1C16, rowsAVX512R2C16, rowsAVX512R3C16, rowsAVX512R4C16, rowsAVX512R5C16, rowsAVX512R6C16,
				rowsAVX512R7C16, rowsAVX512R8C16, rowsAVX512R9C16, rowsAVX512R10C16, rowsAVX512R11C16, rowsAVX512R12C16},
			{nil, rowsAVX512R1C32, rowsAVX512R2C32, rowsAVX512R3C32, rowsAVX512R4C32, rowsAVX512R5C32, rowsAVX512R6C32,
				rowsAVX512R7C32, rowsAVX512R8C32, rowsAVX512R9C32, rowsAVX512R10C32, rowsAVX512R11C32, rowsAVX512R12C32}}
		rowsTabKernels = [2][13]rowsTabKernel{
			{nil, rowsTabAVX512R1C16, rowsTabAVX512R2C16, rowsTabAVX512R3C16, rowsTabAVX512R4C16, rowsTabAVX512R5C16, rowsTabAVX512R6C16,
				rowsTabAVX512R7C16, rowsTabAVX512R8C16, rowsTabAVX512R9C16, rowsTabAVX512R10C16, rowsTabAVX512R11C16, rowsTabAVX512R12C16},
			{nil, rowsTabAVX512R1C32, rowsTabAVX512R2C32, rowsTabAVX512R3C32, rowsTabAVX512R4C32, rowsTabAVX512R5C32, rowsTabAVX512R6C32,
				rowsTabAVX512R7C32, rowsTabAVX512R8C32, rowsTabAVX512R9C32, rowsTabAVX512R10C32, rowsTabAVX512R11C32, rowsTabAVX512R12C32}}
		packRows32 = packRows32AVX512
		nbitsFast = nbitsKernels{w: 16, four: nbits4GemvAVX512, eight: nbits8GemvAVX512,
			four2: nbits4GemvAVX512R2, eight2: nbits8GemvAVX512R2}
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI {
		nbitsInt8Asm = [2]int8Kernels{
			{one: nbits4Int8AVX512, two: nbits4Int8AVX512R2, oneB: nbits4Int8BcastAVX512, twoB: nbits4Int8BcastAVX512R2},
			{one: nbits8Int8AVX512, two: nbits8Int8AVX512R2, oneB: nbits8Int8BcastAVX512, twoB: nbits8Int8BcastAVX512R2}}
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW {
		availableI = append(availableI, iKernel{name: "avx512", mr: 12, nr: 32, fn: igemmAVX512})
	}
	return true
}()

// axpySIMD runs the multiple-of-8 head with AVX2+FMA and the tail in Go.
func axpySIMD(a float32, x, y []float32) {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		axpyAVX2(n, a, &x[0], &y[0])
	}
	for i := n; i < len(x); i++ {
		y[i] += a * x[i]
	}
}

// addVecMatAVX512 adds h·M into g's blocks of 128 columns, then of 16.
func addVecMatAVX512(h, m, g []float32, k, n int) int {
	return addVecMatSIMD(h, m, g, k, n, 128, 16, addVecMatAVX512x8, addVecMatAVX512x1)
}

// addVecMatAVX2 adds h·M into g's blocks of 64 columns, then of 8.
func addVecMatAVX2(h, m, g []float32, k, n int) int {
	return addVecMatSIMD(h, m, g, k, n, 64, 8, addVecMatAVX2x8, addVecMatAVX2x1)
}

// addVecMatSIMD runs big over blocks of wide columns and small over the
// blocks of narrow after them; it returns the columns covered.
func addVecMatSIMD(h, m, g []float32, k, n, wide, narrow int, big, small func(int, *float32, *float32, int, *float32)) int {
	if k == 0 || len(h) < k || len(m) < k*n || len(g) < n {
		return 0
	}
	j := 0
	for ; j+wide <= n; j += wide {
		big(k, &h[0], &m[j], n, &g[j])
	}
	for ; j+narrow <= n; j += narrow {
		small(k, &h[0], &m[j], n, &g[j])
	}
	return j
}

// rowMaxSIMD reduces the multiple-of-8 head in 8 lanes with AVX2, then
// the lanes and the tail in Go (NaN wins, as rowMaxGeneric).
func rowMaxSIMD(x []float32) float32 {
	n := len(x) &^ 7
	if n == 0 {
		return rowMaxGeneric(x)
	}
	var lanes [8]float32
	copy(lanes[:], x[:8])
	if n > 8 {
		rowMaxAVX2(n-8, &x[8], &lanes[0])
	}
	mx := rowMaxGeneric(lanes[:])
	for _, v := range x[n:] {
		if v > mx || v != v {
			mx = v
		}
	}
	return mx
}

// sumF64SIMD sums the multiple-of-8 head in 8 float64 lanes with AVX2,
// then adds the lanes in order and the tail.
func sumF64SIMD(x []float32) float64 {
	n := len(x) &^ 7
	var lanes [8]float64
	if n > 0 {
		sumF64AVX2(n, &x[0], &lanes[0])
	}
	s := 0.0
	for _, v := range lanes {
		s += v
	}
	for _, v := range x[n:] {
		s += float64(v)
	}
	return s
}

// scaleSIMD runs the multiple-of-8 head with AVX2 and the tail in Go.
func scaleSIMD(a float32, x, y []float32) {
	n := scalarHead(scaleAVX2, a, x, y)
	scaleGeneric(a, x[n:], y[n:])
}

// scalarHead runs f(n, a, x, y) over the multiple-of-8 head of x and y
// (y at least as long as x) and returns its length.
func scalarHead(f func(int, float32, *float32, *float32), a float32, x, y []float32) int {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		f(n, a, &x[0], &y[0])
	}
	return n
}

// divScalarSIMD runs the multiple-of-8 head with AVX2 and the tail in Go.
func divScalarSIMD(x []float32, a float32, y []float32) {
	n := scalarHead(divScalarAVX2, a, x, y)
	divScalarGeneric(x[n:], a, y[n:])
}

// subSqSIMD runs the multiple-of-8 head with AVX2 (8 float64 lanes,
// added in order) and the tail in Go.
func subSqSIMD(x []float32, m float32, y []float32) float64 {
	y = y[:len(x)]
	n := len(x) &^ 7
	var lanes [8]float64
	if n > 0 {
		subSqAVX2(n, m, &x[0], &y[0], &lanes[0])
	}
	q := 0.0
	for _, v := range lanes {
		q += v
	}
	return q + subSqGeneric(x[n:], m, y[n:])
}

// normAffineSIMD runs the multiple-of-8 head with AVX2 and the tail in Go.
func normAffineSIMD(y []float32, sd float32, g, b []float32) {
	g, b = g[:len(y)], b[:len(y)]
	n := len(y) &^ 7
	if n > 0 {
		normAffineAVX2(n, sd, &y[0], &g[0], &b[0])
	}
	normAffineGeneric(y[n:], sd, g[n:], b[n:])
}

// unarySIMD runs f over the multiple-of-8 head and the Go loop g over
// the tail.
func unarySIMD(f func(int, *float32, *float32), g func(x, y []float32), x, y []float32) {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		f(n, &x[0], &y[0])
	}
	g(x[n:], y[n:])
}

// maxSIMD runs the multiple-of-8 head with AVX2 and the tail in Go.
func maxSIMD(d, s []float32) {
	s = s[:len(d)]
	n := len(d) &^ 7
	if n > 0 {
		maxAVX2(n, &s[0], &d[0])
	}
	for i := n; i < len(d); i++ {
		d[i] = max(d[i], s[i])
	}
}

// maxWin3S2SIMD runs whole blocks of 8 outputs with AVX2 and the rest
// as the last 8 outputs again (the same values), when x holds the
// 2·len(y)+2 values the blocks read; else Go.
func maxWin3S2SIMD(x, y []float32) {
	n := len(y)
	if n < 8 || len(x) < 2*n+2 {
		maxWin3S2Generic(x, y)
		return
	}
	k := n &^ 7
	maxWin3S2AVX2(k, &x[0], &y[0])
	if k < n {
		maxWin3S2AVX2(8, &x[2*(n-8)], &y[n-8])
	}
}

// headTail runs asm on the multiple-of-8 head of x into y and tail on
// the rest.
func headTail(x, y []float32, asm func(n int, x, y *float32), tail func(x, y []float32)) {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		asm(n, &x[0], &y[0])
	}
	tail(x[n:], y[n:])
}

// reluSIMD runs the multiple-of-8 head with AVX2 and the tail in Go.
func reluSIMD(x, y []float32) { headTail(x, y, reluAVX2, reluGeneric) }

// expSubSIMD runs whole blocks of 8 with AVX2 and the tail as one more
// block through a copy, so that every element takes the same path
// whatever the slice's length or offset (results do not depend on how
// rows are split between threads).
func expSubSIMD(x []float32, sub float32, y []float32) {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		expSubAVX2(n, &x[0], sub, &y[0])
	}
	if n < len(x) {
		var buf [8]float32
		copy(buf[:], x[n:])
		expSubAVX2(8, &buf[0], sub, &buf[0])
		copy(y[n:], buf[:])
	}
}

// geluSIMD is Gelu with AVX2, the tail as in expSubSIMD.
func geluSIMD(x, y []float32) {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		geluAVX2(n, &x[0], &y[0])
	}
	if n < len(x) {
		var buf [8]float32
		copy(buf[:], x[n:])
		geluAVX2(8, &buf[0], &buf[0])
		copy(y[n:], buf[:])
	}
}

// hardSwishSIMD runs the multiple-of-8 head with AVX2 and the tail in Go
// (the same values: hardSwishAVX2 is bit-identical to the Go loop).
func hardSwishSIMD(x, y []float32) { headTail(x, y, hardSwishAVX2, hardSwishGeneric) }

// clipSIMD runs the multiple-of-8 head with AVX2 and the tail in Go.
func clipSIMD(x, y []float32, lo, hi float32) {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		clipAVX2(n, lo, hi, &x[0], &y[0])
	}
	clipGeneric(x[n:], y[n:], lo, hi)
}

// sigmoidSIMD is Sigmoid (SiLU when silu) with AVX2, the tail as in
// expSubSIMD. y may be x.
func sigmoidSIMD(x, y []float32, silu bool) {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		sigmoid8(n, &x[0], &y[0], silu)
	}
	if n < len(x) {
		var buf [8]float32
		copy(buf[:], x[n:])
		sigmoid8(8, &buf[0], &buf[0], silu)
		copy(y[n:], buf[:])
	}
}

// sigmoid8 calls sigmoidExpAVX2 or siluExpAVX2 (direct calls: the
// pointers do not escape).
func sigmoid8(n int, x, y *float32, silu bool) {
	if silu {
		siluExpAVX2(n, x, y)
	} else {
		sigmoidExpAVX2(n, x, y)
	}
}

// sum16SIMD runs sum16F64AVX2 over x (a multiple of 16 long).
func sum16SIMD(x []float32) (s [16]float64) {
	if n := len(x) &^ 15; n > 0 {
		sum16F64AVX2(n, &x[0], &s[0])
	}
	return s
}

// sqDev16SIMD runs sqDev16F64AVX2 over x (a multiple of 16 long).
func sqDev16SIMD(x []float32, m float64) (q [16]float64) {
	if n := len(x) &^ 15; n > 0 {
		sqDev16F64AVX2(n, m, &x[0], &q[0])
	}
	return q
}

// normApplySIMD runs the multiple-of-8 head with AVX2 and the tail in Go.
func normApplySIMD(x []float32, m, a, b float32, y []float32) {
	y = y[:len(x)]
	n := len(x) &^ 7
	if n > 0 {
		normApplyAVX2(n, m, a, b, &x[0], &y[0])
	}
	normApplyGeneric(x[n:], m, a, b, y[n:])
}
