package sklearn

import (
	"github.com/onnxconv/onnxconv/canonical"
	"math"
)

// elemOp is one per-column elementwise operation of a scaler.
type elemOp struct {
	op string // "Sub", "Div", "Mul", "Add"
	v  []float64
}

// scaler applies per-column operations in scikit-learn's order, then an
// optional clip.
type scaler struct {
	n       int
	ops     []elemOp
	clip    bool
	lo, hi  float64
	zeroOne bool
}

func (s *scaler) inDim() int  { return s.n }
func (s *scaler) outDim() int { return s.n }

func (s *scaler) transform(x *mat) *mat {
	y := &mat{r: x.r, c: x.c, d: append([]float64(nil), x.d...)}
	for _, op := range s.ops {
		for i := 0; i < y.r; i++ {
			r := y.row(i)
			for j := range r {
				switch op.op {
				case "Sub":
					r[j] -= op.v[j]
				case "Div":
					r[j] /= op.v[j]
				case "Mul":
					r[j] *= op.v[j]
				case "Add":
					r[j] += op.v[j]
				}
			}
		}
	}
	if s.clip {
		y.apply(func(v float64) float64 { return math.Min(math.Max(v, s.lo), s.hi) })
	}
	return y
}

func (s *scaler) emit(g *graph, x string) string {
	for _, op := range s.ops {
		x = g.op(op.op, []string{x, g.row(op.op, op.v)})
	}
	if s.clip {
		x = g.op("Clip", []string{x, g.scalar(s.lo), g.scalar(s.hi)})
	}
	return x
}

// optVector reads an optional vector attribute (None: nil).
func optVector(o *obj, field string, n int) ([]float64, error) {
	if !o.has(field) {
		return nil, nil
	}
	v, err := o.vector(field)
	if err != nil {
		return nil, err
	}
	if len(v) != n {
		return nil, o.errf(field, "%d values for %d features", len(v), n)
	}
	return v, checkFinite(o, field, v)
}

func readScaler(o *obj) (transformer, error) {
	n, err := o.nFeaturesIn("scale_", "mean_", "min_", "max_abs_", "center_")
	if err != nil {
		return nil, err
	}
	s := &scaler{n: n}
	add := func(op, field string) error {
		v, err := optVector(o, field, n)
		if v != nil {
			s.ops = append(s.ops, elemOp{op: op, v: v})
		}
		return err
	}
	switch o.class {
	case "StandardScaler":
		if o.boolOr("with_mean", true) {
			err = add("Sub", "mean_")
		}
		if err == nil && o.boolOr("with_std", true) {
			err = add("Div", "scale_")
		}
	case "MinMaxScaler":
		if err = add("Mul", "scale_"); err == nil {
			err = add("Add", "min_")
		}
		if err == nil && o.boolOr("clip", false) {
			fr, ferr := o.vector("feature_range")
			if ferr != nil || len(fr) != 2 {
				return nil, o.errf("feature_range", "expected (min, max)")
			}
			s.clip, s.lo, s.hi = true, fr[0], fr[1]
		}
	case "MaxAbsScaler":
		err = add("Div", "scale_")
	case "RobustScaler":
		if err = add("Sub", "center_"); err == nil {
			err = add("Div", "scale_")
		}
	}
	return s, err
}

// normalizer scales each row to unit l1, l2 or max norm.
type normalizer struct {
	n    int
	norm string
}

func readNormalizer(o *obj) (transformer, error) {
	n, err := o.nFeaturesIn()
	if err != nil {
		return nil, err
	}
	norm := o.strOr("norm", "l2")
	if norm != "l1" && norm != "l2" && norm != "max" {
		return nil, o.errf("norm", "%q not supported (l1, l2, max are)", norm)
	}
	return &normalizer{n: n, norm: norm}, nil
}

func (m *normalizer) inDim() int  { return m.n }
func (m *normalizer) outDim() int { return m.n }

