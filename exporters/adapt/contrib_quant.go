package adapt

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// blockOpset is the ai.onnx opset of blockwise DequantizeLinear and of
// INT4/UINT4 tensors.
const blockOpset = 21

// blockQuant is a constant matrix quantized in blocks along its rows:
// rows × cols integers q, blocks of block values along each row, one
// scale (and zero point) per block. It is what MatMulNBits (rows N, cols
// K), GatherBlockQuantized (rows V, cols D) and a blockwise
// DequantizeLinear of a 2-D constant hold, decoded so that each form can
// be written from it exactly.
type blockQuant struct {
	rows, cols, block, bits int
	// signed: q (and zp) are two's complement values; else unsigned.
	signed bool
	q      []int64 // [rows, cols]
	zp     []int64 // [rows, blocks], nil when none (zero: the type's default)
	scales []float64
	sdt    canonical.DataType // the scales' type (the output's)
}

func (b *blockQuant) blocks() int { return (b.cols + b.block - 1) / b.block }

// mid is the default zero point of unsigned bits-bit values (ONNX
// Runtime's for MatMulNBits and GatherBlockQuantized).
func (b *blockQuant) mid() int64 { return 1 << (b.bits - 1) }

// signedNoZero makes an unsigned block matrix without zero points signed
// (q - mid): the same values, in the form DequantizeLinear takes without a
// zero point.
func (b *blockQuant) signedNoZero() {
	if b.zp != nil || b.signed {
		return
	}
	for i := range b.q {
		b.q[i] -= b.mid()
	}
	b.signed = true
}

// value is the dequantized element (r, c).
func (b *blockQuant) value(r, c int) float64 {
	bi := r*b.blocks() + c/b.block
	z := int64(0)
	if b.zp != nil {
		z = b.zp[bi]
	} else if !b.signed {
		z = b.mid()
	}
	return float64(b.q[r*b.cols+c]-z) * b.scales[bi]
}

// intType is the integer type of q for a DequantizeLinear.
func (b *blockQuant) intType() (canonical.DataType, error) {
	switch {
	case b.bits == 4 && b.signed:
		return canonical.Int4, nil
	case b.bits == 4:
		return canonical.Uint4, nil
	case b.bits == 8 && b.signed:
		return canonical.Int8, nil
	case b.bits == 8:
		return canonical.Uint8, nil
	}
	return 0, fmt.Errorf("%d-bit weights have no DequantizeLinear type here (4 or 8 bits)", b.bits)
}

// transposed returns v [r, c] as [c, r].
func transposed[T any](v []T, r, c int) []T {
	out := make([]T, len(v))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = v[i*c+j]
		}
	}
	return out
}

// dequantize writes the blockwise DequantizeLinear (opset 21) of the
// matrix: as it is ([rows, cols], axis 1) or transposed ([cols, rows],
// axis 0, the form MatMul takes a MatMulNBits weight in).
func (b *blockQuant) dequantize(e *build.Editor, t bool) (*canonical.Value, error) {
	b.signedNoZero()
	dt, err := b.intType()
	if err != nil {
		return nil, err
	}
	q, s, zp := b.q, b.scales, b.zp
	qd, sd := []int64{int64(b.rows), int64(b.cols)}, []int64{int64(b.rows), int64(b.blocks())}
	axis := int64(1)
	if t {
		q, s = transposed(q, b.rows, b.cols), transposed(s, b.rows, b.blocks())
		if zp != nil {
			zp = transposed(zp, b.rows, b.blocks())
		}
		qd, sd, axis = []int64{qd[1], qd[0]}, []int64{sd[1], sd[0]}, 0
	}
	ins := []*canonical.Value{
		e.Const("q", canonical.NewTensor("", dt, qd, packBits(q, b.bits))),
		e.Const("scales", canonical.NumberTensor("", b.sdt, sd, s)),
	}
	if zp != nil {
		ins = append(ins, e.Const("zero_points", canonical.NewTensor("", dt, sd, packBits(zp, b.bits))))
	}
	return e.Op("DequantizeLinear", ins, canonical.IntAttr("axis", axis), canonical.IntAttr("block_size", int64(b.block))), nil
}

