// Command dwgen generates the depthwise convolution kernel and the
// copies of the convolutions' packing (split2, gatherRows) of package
// kernels (dwconv_amd64.s and its Go declarations) with avo; run it
// through `go generate ./executor/kernels` (dwconv_amd64.go).
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/onnxconv/onnxconv/executor/kernels/asmgen/rowmem"
)

func main() {
	ConstraintExpr("amd64")
	dwRows("dwRowsAVX2", 8)
	dwRows("dwRowsAVX512", 16)
	split2()
	gatherRows()
	mask := laneMasks()
	copyRows(mask)
	split2Rows(mask)
	gapSum8()
	mulBlocks()
	dwPack()
	dwUnpack()
	dwPix("dwPixAVX2", 8)
	dwPix("dwPixAVX512", 16)
	dwNHWC()
	for _, c := range dwTileKernels {
		dwTile(c.k, c.s, c.rows)
	}
	Generate()
}

// dwRows emits func dwRowsAVX2(rows, blocks int, x *float32, ss int, offs
// *int, w *float32, taps int, bias float32, y *float32, ldy int):
//
//	y[r·ldy + j] = clamp(bias + Σ_t w[t]·x[r·ss + j + offs[t]])
//
// for r < rows and j < 8·blocks, each element one chain of FMAs from the
// bias in tap order (offs, ss and ldy in elements; taps ≥ 1). Four
// independent chains at a time (an FMA's latency is four of its
// issues): the same 8 columns of four rows while four rows are left, then
// four blocks of one row, then one. clamp(v) is VMAXPS with lo then
// VMINPS with hi, v the second source (Clip's loop: lo where v < lo, hi
// where v > hi, NaN kept): the identity, bits included, for lo = −Inf and
// hi = +Inf; Relu's max(v, 0) for lo = 0, hi = +Inf.
//
// lanes is 8 (YMM, AVX2) or 16 (ZMM, AVX-512F: dwRowsAVX512, blocks of
// 16 columns); each lane's chain is the same FMAs either way, so the
// results are bit-identical.
func dwRows(name string, lanes int) {
	TEXT(name, NOSPLIT, "func(rows, blocks int, x *float32, ss int, offs *int, w *float32, taps int, bias, lo, hi float32, y *float32, ldy int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets y[r·ldy+j] = min(max(bias + Σ_t w[t]·x[r·ss+j+offs[t]], lo), hi) for r < rows, j < %d·blocks (FMAs in tap order; the clamp as Clip's).", name, lanes))
	vec := func() reg.VecVirtual {
		if lanes == 16 {
			return ZMM()
		}
		return YMM()
	}
	vb := 4 * lanes // bytes of a vector
	lbl := ""       // labels of the AVX-512 copy are prefixed
	if lanes != 8 {
		lbl = fmt.Sprintf("w%d_", lanes)
	}
	rows := Load(Param("rows"), GP64())
	px := Load(Param("x"), GP64())
	ss := Load(Param("ss"), GP64())
	poffs := Load(Param("offs"), GP64())
	pw := Load(Param("w"), GP64())
	py := Load(Param("y"), GP64())
	ldy := Load(Param("ldy"), GP64())
	taps := NewParamAddr("taps", 48)
	blocks := NewParamAddr("blocks", 8)
	SHLQ(Imm(2), ss)
	SHLQ(Imm(2), ldy)
	bv, lo, hi := vec(), vec(), vec()
	VBROADCASTSS(NewParamAddr("bias", 56), bv)
	VBROADCASTSS(NewParamAddr("lo", 60), lo)
	VBROADCASTSS(NewParamAddr("hi", 64), hi)
	clamp := func(v reg.VecVirtual) {
		VMAXPS(v, lo, v) // lo > v ? lo : v
		VMINPS(v, hi, v) // hi < v ? hi : v
	}
	bc, xb, yb := GP64(), GP64(), GP64()
	t, a, b := GP64(), GP64(), GP64()
	wv := vec()
	acc := []reg.VecVirtual{vec(), vec(), vec(), vec()}

	// Four rows at a time: block by block, the block of each row.
	Label(lbl + "dw_rows4")
	CMPQ(rows, Imm(4))
	JL(LabelRef(lbl + "dw_row"))
	MOVQ(blocks, bc)
	MOVQ(px, xb)
	MOVQ(py, yb)
	Label(lbl + "dw_r4_block")
	for _, v := range acc {
		VMOVAPS(bv, v)
	}
	XORQ(t, t)
	Label(lbl + "dw_r4_tap")
	MOVQ(Mem{Base: poffs, Index: t, Scale: 8}, a)
	LEAQ(Mem{Base: xb, Index: a, Scale: 4}, a)
	LEAQ(Mem{Base: a, Index: ss, Scale: 2}, b)
	VBROADCASTSS(Mem{Base: pw, Index: t, Scale: 4}, wv)
	VFMADD231PS(Mem{Base: a}, wv, acc[0])
	VFMADD231PS(Mem{Base: a, Index: ss, Scale: 1}, wv, acc[1])
	VFMADD231PS(Mem{Base: b}, wv, acc[2])
	VFMADD231PS(Mem{Base: b, Index: ss, Scale: 1}, wv, acc[3])
	INCQ(t)
	CMPQ(t, taps)
	JNE(LabelRef(lbl + "dw_r4_tap"))
	for _, v := range acc {
		clamp(v)
	}
	LEAQ(Mem{Base: yb, Index: ldy, Scale: 2}, b)
	VMOVUPS(acc[0], Mem{Base: yb})
	VMOVUPS(acc[1], Mem{Base: yb, Index: ldy, Scale: 1})
	VMOVUPS(acc[2], Mem{Base: b})
	VMOVUPS(acc[3], Mem{Base: b, Index: ldy, Scale: 1})
	ADDQ(U32(vb), xb)
	ADDQ(U32(vb), yb)
	DECQ(bc)
	JNZ(LabelRef(lbl + "dw_r4_block"))
	LEAQ(Mem{Base: px, Index: ss, Scale: 4}, px)
	LEAQ(Mem{Base: py, Index: ldy, Scale: 4}, py)
	SUBQ(Imm(4), rows)
	JMP(LabelRef(lbl + "dw_rows4"))

	// The rows left, one at a time.
	Label(lbl + "dw_row")
	TESTQ(rows, rows)
	JZ(LabelRef(lbl + "dw_done"))
	MOVQ(blocks, bc)
	MOVQ(px, xb)
	MOVQ(py, yb)

	Label(lbl + "dw_quad")
	CMPQ(bc, Imm(4))
	JL(LabelRef(lbl + "dw_single"))
	for _, v := range acc {
		VMOVAPS(bv, v)
	}
	XORQ(t, t)
	Label(lbl + "dw_quad_tap")
	MOVQ(Mem{Base: poffs, Index: t, Scale: 8}, a)
	VBROADCASTSS(Mem{Base: pw, Index: t, Scale: 4}, wv)
	for i, v := range acc {
		VFMADD231PS(Mem{Base: xb, Index: a, Scale: 4, Disp: vb * i}, wv, v)
	}
	INCQ(t)
	CMPQ(t, taps)
	JNE(LabelRef(lbl + "dw_quad_tap"))
	for i, v := range acc {
		clamp(v)
		VMOVUPS(v, Mem{Base: yb, Disp: vb * i})
	}
	ADDQ(U32(4*vb), xb)
	ADDQ(U32(4*vb), yb)
	SUBQ(Imm(4), bc)
	JMP(LabelRef(lbl + "dw_quad"))

	Label(lbl + "dw_single")
	TESTQ(bc, bc)
	JZ(LabelRef(lbl + "dw_next_row"))
	VMOVAPS(bv, acc[0])
	XORQ(t, t)
	Label(lbl + "dw_single_tap")
	MOVQ(Mem{Base: poffs, Index: t, Scale: 8}, a)
	VBROADCASTSS(Mem{Base: pw, Index: t, Scale: 4}, wv)
	VFMADD231PS(Mem{Base: xb, Index: a, Scale: 4}, wv, acc[0])
	INCQ(t)
	CMPQ(t, taps)
	JNE(LabelRef(lbl + "dw_single_tap"))
	clamp(acc[0])
	VMOVUPS(acc[0], Mem{Base: yb})
	ADDQ(U32(vb), xb)
	ADDQ(U32(vb), yb)
	DECQ(bc)
	JMP(LabelRef(lbl + "dw_single"))

	Label(lbl + "dw_next_row")
	ADDQ(ss, px)
	ADDQ(ldy, py)
	DECQ(rows)
	JMP(LabelRef(lbl + "dw_row"))
	Label(lbl + "dw_done")
	VZEROUPPER()
	RET()
}

