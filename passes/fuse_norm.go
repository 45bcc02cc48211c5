package passes

import (
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// otherInput returns the input of a binary node that is not v, or nil.
func otherInput(n *canonical.Node, v *canonical.Value) *canonical.Value {
	if len(n.Inputs) != 2 {
		return nil
	}
	if n.Inputs[0] == v {
		return n.Inputs[1]
	}
	if n.Inputs[1] == v {
		return n.Inputs[0]
	}
	return nil
}

// lastAxisMean reports whether n is a ReduceMean over the last axis only
// (of an input of rank r, when known) with keepdims.
func lastAxisMean(n *canonical.Node, rank int) bool {
	if !isOp(n, "ReduceMean") || n.AttrInt("keepdims", 1) != 1 {
		return false
	}
	axes := n.AttrInts("axes", nil)
	if axes == nil {
		if t := constOf(n.Input(1)); t != nil {
			a, err := t.Int64s()
			if err != nil {
				return false
			}
			axes = a
		}
	}
	if len(axes) != 1 {
		return false
	}
	return axes[0] == -1 || (rank > 0 && axes[0] == int64(rank-1))
}

// fusionScope prepares a fusion into an op of opset minOpset: the graph, a
// namer, and the nodes of type op (a copy of the list, which the fusion
// may change); no nodes when the model (or the target) is below
// minOpset. Value types are inferred first.
func fusionScope(m *canonical.Model, opts Options, minOpset int64, op string) (*canonical.Graph, *canonical.Namer, []*canonical.Node) {
	g := m.Graph
	if allowed(m, opts) < minOpset {
		return g, nil, nil
	}
	inferTypes(m)
	var nodes []*canonical.Node
	for _, n := range g.Nodes {
		if isOp(n, op) {
			nodes = append(nodes, n)
		}
	}
	return g, canonical.NewNamer(m), nodes
}

// allowed returns the highest ai.onnx opset fusions may use.
func allowed(m *canonical.Model, opts Options) int64 {
	v := m.Opset("")
	if opts.Opset > 0 && opts.Opset < v {
		v = opts.Opset
	}
	return v
}

// fuseLayerNorm replaces the decomposed layer normalization that exporters
// write below opset 17 by LayerNormalization (when the model's opset has
// it):
//
//	mean = ReduceMean(x, -1); d = Sub(x, mean); var = ReduceMean(Pow(d, 2), -1)
//	y = Add(Mul(Div(d, Sqrt(Add(var, eps))), gamma), beta)
func fuseLayerNorm(m *canonical.Model, opts Options) (bool, error) {
	g, nm, nodes := fusionScope(m, opts, 17, "ReduceMean")
	changed := false
	for _, rm := range nodes {
		if rm.Graph != g {
			continue
		}
		x := rm.Input(0)
		xd, xt, ok := tensorDims(x)
		if !ok || xt != canonical.Float || len(xd) == 0 || !lastAxisMean(rm, len(xd)) {
			continue
		}
		// Sub(x, mean), used by Pow and Div.
		if !singleUse(rm.Output(0)) {
			continue
		}
		sub := rm.Output(0).Uses()[0].Node
		if !isOp(sub, "Sub") || sub.Input(0) != x || sub.Input(1) != rm.Output(0) {
			continue
		}
		d := sub.Output(0)
		if len(d.Uses()) != 2 || isGraphOutput(d) {
			continue
		}
		var pow, div *canonical.Node
		for _, u := range d.Uses() {
			switch {
			case isOp(u.Node, "Pow") && u.Index == 0:
				pow = u.Node
			case isOp(u.Node, "Div") && u.Index == 0:
				div = u.Node
			}
		}
		if pow == nil || div == nil {
			continue
		}
		if e, ok := scalarValue(constOf(pow.Input(1))); !ok || e != 2 {
			continue
		}
		rm2 := consumer(pow.Output(0))
		if !lastAxisMean(rm2, len(xd)) {
			continue
		}
		addEps := consumer(rm2.Output(0))
		if !isOp(addEps, "Add") {
			continue
		}
		eps, ok := scalarValue(constOf(otherInput(addEps, rm2.Output(0))))
		if !ok {
			continue
		}
		sqrt := consumer(addEps.Output(0))
		if !isOp(sqrt, "Sqrt") || div.Input(1) != sqrt.Output(0) || !singleUse(sqrt.Output(0)) {
			continue
		}
		mul := consumer(div.Output(0))
		if !isOp(mul, "Mul") {
			continue
		}
		gamma := otherInput(mul, div.Output(0))
		gt := constOf(gamma)
		if gt == nil || gt.DataType != canonical.Float || len(gt.Dims) != 1 || gt.Dims[0] != xd[len(xd)-1] {
			continue
		}
		add := consumer(mul.Output(0))
		var beta *canonical.Value
		last := mul
		if isOp(add, "Add") {
			if bt := constOf(otherInput(add, mul.Output(0))); bt != nil && bt.DataType == canonical.Float && len(bt.Dims) == 1 && bt.Dims[0] == gt.Dims[0] {
				beta = otherInput(add, mul.Output(0))
				last = add
			}
		}
		inputs := []*canonical.Value{x, gamma}
		if beta != nil {
			inputs = append(inputs, beta)
		}
		name := rm.Name
		if name == "" {
			name = "LayerNorm"
		}
		e := build.On(g, nm, name)
		ln := e.Op("LayerNormalization", inputs, canonical.IntAttr("axis", -1), canonical.FloatAttr("epsilon", float32(eps)))
		if err := e.Err(); err != nil {
			return changed, err
		}
		ln.Type = last.Output(0).Type
		if !bypass(g, last.Output(0), ln) {
			removeNodes(g, e.Added...)
			continue
		}
		removeNodes(g, last)
		if last != mul {
			removeNodes(g, mul)
		}
		removeNodes(g, div, sqrt, addEps, rm2, pow, sub, rm)
		changed = true
	}
	return changed, nil
}

// fuseGelu replaces x*0.5*(1+Erf(x/sqrt(2))) by Gelu (opset >= 20).
func fuseGelu(m *canonical.Model, opts Options) (bool, error) {
	if allowed(m, opts) < 20 {
		return false, nil
	}
	g := m.Graph
	nm := canonical.NewNamer(m)
	changed := false
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Abs(b) }
	for _, erf := range append([]*canonical.Node(nil), g.Nodes...) {
		if erf.Graph != g || !isOp(erf, "Erf") {
			continue
		}
		scale := producer(erf.Input(0))
		if scale == nil || !singleUse(erf.Input(0)) || len(scale.Inputs) != 2 {
			continue
		}
		x := scale.Input(0)
		c, ok := scalarValue(constOf(scale.Input(1)))
		if !ok || !((isOp(scale, "Div") && near(c, math.Sqrt2)) || (isOp(scale, "Mul") && near(c, 1/math.Sqrt2))) {
			continue
		}
		add := consumer(erf.Output(0))
		if !isOp(add, "Add") {
			continue
		}
		if one, ok := scalarValue(constOf(otherInput(add, erf.Output(0)))); !ok || one != 1 {
			continue
		}
		m1 := consumer(add.Output(0))
		if !isOp(m1, "Mul") {
			continue
		}
		var last *canonical.Node
		var extra []*canonical.Node
		o := otherInput(m1, add.Output(0))
		switch {
		case o == x:
			// x * (1+erf) then * 0.5
			m2 := consumer(m1.Output(0))
			if !isOp(m2, "Mul") {
				continue
			}
			if h, ok := scalarValue(constOf(otherInput(m2, m1.Output(0)))); !ok || h != 0.5 {
				continue
			}
			last = m2
		case isOp(producer(o), "Mul") && singleUse(o):
			// (x*0.5) * (1+erf)
			hm := producer(o)
			if otherInput(hm, x) == nil {
				continue
			}
			if h, ok := scalarValue(constOf(otherInput(hm, x))); !ok || h != 0.5 {
				continue
			}
			last = m1
			extra = []*canonical.Node{hm}
		default:
			continue
		}
		name := erf.Name
		if name == "" {
			name = "Gelu"
		}
		e := build.On(g, nm, name)
		gl := e.Op("Gelu", []*canonical.Value{x})
		if err := e.Err(); err != nil {
			return changed, err
		}
		gl.Type = last.Output(0).Type
		if !bypass(g, last.Output(0), gl) {
			removeNodes(g, e.Added...)
			continue
		}
		removeNodes(g, last)
		if last != m1 {
			removeNodes(g, m1)
		}
		removeNodes(g, add, erf, scale)
		removeNodes(g, extra...)
		changed = true
	}
	return changed, nil
}
