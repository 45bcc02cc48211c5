package build

import (
	"fmt"
	"slices"

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
	present := make([]bool, n)
	for i := range present {
		present[i] = true
	}
	return e.add(domain, op, present, in, attrs)
}

// OpTo adds an ai.onnx node with one output named out exactly (not made
// fresh), for a transform that recomputes a value under its old name; the
// name must be free in G.
func (e *Editor) OpTo(op string, in []*canonical.Value, out string, attrs ...*canonical.Attribute) *canonical.Value {
	if e.err != nil {
		return nil
	}
	e.Names.Reserve(out)
	outs := e.node(e.Names.Fresh(e.Base+"_"+op), "", op, in, []string{out}, attrs)
	if outs == nil {
		return nil
	}
	return outs[0]
}

// Copy adds a node computing what n computes (its domain, op and
// attributes) from in, which stand for n's inputs, possibly in another
// graph: the node is named "<Base>_<op>" (made fresh) and an output of n
// that is absent stays absent. It returns the copy's outputs, one for each
// of n's.
func (e *Editor) Copy(n *canonical.Node, in []*canonical.Value) []*canonical.Value {
	present := make([]bool, len(n.Outputs))
	for i, o := range n.Outputs {
		present[i] = o != nil
	}
	return e.add(n.Domain, n.OpType, present, in, slices.Clone(n.Attributes))
}

// add adds a node with fresh names for its present outputs.
func (e *Editor) add(domain, op string, present []bool, in []*canonical.Value, attrs []*canonical.Attribute) []*canonical.Value {
	if e.err != nil {
		return nil
	}
	name := e.Names.Fresh(e.Base + "_" + op)
	outs := make([]string, len(present))
	for i, p := range present {
		switch {
		case !p:
		case len(present) == 1:
			outs[i] = e.Names.Fresh(name + "_out")
		default:
			outs[i] = e.Names.Fresh(fmt.Sprintf("%s_out%d", name, i))
		}
	}
	return e.node(name, domain, op, in, outs, attrs)
}

// node adds the node and records it, or keeps the error.
func (e *Editor) node(name, domain, op string, in []*canonical.Value, outs []string, attrs []*canonical.Attribute) []*canonical.Value {
	node, err := e.G.AddNode(name, domain, op, in, outs, attrs...)
	if err != nil {
		e.err = fmt.Errorf("adding %s node %q: %w", op, name, err)
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