// split2 emits func split2AVX2(n int, src, ev, od *float32): ev[j] =
// src[2j], od[j] = src[2j+1] for j < n, n a multiple of 8 (16 source
// elements a step: two loads, two in-lane shuffles, two lane permutes).
func split2() {
	TEXT("split2AVX2", NOSPLIT, "func(n int, src, ev, od *float32)")
	Pragma("noescape")
	Doc("split2AVX2 sets ev[j] = src[2j] and od[j] = src[2j+1] for j < n; n is a multiple of 8.")
	n := Load(Param("n"), GP64())
	ps := Load(Param("src"), GP64())
	pe := Load(Param("ev"), GP64())
	po := Load(Param("od"), GP64())
	SHRQ(Imm(3), n)
	JZ(LabelRef("split2_done"))
	Label("split2_loop")
	a, b, e, o := YMM(), YMM(), YMM(), YMM()
	VMOVUPS(Mem{Base: ps}, a)
	VMOVUPS(Mem{Base: ps, Disp: 32}, b)
	VSHUFPS(Imm(0x88), b, a, e)
	VSHUFPS(Imm(0xDD), b, a, o)
	VPERMPD(Imm(0xD8), e, e)
	VPERMPD(Imm(0xD8), o, o)
	VMOVUPS(e, Mem{Base: pe})
	VMOVUPS(o, Mem{Base: po})
	ADDQ(Imm(64), ps)
	ADDQ(Imm(32), pe)
	ADDQ(Imm(32), po)
	DECQ(n)
	JNZ(LabelRef("split2_loop"))
	Label("split2_done")
	VZEROUPPER()
	RET()
}

// gatherRows emits func gatherRowsAVX2(k int, offs *int, src *float32, w8
// int, dst *float32): dst[r·8·w8 + j] = src[offs[r] + j] for r < k, j <
// 8·w8 (a convolution's B panels: one run of each im2col row per panel).
func gatherRows() {
	TEXT("gatherRowsAVX2", NOSPLIT, "func(k int, offs *int, src *float32, w8 int, dst *float32)")
	Pragma("noescape")
	Doc("gatherRowsAVX2 sets dst[r·8·w8+j] = src[offs[r]+j] for r < k, j < 8·w8.")
	k := Load(Param("k"), GP64())
	po := Load(Param("offs"), GP64())
	ps := Load(Param("src"), GP64())
	pd := Load(Param("dst"), GP64())
	TESTQ(k, k)
	JZ(LabelRef("gather_done"))
	Label("gather_row")
	s, b := GP64(), GP64()
	MOVQ(Mem{Base: po}, s)
	LEAQ(Mem{Base: ps, Index: s, Scale: 4}, s)
	Load(Param("w8"), b)
	Label("gather_block")
	v := YMM()
	VMOVUPS(Mem{Base: s}, v)
	VMOVUPS(v, Mem{Base: pd})
	ADDQ(Imm(32), s)
	ADDQ(Imm(32), pd)
	DECQ(b)
	JNZ(LabelRef("gather_block"))
	ADDQ(Imm(8), po)
	DECQ(k)
	JNZ(LabelRef("gather_row"))
	Label("gather_done")
	VZEROUPPER()
	RET()
}

// laneMasks emits dwLaneMask: eight all-ones 32-bit lanes, then eight
// zero ones; the 8 lanes at byte 4·(8−k) are the mask of the first k.
func laneMasks() Mem {
	m := GLOBL("dwLaneMask", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		v := uint32(0)
		if i < 8 {
			v = 0xffffffff
		}
		DATA(4*i, U32(v))
	}
	return m
}

