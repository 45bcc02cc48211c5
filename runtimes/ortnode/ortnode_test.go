package ortnode

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/node"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
	"github.com/onnxconv/onnxconv/verify"
)

// testRuntime is the runtime on the repository's node_modules (npm ci
// --ignore-scripts), or a skip counted for TestMain's report.
func testRuntime(t *testing.T) runtimes.Runtime {
	t.Helper()
	_, modules := testpaths.Node(t, Package)
	r := New(runtimetest.NodeModules(modules))
	if err := r.(runtimes.Checker).Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return r
}

// backendTest is a node test of the ONNX 1.22 backend tests in ../shared:
// its model, and the inputs and outputs ONNX's reference implementation
// stored in test_data_set_0.
func backendTest(t *testing.T, name string) (dir string, m *canonical.Model, ins, outs []*canonical.Tensor) {
	t.Helper()
	c := runtimetest.BackendCase(t, name)
	m, err := canonical.Load(c.Path, canonical.LoadOptions{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { m.Close() })
	return filepath.Dir(c.Path), m, c.Samples[0].Inputs, c.Samples[0].Want
}

// TestBackendNodeTests: ONNX Runtime under Node computes the outputs the
// ONNX reference implementation stored for models of every element type
// onnxruntime-node passes (float32/64, float16, int8..int64, uint8..uint64,
// bool, string), one session per model, compared with
// verify.Compare at its default tolerance.
func TestBackendNodeTests(t *testing.T) {
	r := testRuntime(t)
	for _, name := range []string{
		"test_add",                         // float32
		"test_cast_DOUBLE_to_FLOAT",        // float64 in
		"test_cast_FLOAT_to_FLOAT16",       // float16 out
		"test_cast_FLOAT16_to_DOUBLE",      // float16 in, float64 out
		"test_bitwise_and_i16_3d",          // int16
		"test_bitwise_or_ui64_bcast_3v1d",  // uint64
		"test_bitwise_xor_ui8_bcast_4v3d",  // uint8
		"test_bitwise_not_4d",              // uint16
		"test_bitwise_and_ui64_bcast_3v1d", // uint64
		"test_argmax_default_axis_example", // int64 out
		"test_and_bcast4v4d",               // bool
		"test_equal_string",                // string in, bool out
		"test_string_concat",               // string in and out
		"test_dequantizelinear",            // uint8 in
		"test_mod_mixed_sign_int8",         // int8
		"test_mod_uint32",                  // uint32
	} {
		t.Run(name, func(t *testing.T) { matchStored(t, r, name) })
	}
}

// matchStored runs the backend test name in r and compares its outputs
// with the stored ones at verify's default tolerance; it returns what the
// setup says computed the outputs (with the session's note).
func matchStored(t *testing.T, r runtimes.Runtime, name string) string {
	t.Helper()
	dir, m, ins, outs := backendTest(t, name)
	if len(ins) == 0 {
		t.Skipf("%s has no stored inputs", dir)
	}
	s, a := setupSide(t, r, dir, m)
	b := &verify.Side{Name: "stored outputs", Expected: [][]*canonical.Tensor{outs}}
	rep, err := verify.Compare(context.Background(), a, b, verify.Options{Inputs: [][]*canonical.Tensor{ins}, ByOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent {
		t.Errorf("%s: %s", name, rep.Summary)
	}
	return s.DescribeSide(0)
}

// setupSide is the side of backend test dir's model m on r, in a setup
// closed with the test.
func setupSide(t *testing.T, r runtimes.Runtime, dir string, m *canonical.Model) (*runtimes.Setup, *verify.Side) {
	t.Helper()
	s, err := runtimes.NewSetup([]string{RuntimeName}, 1, runtimes.NewSet(nil, r))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	side, err := s.Side(0, filepath.Join(dir, "model.onnx"), m)
	if err != nil {
		t.Fatal(err)
	}
	return s, side
}

// TestManySamplesThreads: one session (one node process, the model loaded
// once) serves several samples, with two intra-op threads: test_add's
// stored inputs, then the same inputs swapped (x+y = y+x), both against
// the stored sum.
func TestManySamplesThreads(t *testing.T) {
	r := testRuntime(t)
	dir, m, ins, outs := backendTest(t, "test_add")
	sess, err := r.Open(context.Background(), filepath.Join(dir, "model.onnx"), runtimes.OpenOptions{InputNames: []string{"x", "y"}, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	a := &verify.Side{Name: "onnxruntime", Model: m, Runner: sess}
	b := &verify.Side{Name: "stored outputs", Expected: [][]*canonical.Tensor{outs, outs, outs}}
	swapped := []*canonical.Tensor{ins[1], ins[0]}
	rep, err := verify.Compare(context.Background(), a, b, verify.Options{Inputs: [][]*canonical.Tensor{ins, swapped, ins}, ByOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent || rep.Samples != 3 {
		t.Errorf("%d samples: %s", rep.Samples, rep.Summary)
	}
}

// TestErrors: a file that is not ONNX, an input name the model does not
// have, an input of a type onnxruntime-node does not pass, a missing
// package: each a typed, one-line error.
func TestErrors(t *testing.T) {
	r := testRuntime(t)
	ctx := context.Background()
	bad := filepath.Join(t.TempDir(), "bad.onnx")
	if err := os.WriteFile(bad, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := r.Open(ctx, bad, runtimes.OpenOptions{})
	var re *RunError
	if !errors.As(err, &re) || re.Kind != "load" || strings.Contains(err.Error(), "\n") {
		t.Errorf("not ONNX: %v", err)
	}

	dir, _, ins, _ := backendTest(t, "test_add")
	sess, err := r.Open(ctx, filepath.Join(dir, "model.onnx"), runtimes.OpenOptions{InputNames: []string{"x", "nope"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Run(ctx, ins); !errors.As(err, &re) || re.Kind != "inputs" || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("wrong input name: %v", err)
	}
	bf := canonical.NewTensor("x", onnxpb.TensorProto_BFLOAT16, []int64{1}, []byte{0, 0})
	if _, err := sess.Run(ctx, []*canonical.Tensor{bf, bf}); !errors.As(err, &re) || re.Kind != "type" {
		t.Errorf("bfloat16 input: %v", err)
	}

	missing := New(FindOptions{Getenv: func(k string) string {
		if k == node.EnvNodeModules {
			return t.TempDir()
		}
		return ""
	}})
	err = missing.(runtimes.Checker).Check()
	var ni *runtimes.NotInstalledError
	if !errors.As(err, &ni) || ni.Runtime != RuntimeName || !strings.Contains(err.Error(), runtimes.InstallCommand) {
		t.Errorf("Check without the package: %v", err)
	}
	if v := missing.Info().Version; v != "unknown" {
		t.Errorf("Info().Version without the package = %q", v)
	}
}

func inputNames(m *canonical.Model) []string {
	var out []string
	for _, v := range verify.GraphInputs(m) {
		out = append(out, v.Name)
	}
	return out
}

// TestCapture: a side on ONNX Runtime hands out intermediate values
// (verify.CaptureRunner, for bisection) by running a copy of the model with
// them as graph outputs. In test_greater_equal_int8_expanded (Greater, Equal,
// Or), the captured Greater and Equal of the stored inputs, or-ed, are the
// stored output, and each holds both true and false; a graph input comes
// back as given.
func TestCapture(t *testing.T) {
	r := testRuntime(t)
	dir, m, ins, outs := backendTest(t, "test_greater_equal_int8_expanded")
	_, side := setupSide(t, r, dir, m)
	cr, ok := side.Runner.(verify.CaptureRunner)
	if !ok {
		t.Fatalf("the side's runner %T does not capture", side.Runner)
	}
	ops := map[string]string{}
	for _, n := range m.Graph.Nodes {
		ops[n.OpType] = n.Outputs[0].Name
	}
	gt, eq := ops["Greater"], ops["Equal"]
	if gt == "" || eq == "" || ops["Or"] == "" {
		t.Fatalf("test_greater_equal_int8_expanded is no longer Greater, Equal, Or: %v", ops)
	}
	x := verify.GraphInputs(m)[0].Name
	got, err := cr.RunCapture(context.Background(), ins, []string{gt, eq, x})
	if err != nil {
		t.Fatal(err)
	}
	want, err := outs[0].Int64s()
	if err != nil {
		t.Fatal(err)
	}
	g, err := got[gt].Int64s()
	if err != nil {
		t.Fatal(err)
	}
	e, err := got[eq].Int64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(want) || len(e) != len(want) {
		t.Fatalf("captured %d and %d values, the stored output has %d", len(g), len(e), len(want))
	}
	var gTrue, eTrue int
	for i := range want {
		or := int64(0)
		if g[i] != 0 || e[i] != 0 {
			or = 1
		}
		if or != want[i] {
			t.Errorf("element %d: Greater %d or Equal %d, stored %d", i, g[i], e[i], want[i])
		}
		gTrue += int(g[i])
		eTrue += int(e[i])
	}
	if gTrue == 0 || gTrue == len(want) || eTrue == 0 || eTrue == len(want) {
		t.Errorf("Greater true %d, Equal true %d of %d: the inputs do not tell the values apart", gTrue, eTrue, len(want))
	}
	if got[x] != ins[0] {
		t.Errorf("graph input %q not handed back as given", x)
	}
}

// TestConformance runs the runtime conformance suite on ONNX Runtime under
// Node, against the outputs ONNX's reference implementation stored for
// the backend tests; a file that is not ONNX fails to load with a
// *RunError of kind "load".
func TestConformance(t *testing.T) {
	runtimetest.Run(t, runtimetest.Suite{
		Runtime: testRuntime(t),
		Cases:   runtimetest.ONNXCases(t, false),
		BadModel: func(err error) bool {
			var re *RunError
			return errors.As(err, &re) && re.Kind == "load"
		},
	})
}
