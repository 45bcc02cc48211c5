package convert

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// attrInputNames maps an attribute that became an input to the input's
// name, where the two differ.
var attrInputNames = map[string]map[string]string{
	"TopK": {"k": "K"},
	"Pad":  {"value": "constant_value"},
}

func inputNameFor(op, attr string) string {
	if m, ok := attrInputNames[op]; ok {
		if s, ok := m[attr]; ok {
			return s
		}
	}
	return attr
}

// genericStep applies the changes that can be read off the two schemas:
// attributes that became inputs (and back), attributes and optional inputs
// or outputs that one version adds, and removed attributes left at their
// default.
func genericStep(sc *stepCtx, up bool) error {
	n, old, nw := sc.n, sc.old, sc.new
	if up {
		for _, a := range old.Attributes {
			if _, still := nw.Attribute(a.Name); still {
				continue
			}
			set := n.Attr(a.Name)
			inName := inputNameFor(n.OpType, a.Name)
			if idx := inputIndex(nw, inName); idx >= 0 {
				if _, had := old.Input(inName); !had {
					if set == nil {
						// For the attributes that became inputs in 7..27
						// (axes, pads, starts, split, k, min/max, ratio,
						// scales) an absent input keeps the old default.
						continue
					}
					if err := sc.attrToInput(set, idx); err != nil {
						return err
					}
					continue
				}
			}
			if set == nil {
				continue
			}
			if a.HasDefault && attrEqualsDefault(set, &a) {
				n.DeleteAttr(a.Name)
				continue
			}
			return blocked("", "attribute %q (set to a non-default value) was removed at version %d", a.Name, nw.SinceVersion)
		}
		return nil
	}
	// Down: nw -> old.
	for i := len(nw.Inputs) - 1; i >= 0; i-- {
		p := nw.Inputs[i]
		if _, had := old.Input(p.Name); had && i < len(old.Inputs) && old.Inputs[i].Name == p.Name {
			continue
		}
		if p.Option == onnxspec.Variadic && len(old.Inputs) > 0 && old.Inputs[len(old.Inputs)-1].Option == onnxspec.Variadic {
			continue
		}
		v := n.Input(i)
		if v == nil {
			continue
		}
		// An input the older version takes as an attribute?
		attrName := p.Name
		for k, in := range attrInputNames[n.OpType] {
			if in == p.Name {
				attrName = k
			}
		}
		if oa, ok := old.Attribute(attrName); ok {
			if err := sc.inputToAttr(i, oa); err != nil {
				return err
			}
			continue
		}
		return blocked(fmt.Sprintf("remove input %q or keep opset >= %d", p.Name, nw.SinceVersion),
			"input %d %q is not available before version %d", i, p.Name, nw.SinceVersion)
	}
	n.TrimInputs()
	if len(n.Inputs) > old.MaxInputs {
		return blocked("", "%d inputs given but version %d takes at most %d", len(n.Inputs), old.SinceVersion, old.MaxInputs)
	}
	for i := old.MaxOutputs; i < len(n.Outputs); i++ {
		if o := n.Outputs[i]; o != nil && (len(o.Uses()) > 0 || isGraphOutput(sc.g, o)) {
			return blocked(fmt.Sprintf("keep opset >= %d", nw.SinceVersion), "output %d %q is not available before version %d", i, o.Name, nw.SinceVersion)
		}
	}
	if len(n.Outputs) > old.MaxOutputs {
		n.Outputs = n.Outputs[:old.MaxOutputs]
	}
	for _, a := range nw.Attributes {
		if _, ok := old.Attribute(a.Name); ok {
			continue
		}
		set := n.Attr(a.Name)
		if set == nil {
			continue
		}
		if a.HasDefault && attrEqualsDefault(set, &a) {
			n.DeleteAttr(a.Name)
			continue
		}
		return blocked(fmt.Sprintf("keep opset >= %d", nw.SinceVersion),
			"attribute %q=%s is not available before version %d", a.Name, attrText(set), nw.SinceVersion)
	}
	return nil
}

func isGraphOutput(g *canonical.Graph, v *canonical.Value) bool {
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}

func inputIndex(s *onnxspec.Schema, name string) int {
	for i, p := range s.Inputs {
		if p.Name == name {
			return i
		}
	}
	return -1
}

func attrEqualsDefault(a *canonical.Attribute, d *onnxspec.Attribute) bool {
	if !d.DefaultParsed {
		return false
	}
	switch a.Type {
	case canonical.AttrInt:
		return a.I == d.DefaultInt
	case canonical.AttrFloat:
		return a.F == d.DefaultFloat
	case canonical.AttrString:
		return string(a.S) == d.DefaultString
	case canonical.AttrInts:
		if len(a.Ints) != len(d.DefaultInts) {
			return false
		}
		for i := range a.Ints {
			if a.Ints[i] != d.DefaultInts[i] {
				return false
			}
		}
		return true
	case canonical.AttrFloats:
		if len(a.Floats) != len(d.DefaultFloats) {
			return false
		}
		for i := range a.Floats {
			if a.Floats[i] != d.DefaultFloats[i] {
				return false
			}
		}
		return true
	}
	return false
}

