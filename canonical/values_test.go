package canonical_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func backendTensor(t *testing.T, test, file string) *canonical.Tensor {
	t.Helper()
	p := filepath.Join(testpaths.RepoRoot(t), "..", "shared", "onnx-v1.22", "backend-tests", "node", test, "test_data_set_0", file)
	x, err := canonical.ReadTensorFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// widening lists backend Cast tests whose cast is exact: every input value
// is representable in the output type, so decoding the input must give the
// output's values.
var widening = []struct {
	test   string
	in     canonical.DataType
	floats bool // compare as floats (else as integers)
}{
	{"test_cast_FLOAT16_to_FLOAT", canonical.Float16, true},
	{"test_cast_FLOAT16_to_DOUBLE", canonical.Float16, true},
	{"test_cast_BFLOAT16_to_FLOAT", canonical.BFloat16, true},
	{"test_cast_FLOAT_to_DOUBLE", canonical.Float, true},
	{"test_cast_FLOAT8E4M3FN_to_FLOAT", canonical.Float8E4M3FN, true},
	{"test_cast_FLOAT8E4M3FN_to_FLOAT16", canonical.Float8E4M3FN, true},
	{"test_cast_FLOAT8E4M3FNUZ_to_FLOAT", canonical.Float8E4M3FNUZ, true},
	{"test_cast_FLOAT8E4M3FNUZ_to_FLOAT16", canonical.Float8E4M3FNUZ, true},
	{"test_cast_FLOAT8E5M2_to_FLOAT", canonical.Float8E5M2, true},
	{"test_cast_FLOAT8E5M2_to_FLOAT16", canonical.Float8E5M2, true},
	{"test_cast_FLOAT8E5M2FNUZ_to_FLOAT", canonical.Float8E5M2FNUZ, true},
	{"test_cast_FLOAT8E5M2FNUZ_to_FLOAT16", canonical.Float8E5M2FNUZ, true},
	{"test_cast_e8m0_FLOAT8E8M0_to_FLOAT", canonical.Float8E8M0, true},
	{"test_cast_FLOAT4E2M1_to_FLOAT", canonical.Float4E2M1, true},
	{"test_cast_FLOAT4E2M1_to_FLOAT16", canonical.Float4E2M1, true},
	{"test_cast_INT4_to_FLOAT", canonical.Int4, true},
	{"test_cast_INT4_to_FLOAT16", canonical.Int4, true},
	{"test_cast_UINT4_to_FLOAT", canonical.Uint4, true},
	{"test_cast_INT2_to_FLOAT", canonical.Int2, true},
	{"test_cast_UINT2_to_FLOAT", canonical.Uint2, true},
	{"test_cast_INT4_to_INT8", canonical.Int4, false},
	{"test_cast_UINT4_to_UINT8", canonical.Uint4, false},
	{"test_cast_INT2_to_INT8", canonical.Int2, false},
	{"test_cast_UINT2_to_UINT8", canonical.Uint2, false},
}

func TestDecodeAgainstBackendCasts(t *testing.T) {
	for _, c := range widening {
		in := backendTensor(t, c.test, "input_0.pb")
		out := backendTensor(t, c.test, "output_0.pb")
		if in.DataType != c.in {
			t.Fatalf("%s: input is %v, want %v", c.test, in.DataType, c.in)
		}
		if c.floats {
			a, err := in.Float64s()
			if err != nil {
				t.Fatalf("%s: %v", c.test, err)
			}
			b, err := out.Float64s()
			if err != nil {
				t.Fatalf("%s: %v", c.test, err)
			}
			if !sameFloats(a, b) {
				t.Errorf("%s: decoded input %v\nis not the expected output %v", c.test, a, b)
			}
		} else {
			a, err := in.Int64s()
			if err != nil {
				t.Fatalf("%s: %v", c.test, err)
			}
			b, err := out.Int64s()
			if err != nil {
				t.Fatalf("%s: %v", c.test, err)
			}
			if !slices.Equal(a, b) {
				t.Errorf("%s: decoded input %v, want %v", c.test, a, b)
			}
		}
		// The text of each element is the same on both sides when both
		// print at float32 precision or are integers.
		if out.DataType == canonical.Float || out.DataType == canonical.Int8 || out.DataType == canonical.Uint8 {
			sa, err := in.ElementStrings()
			if err != nil {
				t.Fatalf("%s: %v", c.test, err)
			}
			sb, err := out.ElementStrings()
			if err != nil {
				t.Fatalf("%s: %v", c.test, err)
			}
			if !slices.Equal(sa, sb) {
				t.Errorf("%s: ElementStrings %v, want %v", c.test, sa, sb)
			}
		}
	}
}

// TestInt64sOfIntegerCasts: integer Cast tests whose values fit both types.
func TestInt64sOfIntegerCasts(t *testing.T) {
	// test_cast_INT4_to_INT8 holds every int4 value: -8..7.
	x := backendTensor(t, "test_cast_INT4_to_INT8", "input_0.pb")
	v, err := x.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := x.Float64s()
	for i := range v {
		if float64(v[i]) != f[i] || v[i] < -8 || v[i] > 7 {
			t.Errorf("int4 element %d: Int64s %d, Float64s %g", i, v[i], f[i])
		}
	}
	// Float tensors truncate toward zero, as Cast FLOAT -> INT4 does for
	// the values in range of test_cast_FLOAT_to_INT4.
	if _, err := backendTensor(t, "test_cast_FLOAT_to_INT4", "input_0.pb").Int64s(); err != nil {
		t.Fatal(err)
	}
}

func TestFloat64sSpecialValues(t *testing.T) {
	// Cast to FLOAT8E5M2 without saturation turns values beyond the largest
	// finite one (57344) into infinities and keeps NaN: the decoded output
	// must show exactly that against the float input.
	in := backendTensor(t, "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2", "input_0.pb")
	out := backendTensor(t, "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2", "output_0.pb")
	x, err := in.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	y, err := out.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != len(y) {
		t.Fatalf("%d inputs, %d outputs", len(x), len(y))
	}
	var inf, nan int
	for i := range y {
		switch {
		case math.IsNaN(y[i]):
			nan++
			if !math.IsNaN(x[i]) {
				t.Errorf("element %d: NaN from %g", i, x[i])
			}
		case math.IsInf(y[i], 0):
			inf++
			if math.Abs(x[i]) < 57344 || math.Signbit(x[i]) != math.Signbit(y[i]) {
				t.Errorf("element %d: %g from %g", i, y[i], x[i])
			}
		case math.Abs(y[i]) > 57344:
			t.Errorf("element %d: %g is beyond the largest E5M2", i, y[i])
		}
	}
	if inf == 0 || nan == 0 {
		t.Errorf("expected infinities and NaN in %v", y)
	}
	s, _ := out.ElementStrings()
	for i := range s {
		want := ""
		switch {
		case math.IsNaN(y[i]):
			want = "NaN"
		case math.IsInf(y[i], 1):
			want = "+Inf"
		case math.IsInf(y[i], -1):
			want = "-Inf"
		default:
			continue
		}
		if s[i] != want {
			t.Errorf("ElementStrings[%d] = %q, want %q", i, s[i], want)
		}
	}
}

// TestComplexAndBool decodes complex data made of a backend test's float
// values, and a bool tensor of a backend test.
func TestComplexAndBool(t *testing.T) {
	f := backendTensor(t, "test_cast_FLOAT_to_DOUBLE", "input_0.pb")
	raw, err := f.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	n := len(raw) / 8
	c := canonical.NewTensor("c", canonical.Complex64, []int64{int64(n)}, raw[:8*n])
	got, err := c.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := f.Float64s()
	if !sameFloats(got, want[:2*n]) {
		t.Errorf("complex64 parts %v, want %v", got, want[:2*n])
	}
	s, err := c.ElementStrings()
	if err != nil || len(s) != n {
		t.Fatalf("complex strings %v %v", s, err)
	}
	if _, err := c.Int64s(); err == nil {
		t.Errorf("Int64s of complex: no error")
	}
	b := backendTensor(t, "test_and2d", "output_0.pb")
	if b.DataType != canonical.Bool {
		t.Fatalf("test_and2d output is %v", b.DataType)
	}
	v, _ := b.Int64s()
	bs, _ := b.ElementStrings()
	rb, _ := b.Bytes()
	for i := range v {
		if v[i] != int64(rb[i]) || bs[i] != map[bool]string{true: "true", false: "false"}[rb[i] != 0] {
			t.Errorf("bool element %d: %d %q from byte %d", i, v[i], bs[i], rb[i])
		}
	}
	if got, want := b.Format(2), b.Name+" bool[3,4] {"+bs[0]+", "+bs[1]+", … 10 more}"; got != want {
		t.Errorf("Format(2) = %q, want %q", got, want)
	}
}

// TestTensorFileRoundTrip writes and reads back a backend-test tensor.
func TestTensorFileRoundTrip(t *testing.T) {
	in := backendTensor(t, "test_cast_FLOAT8E4M3FN_to_FLOAT", "input_0.pb")
	p := filepath.Join(t.TempDir(), "x.pb")
	if err := canonical.WriteTensorFile(p, in); err != nil {
		t.Fatal(err)
	}
	back, err := canonical.ReadTensorFile(p)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := in.Float64s()
	b, _ := back.Float64s()
	if back.DataType != in.DataType || !slices.Equal(back.Dims, in.Dims) || !sameFloats(a, b) {
		t.Errorf("round trip changed the tensor")
	}
	// Damaged files are errors naming the file.
	bad := filepath.Join(t.TempDir(), "bad.pb")
	raw, _ := os.ReadFile(p)
	if err := os.WriteFile(bad, raw[:len(raw)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := canonical.ReadTensorFile(bad); err == nil || !strings.Contains(err.Error(), "bad.pb") {
		t.Errorf("truncated file: %v", err)
	}
}
