package tflite

import (
	"testing"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

func TestTable(t *testing.T) {
	ops := Ops()
	if len(ops) != len(fb.EnumNamesBuiltinOperator) {
		t.Fatalf("%d rows for %d builtins", len(ops), len(fb.EnumNamesBuiltinOperator))
	}
	seen := map[fb.BuiltinOperator]bool{}
	for _, e := range entries() {
		if seen[e.code] {
			t.Errorf("%s has two rows", e.code)
		}
		seen[e.code] = true
	}
	onnx := map[string]string{}
	for _, o := range ops {
		if o.Kind != Unary && o.Kind != Binary {
			continue
		}
		if prev, dup := onnx[o.ONNX]; dup {
			t.Errorf("%s and %s both are the one-to-one %s: the export would be ambiguous", prev, o.Name, o.ONNX)
		}
		onnx[o.ONNX] = o.Name
		back, ok := ElementwiseFor(o.ONNX)
		if !ok || back.Builtin != o.Builtin {
			t.Errorf("%s imports as %s, which exports as %v", o.Name, o.ONNX, back.Name)
		}
	}
	// The three rows that had drifted between the two hand-kept tables.
	for code, want := range map[fb.BuiltinOperator]string{
		fb.BuiltinOperatorELU: "Elu", fb.BuiltinOperatorHARD_SWISH: "HardSwish", fb.BuiltinOperatorPRELU: "PRelu",
	} {
		o, ok := Elementwise(code)
		if !ok || o.ONNX != want {
			t.Errorf("%s: %+v, want %s both ways", code, o, want)
		}
	}
}

// TestSamePads checks the rule against TensorFlow's documented SAME
// padding (tf.nn.convolution: out = ceil(in/stride), pad_total =
// max((out-1)*stride + (k-1)*dil + 1 - in, 0), pad_before = pad_total/2).
func TestSamePads(t *testing.T) {
	for _, c := range []struct{ in, k, s, d, b, a int64 }{
		{5, 3, 2, 1, 1, 1}, {6, 3, 2, 1, 0, 1}, {4, 1, 1, 1, 0, 0}, {7, 3, 1, 2, 2, 2},
		{224, 3, 2, 1, 0, 1}, {3, 5, 1, 1, 2, 2}, {1, 3, 3, 1, 1, 1},
	} {
		if b, a := SamePads(c.in, c.k, c.s, c.d); b != c.b || a != c.a {
			t.Errorf("SamePads(%d, %d, %d, %d) = %d, %d; want %d, %d", c.in, c.k, c.s, c.d, b, a, c.b, c.a)
		}
	}
}
