package onnxspec

import (
	"reflect"
	"testing"
)

// The expected lists were checked by hand against Changelog.md and
// Changelog-ml.md.
func TestChangesBetween(t *testing.T) {
	cases := []struct {
		domain, op string
		from, to   int
		want       []string
	}{
		{"", "Softmax", 11, 13, []string{
			"input 0 input: unspecified -> differentiable",
			"output 0 output: unspecified -> differentiable",
			"attribute axis: default 1 -> -1",
			"type constraint T: added tensor(bfloat16)",
		}},
		{"", "Softmax", 1, 11, nil}, // semantics only
		{"", "Resize", 18, 19, nil},
		{"", "Resize", 13, 18, []string{
			"attribute antialias added: INT, default 0",
			"attribute axes added: INTS",
			"attribute keep_aspect_ratio_policy added: STRING, default stretch",
		}},
		{"", "Reshape", 1, 5, []string{
			"input count: 1 -> 2",
			"input 1 added: shape: tensor(int64)",
			"attribute consumed_inputs removed",
			"attribute shape removed",
			"type constraint T: added tensor(uint8), tensor(uint16), tensor(uint32), tensor(uint64), tensor(int8), tensor(int16), tensor(int32), tensor(int64), tensor(string), tensor(bool), tensor(complex64), tensor(complex128)",
		}},
		{"", "Reshape", 13, 14, []string{"attribute allowzero added: INT, default 0"}},
		{"", "Split", 13, 18, []string{"attribute num_outputs added: INT"}},
		{"", "Loop", 1, 11, []string{
			"input count: 3 - inf -> 2 - inf",
			"input 2 v_initial: min arity 1 -> 0",
		}},
		{"", "Upsample", 9, 10, []string{"deprecated: the operator is removed from this opset on"}},
		{"", "Upsample", 1, 7, []string{
			"experimental: true -> false",
			"attribute scales added: FLOATS, required",
			"attribute height_scale removed",
			"attribute width_scale removed",
			"type constraint T: added tensor(uint8), tensor(uint16), tensor(uint32), tensor(uint64), tensor(int8), tensor(int16), tensor(string), tensor(complex64), tensor(complex128)",
		}},
		{DomainML, "LabelEncoder", 2, 4, []string{
			"attribute default_tensor added: TENSOR",
			"attribute keys_tensor added: TENSOR",
			"attribute values_tensor added: TENSOR",
			"type constraint T1: added tensor(int32), tensor(int16), tensor(double)",
			"type constraint T2: added tensor(int32), tensor(int16), tensor(double)",
		}},
	}
	for _, c := range cases {
		a, ok1 := Get(c.domain, c.op, c.from)
		b, ok2 := Get(c.domain, c.op, c.to)
		if !ok1 || !ok2 {
			t.Fatalf("%s %d or %d missing", c.op, c.from, c.to)
		}
		if got := ChangesBetween(a, b); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ChangesBetween(%s-%d, %s-%d) =\n%q\nwant\n%q", c.op, c.from, c.op, c.to, got, c.want)
		}
	}
	for _, s := range All() {
		if got := ChangesBetween(s, s); got != nil {
			t.Errorf("ChangesBetween(%s, itself) = %q", s, got)
		}
	}
	if ChangesBetween(nil, All()[0]) != nil {
		t.Error("ChangesBetween(nil, s) should be nil")
	}
}

// TestChangesReverse checks that going down reports the inverse changes.
func TestChangesReverse(t *testing.T) {
	a, _ := Get("", "Softmax", 13)
	b, _ := Get("", "Softmax", 11)
	want := []string{
		"input 0 input: differentiable -> unspecified",
		"output 0 output: differentiable -> unspecified",
		"attribute axis: default -1 -> 1",
		"type constraint T: removed tensor(bfloat16)",
	}
	if got := ChangesBetween(a, b); !reflect.DeepEqual(got, want) {
		t.Errorf("ChangesBetween(Softmax-13, Softmax-11) = %q, want %q", got, want)
	}
}
