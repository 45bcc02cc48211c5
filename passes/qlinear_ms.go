package passes

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// msDomain is ONNX Runtime's contrib-op domain.
const msDomain = "com.microsoft"

// qlinearOp is a float op whose QOperator form is an ONNX Runtime
// com.microsoft QLinear op on 8-bit values at per-tensor (scalar) scales:
// inputs (X, X_scale, X_zero_point) for each quantized input, then
// (Y_scale, Y_zero_point); QLinearConcat puts (Y_scale, Y_zero_point)
// first.
type qlinearOp struct {
	float, q string
	// inputs is the number of quantized inputs; 0: any number from 2
	// (Concat).
	inputs int
	// channelsLast: the QOperator has a channels_last attribute (0 for
	// the NCHW float op).
	channelsLast bool
}

// qlinearOps are the float ops QDQToQOperator rewrites as com.microsoft
// QLinear ops, and QOperatorToQDQ back.
var qlinearOps = []qlinearOp{
	{float: "Add", q: "QLinearAdd", inputs: 2},
	{float: "Mul", q: "QLinearMul", inputs: 2},
	{float: "Sigmoid", q: "QLinearSigmoid", inputs: 1},
	{float: "LeakyRelu", q: "QLinearLeakyRelu", inputs: 1},
	{float: "GlobalAveragePool", q: "QLinearGlobalAveragePool", inputs: 1, channelsLast: true},
	{float: "AveragePool", q: "QLinearAveragePool", inputs: 1, channelsLast: true},
	{float: "Concat", q: "QLinearConcat"},
	{float: "Softmax", q: "QLinearSoftmax", inputs: 1},
}

// qlinearOf is the entry of the float op n (float) or of the com.microsoft
// QLinear node n (!float).
func qlinearOf(n *canonical.Node, float bool) (qlinearOp, bool) {
	for _, o := range qlinearOps {
		if float && isOp(n, o.float) || !float && n.Domain == msDomain && n.OpType == o.q {
			return o, true
		}
	}
	return qlinearOp{}, false
}

// scalarQ reports whether the (De)QuantizeLinear n has a constant scalar
// scale and zero point, as the com.microsoft QLinear ops require (ONNX
// Runtime's type inference refuses a [1] scale).
func scalarQ(n *canonical.Node) bool {
	for _, v := range []*canonical.Value{n.Input(1), n.Input(2)} {
		if t := constOf(v); t == nil || len(t.Dims) != 0 {
			return false
		}
	}
	return true
}

// msQLinear is a matched float op of a qlinearOps entry: its
// DequantizeLinear inputs, the Relu dropped and the QuantizeLinear of its
// output.
type msQLinear struct {
	dqs     []*canonical.Node
	relu, q *canonical.Node
}

// msQLinearPattern matches the float op n of entry o between
// DequantizeLinear inputs and a QuantizeLinear output, all at scalar
// scales of one 8-bit type. A Relu between n and the QuantizeLinear is
// matched when the output zero point is its type's minimum: the
// quantization's clamp then computes it (as for QLinearConv).
func msQLinearPattern(n *canonical.Node, o qlinearOp) (msQLinear, bool) {
	var p msQLinear
	if o.inputs > 0 && len(n.Inputs) != o.inputs || o.inputs == 0 && len(n.Inputs) < 2 || len(n.Outputs) != 1 {
		return p, false
	}
	q := consumer(n.Output(0))
	if isOp(q, "Relu") {
		p.relu, q = q, consumer(q.Output(0))
	}
	if !isOp(q, "QuantizeLinear") || q.Input(2) == nil || !scalarQ(q) {
		return p, false
	}
	dt := valueType(q.Input(2))
	if p.relu != nil {
		if z, ok := scalarValue(constOf(q.Input(2))); !ok || int64(z) != qmin(dt) {
			return p, false
		}
	}
	p.q = q
	p.dqs = make([]*canonical.Node, len(n.Inputs))
	for i := range n.Inputs {
		d := dqOf(n.Input(i))
		if d == nil || !scalarQ(d) || valueType(d.Input(0)) != dt {
			return p, false
		}
		p.dqs[i] = d
	}
	if d := n.Attr("dilations"); o.float == "AveragePool" && d != nil && slices.ContainsFunc(d.Ints, func(v int64) bool { return v != 1 }) {
		return p, false // QLinearAveragePool has no dilations
	}
	return p, true
}