// floats writes the dequantized matrix as a float initializer of the
// scales' type, as it is or transposed.
func (b *blockQuant) floats(e *build.Editor, t bool) *canonical.Value {
	v := make([]float64, b.rows*b.cols)
	dims := []int64{int64(b.rows), int64(b.cols)}
	for r := 0; r < b.rows; r++ {
		for c := 0; c < b.cols; c++ {
			if t {
				v[c*b.rows+r] = b.value(r, c)
			} else {
				v[r*b.cols+c] = b.value(r, c)
			}
		}
	}
	if t {
		dims = []int64{dims[1], dims[0]}
	}
	return e.Const("dequantized", canonical.NumberTensor("", b.sdt, dims, v))
}

// constInput returns the constant input i of n, or an error naming it.
func constInput(n *canonical.Node, i int, what string) (*canonical.Tensor, error) {
	v := n.Input(i)
	if v == nil || v.Const == nil {
		return nil, fmt.Errorf("input %d (%s) is not a constant", i, what)
	}
	return v.Const, nil
}

// unpackBits returns the bits-bit values of packed bytes, low bits first.
func unpackBits(raw []int64, bits int) []int64 {
	per := 8 / bits
	out := make([]int64, 0, len(raw)*per)
	for _, by := range raw {
		for i := 0; i < per; i++ {
			out = append(out, (by>>(bits*i))&(1<<bits-1))
		}
	}
	return out
}

// scalesOf returns the float values of a scales tensor holding n values.
func scalesOf(t *canonical.Tensor, n int) ([]float64, error) {
	if !canonical.IsFloatType(t.DataType) {
		return nil, fmt.Errorf("scales are %s, not float", canonical.ElemTypeName(t.DataType))
	}
	s, err := t.Float64s()
	if err != nil {
		return nil, fmt.Errorf("reading the scales: %w", err)
	}
	if len(s) != n {
		return nil, fmt.Errorf("scales hold %d values, want %d", len(s), n)
	}
	return s, nil
}

// matMulNBitsWeights decodes the constant weights of a com.microsoft
// MatMulNBits node (B [N, blocks, blob] packed per output column, scales
// [N·blocks], zero points packed the same way per column or absent) as
// rows N × cols K. g_idx and zero points in the scales' type are refused.
func matMulNBitsWeights(n *canonical.Node) (*blockQuant, error) {
	K, N := int(n.AttrInt("K", 0)), int(n.AttrInt("N", 0))
	bits, block := int(n.AttrInt("bits", 4)), int(n.AttrInt("block_size", 0))
	if K <= 0 || N <= 0 || K > 1<<31 || N > 1<<31 || block < 16 || block > 1<<16 || block&(block-1) != 0 || (bits != 2 && bits != 4 && bits != 8) {
		return nil, fmt.Errorf("K %d, N %d, bits %d, block_size %d: want 0 < K, N <= 2^31, bits 2, 4 or 8, block_size a power of 2 in [16, 65536]", K, N, bits, block)
	}
	if n.Input(4) != nil {
		return nil, fmt.Errorf("input 4 (g_idx) has no standard form here")
	}
	bt, err := constInput(n, 1, "B")
	if err != nil {
		return nil, err
	}
	st, err := constInput(n, 2, "scales")
	if err != nil {
		return nil, err
	}
	b := &blockQuant{rows: N, cols: K, block: block, bits: bits, sdt: st.DataType}
	blocks, per := b.blocks(), 8/bits
	blob := block / per
	if bt.DataType != canonical.Uint8 {
		return nil, fmt.Errorf("B is %s, want uint8", canonical.ElemTypeName(bt.DataType))
	}
	if ne, err := bt.NumElements(); err != nil || ne%int64(N) != 0 || ne/int64(N) != int64(blocks*blob) {
		return nil, fmt.Errorf("B has %v values; K %d, N %d in %d-bit blocks of %d need %d", bt.Dims, K, N, bits, block, N*blocks*blob)
	}
	if b.scales, err = scalesOf(st, N*blocks); err != nil {
		return nil, err
	}
	raw, err := bt.Int64s()
	if err != nil {
		return nil, fmt.Errorf("reading B: %w", err)
	}
	all := unpackBits(raw, bits) // [N, blocks·block]
	b.q = make([]int64, N*K)
	for r := 0; r < N; r++ {
		copy(b.q[r*K:(r+1)*K], all[r*blocks*block:])
	}
	if n.Input(3) != nil {
		zt, err := constInput(n, 3, "zero_points")
		if err != nil {
			return nil, err
		}
		if zt.DataType != canonical.Uint8 {
			return nil, fmt.Errorf("zero_points in the scales' type (%s) have no DequantizeLinear form", canonical.ElemTypeName(zt.DataType))
		}
		rowBytes := (blocks + per - 1) / per
		z, err := zt.Int64s()
		if err != nil || len(z) != N*rowBytes {
			return nil, fmt.Errorf("zero_points hold %d bytes, want %d", len(z), N*rowBytes)
		}
		zall := unpackBits(z, bits)
		b.zp = make([]int64, N*blocks)
		for r := 0; r < N; r++ {
			copy(b.zp[r*blocks:(r+1)*blocks], zall[r*rowBytes*per:])
		}
	}
	return b, nil
}

