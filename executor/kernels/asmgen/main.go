// Command asmgen generates the SGEMM micro-kernels of package kernels
// (sgemm_amd64.s and its Go declarations) with avo. It is a module of its
// own so that the onnxconv module does not depend on avo; run it through
// `go generate ./executor/kernels`.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/onnxconv/onnxconv/executor/kernels/asmgen/rowmem"
)

func main() {
	ConstraintExpr("amd64")
	// AVX-512: 12 rows × 32 columns (two zmm per row), 24 accumulators.
	kernel("kernelAVX512", 12, 12, 2, 16, func(i int) reg.VecVirtual { return ZMM() })
	// AVX2+FMA: 6 rows × 16 columns (two ymm per row), 12 accumulators.
	kernel("kernelAVX2", 6, 6, 2, 8, func(i int) reg.VecVirtual { return YMM() })
	// Edge kernels: the first r rows of a tile (the last rows of C, a
	// GEMV's single row), reading the same panels of mr rows and computing
	// each element with the same chain of multiply-adds as the full tile.
	for r := 1; r < 12; r++ {
		kernel(fmt.Sprintf("kernelAVX512R%d", r), r, 12, 2, 16, func(i int) reg.VecVirtual { return ZMM() })
	}
	for r := 1; r < 6; r++ {
		kernel(fmt.Sprintf("kernelAVX2R%d", r), r, 6, 2, 8, func(i int) reg.VecVirtual { return YMM() })
	}
	// Half-width AVX-512 tiles (12×16, one zmm per row, and their edge
	// rows) for a last panel of at most 16 columns: the same chains of
	// FMAs for the columns they compute, half the multiply-adds thrown
	// away.
	kernel("kernelAVX512H", 12, 12, 1, 16, func(i int) reg.VecVirtual { return ZMM() })
	for r := 1; r < 12; r++ {
		kernel(fmt.Sprintf("kernelAVX512HR%d", r), r, 12, 1, 16, func(i int) reg.VecVirtual { return ZMM() })
	}
	kernelOffs("kernelOffsAVX512H", 12, 12, 1, 16, func(i int) reg.VecVirtual { return ZMM() })
	for r := 1; r < 12; r++ {
		kernelOffs(fmt.Sprintf("kernelOffsAVX512HR%d", r), r, 12, 1, 16, func(i int) reg.VecVirtual { return ZMM() })
	}
	// The same tiles reading B's rows through a table of offsets (the
	// implicit im2col rows of a convolution, read in place).
	kernelOffs("kernelOffsAVX512", 12, 12, 2, 16, func(i int) reg.VecVirtual { return ZMM() })
	kernelOffs("kernelOffsAVX2", 6, 6, 2, 8, func(i int) reg.VecVirtual { return YMM() })
	for r := 1; r < 12; r++ {
		kernelOffs(fmt.Sprintf("kernelOffsAVX512R%d", r), r, 12, 2, 16, func(i int) reg.VecVirtual { return ZMM() })
	}
	for r := 1; r < 6; r++ {
		kernelOffs(fmt.Sprintf("kernelOffsAVX2R%d", r), r, 6, 2, 8, func(i int) reg.VecVirtual { return YMM() })
	}
	// NHWC tiles: A's rows (pixels) read in place, B packed 32 wide, a
	// bias per column, the last register of a row masked; 1 to 12 rows,
	// 16 or 32 columns.
	for nv := 1; nv <= 2; nv++ {
		for r := 1; r <= 12; r++ {
			rowsKernel(fmt.Sprintf("rowsAVX512R%dC%d", r, 16*nv), r, nv, false)
		}
	}
	// The same tiles with A's elements and B's rows found through a
	// table (a grouped convolution's taps on NHWC activations).
	for nv := 1; nv <= 2; nv++ {
		for r := 1; r <= 12; r++ {
			rowsKernel(fmt.Sprintf("rowsTabAVX512R%dC%d", r, 16*nv), r, nv, true)
		}
	}
	// Column kernels: one column of B against np packed A panels of 12
	// rows (the last one to three columns of a convolution's 7×7 output
	// after a half-width tile: 49 = 32 + 16 + 1).
	for _, np := range []int{1, 2, 4} {
		colKernel(fmt.Sprintf("kernelCol12x%d", np), np)
	}
	// B panels packed from rows of a matrix (32 floats a row for AVX-512,
	// 16 for AVX2): two registers a row instead of a memmove call.
	packRows("packRows32AVX512", func() reg.VecVirtual { return ZMM() }, 16)
	packRows("packRows16AVX2", func() reg.VecVirtual { return YMM() }, 8)
	// Row-strided copies (a convolution's grid rows into its output
	// planes): blocks of 8, the row's last w mod 8 with masked moves.
	copyStrided(laneMasks())
	// 8×8 transposes (Transpose's batches of matrices: NCHW ↔ NHWC).
	transpose8()
	// Two rows interleaved (a channel shuffle of two groups, NHWC).
	interleave2()
	// Channel sums over the pixels of an NHWC image (GlobalAveragePool).
	for nv := 2; nv <= 8; nv += 2 {
		gapNHWC(fmt.Sprintf("gapNHWC%dAVX2", 4*nv), nv)
	}
	// Rows against one row (a per-channel scale or bias of an NHWC
	// tensor, a bias row of a matrix).
	suffixRows("mulRowsAVX2", true)
	suffixRows("addRowsAVX2", false)
	// Integer GEMM (int16 pairs, int32 sums): AVX-512BW 12×32, AVX2 6×16.
	ikernel("igemmAVX512", 12, 2, 16, true, func() reg.VecVirtual { return ZMM() })
	ikernel("igemmAVX2", 6, 2, 8, false, func() reg.VecVirtual { return YMM() })
	axpy()
	// Row-vector × matrix (the recurrent products of LSTM/GRU steps):
	// nv registers of w lanes kept in registers over all of k.
	addVecMat("addVecMatAVX512x8", 8, 16, func() reg.VecVirtual { return ZMM() })
	addVecMat("addVecMatAVX512x1", 1, 16, func() reg.VecVirtual { return ZMM() })
	addVecMat("addVecMatAVX2x8", 8, 8, func() reg.VecVirtual { return YMM() })
	addVecMat("addVecMatAVX2x1", 1, 8, func() reg.VecVirtual { return YMM() })
	vmax()
	max3()
	dup2()
	lerpRows()
	lerp2x()
	rowMax()
	sumF64()
	sum16F64()
	sqDev16F64()
	normApply()
	subSq()
	normAffine()
	// MatMulNBits: 4 columns of B per call, 1 row of A (AVX2: 8
	// accumulators of 16 registers) or 1 and 2 rows (AVX-512).
	nbitsGemv("nbits4GemvAVX2", 4, 8, 1, func() reg.VecVirtual { return YMM() })
	nbitsGemv("nbits8GemvAVX2", 8, 8, 1, func() reg.VecVirtual { return YMM() })
	nbitsGemv("nbits4GemvAVX512", 4, 16, 1, func() reg.VecVirtual { return ZMM() })
	nbitsGemv("nbits8GemvAVX512", 8, 16, 1, func() reg.VecVirtual { return ZMM() })
	nbitsGemv("nbits4GemvAVX512R2", 4, 16, 2, func() reg.VecVirtual { return ZMM() })
	nbitsGemv("nbits8GemvAVX512R2", 8, 16, 2, func() reg.VecVirtual { return ZMM() })
	for _, bits := range []int{4, 8} {
		nbitsInt8(fmt.Sprintf("nbits%dInt8AVX512", bits), bits, 1, false)
		nbitsInt8(fmt.Sprintf("nbits%dInt8AVX512R2", bits), bits, 2, false)
		nbitsInt8(fmt.Sprintf("nbits%dInt8BcastAVX512", bits), bits, 1, true)
		nbitsInt8(fmt.Sprintf("nbits%dInt8BcastAVX512R2", bits), bits, 2, true)
	}
	poolRows("maxPoolS2K3AVX512", 3, 2)
	poolRows("maxPoolS2K2AVX512", 2, 2)
	poolRows("maxPoolS1K3AVX512", 3, 1)
	poolShortRows("maxPoolS2K3ShortAVX512", 3, 2)
	poolShortRows("maxPoolS2K2ShortAVX512", 2, 2)
	poolShortRows("maxPoolS1K3ShortAVX512", 3, 1)
	scalarOp("scaleAVX2", "scaleAVX2 sets y[i] = x[i]·a for i < n; n is a multiple of 8.", false)
	scalarOp("divScalarAVX2", "divScalarAVX2 sets y[i] = x[i] / a for i < n (IEEE division, as Go's); n is a multiple of 8.", true)
	maxWin3s2()
	relu()
	clip()
	g := &gen{consts: map[string]Mem{}}
	g.expSub()
	g.gelu()
	g.hardSwish()
	g.tanh("tanhAVX2", "tanhAVX2 sets y[i] = tanh32(x[i]) for i < n (bit-identical to the Go function, NaN x quieted); n is a multiple of 8.", false)
	g.tanh("sigmoidAVX2", "sigmoidAVX2 sets y[i] = ½·tanh32(x[i]/2) + ½ for i < n (bit-identical to the Go loop but for NaN signs); n is a multiple of 8.", true)
	g.sigmoidExp("sigmoidExpAVX2", "sigmoidExpAVX2 sets y[i] = sigmoidExp(x[i]) for i < n (bit-identical to the Go function, NaN x quieted); n is a multiple of 8.", false)
	g.sigmoidExp("siluExpAVX2", "siluExpAVX2 sets y[i] = x[i]·sigmoidExp(x[i]) for i < n (bit-identical to the Go function, NaN x quieted); n is a multiple of 8.", true)
	g.sigmoidExp512("sigmoidExpAVX512", "sigmoidExpAVX512 sets y[i] = sigmoidExp(x[i]) for i < n (bit-identical to sigmoidExpAVX2); n is a multiple of 16.", false)
	g.sigmoidExp512("siluExpAVX512", "siluExpAVX512 sets y[i] = x[i]·sigmoidExp(x[i]) for i < n (bit-identical to siluExpAVX2); n is a multiple of 16.", true)
	g.softmaxRows512()
	g.packA12Gather()
	g.packBT32Gather()
	Generate()
}

// axpy emits func axpyAVX2(n int, a float32, x, y *float32): y[i] += a·x[i]
// for i < n, n a multiple of 8 (the caller does the tail), with FMA.
func axpy() {
	TEXT("axpyAVX2", NOSPLIT, "func(n int, a float32, x, y *float32)")
	Pragma("noescape")
	Doc("axpyAVX2 sets y[i] += a·x[i] for i < n; n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	av := YMM()
	VBROADCASTSS(NewParamAddr("a", 8), av)
	SHRQ(Imm(3), n)
	JZ(LabelRef("axpy_done"))
	Label("axpy_loop")
	t := YMM()
	VMOVUPS(Mem{Base: py}, t)
	VFMADD231PS(Mem{Base: px}, av, t)
	VMOVUPS(t, Mem{Base: py})
	loopEnd("axpy", n, px, py)
}

// addVecMat emits func name(k int, h, m *float32, ldm int, y *float32):
// y[j] += h[i]·m[i·ldm+j] for i < k, j < nv·w, one FMA per i and element
// in i order (each element's chain is axpyAVX2's over the rows), with y's
// block held in nv registers from the first step to the last.
func addVecMat(name string, nv, w int, vec func() reg.VecVirtual) {
	TEXT(name, NOSPLIT, "func(k int, h, m *float32, ldm int, y *float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets y[j] += h[i]·m[i·ldm+j] for i < k and j < %d (one FMA per step, in i order).", name, nv*w))
	k := Load(Param("k"), GP64())
	ph := Load(Param("h"), GP64())
	pm := Load(Param("m"), GP64())
	ldm := Load(Param("ldm"), GP64())
	pg := Load(Param("y"), GP64())
	SHLQ(Imm(2), ldm)
	acc := make([]reg.VecVirtual, nv)
	for j := range acc {
		acc[j] = vec()
		VMOVUPS(Mem{Base: pg, Disp: 4 * w * j}, acc[j])
	}
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	t := vec()
	VBROADCASTSS(Mem{Base: ph}, t)
	for j := range acc {
		VFMADD231PS(Mem{Base: pm, Disp: 4 * w * j}, t, acc[j])
	}
	ADDQ(Imm(4), ph)
	ADDQ(ldm, pm)
	DECQ(k)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	for j := range acc {
		VMOVUPS(acc[j], Mem{Base: pg, Disp: 4 * w * j})
	}
	VZEROUPPER()
	RET()
}

// vmax emits func maxAVX2(n int, x, y *float32): y[i] = max(y[i], x[i])
// for i < n, n a multiple of 8, NaN in either operand giving NaN (as Go's
// max): VMAXPS returns its second source when either is NaN, so the
// lanes where y is NaN are blended back from y.
func vmax() {
	n, px, py := unaryFunc("maxAVX2", "maxAVX2 sets y[i] = max(y[i], x[i]) for i < n (NaN wins); n is a multiple of 8.")
	SHRQ(Imm(3), n)
	JZ(LabelRef("max_done"))
	Label("max_loop")
	yv, m, nan := YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: py}, yv)
	maxNaN(yv, Mem{Base: px}, m, nan)
	VMOVUPS(m, Mem{Base: py})
	loopEnd("max", n, px, py)
}

// lerpRows emits func lerpRowsF64AVX2(n int, w0, w1 float64, r0, r1
// *float32, row *float64): row[i] = w0·float64(r0[i]) + w1·float64(r1[i])
// for i < n, n a multiple of 4: two rounded products and a rounded sum, as
// the Go loop computes them (a linear Resize's rows, in float64).
func lerpRows() {
	TEXT("lerpRowsF64AVX2", NOSPLIT, "func(n int, w0, w1 float64, r0, r1 *float32, row *float64)")
	Pragma("noescape")
	Doc("lerpRowsF64AVX2 sets row[i] = w0·float64(r0[i]) + w1·float64(r1[i]) for i < n (each product and the sum rounded); n is a multiple of 4.")
	n := Load(Param("n"), GP64())
	p0 := Load(Param("r0"), GP64())
	p1 := Load(Param("r1"), GP64())
	pr := Load(Param("row"), GP64())
	w0, w1 := YMM(), YMM()
	VBROADCASTSD(NewParamAddr("w0", 8), w0)
	VBROADCASTSD(NewParamAddr("w1", 16), w1)
	SHRQ(Imm(2), n)
	JZ(LabelRef("lerprows_done"))
	Label("lerprows_loop")
	a, b := YMM(), YMM()
	VCVTPS2PD(Mem{Base: p0}, a)
	VCVTPS2PD(Mem{Base: p1}, b)
	VMULPD(w0, a, a)
	VMULPD(w1, b, b)
	VADDPD(b, a, a)
	VMOVUPD(a, Mem{Base: pr})
	ADDQ(Imm(16), p0)
	ADDQ(Imm(16), p1)
	ADDQ(Imm(32), pr)
	DECQ(n)
	JNZ(LabelRef("lerprows_loop"))
	Label("lerprows_done")
	VZEROUPPER()
	RET()
}

// lerp2x emits func lerp2xF64AVX2(n int, w *[4]float64, row *float64, y
// *float32): y[2j] = float32(w[0]·row[j] + w[1]·row[j+1]) and y[2j+1] =
// float32(w[2]·row[j+1] + w[3]·row[j+2]) for j < n, n a multiple of 4 (a
// linear 2× up-sampling's interior columns, in float64 as the Go loop;
// it reads row[0 … n+1]).
func lerp2x() {
	TEXT("lerp2xF64AVX2", NOSPLIT, "func(n int, w *[4]float64, row *float64, y *float32)")
	Pragma("noescape")
	Doc("lerp2xF64AVX2 sets y[2j] = float32(w[0]·row[j] + w[1]·row[j+1]) and y[2j+1] = float32(w[2]·row[j+1] + w[3]·row[j+2]) for j < n (each product and sum rounded); n is a multiple of 4; it reads row[0 … n+1].")
	n := Load(Param("n"), GP64())
	pw := Load(Param("w"), GP64())
	pr := Load(Param("row"), GP64())
	py := Load(Param("y"), GP64())
	we0, we1, wo0, wo1 := YMM(), YMM(), YMM(), YMM()
	VBROADCASTSD(Mem{Base: pw}, we0)
	VBROADCASTSD(Mem{Base: pw, Disp: 8}, we1)
	VBROADCASTSD(Mem{Base: pw, Disp: 16}, wo0)
	VBROADCASTSD(Mem{Base: pw, Disp: 24}, wo1)
	SHRQ(Imm(2), n)
	JZ(LabelRef("lerp2x_done"))
	Label("lerp2x_loop")
	a, b, e, o := YMM(), YMM(), YMM(), YMM()
	VMULPD(Mem{Base: pr}, we0, e)
	VMULPD(Mem{Base: pr, Disp: 8}, we1, a)
	VADDPD(a, e, e)
	VMULPD(Mem{Base: pr, Disp: 8}, wo0, o)
	VMULPD(Mem{Base: pr, Disp: 16}, wo1, b)
	VADDPD(b, o, o)
	ex, ox, lo, hi := XMM(), XMM(), XMM(), XMM()
	VCVTPD2PSY(e, ex)
	VCVTPD2PSY(o, ox)
	VUNPCKLPS(ox, ex, lo)
	VUNPCKHPS(ox, ex, hi)
	VMOVUPS(lo, Mem{Base: py})
	VMOVUPS(hi, Mem{Base: py, Disp: 16})
	ADDQ(Imm(32), pr)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef("lerp2x_loop"))
	Label("lerp2x_done")
	VZEROUPPER()
	RET()
}

