package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// ortPlugin holds the folder with cmd/onnxconv-plugin-onnxruntime, built
// (with cgo) once, on first use, under testBin.dir (see pipeline_test.go).
var ortPlugin struct {
	once sync.Once
	dir  string
	out  string // go build's output when it failed
	err  error
}

// ortPluginDir builds the ONNX Runtime plugin and returns the folder that
// holds it, for $ONNXCONV_PLUGIN_PATH.
func ortPluginDir(t *testing.T) string {
	t.Helper()
	ortPlugin.once.Do(func() {
		ortPlugin.dir = filepath.Join(testBin.dir, "ort-plugin")
		cmd := exec.Command("go", "build", "-o", filepath.Join(ortPlugin.dir, "onnxconv-plugin-onnxruntime"), "../onnxconv-plugin-onnxruntime")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			ortPlugin.out = string(out)
			ortPlugin.err = fmt.Errorf("go build ./cmd/onnxconv-plugin-onnxruntime (needs cgo): %v", err)
		}
	})
	if ortPlugin.err != nil {
		t.Log(ortPlugin.out)
		testpaths.SkipORT(t, ortPlugin.err.Error())
	}
	return ortPlugin.dir
}

// ortLib returns the absolute path of the ONNX Runtime library, or skips
// the test (counted and reported by TestMain, which fails the package
// unless ONNXCONV_SKIP_ORT=1).
func ortLib(t *testing.T) string {
	t.Helper()
	return testpaths.ORT(t)
}

// execEnv runs the built onnxconv binary with extra environment variables
// (the user plugins folder, ~/.config/onnxconv/plugins, does not exist).
func execEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	return execIn(t, "", env, args...)
}

