package sklearn

import (
	"fmt"
	"math/big"

	"github.com/onnxconv/onnxconv/pickle"
)

// AttributeError is a missing or malformed attribute of an estimator.
type AttributeError struct {
	// Path locates the estimator ("Pipeline.steps[1] LogisticRegression").
	Path  string
	Field string
	Err   error
}

func (e *AttributeError) Error() string {
	return fmt.Sprintf("%s.%s: %v", e.Path, e.Field, e.Err)
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
		return nil, o.errf(field, "missing (is the %s fitted? was it saved by scikit-learn 0.24 to 1.5?)", o.class)
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
