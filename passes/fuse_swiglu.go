package passes

import (
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// fuseSwiGLU replaces the SiLU-gated product of a Llama-style MLP, as
// torch.onnx writes F.silu(gate) * up,
//
//	y = Mul(Mul(a, Sigmoid(a)), b)      (either operand order)
//
// by SwiGLU(a, b) (opset >= 28; alpha 1). SwiGLU does not broadcast, so a
// and b must have the same shape: the same dims (known, or the same
// symbolic dim), or MatMuls of one input by constant weights of one shape
// (gate_proj and up_proj).
func fuseSwiGLU(m *canonical.Model, opts Options) (bool, error) {
	g, nm, nodes := fusionScope(m, opts, 28, "Sigmoid")
	changed := false
	for _, sg := range nodes {
		if sg.Graph != g {
			continue
		}
		a := sg.Input(0)
		silu := consumer(sg.Output(0))
		if !isOp(silu, "Mul") || otherInput(silu, sg.Output(0)) != a || !singleUse(silu.Output(0)) {
			continue
		}
		prod := consumer(silu.Output(0))
		if !isOp(prod, "Mul") {
			continue
		}
		b := otherInput(prod, silu.Output(0))
		if b == nil || !sameShape(a, b) {
			continue
		}
		name := prod.Name
		if name == "" {
			name = "SwiGLU"
		}
		e := build.On(g, nm, name)
		y := e.Op("SwiGLU", []*canonical.Value{a, b})
		if err := e.Err(); err != nil {
			return changed, err
		}
		y.Type = prod.Output(0).Type
		if !bypass(g, prod.Output(0), y) {
			removeNodes(g, e.Added...)
			continue
		}
		removeNodes(g, prod, silu, sg)
		changed = true
	}
	return changed, nil
}

// sameShape reports whether a and b are float tensors of one shape: the
// same rank with each dim the same known size or the same named dim, or
// MatMuls of one input by constant weights of the same dims.
func sameShape(a, b *canonical.Value) bool {
	at, ad, aok, _ := canonical.TensorTypeOf(a.Type)
	bt, bd, bok, _ := canonical.TensorTypeOf(b.Type)
	if aok && bok && at == bt && len(ad) == len(bd) && len(ad) > 0 {
		same := true
		for i := range ad {
			same = same && ad[i].Same(bd[i])
		}
		if same {
			return at == canonical.Float || at == canonical.Float16 || at == canonical.Double || at == canonical.BFloat16
		}
	}
	pa, pb := producer(a), producer(b)
	if !isOp(pa, "MatMul") || !isOp(pb, "MatMul") || pa.Input(0) != pb.Input(0) {
		return false
	}
	wa, wb := constOf(pa.Input(1)), constOf(pb.Input(1))
	return wa != nil && wb != nil && wa.DataType == wb.DataType && len(wa.Dims) == 2 && sameDims(wa.Dims, wb.Dims)
}
