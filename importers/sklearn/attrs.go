package sklearn

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/onnxconv/onnxconv/formats/pickle"
)

// AttributeError is a missing or malformed attribute of an estimator.
type AttributeError struct {
	// Path locates the estimator ("Pipeline.steps[1] LogisticRegression").
	Path  string
	Field string
	Err   error
	// Version is the scikit-learn version the file records (its
	// estimator's _sklearn_version), or noVersion.
	Version string
}

// noVersion is AttributeError.Version for a file that records none
// (scikit-learn before 0.18 did not).
const noVersion = "none"

func (e *AttributeError) Error() string {
	s := fmt.Sprintf("%s.%s: %v", e.Path, e.Field, e.Err)
	switch e.Version {
	case "":
	case noVersion:
		s += " (the file records no scikit-learn version: written before 0.18; releases 0.20 to 1.6 are read)"
	default:
		s += fmt.Sprintf(" (the file was written by scikit-learn %s; releases 0.20 to 1.6 are read)", e.Version)
	}
	return s
}

// fileVersion is the scikit-learn version recorded by the top estimator
// of an unpickled file.
func fileVersion(v pickle.Value) string {
	if o, ok := v.(*pickle.Object); ok {
		if a := o.Attrs(); a != nil {
			if s, ok := a.Get("_sklearn_version"); ok {
				if str, ok := s.(string); ok && str != "" {
					return str
				}
			}
		}
	}
	return noVersion
}

// nFeaturesIn reads the width of the input: n_features_in_ (scikit-learn
// 0.24 on), else what older releases kept, whichever the file has:
// n_features_ (trees and ensembles before 1.2), n_input_features_
// (PolynomialFeatures before 1.0), _n_features (ColumnTransformer before
// 0.24), else the length of the first of widthFrom the file has (a
// fitted per-feature array such as scale_, or a list such as
// categories_).
func (o *obj) nFeaturesIn(widthFrom ...string) (int, error) {
	for _, f := range []string{"n_features_in_", "n_features_", "n_input_features_", "_n_features"} {
		if o.has(f) {
			return o.int(f)
		}
	}
	for _, f := range widthFrom {
		if !o.has(f) {
			continue
		}
		v, _ := o.get(f)
		if items, ok := pickleList(v); ok {
			return len(items), nil
		}
		a, err := toArray(v)
		if err != nil || len(a.Shape) != 1 {
			return 0, o.errf(f, "expected a 1-D per-feature array to give the input width")
		}
		return a.Shape[0], nil
	}
	also := "n_features_, n_input_features_, _n_features"
	if len(widthFrom) > 0 {
		also += ", " + strings.Join(widthFrom, ", ")
	}
	return 0, o.errf("n_features_in_", "missing, and none of the attributes older releases kept (%s) is there", also)
}

func (e *AttributeError) Unwrap() error { return e.Err }

// obj is a pickled estimator: its class and attributes.
type obj struct {
	class  string // e.g. "LogisticRegression"
	module string
	path   string
	attrs  *pickle.Dict
}

// asObj reads an estimator object: NEWOBJ of its class, or
// copyreg._reconstructor(cls, object, None), with a dict state.
func asObj(v pickle.Value, path string) (*obj, error) {
	o, ok := v.(*pickle.Object)
	if !ok {
		return nil, fmt.Errorf("%s: expected a scikit-learn estimator, found %s", objPath(path), pickle.Describe(v))
	}
	g := o.Class()
	if g != nil && g.Name == "_reconstructor" && len(o.Args) > 0 {
		g, _ = o.Args[0].(*pickle.Global)
	}
	if g == nil {
		return nil, fmt.Errorf("%s: expected a scikit-learn estimator, found %s", objPath(path), pickle.Describe(v))
	}
	attrs := o.Attrs()
	if attrs == nil {
		return nil, fmt.Errorf("%s: %s has no attributes (not fitted?)", objPath(path), g)
	}
	if path == "" {
		path = g.Name
	}
	return &obj{class: g.Name, module: g.Module, path: path, attrs: attrs}, nil
}

func (o *obj) errf(field, format string, args ...any) error {
	return &AttributeError{Path: o.path, Field: field, Err: fmt.Errorf(format, args...)}
}

func (o *obj) get(field string) (pickle.Value, error) {
	v, ok := o.attrs.Get(field)
	if !ok {
		return nil, o.errf(field, "missing (is the %s fitted?)", o.class)
	}
	return v, nil
}

