package tflite

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/passes"
)

// qdqInfo is the quantization a QDQ ONNX model carries (QuantizeLinear /
// DequantizeLinear pairs on activations, DequantizeLinear of int8
// constants on weights), taken out of the graph by stripQDQ so that the
// float converter sees a float model and the int8 quantizer uses the
// model's own scales and zero points instead of calibrating.
type qdqInfo struct {
	// acts are the activations a QuantizeLinear quantized, with its
	// scale and zero point as int8 (a uint8 zero point minus 128: the
	// same real values).
	acts map[*canonical.Value]*qparams
	// fake are the activations every consumer read through the
	// QuantizeLinear/DequantizeLinear pair: an op kept float reads them
	// quantized and dequantized, as ONNX Runtime computes.
	fake map[*canonical.Value]bool
	// weights are the int8 weights' scales (zero point 0) of a node's
	// input 1, by node name.
	weights map[string]*qparams
	// Pairs and Constants count what was taken out.
	pairs, constants int
}

// hasOp reports whether g holds an ai.onnx node of one of ops.
func hasOp(g *canonical.Graph, ops ...string) bool {
	for _, n := range g.Nodes {
		if isOnnx(n) && slices.Contains(ops, n.OpType) {
			return true
		}
	}
	return false
}

// hasQDQ reports whether g is quantized: QuantizeLinear or
// DequantizeLinear nodes, or QOperator nodes (QLinearConv, QLinearMatMul,
// ONNX Runtime's QGemm and QLinear ops), which Export rewrites as QDQ
// (passes.QOperatorToQDQ).
func hasQDQ(g *canonical.Graph) bool {
	return hasOp(g, "QuantizeLinear", "DequantizeLinear") || passes.HasQOperator(g)
}

func isOnnx(n *canonical.Node) bool { return n.Domain == "" || n.Domain == "ai.onnx" }

// qdqParamsOf reads the scale, zero point and axis of a QuantizeLinear or
// DequantizeLinear node n as int8 quantization (a uint8 zero point minus
// 128); an error names the node when they are not constants or the type
// is not int8, uint8 or int32 (an int32 DequantizeLinear is a bias).
func qdqParamsOf(n *canonical.Node) (*qparams, error) {
	sv, zv := n.Input(1), n.Input(2)
	if sv == nil || sv.Const == nil {
		return nil, fmt.Errorf("%s %q: the scale is not a constant", n.OpType, n.Name)
	}
	s, err := sv.Const.Float64s()
	if err != nil {
		return nil, fmt.Errorf("%s %q: scale: %w", n.OpType, n.Name, err)
	}
	if len(n.Inputs) > 3 || n.AttrInt("block_size", 0) != 0 {
		return nil, fmt.Errorf("%s %q: blocked quantization has no TFLite equivalent", n.OpType, n.Name)
	}
	z := make([]int64, len(s))
	// Without a zero point: QuantizeLinear writes uint8, DequantizeLinear
	// reads its input's type.
	dt := canonical.Uint8
	if x := n.Input(0); n.OpType == "DequantizeLinear" && x != nil && x.Const != nil {
		dt = x.Const.DataType
	}
	if zv != nil {
		if zv.Const == nil {
			return nil, fmt.Errorf("%s %q: the zero point is not a constant", n.OpType, n.Name)
		}
		dt = zv.Const.DataType
		var err error
		if z, err = zv.Const.Int64s(); err != nil {
			return nil, fmt.Errorf("%s %q: zero point: %w", n.OpType, n.Name, err)
		}
		if len(z) != len(s) {
			return nil, fmt.Errorf("%s %q: %d scales, %d zero points", n.OpType, n.Name, len(s), len(z))
		}
	}
	switch dt {
	case canonical.Uint8, canonical.Int8, canonical.Int32:
	default:
		return nil, fmt.Errorf("%s %q: %s quantization has no TFLite int8 equivalent (int8 or uint8)", n.OpType, n.Name, dt)
	}
	p := &qparams{scale: make([]float32, len(s)), zero: z}
	for i, x := range s {
		p.scale[i] = float32(x)
		if dt == canonical.Uint8 {
			p.zero[i] -= 128
		}
	}
	if len(s) > 1 {
		p.dim = int32(n.AttrInt("axis", 1))
	}
	return p, nil
}

func (p *qparams) equal(o *qparams) bool {
	return p != nil && o != nil && slices.Equal(p.scale, o.scale) && slices.Equal(p.zero, o.zero) && p.dim == o.dim
}

