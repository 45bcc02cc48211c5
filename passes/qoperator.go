package passes

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// QOperatorToQDQ rewrites m's QLinearConv and QLinearMatMul nodes, and ONNX
// Runtime's com.microsoft QGemm and QLinear ops of qlinearOps (the
// QOperator form of a quantized model), as QDQ, the form ONNX Runtime's and
// PyTorch's quantizers write and the TFLite exporter reads: a
// DequantizeLinear of each quantized input (per channel along axis 0 for
// QLinearConv weights, along the last axis for QLinearMatMul's B, when
// their scale has more than one value), the float Conv or MatMul
// (QLinearConv's int32 bias through a DequantizeLinear at input scale ×
// weight scale), and a QuantizeLinear at the output's scale and zero point
// that keeps the output's name. It returns a new model and the number of
// nodes rewritten; m is not changed. The float computation rounds once at
// the end where the QOperator kernels round their integer accumulator, so
// an output can be one step apart.
func QOperatorToQDQ(m *canonical.Model) (*canonical.Model, int, error) {
	if m == nil || m.Graph == nil {
		return nil, 0, fmt.Errorf("qoperator to qdq: the model has no graph")
	}
	c, err := m.Clone()
	if err != nil {
		return nil, 0, fmt.Errorf("qoperator to qdq: %w", err)
	}
	g := c.Graph
	nm := canonical.NewNamer(c)
	done := 0
	for _, n := range slices.Clone(g.Nodes) {
		var err error
		o, ms := qlinearOf(n, false)
		switch {
		case isOp(n, "QLinearConv") || isOp(n, "QLinearMatMul"):
			err = qoperatorNode(g, nm, n, c.Opset(""))
		case n.Domain == msDomain && n.OpType == "QGemm":
			err = qgemmToQDQ(g, nm, n, c.Opset(""))
		case ms:
			err = msQLinearToQDQ(g, nm, n, o, c.Opset(""))
		default:
			continue
		}
		if err != nil {
			_ = c.Close()
			return nil, 0, fmt.Errorf("qoperator to qdq: %s %q: %w", n.OpType, n.Name, err)
		}
		done++
	}
	if done > 0 {
		order, err := g.TopoSort()
		if err != nil {
			_ = c.Close()
			return nil, 0, fmt.Errorf("qoperator to qdq: %w", err)
		}
		g.Nodes = order
	}
	return c, done, nil
}

// HasQOperator reports whether g has nodes QOperatorToQDQ rewrites.
func HasQOperator(g *canonical.Graph) bool {
	for _, n := range g.Nodes {
		if _, ms := qlinearOf(n, false); ms || isOp(n, "QLinearConv") || isOp(n, "QLinearMatMul") || n.Domain == msDomain && n.OpType == "QGemm" {
			return true
		}
	}
	return false
}

// perAxis is the axis attribute of a DequantizeLinear whose scale s (a
// constant or a value of static shape) has more than one value (none for
// one value); per-axis needs opset 13.
func perAxis(s *canonical.Value, axis int64, opset int64) ([]*canonical.Attribute, error) {
	dims, _, ok := tensorDims(s)
	if !ok {
		return nil, fmt.Errorf("scale %q has no static shape", valueName(s))
	}
	if len(dims) == 0 || len(dims) == 1 && dims[0] == 1 {
		return nil, nil
	}
	if opset < 13 {
		return nil, fmt.Errorf("the per-axis scale %q needs DequantizeLinear of opset 13 (the model has %d: convert it first, onnxconv opset --opset 13)", s.Name, opset)
	}
	return []*canonical.Attribute{canonical.IntAttr("axis", axis)}, nil
}

func valueName(v *canonical.Value) string {
	if v == nil {
		return "(none)"
	}
	return v.Name
}

// qoperatorNode replaces n (QLinearConv or QLinearMatMul) by its QDQ form.
func qoperatorNode(g *canonical.Graph, nm *canonical.Namer, n *canonical.Node, opset int64) error {
	e := build.On(g, nm, n.Name)
	in := n.Input
	var y *canonical.Value
	switch n.OpType {
	case "QLinearConv":
		if len(n.Inputs) < 8 {
			return fmt.Errorf("%d inputs, want 8 or 9", len(n.Inputs))
		}
		wAxis, err := perAxis(in(4), 0, opset)
		if err != nil {
			return err
		}
		xd := e.Op("DequantizeLinear", []*canonical.Value{in(0), in(1), in(2)})
		wd := e.Op("DequantizeLinear", []*canonical.Value{in(3), in(4), in(5)}, wAxis...)
		ins := []*canonical.Value{xd, wd}
		if b := in(8); b != nil {
			bs := biasScale(e, in(1), in(4))
			ins = append(ins, e.Op("DequantizeLinear", []*canonical.Value{b, bs}, wAxis...))
		}
		yf := e.Op("Conv", ins, slices.Clone(n.Attributes)...)
		y = e.Op("QuantizeLinear", []*canonical.Value{yf, in(6), in(7)})
	case "QLinearMatMul":
		if len(n.Inputs) != 8 {
			return fmt.Errorf("%d inputs, want 8", len(n.Inputs))
		}
		if aAxis, err := perAxis(in(1), -2, opset); err != nil || aAxis != nil {
			return fmt.Errorf("a per-row scale of A has no QDQ form here (%v)", err)
		}
		bAxis, err := perAxis(in(4), -1, opset)
		if err != nil {
			return err
		}
		ad := e.Op("DequantizeLinear", []*canonical.Value{in(0), in(1), in(2)})
		bd := e.Op("DequantizeLinear", []*canonical.Value{in(3), in(4), in(5)}, bAxis...)
		yf := e.Op("MatMul", []*canonical.Value{ad, bd})
		y = e.Op("QuantizeLinear", []*canonical.Value{yf, in(6), in(7)})
	}
	return replaceNode(g, e, n, y)
}

// replaceNode makes y, built by e, the value of n's output and removes n.
func replaceNode(g *canonical.Graph, e *build.Editor, n *canonical.Node, y *canonical.Value) error {
	if err := e.Err(); err != nil {
		return err
	}
	if err := replaceValue(g, n.Output(0), y); err != nil {
		return err
	}
	g.RemoveNode(n)
	return nil
}

// biasScale is the scale of QLinearConv's int32 bias, x_scale × w_scale:
// a constant when both are (computed in float32, as the kernels do), else
// a Mul.
func biasScale(e *build.Editor, xs, ws *canonical.Value) *canonical.Value {
	xt, wt := constOf(xs), constOf(ws)
	if xt == nil || wt == nil || xt.DataType != canonical.Float || wt.DataType != canonical.Float {
		return e.Op("Mul", []*canonical.Value{xs, ws})
	}
	x, okx := scalarValue(xt)
	w, okw := floats(wt)
	if !okx || !okw {
		return e.Op("Mul", []*canonical.Value{xs, ws})
	}
	v := make([]float64, len(w))
	for i, s := range w {
		v[i] = float64(float32(x) * float32(s))
	}
	return e.Const("bias_scale", canonical.NumberTensor("", canonical.Float, slices.Clone(wt.Dims), v))
}