// loadMask loads the mask of the first k lanes (k a register, 0–8) into
// v; k is clobbered.
func loadMask(mask Mem, k reg.GPVirtual, v reg.VecVirtual) {
	NEGQ(k)
	base := GP64()
	LEAQ(mask, base) // an SB address takes no index register
	VMOVDQU(Mem{Base: base, Index: k, Scale: 4, Disp: 32}, v)
}

// copyRows emits func copyRowsAVX2(h, w int, src, dst *float32, pitch
// int): dst[r·pitch + j] = src[r·w + j] for r < h, j < w (w ≥ 1; the
// last w mod 8 of each row with masked loads and stores, so nothing
// outside the rows is read or written): a depthwise layer's input
// channel into its zero-padded plane, one call per channel.
func copyRows(mask Mem) {
	TEXT("copyRowsAVX2", NOSPLIT, "func(h, w int, src, dst *float32, pitch int)")
	Pragma("noescape")
	Doc("copyRowsAVX2 sets dst[r·pitch+j] = src[r·w+j] for r < h, j < w (w ≥ 1).")
	h := Load(Param("h"), GP64())
	w := Load(Param("w"), GP64())
	ps := Load(Param("src"), GP64())
	pd := Load(Param("dst"), GP64())
	pitch := Load(Param("pitch"), GP64())
	SHLQ(Imm(2), pitch)
	tail, m := GP64(), YMM()
	MOVQ(w, tail)
	ANDQ(Imm(7), tail)
	k := GP64()
	MOVQ(tail, k)
	loadMask(mask, k, m)
	SHRQ(Imm(3), w)
	TESTQ(h, h)
	JZ(LabelRef("copyrows_done"))
	Label("copyrows_row")
	b, d := GP64(), GP64()
	MOVQ(w, b)
	MOVQ(pd, d)
	v := YMM()
	TESTQ(b, b)
	JZ(LabelRef("copyrows_tail"))
	Label("copyrows_block")
	VMOVUPS(Mem{Base: ps}, v)
	VMOVUPS(v, Mem{Base: d})
	ADDQ(Imm(32), ps)
	ADDQ(Imm(32), d)
	DECQ(b)
	JNZ(LabelRef("copyrows_block"))
	Label("copyrows_tail")
	TESTQ(tail, tail)
	JZ(LabelRef("copyrows_next"))
	VMASKMOVPS(Mem{Base: ps}, m, v)
	VMASKMOVPS(v, m, Mem{Base: d})
	LEAQ(Mem{Base: ps, Index: tail, Scale: 4}, ps)
	Label("copyrows_next")
	ADDQ(pitch, pd)
	DECQ(h)
	JNZ(LabelRef("copyrows_row"))
	Label("copyrows_done")
	VZEROUPPER()
	RET()
}

// split2Rows emits func split2RowsAVX2(h, w int, src, ev, od *float32,
// pitch int): ev[r·pitch + j] = src[r·w + 2j] and od[r·pitch + j] =
// src[r·w + 2j + 1] for r < h and the j inside the row (w ≥ 1): a
// stride-2 depthwise layer's input channel into the two column phases
// of its zero-padded plane, one call per channel. 16 source elements a
// step as split2AVX2; the last w mod 16 with masked loads and stores.
func split2Rows(mask Mem) {
	TEXT("split2RowsAVX2", NOSPLIT, "func(h, w int, src, ev, od *float32, pitch int)")
	Pragma("noescape")
	Doc("split2RowsAVX2 sets ev[r·pitch+j] = src[r·w+2j], od[r·pitch+j] = src[r·w+2j+1] for r < h and 2j, 2j+1 < w (w ≥ 1).")
	h := Load(Param("h"), GP64())
	w := Load(Param("w"), GP64())
	ps := Load(Param("src"), GP64())
	pe := Load(Param("ev"), GP64())
	po := Load(Param("od"), GP64())
	pitch := Load(Param("pitch"), GP64())
	SHLQ(Imm(2), pitch)
	// The tail's masks: loads of min(t, 8) and max(t−8, 0) lanes, stores
	// of ⌈t/2⌉ evens and ⌊t/2⌋ odds, t = w mod 16.
	tail := GP64()
	MOVQ(w, tail)
	ANDQ(Imm(15), tail)
	ma, mb, me, mo := YMM(), YMM(), YMM(), YMM()
	k, e8 := GP64(), GP64()
	MOVQ(U32(8), e8)
	MOVQ(tail, k)
	CMPQ(k, e8)
	CMOVQGT(e8, k)
	loadMask(mask, k, ma)
	MOVQ(tail, k)
	SUBQ(Imm(8), k)
	XORQ(e8, e8)
	CMPQ(k, e8)
	CMOVQLT(e8, k)
	loadMask(mask, k, mb)
	MOVQ(tail, k)
	INCQ(k)
	SHRQ(Imm(1), k)
	loadMask(mask, k, me)
	MOVQ(tail, k)
	SHRQ(Imm(1), k)
	loadMask(mask, k, mo)
	SHRQ(Imm(4), w)
	TESTQ(h, h)
	JZ(LabelRef("split2rows_done"))
	Label("split2rows_row")
	b, de, do := GP64(), GP64(), GP64()
	MOVQ(w, b)
	MOVQ(pe, de)
	MOVQ(po, do)
	a, c, e, o := YMM(), YMM(), YMM(), YMM()
	TESTQ(b, b)
	JZ(LabelRef("split2rows_tail"))
	Label("split2rows_block")
	VMOVUPS(Mem{Base: ps}, a)
	VMOVUPS(Mem{Base: ps, Disp: 32}, c)
	VSHUFPS(Imm(0x88), c, a, e)
	VSHUFPS(Imm(0xDD), c, a, o)
	VPERMPD(Imm(0xD8), e, e)
	VPERMPD(Imm(0xD8), o, o)
	VMOVUPS(e, Mem{Base: de})
	VMOVUPS(o, Mem{Base: do})
	ADDQ(Imm(64), ps)
	ADDQ(Imm(32), de)
	ADDQ(Imm(32), do)
	DECQ(b)
	JNZ(LabelRef("split2rows_block"))
	Label("split2rows_tail")
	TESTQ(tail, tail)
	JZ(LabelRef("split2rows_next"))
	VMASKMOVPS(Mem{Base: ps}, ma, a)
	VMASKMOVPS(Mem{Base: ps, Disp: 32}, mb, c)
	VSHUFPS(Imm(0x88), c, a, e)
	VSHUFPS(Imm(0xDD), c, a, o)
	VPERMPD(Imm(0xD8), e, e)
	VPERMPD(Imm(0xD8), o, o)
	VMASKMOVPS(e, me, Mem{Base: de})
	VMASKMOVPS(o, mo, Mem{Base: do})
	LEAQ(Mem{Base: ps, Index: tail, Scale: 4}, ps)
	Label("split2rows_next")
	ADDQ(pitch, pe)
	ADDQ(pitch, po)
	DECQ(h)
	JNZ(LabelRef("split2rows_row"))
	Label("split2rows_done")
	VZEROUPPER()
	RET()
}