// execIn is execEnv in the working directory dir ("" for the test's).
func execIn(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cfg := t.TempDir()
	cmd := exec.Command(onnxconvBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME=", "HOME="+cfg)
	cmd.Env = append(cmd.Env, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatalf("running onnxconv %v: %v", args, err)
	}
	return 0, out.String(), errb.String()
}

// ortEnv is the environment that lets onnxconv find the plugin and the
// plugin find the library.
func ortEnv(t *testing.T) []string {
	lib := ortLib(t)
	return []string{"ONNXCONV_PLUGIN_PATH=" + ortPluginDir(t), "ONNXRUNTIME_LIB=" + lib, noNodeORT(t)}
}

// noNodeORT is the environment setting that hides the Node packages, so
// that the built-in ONNX Runtime under Node is not installed and the cgo
// plugin serves the runtime name onnxruntime (runtimes.Set.Lookup).
func noNodeORT(t *testing.T) string { return "ONNXCONV_NODE_MODULES=" + t.TempDir() }

// scaledMLP writes mlp_opset17 with the initializer 4.weight scaled by
// 1.01 and returns its path.
func scaledMLP(t *testing.T) string {
	t.Helper()
	m, err := canonical.Load(verifyFixture("mlp_opset17"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := m.Graph.Lookup("4.weight").Const
	raw, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	scaled := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.LittleEndian.PutUint32(scaled[i:], math.Float32bits(1.01*math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
	}
	w.SetBytes(scaled)
	p := filepath.Join(t.TempDir(), "scaled.onnx")
	if err := canonical.Save(p, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVerifyRuntimeORTvsExecutor compares ONNX Runtime (through the plugin)
// with the built-in executor on the same model.
func TestVerifyRuntimeORTvsExecutor(t *testing.T) {
	env := ortEnv(t)
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := execEnv(t, env, "verify", "--runtime", "onnxruntime,executor", "--runtime-threads", "1",
		"--samples", "2", "--seed", "3", verifyFixture("mlp_opset17"), "--report", js)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "equivalent: 1 output(s) within tolerance over 2 sample(s)") ||
		!strings.Contains(out, "note: A ran on onnxruntime 1.30.") || !strings.Contains(out, ": ONNX Runtime 1.30.") ||
		!strings.Contains(out, "B on the built-in executor") {
		t.Errorf("summary:\n%s", out)
	}
	r := readReport(t, js)
	f := r.Outputs[0].Float
	// Both compute the 4x10 MLP output in float32: they agree to a few
	// ulps, not bit for bit (different summation order in Gemm).
	if !r.Equivalent || r.Samples != 2 || f.MaxAbs > 1e-6 || f.Cosine < 0.9999999 || f.MaxULP > 4096 {
		t.Errorf("ORT vs executor: equivalent %v samples %d metrics %+v", r.Equivalent, r.Samples, f)
	}
	if !strings.HasSuffix(r.A.Name, "model.onnx (onnxruntime)") || !strings.HasSuffix(r.B.Name, "model.onnx (executor)") {
		t.Errorf("side names %q, %q", r.A.Name, r.B.Name)
	}

	// ONNX Runtime against torch's stored outputs.
	stored := filepath.Join("..", "..", "fixtures", "models", "mlp_opset17", "test_data_set_0")
	code, out, errs = execEnv(t, env, "verify", "--runtime", "onnxruntime", verifyFixture("mlp_opset17"), stored)
	if code != 0 || !strings.Contains(out, "B is stored outputs") {
		t.Errorf("ORT vs stored outputs: exit %d\n%s%s", code, out, errs)
	}
}

// TestVerifyRuntimeOutsideCheckout: the ONNX Runtime plugin installed in
// a folder of $ONNXCONV_PLUGIN_PATH with the library copied beside it works
// from a working directory outside the checkout, with no $ONNXRUNTIME_LIB,
// and the report's note names ONNX Runtime's own version.
func TestVerifyRuntimeOutsideCheckout(t *testing.T) {
	lib := ortLib(t)
	built := filepath.Join(ortPluginDir(t), "onnxconv-plugin-onnxruntime")
	install := t.TempDir()
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(install, "onnxconv-plugin-onnxruntime"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(install, "libonnxruntime.so.1")
	if err := os.Symlink(lib, beside); err != nil {
		t.Fatal(err)
	}
	model, err := filepath.Abs(verifyFixture("mlp_opset17"))
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	js := filepath.Join(cwd, "r.json")
	env := []string{"ONNXCONV_PLUGIN_PATH=" + install, "ONNXRUNTIME_LIB=", "LD_LIBRARY_PATH=", noNodeORT(t)}
	code, out, errs := execIn(t, cwd, env, "verify", "--runtime", "onnxruntime,executor", "--runtime-threads", "1",
		model, "--report", "r.json")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errs)
	}
	r := readReport(t, js)
	var note string
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "A ran on ") {
			note = n
		}
	}
	for _, want := range []string{"A ran on onnxruntime 1.30.", ": ONNX Runtime 1.30.", "library " + beside,
		"(plugin " + filepath.Join(install, "onnxconv-plugin-onnxruntime"), "B on the built-in executor"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %q", want, note)
		}
	}
	if !r.Equivalent {
		t.Errorf("ORT vs executor not equivalent: %+v", r.Outputs[0].Float)
	}

	// Without the library beside it the run says what was searched.
	if err := os.Remove(beside); err != nil {
		t.Fatal(err)
	}
	code, out, errs = execIn(t, cwd, env, "verify", "--runtime", "onnxruntime,executor", model)
	if code != 2 || !strings.Contains(errs, "ONNX Runtime shared library not found: looked for libonnxruntime.so.1 or libonnxruntime.so, in order:") ||
		!strings.Contains(errs, "\n  "+install+" (beside the executable)") {
		t.Errorf("library missing: exit %d\n%s%s", code, out, errs)
	}
}

// TestVerifyRuntimeORTScaled: both models on ONNX Runtime, one with a
// weight scaled by 1.01, are not equivalent, and the drift shows the scale.
func TestVerifyRuntimeORTScaled(t *testing.T) {
	env := ortEnv(t)
	cand := scaledMLP(t)
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := execEnv(t, env, "verify", "--runtime", "onnxruntime", "--runtime-threads", "1", "--samples", "2",
		verifyFixture("mlp_opset17"), cand, "--report", js)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "not equivalent: 1 of 1 output(s) differ") || !strings.Contains(out, "A ran on onnxruntime") {
		t.Errorf("summary:\n%s", out)
	}
	r := readReport(t, js)
	if d := r.Outputs[0].Drift; r.Equivalent || d == nil || d.Slope < 1.007 || d.Slope > 1.010 || d.R2 < 0.999 {
		t.Errorf("equivalent %v drift %+v, want slope near 1.01", r.Equivalent, r.Outputs[0].Drift)
	}
	if f := r.Outputs[0].Float; f.MaxAbs < 1e-3 || f.MaxAbs > 0.1 {
		t.Errorf("max abs %g, want the effect of a 1%% weight change (1e-3..0.1)", f.MaxAbs)
	}
}