func (m *normalizer) transform(x *mat) *mat {
	y := &mat{r: x.r, c: x.c, d: append([]float64(nil), x.d...)}
	for i := 0; i < y.r; i++ {
		r := y.row(i)
		norm := 0.0
		for _, v := range r {
			switch m.norm {
			case "l1":
				norm += math.Abs(v)
			case "l2":
				norm += v * v
			case "max":
				norm = math.Max(norm, math.Abs(v))
			}
		}
		if m.norm == "l2" {
			norm = math.Sqrt(norm)
		}
		if norm == 0 {
			norm = 1
		}
		for j := range r {
			r[j] /= norm
		}
	}
	return y
}

func (m *normalizer) emit(g *graph, x string) string {
	var norm string
	switch m.norm {
	case "l1":
		norm = g.sumRows(g.op("Abs", []string{x}))
	case "l2":
		norm = g.op("Sqrt", []string{g.sumRows(g.op("Mul", []string{x, x}))})
	case "max":
		norm = g.op("ReduceMax", []string{g.op("Abs", []string{x})}, canonical.IntsAttr("axes", 1), canonical.IntAttr("keepdims", 1))
	}
	zero := g.op("Equal", []string{norm, g.scalar(0)})
	norm = g.op("Where", []string{zero, g.scalar(1), norm})
	return g.op("Div", []string{x, norm})
}

// projection is (x - mean) components' [/ sqrt(explained_variance)]: PCA
// and TruncatedSVD.
type projection struct {
	n     int
	mean  []float64
	w     *mat // [F, K]
	scale []float64
}

func readProjection(o *obj) (transformer, error) {
	comp, err := o.matrix("components_")
	if err != nil {
		return nil, err
	}
	p := &projection{n: comp.c, w: comp.transpose()}
	if err := checkFinite(o, "components_", comp.d); err != nil {
		return nil, err
	}
	if o.class == "PCA" {
		if p.mean, err = optVector(o, "mean_", comp.c); err != nil {
			return nil, err
		}
		if o.boolOr("whiten", false) {
			ev, err := o.vector("explained_variance_")
			if err != nil {
				return nil, err
			}
			if len(ev) != comp.r {
				return nil, o.errf("explained_variance_", "%d values for %d components", len(ev), comp.r)
			}
			p.scale = make([]float64, len(ev))
			for i, v := range ev {
				p.scale[i] = math.Sqrt(v)
			}
		}
	}
	return p, nil
}

func (p *projection) inDim() int  { return p.n }
func (p *projection) outDim() int { return p.w.c }

func (p *projection) transform(x *mat) *mat {
	if p.mean != nil {
		x = (&scaler{n: p.n, ops: []elemOp{{"Sub", p.mean}}}).transform(x)
	}
	y := mul(x, p.w)
	if p.scale != nil {
		y = (&scaler{n: p.w.c, ops: []elemOp{{"Div", p.scale}}}).transform(y)
	}
	return y
}

func (p *projection) emit(g *graph, x string) string {
	if p.mean != nil {
		x = g.op("Sub", []string{x, g.row("mean", p.mean)})
	}
	y := g.affine(x, p.w, nil)
	if p.scale != nil {
		y = g.op("Div", []string{y, g.row("scale", p.scale)})
	}
	return y
}

// polynomial is PolynomialFeatures: each output column the product of the
// input columns in its combination (in scikit-learn's order).
type polynomial struct {
	n      int
	combos [][]int
	maxLen int
}

