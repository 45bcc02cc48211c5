package passes

import (
	"context"
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// staticOps are the op types static mode wraps by default. ONNX Runtime's
// quantize_static quantizes, when op_types_to_quantize is not given, the
// union of the keys of its QLinearOpsRegistry and QDQRegistry
// (onnxruntime/python/tools/quantization/registry.py); these are the ones
// of that union this pass handles, plus Flatten (see staticRoleOf).
var staticOps = []string{
	"Conv", "MatMul", "Gemm",
	"Add", "Mul", "Concat", "Sigmoid", "LeakyRelu", "Softmax", "GlobalAveragePool",
	"MaxPool", "AveragePool", "Resize", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten",
	"Relu", "Clip",
}

// staticRole is how static mode quantizes a node, after the QDQ op
// quantizer ONNX Runtime's registry.py picks for its op type.
type staticRole int

const (
	// roleWeighted: Conv, MatMul, Gemm with a constant float weight
	// (QDQConv, QDQMatMul, QDQGemm): input 0 and the output quantized
	// as activations, the weight int8 symmetric.
	roleWeighted staticRole = iota
	// roleAll: every float activation input and the output quantized,
	// each with its own range (QDQOperatorBase: the op types the QDQ
	// registry does not list, e.g. Add, Mul, Concat, Sigmoid).
	roleAll
	// roleSame: when input 0 is quantized already, the output is
	// quantized with input 0's scale and zero point; else the node is
	// left alone (QDQDirect8BitOp: Reshape, Transpose, Squeeze,
	// Unsqueeze, AveragePool; QDQMaxPool from opset 12, QDQResize from
	// opset 11).
	roleSame
	// roleRemovable: Relu and Clip (QDQRemovableActivation): when the
	// input is quantized already, the node is removed and its input takes
	// the quantization calibrated on its output, whose clamp then
	// computes it; kept (input and output quantized) when the input has
	// other readers or is a graph input or output
	// (QDQQuantizer.try_replacing_upstream_output).
	roleRemovable
)

// staticRoleOf is n's role, false when static mode leaves n alone.
// Flatten is not in ONNX Runtime's registry (its QDQOperatorBase would
// quantize its output with its own range, which min-max calibration
// makes the input's anyway); here it is a same-scale op like Reshape, so
// that the percentile and entropy methods keep that equality too.
func staticRoleOf(n *canonical.Node, opset int64) (staticRole, bool) {
	switch n.OpType {
	case "Conv", "MatMul", "Gemm":
		return roleWeighted, true
	case "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "AveragePool":
		return roleSame, true
	case "MaxPool":
		return roleSame, opset >= 12 && len(n.Outputs) == 1
	case "Resize":
		return roleSame, opset >= 11
	case "Relu", "Clip":
		return roleRemovable, true
	}
	return roleAll, true
}

// weightedTarget reports whether the Conv, MatMul or Gemm n has a
// constant float weight and a float activation input 0 (the nodes both
// modes quantize).
func weightedTarget(n *canonical.Node) bool {
	w := constOf(n.Input(1))
	if w == nil || w.DataType != canonical.Float || elemType(n.Input(0)) != canonical.Float {
		return false
	}
	if n.OpType == "Gemm" && n.AttrInt("transA", 0) != 0 {
		return false
	}
	return constOf(n.Input(0)) == nil
}

// staticPlan is which activations static mode quantizes.
type staticPlan struct {
	// order are the quantized activations, in the order first quantized.
	order []*canonical.Value
	in    map[*canonical.Value]bool
	// same maps a same-scale op's output to the input whose quantization
	// it takes.
	same map[*canonical.Value]*canonical.Value
	// unit are Softmax outputs, quantized over [0, 1] whatever their
	// calibrated range (ONNX Runtime's BaseQuantizer.adjust_tensor_ranges).
	unit map[*canonical.Value]bool
	// weighted are the nodes whose weight is quantized; removed the
	// Relu and Clip nodes whose clamp the quantization computes.
	weighted, removed []*canonical.Node
	wrapped           int
}

func (p *staticPlan) mark(v *canonical.Value) {
	if !p.in[v] {
		p.in[v] = true
		p.order = append(p.order, v)
	}
}

func (p *staticPlan) unmark(v *canonical.Value) {
	if p.in[v] {
		delete(p.in, v)
		p.order = slices.DeleteFunc(p.order, func(x *canonical.Value) bool { return x == v })
	}
}

// activation reports whether v is a float value computed at run time.
func activation(v *canonical.Value) bool {
	return v != nil && constOf(v) == nil && v.Const == nil && elemType(v) == canonical.Float
}

// clipKeepsZero reports whether the Clip n clamps to constant bounds
// min <= 0 <= max (absent bounds are infinite): then a quantization
// range that holds 0 and lies inside the bounds clamps as n does, so
// removing n changes nothing. ONNX Runtime removes any Clip; this pass
// keeps one whose bounds exclude 0 (its quantization range, widened to
// hold 0, would not clamp at the bound).
func clipKeepsZero(n *canonical.Node) bool {
	if n.OpType == "Relu" {
		return true
	}
	lo, hi := float64(n.AttrFloat("min", float32(math.Inf(-1)))), float64(n.AttrFloat("max", float32(math.Inf(1))))
	for i, b := range []*float64{&lo, &hi} {
		v := n.Input(i + 1)
		if v == nil {
			continue
		}
		x, ok := scalarValue(constOf(v))
		if !ok {
			return false
		}
		*b = x
	}
	return lo <= 0 && hi >= 0
}

// planStatic walks g in topological order and decides, by ONNX Runtime's
// QDQ quantizer rules (staticRole), which activations to quantize.
func planStatic(g *canonical.Graph, ops map[string]bool, opset int64) (*staticPlan, error) {
	order, err := g.TopoSort()
	if err != nil {
		return nil, err
	}
	p := &staticPlan{in: map[*canonical.Value]bool{}, same: map[*canonical.Value]*canonical.Value{}, unit: map[*canonical.Value]bool{}}
	for _, n := range order {
		if !ops[n.OpType] || (n.Domain != "" && n.Domain != "ai.onnx") || len(n.Outputs) == 0 {
			continue
		}
		role, ok := staticRoleOf(n, opset)
		if !ok {
			continue
		}
		out := n.Output(0)
		switch role {
		case roleWeighted:
			if !weightedTarget(n) {
				continue
			}
			p.mark(n.Input(0))
			if activation(out) {
				p.mark(out)
			}
			p.weighted = append(p.weighted, n)
		case roleSame:
			x := n.Input(0)
			if !p.in[x] || !activation(out) {
				continue
			}
			p.mark(out)
			p.same[out] = x
		case roleRemovable:
			x := n.Input(0)
			if !p.in[x] || !activation(out) {
				continue // ONNX Runtime keeps the node unquantized
			}
			p.mark(out)
			if singleUse(x) && producer(x) != nil && p.same[x] == nil && clipKeepsZero(n) {
				p.unmark(x)
				p.removed = append(p.removed, n)
				continue
			}
		default:
			var ins []*canonical.Value
			for _, v := range n.Inputs {
				if activation(v) {
					ins = append(ins, v)
				}
			}
			if len(ins) == 0 || len(n.Outputs) != 1 || !activation(out) {
				continue
			}
			for _, v := range ins {
				p.mark(v)
			}
			p.mark(out)
			if n.OpType == "Softmax" {
				p.unit[out] = true
			}
		}
		p.wrapped++
	}
	return p, nil
}

// calibrated are the activations whose range the samples give (not the
// same-scale outputs and Softmax outputs).
func (p *staticPlan) calibrated() []*canonical.Value {
	var out []*canonical.Value
	for _, v := range p.order {
		if p.same[v] == nil && !p.unit[v] {
			out = append(out, v)
		}
	}
	return out
}

// quantizeStatic applies plan p to g: removes the Relu/Clip nodes the
// quantization computes, quantizes each planned activation once
// (QuantizeLinear/DequantizeLinear, every reader in g reading the
// DequantizeLinear; a graph output keeps its name on the
// DequantizeLinear), and the weights of the weighted nodes.
func quantizeStatic(ctx context.Context, c *canonical.Model, p *staticPlan, ranges map[*canonical.Value][2]float64, opts QuantOptions, rep *QuantReport) error {
	g := c.Graph
	nm := canonical.NewNamer(c)
	// A removed node's input now carries its output's quantization.
	alias := map[*canonical.Value]*canonical.Value{}
	for _, r := range p.removed {
		x, y := r.Input(0), r.Output(0)
		if err := replaceValue(g, y, x); err != nil {
			return err
		}
		g.RemoveNode(r)
		alias[y] = x
	}
	graphValue := func(v *canonical.Value) *canonical.Value {
		if a := alias[v]; a != nil {
			return a
		}
		return v
	}
	inG := map[*canonical.Node]bool{}
	for _, n := range g.Nodes {
		inG[n] = true
	}
	type qparams struct{ scale, zero *canonical.Value }
	params := map[*canonical.Value]qparams{}
	var paramsOf func(v *canonical.Value) qparams
	paramsOf = func(v *canonical.Value) qparams {
		if q, ok := params[v]; ok {
			return q
		}
		var q qparams
		if src := p.same[v]; src != nil {
			q = paramsOf(src)
		} else {
			r := ranges[v]
			if p.unit[v] {
				r = [2]float64{0, 1}
			}
			scale, zp := uint8Params(r[0], r[1])
			e := build.On(g, nm, graphValue(v).Name)
			q.scale = e.Const("scale", canonical.NumberTensor("", canonical.Float, nil, []float64{scale}))
			q.zero = e.Const("zero_point", canonical.NewTensor("", canonical.Uint8, nil, []byte{zp}))
		}
		params[v] = q
		return q
	}
	for _, v := range p.order {
		if err := ctx.Err(); err != nil {
			return err
		}
		x := graphValue(v)
		q := paramsOf(v)
		var uses []canonical.Use
		for _, u := range x.Uses() {
			if inG[u.Node] {
				uses = append(uses, u)
			}
		}
		out := isGraphOutput(x)
		e := build.On(g, nm, x.Name)
		d := e.Op("DequantizeLinear", []*canonical.Value{e.Op("QuantizeLinear", []*canonical.Value{x, q.scale, q.zero}), q.scale, q.zero})
		if err := e.Err(); err != nil {
			return err
		}
		for _, u := range uses {
			u.Node.SetInput(u.Index, d)
		}
		if out {
			for i, o := range g.Outputs {
				if o == x {
					g.Outputs[i] = d
				}
			}
			name := x.Name
			if err := g.RenameValue(x, nm.Fresh(name+"_QuantizeLinear_Input")); err != nil {
				return err
			}
			if err := g.RenameValue(d, name); err != nil {
				return err
			}
			d.Type = x.Type
		}
	}
	for _, n := range p.weighted {
		wq, err := qdqWeight(g, nm, n.Input(1), opts.PerChannel, weightAxisOf(n))
		if err != nil {
			return err
		}
		n.SetInput(1, wq)
	}
	rep.Quantized = p.wrapped
	rep.Fused = len(p.removed)
	return nil
}

// weightAxisOf is the output-channel axis of the weight of the Conv,
// MatMul or Gemm n.
func weightAxisOf(n *canonical.Node) int64 {
	switch n.OpType {
	case "MatMul":
		return 1
	case "Gemm":
		if n.AttrInt("transB", 0) == 0 {
			return 1
		}
	}
	return 0
}

// uint8Params are the scale and zero point of uint8 asymmetric
// quantization of [lo, hi] (widened to hold 0).
func uint8Params(lo, hi float64) (float64, byte) {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
		lo, hi = 0, 0
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	scale := (hi - lo) / 255
	if scale == 0 {
		scale = 1
	}
	zp := math.Round(-lo / scale)
	return scale, byte(math.Max(0, math.Min(255, zp)))
}