// gapSum8 emits func gapSum8AVX2(steps int, x *float32, stride int, s
// *float64): s[c] = Σ_{j < 4·steps} float64(x[c·stride + j]) for c < 8,
// each channel's sum one chain of float64 additions from 0 in j order
// (GlobalAveragePool's, bit for bit). The sum of each channel is a lane:
// channels 0–3 in one register, 4–7 in another; a step loads 4 columns
// of each channel (converted to float64), transposes each 4×4 block so
// that a register holds one column of 4 channels, and adds the 4
// columns in order.
func gapSum8() {
	TEXT("gapSum8AVX2", NOSPLIT, "func(steps int, x *float32, stride int, s *float64)")
	Pragma("noescape")
	Doc("gapSum8AVX2 sets s[c] = Σ_{j < 4·steps} float64(x[c·stride+j]) for c < 8 (additions in j order from 0); steps ≥ 1.")
	steps := Load(Param("steps"), GP64())
	px := Load(Param("x"), GP64())
	st := Load(Param("stride"), GP64())
	ps := Load(Param("s"), GP64())
	SHLQ(Imm(2), st)
	st3, p4 := GP64(), GP64()
	LEAQ(Mem{Base: st, Index: st, Scale: 2}, st3)
	LEAQ(Mem{Base: px, Index: st, Scale: 4}, p4)
	acc := []reg.VecVirtual{YMM(), YMM()}
	for _, a := range acc {
		VXORPD(a, a, a)
	}
	Label("gap8_loop")
	for g, base := range []reg.Register{px, p4} {
		rows := []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
		addrs := []Mem{{Base: base}, {Base: base, Index: st, Scale: 1}, {Base: base, Index: st, Scale: 2}, {Base: base, Index: st3, Scale: 1}}
		for i, r := range rows {
			VCVTPS2PD(addrs[i], r)
		}
		t := []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
		VUNPCKLPD(rows[1], rows[0], t[0])          // (A0 B0 A2 B2)
		VUNPCKHPD(rows[1], rows[0], t[1])          // (A1 B1 A3 B3)
		VUNPCKLPD(rows[3], rows[2], t[2])          // (C0 D0 C2 D2)
		VUNPCKHPD(rows[3], rows[2], t[3])          // (C1 D1 C3 D3)
		VPERM2F128(Imm(0x20), t[2], t[0], rows[0]) // column 0
		VPERM2F128(Imm(0x20), t[3], t[1], rows[1]) // column 1
		VPERM2F128(Imm(0x31), t[2], t[0], rows[2]) // column 2
		VPERM2F128(Imm(0x31), t[3], t[1], rows[3]) // column 3
		for _, r := range rows {
			VADDPD(r, acc[g], acc[g])
		}
	}
	ADDQ(Imm(16), px)
	ADDQ(Imm(16), p4)
	DECQ(steps)
	JNZ(LabelRef("gap8_loop"))
	VMOVUPD(acc[0], Mem{Base: ps})
	VMOVUPD(acc[1], Mem{Base: ps, Disp: 32})
	VZEROUPPER()
	RET()
}

// mulBlocks emits func mulBlocksAVX512(blocks, inner int, x, b, y
// *float32): y[i·inner + j] = x[i·inner + j]·b[i] for i < blocks, j <
// inner (a squeeze-and-excitation block's channel scale, MulBlocks), 16
// lanes a step and the last inner mod 16 under a lane mask (masked loads
// and stores: nothing outside the blocks is read or written). Each
// product is VMULPS with x as the first source, as scaleAVX2's: the same
// bits, NaNs included.
func mulBlocks() {
	TEXT("mulBlocksAVX512", NOSPLIT, "func(blocks, inner int, x, b, y *float32)")
	Pragma("noescape")
	Doc("mulBlocksAVX512 sets y[i·inner+j] = x[i·inner+j]·b[i] for i < blocks, j < inner (AVX-512F; the tail under a lane mask).")
	blocks, inner := Load(Param("blocks"), GP64()), Load(Param("inner"), GP64())
	px, pb, py := Load(Param("x"), GP64()), Load(Param("b"), GP64()), Load(Param("y"), GP64())
	TESTQ(blocks, blocks)
	JZ(LabelRef("mulBlocks_done"))
	// mask = (1 << (inner mod 16)) − 1
	MOVQ(inner, reg.RCX)
	ANDQ(Imm(15), reg.RCX)
	m := GP32()
	MOVL(U32(1), m)
	SHLL(reg.CL, m)
	DECL(m)
	k := K()
	KMOVW(m, k)
	steps := GP64()
	MOVQ(inner, steps)
	SHRQ(Imm(4), steps)
	Label("mulBlocks_block")
	s := ZMM()
	VBROADCASTSS(Mem{Base: pb}, s)
	j := GP64()
	MOVQ(steps, j)
	TESTQ(j, j)
	JZ(LabelRef("mulBlocks_tail"))
	Label("mulBlocks_loop")
	v := ZMM()
	VMOVUPS(Mem{Base: px}, v)
	VMULPS(s, v, v)
	VMOVUPS(v, Mem{Base: py})
	ADDQ(Imm(64), px)
	ADDQ(Imm(64), py)
	DECQ(j)
	JNZ(LabelRef("mulBlocks_loop"))
	Label("mulBlocks_tail")
	t := ZMM()
	VMOVUPS_Z(Mem{Base: px}, k, t)
	VMULPS(s, t, t)
	VMOVUPS(t, k, Mem{Base: py})
	// advance by inner mod 16 (the mask's width)
	LEAQ(Mem{Base: px, Index: reg.RCX, Scale: 4}, px)
	LEAQ(Mem{Base: py, Index: reg.RCX, Scale: 4}, py)
	ADDQ(Imm(4), pb)
	DECQ(blocks)
	JNZ(LabelRef("mulBlocks_block"))
	Label("mulBlocks_done")
	VZEROUPPER()
	RET()
}

