package sklearn

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/pickle"
)

// imputer is SimpleImputer on numeric data: every missing value (NaN, or
// the number missing_values) of a column replaced by the column's
// statistic; columns whose statistic is NaN (never observed) dropped
// unless strategy="constant" or keep_empty_features; then, with
// add_indicator, the missing indicator's columns (1 where the value was
// missing) for indicator_.features_.
type imputer struct {
	n         int
	nanMiss   bool
	missing   float64
	stats     []float64
	keep      []int // kept input columns, nil: all
	indicator []int // columns of the missing indicator
}

// missingValue reads missing_values: a number (NaN included).
func missingValue(o *obj) (float64, bool, error) {
	v, ok := o.attrs.Get("missing_values")
	if !ok {
		return math.NaN(), true, nil
	}
	f, ok := number(v)
	if !ok {
		return 0, false, o.errf("missing_values", "%s is not supported (a number or NaN is)", pickle.Describe(v))
	}
	return f, math.IsNaN(f), nil
}

func readImputer(o *obj) (transformer, error) {
	n, err := o.nFeaturesIn("statistics_")
	if err != nil {
		return nil, err
	}
	m := &imputer{n: n}
	if m.missing, m.nanMiss, err = missingValue(o); err != nil {
		return nil, err
	}
	strategy := o.strOr("strategy", "mean")
	switch strategy {
	case "mean", "median", "most_frequent", "constant":
	default:
		return nil, o.errf("strategy", "%q is not supported (mean, median, most_frequent, constant are)", strategy)
	}
	sv, err := o.get("statistics_")
	if err != nil {
		return nil, err
	}
	if a, err := toArray(sv); err == nil && a.Kind == 'O' {
		return nil, o.errf("statistics_", "non-numeric statistics (strings or objects) are not supported; impute numeric columns only")
	}
	if m.stats, err = o.vector("statistics_"); err != nil {
		return nil, err
	}
	if len(m.stats) != n {
		return nil, o.errf("statistics_", "%d values for %d features", len(m.stats), n)
	}
	if strategy != "constant" && !o.boolOr("keep_empty_features", false) {
		for j, s := range m.stats {
			if !math.IsNaN(s) {
				m.keep = append(m.keep, j)
			}
		}
		if len(m.keep) == n {
			m.keep = nil
		} else if len(m.keep) == 0 && !o.boolOr("add_indicator", false) {
			return nil, o.errf("statistics_", "no feature was ever observed: the imputer outputs nothing")
		}
	}
	if o.boolOr("add_indicator", false) {
		iv, err := o.get("indicator_")
		if err != nil {
			return nil, err
		}
		ind, err := asObj(iv, o.path+".indicator_")
		if err != nil {
			return nil, err
		}
		f, err := ind.vector("features_")
		if err != nil {
			return nil, err
		}
		for _, c := range f {
			if c < 0 || c >= float64(n) || c != math.Trunc(c) {
				return nil, ind.errf("features_", "column %g out of range for %d features", c, n)
			}
			m.indicator = append(m.indicator, int(c))
		}
	}
	return m, nil
}

func (m *imputer) inDim() int { return m.n }

func (m *imputer) outDim() int {
	k := m.n
	if m.keep != nil {
		k = len(m.keep)
	}
	return k + len(m.indicator)
}

func (m *imputer) isMissing(v float64) bool {
	if m.nanMiss {
		return math.IsNaN(v)
	}
	return v == m.missing
}

func (m *imputer) transform(x *mat) *mat {
	cols := m.keep
	if cols == nil {
		cols = make([]int, m.n)
		for j := range cols {
			cols[j] = j
		}
	}
	y := newMat(x.r, m.outDim())
	for i := 0; i < x.r; i++ {
		xr, yr := x.row(i), y.row(i)
		for k, j := range cols {
			if m.isMissing(xr[j]) {
				yr[k] = m.stats[j]
			} else {
				yr[k] = xr[j]
			}
		}
		for k, j := range m.indicator {
			if m.isMissing(xr[j]) {
				yr[len(cols)+k] = 1
			}
		}
	}
	return y
}

func (m *imputer) emit(g *graph, x string) string {
	var mask string
	if m.nanMiss {
		mask = g.op("IsNaN", []string{x})
	} else {
		mask = g.op("Equal", []string{x, g.scalar(m.missing)})
	}
	stats := make([]float64, len(m.stats))
	for j, s := range m.stats {
		if !math.IsNaN(s) || m.keep == nil {
			stats[j] = s
		}
	}
	y := g.op("Where", []string{mask, g.row("statistics", stats), x})
	if m.keep != nil {
		y = g.columns(y, m.keep)
	}
	if len(m.indicator) == 0 {
		return y
	}
	ind := g.op("Cast", []string{g.columns(mask, m.indicator)}, canonical.IntAttr("to", int64(canonical.Double)))
	if m.keep != nil && len(m.keep) == 0 {
		return ind
	}
	return g.op("Concat", []string{y, ind}, canonical.IntAttr("axis", 1))
}