func readPolynomial(o *obj) (transformer, error) {
	n, err := o.nFeaturesIn()
	if err != nil {
		return nil, err
	}
	minDeg, maxDeg := 0, 0
	if o.has("_max_degree") {
		if maxDeg, err = o.int("_max_degree"); err != nil {
			return nil, err
		}
		if minDeg, err = o.int("_min_degree"); err != nil {
			return nil, err
		}
	} else if maxDeg, err = o.int("degree"); err != nil {
		return nil, o.errf("degree", "an int degree is needed (a (min, max) tuple needs scikit-learn >= 1.0's _min_degree)")
	}
	interaction := o.boolOr("interaction_only", false)
	bias := o.boolOr("include_bias", true)
	if n > 1000 || maxDeg > 10 {
		return nil, o.errf("degree", "%d features at degree %d is more than this importer expands", n, maxDeg)
	}
	p := &polynomial{n: n}
	if bias {
		p.combos = append(p.combos, nil)
	}
	start := minDeg
	if start < 1 {
		start = 1
	}
	for d := start; d <= maxDeg; d++ {
		combos(n, d, interaction, func(c []int) {
			p.combos = append(p.combos, append([]int(nil), c...))
		})
		if len(p.combos) > 1<<16 {
			return nil, o.errf("degree", "more than %d output features", 1<<16)
		}
	}
	if o.has("n_output_features_") {
		if k, err := o.int("n_output_features_"); err == nil && k != len(p.combos) {
			return nil, o.errf("n_output_features_", "is %d, the combinations give %d", k, len(p.combos))
		}
	}
	for _, c := range p.combos {
		if len(c) > p.maxLen {
			p.maxLen = len(c)
		}
	}
	return p, nil
}

// combos enumerates itertools.combinations(_with_replacement)(range(n), d).
func combos(n, d int, distinct bool, f func([]int)) {
	c := make([]int, d)
	var rec func(pos, from int)
	rec = func(pos, from int) {
		if pos == d {
			f(c)
			return
		}
		for i := from; i < n; i++ {
			c[pos] = i
			next := i
			if distinct {
				next = i + 1
			}
			rec(pos+1, next)
		}
	}
	rec(0, 0)
}

func (p *polynomial) inDim() int  { return p.n }
func (p *polynomial) outDim() int { return len(p.combos) }

func (p *polynomial) transform(x *mat) *mat {
	y := newMat(x.r, len(p.combos))
	for i := 0; i < x.r; i++ {
		xr, yr := x.row(i), y.row(i)
		for k, c := range p.combos {
			v := 1.0
			for j, f := range c {
				if j == 0 {
					v = xr[f]
				} else {
					v *= xr[f]
				}
			}
			yr[k] = v
		}
	}
	return y
}

// emit gathers the factors of every output column from [x, 1] and
// multiplies them (ReduceProd over the last axis).
func (p *polynomial) emit(g *graph, x string) string {
	if p.maxLen == 0 {
		ones := g.op("ReduceSum", []string{g.op("Mul", []string{x, g.scalar(0)}), g.int64s("axes", []int64{1}, []int64{1})}, canonical.IntAttr("keepdims", 1))
		return g.op("Add", []string{ones, g.scalar(1)})
	}
	// a column of ones beside x: x[:, :1] * 0 + 1
	first := g.op("Slice", []string{x, g.int64s("s", []int64{1}, []int64{0}), g.int64s("e", []int64{1}, []int64{1}), g.int64s("a", []int64{1}, []int64{1})})
	one := g.op("Add", []string{g.op("Mul", []string{first, g.scalar(0)}), g.scalar(1)})
	xo := g.op("Concat", []string{x, one}, canonical.IntAttr("axis", 1))
	idx := make([]int64, 0, len(p.combos)*p.maxLen)
	for _, c := range p.combos {
		for j := 0; j < p.maxLen; j++ {
			if j < len(c) {
				idx = append(idx, int64(c[j]))
			} else {
				idx = append(idx, int64(p.n))
			}
		}
	}
	gat := g.op("Gather", []string{xo, g.int64s("idx", []int64{int64(len(p.combos)), int64(p.maxLen)}, idx)}, canonical.IntAttr("axis", 1))
	return g.op("ReduceProd", []string{gat}, canonical.IntsAttr("axes", 2), canonical.IntAttr("keepdims", 0))
}
