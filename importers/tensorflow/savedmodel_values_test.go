package tensorflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func i32(name string, dims []int64, v ...int32) *canonical.Tensor {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
	}
	return canonical.NewTensor(name, canonical.Int32, dims, raw)
}

func i64(name string, dims []int64, v ...int64) *canonical.Tensor {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return canonical.NewTensor(name, canonical.Int64, dims, raw)
}

// expectedValues holds tfjs-node's saved_model test (upstream source): the
// literal outputs below are quoted from it, and each test checks that the
// quoted line is still there.
func expectedValues(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(testpaths.Shared(t, "models", "tf_savedmodel", "tfjs_node_saved_model_test.ts.expected_values"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func quoted(t *testing.T, src, line string) {
	t.Helper()
	if !strings.Contains(src, line) {
		t.Fatalf("the upstream test no longer says %q", line)
	}
}

func check(t *testing.T, what string, out *canonical.Tensor, dt canonical.DataType, want ...float64) {
	t.Helper()
	if out.DataType != dt {
		t.Errorf("%s: type %v, want %v", what, out.DataType, dt)
	}
	if got := floats(t, out); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func sm(t *testing.T, name string) string {
	return testpaths.Shared(t, "models", "tf_savedmodel", name)
}

// times_two_int: tfjs-node feeds [1, 2, 3] (int32) and expects [2, 4, 6];
// the signature declares a scalar, so each value is fed alone.
func TestTimesTwoInt(t *testing.T) {
	quoted(t, expectedValues(t), "test_util.expectArraysClose(await output.data(), [2, 4, 6]);")
	for _, x := range []int32{1, 2, 3, -7} {
		outs := run(t, sm(t, "tfjs_node_times_two_int"), nil, i32("x", nil, x))
		check(t, fmt.Sprintf("times_two_int(%d)", x), outs[0], canonical.Int32, float64(2*x))
	}
}

// int64_multiply: [3, 4] → [18, 24] (int64 in TF; tfjs-node reads it as
// int32).
func TestInt64Multiply(t *testing.T) {
	src := expectedValues(t)
	quoted(t, src, "expect(Number(data[0])).toEqual(18);")
	quoted(t, src, "expect(Number(data[1])).toEqual(24);")
	outs := run(t, sm(t, "tfjs_node_int64_multiply"), nil, i64("x", []int64{2}, 3, 4))
	check(t, "int64_multiply([3 4])", outs[0], canonical.Int64, 18, 24)
	// Beyond int32: TF computes in int64.
	outs = run(t, sm(t, "tfjs_node_int64_multiply"), nil, i64("x", []int64{2}, 1<<40, -5))
	check(t, "int64_multiply([2^40 -5])", outs[0], canonical.Int64, float64(int64(6)<<40), -30)
}

// uint8_multiply: 3 → 18, an int32 output.
func TestUint8Multiply(t *testing.T) {
	quoted(t, expectedValues(t), "test_util.expectArraysClose(await output.data(), [18]);")
	outs := run(t, sm(t, "tfjs_node_uint8_multiply"), nil, canonical.NewTensor("x", canonical.Uint8, []int64{1}, []byte{3}))
	check(t, "uint8_multiply(3)", outs[0], canonical.Int32, 18)
}

// model_multi_output: f(x, y) = [2x, y]; model_single_input_multi_output:
// f(x) = [2x, x] (int32).
func TestMultiOutput(t *testing.T) {
	src := expectedValues(t)
	quoted(t, src, "// This test model behaves as: f(x, y)=[2*x, y]")
	quoted(t, src, "// This test model behaves as: f(x)=[2*x, x]")
	for _, x := range []int32{1, 2, 3} {
		outs := run(t, sm(t, "tfjs_node_model_multi_output"), nil, i32("x", nil, x), i32("y", nil, x+10))
		if len(outs) != 2 {
			t.Fatalf("%d outputs, want 2", len(outs))
		}
		check(t, "multi_output[0]", outs[0], canonical.Int32, float64(2*x))
		check(t, "multi_output[1]", outs[1], canonical.Int32, float64(x+10))
		outs = run(t, sm(t, "tfjs_node_model_single_input_multi_output"), nil, i32("x", nil, x))
		if len(outs) != 2 {
			t.Fatalf("%d outputs, want 2", len(outs))
		}
		check(t, "single_input_multi_output[0]", outs[0], canonical.Int32, float64(2*x))
		check(t, "single_input_multi_output[1]", outs[1], canonical.Int32, float64(x))
	}
}

// module_with_multiple_signatures: serving_default is 3x, timestwo 2x; an
// unknown signature is an error listing the signatures.
func TestMultipleSignatures(t *testing.T) {
	src := expectedValues(t)
	quoted(t, src, "test_util.expectArraysClose(await output1.data(), [3.0, 6.0, 9.0]);")
	quoted(t, src, "test_util.expectArraysClose(await output2.data(), [2.0, 4.0, 6.0]);")
	p := sm(t, "tfjs_node_module_with_multiple_signatures")
	for _, x := range []float32{1, 2, 3} {
		check(t, "serving_default", run(t, p, nil, f32("x", nil, x))[0], canonical.Float, float64(3*x))
		check(t, "serving_default (named)", run(t, p, map[string]string{"signature": "serving_default"}, f32("x", nil, x))[0], canonical.Float, float64(3*x))
		check(t, "timestwo", run(t, p, map[string]string{"signature": "timestwo"}, f32("x", nil, x))[0], canonical.Float, float64(2*x))
	}
	_, err := New().Import(t.Context(), p, map[string]string{"signature": "wrong_signature"})
	var oe *importers.OptionError
	if !errors.As(err, &oe) || oe.Key != "signature" || !strings.Contains(err.Error(), "timestwo") || !strings.Contains(err.Error(), "wrong_signature") {
		t.Errorf("wrong signature: %v", err)
	}
}

// tf2onnx's regression SavedModel and frozen graph: pred = W*x + b with
// the same variables; the frozen graph holds them as constants, the
// SavedModel in its tensor bundle.
func TestRegressionSavedModelEqualsFrozen(t *testing.T) {
	x := f32("X", []int64{4}, -1, 0, 0.5, 3)
	a := floats(t, run(t, sm(t, "tf2onnx_regression"), nil, x)[0])
	b := floats(t, run(t, testpaths.Shared(t, "models", "tf_graphdef", "tf2onnx_regression", "frozen.pb"), nil, x)[0])
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("SavedModel %v, frozen %v", a, b)
	}
	// Linear in x.
	if d1, d2 := a[1]-a[0], a[3]-a[2]; d1 == 0 || abs(d2/2.5-d1) > 1e-5*abs(d1) {
		t.Errorf("not linear: %v", a)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
