package sklearn

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/pickle"
)

// namedStep is one (name, estimator) pair of a Pipeline or FeatureUnion.
type namedStep struct {
	name string
	v    pickle.Value
}

// pairs reads a list of (name, estimator) pairs.
func pairs(o *obj, field string) ([]namedStep, error) {
	sv, err := o.get(field)
	if err != nil {
		return nil, err
	}
	items, ok := pickleList(sv)
	if !ok || len(items) > 1000 {
		return nil, o.errf(field, "expected a list of (name, estimator)")
	}
	out := make([]namedStep, 0, len(items))
	for i, s := range items {
		pair, ok := pickleList(s)
		if !ok || len(pair) != 2 {
			return nil, o.errf(fmt.Sprintf("%s[%d]", field, i), "expected a (name, estimator) pair")
		}
		name, _ := pair[0].(string)
		out = append(out, namedStep{name: name, v: pair[1]})
	}
	return out, nil
}

// readTransformer reads an estimator that must be a transformer: a
// supported transformer class, or a Pipeline of them.
func readTransformer(v pickle.Value, path string) (transformer, error) {
	o, err := asObj(v, path)
	if err != nil {
		return nil, err
	}
	o.path = path + " " + o.class
	if _, ok := supported[o.class]; !ok {
		return nil, &UnsupportedClassError{Class: o.class, Nearest: nearest(o.class)}
	}
	if o.class == "Pipeline" {
		steps, err := pairs(o, "steps")
		if err != nil {
			return nil, err
		}
		c := &chain{}
		for i, s := range steps {
			if s.v == nil || s.v == "passthrough" {
				continue
			}
			t, err := readTransformer(s.v, fmt.Sprintf("%s.steps[%d] %q", o.path, i, s.name))
			if err != nil {
				return nil, err
			}
			if len(c.steps) > 0 && c.steps[len(c.steps)-1].outDim() != t.inDim() {
				return nil, fmt.Errorf("%s.steps[%d] %q: takes %d features, the step before gives %d", o.path, i, s.name, t.inDim(), c.steps[len(c.steps)-1].outDim())
			}
			c.steps = append(c.steps, t)
		}
		if len(c.steps) == 0 {
			return nil, fmt.Errorf("%s: a pipeline of passthrough steps only is not supported here", o.path)
		}
		return c, nil
	}
	st, err := readStep(o)
	if err != nil {
		return nil, err
	}
	t, ok := st.(transformer)
	if !ok {
		return nil, fmt.Errorf("%s: %s predicts; a transformer is needed here", o.path, o.class)
	}
	return t, nil
}

// chain is a Pipeline of transformers inside a ColumnTransformer or
// FeatureUnion.
type chain struct{ steps []transformer }

func (c *chain) inDim() int  { return c.steps[0].inDim() }
func (c *chain) outDim() int { return c.steps[len(c.steps)-1].outDim() }

func (c *chain) transform(x *mat) *mat {
	for _, s := range c.steps {
		x = s.transform(x)
	}
	return x
}

func (c *chain) emit(g *graph, x string) string {
	for _, s := range c.steps {
		x = s.emit(g, x)
	}
	return x
}

// part is one transformer of a ColumnTransformer or FeatureUnion: the
// input columns it reads (nil: all), the transformer, and the weight its
// output is multiplied by (if weighted).
type part struct {
	cols     []int
	t        transformer
	weight   float64
	weighted bool
}

// union is ColumnTransformer and FeatureUnion: every part on its columns,
// the outputs side by side (numpy.hstack), in the fitted order.
type union struct {
	n     int
	parts []part
}

func (u *union) inDim() int { return u.n }

func (u *union) outDim() int {
	k := 0
	for _, p := range u.parts {
		k += p.t.outDim()
	}
	return k
}

func (u *union) transform(x *mat) *mat {
	y := newMat(x.r, u.outDim())
	off := 0
	for _, p := range u.parts {
		in := x
		if p.cols != nil {
			in = newMat(x.r, len(p.cols))
			for i := 0; i < x.r; i++ {
				for k, j := range p.cols {
					in.d[i*in.c+k] = x.d[i*x.c+j]
				}
			}
		}
		out := p.t.transform(in)
		for i := 0; i < x.r; i++ {
			for k, v := range out.row(i) {
				if p.weighted {
					v *= p.weight
				}
				y.d[i*y.c+off+k] = v
			}
		}
		off += out.c
	}
	return y
}

