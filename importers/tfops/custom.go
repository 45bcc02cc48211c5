package tfops

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// customOp maps a node of a TF op the user defines (Options.Custom): a
// call of the function of the op's name on the node's data inputs (in
// TF's layout), with the function's declared attributes set from the
// node's attributes of the same name (a string, a list, else an int or a
// bool as 0/1 — a float when the function's default is one or the value
// is not whole). Its outputs are of the first input's type, rank unknown.
func (c *converter) customOp(n *Node) error {
	r := c.root()
	f := r.custom.Lookup(n.Op)
	k := dataInputs(n)
	vs, err := c.inputs(n, k)
	if err != nil {
		return err
	}
	if len(f.Body.Inputs) != k {
		return fmt.Errorf("the custom function %s.%s takes %d inputs; the node has %d", f.Domain, f.Name, len(f.Body.Inputs), k)
	}
	ins := make([]string, k)
	for i, v := range vs {
		if ins[i], err = c.asNHWC(v); err != nil {
			return err
		}
	}
	float := map[string]bool{}
	names := append([]string{}, f.Attributes...)
	for _, d := range f.AttributeDefaults {
		names = append(names, d.Name)
		float[d.Name] = d.Type == canonical.AttrFloat || d.Type == canonical.AttrFloats
	}
	var attrs []*canonical.Attribute
	for _, name := range names {
		a, ok := n.Attrs[name]
		if !ok {
			continue
		}
		switch {
		case a.S != nil:
			attrs = append(attrs, canonical.StringAttr(name, string(a.S)))
		case a.List != nil && (float[name] || len(a.List.F) > 0):
			attrs = append(attrs, canonical.FloatsAttr(name, a.List.F...))
		case a.List != nil:
			attrs = append(attrs, canonical.IntsAttr(name, a.List.I...))
		case float[name] || a.F != 0:
			attrs = append(attrs, canonical.FloatAttr(name, a.F))
		case a.B:
			attrs = append(attrs, canonical.IntAttr(name, 1))
		default:
			attrs = append(attrs, canonical.IntAttr(name, a.I))
		}
	}
	call, err := r.custom.Call(f.Name, attrs)
	if err != nil {
		return err
	}
	outs := make([]string, len(f.Body.Outputs))
	for i := range outs {
		outs[i] = c.b.Fresh(n.Name)
	}
	c.b.NodeIn(call.Domain, call.Name, outs[0], ins, outs)
	dt := canonical.Float
	if k > 0 {
		dt = vs[0].dt
	}
	for i, o := range outs {
		c.setNHWC(n, i, o, -1, dt)
	}
	return nil
}
