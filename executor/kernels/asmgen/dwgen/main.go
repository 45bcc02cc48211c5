// Command dwgen generates the depthwise convolution kernel of package
// kernels (dwconv_amd64.s and its Go declaration) with avo; run it
// through `go generate ./executor/kernels` (dwconv_amd64.go).
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64")
	dwRows()
	Generate()
}

// dwRows emits func dwRowsAVX2(rows, blocks int, x *float32, ss int, offs
// *int, w *float32, taps int, bias float32, y *float32, ldy int):
//
//	y[r·ldy + j] = bias + Σ_t w[t]·x[r·ss + j + offs[t]]
//
// for r < rows and j < 8·blocks, each element one chain of FMAs from the
// bias in tap order (offs, ss and ldy in elements; taps ≥ 1).
// Four blocks of 8 at a time (four independent chains), then one.
func dwRows() {
	TEXT("dwRowsAVX2", NOSPLIT, "func(rows, blocks int, x *float32, ss int, offs *int, w *float32, taps int, bias float32, y *float32, ldy int)")
	Pragma("noescape")
	Doc("dwRowsAVX2 sets y[r·ldy+j] = bias + Σ_t w[t]·x[r·ss+j+offs[t]] for r < rows, j < 8·blocks (FMAs in tap order).")
	rows := Load(Param("rows"), GP64())
	px := Load(Param("x"), GP64())
	ss := Load(Param("ss"), GP64())
	poffs := Load(Param("offs"), GP64())
	pw := Load(Param("w"), GP64())
	taps := Load(Param("taps"), GP64())
	py := Load(Param("y"), GP64())
	ldy := Load(Param("ldy"), GP64())
	SHLQ(Imm(2), ss)
	SHLQ(Imm(2), ldy)
	bv := YMM()
	VBROADCASTSS(NewParamAddr("bias", 56), bv)
	TESTQ(rows, rows)
	JZ(LabelRef("dw_done"))

	Label("dw_row")
	bc := GP64()
	MOVQ(NewParamAddr("blocks", 8), bc)
	xb, yb := GP64(), GP64()
	MOVQ(px, xb)
	MOVQ(py, yb)

	Label("dw_quad")
	CMPQ(bc, Imm(4))
	JL(LabelRef("dw_single"))
	acc := []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
	for _, a := range acc {
		VMOVAPS(bv, a)
	}
	t, off := GP64(), GP64()
	XORQ(t, t)
	Label("dw_quad_tap")
	MOVQ(Mem{Base: poffs, Index: t, Scale: 8}, off)
	wv := YMM()
	VBROADCASTSS(Mem{Base: pw, Index: t, Scale: 4}, wv)
	for i, a := range acc {
		VFMADD231PS(Mem{Base: xb, Index: off, Scale: 4, Disp: 32 * i}, wv, a)
	}
	INCQ(t)
	CMPQ(t, taps)
	JNE(LabelRef("dw_quad_tap"))
	for i, a := range acc {
		VMOVUPS(a, Mem{Base: yb, Disp: 32 * i})
	}
	ADDQ(Imm(128), xb)
	ADDQ(Imm(128), yb)
	SUBQ(Imm(4), bc)
	JMP(LabelRef("dw_quad"))

	Label("dw_single")
	TESTQ(bc, bc)
	JZ(LabelRef("dw_next_row"))
	a := YMM()
	VMOVAPS(bv, a)
	XORQ(t, t)
	Label("dw_single_tap")
	MOVQ(Mem{Base: poffs, Index: t, Scale: 8}, off)
	VBROADCASTSS(Mem{Base: pw, Index: t, Scale: 4}, wv)
	VFMADD231PS(Mem{Base: xb, Index: off, Scale: 4}, wv, a)
	INCQ(t)
	CMPQ(t, taps)
	JNE(LabelRef("dw_single_tap"))
	VMOVUPS(a, Mem{Base: yb})
	ADDQ(Imm(32), xb)
	ADDQ(Imm(32), yb)
	DECQ(bc)
	JMP(LabelRef("dw_single"))

	Label("dw_next_row")
	ADDQ(ss, px)
	ADDQ(ldy, py)
	DECQ(rows)
	JNZ(LabelRef("dw_row"))
	Label("dw_done")
	VZEROUPPER()
	RET()
}