// transpose8 returns the transpose of the 8×8 block r (r[i] lane j →
// out[j] lane i): unpacks, in-lane shuffles, 128-bit lane permutes.
func transpose8(r []reg.VecVirtual) []reg.VecVirtual {
	t := make([]reg.VecVirtual, 8)
	for i := 0; i < 8; i += 2 {
		t[i], t[i+1] = YMM(), YMM()
		VUNPCKLPS(r[i+1], r[i], t[i])   // r_i0 r_{i+1}0 r_i1 r_{i+1}1 | lanes 4,5
		VUNPCKHPS(r[i+1], r[i], t[i+1]) // r_i2 r_{i+1}2 r_i3 r_{i+1}3 | lanes 6,7
	}
	s := make([]reg.VecVirtual, 8)
	for h := 0; h < 8; h += 4 {
		for k := 0; k < 2; k++ {
			a, b := t[h+k], t[h+k+2]
			s[h+2*k], s[h+2*k+1] = YMM(), YMM()
			VSHUFPS(Imm(0x44), b, a, s[h+2*k])   // column 4k′ (+4 in the high lane)
			VSHUFPS(Imm(0xEE), b, a, s[h+2*k+1]) // column 4k′+1
		}
	}
	// s[0..3]: columns 0,1,2,3 (and 4..7 in the high lanes) of rows 0–3;
	// s[4..7] the same of rows 4–7.
	out := make([]reg.VecVirtual, 8)
	for j := 0; j < 4; j++ {
		out[j], out[j+4] = YMM(), YMM()
		VPERM2F128(Imm(0x20), s[4+j], s[j], out[j])
		VPERM2F128(Imm(0x31), s[4+j], s[j], out[j+4])
	}
	return out
}

// dwPack emits func dwPackAVX2(chunks int, src *float32, cs int, idx
// *int, dst *float32): for k < chunks and j < 8, the 8 channels' values
// src[c·cs + 8k + j] (c < 8) as one vector at dst[idx[8k+j]:] — a block
// of 8 planes into the channel-interleaved scratch of the depthwise
// convolution on small planes (and its weights, idx[t] = 8t).
func dwPack() {
	TEXT("dwPackAVX2", NOSPLIT, "func(chunks int, src *float32, cs int, idx *int, dst *float32)")
	Pragma("noescape")
	Doc("dwPackAVX2 sets dst[idx[8k+j]+c] = src[c·cs+8k+j] for k < chunks, j < 8, c < 8.")
	n := Load(Param("chunks"), GP64())
	ps := Load(Param("src"), GP64())
	cs := Load(Param("cs"), GP64())
	pi := Load(Param("idx"), GP64())
	pd := Load(Param("dst"), GP64())
	SHLQ(Imm(2), cs)
	cs3, p4 := GP64(), GP64()
	LEAQ(Mem{Base: cs, Index: cs, Scale: 2}, cs3)
	TESTQ(n, n)
	JZ(LabelRef("dwpack_done"))
	Label("dwpack_loop")
	LEAQ(Mem{Base: ps, Index: cs, Scale: 4}, p4)
	r := make([]reg.VecVirtual, 8)
	for c := range r {
		r[c] = YMM()
		base := reg.Register(ps)
		if c >= 4 {
			base = p4
		}
		switch c % 4 {
		case 0:
			VMOVUPS(Mem{Base: base}, r[c])
		case 1:
			VMOVUPS(Mem{Base: base, Index: cs, Scale: 1}, r[c])
		case 2:
			VMOVUPS(Mem{Base: base, Index: cs, Scale: 2}, r[c])
		case 3:
			VMOVUPS(Mem{Base: base, Index: cs3, Scale: 1}, r[c])
		}
	}
	out := transpose8(r)
	a := GP64()
	for j, v := range out {
		MOVQ(Mem{Base: pi, Disp: 8 * j}, a)
		VMOVUPS(v, Mem{Base: pd, Index: a, Scale: 4})
	}
	ADDQ(Imm(32), ps)
	ADDQ(Imm(64), pi)
	DECQ(n)
	JNZ(LabelRef("dwpack_loop"))
	Label("dwpack_done")
	VZEROUPPER()
	RET()
}