// msQLinearAttrs are the QLinear node's attributes for the float node n:
// QLinearSoftmax computes Softmax of the opset it names (below 13 over
// the input coerced to 2-D at axis).
func msQLinearAttrs(n *canonical.Node, o qlinearOp, opset int64) []*canonical.Attribute {
	attrs := slices.Clone(n.Attributes)
	if o.channelsLast {
		attrs = append(attrs, canonical.IntAttr("channels_last", 0))
	}
	if o.float == "Softmax" {
		axis := int64(-1)
		if opset < 13 {
			axis = 1
		}
		attrs = []*canonical.Attribute{canonical.IntAttr("axis", n.AttrInt("axis", axis)), canonical.IntAttr("opset", opset)}
	}
	return attrs
}

// msQLinearNode replaces the matched float node n by its QLinear node.
func msQLinearNode(c *canonical.Model, nm *canonical.Namer, n *canonical.Node, o qlinearOp, p msQLinear) error {
	dqs, q := p.dqs, p.q
	g := c.Graph
	e := build.On(g, nm, n.Name)
	var ins []*canonical.Value
	if o.inputs == 0 {
		ins = append(ins, q.Input(1), q.Input(2))
	}
	for _, d := range dqs {
		ins = append(ins, d.Input(0), d.Input(1), d.Input(2))
	}
	if o.inputs > 0 {
		ins = append(ins, q.Input(1), q.Input(2))
	}
	outs := e.OpIn(msDomain, o.q, 1, ins, msQLinearAttrs(n, o, c.Opset(""))...)
	if err := e.Err(); err != nil {
		return err
	}
	if err := replaceValue(g, q.Output(0), outs[0]); err != nil {
		return err
	}
	g.RemoveNode(q)
	if p.relu != nil {
		g.RemoveNode(p.relu)
	}
	g.RemoveNode(n)
	return nil
}

// msQLinearToQDQ replaces the com.microsoft QLinear node n of entry o by
// DequantizeLinear of its inputs, the float op and a QuantizeLinear.
func msQLinearToQDQ(g *canonical.Graph, nm *canonical.Namer, n *canonical.Node, o qlinearOp, opset int64) error {
	in := n.Input
	var triples [][3]*canonical.Value
	var ys, yz *canonical.Value
	switch {
	case o.inputs == 0:
		if len(n.Inputs) < 5 || (len(n.Inputs)-2)%3 != 0 {
			return fmt.Errorf("%d inputs, want 2 + 3 per concatenated tensor", len(n.Inputs))
		}
		ys, yz = in(0), in(1)
		for i := 2; i < len(n.Inputs); i += 3 {
			triples = append(triples, [3]*canonical.Value{in(i), in(i + 1), in(i + 2)})
		}
	default:
		if len(n.Inputs) < 3*o.inputs+1 {
			return fmt.Errorf("%d inputs, want %d", len(n.Inputs), 3*o.inputs+2)
		}
		for i := 0; i < o.inputs; i++ {
			triples = append(triples, [3]*canonical.Value{in(3 * i), in(3*i + 1), in(3*i + 2)})
		}
		ys, yz = in(3*o.inputs), in(3*o.inputs+1)
	}
	var attrs []*canonical.Attribute
	for _, a := range n.Attributes {
		switch {
		case a.Name == "channels_last" && o.channelsLast:
			if a.I != 0 {
				return fmt.Errorf("channels_last %d: the float %s is NCHW only", a.I, o.float)
			}
		case a.Name == "opset" && o.float == "Softmax":
			if (a.I < 13) != (opset < 13) && n.AttrInt("axis", -1) != -1 {
				return fmt.Errorf("made from Softmax-%d, whose axis means another thing in the model's opset %d", a.I, opset)
			}
		default:
			attrs = append(attrs, a)
		}
	}
	e := build.On(g, nm, n.Name)
	fl := make([]*canonical.Value, len(triples))
	for i, t := range triples {
		fl[i] = e.Op("DequantizeLinear", t[:])
	}
	y := e.Op("QuantizeLinear", []*canonical.Value{e.Op(o.float, fl, attrs...), ys, yz})
	return replaceNode(g, e, n, y)
}
