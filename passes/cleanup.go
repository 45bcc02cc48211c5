package passes

import (
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/infer"
)

// constantToInitializer turns Constant nodes of the main graph into
// initializers of the same name.
func constantToInitializer(m *canonical.Model, _ Options) (bool, error) {
	g := m.Graph
	changed := false
	for _, n := range append([]*canonical.Node(nil), g.Nodes...) {
		if !isOp(n, "Constant") || len(n.Outputs) != 1 || n.Outputs[0] == nil {
			continue
		}
		t := constantTensor(n)
		if t == nil {
			continue
		}
		out := n.Outputs[0]
		t.Name = out.Name
		g.RemoveNode(n)
		nv, err := g.AddInitializer(t)
		if err != nil {
			return changed, err
		}
		g.ReplaceAllUsesWith(out, nv)
		changed = true
	}
	return changed, nil
}

// constantTensor returns the value of a Constant node, or nil for the forms
// kept as nodes (sparse, strings).
func constantTensor(n *canonical.Node) *canonical.Tensor {
	for _, a := range n.Attributes {
		switch a.Name {
		case "value":
			if a.T == nil || a.T.IsExternal() {
				return nil
			}
			raw, err := a.T.Bytes()
			if err != nil || a.T.DataType == canonical.String {
				return nil
			}
			return canonical.NewTensor("", a.T.DataType, append([]int64{}, a.T.Dims...), raw)
		case "value_float":
			return canonical.Float32Tensor("", nil, []float32{a.F})
		case "value_floats":
			return canonical.Float32Tensor("", []int64{int64(len(a.Floats))}, a.Floats)
		case "value_int":
			return canonical.Int64Tensor("", nil, []int64{a.I})
		case "value_ints":
			return canonical.Int64Tensor("", []int64{int64(len(a.Ints))}, a.Ints)
		}
	}
	return nil
}

// inferTypes runs shape inference on m without adding value_info entries
// and returns the constants it found (nil on failure: the passes then work
// with the types the model declares).
func inferTypes(m *canonical.Model) map[*canonical.Value]*canonical.Tensor {
	res, err := infer.Infer(m, infer.Options{NoValueInfo: true})
	if err != nil || res == nil {
		return nil
	}
	return res.Constants
}

// bypass makes the uses of out use in instead, when that keeps the graph's
// interface: a graph output keeps its name. It reports whether it did.
func bypass(g *canonical.Graph, out, in *canonical.Value) bool {
	if out == nil || in == nil || out == in {
		return false
	}
	if isGraphOutput(out) {
		// in must take out's name: only a node output used by nothing
		// else that is an output can be renamed.
		if producer(in) == nil || isGraphOutput(in) {
			return false
		}
	}
	if err := replaceValue(g, out, in); err != nil {
		return false
	}
	return true
}

// eliminateNoop removes nodes that compute their input unchanged.
func eliminateNoop(m *canonical.Model, _ Options) (bool, error) {
	g := m.Graph
	inferTypes(m)
	changed := false
	for _, n := range append([]*canonical.Node(nil), g.Nodes...) {
		if n.Domain != "" && n.Domain != "ai.onnx" {
			continue
		}
		x := n.Input(0)
		y := n.Output(0)
		if x == nil || y == nil {
			continue
		}
		noop := false
		switch n.OpType {
		case "Identity":
			noop = true
		case "Dropout":
			// Inference: the output is the input when training_mode is
			// absent or a constant false, and the mask is unused.
			if mask := n.Output(1); mask != nil && (len(mask.Uses()) > 0 || isGraphOutput(mask)) {
				break
			}
			if tm := n.Input(2); tm != nil {
				if v, ok := scalarValue(constOf(tm)); !ok || v != 0 {
					break
				}
			}
			noop = true
		case "Cast":
			to := canonical.DataType(n.AttrInt("to", 0))
			noop = to != canonical.Undefined && elemType(x) == to
		case "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand":
			dx, tx, okx := tensorDims(x)
			dy, ty, oky := tensorDims(y)
			noop = okx && oky && tx == ty && sameDims(dx, dy)
		case "Transpose":
			perm := n.AttrInts("perm", nil)
			if isIdentityPerm(perm) {
				noop = true
				break
			}
			// Transpose of a Transpose whose permutations compose to
			// the identity: y is the first transpose's input.
			if p := producer(x); isOp(p, "Transpose") && perm != nil {
				p1 := p.AttrInts("perm", nil)
				if len(p1) == len(perm) {
					comp := make([]int64, len(perm))
					ok := true
					for i, k := range perm {
						if k < 0 || int(k) >= len(p1) {
							ok = false
							break
						}
						comp[i] = p1[k]
					}
					if ok && isIdentityPerm(comp) && bypass(g, y, p.Inputs[0]) {
						g.RemoveNode(n)
						changed = true
					}
				}
			}
			continue
		case "Add", "Sub", "Mul", "Div", "Pow":
			c := constOf(n.Input(1))
			unit := 0.0
			if n.OpType == "Mul" || n.OpType == "Div" || n.OpType == "Pow" {
				unit = 1
			}
			if c == nil || !allEqual(c, unit) {
				break
			}
			dx, tx, okx := tensorDims(x)
			dy, ty, oky := tensorDims(y)
			noop = okx && oky && tx == ty && sameDims(dx, dy)
		}
		if noop && bypass(g, y, x) {
			g.RemoveNode(n)
			changed = true
		}
	}
	return changed, nil
}

func isIdentityPerm(p []int64) bool {
	if p == nil {
		return false
	}
	for i, k := range p {
		if int64(i) != k {
			return false
		}
	}
	return true
}

// EliminateDead is the eliminate-dead pass for transforms outside this
// package: it removes the main graph's nodes whose outputs nothing uses and
// its unused initializers.
func EliminateDead(m *canonical.Model) error {
	_, err := eliminateDead(m, Options{})
	return err
}

// eliminateDead removes nodes of the main graph whose outputs nothing uses
// (repeatedly) and initializers nothing uses. Graph inputs and outputs are
// kept.
func eliminateDead(m *canonical.Model, _ Options) (bool, error) {
	g := m.Graph
	changed := false
	order, err := g.TopoSort()
	if err != nil {
		return false, err
	}
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		live := false
		for _, o := range n.Outputs {
			if o != nil && (len(o.Uses()) > 0 || isGraphOutput(o)) {
				live = true
				break
			}
		}
		if !live {
			g.RemoveNode(n)
			changed = true
		}
	}
	inputs := map[*canonical.Value]bool{}
	for _, v := range g.Inputs {
		inputs[v] = true
	}
	before := len(g.Initializers)
	g.RemoveInitializers(func(v *canonical.Value) bool {
		return !inputs[v] && len(v.Uses()) == 0 && !isGraphOutput(v)
	})
	if len(g.Initializers) != before {
		changed = true
	}
	return changed, nil
}

// pruneValueInfo drops value_info entries of values no longer defined in
// the main graph.
func pruneValueInfo(m *canonical.Model) {
	g := m.Graph
	kept := g.ValueInfo[:0]
	for _, v := range g.ValueInfo {
		if v != nil && g.Lookup(v.Name) == v && (producer(v) != nil || v.Const != nil) {
			kept = append(kept, v)
		}
	}
	g.ValueInfo = kept
}