// dwUnpack emits func dwUnpackAVX2(chunks int, src, dst *float32, cs,
// sp int): dst[c·cs + 8k + j] = src[(8k+j)·sp + c] for k < chunks, j, c
// < 8: 8 channels of the channel-interleaved output block (sp channels
// a pixel) back into their 8 planes.
func dwUnpack() {
	TEXT("dwUnpackAVX2", NOSPLIT, "func(chunks int, src, dst *float32, cs, sp int)")
	Pragma("noescape")
	Doc("dwUnpackAVX2 sets dst[c·cs+8k+j] = src[(8k+j)·sp+c] for k < chunks, j < 8, c < 8.")
	n := Load(Param("chunks"), GP64())
	ps := Load(Param("src"), GP64())
	pd := Load(Param("dst"), GP64())
	cs := Load(Param("cs"), GP64())
	sp := Load(Param("sp"), GP64())
	SHLQ(Imm(2), cs)
	SHLQ(Imm(2), sp)
	cs3, sp3, p4 := GP64(), GP64(), GP64()
	LEAQ(Mem{Base: cs, Index: cs, Scale: 2}, cs3)
	LEAQ(Mem{Base: sp, Index: sp, Scale: 2}, sp3)
	TESTQ(n, n)
	JZ(LabelRef("dwunpack_done"))
	Label("dwunpack_loop")
	r := make([]reg.VecVirtual, 8)
	LEAQ(Mem{Base: ps, Index: sp, Scale: 4}, p4)
	for j := range r {
		r[j] = YMM()
		base := reg.Register(ps)
		if j >= 4 {
			base = p4
		}
		switch j % 4 {
		case 0:
			VMOVUPS(Mem{Base: base}, r[j])
		case 1:
			VMOVUPS(Mem{Base: base, Index: sp, Scale: 1}, r[j])
		case 2:
			VMOVUPS(Mem{Base: base, Index: sp, Scale: 2}, r[j])
		case 3:
			VMOVUPS(Mem{Base: base, Index: sp3, Scale: 1}, r[j])
		}
	}
	out := transpose8(r)
	LEAQ(Mem{Base: pd, Index: cs, Scale: 4}, p4)
	for c, v := range out {
		base := reg.Register(pd)
		if c >= 4 {
			base = p4
		}
		switch c % 4 {
		case 0:
			VMOVUPS(v, Mem{Base: base})
		case 1:
			VMOVUPS(v, Mem{Base: base, Index: cs, Scale: 1})
		case 2:
			VMOVUPS(v, Mem{Base: base, Index: cs, Scale: 2})
		case 3:
			VMOVUPS(v, Mem{Base: base, Index: cs3, Scale: 1})
		}
	}
	LEAQ(Mem{Base: ps, Index: sp, Scale: 8}, ps)
	ADDQ(Imm(32), pd)
	DECQ(n)
	JNZ(LabelRef("dwunpack_loop"))
	Label("dwunpack_done")
	VZEROUPPER()
	RET()
}

// dwPixAcc is the pixels (independent chains) dwPix computes at a time:
// an FMA's latency is four of its issues at two a cycle.
const dwPixAcc = 8

// dwPix emits func dwPixAVX2(groups int, x *float32, pix, offs *int, w
// *float32, taps int, bias *float32, lo, hi float32, y *float32): for p <
// 8·groups, y[L·p:L·p+L] = clamp(bias + Σ_t w[L·t:L·t+L]·x[pix[p]+offs[t]:][:L])
// — L = lanes channels in a vector, each lane's chain the FMAs of
// dwRowsAVX2 in the same tap order from the same bias, and its clamp
// (VMAXPS with lo, VMINPS with hi): the same bits. Eight pixels (eight
// chains) at a time.
func dwPix(name string, lanes int) {
	TEXT(name, NOSPLIT, "func(groups int, x *float32, pix, offs *int, w *float32, taps int, bias *float32, lo, hi float32, y *float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets y[%d·p+c] = min(max(bias[c] + Σ_t w[%d·t+c]·x[pix[p]+offs[t]+c], lo), hi) for p < %d·groups, c < %d (FMAs in tap order).", name, lanes, lanes, dwPixAcc, lanes))
	vec := func() reg.VecVirtual {
		if lanes == 16 {
			return ZMM()
		}
		return YMM()
	}
	vb := 4 * lanes
	lbl := fmt.Sprintf("dwpix%d_", lanes)
	pp := Load(Param("pix"), GP64())
	py := Load(Param("y"), GP64())
	bv, lo, hi := vec(), vec(), vec()
	{
		pb := Load(Param("bias"), GP64())
		VMOVUPS(Mem{Base: pb}, bv)
	}
	VBROADCASTSS(NewParamAddr("lo", 56), lo)
	VBROADCASTSS(NewParamAddr("hi", 60), hi)
	Label(lbl + "group")
	a := make([]reg.GPVirtual, dwPixAcc)
	{
		px := Load(Param("x"), GP64())
		for i := range a {
			a[i] = GP64()
			MOVQ(Mem{Base: pp, Disp: 8 * i}, a[i])
			LEAQ(Mem{Base: px, Index: a[i], Scale: 4}, a[i])
		}
	}
	acc := make([]reg.VecVirtual, dwPixAcc)
	for i := range acc {
		acc[i] = vec()
		VMOVAPS(bv, acc[i])
	}
	// t runs from −8·taps to 0 (bytes of the offsets): the tap's offset
	// at offs_end + t, its weights at w_end + t·lanes/2.
	t, po, pw, wv, off := GP64(), GP64(), GP64(), vec(), GP64()
	Load(Param("taps"), t)
	Load(Param("w"), pw)
	Load(Param("offs"), po)
	SHLQ(Imm(3), t)
	ADDQ(t, po)
	LEAQ(Mem{Base: pw, Index: t, Scale: uint8(lanes / 2)}, pw)
	NEGQ(t)
	Label(lbl + "tap")
	MOVQ(Mem{Base: po, Index: t, Scale: 1}, off)
	VMOVUPS(Mem{Base: pw, Index: t, Scale: uint8(lanes / 2)}, wv)
	for i, v := range acc {
		VFMADD231PS(Mem{Base: a[i], Index: off, Scale: 4}, wv, v)
	}
	ADDQ(Imm(8), t)
	JNZ(LabelRef(lbl + "tap"))
	for i, v := range acc {
		VMAXPS(v, lo, v)
		VMINPS(v, hi, v)
		VMOVUPS(v, Mem{Base: py, Disp: vb * i})
	}
	ADDQ(U32(8*dwPixAcc), pp)
	ADDQ(U32(vb*dwPixAcc), py)
	DECQ(NewParamAddr("groups", 0))
	JNZ(LabelRef(lbl + "group"))
	VZEROUPPER()
	RET()
}

// dwTileKernels are the tile kernels dwTile emits: k×k taps, stride s,
// rows output rows a tile (as many chains as the registers left by the
// k·k weights allow).
var dwTileKernels = []struct{ k, s, rows int }{{3, 1, 8}, {3, 2, 8}, {5, 1, 6}, {5, 2, 6}}