// stripQDQ takes the quantization out of g (changed in place): each
// DequantizeLinear of a constant becomes the float constant it computes
// (its scales recorded for the node reading it as weights), each
// QuantizeLinear whose every reader is a DequantizeLinear of the same
// scale and zero point is removed with them (its scale and zero point
// recorded for the activation). A pair the exporter cannot read stays,
// and the converter then refuses it by node name.
func stripQDQ(g *canonical.Graph) (*qdqInfo, error) {
	info := &qdqInfo{acts: map[*canonical.Value]*qparams{}, fake: map[*canonical.Value]bool{}, weights: map[string]*qparams{}}
	outputs := map[*canonical.Value]bool{}
	for _, o := range g.Outputs {
		outputs[o] = true
	}
	for _, n := range slices.Clone(g.Nodes) {
		if n.OpType != "DequantizeLinear" || !isOnnx(n) || n.Input(0) == nil || n.Input(0).Const == nil || outputs[n.Output(0)] {
			continue
		}
		p, err := qdqParamsOf(n)
		if err != nil {
			return nil, err
		}
		x := n.Input(0).Const
		q, err := x.Int64s()
		if err != nil {
			return nil, fmt.Errorf("DequantizeLinear %q: %w", n.Name, err)
		}
		axis := -1 // per tensor
		if len(p.scale) > 1 {
			axis = int(p.dim)
			if axis < 0 {
				axis += len(x.Dims)
			}
			if axis < 0 || axis >= len(x.Dims) || x.Dims[axis] != int64(len(p.scale)) {
				return nil, fmt.Errorf("DequantizeLinear %q: %d scales along axis %d of %v", n.Name, len(p.scale), p.dim, x.Dims)
			}
			p.dim = int32(axis)
		}
		channels, inner := channelsOf(x.Dims, axis)
		// the int8 zero point again: the real value is (q - zero) * scale
		zero := slices.Clone(p.zero)
		if x.DataType == canonical.Uint8 {
			for i := range zero {
				zero[i] += 128
			}
		}
		f := make([]float64, len(q))
		for i, v := range q {
			c := (int64(i) / inner) % channels
			f[i] = float64(float32(v-zero[c]) * p.scale[c])
		}
		nv, err := g.AddInitializer(canonical.NumberTensor(n.Output(0).Name+";dequantized", canonical.Float, slices.Clone(x.Dims), f))
		if err != nil {
			return nil, fmt.Errorf("DequantizeLinear %q: %w", n.Name, err)
		}
		for _, u := range n.Output(0).Uses() {
			if u.Index == 1 && x.DataType == canonical.Int8 && !slices.ContainsFunc(p.zero, func(z int64) bool { return z != 0 }) {
				switch u.Node.OpType {
				case "Conv", "Gemm", "MatMul":
					info.weights[u.Node.Name] = p
				}
			}
		}
		g.ReplaceAllUsesWith(n.Output(0), nv)
		g.RemoveNode(n)
		info.constants++
	}
	// the activations only QuantizeLinear nodes read, before any is removed
	onlyQ := map[*canonical.Value]bool{}
	for _, n := range g.Nodes {
		if n.OpType != "QuantizeLinear" || n.Input(0) == nil {
			continue
		}
		x := n.Input(0)
		onlyQ[x] = !slices.ContainsFunc(x.Uses(), func(u canonical.Use) bool { return u.Node.OpType != "QuantizeLinear" })
	}
	for _, n := range slices.Clone(g.Nodes) {
		if n.OpType != "QuantizeLinear" || !isOnnx(n) {
			continue
		}
		x, qv := n.Input(0), n.Output(0)
		p, err := qdqParamsOf(n)
		if err != nil {
			return nil, err
		}
		if len(p.scale) != 1 || x == nil || x.Const != nil || outputs[qv] {
			continue // per-axis activations or constants: left for the converter to refuse
		}
		uses := qv.Uses()
		pair := len(uses) > 0
		var named *canonical.Value // a DequantizeLinear output that is a graph output: x takes its name
		for _, u := range uses {
			d := u.Node
			if d.OpType != "DequantizeLinear" || !isOnnx(d) || u.Index != 0 {
				pair = false
				break
			}
			if outputs[d.Output(0)] {
				if named != nil || outputs[x] || slices.Contains(g.Inputs, x) {
					pair = false
					break
				}
				named = d.Output(0)
			}
			dp, err := qdqParamsOf(d)
			if err != nil || !dp.equal(p) {
				pair = false
				break
			}
		}
		if !pair {
			continue
		}
		if old, ok := info.acts[x]; ok && !old.equal(p) {
			continue // quantized twice differently: left as it is
		}
		for _, u := range slices.Clone(uses) {
			d := u.Node
			g.ReplaceAllUsesWith(d.Output(0), x)
			g.RemoveNode(d)
		}
		g.RemoveNode(n)
		if named != nil {
			if err := g.RenameValue(x, named.Name); err != nil {
				return nil, fmt.Errorf("QuantizeLinear %q: the output %q: %w", n.Name, named.Name, err)
			}
			outputs[x] = true
		}
		info.acts[x] = p
		if onlyQ[x] {
			info.fake[x] = true
		}
		info.pairs++
	}
	return info, nil
}