// max3 emits func max3AVX2(n int, a, b, c, y *float32): y[i] =
// max(max(a[i], b[i]), c[i]) for i < n, n a multiple of 8, each maximum
// as maxAVX2 takes it (the same bits as a copy of a and two maxAVX2
// passes, in one pass: a pool's three window rows or columns).
func max3() {
	TEXT("max3AVX2", NOSPLIT, "func(n int, a, b, c, y *float32)")
	Pragma("noescape")
	Doc("max3AVX2 sets y[i] = max(max(a[i], b[i]), c[i]) for i < n, each as maxAVX2's (NaN wins); n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	pa := Load(Param("a"), GP64())
	pb := Load(Param("b"), GP64())
	pc := Load(Param("c"), GP64())
	py := Load(Param("y"), GP64())
	SHRQ(Imm(3), n)
	JZ(LabelRef("max3_done"))
	Label("max3_loop")
	t, m1, m2, nan := YMM(), YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: pa}, t)
	maxNaN(t, Mem{Base: pb}, m1, nan)
	maxNaN(m1, Mem{Base: pc}, m2, nan)
	VMOVUPS(m2, Mem{Base: py})
	for _, r := range []reg.Register{pa, pb, pc, py} {
		ADDQ(Imm(32), r)
	}
	DECQ(n)
	JNZ(LabelRef("max3_loop"))
	Label("max3_done")
	VZEROUPPER()
	RET()
}

// dup2 emits func dup2AVX2(n int, x, y *float32): y[2i] = y[2i+1] = x[i]
// for i < n, n a multiple of 8 (a nearest 2× up-sampling's row): the
// lanes unpacked against themselves, then the 128-bit halves put in
// order.
func dup2() {
	n, px, py := unaryFunc("dup2AVX2", "dup2AVX2 sets y[2i] = y[2i+1] = x[i] for i < n; n is a multiple of 8.")
	SHRQ(Imm(3), n)
	JZ(LabelRef("dup2_done"))
	Label("dup2_loop")
	xv, lo, hi, a, b := YMM(), YMM(), YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: px}, xv)
	VUNPCKLPS(xv, xv, lo)
	VUNPCKHPS(xv, xv, hi)
	VPERM2F128(Imm(0x20), hi, lo, a)
	VPERM2F128(Imm(0x31), hi, lo, b)
	VMOVUPS(a, Mem{Base: py})
	VMOVUPS(b, Mem{Base: py, Disp: 32})
	ADDQ(Imm(32), px)
	ADDQ(Imm(64), py)
	DECQ(n)
	JNZ(LabelRef("dup2_loop"))
	Label("dup2_done")
	VZEROUPPER()
	RET()
}

// rowMax emits func rowMaxAVX2(n int, x, y *float32): y[j] = max(y[j],
// x[8i+j]) for 8i < n, NaN winning (the lanes of a row's maximum; the
// caller reduces the 8 lanes), n a multiple of 8.
func rowMax() {
	n, px, py := unaryFunc("rowMaxAVX2", "rowMaxAVX2 sets y[j] = max(y[j], x[8i+j]) for j < 8 and 8i < n (NaN wins); n is a multiple of 8.")
	acc, m, nan := YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: py}, acc)
	SHRQ(Imm(3), n)
	JZ(LabelRef("rowmax_store"))
	Label("rowmax_loop")
	maxNaN(acc, Mem{Base: px}, m, nan)
	VMOVUPS(m, acc)
	ADDQ(Imm(32), px)
	DECQ(n)
	JNZ(LabelRef("rowmax_loop"))
	Label("rowmax_store")
	VMOVUPS(acc, Mem{Base: py})
	VZEROUPPER()
	RET()
}