func (o *obj) has(field string) bool {
	v, ok := o.attrs.Get(field)
	return ok && v != nil
}

// array reads a numeric array attribute.
func (o *obj) array(field string) (*Array, error) {
	v, err := o.get(field)
	if err != nil {
		return nil, err
	}
	a, err := toArray(v)
	if err != nil {
		return nil, &AttributeError{Path: o.path, Field: field, Err: err}
	}
	if a.Kind == 'O' {
		return nil, o.errf(field, "an object array where numbers were expected")
	}
	return a, nil
}

// vector reads a numeric attribute as a flat vector: an array of any shape,
// or a number.
func (o *obj) vector(field string) ([]float64, error) {
	v, err := o.get(field)
	if err != nil {
		return nil, err
	}
	if f, ok := number(v); ok {
		return []float64{f}, nil
	}
	a, err := o.array(field)
	if err != nil {
		return nil, err
	}
	return a.F, nil
}

// matrix reads a 2-D numeric array (a 1-D one as one row).
func (o *obj) matrix(field string) (*mat, error) {
	a, err := o.array(field)
	if err != nil {
		return nil, err
	}
	switch len(a.Shape) {
	case 1:
		return &mat{r: 1, c: a.Shape[0], d: a.F}, nil
	case 2:
		return &mat{r: a.Shape[0], c: a.Shape[1], d: a.F}, nil
	}
	return nil, o.errf(field, "expected a 2-D array, found shape %v", a.Shape)
}

// number reads a Python int, float or bool, or a numpy scalar.
func number(v pickle.Value) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f, true
	case *Array:
		if v.Kind != 'O' && v.Kind != 'V' && len(v.F) == 1 && len(v.Shape) == 0 {
			return v.F[0], true
		}
	case *pickle.Object:
		if a, err := toArray(v); err == nil && a.Kind != 'O' && len(a.F) == 1 && len(a.Shape) == 0 {
			return a.F[0], true
		}
	}
	return 0, false
}

func (o *obj) float(field string) (float64, error) {
	v, err := o.get(field)
	if err != nil {
		return 0, err
	}
	f, ok := number(v)
	if !ok {
		return 0, o.errf(field, "expected a number, found %s", pickle.Describe(v))
	}
	return f, nil
}

func (o *obj) int(field string) (int, error) {
	f, err := o.float(field)
	if err != nil {
		return 0, err
	}
	if f != float64(int(f)) || f < 0 || f > 1<<30 {
		return 0, o.errf(field, "expected a count, found %g", f)
	}
	return int(f), nil
}

func (o *obj) str(field string) (string, error) {
	v, err := o.get(field)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", o.errf(field, "expected a string, found %s", pickle.Describe(v))
	}
	return s, nil
}

// strOr reads an optional string attribute.
func (o *obj) strOr(field, def string) string {
	v, ok := o.attrs.Get(field)
	if !ok {
		return def
	}
	if s, ok := v.(string); ok {
		return s
	}
	return def
}

func (o *obj) boolOr(field string, def bool) bool {
	v, ok := o.attrs.Get(field)
	if !ok {
		return def
	}
	if b, ok := v.(bool); ok {
		return b
	}
	return def
}

// classes reads classes_ as int64 labels.
func (o *obj) classes(field string) ([]int64, error) {
	a, err := o.array(field)
	if err != nil {
		if v, ok := o.attrs.Get(field); ok {
			if ar, err2 := toArray(v); err2 == nil && ar.Kind == 'O' {
				return nil, o.errf(field, "string or object class labels are not supported yet; encode the labels as integers (LabelEncoder) before fitting")
			}
		}
		return nil, err
	}
	if len(a.Shape) != 1 || len(a.F) < 2 {
		return nil, o.errf(field, "expected at least 2 classes, shape %v", a.Shape)
	}
	out := make([]int64, len(a.F))
	for i, f := range a.F {
		if f != float64(int64(f)) {
			return nil, o.errf(field, "class label %g is not an integer; only integer labels are supported", f)
		}
		out[i] = int64(f)
	}
	return out, nil
}

// pickleList returns the items of a list or tuple.
func pickleList(v pickle.Value) ([]pickle.Value, bool) {
	switch l := v.(type) {
	case *pickle.List:
		return l.Items, true
	case *pickle.Tuple:
		return l.Items, true
	}
	return nil, false
}

// objPath names an object's place in the pickle for messages: its path,
// or "the pickled object" for the top one.
func objPath(path string) string {
	if path == "" {
		return "the pickled object"
	}
	return path
}