// dwTile emits func dwTile<k>s<s>AVX512(rowBlocks, colBlocks int, x
// *float32, pw int, w *float32, bias, lo, hi float32, y *float32, ldy
// int): a k×k, stride-s depthwise convolution's output plane from its
// zero-padded phase plane x (dwGeom's layout: padded row i, column phase
// q at (i·s+q)·pw), in tiles of R = rows output rows by 16 columns:
//
//	y[o·ldy + j] = clamp(bias + Σ_{kh, kw} w[kh·k+kw]·x[((o·s+kh)·s + kw mod s)·pw + kw div s + j])
//
// for o < R·rowBlocks, j < 16·colBlocks. The k·k weights stay in
// registers; each input vector (padded row, tap column) is loaded once a
// tile and multiplied into every output row of the tile that reads it
// (up to ⌈k/s⌉), so a tile loads (R−1)·s+k rows of k vectors instead of
// R·k·k. Each output is still one chain of FMAs from the bias in tap
// order (kh, kw) — the input rows in order, the columns in order within
// a row — and dwRows' clamp (VMAXPS lo, VMINPS hi): the same bits as
// dwRowsAVX2/AVX512.
func dwTile(k, s, rows int) {
	name := fmt.Sprintf("dwTile%ds%dAVX512", k, s)
	TEXT(name, NOSPLIT, "func(rowBlocks, colBlocks int, x *float32, pw int, w *float32, bias, lo, hi float32, y *float32, ldy int)")
	Pragma("noescape")
	at := "(o+kh)·pw + kw + j"
	if s != 1 {
		at = fmt.Sprintf("((o·%d+kh)·%d + kw mod %d)·pw + kw div %d + j", s, s, s, s)
	}
	Doc(fmt.Sprintf("%s sets y[o·ldy+j] = min(max(bias + Σ_{kh,kw} w[kh·%d+kw]·x[%s], lo), hi) for o < %d·rowBlocks, j < 16·colBlocks (FMAs in tap order).", name, k, at, rows))
	lbl := fmt.Sprintf("dwtile%ds%d_", k, s)
	rb := Load(Param("rowBlocks"), GP64())
	px := Load(Param("x"), GP64())
	pwb := Load(Param("pw"), GP64())
	py := Load(Param("y"), GP64())
	ldy := Load(Param("ldy"), GP64())
	SHLQ(Imm(2), pwb)
	SHLQ(Imm(2), ldy)
	unit := pwb // bytes between padded rows
	if s == 2 {
		unit = GP64()
		LEAQ(Mem{Base: pwb, Index: pwb, Scale: 1}, unit)
	}
	wv := make([]reg.VecVirtual, k*k)
	{
		pw := Load(Param("w"), GP64())
		for t := range wv {
			wv[t] = ZMM()
			VBROADCASTSS(Mem{Base: pw, Disp: 4 * t}, wv[t])
		}
	}
	acc := make([]reg.VecVirtual, rows)
	for r := range acc {
		acc[r] = ZMM()
	}
	xb, yb, cb, p := GP64(), GP64(), GP64(), GP64()
	TESTQ(rb, rb)
	JZ(LabelRef(lbl + "done"))
	Label(lbl + "rows")
	MOVQ(px, xb)
	MOVQ(py, yb)
	Load(Param("colBlocks"), cb)
	TESTQ(cb, cb)
	JZ(LabelRef(lbl + "next_rows"))
	Label(lbl + "cols")
	for _, a := range acc {
		VBROADCASTSS(NewParamAddr("bias", 40), a)
	}
	MOVQ(xb, p)
	units := (rows-1)*s + k
	for u := 0; u < units; u++ {
		for kw := 0; kw < k; kw++ {
			m := Mem{Base: p, Disp: 4 * (kw / s)}
			if kw%s == 1 {
				m.Index, m.Scale = pwb, 1
			}
			var outs []int
			for r := range acc {
				if kh := u - r*s; kh >= 0 && kh < k {
					outs = append(outs, r)
				}
			}
			if len(outs) == 1 {
				r := outs[0]
				VFMADD231PS(m, wv[(u-r*s)*k+kw], acc[r])
				continue
			}
			v := ZMM()
			VMOVUPS(m, v)
			for _, r := range outs {
				VFMADD231PS(v, wv[(u-r*s)*k+kw], acc[r])
			}
		}
		if u+1 < units {
			ADDQ(unit, p)
		}
	}
	t := ZMM()
	VBROADCASTSS(NewParamAddr("lo", 44), t)
	for _, a := range acc {
		VMAXPS(a, t, a) // lo > a ? lo : a
	}
	VBROADCASTSS(NewParamAddr("hi", 48), t)
	for _, a := range acc {
		VMINPS(a, t, a) // hi < a ? hi : a
	}
	MOVQ(yb, p)
	for r, a := range acc {
		VMOVUPS(a, Mem{Base: p})
		if r+1 < rows {
			ADDQ(ldy, p)
		}
	}
	ADDQ(Imm(64), xb)
	ADDQ(Imm(64), yb)
	DECQ(cb)
	JNZ(LabelRef(lbl + "cols"))
	Label(lbl + "next_rows")
	for i := 0; i < rows*s; i++ {
		ADDQ(unit, px)
	}
	for i := 0; i < rows; i++ {
		ADDQ(ldy, py)
	}
	DECQ(rb)
	JNZ(LabelRef(lbl + "rows"))
	Label(lbl + "done")
	VZEROUPPER()
	RET()
}