// sumF64 emits func sumF64AVX2(n int, x *float32, y *float64): y[j] +=
// float64(x[8i+j]) for j < 8 and 8i < n (two registers of 4 float64
// lanes; the caller adds the lanes), n a multiple of 8.
func sumF64() {
	TEXT("sumF64AVX2", NOSPLIT, "func(n int, x *float32, y *float64)")
	Pragma("noescape")
	Doc("sumF64AVX2 sets y[j] += float64(x[8i+j]) for j < 8 and 8i < n; n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	lo, hi, t0, t1 := YMM(), YMM(), YMM(), YMM()
	VMOVUPD(Mem{Base: py}, lo)
	VMOVUPD(Mem{Base: py, Disp: 32}, hi)
	SHRQ(Imm(3), n)
	JZ(LabelRef("sumf64_store"))
	Label("sumf64_loop")
	VCVTPS2PD(Mem{Base: px}, t0)
	VCVTPS2PD(Mem{Base: px, Disp: 16}, t1)
	VADDPD(t0, lo, lo)
	VADDPD(t1, hi, hi)
	ADDQ(Imm(32), px)
	DECQ(n)
	JNZ(LabelRef("sumf64_loop"))
	Label("sumf64_store")
	VMOVUPD(lo, Mem{Base: py})
	VMOVUPD(hi, Mem{Base: py, Disp: 32})
	VZEROUPPER()
	RET()
}

// sum16F64 emits func sum16F64AVX2(n int, x *float32, s *float64):
// s[l] += float64(x[16i+l]) for l < 16 and 16i < n (four registers of 4
// float64, four independent chains of adds), n a multiple of 16: the
// mean pass of InstanceNorm and LayerNorm (meanVar), lane for lane the
// same additions as sum16Generic.
func sum16F64() {
	TEXT("sum16F64AVX2", NOSPLIT, "func(n int, x *float32, s *float64)")
	Pragma("noescape")
	Doc("sum16F64AVX2 sets s[l] += float64(x[16i+l]) for l < 16 and 16i < n; n is a multiple of 16.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	ps := Load(Param("s"), GP64())
	SHRQ(Imm(4), n)
	f64Sums("sum16", n, px, Imm(64), ps, 4)
}

// f64Sums emits the loop of the float64 sum kernels (sum16F64,
// gapNHWC): nv registers of 4 float64 sums loaded from ps, then count
// times (count ≥ 0) float64(x[l]) added for l < 4·nv and px moved on by
// step bytes, the sums stored back; then the return.
func f64Sums(label string, count, px reg.Register, step Op, ps reg.Register, nv int) {
	acc := make([]reg.VecVirtual, nv)
	for j := range acc {
		acc[j] = YMM()
		VMOVUPD(Mem{Base: ps, Disp: 32 * j}, acc[j])
	}
	TESTQ(count, count)
	JZ(LabelRef(label + "_store"))
	Label(label + "_loop")
	for j := range acc {
		t := YMM()
		VCVTPS2PD(Mem{Base: px, Disp: 16 * j}, t)
		VADDPD(t, acc[j], acc[j])
	}
	ADDQ(step, px)
	DECQ(count)
	JNZ(LabelRef(label + "_loop"))
	Label(label + "_store")
	for j := range acc {
		VMOVUPD(acc[j], Mem{Base: ps, Disp: 32 * j})
	}
	VZEROUPPER()
	RET()
}

// sqDev16F64 emits func sqDev16F64AVX2(n int, m float64, x *float32,
// q *float64): q[l] = fma(d, d, q[l]) with d = float64(x[16i+l]) − m, for
// l < 16 and 16i < n, n a multiple of 16: meanVar's variance pass, lane
// for lane the same operations as sqDev16Generic (math.FMA).
func sqDev16F64() {
	TEXT("sqDev16F64AVX2", NOSPLIT, "func(n int, m float64, x *float32, q *float64)")
	Pragma("noescape")
	Doc("sqDev16F64AVX2 sets q[l] = fma(d, d, q[l]) with d = float64(x[16i+l]) − m for l < 16 and 16i < n; n is a multiple of 16.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	pq := Load(Param("q"), GP64())
	mv := YMM()
	VBROADCASTSD(NewParamAddr("m", 8), mv)
	var acc, t [4]reg.VecVirtual
	for j := range acc {
		acc[j], t[j] = YMM(), YMM()
		VMOVUPD(Mem{Base: pq, Disp: 32 * j}, acc[j])
	}
	SHRQ(Imm(4), n)
	JZ(LabelRef("sqdev16_store"))
	Label("sqdev16_loop")
	for j := range acc {
		VCVTPS2PD(Mem{Base: px, Disp: 16 * j}, t[j])
		VSUBPD(mv, t[j], t[j])
		VFMADD231PD(t[j], t[j], acc[j])
	}
	ADDQ(Imm(64), px)
	DECQ(n)
	JNZ(LabelRef("sqdev16_loop"))
	Label("sqdev16_store")
	for j := range acc {
		VMOVUPD(acc[j], Mem{Base: pq, Disp: 32 * j})
	}
	VZEROUPPER()
	RET()
}

// normApply emits func normApplyAVX2(n int, m, a, b float32, x, y
// *float32): y[i] = (x[i] − m)·a + b (a difference, a product, a sum: no
// FMA, the Go loop's operations), n a multiple of 8: InstanceNorm's
// output pass.
func normApply() {
	TEXT("normApplyAVX2", NOSPLIT, "func(n int, m, a, b float32, x, y *float32)")
	Pragma("noescape")
	Doc("normApplyAVX2 sets y[i] = (x[i] − m)·a + b for i < n (no FMA); n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	mv, av, bv := YMM(), YMM(), YMM()
	VBROADCASTSS(NewParamAddr("m", 8), mv)
	VBROADCASTSS(NewParamAddr("a", 12), av)
	VBROADCASTSS(NewParamAddr("b", 16), bv)
	SHRQ(Imm(3), n)
	JZ(LabelRef("normapply_done"))
	Label("normapply_loop")
	v := YMM()
	VMOVUPS(Mem{Base: px}, v)
	VSUBPS(mv, v, v)
	VMULPS(av, v, v)
	VADDPS(bv, v, v)
	VMOVUPS(v, Mem{Base: py})
	ADDQ(Imm(32), px)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef("normapply_loop"))
	Label("normapply_done")
	VZEROUPPER()
	RET()
}

// subSq emits func subSqAVX2(n int, m float32, x, y *float32, q *float64):
// y[i] = x[i] − m and q[j] += float64(float32(d·d)) over the lanes j of
// each block of 8 (two registers of 4 float64; the caller adds the lanes),
// n a multiple of 8: the centring pass of a LayerNorm row.
func subSq() {
	TEXT("subSqAVX2", NOSPLIT, "func(n int, m float32, x, y *float32, q *float64)")
	Pragma("noescape")
	Doc("subSqAVX2 sets y[i] = x[i] − m and q[j] += float64(float32(y[8k+j]²)) for j < 8, 8k < n; n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	pq := Load(Param("q"), GP64())
	mv, lo, hi := YMM(), YMM(), YMM()
	VBROADCASTSS(NewParamAddr("m", 8), mv)
	VMOVUPD(Mem{Base: pq}, lo)
	VMOVUPD(Mem{Base: pq, Disp: 32}, hi)
	SHRQ(Imm(3), n)
	JZ(LabelRef("subsq_store"))
	Label("subsq_loop")
	d, sq, t := YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: px}, d)
	VSUBPS(mv, d, d)
	VMOVUPS(d, Mem{Base: py})
	VMULPS(d, d, sq)
	VCVTPS2PD(sq.AsX(), t)
	VADDPD(t, lo, lo)
	VEXTRACTF128(Imm(1), sq, sq.AsX())
	VCVTPS2PD(sq.AsX(), t)
	VADDPD(t, hi, hi)
	ADDQ(Imm(32), px)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef("subsq_loop"))
	Label("subsq_store")
	VMOVUPD(lo, Mem{Base: pq})
	VMOVUPD(hi, Mem{Base: pq, Disp: 32})
	VZEROUPPER()
	RET()
}

// normAffine emits func normAffineAVX2(n int, sd float32, y, w, b *float32):
// y[i] = float32(y[i]/sd)·w[i] + b[i] (a quotient, a product, a sum: no
// FMA), n a multiple of 8: the last pass of a LayerNorm row.
func normAffine() {
	TEXT("normAffineAVX2", NOSPLIT, "func(n int, sd float32, y, w, b *float32)")
	Pragma("noescape")
	Doc("normAffineAVX2 sets y[i] = y[i]/sd·w[i] + b[i] for i < n (no FMA); n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	py := Load(Param("y"), GP64())
	pg := Load(Param("w"), GP64())
	pb := Load(Param("b"), GP64())
	sv := YMM()
	VBROADCASTSS(NewParamAddr("sd", 8), sv)
	SHRQ(Imm(3), n)
	JZ(LabelRef("normaff_done"))
	Label("normaff_loop")
	t := YMM()
	VMOVUPS(Mem{Base: py}, t)
	VDIVPS(sv, t, t)
	VMULPS(Mem{Base: pg}, t, t)
	VADDPS(Mem{Base: pb}, t, t)
	VMOVUPS(t, Mem{Base: py})
	ADDQ(Imm(32), py)
	ADDQ(Imm(32), pg)
	ADDQ(Imm(32), pb)
	DECQ(n)
	JNZ(LabelRef("normaff_loop"))
	Label("normaff_done")
	VZEROUPPER()
	RET()
}

// nbitsGemv emits func name(blocks, gpb int, b *byte, ldb int, a *float32,
// lda int, asum *float32, ldas int, sc *float32, ldsc int, zs, out
// *float32): the dot products of
// rows rows of A (row r at a + r·lda bytes, its lane sums at asum + r·ldas
// bytes) with 4 columns of a MatMulNBits B (column c's packed bytes at
// b + c·ldb, blocks blocks of gpb groups of 32 values each, 16 bytes a
// group when bits is 4 — low nibble first — or 32 when 8),
// out[4r+c] = Σ_kb s[c]·(Σ q·a − z[c]·asum) with column c's scales at
// sc + c·ldsc bytes (one per block) and zs holding, per block, the 4
// columns' zero points. The bytes are widened
// once for all rows. Each output keeps a vector of w lanes for the
// current block's Σ q·a (vertical multiply-adds, one chain per output)
// and one for the scaled block sums; the lanes are added once, at the
// end: an output's chain of operations does not depend on rows. For
// 4-bit values a is arranged so that a vector of w low nibbles and the
// vector of their high nibbles meet consecutive vectors of a
// (nbitsArrange); asum holds, per block, the w lane sums of a's vectors
// over the block (the zero point's share of each lane).
func nbitsGemv(name string, bits, w, rows int, vec func() reg.VecVirtual) {
	TEXT(name, NOSPLIT, "func(blocks, gpb int, b *byte, ldb int, a *float32, lda int, asum *float32, ldas int, sc *float32, ldsc int, zs, out *float32)")
	Pragma("noescape")
	Doc(name + fmt.Sprintf(" sets out[4r+c] = Σ over blocks of scale·(Σ q·a − zero·Σ a) for %d row(s) of A and 4 columns of MatMulNBits' B (see nbitsGemv in asmgen).", rows))
	evex := w == 16
	blocks := Load(Param("blocks"), GP64())
	pb := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	pa := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	ps := Load(Param("asum"), GP64())
	ldas := Load(Param("ldas"), GP64())
	pz := Load(Param("zs"), GP64())
	psc := Load(Param("sc"), GP64())
	ldsc := Load(Param("ldsc"), GP64())
	pb2, psc2 := GP64(), GP64()
	LEAQ(Mem{Base: pb, Index: ldb, Scale: 2}, pb2)
	LEAQ(Mem{Base: psc, Index: ldsc, Scale: 2}, psc2)
	scs := []Mem{{Base: psc}, {Base: psc, Index: ldsc, Scale: 1}, {Base: psc2}, {Base: psc2, Index: ldsc, Scale: 1}}
	cols := []Mem{{Base: pb}, {Base: pb, Index: ldb, Scale: 1}, {Base: pb2}, {Base: pb2, Index: ldb, Scale: 1}}
	arow := func(r, disp int) Mem {
		if r == 0 {
			return Mem{Base: pa, Disp: disp}
		}
		return Mem{Base: pa, Index: lda, Scale: 1, Disp: disp}
	}
	srow := func(r int) Mem {
		if r == 0 {
			return Mem{Base: ps}
		}
		return Mem{Base: ps, Index: ldas, Scale: 1}
	}
	zero := func(v reg.VecVirtual) {
		if evex {
			VPXORD(v, v, v)
		} else {
			VXORPS(v, v, v)
		}
	}
	// The low nibbles: AND 15 (AVX2), or with AVX-512 VPERMPS from lut,
	// the floats 0…15 (it takes each lane's low 4 bits as the index:
	// the nibble and its float in one operation instead of an AND and a
	// conversion; the same values).
	var mask, lut reg.VecVirtual
	switch {
	case bits == 4 && evex:
		m := GLOBL(name+"_lut", RODATA|NOPTR)
		for i := 0; i < 16; i++ {
			DATA(4*i, U32(math.Float32bits(float32(i))))
		}
		lut = vec()
		VMOVUPS(m, lut)
	case bits == 4:
		mask = vec()
		mr := GP32()
		MOVL(U32(15), mr)
		VMOVD(mr, mask.AsX())
		VPBROADCASTD(mask.AsX(), mask)
	}
	acc := make([]reg.VecVirtual, 4*rows)
	bs := make([]reg.VecVirtual, 4*rows)
	for i := range acc {
		acc[i], bs[i] = vec(), vec()
		zero(acc[i])
	}
	gb := 16 * bits / 4 // bytes of a group
	Label(name + "_block")
	for i := range bs {
		zero(bs[i])
	}
	g := GP64()
	Load(Param("gpb"), g)
	Label(name + "_group")
	for c := 0; c < 4; c++ {
		col := cols[c]
		// each load widens w bytes to w int32 lanes
		for off := 0; off < gb; off += w {
			raw := vec()
			m := col
			m.Disp += off
			VPMOVZXBD(m, raw)
			if bits == 8 {
				VCVTDQ2PS(raw, raw)
				for r := 0; r < rows; r++ {
					VFMADD231PS(arow(r, 4*off), raw, bs[4*r+c])
				}
				continue
			}
			lo, hi := vec(), vec()
			VPSRLD(Imm(4), raw, hi)
			if evex {
				VPERMPS(lut, raw, lo)
				VPERMPS(lut, hi, hi)
			} else {
				VPAND(mask, raw, lo)
				VCVTDQ2PS(lo, lo)
				VCVTDQ2PS(hi, hi)
			}
			for r := 0; r < rows; r++ {
				VFMADD231PS(arow(r, 8*off), lo, bs[4*r+c])
				VFMADD231PS(arow(r, 8*off+4*w), hi, bs[4*r+c])
			}
		}
	}
	ADDQ(Imm(uint64(gb)), pb)
	ADDQ(Imm(uint64(gb)), pb2)
	ADDQ(Imm(128), pa)
	DECQ(g)
	JNZ(LabelRef(name + "_group"))
	for c := 0; c < 4; c++ {
		z, s := vec(), vec()
		VBROADCASTSS(Mem{Base: pz, Disp: 4 * c}, z)
		VBROADCASTSS(scs[c], s)
		for r := 0; r < rows; r++ {
			VFNMADD231PS(srow(r), z, bs[4*r+c])
			VFMADD231PS(s, bs[4*r+c], acc[4*r+c])
		}
	}
	ADDQ(Imm(uint64(4*w)), ps)
	ADDQ(Imm(16), pz)
	ADDQ(Imm(4), psc)
	ADDQ(Imm(4), psc2)
	DECQ(blocks)
	JNZ(LabelRef(name + "_block"))
	storeLaneSums(acc, evex)
	VZEROUPPER()
	RET()
}

// storeLaneSums sets out[i] (the parameter out) to the sum of acc[i]'s
// lanes (ZMM when evex, else YMM): the halves added, then the quarters,
// then two VHADDPS — (0+1) + (2+3) of the quarters' sums.
func storeLaneSums(acc []reg.VecVirtual, evex bool) {
	po := Load(Param("out"), GP64())
	for i := range acc {
		var y reg.VecVirtual = acc[i]
		if evex {
			y = YMM()
			VEXTRACTF64X4(Imm(1), acc[i], y)
			VADDPS(y, acc[i].AsY(), y)
		}
		x := XMM()
		VEXTRACTF128(Imm(1), y, x)
		VADDPS(x, y.AsX(), x)
		VHADDPS(x, x, x)
		VHADDPS(x, x, x)
		VMOVSS(x, Mem{Base: po, Disp: 4 * i})
	}
}

// vpdpbusd emits VPDPBUSD (AVX512-VNNI, which avo's instruction table
// lacks; Go's assembler has it): acc's 16 int32 lanes each add the
// four products of u's unsigned bytes and s's signed bytes in the lane.
func vpdpbusd(s, u, acc reg.VecVirtual) {
	Instruction(&ir.Instruction{
		Opcode:   "VPDPBUSD",
		Operands: []Op{s, u, acc},
		Inputs:   []Op{s, u, acc},
		Outputs:  []Op{acc},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// nbitsInt8 emits func name(chunks, cpb, bpc int, b *byte, ldb int, qa
// *int8, qs, sa *float32, sc, zc *float32, ld int, idx *int32, kmask
// int, out *float32): MatMulNBits' int8 path (package kernels,
// nbits_int8.go) for rows (1 or 2) rows of A and 4 columns of 4-bit B
// (column c's bytes at b + c·ldb, its scales at sc + c·ld bytes and its
// zero points, as floats, at zc + c·ld: one per block); out[4r+c].
// Per chunk of 128 values (64 bytes a column): the low nibbles (AND 15)
// and the high ones (shift, AND) meet A's even and odd int8 values (qa:
// 64 even, 64 odd, per row) in two VPDPBUSD, so lane j holds Σ q_a·q_b
// over the chunk's values 8j … 8j+7; then t = float(Σ) − zero·qs
// (exact), acc += t·(scale·sa) (VMULPS, VMULPS, VADDPS). A chunk's
// blocks: bpc of them from the chunk's first (the lanes' block offsets
// in idx; the column's scales and zero points loaded under kmask, then
// VPERMPS), the first advancing by bpc blocks every cpb chunks. Two rows
// share the chunk's bytes, nibbles, scales and zero points; their qa,
// qs and sa are interleaved by chunk (a chunk's 128 values of row 0,
// then of row 1; its 16 lanes' qs and sa of row 0, then of row 1), and
// each row's operations are the one-row kernel's. The lanes are summed
// as the float kernels' are (halves, quarters, then two VHADDPS).
// With bcast (blocks of 128 values or more: bpc 1, every lane in the
// chunk's one block), the column's scale and zero point are broadcast
// from memory instead (VBROADCASTSS: a load, no shuffle), the same
// values in every lane as the masked load and VPERMPS give with idx 0.
// With bits 8, a chunk is 64 values (64 bytes a column, one VPDPBUSD
// against qa's 64 values in order, lane j the values 4j … 4j+3) and
// bcast serves blocks of 64 or more; the rest is the same.
func nbitsInt8(name string, bits, rows int, bcast bool) {
	TEXT(name, NOSPLIT, "func(chunks, cpb, bpc int, b *byte, ldb int, qa *int8, qs, sa *float32, sc, zc *float32, ld int, idx *int32, kmask int, out *float32)")
	Pragma("noescape")
	chunk := 128 // values a chunk
	if bits == 8 {
		chunk = 64
	}
	Doc(name + fmt.Sprintf(" sets out[4r+c] = Σ over %d-value chunks and lanes of (float(Σ q_a·q_b) − zero·qs)·(scale·sa) for 4 columns of %d-bit MatMulNBits B and %d row(s) of int8 A (see nbitsInt8 in asmgen).", chunk, bits, rows))
	chunks := Load(Param("chunks"), GP64())
	pb := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	pqa := Load(Param("qa"), GP64())
	pqs := Load(Param("qs"), GP64())
	psa := Load(Param("sa"), GP64())
	psc := Load(Param("sc"), GP64()) // both advance with the chunk's first block
	pzc := Load(Param("zc"), GP64())
	ld := Load(Param("ld"), GP64())
	ld3 := GP64()
	LEAQ(Mem{Base: ld, Index: ld, Scale: 2}, ld3)
	pb2 := GP64()
	LEAQ(Mem{Base: pb, Index: ldb, Scale: 2}, pb2)
	cols := []Mem{{Base: pb}, {Base: pb, Index: ldb, Scale: 1}, {Base: pb2}, {Base: pb2, Index: ldb, Scale: 1}}
	scs := []Mem{{Base: psc}, {Base: psc, Index: ld, Scale: 1}, {Base: psc, Index: ld, Scale: 2}, {Base: psc, Index: ld3, Scale: 1}}
	zcs := []Mem{{Base: pzc}, {Base: pzc, Index: ld, Scale: 1}, {Base: pzc, Index: ld, Scale: 2}, {Base: pzc, Index: ld3, Scale: 1}}
	bpc := Load(Param("bpc"), GP64())
	SHLQ(Imm(2), bpc)
	sub := GP64()
	XORQ(sub, sub)
	var idx reg.VecVirtual
	var k reg.OpmaskVirtual
	if !bcast {
		idx = ZMM()
		pi := Load(Param("idx"), GP64())
		VMOVDQU32(Mem{Base: pi}, idx)
		k = K()
		m := GP64()
		Load(Param("kmask"), m)
		KMOVW(m.As32(), k)
	}
	var nib reg.VecVirtual
	if bits == 4 {
		nib = ZMM()
		r := GP32()
		MOVL(U32(0x0f0f0f0f), r)
		VPBROADCASTD(r, nib)
	}
	acc := make([]reg.VecVirtual, 4*rows)
	for i := range acc {
		acc[i] = ZMM()
		VPXORD(acc[i], acc[i], acc[i])
	}
	Label(name + "_chunk")
	ev, od, qsv, sav := make([]reg.VecVirtual, rows), make([]reg.VecVirtual, rows), make([]reg.VecVirtual, rows), make([]reg.VecVirtual, rows)
	for r := 0; r < rows; r++ {
		ev[r], qsv[r], sav[r] = ZMM(), ZMM(), ZMM()
		VMOVDQU64(Mem{Base: pqa, Disp: chunk * r}, ev[r])
		if bits == 4 {
			od[r] = ZMM()
			VMOVDQU64(Mem{Base: pqa, Disp: 128*r + 64}, od[r])
		}
		VMOVUPS(Mem{Base: pqs, Disp: 64 * r}, qsv[r])
		VMOVUPS(Mem{Base: psa, Disp: 64 * r}, sav[r])
	}
	for c := 0; c < 4; c++ {
		raw, lo, hi := ZMM(), ZMM(), ZMM()
		VMOVDQU64(cols[c], raw)
		if bits == 4 {
			VPANDD(nib, raw, lo)
			VPSRLW(Imm(4), raw, hi)
			VPANDD(nib, hi, hi)
		}
		sb, z := ZMM(), ZMM()
		if bcast {
			VBROADCASTSS(scs[c], sb)
			VBROADCASTSS(zcs[c], z)
		} else {
			VMOVUPS_Z(scs[c], k, sb)
			VPERMPS(sb, idx, sb)
			VMOVUPS_Z(zcs[c], k, z)
			VPERMPS(z, idx, z)
		}
		for r := 0; r < rows; r++ {
			sum, t, s := ZMM(), ZMM(), ZMM()
			VPXORD(sum, sum, sum)
			if bits == 4 {
				vpdpbusd(ev[r], lo, sum)
				vpdpbusd(od[r], hi, sum)
			} else {
				vpdpbusd(ev[r], raw, sum)
			}
			VCVTDQ2PS(sum, t)
			VFNMADD231PS(qsv[r], z, t) // t − zero·qs: exact
			VMULPS(sav[r], sb, s)      // scale·sa
			VMULPS(s, t, t)
			VADDPS(t, acc[4*r+c], acc[4*r+c])
		}
	}
	ADDQ(Imm(64), pb)
	ADDQ(Imm(64), pb2)
	ADDQ(U32(uint32(chunk*rows)), pqa)
	ADDQ(U32(uint32(64*rows)), pqs)
	ADDQ(U32(uint32(64*rows)), psa)
	INCQ(sub)
	CMPQ(sub, NewParamAddr("cpb", 8))
	JNE(LabelRef(name + "_next"))
	XORQ(sub, sub)
	ADDQ(bpc, psc)
	ADDQ(bpc, pzc)
	Label(name + "_next")
	DECQ(chunks)
	JNZ(LabelRef(name + "_chunk"))
	storeLaneSums(acc, true)
	VZEROUPPER()
	RET()
}

// scalarOp emits func name(n int, a float32, x, y *float32): y[i] = x[i]·a
// (or x[i] / a when div) for i < n, n a multiple of 8.
func scalarOp(name, doc string, div bool) {
	TEXT(name, NOSPLIT, "func(n int, a float32, x, y *float32)")
	Pragma("noescape")
	Doc(doc)
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	av := YMM()
	VBROADCASTSS(NewParamAddr("a", 8), av)
	SHRQ(Imm(3), n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	t := YMM()
	VMOVUPS(Mem{Base: px}, t)
	if div {
		VDIVPS(av, t, t)
	} else {
		VMULPS(av, t, t)
	}
	VMOVUPS(t, Mem{Base: py})
	loopEnd(name, n, px, py)
}

// maxNaN emits dst = max(a, b) with NaN winning (nan is scratch):
// VMAXPS returns b when either is NaN, so the lanes where a is NaN are
// blended back from a.
func maxNaN(a reg.VecVirtual, b Op, dst, nan reg.VecVirtual) {
	VMAXPS(b, a, dst)         // max(a, b); b where either is NaN
	VCMPPS(Imm(3), a, a, nan) // unordered: a is NaN
	VBLENDVPS(nan, a, dst, dst)
}

// maxWin3s2 emits func maxWin3S2AVX2(n int, x, y *float32): y[i] =
// max(x[2i], x[2i+1], x[2i+2]) for i < n, n a multiple of 8, NaN in any
// operand giving NaN (as maxAVX2): a 3-wide window at stride 2, the
// pooling of SqueezeNet's and GoogLeNet's 3×3/2 MaxPools along a row,
// in registers. It reads x[0 … 2n+1]. VSHUFPS splits each 16 values
// into even and odd ones within 128-bit lanes, so the three operands
// hold the outputs in the order 0 1 4 5 2 3 6 7; their maximum is put
// back in order once (VPERMPD).
func maxWin3s2() {
	n, px, py := unaryFunc("maxWin3S2AVX2", "maxWin3S2AVX2 sets y[i] = max(x[2i], x[2i+1], x[2i+2]) for i < n (NaN wins); n is a multiple of 8; it reads x[0 … 2n+1].")
	SHRQ(Imm(3), n)
	JZ(LabelRef("mw3_done"))
	Label("mw3_loop")
	a, b, c, d := YMM(), YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: px}, a)           // x[0, 8)
	VMOVUPS(Mem{Base: px, Disp: 32}, b) // x[8, 16)
	VMOVUPS(Mem{Base: px, Disp: 8}, c)  // x[2, 10)
	VMOVUPS(Mem{Base: px, Disp: 40}, d) // x[10, 18)
	e, o, e2 := YMM(), YMM(), YMM()
	VSHUFPS(Imm(0x88), b, a, e)  // x[2i] for i = 0 1 4 5 | 2 3 6 7
	VSHUFPS(Imm(0xDD), b, a, o)  // x[2i+1], same order
	VSHUFPS(Imm(0x88), d, c, e2) // x[2i+2], same order
	m, m2, nan := YMM(), YMM(), YMM()
	maxNaN(e, o, m, nan)
	maxNaN(m, e2, m2, nan)
	VPERMPD(Imm(0xD8), m2, m2) // 64-bit pairs 0 2 1 3: outputs in order
	VMOVUPS(m2, Mem{Base: py})
	ADDQ(Imm(64), px)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef("mw3_loop"))
	Label("mw3_done")
	VZEROUPPER()
	RET()
}

// relu emits func reluAVX2(n int, x, y *float32): y[i] = max(x[i], 0)
// for i < n, n a multiple of 8; VMAXPS returns its second source (x)
// when either is NaN, so NaN stays NaN.
func relu() {
	n, px, py := unaryFunc("reluAVX2", "reluAVX2 sets y[i] = max(x[i], 0) for i < n (NaN stays NaN); n is a multiple of 8.")
	zero := YMM()
	VXORPS(zero, zero, zero)
	SHRQ(Imm(3), n)
	JZ(LabelRef("relu_done"))
	Label("relu_loop")
	t := YMM()
	VMAXPS(Mem{Base: px}, zero, t) // max(0, x); x where either is NaN
	VMOVUPS(t, Mem{Base: py})
	loopEnd("relu", n, px, py)
}

// clip emits func clipAVX2(n int, lo, hi float32, x, y *float32): y[i]
// = min(max(x[i], lo), hi) for i < n, n a multiple of 8, bit-identical
// to Clip's Go loop: VMAXPS(lo, x) is lo where lo > x, else x (so x where
// either is NaN, and x's −0 against a +0 bound), then VMINPS likewise.
func clip() {
	TEXT("clipAVX2", NOSPLIT, "func(n int, lo, hi float32, x, y *float32)")
	Pragma("noescape")
	Doc("clipAVX2 sets y[i] = min(max(x[i], lo), hi) for i < n (bit-identical to Clip's loop); n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	lo, hi := YMM(), YMM()
	VBROADCASTSS(NewParamAddr("lo", 8), lo)
	VBROADCASTSS(NewParamAddr("hi", 12), hi)
	SHRQ(Imm(3), n)
	JZ(LabelRef("clip_done"))
	Label("clip_loop")
	t := YMM()
	VMAXPS(Mem{Base: px}, lo, t) // lo > x ? lo : x
	VMINPS(t, hi, t)             // hi < t ? hi : t
	VMOVUPS(t, Mem{Base: py})
	loopEnd("clip", n, px, py)
}

// kernel emits func name(kc int, a, b *float32, ldb int, c *float32, ldc
// int, add int, bias *float32, relu int): the mr×(nv·w) tile of C at c
// (row stride ldc elements) gets the product of the packed panel a (kc
// steps of stride values, of which the first mr are read) and b (kc rows
// of nv·w values, ldb elements apart: nv·w for a packed panel, B's row
// stride when the kernel reads B in place). Every element is one chain of
// FMAs from zero in k order, then:
//   - add != 0: C's value is added to it (acc = acc + C);
//   - else, bias != nil: its row's bias is added (acc = acc + bias[i]:
//     the same addition as a C filled with the bias, then added to);
//   - relu != 0: it is then max(acc, 0) as reluAVX2 computes it (NaN and
//     −0 kept);
//
// and it is stored once.
func kernel(name string, mr, stride, nv, w int, vec func(int) reg.VecVirtual) {
	TEXT(name, NOSPLIT, "func(kc int, a, b *float32, ldb int, c *float32, ldc int, add int, bias *float32, relu int)")
	Pragma("noescape")
	if mr == stride {
		Doc(fmt.Sprintf("%s computes a %d×%d SGEMM tile from a packed A panel and B rows ldb apart, adding C or a bias, then ReLU if asked.", name, mr, nv*w))
	} else {
		Doc(fmt.Sprintf("%s computes the first %d rows of a %d×%d SGEMM tile from a packed A panel and B rows ldb apart, adding C or a bias, then ReLU if asked.", name, mr, stride, nv*w))
	}
	kc := Load(Param("kc"), GP64())
	pa := Load(Param("a"), GP64())
	pb := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(2), ldb)
	SHLQ(Imm(2), ldc)

	acc, bv := newTile(mr, nv, func() reg.VecVirtual { return vec(0) }, func(r reg.VecVirtual) { VXORPS(r, r, r) })
	TESTQ(kc, kc)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	for j := 0; j < nv; j++ {
		VMOVUPS(Mem{Base: pb, Disp: 4 * w * j}, bv[j])
	}
	tileStep(mr, nv, pa, bv, acc, vec)
	ADDQ(Imm(uint64(4*stride)), pa)
	ADDQ(ldb, pb)
	DECQ(kc)
	JNZ(LabelRef(name + "_loop"))
	tileStore(name, mr, nv, w, pc, ldc, acc, vec)
}

// kernelOffs emits the micro-kernel that reads B's rows where a table
// says instead of ldb apart: row p of B is the nv·w floats at
// b + offs[p] (offsets in floats). Each element is the same chain of
// FMAs as kernel's on a panel packed from those rows (same order, same
// store): the convolutions read their implicit im2col rows in place.
func kernelOffs(name string, mr, stride, nv, w int, vec func(int) reg.VecVirtual) {
	TEXT(name, NOSPLIT, "func(kc int, a *float32, offs *int, b *float32, c *float32, ldc int, add int, bias *float32, relu int)")
	Pragma("noescape")
	if mr == stride {
		Doc(fmt.Sprintf("%s computes a %d×%d SGEMM tile from a packed A panel and the B rows at b + offs[p], adding C or a bias, then ReLU if asked.", name, mr, nv*w))
	} else {
		Doc(fmt.Sprintf("%s computes the first %d rows of a %d×%d SGEMM tile from a packed A panel and the B rows at b + offs[p], adding C or a bias, then ReLU if asked.", name, mr, stride, nv*w))
	}
	kc := Load(Param("kc"), GP64())
	pa := Load(Param("a"), GP64())
	po := Load(Param("offs"), GP64())
	pb := Load(Param("b"), GP64())
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(2), ldc)

	acc, bv := newTile(mr, nv, func() reg.VecVirtual { return vec(0) }, func(r reg.VecVirtual) { VXORPS(r, r, r) })
	off := GP64()
	TESTQ(kc, kc)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	MOVQ(Mem{Base: po}, off)
	for j := 0; j < nv; j++ {
		VMOVUPS(Mem{Base: pb, Index: off, Scale: 4, Disp: 4 * w * j}, bv[j])
	}
	tileStep(mr, nv, pa, bv, acc, vec)
	ADDQ(Imm(uint64(4*stride)), pa)
	ADDQ(Imm(8), po)
	DECQ(kc)
	JNZ(LabelRef(name + "_loop"))
	tileStore(name, mr, nv, w, pc, ldc, acc, vec)
}

// colKernel emits func(kc int, a, b *float32, ldb int, out *float32):
// one column of B (kc values ldb floats apart from b) times np packed A
// panels of 12 rows (kc·12 floats each, one after the other from a),
// the raw sums stored at out[p·12+i]. Each sum is the chain of FMAs the
// 12×32 tile computes for that element (A's value times B's, added in k
// order to a zero start), the 12 rows of a panel in a ymm and an xmm:
// np·2 independent chains (no AVX-512 needed).
func colKernel(name string, np int) {
	TEXT(name, NOSPLIT, "func(kc int, a, b *float32, ldb int, out *float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes one column of B times %d packed A panels of 12 rows (raw sums, rows 12 floats apart per panel, at out).", name, np))
	kc := Load(Param("kc"), GP64())
	pa := Load(Param("a"), GP64())
	pb := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	po := Load(Param("out"), GP64())
	SHLQ(Imm(2), ldb)
	stride := GP64()
	LEAQ(Mem{Base: kc, Index: kc, Scale: 2}, stride) // kc·3
	SHLQ(Imm(4), stride)                             // kc·12 floats
	ptr := []reg.Register{pa}
	for p := 1; p < np; p++ {
		q := GP64()
		MOVQ(ptr[p-1], q)
		ADDQ(stride, q)
		ptr = append(ptr, q)
	}
	lo := make([]reg.VecVirtual, np)
	hi := make([]reg.VecVirtual, np)
	for p := range lo {
		lo[p], hi[p] = YMM(), YMM()
		VXORPS(lo[p], lo[p], lo[p])
		VXORPS(hi[p], hi[p], hi[p])
	}
	TESTQ(kc, kc)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	t := YMM()
	VBROADCASTSS(Mem{Base: pb}, t)
	for p := range lo {
		VFMADD231PS(Mem{Base: ptr[p]}, t, lo[p])
		VFMADD231PS(Mem{Base: ptr[p], Disp: 32}, t.AsX(), hi[p].AsX())
		ADDQ(Imm(48), ptr[p])
	}
	ADDQ(ldb, pb)
	DECQ(kc)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	for p := range lo {
		VMOVUPS(lo[p], Mem{Base: po, Disp: 48 * p})
		VMOVUPS(hi[p].AsX(), Mem{Base: po, Disp: 48*p + 32})
	}
	VZEROUPPER()
	RET()
}

// packRows emits func(kc int, src *float32, ldb int, dst *float32): kc
// rows of 2·w floats, ldb floats apart from src, copied one after the
// other to dst (a B panel of packB).
func packRows(name string, vec func() reg.VecVirtual, w int) {
	TEXT(name, NOSPLIT, "func(kc int, src *float32, ldb int, dst *float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s copies kc rows of %d floats, ldb floats apart from src, one after the other to dst.", name, 2*w))
	kc := Load(Param("kc"), GP64())
	ps := Load(Param("src"), GP64())
	ldb := Load(Param("ldb"), GP64())
	pd := Load(Param("dst"), GP64())
	SHLQ(Imm(2), ldb)
	a, b := vec(), vec()
	TESTQ(kc, kc)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	VMOVUPS(Mem{Base: ps}, a)
	VMOVUPS(Mem{Base: ps, Disp: 4 * w}, b)
	VMOVUPS(a, Mem{Base: pd})
	VMOVUPS(b, Mem{Base: pd, Disp: 4 * w})
	ADDQ(ldb, ps)
	ADDQ(Imm(uint64(8*w)), pd)
	DECQ(kc)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// laneMasks emits laneMask8: eight all-ones 32-bit lanes, then eight
// zero ones; the 8 lanes at byte 4·(8−k) are the mask of the first k.
func laneMasks() Mem {
	m := GLOBL("laneMask8", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		v := uint32(0)
		if i < 8 {
			v = 0xffffffff
		}
		DATA(4*i, U32(v))
	}
	return m
}

// copyStrided emits func copyStridedAVX2(h, w int, src *float32, sp int,
// dst *float32, dp int): dst[r·dp + j] = src[r·sp + j] for r < h, j < w
// (w ≥ 1): blocks of 8 a row, then the last w mod 8 with VMASKMOVPS
// loads and stores, so nothing outside the rows is read or written.
func copyStrided(mask Mem) {
	TEXT("copyStridedAVX2", NOSPLIT, "func(h, w int, src *float32, sp int, dst *float32, dp int)")
	Pragma("noescape")
	Doc("copyStridedAVX2 sets dst[r·dp+j] = src[r·sp+j] for r < h, j < w (w ≥ 1).")
	h := Load(Param("h"), GP64())
	w := Load(Param("w"), GP64())
	ps := Load(Param("src"), GP64())
	sp := Load(Param("sp"), GP64())
	pd := Load(Param("dst"), GP64())
	dp := Load(Param("dp"), GP64())
	SHLQ(Imm(2), sp)
	SHLQ(Imm(2), dp)
	tail, k, m := GP64(), GP64(), YMM()
	MOVQ(w, tail)
	ANDQ(Imm(7), tail)
	MOVQ(tail, k)
	NEGQ(k)
	base := GP64()
	LEAQ(mask, base)
	VMOVDQU(Mem{Base: base, Index: k, Scale: 4, Disp: 32}, m)
	SHRQ(Imm(3), w)
	TESTQ(h, h)
	JZ(LabelRef("copystrided_done"))
	Label("copystrided_row")
	b, s, d, v := GP64(), GP64(), GP64(), YMM()
	MOVQ(w, b)
	MOVQ(ps, s)
	MOVQ(pd, d)
	TESTQ(b, b)
	JZ(LabelRef("copystrided_tail"))
	Label("copystrided_block")
	VMOVUPS(Mem{Base: s}, v)
	VMOVUPS(v, Mem{Base: d})
	ADDQ(Imm(32), s)
	ADDQ(Imm(32), d)
	DECQ(b)
	JNZ(LabelRef("copystrided_block"))
	Label("copystrided_tail")
	TESTQ(tail, tail)
	JZ(LabelRef("copystrided_next"))
	VMASKMOVPS(Mem{Base: s}, m, v)
	VMASKMOVPS(v, m, Mem{Base: d})
	Label("copystrided_next")
	ADDQ(sp, ps)
	ADDQ(dp, pd)
	DECQ(h)
	JNZ(LabelRef("copystrided_row"))
	Label("copystrided_done")
	VZEROUPPER()
	RET()
}

// tileStep emits one k-step of a tile: mr values of A from pa broadcast
// and multiplied into the accumulators with B's values bv.
func tileStep(mr, nv int, pa reg.Register, bv []reg.VecVirtual, acc [][]reg.VecVirtual, vec func(int) reg.VecVirtual) {
	for i := 0; i < mr; i++ {
		t := vec(0)
		VBROADCASTSS(Mem{Base: pa, Disp: 4 * i}, t)
		for j := 0; j < nv; j++ {
			VFMADD231PS(bv[j], t, acc[i][j])
		}
	}
}

// tileStore emits a tile's store: C added (add != 0), else the bias (when
// not nil), then ReLU (relu != 0; relu 2: ReLU6), stored into C (rows ldc
// bytes apart).
func tileStore(name string, mr, nv, w int, pc, ldc reg.Register, acc [][]reg.VecVirtual, vec func(int) reg.VecVirtual) {
	Label(name + "_store")
	add := Load(Param("add"), GP64())
	TESTQ(add, add)
	JZ(LabelRef(name + "_bias"))
	row := GP64()
	MOVQ(pc, row)
	for i := 0; i < mr; i++ {
		for j := 0; j < nv; j++ {
			VADDPS(Mem{Base: row, Disp: 4 * w * j}, acc[i][j], acc[i][j])
		}
		if i < mr-1 {
			ADDQ(ldc, row)
		}
	}
	JMP(LabelRef(name + "_relu"))

	Label(name + "_bias")
	pbias := Load(Param("bias"), GP64())
	TESTQ(pbias, pbias)
	JZ(LabelRef(name + "_relu"))
	for i := 0; i < mr; i++ {
		t := vec(0)
		VBROADCASTSS(Mem{Base: pbias, Disp: 4 * i}, t)
		for j := 0; j < nv; j++ {
			VADDPS(t, acc[i][j], acc[i][j])
		}
	}

	tileAct(name, acc, func() reg.VecVirtual { return vec(0) })

	Label(name + "_set")
	storeTile(acc, pc, ldc, w, func(src, dst Op) { VMOVUPS(src, dst) })
}

// tileAct emits a tile's activation at label name_relu: by the relu
// parameter, none (to name_set), ReLU, or ReLU6 (relu 2).
func tileAct(name string, acc [][]reg.VecVirtual, vec func() reg.VecVirtual) {
	Label(name + "_relu")
	relu := Load(Param("relu"), GP64())
	TESTQ(relu, relu)
	JZ(LabelRef(name + "_set"))
	zero := vec()
	VXORPS(zero, zero, zero)
	for _, row := range acc {
		for _, a := range row {
			// max(0, acc); acc where either is NaN or both are zero, as
			// reluAVX2's VMAXPS.
			VMAXPS(a, zero, a)
		}
	}
	// relu 2 (ReLU6, Clip(0, 6)): min(6, ·) too, acc where either is
	// NaN or both are zero, as clipAVX2's VMINPS.
	CMPQ(relu, Imm(2))
	JNE(LabelRef(name + "_set"))
	bits := GP32()
	MOVL(U32(math.Float32bits(6)), bits)
	sx := XMM()
	VMOVD(bits, sx)
	six := vec()
	VBROADCASTSS(sx, six)
	for _, row := range acc {
		for _, a := range row {
			VMINPS(a, six, a)
		}
	}
}

// newTile allocates mr×nv accumulators, each zeroed, then nv registers
// for a step's values of B.
func newTile(mr, nv int, vec func() reg.VecVirtual, zero func(reg.VecVirtual)) (acc [][]reg.VecVirtual, bv []reg.VecVirtual) {
	acc = make([][]reg.VecVirtual, mr)
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, nv)
		for j := range acc[i] {
			acc[i][j] = vec()
			zero(acc[i][j])
		}
	}
	bv = make([]reg.VecVirtual, nv)
	for j := range bv {
		bv[j] = vec()
	}
	return acc, bv
}

