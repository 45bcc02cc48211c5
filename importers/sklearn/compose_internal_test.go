package sklearn

import (
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/formats/pickle"
)

// TestColumnIndices covers the ColumnTransformer column specifiers the
// fixtures do not: negative indices, lists of booleans, names (through
// feature_names_in_), slices by name (inclusive, as scikit-learn's) and
// with a step, and the errors.
func TestColumnIndices(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	slice := func(args ...pickle.Value) pickle.Value {
		return &pickle.Object{Op: "REDUCE", Callable: &pickle.Global{Module: "builtins", Name: "slice"}, Args: args}
	}
	cases := []struct {
		v    pickle.Value
		want []int
	}{
		{int64(-1), []int{4}},
		{"c", []int{2}},
		{&pickle.List{Items: []pickle.Value{int64(0), int64(-2)}}, []int{0, 3}},
		{&pickle.List{Items: []pickle.Value{true, false, true, false, false}}, []int{0, 2}},
		{&pickle.List{Items: []pickle.Value{"e", "a"}}, []int{4, 0}},
		{slice("b", "d", nil), []int{1, 2, 3}},
		{slice(nil, nil, int64(2)), []int{0, 2, 4}},
		{slice(int64(1), int64(-1), nil), []int{1, 2, 3}},
		{&Array{Shape: []int{5}, Kind: 'b', F: []float64{0, 1, 0, 0, 1}}, []int{1, 4}},
	}
	for _, c := range cases {
		got, err := columnIndices(c.v, 5, names)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, %v; want %v", pickle.Describe(c.v), got, err, c.want)
		}
	}
	for _, bad := range []pickle.Value{int64(5), "z", slice(nil, nil, int64(-1)), 1.5, &pickle.Dict{}} {
		if got, err := columnIndices(bad, 5, names); err == nil {
			t.Errorf("%s: accepted as %v", pickle.Describe(bad), got)
		}
	}
}