func (u *union) emit(g *graph, x string) string {
	outs := make([]string, 0, len(u.parts))
	for _, p := range u.parts {
		in := x
		if p.cols != nil {
			in = g.columns(x, p.cols)
		}
		y := p.t.emit(g, in)
		if p.weighted {
			y = g.op("Mul", []string{y, g.scalar(p.weight)})
		}
		outs = append(outs, y)
	}
	if len(outs) == 1 {
		return g.op("Identity", outs)
	}
	return g.op("Concat", outs, canonical.IntAttr("axis", 1))
}

// weights reads transformer_weights: None or {name: weight}.
func weights(o *obj) (map[string]float64, error) {
	v, ok := o.attrs.Get("transformer_weights")
	if !ok || v == nil {
		return nil, nil
	}
	d, ok := v.(*pickle.Dict)
	if !ok {
		return nil, o.errf("transformer_weights", "expected a dict, found %s", pickle.Describe(v))
	}
	out := map[string]float64{}
	for _, it := range d.Items {
		k, ok1 := it.Key.(string)
		w, ok2 := number(it.Value)
		if !ok1 || !ok2 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, o.errf("transformer_weights", "expected {name: number}")
		}
		out[k] = w
	}
	return out, nil
}

// weightOf is the part's weight, if it has one.
func weightOf(w map[string]float64, name string) (float64, bool) {
	f, ok := w[name]
	return f, ok
}

// readColumnTransformer reads a fitted ColumnTransformer: transformers_
// (name, transformer or "passthrough"/"drop", columns) with the
// remainder among them, the columns as indices, slices, boolean masks or
// names (through feature_names_in_).
func readColumnTransformer(o *obj) (transformer, error) {
	n, err := o.nFeaturesIn()
	if err != nil {
		return nil, err
	}
	w, err := weights(o)
	if err != nil {
		return nil, err
	}
	tv, err := o.get("transformers_")
	if err != nil {
		return nil, err
	}
	items, ok := pickleList(tv)
	if !ok || len(items) > 1000 {
		return nil, o.errf("transformers_", "expected a list of (name, transformer, columns)")
	}
	var names []string
	if o.has("feature_names_in_") {
		v, _ := o.get("feature_names_in_")
		if a, err := toArray(v); err == nil && a.Kind == 'O' {
			for _, s := range a.Objects {
				str, _ := s.(string)
				names = append(names, str)
			}
		}
	}
	u := &union{n: n}
	for i, it := range items {
		field := fmt.Sprintf("transformers_[%d]", i)
		tr, ok := pickleList(it)
		if !ok || len(tr) != 3 {
			return nil, o.errf(field, "expected a (name, transformer, columns) triple")
		}
		name, _ := tr[0].(string)
		if tr[1] == "drop" {
			continue
		}
		cols, err := columnIndices(tr[2], n, names)
		if err != nil {
			return nil, o.errf(field, "columns: %v", err)
		}
		if len(cols) == 0 {
			continue
		}
		p := part{cols: cols}
		p.weight, p.weighted = weightOf(w, name)
		if tr[1] == "passthrough" {
			p.t = &identity{n: len(cols)}
		} else {
			p.t, err = readTransformer(tr[1], fmt.Sprintf("%s.%s %q", o.path, field, name))
			if err != nil {
				return nil, err
			}
			if p.t.inDim() != len(cols) {
				return nil, o.errf(field, "%q takes %d features, its columns are %d", name, p.t.inDim(), len(cols))
			}
		}
		u.parts = append(u.parts, p)
	}
	if len(u.parts) == 0 {
		return nil, o.errf("transformers_", "every column is dropped: the ColumnTransformer outputs nothing")
	}
	return u, nil
}