// storeTile stores the accumulators (rows ldc bytes apart from pc, w
// lanes of 4 bytes per register) with mov, then returns.
func storeTile(acc [][]reg.VecVirtual, pc, ldc reg.Register, w int, mov func(src, dst Op)) {
	for i := range acc {
		for j := range acc[i] {
			mov(acc[i][j], Mem{Base: pc, Disp: 4 * w * j})
		}
		if i < len(acc)-1 {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()
}

// bcast broadcasts the float32 constant named name (value v) into a new
// ymm register.
func (g *gen) bcast(name string, v float32) reg.VecVirtual {
	r := YMM()
	// As its bits: the assembler's float DATA is not a float32.
	VBROADCASTSS(g.constant(name, U32(math.Float32bits(v))), r)
	return r
}

// gen emits the functions that use constants in memory: consts holds
// the constants emitted so far (each is emitted once and shared by the
// functions that use it).
type gen struct{ consts map[string]Mem }

func (g *gen) constant(name string, v Constant) Mem {
	if m, ok := g.consts[name]; ok {
		return m
	}
	m := ConstData(name, v)
	g.consts[name] = m
	return m
}

// bcastBits broadcasts the 32-bit pattern v into a new ymm register.
func (g *gen) bcastBits(name string, v uint32) reg.VecVirtual {
	r := YMM()
	VBROADCASTSS(g.constant(name, U32(v)), r)
	return r
}

// exp32 emits, on the 8 lanes of x, exactly the float32 operations of
// package kernels' exp32 (Cephes expf) in the same order, with no FMA,
// so every lane is bit-identical to the Go function: n = floor(x·log2e +
// ½), r = x − n·ln2hi − n·ln2lo, a degree-6 polynomial, times 2^n (in two
// steps when n = 128); +Inf above 88.72283, 0 below −87.33654, NaN stays
// NaN (the comparisons are ordered, so NaN lanes keep the computed NaN).
func (g *gen) exp32(x reg.VecVirtual) reg.VecVirtual {
	fx := YMM()
	VMULPS(g.bcast("exp_log2e", 1.44269504088896341), x, fx)
	VADDPS(g.bcast("exp_half", 0.5), fx, fx)
	n := YMM()
	VROUNDPS(Imm(9), fx, n) // floor, no precision exception
	r, t := YMM(), YMM()
	VMULPS(g.bcast("exp_ln2hi", 0.693359375), n, t)
	VSUBPS(t, x, r) // r = x − n·ln2hi
	VMULPS(g.bcast("exp_ln2lo", -2.12194440e-4), n, t)
	VSUBPS(t, r, r) // r −= n·ln2lo
	p := g.bcast("exp_c0", 1.9875691500e-4)
	for i, c := range []float32{1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1} {
		VMULPS(r, p, p)
		VADDPS(g.bcast(fmt.Sprintf("exp_c%d", i+1), c), p, p)
	}
	VMULPS(r, p, p)
	VMULPS(r, p, p)
	VADDPS(r, p, p)
	VADDPS(g.bcast("exp_one", 1), p, p)
	// 2^min(n, 127) from the exponent bits; n = 128 doubles afterwards.
	c127 := g.bcast("exp_127", 127)
	n2, ni := YMM(), YMM()
	VMINPS(c127, n, n2)
	VCVTTPS2DQ(n2, ni)
	VPADDD(g.bcastBits("exp_bias", 127), ni, ni)
	VPSLLD(Imm(23), ni, ni)
	res := YMM()
	VMULPS(ni, p, res)
	big, twice := YMM(), YMM()
	VCMPPS(Imm(0x1e), c127, n, big) // n > 127
	VADDPS(res, res, twice)
	VBLENDVPS(big, twice, res, res)
	over, under := YMM(), YMM()
	VCMPPS(Imm(0x1e), g.bcast("exp_hi", 88.72283), x, over) // x > 88.72283
	VBLENDVPS(over, g.bcastBits("exp_inf", 0x7f800000), res, res)
	VCMPPS(Imm(0x11), g.bcast("exp_lo", -87.33654), x, under) // x < −87.33654
	zero := YMM()
	VXORPS(zero, zero, zero)
	VBLENDVPS(under, zero, res, res)
	return res
}

// expSub emits func expSubAVX2(n int, x *float32, sub float32, y *float32):
// y[i] = exp32(x[i] − sub) for i < n, n a multiple of 8 (Softmax's
// exponentials), bit-identical to the Go exp32.
func (g *gen) expSub() {
	TEXT("expSubAVX2", NOSPLIT, "func(n int, x *float32, sub float32, y *float32)")
	Pragma("noescape")
	Doc("expSubAVX2 sets y[i] = exp32(x[i] − sub) for i < n (bit-identical to exp32); n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	sv := YMM()
	VBROADCASTSS(NewParamAddr("sub", 16), sv)
	SHRQ(Imm(3), n)
	JZ(LabelRef("expsub_done"))
	Label("expsub_loop")
	xv := YMM()
	VMOVUPS(Mem{Base: px}, xv)
	VSUBPS(sv, xv, xv)
	VMOVUPS(g.exp32(xv), Mem{Base: py})
	loopEnd("expsub", n, px, py)
}

// gelu emits func geluAVX2(n int, x, y *float32): package kernels' Gelu
// (erf by Abramowitz and Stegun 7.1.26 on exp32) on 8 lanes, the same
// float32 operations in the same order with no FMA, bit-identical to the
// Go loop except for the sign and payload of NaNs.
func (g *gen) gelu() {
	n, px, py := unaryFunc("geluAVX2", "geluAVX2 sets y[i] = gelu(x[i]) for i < n (bit-identical to Gelu's loop but for NaN signs); n is a multiple of 8.")
	SHRQ(Imm(3), n)
	JZ(LabelRef("gelu_done"))
	Label("gelu_loop")
	v, u, au := YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: px}, v)
	VMULPS(g.bcast("gelu_invsqrt2", 0.70710678118654752), v, u)
	VANDPS(g.bcastBits("gelu_abs", 0x7fffffff), u, au)
	one := g.bcast("gelu_one", 1)
	t := YMM()
	VMULPS(g.bcast("gelu_p", 0.3275911), au, t)
	VADDPS(one, t, t)
	VDIVPS(t, one, t) // t = 1 / (1 + p·|u|)
	q := g.bcast("gelu_a5", 1.061405429)
	for i, c := range []float32{-1.453152027, 1.421413741, -0.284496736, 0.254829592} {
		VMULPS(t, q, q)
		VADDPS(g.bcast(fmt.Sprintf("gelu_a%d", 4-i), c), q, q)
	}
	VMULPS(t, q, q)
	w := YMM()
	VMULPS(au, au, w)
	sign := g.bcastBits("gelu_sign", 0x80000000)
	VXORPS(sign, w, w) // −|u|·|u|
	VMULPS(g.exp32(w), q, q)
	e := YMM()
	VSUBPS(q, one, e) // e = 1 − q·t·exp
	neg, zero := YMM(), YMM()
	VXORPS(zero, zero, zero)
	VCMPPS(Imm(0x11), zero, u, neg) // u < 0
	VANDPS(sign, neg, neg)
	VXORPS(neg, e, e)
	h := YMM()
	VMULPS(g.bcast("gelu_half", 0.5), v, h)
	VADDPS(one, e, e)
	VMULPS(e, h, h)
	VMOVUPS(h, Mem{Base: py})
	loopEnd("gelu", n, px, py)
}

// tanh emits func name(n int, x, y *float32): package kernels' tanh32
// (the rational approximation clamped at ±9) on 8 lanes, or the sigmoid
// ½·tanh32(x/2) + ½ when sigmoid, with the Go code's float32 products and
// sums in its order (no FMA): bit-identical but for NaN signs. The clamp
// is VMINPS/VMAXPS with the lane's own value as second source, so NaN
// stays NaN.
func (g *gen) tanh(name, doc string, sigmoid bool) {
	n, px, py := unaryFunc(name, doc)
	SHRQ(Imm(3), n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	x := YMM()
	VMOVUPS(Mem{Base: px}, x)
	if sigmoid {
		VMULPS(g.bcast("tanh_half", 0.5), x, x)
	}
	VMINPS(x, g.bcast("tanh_9", 9), x)
	VMAXPS(x, g.bcast("tanh_m9", -9), x)
	x2 := YMM()
	VMULPS(x, x, x2)
	p := g.bcast("tanh_a13", float32(-2.76076847742355e-16))
	for _, c := range []struct {
		name string
		v    float64
	}{{"tanh_a11", 2.00018790482477e-13}, {"tanh_a9", -8.60467152213735e-11}, {"tanh_a7", 5.12229709037114e-08},
		{"tanh_a5", 1.48572235717979e-05}, {"tanh_a3", 6.37261928875436e-04}, {"tanh_a1", 4.89352455891786e-03}} {
		VMULPS(x2, p, p)
		VADDPS(g.bcast(c.name, float32(c.v)), p, p)
	}
	VMULPS(x, p, p)
	q := g.bcast("tanh_b6", float32(1.19825839466702e-06))
	for _, c := range []struct {
		name string
		v    float64
	}{{"tanh_b4", 1.18534705686654e-04}, {"tanh_b2", 2.26843463243900e-03}, {"tanh_b0", 4.89352518554385e-03}} {
		VMULPS(x2, q, q)
		VADDPS(g.bcast(c.name, float32(c.v)), q, q)
	}
	VDIVPS(q, p, p)
	if sigmoid {
		half := g.bcast("tanh_half", 0.5)
		VMULPS(half, p, p)
		VADDPS(half, p, p)
	}
	VMOVUPS(p, Mem{Base: py})
	loopEnd(name, n, px, py)
}

// sigmoidExp emits func name(n int, x, y *float32): package kernels'
// sigmoidExp (or x·sigmoidExp(x) when silu) on 8 lanes, the same float32
// operations in the same order, FMA where the Go function calls fma32,
// so bit-identical, NaNs included (x quieted): u = x clamped to
// [−88, 86.5], E = e^−u (Cephes expf's range reduction, n by the 1.5·2²³
// rounding trick, 2^n from the rounded sum's low bits, and a degree-5
// polynomial in r = −(−u − n·ln2) with fused multiply-adds), y = 1/(1 + E), 0 where
// x < −88. The clamp is VMAXPS/VMINPS with u as the second source, so a
// NaN x stays in u and every NaN on the way derives from it (then SiLU's
// x·y has the bits of Mul(x, Sigmoid(x)) in either order). Constants the
// loop does not keep in registers are 8-lane vectors in memory, read by
// the instructions that use them.
func (g *gen) sigmoidExp(name, doc string, silu bool) {
	n, px, py := unaryFunc(name, doc)
	lo := g.bcast("sigexp_lo", -88)
	hi := g.bcast("sigexp_hi", 86.5)
	nlog2e := g.bcast("sigexp_nlog2e", -1.44269504088896341)
	magic := g.bcast("sigexp_magic", 12582912)
	one := g.bcast("sigexp_one", 1)
	SHRQ(Imm(3), n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	x, u := YMM(), YMM()
	VMOVUPS(Mem{Base: px}, x)
	VMAXPS(x, lo, u) // lo > x ? lo : x (x where x is NaN)
	VMINPS(u, hi, u) // hi < u ? hi : u
	b := YMM()
	VMOVAPS(magic, b)
	VFMADD231PS(nlog2e, u, b) // b = −u·log2e + 1.5·2²³ (rounded: n in the low bits)
	m := YMM()
	VSUBPS(magic, b, m) // m = n
	r := YMM()
	VMOVAPS(u, r)
	VFMADD231PS(g.vec8("sigexp_ln2hi", 0.693359375), m, r)    // r = u + n·ln2hi
	VFMADD231PS(g.vec8("sigexp_ln2lo", -2.12194440e-4), m, r) // r += n·ln2lo
	p := YMM()
	VMOVUPS(g.vec8("sigexp_c0", 8.3125270903e-03), p) // no alignment asked of the constant
	for i, c := range []float32{4.1890114546e-02, 1.6667114198e-01, 4.9999231100e-01} {
		VFNMADD213PS(g.vec8(fmt.Sprintf("sigexp_c%d", i+1), c), r, p) // p = −(p·r) + c
	}
	r2 := YMM()
	VMULPS(r, r, r2)
	VFMSUB213PS(r, r2, p) // p = p·r² − r
	VADDPS(one, p, p)
	VPSLLD(Imm(23), b, b)
	VPADDD(g.vec8bits("sigexp_bias", 127<<23), b, b) // 2^n
	VMULPS(b, p, p)
	VADDPS(one, p, p) // 1 + E
	VDIVPS(p, one, p) // 1/(1 + E)
	under := YMM()
	VCMPPS(Imm(0x11), lo, x, under) // x < −88
	VANDNPS(p, under, p)
	if silu {
		VMULPS(x, p, p)
	}
	VMOVUPS(p, Mem{Base: py})
	loopEnd(name, n, px, py)
}

// sigmoidExp512 emits sigmoidExp's loop on 16 lanes (AVX-512F): the same
// operations on the same operands in the same order, so every lane has
// the bits of sigmoidExpAVX2's (and the Go function's). The constants
// are broadcast into registers before the loop (32 zmm registers hold
// them all); the x < −88 lanes are zeroed by the division's zeroing
// mask, the complement of VCMPPS's LT_OQ (NLT_UQ: NaN lanes kept, as
// VANDNPS keeps them in the AVX2 loop).
//
// Four instructions fewer than the AVX2 loop per vector: the zeroing
// is the division's mask (the lanes it keeps have the division's bits,
// the others +0, as the masked move after it gave); E = p·2ⁿ is
// VSCALEFPS by n (exact, as the product by 2ⁿ built from n's bits: both
// are normal for u in [−88, 86.5], so no rounding either way; a NaN lane
// stays p's NaN), and r is computed in u's register (no copy).
// TestSigmoidAVX512AllInputs compares every one of the 2³² inputs with
// the AVX2 loop's under ONNXCONV_EXHAUSTIVE=1.
func (g *gen) sigmoidExp512(name, doc string, silu bool) {
	n, px, py := unaryFunc(name, doc)
	z := func(m Mem) reg.VecVirtual {
		r := ZMM()
		VBROADCASTSS(m, r)
		return r
	}
	c := func(name string, v float32) reg.VecVirtual {
		return z(g.constant(name, U32(math.Float32bits(v))))
	}
	lo := c("sigexp_lo", -88)
	hi := c("sigexp_hi", 86.5)
	nlog2e := c("sigexp_nlog2e", -1.44269504088896341)
	magic := c("sigexp_magic", 12582912)
	one := c("sigexp_one", 1)
	ln2hi := z(g.vec8("sigexp_ln2hi", 0.693359375))
	ln2lo := z(g.vec8("sigexp_ln2lo", -2.12194440e-4))
	c0 := z(g.vec8("sigexp_c0", 8.3125270903e-03))
	var cs []reg.VecVirtual
	for i, v := range []float32{4.1890114546e-02, 1.6667114198e-01, 4.9999231100e-01} {
		cs = append(cs, z(g.vec8(fmt.Sprintf("sigexp_c%d", i+1), v)))
	}
	SHRQ(Imm(4), n)
	JZ(LabelRef(name + "_done"))
	Label(name + "_loop")
	x, u := ZMM(), ZMM()
	VMOVUPS(Mem{Base: px}, x)
	VMAXPS(x, lo, u) // lo > x ? lo : x (x where x is NaN)
	VMINPS(u, hi, u) // hi < u ? hi : u
	b := ZMM()
	VMOVAPS(magic, b)
	VFMADD231PS(nlog2e, u, b) // b = −u·log2e + 1.5·2²³
	m := b
	VSUBPS(magic, b, m)      // m = n
	r := u                   // u is not read again
	VFMADD231PS(ln2hi, m, r) // r = u + n·ln2hi
	VFMADD231PS(ln2lo, m, r) // r += n·ln2lo
	p := ZMM()
	VMOVAPS(c0, p)
	for _, ci := range cs {
		VFNMADD213PS(ci, r, p) // p = −(p·r) + c
	}
	r2 := ZMM()
	VMULPS(r, r, r2)
	VFMSUB213PS(r, r2, p) // p = p·r² − r
	VADDPS(one, p, p)
	VSCALEFPS(m, p, p) // p·2^n
	VADDPS(one, p, p)  // 1 + E
	keep := K()
	VCMPPS(Imm(0x15), lo, x, keep) // !(x < −88)
	VDIVPS_Z(p, one, keep, p)      // 1/(1 + E), +0 where x < −88
	if silu {
		VMULPS(x, p, p)
	}
	VMOVUPS(p, Mem{Base: py})
	ADDQ(Imm(64), px)
	ADDQ(Imm(64), py)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// vec8 returns the 32-byte constant named name: v in 8 lanes.
func (g *gen) vec8(name string, v float32) Mem { return g.vec8bits(name, math.Float32bits(v)) }

// vec8bits returns the 32-byte constant named name: the 32-bit pattern v
// in 8 lanes.
func (g *gen) vec8bits(name string, v uint32) Mem {
	if m, ok := g.consts[name]; ok {
		return m
	}
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 8; i++ {
		DATA(4*i, U32(v))
	}
	g.consts[name] = m
	return m
}

// hardSwish emits func hardSwishAVX2(n int, x, y *float32): package
// kernels' HardSwish on 8 lanes, bit-identical to its Go loop: the
// factor s = x·float32(1/6) + 0.5 (a product, then a sum: no FMA), then
// max(s, 0), which gives its second source +0 where s is NaN or negative
// (s is never −0), then min(·, 1), then x·s (x quieted where x is NaN).
func (g *gen) hardSwish() {
	n, px, py := unaryFunc("hardSwishAVX2", "hardSwishAVX2 sets y[i] = hardswish(x[i]) for i < n (bit-identical to HardSwish's loop); n is a multiple of 8.")
	sixth, half, one := g.bcast("hswish_sixth", float32(1.0/6)), g.bcast("hswish_half", 0.5), g.bcast("hswish_one", 1)
	zero := YMM()
	VXORPS(zero, zero, zero)
	SHRQ(Imm(3), n)
	JZ(LabelRef("hswish_done"))
	Label("hswish_loop")
	v, s := YMM(), YMM()
	VMOVUPS(Mem{Base: px}, v)
	VMULPS(sixth, v, s)
	VADDPS(half, s, s)
	VMAXPS(zero, s, s) // max(s, 0); +0 where s is NaN
	VMINPS(one, s, s)
	VMULPS(s, v, s)
	VMOVUPS(s, Mem{Base: py})
	loopEnd("hswish", n, px, py)
}

// unaryFunc emits the head of func name(n int, x, y *float32) with
// doc as its comment and returns n, x and y loaded into registers.
func unaryFunc(name, doc string) (n, px, py reg.Register) {
	TEXT(name, NOSPLIT, "func(n int, x, y *float32)")
	Pragma("noescape")
	Doc(doc)
	return Load(Param("n"), GP64()), Load(Param("x"), GP64()), Load(Param("y"), GP64())
}

// loopEnd closes an 8-lane loop over x and y opened with
// Label(name+"_loop") (n counting blocks of 8): both pointers step 32
// bytes, then the return at Label(name+"_done").
func loopEnd(name string, n, px, py reg.Register) {
	ADDQ(Imm(32), px)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// ikernel emits func name(kp int, a, b *int16, c *int32, ldc int): the
// mr×(nv·w) int32 tile of C at c (row stride ldc elements) is set to the
// product of the packed panels a (kp steps of mr pairs of int16: row i's
// values at k = 2p and 2p+1) and b (kp steps of nv·w pairs: column j's
// values at k = 2p and 2p+1). Each step is one VPMADDWD per row and
// vector (a[i,2p]·b[2p,j] + a[i,2p+1]·b[2p+1,j] in int32: exact, as both
// factors lie in [−255, 255] and neither VPMADDWD's one saturating case,
// −32768·−32768 twice, nor VPMADDUBSW's int16 saturation can happen)
// and one VPADDD into the accumulator: the sums are exact int32 sums
// (wrapping as ONNX Runtime's int32 accumulators wrap).
// evex selects the AVX-512 forms of the moves and the zeroing.
func ikernel(name string, mr, nv, w int, evex bool, vec func() reg.VecVirtual) {
	mov := func(src, dst Op) { VMOVDQU(src, dst) }
	zero := func(r reg.VecVirtual) { VPXOR(r, r, r) }
	if evex {
		mov = func(src, dst Op) { VMOVDQU32(src, dst) }
		zero = func(r reg.VecVirtual) { VPXORD(r, r, r) }
	}
	TEXT(name, NOSPLIT, "func(kp int, a, b *int16, c *int32, ldc int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets a %d×%d int32 tile of C to the product of packed int16-pair panels of A and B.", name, mr, nv*w))
	kp := Load(Param("kp"), GP64())
	pa := Load(Param("a"), GP64())
	pb := Load(Param("b"), GP64())
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(2), ldc)
	acc, bv := newTile(mr, nv, vec, zero)
	TESTQ(kp, kp)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	for j := 0; j < nv; j++ {
		mov(Mem{Base: pb, Disp: 4 * w * j}, bv[j])
	}
	for i := 0; i < mr; i++ {
		t := vec()
		VPBROADCASTD(Mem{Base: pa, Disp: 4 * i}, t)
		for j := 0; j < nv; j++ {
			p := vec()
			VPMADDWD(bv[j], t, p)
			VPADDD(p, acc[i][j], acc[i][j])
		}
	}
	ADDQ(Imm(uint64(4*mr)), pa)
	ADDQ(Imm(uint64(4*nv*w)), pb)
	DECQ(kp)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	storeTile(acc, pc, ldc, w, mov)
}

// softmaxRows512 emits func softmaxRowsAVX512(rows, n int, x, y *float32)
// int: Softmax over rows of n values (n a multiple of 8, row stride n),
// each row in one call of three passes on 16 lanes (the last 8 values of
// a row whose n is not a multiple of 16 in the low half of the
// registers): the maximum; y = exp32(x − max) with exp32z (the float32
// operations of exp32/expSubAVX2 in their order, no FMA), its values
// added in float64 into 8 lanes (lane j: y[8i+j] in i order) that are
// then added in lane order, as sumF64AVX2 and sumF64SIMD do; y times
// float32(1/sum), as scaleAVX2. So every value is the bits of Softmax's
// rowMax/expSub/sumF64/scale. A row holding a NaN is not touched: the
// call returns the number of rows done before it (the caller does that
// row the old way: NaN wins there).
func (g *gen) softmaxRows512() {
	TEXT("softmaxRowsAVX512", NOSPLIT, "func(rows, n int, x, y *float32) int")
	Pragma("noescape")
	Doc("softmaxRowsAVX512 sets each of the rows rows of n values of y (n a multiple of 8) to Softmax of x's (bit-identical to Softmax's AVX2 passes); it stops before a row holding a NaN and returns the number of rows done.")
	rows := Load(Param("rows"), GP64())
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	lanes := AllocLocal(64)
	z := func(m Mem) reg.VecVirtual {
		r := ZMM()
		VBROADCASTSS(m, r)
		return r
	}
	c := func(name string, v float32) reg.VecVirtual { return z(g.constant(name, U32(math.Float32bits(v)))) }
	cb := func(name string, v uint32) reg.VecVirtual { return z(g.constant(name, U32(v))) }
	e := expConsts{
		log2e: c("exp_log2e", 1.44269504088896341), half: c("exp_half", 0.5),
		ln2hi: c("exp_ln2hi", 0.693359375), ln2lo: c("exp_ln2lo", -2.12194440e-4),
		one: c("exp_one", 1), bias: cb("exp_bias", 127), lo: c("exp_lo", -87.33654),
	}
	e.cs = append(e.cs, c("exp_c0", 1.9875691500e-4))
	for i, v := range []float32{1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1} {
		e.cs = append(e.cs, c(fmt.Sprintf("exp_c%d", i+1), v))
	}
	e.zero = ZMM()
	VXORPS(e.zero, e.zero, e.zero)
	ninf := cb("smx_ninf", 0xff800000)
	done := GP64()
	XORQ(done, done)
	stride := GP64()
	MOVQ(n, stride)
	SHLQ(Imm(2), stride)
	cnt, p, q := GP64(), GP64(), GP64()

	Label("smx_row")
	CMPQ(done, rows)
	JAE(LabelRef("smx_ret"))
	// Pass 1: the maximum, and whether a NaN is there.
	acc := ZMM()
	VMOVAPS(ninf, acc)
	nan := K()
	KXORW(nan, nan, nan)
	MOVQ(px, p)
	MOVQ(n, cnt)
	SHRQ(Imm(4), cnt)
	JZ(LabelRef("smx_max_tail"))
	Label("smx_max")
	v := ZMM()
	VMOVUPS(Mem{Base: p}, v)
	VMAXPS(v, acc, acc)
	t := K()
	VCMPPS(Imm(3), v, v, t)
	KORW(t, nan, nan)
	ADDQ(Imm(64), p)
	DECQ(cnt)
	JNZ(LabelRef("smx_max"))
	Label("smx_max_tail")
	BTQ(Imm(3), n)
	JCC(LabelRef("smx_max_done"))
	v8 := ZMM()
	VINSERTF32X8(Imm(0), Mem{Base: p}, acc, v8) // the last 8 values, acc's lanes above them
	VMAXPS(v8, acc, acc)
	t8 := K()
	VCMPPS(Imm(3), v8, v8, t8)
	KORW(t8, nan, nan)
	Label("smx_max_done")
	KORTESTW(nan, nan)
	JNZ(LabelRef("smx_ret"))
	h8, m8 := YMM(), YMM()
	VEXTRACTF32X8(Imm(1), acc, h8)
	VMAXPS(h8, acc.AsY(), m8)
	h4, m4 := XMM(), XMM()
	VEXTRACTF32X4(Imm(1), m8, h4)
	VMAXPS(h4, m8.AsX(), m4)
	s4 := XMM()
	VPERMILPS(Imm(0x4e), m4, s4)
	VMAXPS(s4, m4, m4)
	VPERMILPS(Imm(0xb1), m4, s4)
	VMAXPS(s4, m4, m4)
	mx := ZMM()
	VBROADCASTSS(m4, mx)
	// Pass 2: y = exp32(x − max), summed in 8 float64 lanes.
	sum := ZMM()
	VXORPD(sum, sum, sum)
	MOVQ(px, p)
	MOVQ(py, q)
	MOVQ(n, cnt)
	SHRQ(Imm(4), cnt)
	JZ(LabelRef("smx_exp_tail"))
	Label("smx_exp")
	x := ZMM()
	VMOVUPS(Mem{Base: p}, x)
	VSUBPS(mx, x, x)
	VMOVUPS(g.exp32z(x, e), Mem{Base: q})
	d0, d1 := ZMM(), ZMM()
	VCVTPS2PD(Mem{Base: q}, d0)
	VCVTPS2PD(Mem{Base: q, Disp: 32}, d1)
	VADDPD(d0, sum, sum)
	VADDPD(d1, sum, sum)
	ADDQ(Imm(64), p)
	ADDQ(Imm(64), q)
	DECQ(cnt)
	JNZ(LabelRef("smx_exp"))
	Label("smx_exp_tail")
	BTQ(Imm(3), n)
	JCC(LabelRef("smx_exp_done"))
	xt := ZMM()
	VMOVUPS(Mem{Base: p}, xt.AsY())
	VSUBPS(mx, xt, xt)
	VMOVUPS(g.exp32z(xt, e).AsY(), Mem{Base: q})
	dt := ZMM()
	VCVTPS2PD(Mem{Base: q}, dt)
	VADDPD(dt, sum, sum)
	Label("smx_exp_done")
	// The lanes added in order from 0 (sumF64SIMD), then a = float32(1/s).
	VMOVUPD(sum, lanes)
	s := XMM()
	VXORPD(s, s, s)
	for j := 0; j < 8; j++ {
		VADDSD(lanes.Offset(8*j), s, s)
	}
	o := XMM()
	VMOVSD(g.constant("smx_one64", U64(math.Float64bits(1))), o)
	VDIVSD(s, o, o)
	VCVTSD2SS(o, o, o)
	a := ZMM()
	VBROADCASTSS(o, a)
	// Pass 3: y ·= a.
	MOVQ(py, q)
	MOVQ(n, cnt)
	SHRQ(Imm(4), cnt)
	JZ(LabelRef("smx_scale_tail"))
	Label("smx_scale")
	w := ZMM()
	VMOVUPS(Mem{Base: q}, w)
	VMULPS(a, w, w)
	VMOVUPS(w, Mem{Base: q})
	ADDQ(Imm(64), q)
	DECQ(cnt)
	JNZ(LabelRef("smx_scale"))
	Label("smx_scale_tail")
	BTQ(Imm(3), n)
	JCC(LabelRef("smx_next"))
	wt := YMM()
	VMOVUPS(Mem{Base: q}, wt)
	VMULPS(a.AsY(), wt, wt)
	VMOVUPS(wt, Mem{Base: q})
	Label("smx_next")
	ADDQ(stride, px)
	ADDQ(stride, py)
	INCQ(done)
	JMP(LabelRef("smx_row"))
	Label("smx_ret")
	Store(done, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// expConsts holds exp32z's constants in registers.
type expConsts struct {
	log2e, half, ln2hi, ln2lo, one, bias, lo, zero reg.VecVirtual
	cs                                             []reg.VecVirtual // c0 … c5
}

// exp32z is exp32 on 16 lanes: the same float32 operations in the same
// order with the same operands (so NaN lanes carry the same bits too),
// the blends as masked moves. Its only caller, Softmax, gives it x =
// v − max(row) of a row without NaN: x ≤ 0, −Inf or NaN (+Inf − +Inf),
// so n = floor(x·log2e + ½) ≤ 0 or NaN and exp32's clamp of n at 127,
// its n = 128 case and its overflow to +Inf never change a lane: they
// are left out (a NaN lane's n gives 2^0 instead of 2^127 as the factor
// of p's NaN, which the product returns quieted either way).
func (g *gen) exp32z(x reg.VecVirtual, e expConsts) reg.VecVirtual {
	fx := ZMM()
	VMULPS(e.log2e, x, fx)
	VADDPS(e.half, fx, fx)
	n := ZMM()
	VRNDSCALEPS(Imm(9), fx, n) // floor, no precision exception
	r, t := ZMM(), ZMM()
	VMULPS(e.ln2hi, n, t)
	VSUBPS(t, x, r)
	VMULPS(e.ln2lo, n, t)
	VSUBPS(t, r, r)
	p := ZMM()
	VMOVAPS(e.cs[0], p)
	for _, ci := range e.cs[1:] {
		VMULPS(r, p, p)
		VADDPS(ci, p, p)
	}
	VMULPS(r, p, p)
	VMULPS(r, p, p)
	VADDPS(r, p, p)
	VADDPS(e.one, p, p)
	ni := ZMM()
	VCVTTPS2DQ(n, ni)
	VPADDD(e.bias, ni, ni)
	VPSLLD(Imm(23), ni, ni)
	res := ZMM()
	VMULPS(ni, p, res)
	under := K()
	VCMPPS(Imm(0x11), e.lo, x, under) // x < −87.33654
	VMOVAPS(e.zero, under, res)
	return res
}

// vec16 returns the 64-byte constant named name: the 16 int32 lanes v.
func (g *gen) vec16(name string, v [16]uint32) Mem {
	if m, ok := g.consts[name]; ok {
		return m
	}
	m := GLOBL(name, RODATA|NOPTR)
	for i, x := range v {
		DATA(4*i, U32(x))
	}
	g.consts[name] = m
	return m
}

// packA12Gather emits func packA12AVX512(kq int, a *float32, lda int,
// dst *float32, alpha float32, rows int): the panel of 12 rows of a
// row-major A for 4·kq steps (dst[12p+r] = a[r·lda+p]·alpha for r <
// rows, +0 for rows ≤ r < 12), three gathers of 16 values per 4 steps
// (the panel's 48 values in order: lane l of gather v is step (16v+l)/12
// of row (16v+l) mod 12), each times alpha (a float32 product, as
// packA's), rows at or past rows not read. r·lda + 3 must fit in int32.
func (g *gen) packA12Gather() {
	TEXT("packA12AVX512", NOSPLIT, "func(kq int, a *float32, lda int, dst *float32, alpha float32, rows int)")
	Pragma("noescape")
	Doc("packA12AVX512 sets dst[12p+r] = a[r·lda+p]·alpha for p < 4·kq and r < rows, dst[12p+r] = 0 for rows ≤ r < 12 (a panel of packA for mr = 12); r·lda+3 fits in int32.")
	kq := Load(Param("kq"), GP64())
	pa := Load(Param("a"), GP64())
	lda := GP64()
	Load(Param("lda"), lda)
	pd := Load(Param("dst"), GP64())
	rows := GP64()
	Load(Param("rows"), rows)
	alpha := ZMM()
	VBROADCASTSS(NewParamAddr("alpha", 32), alpha)
	ldv, rv := ZMM(), ZMM()
	VPBROADCASTD(lda.As32(), ldv)
	VPBROADCASTD(rows.As32(), rv)
	var idx [3]reg.VecVirtual
	var mask [3]reg.OpmaskVirtual
	for v := range idx {
		var rr, pp [16]uint32
		for l := range rr {
			e := 16*v + l
			rr[l], pp[l] = uint32(e%12), uint32(e/12)
		}
		ri := ZMM()
		VMOVDQU32(g.vec16(fmt.Sprintf("packa12_r%d", v), rr), ri)
		mask[v] = K()
		VPCMPD(Imm(1), rv, ri, mask[v]) // r < rows
		idx[v] = ZMM()
		VPMULLD(ldv, ri, idx[v])
		VPADDD(g.vec16(fmt.Sprintf("packa12_p%d", v), pp), idx[v], idx[v])
	}
	TESTQ(kq, kq)
	JZ(LabelRef("packa12_done"))
	Label("packa12_loop")
	for v := range idx {
		z, k := ZMM(), K()
		VPXORD(z, z, z)
		KMOVW(mask[v], k)
		VGATHERDPS(Mem{Base: pa, Index: idx[v], Scale: 4}, k, z)
		VMULPS_Z(alpha, z, mask[v], z)
		VMOVUPS(z, Mem{Base: pd, Disp: 64 * v})
	}
	ADDQ(Imm(16), pa)
	ADDQ(U32(192), pd)
	DECQ(kq)
	JNZ(LabelRef("packa12_loop"))
	Label("packa12_done")
	VZEROUPPER()
	RET()
}

// packBT32Gather emits func packBT32AVX512(kc int, b *float32, ldb int,
// dst *float32, nn int): a panel of 32 columns of op(B) = Bᵀ (B is n×k,
// rows ldb apart) for kc steps: dst[32p+j] = b[j·ldb+p] for j < nn, +0
// for nn ≤ j < 32, two gathers of 16 per step; rows at or past nn are not
// read. 31·ldb + kc must fit in int32.
func (g *gen) packBT32Gather() {
	TEXT("packBT32AVX512", NOSPLIT, "func(kc int, b *float32, ldb int, dst *float32, nn int)")
	Pragma("noescape")
	Doc("packBT32AVX512 sets dst[32p+j] = b[j·ldb+p] for p < kc and j < nn, dst[32p+j] = 0 for nn ≤ j < 32 (a panel of packB's transposed B for nr = 32); 31·ldb+kc fits in int32.")
	kc := Load(Param("kc"), GP64())
	pb := Load(Param("b"), GP64())
	ldb := GP64()
	Load(Param("ldb"), ldb)
	pd := Load(Param("dst"), GP64())
	nn := GP64()
	Load(Param("nn"), nn)
	var iota [16]uint32
	for l := range iota {
		iota[l] = uint32(l)
	}
	io := ZMM()
	VMOVDQU32(g.vec16("packbt_iota", iota), io)
	ldv := ZMM()
	VPBROADCASTD(ldb.As32(), ldv)
	var idx [2]reg.VecVirtual
	var mask [2]reg.OpmaskVirtual
	idx[0], idx[1] = ZMM(), ZMM()
	VPMULLD(ldv, io, idx[0])
	SHLQ(Imm(4), ldb)
	l16 := ZMM()
	VPBROADCASTD(ldb.As32(), l16)
	VPADDD(l16, idx[0], idx[1])
	nv := ZMM()
	VPBROADCASTD(nn.As32(), nv)
	mask[0] = K()
	VPCMPD(Imm(1), nv, io, mask[0]) // j < nn
	SUBQ(Imm(16), nn)
	VPBROADCASTD(nn.As32(), nv)
	mask[1] = K()
	VPCMPD(Imm(1), nv, io, mask[1]) // 16 + j < nn
	TESTQ(kc, kc)
	JZ(LabelRef("packbt_done"))
	Label("packbt_loop")
	for h := range idx {
		z, k := ZMM(), K()
		VPXORD(z, z, z)
		KMOVW(mask[h], k)
		VGATHERDPS(Mem{Base: pb, Index: idx[h], Scale: 4}, k, z)
		VMOVUPS(z, Mem{Base: pd, Disp: 64 * h})
	}
	ADDQ(Imm(4), pb)
	ADDQ(Imm(128), pd)
	DECQ(kc)
	JNZ(LabelRef("packbt_loop"))
	Label("packbt_done")
	VZEROUPPER()
	RET()
}

// poolConsts emits the pool kernels' constants: −Inf in every lane and,
// at s = 2, the VPERMI2PS indices of the even columns (idxE) and the odd
// ones (idxO) of two vectors.
func poolConsts(name string, s int) (ninf, idxE, idxO reg.VecVirtual) {
	ninf, idxE, idxO = ZMM(), ZMM(), ZMM()
	t := GP32()
	MOVL(U32(0xff800000), t)
	VPBROADCASTD(t, ninf)
	if s == 2 {
		idx := GLOBL(name+"_idx", RODATA|NOPTR) // even columns, then odd ones
		for i := 0; i < 32; i++ {
			DATA(4*i, U32(2*(i%16)+i/16))
		}
		VMOVDQU32(idx, idxE)
		VMOVDQU32(idx.Offset(64), idxO)
	}
	return ninf, idxE, idxO
}

// poolMaxNaN sets a = max(a, b), NaN winning, in a's register (as
// maxNaN: VMAXPS where a is not NaN, a where it is), on the lanes of km
// only (nil: all; b's memory is read on those lanes only).
func poolMaxNaN(a reg.VecVirtual, b Op, km reg.Register) {
	kn := K()
	if km == nil {
		VCMPPS(Imm(7), a, a, kn) // ordered: a is not NaN
	} else {
		VCMPPS(Imm(7), a, a, km, kn)
	}
	VMAXPS(b, a, kn, a)
}

// poolRowsMax returns the pool kernels' rowsMax: the maximum over the k
// window rows (px, px + d1, px + d2) of 16 columns at px + disp, on the
// lanes of km (the others −Inf) or all lanes (km nil).
func poolRowsMax(k int, d1, d2 reg.Register, ninf reg.VecVirtual) func(px reg.Register, disp int, km reg.Register) reg.VecVirtual {
	return func(px reg.Register, disp int, km reg.Register) reg.VecVirtual {
		a := ZMM()
		m0 := Mem{Base: px, Disp: disp}
		m1 := Mem{Base: px, Index: d1, Scale: 1, Disp: disp}
		m2 := Mem{Base: px, Index: d2, Scale: 1, Disp: disp}
		ms := []Mem{m0, m1, m2}[:k]
		if km == nil {
			VMOVUPS(m0, a)
		} else {
			VMOVAPS(ninf, a)
			VMOVUPS(m0, km, a)
		}
		for _, m := range ms[1:] {
			poolMaxNaN(a, m, km)
		}
		return a
	}
}

// poolCols emits the window columns' maximum of 16 outputs from the rows'
// maxima V0, V1 (and V2 at s = 2, k = 3): at s = 2 the even and odd
// columns of V0:V1 (VPERMI2PS) and the next even ones (VALIGND with V2);
// at s = 1 V0:V1 shifted by one and two columns. It returns the register
// holding the outputs (V0's own at s = 1).
func poolCols(k, s int, v0, v1, v2, idxE, idxO reg.VecVirtual) reg.VecVirtual {
	var c0, c1, c2 reg.VecVirtual
	if s == 2 {
		c0, c1 = ZMM(), ZMM()
		VMOVAPS(idxE, c0)
		VPERMI2PS(v1, v0, c0)
		VMOVAPS(idxO, c1)
		VPERMI2PS(v1, v0, c1)
		if k == 3 {
			c2 = ZMM()
			VALIGND(Imm(1), c0, v2, c2) // evens 1 … 15, then V2's column 0
		}
	} else {
		c0, c1, c2 = v0, ZMM(), ZMM()
		VALIGND(Imm(1), v0, v1, c1) // columns c+1 …
		VALIGND(Imm(2), v0, v1, c2) // columns c+2 …
	}
	poolMaxNaN(c0, c1, nil)
	if k == 3 {
		poolMaxNaN(c0, c2, nil)
	}
	return c0
}

// poolPlaneEnd emits the end of a plane's rows: x and y advanced by xgap
// and ygap floats, and the next plane if any (to label plane).
func poolPlaneEnd(pxr, pyr reg.Register, plane string) {
	xs := Load(Param("xgap"), GP64())
	ys := Load(Param("ygap"), GP64())
	SHLQ(Imm(2), xs)
	SHLQ(Imm(2), ys)
	ADDQ(xs, pxr)
	ADDQ(ys, pyr)
	DECQ(NewParamAddr("planes", 0))
	JNZ(LabelRef(plane))
}

// poolShortRows emits func name(planes, rows, n int, x *float32, d1, d2,
// rowstep, xgap, w int, y *float32, ygap, lpad, masks int): poolRows'
// pool for rows of n ≤ 16 outputs, one masked step a row with the lane
// masks the same for every row, computed by the caller: masks holds the
// first 16 columns' (V0) in bits 0–15, the next 16's (V1) in 16–31, the
// next 16's (V2, s = 2) in 32–47 and the store's in 48–63 (w is not
// used). A loop of its own for each of: V1 (and V2) not read (−Inf), V1
// read and V2 not, both read.
func poolShortRows(name string, k, s int) {
	TEXT(name, NOSPLIT, "func(planes, rows, n int, x *float32, d1, d2, rowstep, xgap, w int, y *float32, ygap, lpad, masks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s pools planes·rows output rows of n ≤ 16 outputs, %d×%d windows at stride %d, as the poolRows kernels, with the lane masks given (masks: V0, V1, V2, store, 16 bits each).", name, k, k, s))
	pxr := Load(Param("x"), GP64())
	pyr := Load(Param("y"), GP64())
	d1 := Load(Param("d1"), GP64())
	d2 := Load(Param("d2"), GP64())
	lpad := Load(Param("lpad"), GP64())
	rstep := Load(Param("rowstep"), GP64())
	nb := Load(Param("n"), GP64())
	SHLQ(Imm(2), d1)
	SHLQ(Imm(2), d2)
	SHLQ(Imm(2), lpad)
	SHLQ(Imm(2), rstep)
	SHLQ(Imm(2), nb)
	SUBQ(lpad, pxr)
	ninf, idxE, idxO := poolConsts(name, s)
	masks := GP64()
	Load(Param("masks"), masks)
	km0, km1, km2, kms := K(), K(), K(), K()
	KMOVW(masks.As32(), km0) // the low 16 bits
	SHRQ(Imm(16), masks)
	KMOVW(masks.As32(), km1)
	SHRQ(Imm(16), masks)
	KMOVW(masks.As32(), km2)
	SHRQ(Imm(16), masks)
	KMOVW(masks.As32(), kms)
	rowsMax := poolRowsMax(k, d1, d2, ninf)
	CMPQ(NewParamAddr("planes", 0), Imm(0))
	JLE(LabelRef(name + "_done"))
	// nv: the column blocks read (1 to s+1); a loop for each.
	loop := func(nv int) {
		l := fmt.Sprintf("%s_v%d", name, nv)
		Label(l + "_plane")
		rows := Load(Param("rows"), GP64())
		TESTQ(rows, rows)
		JZ(LabelRef(l + "_planeend"))
		Label(l + "_row")
		v := []reg.VecVirtual{rowsMax(pxr, 0, km0), ninf, ninf}
		if nv > 1 {
			v[1] = rowsMax(pxr, 64, km1)
		}
		if nv > 2 {
			v[2] = rowsMax(pxr, 128, km2)
		}
		c0 := poolCols(k, s, v[0], v[1], v[2], idxE, idxO)
		VMOVUPS(c0, kms, Mem{Base: pyr})
		ADDQ(rstep, pxr)
		ADDQ(nb, pyr)
		DECQ(rows)
		JNZ(LabelRef(l + "_row"))
		Label(l + "_planeend")
		poolPlaneEnd(pxr, pyr, l+"_plane")
		JMP(LabelRef(name + "_done"))
	}
	KORTESTW(km1, km1)
	JZ(LabelRef(fmt.Sprintf("%s_v1_plane", name)))
	if s == 2 {
		KORTESTW(km2, km2)
		JZ(LabelRef(fmt.Sprintf("%s_v2_plane", name)))
		loop(3)
	}
	loop(2)
	loop(1)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// poolRows emits func name(planes, rows, n int, x *float32, d1, d2,
// rowstep, xgap int, y *float32, ygap, lpad, k0 int): a k×k max pool at
// stride s (k = 2 or 3 at s = 2, k = 3 at s = 1; no dilation) of whole
// output rows with AVX-512, no row buffer. Output row after output row
// (x advanced by rowstep floats, y by n; after each plane's rows by xgap
// and ygap more), output j < n of the row is the maximum over the window
// rows x, x + d1 (and x + d2) and columns c < k (input column s·j + c −
// lpad; columns outside [0, w) count as −Inf, lane masks): the rows'
// maximum first (maxNaN(maxNaN(r0, r1), r2), as a copy and two maxAVX2
// passes; a window row in the padding is given as a repeated row, which
// maxNaN returns the same bits for), then the columns' (maxNaN(maxNaN(c0,
// c1), c2), as maxWin3S2AVX2 and max3AVX2), so every lane has the bits
// of the row path's and the gapped blocks' SIMD head. At s = 2 sixteen
// outputs a step from 33 input columns: the rows' maxima of columns [c,
// c+16) (V0, kept from the step before), [c+16, c+32) (V1) and [c+32,
// c+48) (V2, the next step's V0); even and odd columns of V0:V1 by
// VPERMI2PS, the next even ones by VALIGND of the evens and V2. At s = 1
// sixteen outputs from 18 columns: V0, V1 (the next V0) and V0:V1
// shifted by one and two columns (VALIGND). Steps whose columns are all
// inside the row run unmasked; the last ones mask their loads (masked-off
// columns −Inf, memory beyond them not read) and the store. w is the
// row's width (its valid columns: w + lpad from x − lpad on); k0 is the
// first V0's lane mask (columns lpad … min(16, needed, w + lpad)).
func poolRows(name string, k, s int) {
	TEXT(name, NOSPLIT, "func(planes, rows, n int, x *float32, d1, d2, rowstep, xgap, w int, y *float32, ygap, lpad, k0 int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s pools planes·rows output rows of n outputs, %d×%d windows at stride %d (maxNaN order of the row path), from window rows x, x+d1, x+d2 of w floats (columns shifted by lpad, outside [0, w) −Inf); k0 is the first 16 columns' lane mask.", name, k, k, s))
	pxr := Load(Param("x"), GP64())
	pyr := Load(Param("y"), GP64())
	d1 := Load(Param("d1"), GP64())
	d2 := Load(Param("d2"), GP64())
	lpad := Load(Param("lpad"), GP64())
	SHLQ(Imm(2), d1)
	SHLQ(Imm(2), d2)
	SHLQ(Imm(2), lpad)
	SUBQ(lpad, pxr) // column −lpad (masked off in the first step)
	ninf, idxE, idxO := poolConsts(name, s)
	need := func(r reg.GPVirtual) { // columns the r outputs read
		if s == 2 {
			ADDQ(r, r)
		}
		if k-s > 0 {
			ADDQ(U32(k-s), r)
		}
	}
	rowsMax := poolRowsMax(k, d1, d2, ninf)
	// step: 16 outputs to py (masked by ks or not) from V0, V1 (and V2);
	// the next V0 is V2 (s = 2) or V1.
	step := func(v0, v1, v2 reg.VecVirtual, py reg.GPVirtual, ks reg.Register) {
		c0 := poolCols(k, s, v0, v1, v2, idxE, idxO)
		if ks == nil {
			VMOVUPS(c0, Mem{Base: py})
		} else {
			VMOVUPS(c0, ks, Mem{Base: py})
		}
		if s == 2 {
			VMOVAPS(v2, v0)
		} else {
			VMOVAPS(v1, v0)
		}
	}
	colBytes := 64 * s // input bytes a step advances
	CMPQ(NewParamAddr("planes", 0), Imm(0))
	JLE(LabelRef(name + "_done"))
	Label(name + "_plane")
	rows := Load(Param("rows"), GP64())
	TESTQ(rows, rows)
	JZ(LabelRef(name + "_planeend"))
	Label(name + "_row")
	px, py, r, rem := GP64(), GP64(), GP64(), GP64()
	MOVQ(pxr, px)
	MOVQ(pyr, py)
	Load(Param("n"), r)
	Load(Param("w"), rem)
	ADDQ(NewParamAddr("lpad", 88), rem) // rem: valid columns from px on
	// pf (s = 2): the next output row's two new rows (one run of 2·w
	// floats after the last window row), prefetched 5 lines a step (more
	// than the 4 lines the step reads of a row, so that the steps cover
	// the run).
	var pf reg.GPVirtual
	prefetch := func() {}
	if s == 2 {
		pf = GP64()
		LEAQ(Mem{Base: px, Index: d2, Scale: 1}, pf)
		ADDQ(NewParamAddr("w", 64), pf)
		ADDQ(NewParamAddr("w", 64), pf)
		ADDQ(NewParamAddr("w", 64), pf)
		ADDQ(NewParamAddr("w", 64), pf)
		prefetch = func() {
			for d := 0; d < 320; d += 64 {
				PREFETCHT0(Mem{Base: pf, Disp: d})
			}
			ADDQ(U32(320), pf)
		}
	}
	kf, k0 := K(), GP64()
	Load(Param("k0"), k0)
	KMOVW(k0.As32(), kf)
	v0 := ZMM()
	c0 := rowsMax(px, 0, kf)
	VMOVAPS(c0, v0)
	// Unmasked steps: 16 outputs and the columns the step loads, [c+16,
	// c+16·(s+1)), inside the row.
	Label(name + "_fast")
	CMPQ(r, Imm(16))
	JL(LabelRef(name + "_tail"))
	CMPQ(rem, Imm(uint64(16*(s+1))))
	JL(LabelRef(name + "_tail"))
	prefetch()
	v1 := rowsMax(px, 64, nil)
	var v2 reg.VecVirtual
	if s == 2 {
		v2 = rowsMax(px, 128, nil)
	}
	step(v0, v1, v2, py, nil)
	ADDQ(U32(colBytes), px)
	ADDQ(Imm(64), py)
	SUBQ(Imm(16), r)
	SUBQ(Imm(uint64(16*s)), rem)
	JMP(LabelRef(name + "_fast"))
	// Masked steps: columns [c+16, c+16+need) with need = min(columns
	// read, rem) − 16 (< 16·s here), outputs min(r, 16).
	Label(name + "_tail")
	TESTQ(r, r)
	JLE(LabelRef(name + "_rowend"))
	nd, tmp := GP64(), GP64()
	MOVQ(r, nd)
	need(nd)
	CMPQ(nd, rem)
	CMOVQGT(rem, nd)
	SUBQ(Imm(16), nd)
	XORQ(tmp, tmp)
	CMPQ(nd, Imm(0))
	CMOVQLT(tmp, nd)
	MOVL(U32(0xffffffff), tmp.As32())
	BZHIL(nd.As32(), tmp.As32(), nd.As32())
	k1, k2, ks := K(), K(), K()
	KMOVW(nd.As32(), k1)
	if s == 2 {
		SHRL(Imm(16), nd.As32())
		KMOVW(nd.As32(), k2)
	}
	BZHIL(r.As32(), tmp.As32(), nd.As32())
	KMOVW(nd.As32(), ks)
	prefetch()
	w1 := rowsMax(px, 64, k1)
	var w2 reg.VecVirtual
	if s == 2 {
		// V2: −Inf when no column of it is read (rows of up to 32
		// columns).
		w2 = ZMM()
		VMOVAPS(ninf, w2)
		KORTESTW(k2, k2)
		JZ(LabelRef(name + "_nov2"))
		w2m := rowsMax(px, 128, k2)
		VMOVAPS(w2m, w2)
		Label(name + "_nov2")
	}
	step(v0, w1, w2, py, ks)
	ADDQ(U32(colBytes), px)
	ADDQ(Imm(64), py)
	SUBQ(Imm(16), r)
	SUBQ(Imm(uint64(16*s)), rem)
	JMP(LabelRef(name + "_tail"))
	Label(name + "_rowend")
	rs := Load(Param("rowstep"), GP64())
	SHLQ(Imm(2), rs)
	ADDQ(rs, pxr)
	nb := Load(Param("n"), GP64())
	SHLQ(Imm(2), nb)
	ADDQ(nb, pyr)
	DECQ(rows)
	JNZ(LabelRef(name + "_row"))
	Label(name + "_planeend")
	poolPlaneEnd(pxr, pyr, name+"_plane")
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// rowsKernel emits func name(kc int, a *float32, lda int, b *float32,
// c *float32, ldc int, add int, bias *float32, relu int, mask int): the
// first mr rows and nv·16 columns of a 12×32 AVX-512 tile whose A rows
// are read in place (row i at a + i·lda floats, kc values each; the
// pixels of an NHWC activation, their channels contiguous) and whose B
// is a packed panel (kc rows of 32 floats, of which the first nv·16 are
// read): C's element (i, j) is the chain of FMAs of A's row i and B's
// column j in k order from zero, then C added (add != 0) or bias[j]
// (not nil: a bias per column, an NHWC convolution's per channel), then
// ReLU (relu 1) or ReLU6 (relu 2), stored in rows ldc floats apart. The
// last of the nv registers a row loads and stores only the lanes set in
// mask (C's last columns; the other registers all 16).
//
// With tab, the signature is func(kc int, a *float32, lda int, tab *int,
// b *float32, c *float32, ldc int, add int, bias *float32, relu int, mask
// int): step k reads A's elements at byte offset tab[2k] from each row's
// start and B's row of 32 at byte offset tab[2k+1] from b (a grouped
// convolution's (channel, tap) pairs on NHWC activations, in im2col's
// order).
func rowsKernel(name string, mr, nv int, tab bool) {
	sig := "func(kc int, a *float32, lda int, b *float32, c *float32, ldc int, add int, bias *float32, relu int, mask int)"
	doc := "A's rows in place (lda apart) and a packed B panel 32 wide"
	if tab {
		sig = "func(kc int, a *float32, lda int, tab *int, b *float32, c *float32, ldc int, add int, bias *float32, relu int, mask int)"
		doc = "A's rows (lda apart) and B's rows of 32 at the byte offsets of tab's pairs"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes %d rows and %d columns of C from %s, adding C or a bias per column, then ReLU if asked; the last register of a row stores the lanes of mask only.", name, mr, 16*nv, doc))
	kc := Load(Param("kc"), GP64())
	pa := Load(Param("a"), GP64())
	lda := Load(Param("lda"), GP64())
	pb := Load(Param("b"), GP64())
	var pt reg.Register
	if tab {
		pt = Load(Param("tab"), GP64())
	}
	SHLQ(Imm(2), lda)
	// Rows 4q … 4q+3 from base[q]: base, +lda, +2·lda, +3·lda.
	lda3 := GP64()
	LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	base := []reg.Register{pa}
	for q := 1; q*4 < mr; q++ {
		r := GP64()
		LEAQ(Mem{Base: base[q-1], Index: lda, Scale: 4}, r)
		base = append(base, r)
	}
	row := func(i int) Mem { return rowmem.At(base[i/4], lda, lda3, i) }
	acc, bv := newTile(mr, nv, func() reg.VecVirtual { return ZMM() }, func(r reg.VecVirtual) { VXORPS(r, r, r) })
	TESTQ(kc, kc)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	bm := Mem{Base: pb}
	if tab {
		// This step's rows from base[q] + tab[2k], B's from b + tab[2k+1].
		ao, bo := GP64(), GP64()
		MOVQ(Mem{Base: pt}, ao)
		MOVQ(Mem{Base: pt, Disp: 8}, bo)
		at := make([]reg.Register, len(base))
		for q := range base {
			r := GP64()
			LEAQ(Mem{Base: base[q], Index: ao, Scale: 1}, r)
			at[q] = r
		}
		row = func(i int) Mem { return rowmem.At(at[i/4], lda, lda3, i) }
		bm = Mem{Base: pb, Index: bo, Scale: 1}
	}
	for j := 0; j < nv; j++ {
		VMOVUPS(bm.Offset(64*j), bv[j])
	}
	for i := 0; i < mr; i++ {
		t := ZMM()
		VBROADCASTSS(row(i), t)
		for j := 0; j < nv; j++ {
			VFMADD231PS(bv[j], t, acc[i][j])
		}
	}
	if tab {
		ADDQ(Imm(16), pt)
	} else {
		for _, r := range base {
			ADDQ(Imm(4), r)
		}
		ADDQ(Imm(128), pb)
	}
	DECQ(kc)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_store")
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(2), ldc)
	mbits := GP64()
	Load(Param("mask"), mbits)
	km := K()
	KMOVW(mbits.As32(), km)
	last := nv - 1
	add := Load(Param("add"), GP64())
	TESTQ(add, add)
	JZ(LabelRef(name + "_bias"))
	{
		r := GP64()
		MOVQ(pc, r)
		t := ZMM()
		for i := 0; i < mr; i++ {
			for j := 0; j < nv; j++ {
				if j == last {
					VMOVUPS_Z(Mem{Base: r, Disp: 64 * j}, km, t)
					VADDPS(t, acc[i][j], acc[i][j])
				} else {
					VADDPS(Mem{Base: r, Disp: 64 * j}, acc[i][j], acc[i][j])
				}
			}
			if i < mr-1 {
				ADDQ(ldc, r)
			}
		}
	}
	JMP(LabelRef(name + "_relu"))

	Label(name + "_bias")
	pbias := Load(Param("bias"), GP64())
	TESTQ(pbias, pbias)
	JZ(LabelRef(name + "_relu"))
	for j := 0; j < nv; j++ {
		t := ZMM()
		if j == last {
			VMOVUPS_Z(Mem{Base: pbias, Disp: 64 * j}, km, t)
		} else {
			VMOVUPS(Mem{Base: pbias, Disp: 64 * j}, t)
		}
		for i := 0; i < mr; i++ {
			VADDPS(t, acc[i][j], acc[i][j])
		}
	}

	tileAct(name, acc, func() reg.VecVirtual { return ZMM() })

	Label(name + "_set")
	for i := 0; i < mr; i++ {
		for j := 0; j < nv; j++ {
			if j == last {
				VMOVUPS(acc[i][j], km, Mem{Base: pc, Disp: 64 * j})
			} else {
				VMOVUPS(acc[i][j], Mem{Base: pc, Disp: 64 * j})
			}
		}
		if i < mr-1 {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()
}

// gapNHWC emits func name(pix int, x *float32, ldx int, s *float64):
// s[l] += float64(x[i·ldx+l]) for l < 4·nv, i < pix, pixel by pixel in
// order (nv registers of 4 float64 sums): the sums of 4·nv channels of an
// image stored channels last, each channel's additions in the order
// gapSum8AVX2 makes them over an NCHW plane.
func gapNHWC(name string, nv int) {
	TEXT(name, NOSPLIT, "func(pix int, x *float32, ldx int, s *float64)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets s[l] += float64(x[i·ldx+l]) for l < %d and i < pix, i in order.", name, 4*nv))
	n := Load(Param("pix"), GP64())
	px := Load(Param("x"), GP64())
	ldx := Load(Param("ldx"), GP64())
	ps := Load(Param("s"), GP64())
	SHLQ(Imm(2), ldx)
	f64Sums(name, n, px, ldx, ps, nv)
}

// suffixRows emits func name(rows, n, ld int, x, b, y *float32): for
// r < rows and i < n, y[r·ld+i] = x[r·ld+i] · b[i] (mul) or + b[i]; n is
// a multiple of 8. One IEEE operation an element: the bits of the Go
// loop.
func suffixRows(name string, mul bool) {
	TEXT(name, NOSPLIT, "func(rows, n, ld int, x, b, y *float32)")
	Pragma("noescape")
	op, sign := VADDPS, "+"
	if mul {
		op, sign = VMULPS, "·"
	}
	Doc(fmt.Sprintf("%s sets y[r·ld+i] = x[r·ld+i] %s b[i] for r < rows, i < n; n is a multiple of 8.", name, sign))
	rows := Load(Param("rows"), GP64())
	n := Load(Param("n"), GP64())
	ld := Load(Param("ld"), GP64())
	px := Load(Param("x"), GP64())
	pb := Load(Param("b"), GP64())
	py := Load(Param("y"), GP64())
	SHLQ(Imm(2), ld)
	SHRQ(Imm(3), n)
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	TESTQ(rows, rows)
	JZ(LabelRef(name + "_done"))
	Label(name + "_row")
	i := GP64()
	XORQ(i, i)
	cnt := GP64()
	MOVQ(n, cnt)
	CMPQ(cnt, Imm(4))
	JB(LabelRef(name + "_one"))
	Label(name + "_four")
	for j := 0; j < 4; j++ {
		t := YMM()
		VMOVUPS(Mem{Base: px, Index: i, Scale: 1, Disp: 32 * j}, t)
		op(Mem{Base: pb, Index: i, Scale: 1, Disp: 32 * j}, t, t)
		VMOVUPS(t, Mem{Base: py, Index: i, Scale: 1, Disp: 32 * j})
	}
	ADDQ(Imm(128), i)
	SUBQ(Imm(4), cnt)
	CMPQ(cnt, Imm(4))
	JAE(LabelRef(name + "_four"))
	TESTQ(cnt, cnt)
	JZ(LabelRef(name + "_next"))
	Label(name + "_one")
	t := YMM()
	VMOVUPS(Mem{Base: px, Index: i, Scale: 1}, t)
	op(Mem{Base: pb, Index: i, Scale: 1}, t, t)
	VMOVUPS(t, Mem{Base: py, Index: i, Scale: 1})
	ADDQ(Imm(32), i)
	DECQ(cnt)
	JNZ(LabelRef(name + "_one"))
	Label(name + "_next")
	ADDQ(ld, px)
	ADDQ(ld, py)
	DECQ(rows)
	JNZ(LabelRef(name + "_row"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// interleave2 emits func interleave2AVX2(blocks int, a, b, y *float32):
// for t < blocks, y[16t+2i] = a[8t+i] and y[16t+2i+1] = b[8t+i], i < 8.
// Unpacks and 128-bit lane swaps: moves only, the same bits.
func interleave2() {
	TEXT("interleave2AVX2", NOSPLIT, "func(blocks int, a, b, y *float32)")
	Pragma("noescape")
	Doc("interleave2AVX2 sets y[16t+2i] = a[8t+i], y[16t+2i+1] = b[8t+i] for t < blocks, i < 8.")
	n := Load(Param("blocks"), GP64())
	pa := Load(Param("a"), GP64())
	pb := Load(Param("b"), GP64())
	py := Load(Param("y"), GP64())
	TESTQ(n, n)
	JZ(LabelRef("interleave2_done"))
	Label("interleave2_loop")
	x, z := YMM(), YMM()
	VMOVUPS(Mem{Base: pa}, x)
	VMOVUPS(Mem{Base: pb}, z)
	lo, hi := YMM(), YMM()
	VUNPCKLPS(z, x, lo) // a0 b0 a1 b1 | a4 b4 a5 b5
	VUNPCKHPS(z, x, hi) // a2 b2 a3 b3 | a6 b6 a7 b7
	first, second := YMM(), YMM()
	VPERM2F128(Imm(0x20), hi, lo, first)
	VPERM2F128(Imm(0x31), hi, lo, second)
	VMOVUPS(first, Mem{Base: py})
	VMOVUPS(second, Mem{Base: py, Disp: 32})
	ADDQ(Imm(32), pa)
	ADDQ(Imm(32), pb)
	ADDQ(Imm(64), py)
	DECQ(n)
	JNZ(LabelRef("interleave2_loop"))
	Label("interleave2_done")
	VZEROUPPER()
	RET()
}

// transpose8 emits func transpose8x8AVX2(tiles int, x *float32, ldx int,
// y *float32, ldy int): for t < tiles, the 8×8 block of x at rows 8t …
// 8t+7 (ldx floats apart), columns 0 … 7 stored transposed into y's rows
// 0 … 7 (ldy floats apart), columns 8t … 8t+7: y[j·ldy + 8t + i] =
// x[(8t+i)·ldx + j]. Unpacks, shuffles and 128-bit lane swaps: moves
// only, the same bits.
func transpose8() {
	TEXT("transpose8x8AVX2", NOSPLIT, "func(tiles int, x *float32, ldx int, y *float32, ldy int)")
	Pragma("noescape")
	Doc("transpose8x8AVX2 sets y[j·ldy+8t+i] = x[(8t+i)·ldx+j] for t < tiles, i, j < 8.")
	n := Load(Param("tiles"), GP64())
	px := Load(Param("x"), GP64())
	ldx := Load(Param("ldx"), GP64())
	py := Load(Param("y"), GP64())
	ldy := Load(Param("ldy"), GP64())
	SHLQ(Imm(2), ldx)
	SHLQ(Imm(2), ldy)
	ldx3, ldy3, x4, y4 := GP64(), GP64(), GP64(), GP64()
	LEAQ(Mem{Base: ldx, Index: ldx, Scale: 2}, ldx3)
	LEAQ(Mem{Base: ldy, Index: ldy, Scale: 2}, ldy3)
	TESTQ(n, n)
	JZ(LabelRef("transpose8_done"))
	Label("transpose8_loop")
	LEAQ(Mem{Base: px, Index: ldx, Scale: 4}, x4)
	r := make([]reg.VecVirtual, 8)
	at := rowmem.At
	for i := range r {
		r[i] = YMM()
		base := px
		if i >= 4 {
			base = x4
		}
		VMOVUPS(at(base, ldx, ldx3, i), r[i])
	}
	t := make([]reg.VecVirtual, 8)
	for k := 0; k < 4; k++ {
		t[2*k], t[2*k+1] = YMM(), YMM()
		VUNPCKLPS(r[2*k+1], r[2*k], t[2*k])
		VUNPCKHPS(r[2*k+1], r[2*k], t[2*k+1])
	}
	s := make([]reg.VecVirtual, 8)
	for h := 0; h < 2; h++ { // rows 0–3, then 4–7
		a, b, c, d := t[4*h], t[4*h+1], t[4*h+2], t[4*h+3]
		for k := range 4 {
			s[4*h+k] = YMM()
		}
		VSHUFPS(Imm(0x44), c, a, s[4*h])
		VSHUFPS(Imm(0xEE), c, a, s[4*h+1])
		VSHUFPS(Imm(0x44), d, b, s[4*h+2])
		VSHUFPS(Imm(0xEE), d, b, s[4*h+3])
	}
	LEAQ(Mem{Base: py, Index: ldy, Scale: 4}, y4)
	for k := 0; k < 4; k++ {
		lo, hi := YMM(), YMM()
		VPERM2F128(Imm(0x20), s[4+k], s[k], lo)
		VPERM2F128(Imm(0x31), s[4+k], s[k], hi)
		VMOVUPS(lo, at(py, ldy, ldy3, k))
		VMOVUPS(hi, at(y4, ldy, ldy3, k+4))
	}
	LEAQ(Mem{Base: x4, Index: ldx, Scale: 4}, px)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef("transpose8_loop"))
	Label("transpose8_done")
	VZEROUPPER()
	RET()
}
