// Command asmgen generates the SGEMM micro-kernels of package kernels
// (sgemm_amd64.s and its Go declarations) with avo. It is a module of its
// own so that the onnxconv module does not depend on avo; run it through
// `go generate ./executor/kernels`.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64")
	// AVX-512: 12 rows × 32 columns (two zmm per row), 24 accumulators.
	kernel("kernelAVX512", 12, 2, 16, func(i int) reg.VecVirtual { return ZMM() })
	// AVX2+FMA: 6 rows × 16 columns (two ymm per row), 12 accumulators.
	kernel("kernelAVX2", 6, 2, 8, func(i int) reg.VecVirtual { return YMM() })
	axpy()
	vmax()
	relu()
	Generate()
}

// axpy emits func axpyAVX2(n int, a float32, x, y *float32): y[i] += a·x[i]
// for i < n, n a multiple of 8 (the caller does the tail), with FMA.
func axpy() {
	TEXT("axpyAVX2", NOSPLIT, "func(n int, a float32, x, y *float32)")
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
	ADDQ(Imm(32), px)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef("axpy_loop"))
	Label("axpy_done")
	VZEROUPPER()
	RET()
}

// vmax emits func maxAVX2(n int, x, y *float32): y[i] = max(y[i], x[i])
// for i < n, n a multiple of 8, NaN in either operand giving NaN (as Go's
// max): VMAXPS returns its second source when either is NaN, so the
// lanes where y is NaN are blended back from y.
func vmax() {
	TEXT("maxAVX2", NOSPLIT, "func(n int, x, y *float32)")
	Doc("maxAVX2 sets y[i] = max(y[i], x[i]) for i < n (NaN wins); n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	SHRQ(Imm(3), n)
	JZ(LabelRef("max_done"))
	Label("max_loop")
	yv, m, nan := YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: py}, yv)
	VMAXPS(Mem{Base: px}, yv, m) // m = max(y, x); x where either is NaN
	VCMPPS(Imm(3), yv, yv, nan)  // unordered: y is NaN
	VBLENDVPS(nan, yv, m, m)     // m = nan ? y : m
	VMOVUPS(m, Mem{Base: py})
	ADDQ(Imm(32), px)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef("max_loop"))
	Label("max_done")
	VZEROUPPER()
	RET()
}

// relu emits func reluAVX2(n int, x, y *float32): y[i] = max(x[i], 0)
// for i < n, n a multiple of 8; VMAXPS returns its second source (x)
// when either is NaN, so NaN stays NaN.
func relu() {
	TEXT("reluAVX2", NOSPLIT, "func(n int, x, y *float32)")
	Doc("reluAVX2 sets y[i] = max(x[i], 0) for i < n (NaN stays NaN); n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	px := Load(Param("x"), GP64())
	py := Load(Param("y"), GP64())
	zero := YMM()
	VXORPS(zero, zero, zero)
	SHRQ(Imm(3), n)
	JZ(LabelRef("relu_done"))
	Label("relu_loop")
	t := YMM()
	VMAXPS(Mem{Base: px}, zero, t) // max(0, x); x where either is NaN
	VMOVUPS(t, Mem{Base: py})
	ADDQ(Imm(32), px)
	ADDQ(Imm(32), py)
	DECQ(n)
	JNZ(LabelRef("relu_loop"))
	Label("relu_done")
	VZEROUPPER()
	RET()
}

// kernel emits func name(kc int, a, b, c *float32, ldc int, add int):
// the mr×(nv·w) tile of C at c (row stride ldc elements) gets the product
// of the packed panels a (kc steps of mr values) and b (kc steps of nv·w
// values); add != 0 adds it to C, otherwise it replaces C. Every element
// is one chain of FMAs from zero in k order, then stored or added once.
func kernel(name string, mr, nv, w int, vec func(int) reg.VecVirtual) {
	TEXT(name, NOSPLIT, "func(kc int, a, b, c *float32, ldc int, add int)")
	Doc(fmt.Sprintf("%s computes a %d×%d SGEMM tile from packed panels.", name, mr, nv*w))
	kc := Load(Param("kc"), GP64())
	pa := Load(Param("a"), GP64())
	pb := Load(Param("b"), GP64())
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	add := Load(Param("add"), GP64())
	SHLQ(Imm(2), ldc)

	acc := make([][]reg.VecVirtual, mr)
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, nv)
		for j := range acc[i] {
			acc[i][j] = vec(0)
			VXORPS(acc[i][j], acc[i][j], acc[i][j])
		}
	}
	bv := make([]reg.VecVirtual, nv)
	for j := range bv {
		bv[j] = vec(0)
	}
	TESTQ(kc, kc)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	for j := 0; j < nv; j++ {
		VMOVUPS(Mem{Base: pb, Disp: 4 * w * j}, bv[j])
	}
	for i := 0; i < mr; i++ {
		t := vec(0)
		VBROADCASTSS(Mem{Base: pa, Disp: 4 * i}, t)
		for j := 0; j < nv; j++ {
			VFMADD231PS(bv[j], t, acc[i][j])
		}
	}
	ADDQ(Imm(uint64(4*mr)), pa)
	ADDQ(Imm(uint64(4*nv*w)), pb)
	DECQ(kc)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_store")
	TESTQ(add, add)
	JZ(LabelRef(name + "_set"))
	row := GP64()
	MOVQ(pc, row)
	for i := 0; i < mr; i++ {
		for j := 0; j < nv; j++ {
			VADDPS(Mem{Base: row, Disp: 4 * w * j}, acc[i][j], acc[i][j])
			VMOVUPS(acc[i][j], Mem{Base: row, Disp: 4 * w * j})
		}
		if i < mr-1 {
			ADDQ(ldc, row)
		}
	}
	VZEROUPPER()
	RET()

	Label(name + "_set")
	for i := 0; i < mr; i++ {
		for j := 0; j < nv; j++ {
			VMOVUPS(acc[i][j], Mem{Base: pc, Disp: 4 * w * j})
		}
		if i < mr-1 {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()
}