// columnIndices reads a ColumnTransformer column specifier for n input
// columns: an int, a list of ints or names, a slice, a numpy array of ints
// or booleans or names.
func columnIndices(v pickle.Value, n int, names []string) ([]int, error) {
	index := func(x pickle.Value) (int, error) {
		if s, ok := x.(string); ok {
			for j, nm := range names {
				if nm == s {
					return j, nil
				}
			}
			return 0, fmt.Errorf("column %q is not among the fitted feature names", s)
		}
		f, ok := number(x)
		if !ok || f != math.Trunc(f) {
			return 0, fmt.Errorf("column %s is not an index", pickle.Describe(x))
		}
		j := int(f)
		if j < 0 {
			j += n
		}
		if j < 0 || j >= n {
			return 0, fmt.Errorf("column %g out of range for %d features", f, n)
		}
		return j, nil
	}
	var out []int
	switch c := v.(type) {
	case int64, string:
		j, err := index(c)
		if err != nil {
			return nil, err
		}
		return []int{j}, nil
	case *pickle.List, *pickle.Tuple:
		items, _ := pickleList(c)
		if len(items) > n && len(items) > 1<<16 {
			return nil, fmt.Errorf("%d columns for %d features", len(items), n)
		}
		bools := len(items) == n && len(items) > 0
		for _, it := range items {
			if _, ok := it.(bool); !ok {
				bools = false
			}
		}
		for j, it := range items {
			if bools {
				if it.(bool) {
					out = append(out, j)
				}
				continue
			}
			k, err := index(it)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
		return out, nil
	case *pickle.Object, *Array:
		if o, ok := c.(*pickle.Object); ok {
			if g := o.Class(); g != nil && g.Name == "slice" && len(o.Args) == 3 {
				return sliceIndices(o.Args, n, names)
			}
		}
		a, err := toArray(c)
		if err != nil {
			return nil, err
		}
		if len(a.Shape) > 1 {
			return nil, fmt.Errorf("a %d-D column selection", len(a.Shape))
		}
		switch a.Kind {
		case 'b':
			if len(a.F) != n {
				return nil, fmt.Errorf("a boolean mask of %d for %d features", len(a.F), n)
			}
			for j, f := range a.F {
				if f != 0 {
					out = append(out, j)
				}
			}
		case 'O':
			for _, it := range a.Objects {
				k, err := index(it)
				if err != nil {
					return nil, err
				}
				out = append(out, k)
			}
		default:
			for _, f := range a.F {
				k, err := index(f)
				if err != nil {
					return nil, err
				}
				out = append(out, k)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("column selection %s is not supported (indices, slices, boolean masks and names are)", pickle.Describe(v))
}

// sliceIndices is range(n)[start:stop:step]; names as bounds are
// inclusive, as pandas' .loc (scikit-learn's convention).
func sliceIndices(args []pickle.Value, n int, names []string) ([]int, error) {
	bound := func(x pickle.Value, def int, name bool) (int, error) {
		if x == nil {
			return def, nil
		}
		if s, ok := x.(string); ok {
			for j, nm := range names {
				if nm == s {
					if name {
						return j + 1, nil
					}
					return j, nil
				}
			}
			return 0, fmt.Errorf("column %q is not among the fitted feature names", s)
		}
		f, ok := number(x)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<40 {
			return 0, fmt.Errorf("slice bound %s", pickle.Describe(x))
		}
		j := int(f)
		if j < 0 {
			j += n
		}
		return max(0, min(n, j)), nil
	}
	step := 1
	if args[2] != nil {
		f, ok := number(args[2])
		if !ok || f < 1 || f != math.Trunc(f) || f > 1<<30 {
			return nil, fmt.Errorf("slice step %s is not supported (positive steps are)", pickle.Describe(args[2]))
		}
		step = int(f)
	}
	start, err := bound(args[0], 0, false)
	if err != nil {
		return nil, err
	}
	stop, err := bound(args[1], n, true)
	if err != nil {
		return nil, err
	}
	var out []int
	for j := start; j < stop; j += step {
		out = append(out, j)
	}
	return out, nil
}

// readFeatureUnion reads a fitted FeatureUnion: transformer_list (name,
// transformer or "drop"/"passthrough"), every part on all the columns.
func readFeatureUnion(o *obj) (transformer, error) {
	w, err := weights(o)
	if err != nil {
		return nil, err
	}
	steps, err := pairs(o, "transformer_list")
	if err != nil {
		return nil, err
	}
	u := &union{n: -1}
	var pass []int
	for i, s := range steps {
		if s.v == "drop" || s.v == nil {
			continue
		}
		var p part
		p.weight, p.weighted = weightOf(w, s.name)
		if s.v == "passthrough" {
			pass = append(pass, len(u.parts))
			u.parts = append(u.parts, p)
			continue
		}
		p.t, err = readTransformer(s.v, fmt.Sprintf("%s.transformer_list[%d] %q", o.path, i, s.name))
		if err != nil {
			return nil, err
		}
		if u.n >= 0 && p.t.inDim() != u.n {
			return nil, o.errf(fmt.Sprintf("transformer_list[%d]", i), "%q takes %d features, the one before %d", s.name, p.t.inDim(), u.n)
		}
		u.n = p.t.inDim()
		u.parts = append(u.parts, p)
	}
	if u.n < 0 {
		return nil, o.errf("transformer_list", "no fitted transformer gives the number of input features")
	}
	for _, k := range pass {
		u.parts[k].t = &identity{n: u.n}
	}
	return u, nil
}