// columns is x[:, idx] (Gather on axis 1).
func (g *graph) columns(x string, idx []int) string {
	v := make([]int64, len(idx))
	for i, c := range idx {
		v[i] = int64(c)
	}
	return g.op("Gather", []string{x, g.int64s("columns", []int64{int64(len(v))}, v)}, canonical.IntAttr("axis", 1))
}

// categories reads an encoder's categories_: one numeric array per
// feature (NaN, the missing-value category, last if present).
func categories(o *obj, n int) ([][]float64, error) {
	v, err := o.get("categories_")
	if err != nil {
		return nil, err
	}
	items, ok := pickleList(v)
	if !ok || len(items) != n {
		return nil, o.errf("categories_", "expected a list of %d arrays, found %s", n, pickle.Describe(v))
	}
	out := make([][]float64, n)
	for i, it := range items {
		a, err := toArray(it)
		if err != nil {
			return nil, &AttributeError{Path: o.path, Field: fmt.Sprintf("categories_[%d]", i), Err: err}
		}
		if a.Kind == 'O' || a.Kind == 'V' {
			return nil, o.errf(fmt.Sprintf("categories_[%d]", i), "string or object categories are not supported; encode the column as numbers before the %s", o.class)
		}
		if len(a.F) == 0 || len(a.F) > 1<<20 {
			return nil, o.errf(fmt.Sprintf("categories_[%d]", i), "%d categories", len(a.F))
		}
		out[i] = a.F
	}
	return out, nil
}

// checkInfrequent refuses the infrequent-category grouping (min_frequency,
// max_categories).
func checkInfrequent(o *obj) error {
	if o.boolOr("_infrequent_enabled", false) {
		return &UnsupportedOptionError{Path: o.path, Option: "min_frequency/max_categories", Why: "infrequent categories are not converted; fit without min_frequency and max_categories"}
	}
	return nil
}

// catMatch is the [N, K] one-hot match of x's columns cols against cats
// (NaN matching a NaN category), as double.
func (g *graph) catMatch(x string, cols []int, cats []float64) string {
	gat := g.columns(x, cols)
	eq := g.op("Equal", []string{gat, g.row("categories", cats)})
	nanCats := make([]float64, len(cats))
	anyNaN := false
	for k, c := range cats {
		if math.IsNaN(c) {
			nanCats[k], anyNaN = 1, true
		}
	}
	if anyNaN {
		isNaN := g.op("IsNaN", []string{gat})
		sel := g.op("Cast", []string{g.row("nan_categories", nanCats)}, canonical.IntAttr("to", int64(canonical.Bool)))
		eq = g.op("Or", []string{eq, g.op("And", []string{isNaN, sel})})
	}
	return g.op("Cast", []string{eq}, canonical.IntAttr("to", int64(canonical.Double)))
}

// same is v == c, NaN matching NaN.
func same(v, c float64) bool {
	return v == c || (math.IsNaN(v) && math.IsNaN(c))
}

// oneHot is OneHotEncoder on numeric categories: one output column per
// (feature, category) not dropped, 1 where the feature equals the
// category. An unknown category gives zeros in all of its feature's
// columns (handle_unknown="ignore"; scikit-learn raises an error for
// "error", the graph cannot).
type oneHot struct {
	n    int
	cols []int     // input column of each output column
	cats []float64 // category of each output column
}

func readOneHot(o *obj) (transformer, error) {
	n, err := o.nFeaturesIn("categories_")
	if err != nil {
		return nil, err
	}
	if err := checkInfrequent(o); err != nil {
		return nil, err
	}
	cats, err := categories(o, n)
	if err != nil {
		return nil, err
	}
	drop := make([]int, n)
	for i := range drop {
		drop[i] = -1
	}
	if o.has("drop_idx_") {
		v, _ := o.get("drop_idx_")
		a, err := toArray(v)
		if err != nil {
			return nil, &AttributeError{Path: o.path, Field: "drop_idx_", Err: err}
		}
		if a.Size() != n {
			return nil, o.errf("drop_idx_", "%d values for %d features", a.Size(), n)
		}
		for i := 0; i < n; i++ {
			var f float64
			if a.Kind == 'O' {
				if a.Objects[i] == nil {
					continue
				}
				var ok bool
				if f, ok = number(a.Objects[i]); !ok {
					return nil, o.errf("drop_idx_", "value %d is %s", i, pickle.Describe(a.Objects[i]))
				}
			} else {
				f = a.F[i]
			}
			if f < 0 || f >= float64(len(cats[i])) || f != math.Trunc(f) {
				return nil, o.errf("drop_idx_", "index %g out of range for %d categories", f, len(cats[i]))
			}
			drop[i] = int(f)
		}
	}
	m := &oneHot{n: n}
	for i, cs := range cats {
		for j, c := range cs {
			if j != drop[i] {
				m.cols = append(m.cols, i)
				m.cats = append(m.cats, c)
			}
		}
	}
	if len(m.cols) == 0 {
		return nil, o.errf("categories_", "every category is dropped: the encoder outputs nothing")
	}
	if len(m.cols) > 1<<20 {
		return nil, o.errf("categories_", "%d output columns", len(m.cols))
	}
	return m, nil
}

