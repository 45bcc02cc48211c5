package build

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// Editor adds nodes and constants to an existing canonical graph, as a
// transform that replaces a node does: values are *canonical.Values, linked
// as they are added; names are fresh in the model's Namer and start with
// Base. The first error is kept (Err) and later calls do nothing, so a
// chain of Op calls checks once at the end.
type Editor struct {
	G     *canonical.Graph
	Names *canonical.Namer
	// Base starts the names of new nodes ("<Base>_<op>") and constants
	// ("<Base>_const").
	Base string
	// Added lists the nodes added, in order.
	Added []*canonical.Node
	err   error
}

// On returns an Editor adding to g, naming with names.
func On(g *canonical.Graph, names *canonical.Namer, base string) *Editor {
	return &Editor{G: g, Names: names, Base: base}
}

// Err is the first error met, nil when none.
func (e *Editor) Err() error { return e.err }

// Op adds an ai.onnx node with one output and returns it (nil after an
// error).
func (e *Editor) Op(op string, in []*canonical.Value, attrs ...*canonical.Attribute) *canonical.Value {
	outs := e.OpIn("", op, 1, in, attrs...)
	if outs == nil {
		return nil
	}
	return outs[0]
}

// OpN adds an ai.onnx node with n outputs.
func (e *Editor) OpN(op string, n int, in []*canonical.Value, attrs ...*canonical.Attribute) []*canonical.Value {
	return e.OpIn("", op, n, in, attrs...)
}

// OpIn adds a node of domain with n outputs: the node is named
// "<Base>_<op>" (made fresh), its outputs after it ("_out", or "_out<i>"
// for several).
func (e *Editor) OpIn(domain, op string, n int, in []*canonical.Value, attrs ...*canonical.Attribute) []*canonical.Value {
	if e.err != nil {
		return nil
	}
	name := e.Names.Fresh(e.Base + "_" + op)
	outs := make([]string, n)
	for i := range outs {
		if n == 1 {
			outs[i] = e.Names.Fresh(name + "_out")
		} else {
			outs[i] = e.Names.Fresh(fmt.Sprintf("%s_out%d", name, i))
		}
	}
	node, err := e.G.AddNode(name, domain, op, in, outs, attrs...)
	if err != nil {
		e.err = err
		return nil
	}
	e.Added = append(e.Added, node)
	return node.Outputs
}

// Const adds t as an initializer of G named "<Base>_<base>" (made fresh;
// t's name is set) and returns its value.
func (e *Editor) Const(base string, t *canonical.Tensor) *canonical.Value {
	if e.err != nil {
		return nil
	}
	t.Name = e.Names.Fresh(e.Base + "_" + base)
	v, err := e.G.AddInitializer(t)
	if err != nil {
		e.err = fmt.Errorf("adding constant %q: %w", t.Name, err)
		return nil
	}
	return v
}

// Number adds a constant of the numeric type dt (see
// canonical.NumberTensor).
func (e *Editor) Number(dt canonical.DataType, dims []int64, v ...float64) *canonical.Value {
	return e.Const("const", canonical.NumberTensor("", dt, dims, v))
}

// Int64s adds an int64 constant.
func (e *Editor) Int64s(dims []int64, v ...int64) *canonical.Value {
	return e.Const("const", canonical.Int64Tensor("", dims, v))
}
