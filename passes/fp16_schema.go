package passes

import (
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
	"github.com/onnxconv/onnxconv/opset"
)

// schemaAllowsLow reports whether n's operator schema, at the version
// of its domain that m imports, admits dt for every input and output
// convertFloat would retype (retyped: the float32 values, and those
// already in dt). A node whose schema does not admit it (Where in
// bfloat16 before opset 16, for one) stays in float32 with Casts
// around it, as a blocked node does; so does a node whose schema is
// unknown, or whose target kernel does not run dt (runs, when set; see
// FP16Options.Runs).
func schemaAllowsLow(m *canonical.Model, n *canonical.Node, dt canonical.DataType, retyped func(*canonical.Value) bool,
	runs func(domain, op string, since int, param string, dt canonical.DataType) bool) bool {
	domain := opset.NormalizeDomain(n.Domain)
	s, ok := opset.Lookup(domain, n.OpType, int(m.Opset(domain)))
	if !ok {
		return false
	}
	want := "tensor(" + check.ElemTypeName(dt) + ")"
	allows := func(vals []*canonical.Value, formals []opset.FormalParameter) bool {
		for i, v := range vals {
			if v == nil || !retyped(v) {
				continue
			}
			f, ok := formalAt(formals, i)
			if !ok || !slices.Contains(s.AllowedTypes(f.TypeStr), want) {
				return false
			}
			if runs != nil && !runs(domain, n.OpType, s.SinceVersion, f.TypeStr, dt) {
				return false
			}
		}
		return true
	}
	return allows(n.Inputs, s.Inputs) && allows(n.Outputs, s.Outputs)
}

// formalAt is the formal parameter of the i-th actual value (the last,
// variadic one for those beyond).
func formalAt(fs []opset.FormalParameter, i int) (opset.FormalParameter, bool) {
	if i < len(fs) {
		return fs[i], true
	}
	if len(fs) > 0 && fs[len(fs)-1].Option == opset.Variadic {
		return fs[len(fs)-1], true
	}
	return opset.FormalParameter{}, false
}