func (m *oneHot) inDim() int  { return m.n }
func (m *oneHot) outDim() int { return len(m.cols) }

func (m *oneHot) transform(x *mat) *mat {
	y := newMat(x.r, len(m.cols))
	for i := 0; i < x.r; i++ {
		xr, yr := x.row(i), y.row(i)
		for k, j := range m.cols {
			if same(xr[j], m.cats[k]) {
				yr[k] = 1
			}
		}
	}
	return y
}

func (m *oneHot) emit(g *graph, x string) string {
	return g.catMatch(x, m.cols, m.cats)
}

// ordinal is OrdinalEncoder on numeric categories: each feature replaced
// by the index of its category; NaN, when NaN is a category, by
// encoded_missing_value; an unknown category by unknown_value
// (handle_unknown="use_encoded_value"; NaN for "error", where
// scikit-learn raises an error).
type ordinal struct {
	n       int
	cats    [][]float64
	unknown float64
	missing float64
}

func readOrdinal(o *obj) (transformer, error) {
	n, err := o.nFeaturesIn("categories_")
	if err != nil {
		return nil, err
	}
	if err := checkInfrequent(o); err != nil {
		return nil, err
	}
	m := &ordinal{n: n, unknown: math.NaN(), missing: math.NaN()}
	if m.cats, err = categories(o, n); err != nil {
		return nil, err
	}
	switch h := o.strOr("handle_unknown", "error"); h {
	case "error":
	case "use_encoded_value":
		if m.unknown, err = o.float("unknown_value"); err != nil {
			return nil, err
		}
	default:
		return nil, o.errf("handle_unknown", "%q is not supported (error, use_encoded_value are)", h)
	}
	if o.has("encoded_missing_value") {
		if m.missing, err = o.float("encoded_missing_value"); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *ordinal) inDim() int  { return m.n }
func (m *ordinal) outDim() int { return m.n }

func (m *ordinal) transform(x *mat) *mat {
	y := newMat(x.r, m.n)
	for i := 0; i < x.r; i++ {
		xr, yr := x.row(i), y.row(i)
		for f, cs := range m.cats {
			yr[f] = m.unknown
			for j, c := range cs {
				if same(xr[f], c) {
					yr[f] = float64(j)
					if math.IsNaN(c) {
						yr[f] = m.missing
					}
					break
				}
			}
		}
	}
	return y
}

// emit matches every (feature, category) pair at once; two matrix
// products give each feature's category index and whether one matched.
func (m *ordinal) emit(g *graph, x string) string {
	var cols []int
	var cats []float64
	for f, cs := range m.cats {
		for _, c := range cs {
			cols = append(cols, f)
			cats = append(cats, c)
		}
	}
	K := len(cols)
	idx, one := newMat(K, m.n), newMat(K, m.n)
	hasNaN := make([]float64, m.n)
	k := 0
	for f, cs := range m.cats {
		for j, c := range cs {
			idx.d[k*m.n+f] = float64(j)
			one.d[k*m.n+f] = 1
			if math.IsNaN(c) {
				hasNaN[f] = 1
			}
			k++
		}
	}
	match := g.catMatch(x, cols, cats)
	code := g.op("MatMul", []string{match, g.matrix("category_index", idx)})
	found := g.op("MatMul", []string{match, g.matrix("category_found", one)})
	none := g.op("Equal", []string{found, g.scalar(0)})
	unknown := make([]float64, m.n)
	for f := range unknown {
		unknown[f] = m.unknown
	}
	y := g.op("Where", []string{none, g.row("unknown_value", unknown), code})
	for _, h := range hasNaN {
		if h != 0 {
			sel := g.op("Cast", []string{g.row("nan_category", hasNaN)}, canonical.IntAttr("to", int64(canonical.Bool)))
			miss := g.op("And", []string{g.op("IsNaN", []string{x}), sel})
			enc := make([]float64, m.n)
			for f := range enc {
				enc[f] = m.missing
			}
			y = g.op("Where", []string{miss, g.row("encoded_missing_value", enc), y})
			break
		}
	}
	return y
}

// identity is FunctionTransformer with func=None (also what a
// "passthrough" in a ColumnTransformer or FeatureUnion becomes).
type identity struct{ n int }

func readFunctionTransformer(o *obj) (transformer, error) {
	if v, ok := o.attrs.Get("func"); ok && v != nil {
		name := pickle.Describe(v)
		if g, ok := v.(*pickle.Global); ok {
			name = g.String()
		}
		return nil, &UnsupportedOptionError{Path: o.path, Option: "func=" + name,
			Why: "only the identity FunctionTransformer (func=None) is converted; an arbitrary Python function has no ONNX form and is never called"}
	}
	n, err := o.nFeaturesIn()
	if err != nil {
		return nil, err
	}
	return &identity{n: n}, nil
}

func (m *identity) inDim() int                     { return m.n }
func (m *identity) outDim() int                    { return m.n }
func (m *identity) transform(x *mat) *mat          { return x }
func (m *identity) emit(g *graph, x string) string { return x }
