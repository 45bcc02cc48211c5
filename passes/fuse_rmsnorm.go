package passes

import (
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// fuseRMSNorm replaces the root-mean-square normalization that torch.onnx
// writes for Llama-style models (opset < 23 has no op for it) by
// RMSNormalization (opset >= 23):
//
//	r = Sqrt(Add(ReduceMean(Pow(x, 2), -1), eps))
//	y = Mul(scale, Mul(x, Div(1, r)))     (or Reciprocal(r), or Div(x, r))
func fuseRMSNorm(m *canonical.Model, opts Options) (bool, error) {
	g, nm, nodes := fusionScope(m, opts, 23, "Pow")
	changed := false
	for _, pow := range nodes {
		if pow.Graph != g || !singleUse(pow.Output(0)) {
			continue
		}
		if e, ok := scalarValue(constOf(pow.Input(1))); !ok || e != 2 {
			continue
		}
		x := pow.Input(0)
		// Dynamic dims (batch, sequence) are fine; the normalized last
		// one must be known to check the scale against it.
		xt, xd, ok, _ := canonical.TensorTypeOf(x.Type)
		if !ok || xt != canonical.Float || len(xd) == 0 || !xd[len(xd)-1].Known {
			continue
		}
		width := xd[len(xd)-1].Value
		rm := consumer(pow.Output(0))
		if !lastAxisMean(rm, len(xd)) || !singleUse(rm.Output(0)) {
			continue
		}
		addEps := consumer(rm.Output(0))
		if !isOp(addEps, "Add") || !singleUse(addEps.Output(0)) {
			continue
		}
		eps, ok := scalarValue(constOf(otherInput(addEps, rm.Output(0))))
		if !ok {
			continue
		}
		sqrt := consumer(addEps.Output(0))
		if !isOp(sqrt, "Sqrt") || !singleUse(sqrt.Output(0)) {
			continue
		}
		// x / r, as Div(x, r), or Mul(x, 1/r) with 1/r as Div(1, r) or
		// Reciprocal(r).
		var normed *canonical.Node
		var inv []*canonical.Node
		next := consumer(sqrt.Output(0))
		switch {
		case isOp(next, "Div") && next.Input(0) == x && next.Input(1) == sqrt.Output(0):
			normed = next
		case isOp(next, "Reciprocal") && singleUse(next.Output(0)):
			inv = []*canonical.Node{next}
		case isOp(next, "Div") && next.Input(1) == sqrt.Output(0) && singleUse(next.Output(0)):
			if one, ok := scalarValue(constOf(next.Input(0))); ok && one == 1 {
				inv = []*canonical.Node{next}
			}
		}
		if inv != nil {
			mul := consumer(inv[0].Output(0))
			if !isOp(mul, "Mul") || otherInput(mul, inv[0].Output(0)) != x {
				continue
			}
			normed = mul
		}
		if normed == nil || !singleUse(normed.Output(0)) {
			continue
		}
		scaleMul := consumer(normed.Output(0))
		if !isOp(scaleMul, "Mul") {
			continue
		}
		scale := otherInput(scaleMul, normed.Output(0))
		st := constOf(scale)
		if st == nil || st.DataType != canonical.Float || len(st.Dims) != 1 || st.Dims[0] != width {
			continue
		}
		name := pow.Name
		if name == "" {
			name = "RMSNorm"
		}
		e := build.On(g, nm, name)
		y := e.Op("RMSNormalization", []*canonical.Value{x, scale}, canonical.IntAttr("axis", -1), canonical.FloatAttr("epsilon", float32(eps)))
		if err := e.Err(); err != nil {
			return changed, err
		}
		y.Type = scaleMul.Output(0).Type
		if !bypass(g, scaleMul.Output(0), y) {
			removeNodes(g, e.Added...)
			continue
		}
		removeNodes(g, scaleMul, normed)
		removeNodes(g, inv...)
		removeNodes(g, sqrt, addEps, rm, pow)
		changed = true
	}
	return changed, nil
}