// TestVerifyRuntimeMissing: without ONNX Runtime under Node or its plugin,
// verify exits 2 and says in one line to run 'onnxconv runtimes install';
// with the plugin but without the library, it says how to get it.
func TestVerifyRuntimeMissing(t *testing.T) {
	empty := t.TempDir()
	code, out, errs := execEnv(t, []string{"ONNXCONV_PLUGIN_PATH=" + empty, noNodeORT(t)}, "verify", "--runtime", "onnxruntime,executor", verifyFixture("mlp_opset17"))
	if want := "the onnxruntime runtime is not installed: run 'onnxconv runtimes install'"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("no ONNX Runtime: exit %d, stderr lacks %q:\n%s%s", code, want, out, errs)
	}
	code, _, errs = execEnv(t, []string{"ONNXCONV_PLUGIN_PATH=" + empty}, "verify", "--runtime", "tvm", verifyFixture("mlp_opset17"), verifyFixture("mlp_opset17"))
	if code != 2 || !strings.Contains(errs, "no plugin serves this runtime") || !strings.Contains(errs, "onnxconv-plugin-tvm") {
		t.Errorf("unknown runtime: exit %d\n%s", code, errs)
	}
	// One model needs two runtimes.
	if code, _, errs := runVerify(t, "--runtime", "executor", verifyFixture("mlp_opset17")); code != 2 || !strings.Contains(errs, "two runtimes") {
		t.Errorf("one model, one runtime: exit %d\n%s", code, errs)
	}
	if code, _, errs := runVerify(t, "--runtime", "a,b,c", verifyFixture("mlp_opset17")); code != 2 || !strings.Contains(errs, "give one runtime, or two") {
		t.Errorf("three runtimes: exit %d\n%s", code, errs)
	}

	// The plugin is there but the library is not.
	dir := ortPluginDir(t)
	code, out, errs = execEnv(t, []string{"ONNXCONV_PLUGIN_PATH=" + dir, "ONNXRUNTIME_LIB=" + filepath.Join(empty, "libonnxruntime.so.1"), noNodeORT(t)},
		"verify", "--runtime", "onnxruntime,executor", verifyFixture("mlp_opset17"))
	if code != 2 || !strings.Contains(errs, `plugin "onnxruntime" failed to run`) || !strings.Contains(errs, "ONNX Runtime shared library not found") ||
		!strings.Contains(errs, "npm install --ignore-scripts onnxruntime-node@1.30.0") {
		t.Errorf("missing library: exit %d\n%s%s", code, out, errs)
	}
}

// TestVerifyRuntimeExecutorOnly: --runtime executor,executor runs the same
// model twice on the executor, with no plugin host, bit for bit.
func TestVerifyRuntimeExecutorOnly(t *testing.T) {
	js := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runVerify(t, "--runtime", "executor,executor", verifyFixture("mlp_opset17"), "--report", js)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	r := readReport(t, js)
	if f := r.Outputs[0].Float; !r.Equivalent || f.MaxAbs != 0 || f.MaxULP != 0 {
		t.Errorf("executor vs itself: %+v", f)
	}
}