// dwNHWC emits func dwNHWCAVX512(n, blocks int, x *float32, sx int, taps
// *int, ntaps int, w *float32, bias *float32, lo, hi float32, y *float32,
// sy int, mask int): a run of n output pixels of a depthwise convolution
// on NHWC activations, sx floats apart in the input and sy in the output,
// channel blocks of 16 (the last, b = blocks − 1, only the lanes set in
// mask):
//
//	y[p·sy + c] = clamp(bias[c] + Σ_t w[taps[2t+1] + c]·x[p·sx + taps[2t] + c])
//
// for p < n, c < 16·blocks: each element one chain of FMAs from the
// bias in the table's tap order, then dwRows' clamp (VMAXPS lo, VMINPS
// hi). Channel blocks outside, pixels inside (the blocks' weights stay
// in L1): the full blocks but the last four at a time, four, two or one
// pixels at a time; the rest one at a time, eight, four, two or one
// pixels at a time — 4 to 16 independent chains but for a run's last
// pixels (an FMA's latency is four of its issues at two a cycle).
// Masked-off lanes are neither loaded nor stored.
func dwNHWC() {
	const name = "dwNHWCAVX512"
	TEXT(name, NOSPLIT, "func(n, blocks int, x *float32, sx int, taps *int, ntaps int, w *float32, bias *float32, lo, hi float32, y *float32, sy int, mask int)")
	Pragma("noescape")
	Doc(name + " sets y[p·sy+c] = min(max(bias[c] + Σ_t w[taps[2t+1]+c]·x[p·sx+taps[2t]+c], lo), hi) for p < n, c < 16·blocks (the last block's lanes in mask only; FMAs in tap order).")
	lo, hi := ZMM(), ZMM()
	VBROADCASTSS(NewParamAddr("lo", 64), lo)
	VBROADCASTSS(NewParamAddr("hi", 68), hi)
	cb := GP64() // the block's byte offset
	XORQ(cb, cb)
	// blocks counts the full blocks left (all but the last).
	DECQ(NewParamAddr("blocks", 8))
	Label(name + "_b4")
	CMPQ(NewParamAddr("blocks", 8), Imm(4))
	JL(LabelRef(name + "_b1"))
	dwNHWCBlocks(name+"_b4", cb, 4, nil, []int{4, 2, 1}, lo, hi)
	ADDQ(U32(256), cb)
	SUBQ(Imm(4), NewParamAddr("blocks", 8))
	JMP(LabelRef(name + "_b4"))
	Label(name + "_b1")
	CMPQ(NewParamAddr("blocks", 8), Imm(0))
	JE(LabelRef(name + "_last"))
	dwNHWCBlocks(name+"_b1", cb, 1, nil, []int{8, 4, 2, 1}, lo, hi)
	ADDQ(Imm(64), cb)
	DECQ(NewParamAddr("blocks", 8))
	JMP(LabelRef(name + "_b1"))
	Label(name + "_last")
	k := K()
	{
		m := GP64()
		Load(Param("mask"), m)
		KMOVW(m.As32(), k)
	}
	dwNHWCBlocks(name+"_bm", cb, 1, k, []int{8, 4, 2, 1}, lo, hi)
	VZEROUPPER()
	RET()
}

// dwNHWCBlocks emits dwNHWC's loop over the run's n pixels for nb
// channel blocks from byte offset cb on (masked by k when not nil), gs[i]
// pixels at a time while that many are left.
func dwNHWCBlocks(lbl string, cb reg.GPVirtual, nb int, k reg.Register, gs []int, lo, hi reg.VecVirtual) {
	load := func(m Mem, v reg.VecVirtual) {
		if k != nil {
			VMOVUPS_Z(m, k, v)
		} else {
			VMOVUPS(m, v)
		}
	}
	bv := make([]reg.VecVirtual, nb)
	{
		pb := Load(Param("bias"), GP64())
		for b := range bv {
			bv[b] = ZMM()
			load(Mem{Base: pb, Index: cb, Scale: 1, Disp: 64 * b}, bv[b])
		}
	}
	xp := Load(Param("x"), GP64())
	ADDQ(cb, xp)
	yp := Load(Param("y"), GP64())
	ADDQ(cb, yp)
	j := Load(Param("n"), GP64())
	sx := Load(Param("sx"), GP64())
	SHLQ(Imm(2), sx)
	sx3 := GP64()
	LEAQ(Mem{Base: sx, Index: sx, Scale: 2}, sx3)
	for _, g := range gs {
		gl := fmt.Sprintf("%s_g%d", lbl, g)
		Label(gl)
		CMPQ(j, Imm(uint64(g)))
		JL(LabelRef(gl + "_done"))
		acc := make([][]reg.VecVirtual, g)
		for i := range acc {
			acc[i] = make([]reg.VecVirtual, nb)
			for b := range acc[i] {
				acc[i][b] = ZMM()
				VMOVAPS(bv[b], acc[i][b])
			}
		}
		tp := Load(Param("taps"), GP64())
		tn := Load(Param("ntaps"), GP64())
		pw := Load(Param("w"), GP64())
		ADDQ(cb, pw)
		Label(gl + "_tap")
		xo, wo := GP64(), GP64()
		MOVQ(Mem{Base: tp}, xo)
		MOVQ(Mem{Base: tp, Disp: 8}, wo)
		wv := make([]reg.VecVirtual, nb)
		for b := range wv {
			wv[b] = ZMM()
			load(Mem{Base: pw, Index: wo, Scale: 4, Disp: 64 * b}, wv[b])
		}
		b0 := GP64()
		LEAQ(Mem{Base: xp, Index: xo, Scale: 4}, b0)
		var b4 reg.GPVirtual
		if g > 4 {
			b4 = GP64()
			LEAQ(Mem{Base: b0, Index: sx, Scale: 4}, b4)
		}
		for i := range acc {
			base := b0
			if i >= 4 {
				base = b4
			}
			for b := range acc[i] {
				m := rowmem.At(base, sx, sx3, i)
				m.Disp = 64 * b
				if k != nil {
					VFMADD231PS(m, wv[b], k, acc[i][b])
				} else {
					VFMADD231PS(m, wv[b], acc[i][b])
				}
			}
		}
		ADDQ(Imm(16), tp)
		DECQ(tn)
		JNZ(LabelRef(gl + "_tap"))
		sy := Load(Param("sy"), GP64())
		SHLQ(Imm(2), sy)
		for i := range acc {
			for b, v := range acc[i] {
				VMAXPS(v, lo, v)
				VMINPS(v, hi, v)
				if k != nil {
					VMOVUPS(v, k, Mem{Base: yp, Disp: 64 * b})
				} else {
					VMOVUPS(v, Mem{Base: yp, Disp: 64 * b})
				}
			}
			ADDQ(sy, yp)
		}
		for range g {
			ADDQ(sx, xp)
		}
		SUBQ(Imm(uint64(g)), j)
		JMP(LabelRef(gl))
		Label(gl + "_done")
	}
}
