package passes

import (
	"context"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/verify"
)

// Int4 is weight-only 4-bit quantization (the form LLM weights ship in):
// each MatMul weight in blocks of BlockSize along K, one float scale per
// block and output column, symmetric (no zero point); activations stay
// float.
const Int4 QuantMode = "int4"

// Int4Format is how 4-bit weights are written.
type Int4Format string

const (
	// MatMulNBits writes ONNX Runtime's com.microsoft MatMulNBits (the
	// weights transposed and packed per output column), for an ONNX
	// Runtime target.
	MatMulNBits Int4Format = "matmulnbits"
	// Int4QDQ writes standard ops: an INT4 initializer and an opset-21
	// blockwise DequantizeLinear before the MatMul.
	Int4QDQ Int4Format = "qdq"
)

// DefaultBlockSize is the int4 block size when none is given (ONNX
// Runtime's quantizer's default).
const DefaultBlockSize = 32

// int4Opset is the ai.onnx opset of INT4 and blockwise DequantizeLinear.
const int4Opset = 21

// quantizeInt4 is Quantize in Int4 mode.
func quantizeInt4(ctx context.Context, m *canonical.Model, opts QuantOptions) (*canonical.Model, *QuantReport, error) {
	block := opts.BlockSize
	if block == 0 {
		block = DefaultBlockSize
	}
	if block < 16 || block&(block-1) != 0 {
		return nil, nil, fmt.Errorf("quantize: --block-size %d: want a power of two, at least 16", block)
	}
	format := opts.Format
	switch format {
	case "":
		format = MatMulNBits
	case MatMulNBits, Int4QDQ:
	default:
		return nil, nil, fmt.Errorf("quantize: unknown int4 format %q (matmulnbits or qdq)", format)
	}
	if opts.AccuracyLevel < 0 || opts.AccuracyLevel > 4 {
		return nil, nil, fmt.Errorf("quantize: --accuracy-level %d: want 0 to 4 (MatMulNBits' accuracy_level)", opts.AccuracyLevel)
	}
	if opts.AccuracyLevel != 0 && format != MatMulNBits {
		return nil, nil, fmt.Errorf("quantize: --accuracy-level is MatMulNBits' attribute: it needs --format matmulnbits, not %s", format)
	}
	if format == Int4QDQ && m.Opset("") < int4Opset {
		return nil, nil, fmt.Errorf("quantize: int4 QDQ needs ai.onnx opset %d (INT4 and blockwise DequantizeLinear); the model has %d: convert it first (onnxconv opset IN MID --opset %d)", int4Opset, m.Opset(""), int4Opset)
	}
	c, err := m.Clone()
	if err != nil {
		return nil, nil, fmt.Errorf("quantize: %w", err)
	}
	fail := func(err error) (*canonical.Model, *QuantReport, error) {
		_ = c.Close()
		return nil, nil, fmt.Errorf("quantize: %w", err)
	}
	g := c.Graph
	rep := &QuantReport{Mode: Int4, BlockSize: block, Format: format, AccuracyLevel: opts.AccuracyLevel, Before: StatsOf(m), Top1: -1, MaxAbs: -1}
	nm := canonical.NewNamer(c)
	var targets []*canonical.Node
	for _, n := range g.Nodes {
		w := constOf(n.Input(1))
		if n.OpType != "MatMul" || (n.Domain != "" && n.Domain != "ai.onnx") || w == nil || w.DataType != canonical.Float || len(w.Dims) != 2 {
			continue
		}
		targets = append(targets, n)
	}
	for _, n := range targets {
		w := n.Input(1)
		q, err := int4Blocks(w.Const, block)
		if err != nil {
			return fail(fmt.Errorf("MatMul %q: %w", n.Name, err))
		}
		e := build.On(g, nm, w.Name)
		if format == MatMulNBits {
			b := e.Const("q4", canonical.NewTensor("", canonical.Uint8, []int64{q.n, q.blocks, int64(block / 2)}, q.nbits()))
			s := e.Const("scales", canonical.NumberTensor("", canonical.Float, []int64{q.n * q.blocks}, q.scalesByColumn()))
			attrs := []*canonical.Attribute{canonical.IntAttr("K", q.k), canonical.IntAttr("N", q.n), canonical.IntAttr("bits", 4), canonical.IntAttr("block_size", int64(block))}
			if opts.AccuracyLevel != 0 {
				attrs = append(attrs, canonical.IntAttr("accuracy_level", int64(opts.AccuracyLevel)))
			}
			y := e.OpIn("com.microsoft", "MatMulNBits", 1, []*canonical.Value{n.Input(0), b, s}, attrs...)
			if e.Err() != nil {
				return fail(e.Err())
			}
			old := n.Outputs[0]
			wasOutput := isGraphOutput(old)
			g.ReplaceAllUsesWith(old, y[0])
			y[0].Type = old.Type
			if wasOutput {
				if err := renameOutput(g, old, y[0]); err != nil {
					return fail(err)
				}
			}
			g.RemoveNode(n)
		} else {
			qv := e.Const("q4", canonical.NewTensor("", canonical.Int4, []int64{q.k, q.n}, q.packedKN()))
			s := e.Const("scales", canonical.NumberTensor("", canonical.Float, []int64{q.blocks, q.n}, q.scales))
			d := e.Op("DequantizeLinear", []*canonical.Value{qv, s}, canonical.IntAttr("axis", 0), canonical.IntAttr("block_size", int64(block)))
			if e.Err() != nil {
				return fail(e.Err())
			}
			n.SetInput(1, d)
		}
		rep.Quantized++
	}
	if format == MatMulNBits && rep.Quantized > 0 && c.Opset("com.microsoft") == 0 {
		c.OpsetImports = append(c.OpsetImports, canonical.OpsetID{Domain: "com.microsoft", Version: 1})
	}
	if err := tidyQuantized(c, rep); err != nil {
		return fail(err)
	}
	if opts.Unmeasured {
		rep.Unmeasured = true
		return c, rep, nil
	}
	vo := verify.Options{Inputs: opts.Held, Profile: "int4", Backend: opts.Backend, Decode: &verify.Decode{Steps: verify.DefaultDecodeSteps}}
	cmp, err := verify.Compare(ctx, verify.ModelSide("float", m), verify.ModelSide("int4", c), vo)
	if err != nil {
		return fail(fmt.Errorf("running the quantized model: %w", err))
	}
	rep.setFinal(cmp)
	return c, rep, nil
}

