package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// float16 as ONNX Runtime's CPU provider computes it (Options.Float16AsORT).
//
// The executor otherwise rounds every float16 result to float16 where it
// leaves a kernel or a GoMLX segment. ONNX Runtime's CPU provider has
// float16 kernels for almost nothing but data movement on x86-64: its
// InsertCastTransformer puts a Cast to float32 before and a Cast back
// after every other node with a float16 input (and forces the float16
// node isolated between two such nodes to float32 too), then
// RemoveDuplicateCastTransformer removes every float32→float16→float32
// pair between them (it groups float16 and float32 as one precision), the
// model's own Casts included. So a float16 graph runs in float32 from its
// inputs to its outputs, and only a float16 graph output is rounded.
// ortFloat16 rewrites a copy of the model that way: float16 initializers
// and Constants become float32 (exactly), every float16 value inside
// float32, a Cast to float16 inside a Cast to float32, a float16 graph
// input is cast to float32 once, and a float16 graph output is the Cast
// of its float32 value.

// ortFloat16 returns the rewritten copy of m and true, or m and false
// when its main graph has no float16 value or when a node holds a
// subgraph (whose captured values would have to change with it).
func ortFloat16(m *canonical.Model) (*canonical.Model, bool, error) {
	isF16 := func(v *canonical.Value) bool {
		if v == nil || v.Type == nil {
			return false
		}
		dt, _, _, ok := canonical.TensorTypeOf(v.Type)
		return ok && dt == canonical.Float16
	}
	// Float16 enters by a Cast, an initializer, a Constant or an input
	// (values inside need not declare their types).
	any16 := false
	for _, n := range m.Graph.Nodes {
		if len(n.Subgraphs()) > 0 {
			return m, false, nil
		}
		for _, v := range n.Outputs {
			any16 = any16 || isF16(v)
		}
		if a := n.Attr("value"); n.OpType == "Constant" && a != nil && a.T != nil && a.T.DataType == canonical.Float16 ||
			n.OpType == "Cast" && n.AttrInt("to", 0) == int64(canonical.Float16) {
			any16 = true
		}
	}
	for _, v := range m.Graph.Inputs {
		any16 = any16 || isF16(v) || v.Const != nil && v.Const.DataType == canonical.Float16
	}
	if !any16 {
		return m, false, nil
	}
	c, err := m.Clone()
	if err != nil {
		return nil, false, fmt.Errorf("float16 as ONNX Runtime: %w", err)
	}
	g := c.Graph
	toF32 := func(v *canonical.Value) {
		_, dims, hasShape, _ := canonical.TensorTypeOf(v.Type)
		if hasShape {
			v.Type = canonical.TensorTypeDims(canonical.Float, dims)
		} else {
			v.Type = canonical.TensorTypeNoShape(canonical.Float)
		}
	}
	f32Tensor := func(t *canonical.Tensor) (*canonical.Tensor, error) {
		f, err := t.Float32s()
		if err != nil {
			return nil, err
		}
		return canonical.Float32Tensor(t.Name, t.Dims, f), nil
	}
	output := map[*canonical.Value]bool{}
	for _, v := range g.Outputs {
		output[v] = true
	}
	for _, v := range g.Initializers {
		if v.Const != nil && v.Const.DataType == canonical.Float16 {
			t, err := f32Tensor(v.Const)
			if err != nil {
				return nil, false, fmt.Errorf("float16 as ONNX Runtime: initializer %q: %w", v.Name, err)
			}
			v.Const = t
			toF32(v)
		}
	}
	var first *canonical.Node
	if len(g.Nodes) > 0 {
		first = g.Nodes[0]
	}
	for _, v := range g.Inputs {
		if v.Const != nil || !isF16(v) {
			continue
		}
		uses := append([]canonical.Use{}, v.Uses()...)
		cast, err := g.AddNode(v.Name+"/float32", "", "Cast", []*canonical.Value{v}, []string{v.Name + "/float32"},
			canonical.IntAttr("to", int64(canonical.Float)))
		if err != nil {
			return nil, false, fmt.Errorf("float16 as ONNX Runtime: input %q: %w", v.Name, err)
		}
		g.MoveNodes([]*canonical.Node{cast}, first)
		w := cast.Outputs[0]
		w.Type = v.Type
		toF32(w)
		for _, u := range uses {
			u.Node.SetInput(u.Index, w)
		}
	}
	nodes := append([]*canonical.Node{}, g.Nodes...)
	for _, n := range nodes {
		switch n.OpType {
		case "Cast":
			if n.AttrInt("to", 0) == int64(canonical.Float16) && !output[n.Outputs[0]] {
				n.SetAttr(canonical.IntAttr("to", int64(canonical.Float)))
			}
		case "Constant":
			if a := n.Attr("value"); a != nil && a.T != nil && a.T.DataType == canonical.Float16 {
				t, err := f32Tensor(a.T)
				if err != nil {
					return nil, false, fmt.Errorf("float16 as ONNX Runtime: Constant %q: %w", n.Name, err)
				}
				a.T = t
			}
		}
		for _, v := range n.Outputs {
			if !isF16(v) {
				continue
			}
			if !output[v] {
				toF32(v)
				continue
			}
			if n.OpType == "Cast" {
				continue // rounds to float16 as the output is
			}
			// The node writes a float32 value; the graph output is its
			// Cast to float16, under the output's name.
			name, typ := v.Name, v.Type
			if err := g.RenameValue(v, name+"/float32"); err != nil {
				return nil, false, fmt.Errorf("float16 as ONNX Runtime: output %q: %w", name, err)
			}
			toF32(v)
			cast, err := g.AddNode(name+"/float16", "", "Cast", []*canonical.Value{v}, []string{name},
				canonical.IntAttr("to", int64(canonical.Float16)))
			if err != nil {
				return nil, false, fmt.Errorf("float16 as ONNX Runtime: output %q: %w", name, err)
			}
			cast.Outputs[0].Type = typ
			for i, o := range g.Outputs {
				if o == v {
					g.Outputs[i] = cast.Outputs[0]
				}
			}
		}
	}
	return c, true, nil
}
