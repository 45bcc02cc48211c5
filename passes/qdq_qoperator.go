package passes

import (
	"fmt"
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// QDQToQOperator is the reverse of QOperatorToQDQ: it rewrites each Conv
// and MatMul of m whose inputs are DequantizeLinear of 8-bit values and
// whose output goes (alone) to a QuantizeLinear as the QLinearConv or
// QLinearMatMul ONNX Runtime's QDQ transformer makes of it:
//
//	DequantizeLinear(x) ─┐
//	DequantizeLinear(w) ─┼─ Conv ─ [Relu] ─ QuantizeLinear ─> y
//	[DequantizeLinear(b: int32) or a float constant b] ─┘
//
// becomes QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point,
// y_scale, y_zero_point, b) writing y. A Relu between the node and the
// QuantizeLinear is kept only in the clamp of the quantization: it is
// dropped when the output's zero point is its type's minimum (Relu then
// changes nothing). Weights are per tensor or per output channel (Conv:
// axis 0; MatMul's B: its last axis); activations per tensor. A Conv bias
// given as a DequantizeLinear of int32 values at x_scale × w_scale (zero
// point 0) is taken as it is; a float constant bias (or an Identity of
// one) is quantized to int32 at that scale, rounding half to even (as
// ONNX Runtime's quantizer writes it).
//
// A Gemm between such DequantizeLinear inputs (B per tensor or per output
// column; C, with alpha = beta = 1, an int32 DequantizeLinear or a float
// constant as for Conv) becomes ONNX Runtime's com.microsoft QGemm, with
// the QuantizeLinear of its output when there is one, else writing float.
// Add, Mul, Sigmoid, LeakyRelu, GlobalAveragePool, AveragePool, Concat and
// Softmax between DequantizeLinear inputs and a QuantizeLinear output
// (directly or through a Relu the quantization implies, as above), all
// at scalar scales of one 8-bit type, become the com.microsoft QLinear op
// of the same name (qlinearOps; the model gains the com.microsoft opset).
// Nodes that do not fit stay QDQ. It returns a new model and the number of
// nodes rewritten; m is not changed.
func QDQToQOperator(m *canonical.Model) (*canonical.Model, int, error) {
	if m == nil || m.Graph == nil {
		return nil, 0, fmt.Errorf("qdq to qoperator: the model has no graph")
	}
	c, err := m.Clone()
	if err != nil {
		return nil, 0, fmt.Errorf("qdq to qoperator: %w", err)
	}
	g := c.Graph
	nm := canonical.NewNamer(c)
	done := 0
	for _, n := range slices.Clone(g.Nodes) {
		ok, err := qoperatorNodeOf(c, nm, n)
		if err != nil {
			_ = c.Close()
			return nil, 0, fmt.Errorf("qdq to qoperator: %s %q: %w", n.OpType, n.Name, err)
		}
		if ok {
			done++
		}
	}
	if done > 0 && c.Opset(msDomain) == 0 && slices.ContainsFunc(g.Nodes, func(n *canonical.Node) bool { return n.Domain == msDomain }) {
		c.SetOpset(msDomain, 1)
	}
	if done > 0 {
		if _, err := eliminateDead(c, Options{}); err != nil {
			_ = c.Close()
			return nil, 0, fmt.Errorf("qdq to qoperator: %w", err)
		}
		order, err := g.TopoSort()
		if err != nil {
			_ = c.Close()
			return nil, 0, fmt.Errorf("qdq to qoperator: %w", err)
		}
		g.Nodes = order
	}
	return c, done, nil
}

// qoperatorNodeOf rewrites n when it matches a QDQ pattern with a
// QOperator form, reporting whether it did.
func qoperatorNodeOf(c *canonical.Model, nm *canonical.Namer, n *canonical.Node) (bool, error) {
	g := c.Graph
	if isOp(n, "Conv") || isOp(n, "MatMul") {
		p, ok := matchQDQ(n)
		return ok, ifMatched(ok, func() error { return qoperatorOf(g, nm, n, p) })
	}
	if isOp(n, "Gemm") {
		p, ok := matchQGemm(n)
		return ok, ifMatched(ok, func() error { return qgemmOf(g, nm, n, p) })
	}
	o, ok := qlinearOf(n, true)
	if !ok {
		return false, nil
	}
	p, ok := msQLinearPattern(n, o)
	return ok, ifMatched(ok, func() error { return msQLinearNode(c, nm, n, o, p) })
}

// ifMatched runs rewrite when ok.
func ifMatched(ok bool, rewrite func() error) error {
	if !ok {
		return nil
	}
	return rewrite()
}

// qdqPattern is a matched Conv/MatMul: its DequantizeLinear inputs, the
// bias (Conv), the Relu dropped and the QuantizeLinear of its output.
type qdqPattern struct {
	x, w, b *canonical.Node // b: the bias's DequantizeLinear, or nil
	bias    *canonical.Tensor
	relu, q *canonical.Node
}

// eightBit reports whether v is int8 or uint8 by its constant or type.
func eightBit(v *canonical.Value) (canonical.DataType, bool) {
	dt := valueType(v)
	return dt, dt == canonical.Int8 || dt == canonical.Uint8
}

func valueType(v *canonical.Value) canonical.DataType {
	if v == nil {
		return 0
	}
	if v.Const != nil {
		return v.Const.DataType
	}
	if _, dt, ok := tensorDims(v); ok {
		return dt
	}
	if t := v.Type.GetTensorType(); t != nil && t.GetElemType() != 0 {
		return canonical.DataType(t.GetElemType())
	}
	if q := producer(v); isOp(q, "QuantizeLinear") {
		if q.Input(2) == nil {
			return canonical.Uint8
		}
		return valueType(q.Input(2))
	} else if z := qlinearOutputZeroPoint(q); z != nil {
		return valueType(z)
	}
	return 0
}

// qlinearOutputZeroPoint is the output zero point of a QOperator node n
// (whose output has its type), or nil.
func qlinearOutputZeroPoint(n *canonical.Node) *canonical.Value {
	switch {
	case isOp(n, "QLinearConv") || isOp(n, "QLinearMatMul"):
		return n.Input(7)
	case n == nil || n.Domain != msDomain:
		return nil
	case n.OpType == "QGemm":
		return n.Input(8)
	}
	if o, ok := qlinearOf(n, false); ok {
		if o.inputs == 0 {
			return n.Input(1)
		}
		return n.Input(3*o.inputs + 1)
	}
	return nil
}

// count is the number of elements of v (a constant, or a value of
// static shape), -1 when unknown.
func count(v *canonical.Value) int64 {
	if t := constOf(v); t != nil {
		n, err := t.NumElements()
		if err != nil {
			return -1
		}
		return n
	}
	dims, _, ok := tensorDims(v)
	if !ok {
		return -1
	}
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

// dimsOf is v's static shape (a constant's or its declared type's).
func dimsOf(v *canonical.Value) ([]int64, bool) {
	if t := constOf(v); t != nil {
		return t.Dims, true
	}
	dims, _, ok := tensorDims(v)
	return dims, ok
}

// perTensor reports whether a (De)QuantizeLinear's scale and zero point
// are constants of one value.
func perTensor(n *canonical.Node) bool {
	return count(n.Input(1)) == 1 && (n.Input(2) == nil || count(n.Input(2)) == 1)
}

// dqOf is the DequantizeLinear computing v from 8-bit values (with its
// zero point), or nil.
func dqOf(v *canonical.Value) *canonical.Node {
	d := producer(v)
	if !isOp(d, "DequantizeLinear") || d.Input(2) == nil {
		return nil
	}
	if _, ok := eightBit(d.Input(0)); !ok {
		return nil
	}
	return d
}

// weightAxis reports whether a weight DequantizeLinear d is per tensor,
// or per channel along axis want of a rank-r weight.
func weightAxis(d *canonical.Node, want int64) bool {
	if perTensor(d) {
		return true
	}
	dims, ok := dimsOf(d.Input(0))
	if !ok || len(dims) == 0 {
		return false
	}
	r := int64(len(dims))
	axis := d.AttrInt("axis", 1)
	if axis < 0 {
		axis += r
	}
	if want < 0 {
		want += r
	}
	n := count(d.Input(1))
	return axis == want && n == dims[want] && count(d.Input(2)) == n
}

// matchQDQ matches n (Conv or MatMul) with its DequantizeLinear inputs
// and the QuantizeLinear of its output.
func matchQDQ(n *canonical.Node) (qdqPattern, bool) {
	var p qdqPattern
	if p.x, p.w = dqOf(n.Input(0)), dqOf(n.Input(1)); p.x == nil || p.w == nil || !perTensor(p.x) {
		return p, false
	}
	wantAxis := int64(0)
	if isOp(n, "MatMul") {
		wantAxis = -1
		if len(n.Inputs) != 2 {
			return p, false
		}
		if !perTensor(p.w) {
			if dims, ok := dimsOf(p.w.Input(0)); !ok || len(dims) != 2 {
				return p, false // a per-column B must be a matrix
			}
		}
	}
	if !weightAxis(p.w, wantAxis) {
		return p, false
	}
	xt, _ := eightBit(p.x.Input(0))
	y := consumer(n.Output(0))
	if isOp(y, "Relu") {
		p.relu, y = y, consumer(y.Output(0))
	}
	if !isOp(y, "QuantizeLinear") || y.Input(0) == nil || y.Input(2) == nil || !perTensor(y) {
		return p, false
	}
	p.q = y
	if valueType(y.Input(2)) != xt {
		return p, false // ONNX Runtime's kernels write y of x's type
	}
	if p.relu != nil {
		zt := constOf(y.Input(2))
		if zt == nil {
			return p, false
		}
		z, err := zt.Int64s()
		if err != nil || len(z) != 1 || z[0] != qmin(zt.DataType) {
			return p, false
		}
	}
	if isOp(n, "Conv") && len(n.Inputs) > 2 && n.Input(2) != nil {
		b := n.Input(2)
		if d := producer(b); isOp(d, "DequantizeLinear") {
			if !biasMatches(d, p.x, p.w) {
				return p, false
			}
			p.b = d
		} else if t := constThroughIdentity(b); t != nil && t.DataType == canonical.Float {
			if _, ok := biasScales(p.x, p.w); !ok {
				return p, false
			}
			p.bias = t
		} else {
			return p, false
		}
	}
	return p, true
}

// constThroughIdentity is v's constant, or the constant an Identity
// chain computing v reads (torch's exporter shares a bias between Conv
// nodes through Identity).
func constThroughIdentity(v *canonical.Value) *canonical.Tensor {
	for range 8 {
		if t := constOf(v); t != nil {
			return t
		}
		p := producer(v)
		if !isOp(p, "Identity") {
			return nil
		}
		v = p.Input(0)
	}
	return nil
}

func qmin(dt canonical.DataType) int64 {
	if dt == canonical.Int8 {
		return -128
	}
	return 0
}

// biasScales is x_scale × w_scale per output channel, in float32 as the
// kernels compute it.
func biasScales(x, w *canonical.Node) ([]float32, bool) {
	xs, ok1 := floats(constOf(x.Input(1)))
	ws, ok2 := floats(constOf(w.Input(1)))
	if !ok1 || !ok2 || len(xs) != 1 {
		return nil, false
	}
	out := make([]float32, len(ws))
	for i, s := range ws {
		out[i] = float32(xs[0]) * float32(s)
	}
	return out, true
}

// biasMatches reports whether the bias DequantizeLinear d reads int32
// values at x_scale × w_scale (a Mul of the two, or its constant value)
// with zero point 0: QLinearConv's bias.
func biasMatches(d, x, w *canonical.Node) bool {
	if valueType(d.Input(0)) != canonical.Int32 {
		return false
	}
	if z := d.Input(2); z != nil {
		zt := constOf(z)
		if zt == nil {
			return false
		}
		zs, err := zt.Int64s()
		if err != nil || slices.ContainsFunc(zs, func(v int64) bool { return v != 0 }) {
			return false
		}
	}
	if m := producer(d.Input(1)); isOp(m, "Mul") && m.Input(0) == x.Input(1) && m.Input(1) == w.Input(1) {
		return true
	}
	want, ok := biasScales(x, w)
	got, ok2 := floats(constOf(d.Input(1)))
	if !ok || !ok2 {
		return false
	}
	if len(got) == 1 && len(want) > 1 {
		return false
	}
	for i, s := range want {
		g := got[0]
		if len(got) > 1 {
			if len(got) != len(want) {
				return false
			}
			g = got[i]
		}
		if float32(g) != s {
			return false
		}
	}
	return true
}

// quantizeBias is a float bias b as QLinearConv's int32 bias: b / (x_scale
// × w_scale) rounded half to even.
func quantizeBias(b *canonical.Tensor, x, w *canonical.Node) (*canonical.Tensor, error) {
	scales, ok := biasScales(x, w)
	v, ok2 := floats(b)
	if !ok || !ok2 || len(scales) != 1 && len(scales) != len(v) {
		return nil, fmt.Errorf("bias of %d values for %d weight scales", len(v), len(scales))
	}
	q := make([]float64, len(v))
	for i, f := range v {
		s := scales[0]
		if len(scales) > 1 {
			s = scales[i]
		}
		r := math.RoundToEven(f / float64(s))
		if s == 0 || math.IsNaN(r) || r < math.MinInt32 || r > math.MaxInt32 {
			return nil, fmt.Errorf("bias %g at scale %g does not fit int32", f, s)
		}
		q[i] = r
	}
	return canonical.NumberTensor("", canonical.Int32, slices.Clone(b.Dims), q), nil
}

// qoperatorOf replaces the matched pattern of n by its QOperator node.
func qoperatorOf(g *canonical.Graph, nm *canonical.Namer, n *canonical.Node, p qdqPattern) error {
	e := build.On(g, nm, n.Name)
	x, w, q := p.x, p.w, p.q
	ins := []*canonical.Value{x.Input(0), x.Input(1), x.Input(2), w.Input(0), w.Input(1), w.Input(2), q.Input(1), q.Input(2)}
	var y *canonical.Value
	if isOp(n, "Conv") {
		switch {
		case p.b != nil:
			ins = append(ins, p.b.Input(0))
		case p.bias != nil:
			bq, err := quantizeBias(p.bias, x, w)
			if err != nil {
				return err
			}
			ins = append(ins, e.Const("bias_int32", bq))
		}
		y = e.Op("QLinearConv", ins, slices.Clone(n.Attributes)...)
	} else {
		y = e.Op("QLinearMatMul", ins)
	}
	if err := e.Err(); err != nil {
		return err
	}
	out := q.Output(0)
	if err := replaceValue(g, out, y); err != nil {
		return err
	}
	g.RemoveNode(q)
	if p.relu != nil {
		g.RemoveNode(p.relu)
	}
	g.RemoveNode(n)
	return nil
}