// gatherBlockWeights decodes the constant table of a com.microsoft
// GatherBlockQuantized node gathering rows (gather_axis 0) of a 2-D table
// quantized along its rows (quantize_axis 1): int4 or uint4 values, or
// uint8 bytes holding two 4-bit values (bits 4) or one (bits 8).
func gatherBlockWeights(n *canonical.Node) (*blockQuant, error) {
	dt, err := constInput(n, 0, "data")
	if err != nil {
		return nil, err
	}
	st, err := constInput(n, 2, "scales")
	if err != nil {
		return nil, err
	}
	bits, block := int(n.AttrInt("bits", 4)), int(n.AttrInt("block_size", 128))
	if len(dt.Dims) != 2 || n.AttrInt("gather_axis", 0) != 0 || (n.AttrInt("quantize_axis", 1) != 1 && n.AttrInt("quantize_axis", 1) != -1) {
		return nil, fmt.Errorf("a %d-D table, gather_axis %d, quantize_axis %d: only rows of a 2-D table quantized along them have a standard form here",
			len(dt.Dims), n.AttrInt("gather_axis", 0), n.AttrInt("quantize_axis", 1))
	}
	if block < 16 || block&(block-1) != 0 {
		return nil, fmt.Errorf("block_size %d: want a power of 2, at least 16", block)
	}
	unpack := func(t *canonical.Tensor) ([]int64, error) {
		v, err := t.Int64s()
		if err != nil {
			return nil, err
		}
		if t.DataType == canonical.Uint8 && bits == 4 {
			v = unpackBits(v, 4)
		}
		return v, nil
	}
	b := &blockQuant{rows: int(dt.Dims[0]), cols: int(dt.Dims[1]), block: block, bits: bits, sdt: st.DataType, signed: dt.DataType == canonical.Int4}
	switch {
	case dt.DataType == canonical.Uint8 && bits == 4:
		b.cols *= 2
	case dt.DataType == canonical.Uint8 && bits == 8, (dt.DataType == canonical.Int4 || dt.DataType == canonical.Uint4) && bits == 4:
	default:
		return nil, fmt.Errorf("%s data with bits %d: want int4, uint4 or uint8 (bits 4 or 8)", canonical.ElemTypeName(dt.DataType), bits)
	}
	if b.q, err = unpack(dt); err != nil {
		return nil, fmt.Errorf("reading data: %w", err)
	}
	if b.scales, err = scalesOf(st, b.rows*b.blocks()); err != nil {
		return nil, err
	}
	if n.Input(3) != nil {
		zt, err := constInput(n, 3, "zero_points")
		if err != nil {
			return nil, err
		}
		if zt.DataType != dt.DataType {
			return nil, fmt.Errorf("zero_points are %s, data %s", canonical.ElemTypeName(zt.DataType), canonical.ElemTypeName(dt.DataType))
		}
		if b.zp, err = unpack(zt); err != nil || len(b.zp) != b.rows*b.blocks() {
			return nil, fmt.Errorf("zero_points hold %d values, want %d", len(b.zp), b.rows*b.blocks())
		}
	}
	return b, nil
}

