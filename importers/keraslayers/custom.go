package keraslayers

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// customLayer maps a layer of a class Options.Custom defines: a node
// calling the function of the class name, reading the layer's inputs
// (channels-last, as Keras computes) and then its weights (in the order
// the file gives them), the function's attributes set from the layer
// config's entries of the same name (custom.Set.Call). Its outputs have
// the rank and type of the first input.
func (x *layerCtx) customLayer(ins []*kval) ([]*kval, error) {
	f := x.c.opts.Custom.Lookup(x.l.class)
	if f == nil {
		return nil, fmt.Errorf("no custom function %q", x.l.class)
	}
	if len(ins) == 0 {
		return nil, fmt.Errorf("the layer has no inputs")
	}
	var args []string
	for _, v := range ins {
		s, err := x.c.cl(v)
		if err != nil {
			return nil, err
		}
		args = append(args, s)
	}
	for i, w := range x.w {
		variant := w.Name
		if variant == "" {
			variant = fmt.Sprintf("w%d", i)
		}
		k := fmt.Sprint(x.path, "/", variant)
		n, ok := x.c.inits[k]
		if !ok {
			var err error
			if n, err = x.c.b.Tensor(x.name(variant), w.Tensor); err != nil {
				return nil, fmt.Errorf("weight %s: %w", variant, err)
			}
			x.c.inits[k] = n
		}
		args = append(args, n)
	}
	if want := len(f.Body.Inputs); want != len(args) {
		return nil, fmt.Errorf("the custom function %s.%s takes %d inputs; the layer gives %d (%d inputs, then %d weights)",
			f.Domain, f.Name, want, len(args), len(ins), len(x.w))
	}
	attrs, err := x.customAttrs(f)
	if err != nil {
		return nil, err
	}
	call, err := x.c.opts.Custom.Call(f.Name, attrs)
	if err != nil {
		return nil, err
	}
	outs := make([]string, len(f.Body.Outputs))
	for i := range outs {
		outs[i] = x.c.b.Fresh(x.name(""))
	}
	x.c.b.NodeIn(call.Domain, call.Name, outs[0], args, outs)
	res := make([]*kval, len(outs))
	for i, o := range outs {
		res[i] = out(o, ins[0].rank, false, ins[0].dt)
	}
	return res, nil
}

// customAttrs sets the attributes f declares from the layer config: a
// number is an int when it is whole and the default (if any) is not a
// float, a string a string, a bool 0 or 1, a list of numbers ints or
// floats. Declared attributes the config lacks keep their defaults.
func (x *layerCtx) customAttrs(f *canonical.Function) ([]*canonical.Attribute, error) {
	float := map[string]bool{}
	names := append([]string{}, f.Attributes...)
	for _, d := range f.AttributeDefaults {
		names = append(names, d.Name)
		float[d.Name] = d.Type == canonical.AttrFloat || d.Type == canonical.AttrFloats
	}
	var out []*canonical.Attribute
	for _, name := range names {
		v, ok := x.l.cfg[name]
		if !ok {
			continue
		}
		switch t := v.(type) {
		case float64:
			if t == math.Trunc(t) && !float[name] && math.Abs(t) < 1<<53 {
				out = append(out, canonical.IntAttr(name, int64(t)))
			} else {
				out = append(out, canonical.FloatAttr(name, float32(t)))
			}
		case string:
			out = append(out, canonical.StringAttr(name, t))
		case bool:
			b := int64(0)
			if t {
				b = 1
			}
			out = append(out, canonical.IntAttr(name, b))
		case []any:
			var fs []float32
			var is []int64
			whole := !float[name]
			for _, e := range t {
				n, ok := e.(float64)
				if !ok {
					return nil, fmt.Errorf("config %q: a list of numbers was expected for the custom function's attribute", name)
				}
				fs = append(fs, float32(n))
				is = append(is, int64(n))
				whole = whole && n == math.Trunc(n) && math.Abs(n) < 1<<53
			}
			if whole {
				out = append(out, canonical.IntsAttr(name, is...))
			} else {
				out = append(out, canonical.FloatsAttr(name, fs...))
			}
		default:
			return nil, fmt.Errorf("config %q: a %T cannot be the custom function's attribute", name, v)
		}
	}
	return out, nil
}
