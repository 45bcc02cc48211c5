package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// runIn runs the onnxconv binary in dir with env added to a clean
// environment (no $ONNXCONV_NODE_MODULES, a private $HOME).
func runIn(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(onnxconvBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// TestRuntimesFoundAnywhere: from a folder outside the checkout, with the
// Node packages in the data folder ($XDG_DATA_HOME/onnxconv/node_modules,
// where 'onnxconv runtimes install' puts them), 'onnxconv runtimes' lists
// them there and a plain convert of a TFLite model is EQUIVALENT against
// the TFLite interpreter (exit 0). With an empty data folder the runtime
// is missing: one line with the install command, said once, exit 3.
func TestRuntimesFoundAnywhere(t *testing.T) {
	_, modules := testpaths.Node(t, "@tensorflow/tfjs-tflite", "@tensorflow/tfjs")
	outside, data, env := dataFolder(t, modules)
	code, stdout, stderr := runIn(t, outside, env, "runtimes")
	if code != 0 {
		t.Fatalf("runtimes: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"tflite", "tfjs"} {
		line := lineStarting(stdout, name+" ")
		if !strings.Contains(line, filepath.Join(data, "onnxconv", "node_modules")) || strings.Contains(line, "MISSING") {
			t.Errorf("runtimes: %s not found in the data folder:\n%s", name, stdout)
		}
	}
	tfl := filepath.Join(repoDir(t), "fixtures", "tflite", "cnn.tflite")
	code, stdout, stderr = runIn(t, outside, env, "convert", tfl, filepath.Join(outside, "cnn.onnx"), "-q")
	if code != 0 || !strings.Contains(stdout, "EQUIVALENT") || !strings.Contains(stdout, "computed by tflite") {
		t.Errorf("convert from outside the checkout: exit %d\n%s%s", code, stdout, stderr)
	}

	empty := []string{"XDG_DATA_HOME=" + t.TempDir()}
	code, stdout, _ = runIn(t, outside, empty, "runtimes")
	if code != 0 || !strings.Contains(lineStarting(stdout, "tflite "), "MISSING") || !strings.Contains(stdout, "onnxconv runtimes install") {
		t.Errorf("runtimes without the packages: exit %d\n%s", code, stdout)
	}
	code, stdout, stderr = runIn(t, outside, empty, "convert", tfl, filepath.Join(outside, "cnn2.onnx"))
	all := stdout + stderr
	if code != 3 || strings.Count(all, "onnxconv runtimes install") != 1 {
		t.Errorf("convert without the runtime: exit %d (want 3), install line %d times (want 1):\n%s", code, strings.Count(all, "onnxconv runtimes install"), all)
	}
}

// dataFolder makes a fresh data folder whose onnxconv/node_modules is
// modules (where 'onnxconv runtimes install' puts the packages) and a
// working folder outside the checkout; env points XDG_DATA_HOME there.
func dataFolder(t *testing.T, modules string) (outside, data string, env []string) {
	t.Helper()
	outside, data = t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "onnxconv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(data, "onnxconv", "node_modules")); err != nil {
		t.Fatal(err)
	}
	return outside, data, []string{"XDG_DATA_HOME=" + data}
}

func lineStarting(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestConvertRunsResultInORT: with the ONNX Runtime plugin installed (and
// not ONNX Runtime under Node, which would win), a convert for ONNX Runtime
// (no target) also loads the result in ONNX Runtime 1.30 and compares it
// with the source; without either a note says it was not run there.
func TestConvertRunsResultInORT(t *testing.T) {
	env := ortEnv(t)
	in := filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json")
	out := filepath.Join(t.TempDir(), "x.onnx")
	code, stdout, stderr := execEnv(t, env, "convert", in, out, "-q")
	if code != 0 || !strings.Contains(stdout, "verify against the source, the result run in ONNX Runtime: EQUIVALENT") ||
		!strings.Contains(stdout, "computed by onnxruntime 1.30") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = execEnv(t, []string{"ONNXCONV_PLUGIN_PATH=" + t.TempDir(), noNodeORT(t)}, "convert", in, out, "-q", "--force")
	if code != 0 || !strings.Contains(stdout, "not run in ONNX Runtime") {
		t.Errorf("without the plugin: exit %d\n%s", code, stdout)
	}
}

// TestConvertONNXAgainstORTUnderNode: in a fresh HOME whose data folder
// holds the npm packages (where 'onnxconv runtimes install' puts them),
// from outside the checkout, 'onnxconv runtimes' lists ONNX Runtime there
// with its version, and libtorch (with its version, or what is missing); a
// plain convert of an ONNX model names ONNX Runtime under Node as what
// computed the source and also runs the result in it. A model ONNX Runtime
// cannot run (opset 27 with an op new at 27: ONNX Runtime 1.30 loads up to
// 26) falls back to the executor, said in one line and named as such.
func TestConvertONNXAgainstORTUnderNode(t *testing.T) {
	_, modules := testpaths.Node(t, "onnxruntime-node")
	outside, data, env := dataFolder(t, modules)
	code, stdout, stderr := runIn(t, outside, env, "runtimes")
	if code != 0 {
		t.Fatalf("runtimes: exit %d: %s", code, stderr)
	}
	if l := lineStarting(stdout, "onnxruntime "); !strings.Contains(l, "1.30.0") || !strings.Contains(l, filepath.Join(data, "onnxconv", "node_modules")) {
		t.Errorf("runtimes: onnxruntime not listed as found in the data folder:\n%s", stdout)
	}
	if l := lineStarting(stdout, "libtorch "); l == "" || (strings.Contains(l, "MISSING") && !strings.Contains(l, "missing")) {
		t.Errorf("runtimes: libtorch not listed with its version or what is missing:\n%s", stdout)
	}

	model := filepath.Join(repoDir(t), "fixtures", "models", "mlp_opset17", "model.onnx")
	code, stdout, stderr = runIn(t, outside, env, "convert", model, filepath.Join(outside, "mlp.onnx"))
	for _, want := range []string{
		"verify against the source (onnxruntime 1.30.0 (under Node)): EQUIVALENT",
		"computed by onnxruntime 1.30.0 (under Node)",
		"B (result)    " + filepath.Join(outside, "mlp.onnx") + ": computed by the built-in executor",
		"verify against the source, the result run in ONNX Runtime: EQUIVALENT",
	} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("plain convert: exit %d, output lacks %q:\n%s%s", code, want, stdout, stderr)
		}
	}

	newer := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", "test_causal_conv_with_state_basic", "model.onnx")
	code, stdout, stderr = runIn(t, outside, env, "convert", newer, filepath.Join(outside, "newer.onnx"))
	for _, want := range []string{
		"ONNX Runtime could not run the source, so the built-in executor computed it: the model is ai.onnx opset 27 and onnxruntime-node 1.30.0 loads opsets up to 26",
		"verify against the source (the source ONNX model on the built-in executor (ONNX Runtime could not run it)): EQUIVALENT",
		"the result was not run in ONNX Runtime, which cannot run it",
	} {
		if code != 0 || !strings.Contains(stdout+stderr, want) {
			t.Errorf("fallback: exit %d, output lacks %q:\n%s%s", code, want, stdout, stderr)
		}
	}
}