// standardQuant writes MatMulNBits as a blockwise DequantizeLinear of its
// weights and a MatMul (Add of the bias), GatherBlockQuantized as a
// DequantizeLinear of its table and a Gather; below opset 21 (to) the
// weights become a float initializer instead. The note says which.
func standardQuant(e *build.Editor, n *canonical.Node, to int) ([]*canonical.Value, string, error) {
	var b *blockQuant
	var err error
	if n.OpType == "MatMulNBits" {
		b, err = matMulNBitsWeights(n)
	} else {
		b, err = gatherBlockWeights(n)
	}
	if err != nil {
		return nil, "", err
	}
	if err := absentAfter(n, 1, "none defined"); err != nil {
		return nil, "", err
	}
	mm := n.OpType == "MatMulNBits"
	var w *canonical.Value
	note := ""
	if to >= blockOpset {
		if w, err = b.dequantize(e, mm); err != nil {
			return nil, "", err
		}
	} else {
		w = b.floats(e, mm)
		note = fmt.Sprintf("%s %q: its %d-bit weights [%d, %d] became a float initializer (opset %d has no blockwise DequantizeLinear; it came in opset %d)",
			n.OpType, n.Name, b.bits, b.rows, b.cols, to, blockOpset)
	}
	if !mm {
		return []*canonical.Value{e.Op("Gather", []*canonical.Value{w, n.Input(1)}, canonical.IntAttr("axis", 0))}, note, nil
	}
	y := e.Op("MatMul", []*canonical.Value{n.Input(0), w})
	if bias := n.Input(5); bias != nil {
		y = e.Op("Add", []*canonical.Value{y, bias})
	}
	return []*canonical.Value{y}, note, nil
}

// dqWeights decodes a blockwise DequantizeLinear of a constant 2-D [K, N]
// weight quantized along K (axis 0) as rows N × cols K.
func dqWeights(dq *canonical.Node) (*blockQuant, bool) {
	xt, st := dq.Input(0).Const, dq.Input(1).Const
	if xt == nil || st == nil || len(xt.Dims) != 2 || len(st.Dims) != 2 || dq.AttrInt("output_dtype", 0) != 0 {
		return nil, false
	}
	if ax := dq.AttrInt("axis", 1); ax != 0 && ax != -2 {
		return nil, false
	}
	block := int(dq.AttrInt("block_size", 0))
	if block < 16 || block&(block-1) != 0 || !canonical.IsFloatType(st.DataType) {
		return nil, false
	}
	K, N := int(xt.Dims[0]), int(xt.Dims[1])
	b := &blockQuant{rows: N, cols: K, block: block, sdt: st.DataType}
	switch xt.DataType {
	case canonical.Int4, canonical.Uint4:
		b.bits = 4
	case canonical.Int8, canonical.Uint8:
		b.bits = 8
	default:
		return nil, false
	}
	b.signed = xt.DataType == canonical.Int4 || xt.DataType == canonical.Int8
	if st.Dims[0] != int64(b.blocks()) || st.Dims[1] != int64(N) {
		return nil, false
	}
	q, err := xt.Int64s()
	if err != nil || len(q) != K*N {
		return nil, false
	}
	s, err := st.Float64s()
	if err != nil {
		return nil, false
	}
	b.q, b.scales = transposed(q, K, N), transposed(s, b.blocks(), N)
	if z := dq.Input(2); z != nil {
		if z.Const == nil || z.Const.DataType != xt.DataType {
			return nil, false
		}
		zp, err := z.Const.Int64s()
		if err != nil || len(zp) != len(s) {
			return nil, false
		}
		b.zp = transposed(zp, b.blocks(), N)
	} else if !b.signed {
		// No zero point: 0, not the unsigned middle MatMulNBits assumes.
		b.zp = make([]int64, len(s))
	}
	return b, true
}

