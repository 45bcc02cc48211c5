package passes

import (
	"math"

	"github.com/onnxconv/onnxconv/canonical"
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
	nw, err := floatTensor("", canonical.Float, wt.Dims, w)
	if err != nil {
		return err
	}
	wv, err := addConst(g, nm, conv.Input(1).Name+"_fused", nw)
	if err != nil {
		return err
	}
	nb, err := floatTensor("", canonical.Float, []int64{int64(len(b))}, b)
	if err != nil {
		return err
	}
	base := conv.Output(0).Name + "_bias"
	if conv.Input(2) != nil {
		base = conv.Input(2).Name + "_fused"
	}
	bv, err := addConst(g, nm, base, nb)
	if err != nil {
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

// fuseMatMulAdd turns MatMul(A, B) + C into Gemm(A, B, C) when A is 2-D,
// B a 2-D constant and C a constant that Gemm broadcasts.
func fuseMatMulAdd(m *canonical.Model, opts Options) (bool, error) {
	g := m.Graph
	inferTypes(m)
	nm := canonical.NewNamer(m)
	changed := false
	for _, mm := range append([]*canonical.Node(nil), g.Nodes...) {
		if !isOp(mm, "MatMul") {
			continue
		}
		add := consumer(mm.Output(0))
		if !isOp(add, "Add") {
			continue
		}
		ad, at, ok := tensorDims(mm.Input(0))
		bt := constOf(mm.Input(1))
		if !ok || len(ad) != 2 || bt == nil || len(bt.Dims) != 2 || at != canonical.Float || bt.DataType != canonical.Float {
			continue
		}
		other := add.Input(1)
		if other == mm.Output(0) {
			other = add.Input(0)
		}
		ct := constOf(other)
		if ct == nil || ct.DataType != canonical.Float {
			continue
		}
		mdim, ndim := ad[0], bt.Dims[1]
		switch {
		case len(ct.Dims) == 1 && (ct.Dims[0] == ndim || ct.Dims[0] == 1):
		case len(ct.Dims) == 2 && (ct.Dims[0] == 1 || ct.Dims[0] == mdim) && (ct.Dims[1] == 1 || ct.Dims[1] == ndim):
		case len(ct.Dims) == 0:
		default:
			continue
		}
		name := mm.Name
		if name == "" {
			name = "Gemm"
		}
		gemm, err := g.AddNode(nm.Fresh(name+"_gemm"), "", "Gemm", []*canonical.Value{mm.Input(0), mm.Input(1), other}, []string{nm.Fresh(add.Output(0).Name + "_gemm")})
		if err != nil {
			return changed, err
		}
		gemm.Output(0).Type = add.Output(0).Type
		if !bypass(g, add.Output(0), gemm.Output(0)) {
			g.RemoveNode(gemm)
			continue
		}
		removeNodes(g, add, mm)
		changed = true
	}
	return changed, nil
}
