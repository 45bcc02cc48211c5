package passes

import (
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// convWeights returns the Conv's constant float32 weights and bias (bias
// zeros when absent) and the output channel count.
func convWeights(conv *canonical.Node) (w, b []float64, oc int64, ok bool) {
	wt := constOf(conv.Input(1))
	if wt == nil || wt.DataType != canonical.Float || len(wt.Dims) < 3 {
		return nil, nil, 0, false
	}
	w, ok = floats(wt)
	if !ok {
		return nil, nil, 0, false
	}
	oc = wt.Dims[0]
	if bv := conv.Input(2); bv != nil {
		bt := constOf(bv)
		if bt == nil || bt.DataType != canonical.Float {
			return nil, nil, 0, false
		}
		if b, ok = floats(bt); !ok || int64(len(b)) != oc {
			return nil, nil, 0, false
		}
	} else {
		b = make([]float64, oc)
	}
	return w, b, oc, true
}

// setConvWeights replaces the Conv's weights and bias with new initializers.
func setConvWeights(g *canonical.Graph, nm *canonical.Namer, conv *canonical.Node, w, b []float64) error {
	wt := conv.Input(1).Const
	e := build.On(g, nm, conv.Output(0).Name)
	wv := e.Const("weight", canonical.NumberTensor("", canonical.Float, slices.Clone(wt.Dims), w))
	bv := e.Const("bias", canonical.NumberTensor("", canonical.Float, []int64{int64(len(b))}, b))
	if err := e.Err(); err != nil {
		return err
	}
	conv.SetInput(1, wv)
	conv.SetInput(2, bv)
	return nil
}

// fuseConvBN folds BatchNormalization (inference form) that follows a Conv
// into the Conv's weights and bias.
func fuseConvBN(m *canonical.Model, _ Options) (bool, error) {
	g := m.Graph
	nm := canonical.NewNamer(m)
	changed := false
	for _, conv := range append([]*canonical.Node(nil), g.Nodes...) {
		if !isOp(conv, "Conv") {
			continue
		}
		bn := consumer(conv.Output(0))
		if !isOp(bn, "BatchNormalization") || bn.Input(0) != conv.Output(0) || bn.AttrInt("training_mode", 0) != 0 {
			continue
		}
		extra := false
		for _, o := range bn.Outputs[1:] {
			if o != nil && (len(o.Uses()) > 0 || isGraphOutput(o)) {
				extra = true
			}
		}
		if extra {
			continue
		}
		w, b, oc, ok := convWeights(conv)
		if !ok {
			continue
		}
		var p [4][]float64
		for i := range 4 {
			t := constOf(bn.Input(i + 1))
			if p[i], ok = floats(t); !ok || int64(len(p[i])) != oc {
				break
			}
		}
		if !ok {
			continue
		}
		eps := float64(bn.AttrFloat("epsilon", 1e-5))
		per := int64(len(w)) / oc
		for c := range oc {
			s := p[0][c] / math.Sqrt(p[3][c]+eps)
			for k := range per {
				w[c*per+k] *= s
			}
			b[c] = (b[c]-p[2][c])*s + p[1][c]
		}
		if err := setConvWeights(g, nm, conv, w, b); err != nil {
			return changed, err
		}
		if !bypass(g, bn.Output(0), conv.Output(0)) {
			return changed, nil
		}
		g.RemoveNode(bn)
		changed = true
	}
	return changed, nil
}

// perChannel returns the values of a constant that broadcasts as one value
// per output channel of a Conv output of rank r: shape [C,1,..], [1,C,1,..]
// or a single value.
func perChannel(t *canonical.Tensor, oc int64, r int) ([]float64, bool) {
	f, ok := floats(t)
	if !ok || t.DataType != canonical.Float {
		return nil, false
	}
	if len(f) == 1 && len(t.Dims) <= r {
		out := make([]float64, oc)
		for i := range out {
			out[i] = f[0]
		}
		return out, true
	}
	if int64(len(f)) != oc || len(t.Dims) > r || len(t.Dims) < r-1 {
		return nil, false
	}
	// The channel axis is rank-(r-1) from the end... i.e. dim index
	// len(dims)-(r-1); every other dim is 1.
	ch := len(t.Dims) - (r - 1)
	for i, d := range t.Dims {
		if i == ch {
			if d != oc {
				return nil, false
			}
		} else if d != 1 {
			return nil, false
		}
	}
	return f, true
}

// fuseConvAddMul folds Add (into the bias) or Mul (into weights and bias)
// of a per-channel constant that follows a Conv.
func fuseConvAddMul(m *canonical.Model, _ Options) (bool, error) {
	g := m.Graph
	nm := canonical.NewNamer(m)
	changed := false
	for _, conv := range append([]*canonical.Node(nil), g.Nodes...) {
		if !isOp(conv, "Conv") || g != conv.Graph {
			continue
		}
		for {
			op := consumer(conv.Output(0))
			if !isOp(op, "Add") && !isOp(op, "Mul") {
				break
			}
			other := op.Input(1)
			if op.Input(1) == conv.Output(0) {
				other = op.Input(0)
			}
			w, b, oc, ok := convWeights(conv)
			if !ok {
				break
			}
			r := len(conv.Input(1).Const.Dims)
			c, ok := perChannel(constOf(other), oc, r)
			if !ok {
				break
			}
			if op.OpType == "Add" {
				for i := range b {
					b[i] += c[i]
				}
			} else {
				per := int64(len(w)) / oc
				for i := range oc {
					for k := range per {
						w[i*per+k] *= c[i]
					}
					b[i] *= c[i]
				}
			}
			if err := setConvWeights(g, nm, conv, w, b); err != nil {
				return changed, err
			}
			if !bypass(g, op.Output(0), conv.Output(0)) {
				return changed, nil
			}
			g.RemoveNode(op)
			changed = true
		}
	}
	return changed, nil
}

// fuseMatMulAdd turns MatMul(A, B) + C into Gemm(A, B, C) when B is a 2-D
// float constant and C a constant that Gemm broadcasts. A 2-D A is used as
// is. An A of higher rank with a static shape [d0, .., K] is flattened to
// [d0*..*dk, K] and the Gemm's output reshaped back to [d0, .., N], as ONNX
// Runtime's MatMulAddFusion does (C then is a scalar, [N], [1] or [1, N]);
// when A already comes from a Reshape used only here, that Reshape flattens
// to 2-D instead of a new one. Reshape pairs the rewrite leaves (Reshape of
// a Reshape, and Reshape / unary elementwise op / Reshape back) collapse.
func fuseMatMulAdd(m *canonical.Model, opts Options) (bool, error) {
	g := m.Graph
	inferTypes(m)
	nm := canonical.NewNamer(m)
	changed := false
	for _, mm := range append([]*canonical.Node(nil), g.Nodes...) {
		if !isOp(mm, "MatMul") || mm.Graph != g {
			continue
		}
		add := consumer(mm.Output(0))
		if !isOp(add, "Add") || isGraphOutput(mm.Output(0)) {
			continue
		}
		ad, at, ok := tensorDims(mm.Input(0))
		bt := constOf(mm.Input(1))
		if !ok || len(ad) < 2 || bt == nil || len(bt.Dims) != 2 || at != canonical.Float || bt.DataType != canonical.Float || ad[len(ad)-1] != bt.Dims[0] {
			continue
		}
		other := otherInput(add, mm.Output(0))
		ct := constOf(other)
		if ct == nil || ct.DataType != canonical.Float {
			continue
		}
		k, ndim := bt.Dims[0], bt.Dims[1]
		mdim := int64(1)
		for _, d := range ad[:len(ad)-1] {
			mdim *= d
		}
		flat := len(ad) > 2
		switch {
		case len(ct.Dims) == 0:
		case len(ct.Dims) == 1 && (ct.Dims[0] == ndim || ct.Dims[0] == 1):
		case len(ct.Dims) == 2 && ct.Dims[0] == 1 && (ct.Dims[1] == 1 || ct.Dims[1] == ndim):
		case !flat && len(ct.Dims) == 2 && ct.Dims[0] == mdim && (ct.Dims[1] == 1 || ct.Dims[1] == ndim):
		default:
			continue
		}
		name := mm.Name
		if name == "" {
			name = "Gemm"
		}
		e := build.On(g, nm, name)
		undo := func() {
			for _, n := range e.Added {
				g.RemoveNode(n)
			}
		}
		a := mm.Input(0)
		if flat {
			a = flatten2D(e, a, mdim, k)
		}
		out := e.Op("Gemm", []*canonical.Value{a, mm.Input(1), other})
		if flat && out != nil {
			out.Type = canonical.TensorType(canonical.Float, []int64{mdim, ndim})
			od := append(append([]int64(nil), ad[:len(ad)-1]...), ndim)
			out = e.Op("Reshape", []*canonical.Value{out, e.Int64s([]int64{int64(len(od))}, od...)})
		}
		if err := e.Err(); err != nil {
			undo()
			return changed, err
		}
		out.Type = add.Output(0).Type
		if !bypass(g, add.Output(0), out) {
			undo()
			continue
		}
		removeNodes(g, add, mm)
		changed = true
	}
	if changed {
		collapseReshapes(g)
	}
	return changed, nil
}

// flatten2D returns a (static dims, last K) as [m, k]: the input of the
// Reshape producing a when that already is [m, k], that Reshape retargeted
// when a is used only by the caller, or a new Reshape added by e.
func flatten2D(e *build.Editor, a *canonical.Value, m, k int64) *canonical.Value {
	if p := producer(a); isOp(p, "Reshape") && p.Graph == e.G && singleUse(a) && !isGraphOutput(a) {
		if d, _, ok := tensorDims(p.Input(0)); ok && sameDims(d, []int64{m, k}) {
			return p.Input(0)
		}
	}
	r := e.Op("Reshape", []*canonical.Value{a, e.Int64s([]int64{2}, m, k)})
	if r != nil {
		r.Type = canonical.TensorType(canonical.Float, []int64{m, k})
	}
	return r
}

// reshapeCommutes are unary elementwise ops (with only constant extra
// inputs) that give the same result on a reshaped input.
var reshapeCommutes = map[string]bool{
	"Relu": true, "Gelu": true, "Erf": true, "Tanh": true, "Sigmoid": true, "HardSigmoid": true,
	"HardSwish": true, "LeakyRelu": true, "Elu": true, "Selu": true, "Softplus": true,
	"Softsign": true, "Exp": true, "Neg": true, "Abs": true, "Sqrt": true, "Clip": true,
}

// collapseReshapes removes Reshape pairs: Reshape(Reshape(x)) reshapes x
// directly (the inner one used only there), and Reshape(U(Reshape(x)))
// with U in reshapeCommutes and the outer shape x's becomes U(x). Shapes
// must be static.
func collapseReshapes(g *canonical.Graph) {
	for _, r2 := range append([]*canonical.Node(nil), g.Nodes...) {
		if !isOp(r2, "Reshape") || r2.Graph != g || r2.AttrInt("allowzero", 0) != 0 {
			continue
		}
		yd, _, ok := tensorDims(r2.Output(0))
		if !ok {
			continue
		}
		mid := r2.Input(0)
		if r1 := producer(mid); isOp(r1, "Reshape") && r1.Graph == g && singleUse(mid) && !isGraphOutput(mid) {
			x := r1.Input(0)
			if xd, _, ok := tensorDims(x); ok && sameDims(xd, yd) {
				if bypass(g, r2.Output(0), x) {
					removeNodes(g, r2, r1)
				}
				continue
			}
			r2.SetInput(0, x)
			g.RemoveNode(r1)
			continue
		}
		u := producer(mid)
		if u == nil || u.Graph != g || !reshapeCommutes[u.OpType] || (u.Domain != "" && u.Domain != "ai.onnx") ||
			len(u.Outputs) != 1 || !singleUse(mid) || isGraphOutput(mid) {
			continue
		}
		extra := true
		for _, in := range u.Inputs[1:] {
			if in != nil {
				if t := constOf(in); t == nil || len(t.Dims) != 0 {
					extra = false
				}
			}
		}
		r1 := producer(u.Input(0))
		if !extra || !isOp(r1, "Reshape") || r1.Graph != g || !singleUse(u.Input(0)) || isGraphOutput(u.Input(0)) {
			continue
		}
		x := r1.Input(0)
		if xd, _, ok := tensorDims(x); !ok || !sameDims(xd, yd) {
			continue
		}
		u.SetInput(0, x)
		mid.Type = r2.Output(0).Type
		if bypass(g, r2.Output(0), mid) {
			removeNodes(g, r2, r1)
		}
	}
}