// contribMatMulNBits rewrites a MatMul whose weight is a blockwise
// DequantizeLinear (4 or 8 bits, along K, blocks of a power of 2 of at
// least 16) of constants into com.microsoft MatMulNBits: the weights
// transposed and packed per output column as unsigned values.
func contribMatMulNBits(g *canonical.Graph, n *canonical.Node, names *canonical.Namer) (string, error) {
	dq, _ := n.Input(1).Producer()
	if dq == nil || dq.OpType != "DequantizeLinear" || (dq.Domain != "" && dq.Domain != "ai.onnx") {
		return "", nil
	}
	b, ok := dqWeights(dq)
	if !ok {
		return "", nil
	}
	if at, _, ok, _ := canonical.TensorTypeOf(n.Input(0).Type); !ok || at != b.sdt {
		return "", nil
	}
	// Unsigned values, the zero point absent when it is the middle.
	if b.signed {
		for i := range b.q {
			b.q[i] += b.mid()
		}
		for i := range b.zp {
			b.zp[i] += b.mid()
		}
		b.signed = false
	}
	blocks, per := b.blocks(), 8/b.bits
	blob := b.block / per
	packed := make([]int64, b.rows*blocks*b.block)
	for r := 0; r < b.rows; r++ {
		for c := 0; c < blocks*b.block; c++ {
			v := b.mid()
			if c < b.cols {
				v = b.q[r*b.cols+c]
			}
			packed[r*blocks*b.block+c] = v
		}
	}
	e := build.On(g, names, n.Name)
	ins := []*canonical.Value{n.Input(0),
		e.Const("q", canonical.NewTensor("", canonical.Uint8, []int64{int64(b.rows), int64(blocks), int64(blob)}, packBits(packed, b.bits))),
		e.Const("scales", canonical.NumberTensor("", b.sdt, []int64{int64(b.rows * blocks)}, b.scales))}
	if b.zp != nil {
		rowBytes := (blocks + per - 1) / per
		z := make([]int64, b.rows*rowBytes*per)
		for r := 0; r < b.rows; r++ {
			copy(z[r*rowBytes*per:], b.zp[r*blocks:(r+1)*blocks])
		}
		ins = append(ins, e.Const("zero_points", canonical.NewTensor("", canonical.Uint8, []int64{int64(b.rows * rowBytes)}, packBits(z, b.bits))))
	}
	outs, err := msNode(e, "MatMulNBits", []bool{true}, ins, canonical.IntAttr("K", int64(b.cols)), canonical.IntAttr("N", int64(b.rows)),
		canonical.IntAttr("bits", int64(b.bits)), canonical.IntAttr("block_size", int64(b.block)))
	if err != nil {
		return "", err
	}
	outs[0].Type = n.Output(0).Type
	if err := splice(g, e, n, []*canonical.Value{n.Output(0)}, outs, n); err != nil {
		return "", err
	}
	return fmt.Sprintf("with the blockwise DequantizeLinear %q of its weight, became com.microsoft MatMulNBits (%d bits, blocks of %d)", dq.Name, b.bits, b.block), nil
}

// packBits packs bits-bit values into bytes, low bits first.
func packBits(v []int64, bits int) []byte {
	per := 8 / bits
	out := make([]byte, (len(v)+per-1)/per)
	for i, x := range v {
		out[i/per] |= byte(x&(1<<bits-1)) << (bits * (i % per))
	}
	return out
}
