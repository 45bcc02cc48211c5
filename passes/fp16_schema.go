package passes

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
	"github.com/onnxconv/onnxconv/onnxspec"
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
	domain := onnxspec.NormalizeDomain(n.Domain)
	s, ok := onnxspec.Lookup(domain, n.OpType, int(m.Opset(domain)))
	if !ok {
		return false
	}
	want := "tensor(" + check.ElemTypeName(dt) + ")"
	allows := func(vals []*canonical.Value, formals []onnxspec.FormalParameter) bool {
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
func formalAt(fs []onnxspec.FormalParameter, i int) (onnxspec.FormalParameter, bool) {
	if i < len(fs) {
		return fs[i], true
	}
	if len(fs) > 0 && fs[len(fs)-1].Option == onnxspec.Variadic {
		return fs[len(fs)-1], true
	}
	return onnxspec.FormalParameter{}, false
}

// castAdmits returns an error when Cast at m's ai.onnx opset cannot
// convert to and from dt (bfloat16 before opset 13): every conversion
// needs such Casts, at the graph's edges or around the nodes kept in
// float32, so the result could not pass the checker.
func castAdmits(m *canonical.Model, dt canonical.DataType) error {
	want := "tensor(" + check.ElemTypeName(dt) + ")"
	admits := func(s *onnxspec.Schema) bool {
		for _, f := range s.Inputs {
			if !slices.Contains(s.AllowedTypes(f.TypeStr), want) {
				return false
			}
		}
		for _, f := range s.Outputs {
			if !slices.Contains(s.AllowedTypes(f.TypeStr), want) {
				return false
			}
		}
		return true
	}
	ver := int(m.Opset(""))
	if s, ok := onnxspec.Lookup("", "Cast", ver); ok && admits(s) {
		return nil
	}
	for _, s := range onnxspec.Versions("", "Cast") {
		if s.SinceVersion > ver && admits(s) {
			return fmt.Errorf("%s needs ai.onnx opset %d or later (Cast to and from %s), the model imports opset %d: convert it first (onnxconv opset IN OUT --opset %d)",
				check.ElemTypeName(dt), s.SinceVersion, check.ElemTypeName(dt), ver, s.SinceVersion)
		}
	}
	return fmt.Errorf("no Cast of ai.onnx converts to and from %s (the model imports opset %d)", check.ElemTypeName(dt), ver)
}

// idleNodes returns the nodes convertFloat would compute in dt for
// nothing: every float input a constant (a weight), every float output
// read only by nodes that stay float32 and none a graph output. Computed
// in dt, such a node (an Identity sharing a weight between layers) adds a
// low-precision copy of the weight and a Cast back, and the float32
// weight stays for its other readers.
func idleNodes(m *canonical.Model, order []*canonical.Node, dt canonical.DataType, block map[string]bool, keep map[int]bool,
	low map[*canonical.Value]bool, runs func(domain, op string, since int, param string, dt canonical.DataType) bool) map[*canonical.Node]bool {
	retyped := func(v *canonical.Value) bool { return low[v] || elemType(v) == canonical.Float }
	converts := map[*canonical.Node]bool{}
	for i, n := range order {
		if keep[i] || block[n.OpType] || (n.Domain != "" && n.Domain != "ai.onnx") || len(n.Subgraphs()) > 0 {
			continue
		}
		if slices.ContainsFunc(n.Inputs, retyped) && schemaAllowsLow(m, n, dt, retyped, runs) {
			converts[n] = true
		}
	}
	outputs := map[*canonical.Value]bool{}
	for _, o := range m.Graph.Outputs {
		outputs[o] = true
	}
	idle := map[*canonical.Node]bool{}
	for _, n := range order {
		if !converts[n] {
			continue
		}
		weights := true
		for _, in := range n.Inputs {
			if in != nil && retyped(in) && (low[in] || constOf(in) == nil) {
				weights = false
			}
		}
		read := false
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			if outputs[o] {
				read = true
			}
			for _, u := range o.Uses() {
				if converts[u.Node] {
					read = true
				}
			}
		}
		if weights && !read {
			idle[n] = true
		}
	}
	return idle
}