// renameOutput gives nw the name of the graph output old, which it
// replaces.
func renameOutput(g *canonical.Graph, old, nw *canonical.Value) error {
	name := old.Name
	if err := g.RenameValue(old, name+"_float"); err != nil {
		return err
	}
	if err := g.RenameValue(nw, name); err != nil {
		return err
	}
	for i, o := range g.Outputs {
		if o == old || o == nw {
			g.Outputs[i] = nw
		}
	}
	return nil
}

// int4Weight is a [K, N] weight quantized to 4 bits in blocks along K.
type int4Weight struct {
	k, n, blocks int64
	block        int
	q            []int8    // [K, N], -8..7
	scales       []float64 // [blocks, N]
}

// int4Blocks quantizes w [K, N] symmetrically: per block of block rows and
// column, scale = max|w| / 7, q = round(w / scale) in [-8, 7].
func int4Blocks(w *canonical.Tensor, block int) (*int4Weight, error) {
	at, _, err := floatReader(w)
	if err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	K, N := w.Dims[0], w.Dims[1]
	blocks := (K + int64(block) - 1) / int64(block)
	q := &int4Weight{k: K, n: N, blocks: blocks, block: block, q: make([]int8, K*N), scales: make([]float64, blocks*N)}
	for i := range K * N {
		s := &q.scales[(i/N/int64(block))*N+i%N]
		*s = math.Max(*s, math.Abs(at(int(i))))
	}
	for i := range q.scales {
		q.scales[i] = float64(float32(q.scales[i] / 7))
		if q.scales[i] == 0 {
			q.scales[i] = 1
		}
	}
	for i := range K * N {
		s := q.scales[(i/N/int64(block))*N+i%N]
		q.q[i] = int8(math.Max(-8, math.Min(7, math.RoundToEven(at(int(i))/s))))
	}
	return q, nil
}

// packedKN packs q in [K, N] order as INT4, two's complement nibbles, low
// nibble first.
func (q *int4Weight) packedKN() []byte {
	out := make([]byte, (len(q.q)+1)/2)
	for i, v := range q.q {
		out[i/2] |= (byte(v) & 0xF) << (4 * uint(i%2))
	}
	return out
}

// nbits packs q as MatMulNBits' B: [N, blocks, block/2] bytes of
// unsigned nibbles (q + 8, the implicit zero point), low nibble first,
// the last block padded with the zero point.
func (q *int4Weight) nbits() []byte {
	blob := q.block / 2
	out := make([]byte, q.n*q.blocks*int64(blob))
	for n := int64(0); n < q.n; n++ {
		for kb := int64(0); kb < q.blocks; kb++ {
			base := (n*q.blocks + kb) * int64(blob)
			for i := 0; i < q.block; i++ {
				k := kb*int64(q.block) + int64(i)
				v := byte(8)
				if k < q.k {
					v = byte(int(q.q[k*q.n+n]) + 8)
				}
				out[base+int64(i/2)] |= v << (4 * uint(i%2))
			}
		}
	}
	return out
}

// scalesByColumn returns the scales in MatMulNBits' order, [N, blocks].
func (q *int4Weight) scalesByColumn() []float64 {
	out := make([]float64, len(q.scales))
	for kb := int64(0); kb < q.blocks; kb++ {
		for n := int64(0); n < q.n; n++ {
			out[n*q.blocks+kb] = q.scales[kb*q.n+n]
		}
	}
	return out
}