func attrText(a *canonical.Attribute) string {
	switch a.Type {
	case canonical.AttrInt:
		return fmt.Sprint(a.I)
	case canonical.AttrFloat:
		return fmt.Sprint(a.F)
	case canonical.AttrString:
		return fmt.Sprintf("%q", a.S)
	case canonical.AttrInts:
		return fmt.Sprint(a.Ints)
	case canonical.AttrFloats:
		return fmt.Sprint(a.Floats)
	}
	return a.Type.String()
}

// attrToInput moves attribute a of the node to input idx as a constant.
func (sc *stepCtx) attrToInput(a *canonical.Attribute, idx int) error {
	t, err := sc.attrTensor(a)
	if err != nil {
		return err
	}
	v, err := sc.constant(inputNameFor(sc.n.OpType, a.Name), t)
	if err != nil {
		return err
	}
	sc.n.SetInput(idx, v)
	sc.n.DeleteAttr(a.Name)
	return nil
}

// attrTensor builds the tensor an attribute becomes as an input.
func (sc *stepCtx) attrTensor(a *canonical.Attribute) (*canonical.Tensor, error) {
	name := inputNameFor(sc.n.OpType, a.Name)
	switch a.Type {
	case canonical.AttrInts:
		return canonical.Int64Tensor(name, []int64{int64(len(a.Ints))}, a.Ints), nil
	case canonical.AttrInt:
		if sc.n.OpType == "TopK" {
			return canonical.Int64Tensor(name, []int64{1}, []int64{a.I}), nil
		}
		return canonical.Int64Tensor(name, nil, []int64{a.I}), nil
	case canonical.AttrFloats:
		return canonical.NumberTensor(name, canonical.Float, []int64{int64(len(a.Floats))}, toF64(a.Floats)), nil
	case canonical.AttrFloat:
		dt := canonical.Float
		if sc.n.OpType != "Dropout" {
			// Clip min/max and Pad's constant value take the data's type.
			if x := sc.n.Input(0); x != nil {
				if et := elemType(x); et != canonical.Undefined {
					dt = et
				}
			}
		}
		return canonical.NumberTensor(name, dt, nil, []float64{float64(a.F)}), nil
	}
	return nil, blocked("", "attribute %q of type %s cannot become an input", a.Name, a.Type)
}

// inputToAttr turns constant input i of the node into attribute a.
func (sc *stepCtx) inputToAttr(i int, a *onnxspec.Attribute) error {
	v := sc.n.Input(i)
	t := constValue(v)
	if t == nil {
		t = sc.c.folded[v]
	}
	if t == nil {
		return blocked(fmt.Sprintf("make input %q a constant (initializer or Constant) or keep opset >= %d", v.Name, sc.new.SinceVersion),
			"input %d %q must be constant to become attribute %q of version %d", i, v.Name, a.Name, sc.old.SinceVersion)
	}
	var attr *canonical.Attribute
	switch onnxspec.AttrType(a.Type) {
	case onnxspec.AttrInts:
		ints, err := tensorInts(t)
		if err != nil {
			return blocked("", "input %q: %v", v.Name, err)
		}
		attr = canonical.IntsAttr(a.Name, ints...)
	case onnxspec.AttrInt:
		ints, err := tensorInts(t)
		if err != nil || len(ints) != 1 {
			return blocked("", "input %q: want one integer (%v)", v.Name, err)
		}
		attr = canonical.IntAttr(a.Name, ints[0])
	case onnxspec.AttrFloats:
		fs, err := tensorFloats(t)
		if err != nil {
			return blocked("", "input %q: %v", v.Name, err)
		}
		f32 := make([]float32, len(fs))
		for k, f := range fs {
			f32[k] = float32(f)
		}
		attr = canonical.FloatsAttr(a.Name, f32...)
	case onnxspec.AttrFloat:
		fs, err := tensorFloats(t)
		if err != nil || len(fs) != 1 {
			return blocked("", "input %q: want one number (%v)", v.Name, err)
		}
		attr = canonical.FloatAttr(a.Name, float32(fs[0]))
	default:
		return noAdapter("", "no rule turns input %q into a %s attribute", v.Name, onnxspec.AttrType(a.Type))
	}
	sc.n.SetAttr(attr)
	sc.n.SetInput(i, nil)
	sc.dropIfUnused(v)
	return nil
}
