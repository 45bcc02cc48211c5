package passes

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// qgemmPattern is a Gemm between DequantizeLinear inputs: A per tensor,
// B per tensor or per column, C (when given) as QGemm's int32 bias, and
// the QuantizeLinear of its output (nil: QGemm writes float).
type qgemmPattern struct {
	a, b *canonical.Node
	c    *canonical.Value // the int32 C, or nil
	bias *canonical.Tensor
	q    *canonical.Node
}

// matchQGemm matches the Gemm n as ONNX Runtime's com.microsoft QGemm
// computes it. A C needs alpha = beta = 1 (QGemm's C is at a_scale ×
// b_scale).
func matchQGemm(n *canonical.Node) (qgemmPattern, bool) {
	var p qgemmPattern
	if !isOp(n, "Gemm") || len(n.Inputs) < 2 || len(n.Inputs) > 3 {
		return p, false
	}
	if p.a, p.b = dqOf(n.Input(0)), dqOf(n.Input(1)); p.a == nil || p.b == nil || !perTensor(p.a) {
		return p, false
	}
	if dims, ok := dimsOf(p.b.Input(0)); !ok || len(dims) != 2 {
		return p, false
	}
	col := int64(1)
	if n.AttrInt("transB", 0) != 0 {
		col = 0
	}
	if !weightAxis(p.b, col) {
		return p, false
	}
	if c := n.Input(2); c != nil {
		if n.AttrFloat("alpha", 1) != 1 || n.AttrFloat("beta", 1) != 1 {
			return p, false
		}
		if d := producer(c); isOp(d, "DequantizeLinear") {
			if !biasMatches(d, p.a, p.b) {
				return p, false
			}
			p.c = d.Input(0)
		} else if t := constOf(c); t != nil && t.DataType == canonical.Float {
			bq, err := quantizeBias(t, p.a, p.b)
			if err != nil {
				return p, false
			}
			p.bias = bq
		} else {
			return p, false
		}
	}
	if q := consumer(n.Output(0)); isOp(q, "QuantizeLinear") && q.Input(2) != nil && perTensor(q) {
		p.q = q
	}
	return p, true
}

// qgemmOf replaces the matched Gemm n by a com.microsoft QGemm.
func qgemmOf(g *canonical.Graph, nm *canonical.Namer, n *canonical.Node, p qgemmPattern) error {
	e := build.On(g, nm, n.Name)
	ins := []*canonical.Value{p.a.Input(0), p.a.Input(1), p.a.Input(2), p.b.Input(0), p.b.Input(1), p.b.Input(2), p.c}
	if p.bias != nil {
		ins[6] = e.Const("bias_int32", p.bias)
	}
	out := n.Output(0)
	if p.q != nil {
		ins = append(ins, p.q.Input(1), p.q.Input(2))
		out = p.q.Output(0)
	}
	var attrs []*canonical.Attribute
	for _, a := range n.Attributes {
		if a.Name != "beta" {
			attrs = append(attrs, a)
		}
	}
	y := e.OpIn(msDomain, "QGemm", 1, ins, attrs...)
	if err := e.Err(); err != nil {
		return err
	}
	if err := replaceValue(g, out, y[0]); err != nil {
		return err
	}
	if p.q != nil {
		g.RemoveNode(p.q)
	}
	g.RemoveNode(n)
	return nil
}

// qgemmToQDQ replaces the com.microsoft QGemm n by DequantizeLinear of A
// and B (per column along B's axis 1, or 0 with transB), C through a
// DequantizeLinear at a_scale × b_scale, the Gemm, and a QuantizeLinear
// when the output is quantized (y_scale given).
func qgemmToQDQ(g *canonical.Graph, nm *canonical.Namer, n *canonical.Node, opset int64) error {
	if len(n.Inputs) < 6 {
		return fmt.Errorf("%d inputs, want 6 to 9", len(n.Inputs))
	}
	in := n.Input
	col := int64(1)
	if n.AttrInt("transB", 0) != 0 {
		col = 0
	}
	bAxis, err := perAxis(in(4), col, opset)
	if err != nil {
		return err
	}
	e := build.On(g, nm, n.Name)
	ins := []*canonical.Value{
		e.Op("DequantizeLinear", []*canonical.Value{in(0), in(1), in(2)}),
		e.Op("DequantizeLinear", []*canonical.Value{in(3), in(4), in(5)}, bAxis...),
	}
	if c := in(6); c != nil {
		if n.AttrFloat("alpha", 1) != 1 {
			return fmt.Errorf("a C with alpha %g has no QDQ form here", n.AttrFloat("alpha", 1))
		}
		cAxis, err := perAxis(in(4), -1, opset)
		if err != nil {
			return err
		}
		ins = append(ins, e.Op("DequantizeLinear", []*canonical.Value{c, biasScale(e, in(1), in(4))}, cAxis...))
	}
	y := e.Op("Gemm", ins, n.Attributes...)
	if ys := in(7); ys != nil {
		y = e.Op("QuantizeLinear", []*canonical.Value{y, ys, in(8)})
	}
	return replaceNode(g, e, n, y)
}
