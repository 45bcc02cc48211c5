package convert

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// builder emits the nodes that replace one node. New nodes and values are
// named after the node they replace; the replacement takes over the
// original output values' names, so consumers and graph outputs keep
// finding them.
type builder struct {
	*build.Editor
	sc *stepCtx
	to int // opset the emitted nodes must be valid at
	// dt is the element type of the data the replaced node computes on,
	// used for scalar constants; Undefined means "like the input" through
	// CastLike (opset >= 15) or float otherwise.
	dt canonical.DataType
}

func newBuilder(sc *stepCtx, to int) *builder {
	base := sc.n.Name
	if base == "" {
		base = sc.n.OpType
	}
	b := &builder{Editor: build.On(sc.g, sc.c.names, base), sc: sc, to: to}
	b.dt = elemType(sc.n.Input(0))
	return b
}

// op emits one node with one output and returns that output.
func (b *builder) op(opType string, inputs []*canonical.Value, attrs ...*canonical.Attribute) *canonical.Value {
	return b.Op(opType, inputs, attrs...)
}

// opN emits one node with n outputs.
func (b *builder) opN(opType string, inputs []*canonical.Value, n int, attrs ...*canonical.Attribute) []*canonical.Value {
	return b.OpN(opType, n, inputs, attrs...)
}

// scalar returns a scalar constant of the data's element type.
func (b *builder) scalar(v float64) *canonical.Value {
	return b.constF(nil, v)
}

// constF returns a floating constant of the data's element type.
func (b *builder) constF(dims []int64, vals ...float64) *canonical.Value {
	return b.Number(b.dataType(), dims, vals...)
}

// constI returns an int64 constant.
func (b *builder) constI(dims []int64, vals ...int64) *canonical.Value {
	return b.Int64s(dims, vals...)
}

// reduce emits a Reduce* op over axes in the form the target opset takes
// (axes as attribute before 18, or 13 for ReduceSum; as input after).
func (b *builder) reduce(op string, x *canonical.Value, axes []int64, keepdims bool) *canonical.Value {
	kd := int64(0)
	if keepdims {
		kd = 1
	}
	inputForm := b.to >= 18 || (op == "ReduceSum" && b.to >= 13)
	if inputForm {
		return b.op(op, []*canonical.Value{x, b.constI([]int64{int64(len(axes))}, axes...)}, canonical.IntAttr("keepdims", kd))
	}
	return b.op(op, []*canonical.Value{x}, canonical.IntsAttr("axes", axes...), canonical.IntAttr("keepdims", kd))
}

// unsqueeze emits Unsqueeze in the target's form.
func (b *builder) unsqueeze(x *canonical.Value, axes ...int64) *canonical.Value {
	if b.to >= 13 {
		return b.op("Unsqueeze", []*canonical.Value{x, b.constI([]int64{int64(len(axes))}, axes...)})
	}
	return b.op("Unsqueeze", []*canonical.Value{x}, canonical.IntsAttr("axes", axes...))
}

// finish replaces the node by the emitted nodes: outs[i] takes over the
// node's output i (nil leaves an unused output out).
func (b *builder) finish(outs ...*canonical.Value) error {
	if err := b.Err(); err != nil {
		return fmt.Errorf("building the replacement: %w", err)
	}
	sc := b.sc
	n, g := sc.n, sc.g
	for i, orig := range n.Outputs {
		if orig == nil {
			continue
		}
		if i >= len(outs) || outs[i] == nil {
			if len(orig.Uses()) > 0 || isGraphOutput(g, orig) {
				return blocked("", "output %d %q has no equivalent in the expansion", i, orig.Name)
			}
			continue
		}
	}
	idx := -1
	for i, m := range g.Nodes {
		if m == n {
			idx = i
		}
	}
	var at *canonical.Node
	if idx >= 0 && idx+1 < len(g.Nodes) {
		at = g.Nodes[idx+1]
	}
	inputs := append([]*canonical.Value(nil), n.Inputs...)
	for i, orig := range n.Outputs {
		if orig == nil || i >= len(outs) || outs[i] == nil {
			continue
		}
		g.ReplaceAllUsesWith(orig, outs[i])
	}
	g.RemoveNode(n)
	for i, orig := range n.Outputs {
		if orig == nil || i >= len(outs) || outs[i] == nil {
			continue
		}
		if err := g.RenameValue(outs[i], orig.Name); err != nil {
			return err
		}
		if outs[i].Type == nil {
			outs[i].Type = orig.Type
		}
	}
	g.MoveNodes(b.Added, at)
	// The node computing the result takes the replaced node's name.
	if len(b.Added) > 0 && n.Name != "" {
		sc.c.names.Release(b.Added[len(b.Added)-1].Name)
		b.Added[len(b.Added)-1].Name = n.Name
	}
	for _, in := range inputs {
		sc.dropIfUnused(in)
	}
	sc.replaced = b.Added
	return nil
}

// dataType is the element type of the data the replaced node computes on
// (float when unknown).
func (b *builder) dataType() canonical.DataType {
	if b.dt == canonical.Undefined {
		return canonical.Float
	}
	return b.dt
}

// typed returns a scalar constant of element type dt.
func (b *builder) typed(dt canonical.DataType, v float64) *canonical.Value {
	return b.Number(dt, nil, v)
}

// reduceAll emits a Reduce* op over every axis, to a scalar.
func (b *builder) reduceAll(op string, x *canonical.Value) *canonical.Value {
	return b.op(op, []*canonical.Value{x}, canonical.IntAttr("keepdims", 0))
}
