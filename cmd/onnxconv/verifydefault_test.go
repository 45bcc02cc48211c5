package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestConvertVerifiesByDefault: a plain convert (no --opset, --target or
// verification flag) compares the result with its source as XGBoost's
// parsed trees compute it, and the summary names what computed each side.
func TestConvertVerifiesByDefault(t *testing.T) {
	out := filepath.Join(t.TempDir(), "xgb.onnx")
	code, stdout, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json"), out, "-q")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, want := range []string{"EQUIVALENT", "A (reference)", "B (result)", "computed by the built-in executor"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json"), out, "-q", "--no-verify")
	if code != 0 || !strings.Contains(stdout, "NOT VERIFIED (--no-verify)") {
		t.Errorf("--no-verify: exit %d, stdout %q", code, stdout)
	}
}

// TestTransformsVerifyByDefault: optimize, fp16 and quantize state the
// verdict (and what computed each side) by default, and NOT VERIFIED with
// --no-verify; --verify with --no-verify is a usage error.
func TestTransformsVerifyByDefault(t *testing.T) {
	dir := t.TempDir()
	for _, c := range [][]string{{"optimize"}, {"fp16"}, {"quantize", "--mode", "dynamic"}} {
		in := fixtureModel(t, "mlp_opset17")
		if c[0] == "optimize" {
			in = fixtureModel(t, "transformer_block_opset21") // something to optimize
		}
		out := filepath.Join(dir, c[0]+".onnx")
		args := append([]string{c[0], in, out}, c[1:]...)
		code, stdout, stderr := execCmd(t, args...)
		if code != 0 || !strings.Contains(stdout, ": EQUIVALENT") || !strings.Contains(stdout, "computed by the built-in executor") {
			t.Errorf("%s: exit %d\nstdout %s\nstderr %s", c[0], code, stdout, stderr)
		}
		code, stdout, _ = execCmd(t, append(args, "--no-verify", "--force")...)
		if code != 0 || !strings.Contains(stdout, "NOT VERIFIED (--no-verify)") {
			t.Errorf("%s --no-verify: exit %d, stdout %q", c[0], code, stdout)
		}
		if code, _, _ = execCmd(t, append(args, "--no-verify", "--verify", "--force")...); code != 2 {
			t.Errorf("%s --verify --no-verify: exit %d, want 2", c[0], code)
		}
	}
}

// TestInputsFitTheSource: generated inputs the source's runtime can run.
// logmel_t5's time axis is dynamic but the TFLite interpreter holds it at
// 5 (it cannot resize): the inputs use 5, not 1. graph_slicing gathers
// with constant indices into batch row 1: the batch is at least 2. Both
// end EQUIVALENT against their frameworks (exit 0).
func TestInputsFitTheSource(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs-tflite", "@tensorflow/tfjs")
	dir := t.TempDir()
	for _, c := range []struct{ in, dim string }{
		{filepath.Join("tflite", "logmel_t5.tflite"), "spectrogram_dim1=5"},
		{filepath.Join("tfjs", "graph_slicing", "model.json"), "N=2"},
	} {
		code, stdout, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", c.in), filepath.Join(dir, "out.onnx"), "--force")
		if code != 0 || !strings.Contains(stdout, ": EQUIVALENT") || !strings.Contains(stderr, "generated inputs use "+c.dim) {
			t.Errorf("%s: exit %d\n%s%s", c.in, code, stdout, stderr)
		}
	}
}

// TestDimOnEveryCommand: run, bench, optimize, fp16 and quantize take
// --dim for the symbolic dims of generated inputs; run generates inputs
// when --inputs is not given.
func TestDimOnEveryCommand(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "xgb.onnx")
	if code, _, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json"), model, "-q", "--no-verify"); code != 0 {
		t.Fatal(stderr)
	}
	m, err := canonical.Load(model, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, ds, _, _ := canonical.TensorTypeOf(m.Graph.Inputs[0].Type)
	_ = m.Close()
	if len(ds) == 0 || ds[0].Known || ds[0].Param == "" {
		t.Fatalf("the XGBoost input has no symbolic batch: %v", ds)
	}
	dim := ds[0].Param + "=3"
	out := filepath.Join(dir, "run")
	if code, _, stderr := execCmd(t, "run", model, "--dim", dim, "-o", out); code != 0 {
		t.Fatalf("run --dim: exit %d: %s", code, stderr)
	}
	o, err := canonical.ReadTensorFile(filepath.Join(out, "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Dims) == 0 || o.Dims[0] != 3 {
		t.Errorf("run --dim %s: output dims %v, want 3 rows", dim, o.Dims)
	}
	for _, args := range [][]string{
		{"bench", model, "--reps", "1", "--warmup", "0"},
		{"optimize", model, filepath.Join(dir, "o.onnx")},
		{"quantize", model, filepath.Join(dir, "q.onnx"), "--mode", "dynamic"},
	} {
		if code, stdout, stderr := execCmd(t, append(args, "--dim", dim)...); code != 0 && code != 1 {
			t.Errorf("%s --dim: exit %d: %s%s", args[0], code, stdout, stderr)
		}
	}
}

// TestInputsFromTable: --inputs reads a TSV table (a real LightGBM test
// set, leaves' breast cancer data) as the rows of a tabular model.
func TestInputsFromTable(t *testing.T) {
	dir := testpaths.Shared(t, "models", "lightgbm", "leaves_breast_cancer_binary")
	out := filepath.Join(t.TempDir(), "lg.onnx")
	code, stdout, stderr := execCmd(t, "convert", filepath.Join(dir, "lg_breast_cancer.txt"), out, "-q", "--inputs", filepath.Join(dir, "breast_cancer_test.tsv"))
	if code != 0 || !strings.Contains(stdout, ": EQUIVALENT") || !strings.Contains(stdout, "breast_cancer_test.tsv") && !strings.Contains(stdout, "1 sample(s)") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestSetDimDynamicRename: convert writes fixed or symbolic dims and new
// input/output names into the result, re-infers the shapes, and verifies
// it (at the fixed size; renamed values by position).
func TestSetDimDynamicRename(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.onnx")
	code, stdout, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json"), out,
		"-q", "--set-dim", "N=8", "--rename", "input=features", "--rename", "predict=score")
	if code != 0 || !strings.Contains(stdout, ": EQUIVALENT") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	m, err := canonical.Load(out, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Graph.Inputs[0]
	_, ds, _, _ := canonical.TensorTypeOf(in.Type)
	if in.Name != "features" || m.Graph.Outputs[0].Name != "score" || len(ds) != 2 || !ds[0].Known || ds[0].Value != 8 {
		t.Errorf("input %s %v, output %s", in.Name, ds, m.Graph.Outputs[0].Name)
	}
	_ = m.Close()

	out2 := filepath.Join(dir, "m.onnx")
	code, stdout, stderr = execCmd(t, "convert", fixtureModel(t, "mlp_opset17"), out2, "-q", "--dynamic", "input:0=batch", "--dynamic", "output:0=batch")
	if code != 0 || !strings.Contains(stdout, ": EQUIVALENT") {
		t.Fatalf("--dynamic: exit %d\n%s%s", code, stdout, stderr)
	}
	if m, err = canonical.Load(out2, canonical.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	_, ds, _, _ = canonical.TensorTypeOf(m.Graph.Inputs[0].Type)
	if len(ds) == 0 || ds[0].Param != "batch" {
		t.Errorf("--dynamic: input dims %v", ds)
	}
	_ = m.Close()
	// The batch-4 MLP run at batch 3 in the executor: the dims hold.
	if code, _, stderr := execCmd(t, "run", out2, "--dim", "batch=3", "-o", filepath.Join(dir, "run")); code != 0 {
		t.Errorf("run at batch 3: %s", stderr)
	}
	if code, _, _ := execCmd(t, "convert", fixtureModel(t, "mlp_opset17"), filepath.Join(dir, "z.onnx"), "--set-dim", "nosuch=2"); code != 2 {
		t.Errorf("--set-dim of an unknown dim: exit %d, want 2", code)
	}
}

// TestGeneratedInputsThatDoNotFit: with --dim N=1 graph_slicing's
// constant gather indices reach past the batch; TF.js on WASM computes
// them unchecked and the result refuses them, naming its node. That is
// said as an input problem (exit 2, naming --dim and --inputs), not as a
// failed conversion, nor as the reference failing.
func TestGeneratedInputsThatDoNotFit(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	code, stdout, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", "tfjs", "graph_slicing", "model.json"),
		filepath.Join(t.TempDir(), "g.onnx"), "--dim", "N=1")
	if code != 2 || !strings.Contains(stderr, "the generated inputs do not fit the model") || !strings.Contains(stderr, "--dim") ||
		!strings.Contains(stderr, "--dim N=1 is below the 2 the graph needs") || !strings.Contains(stderr, `node "gather_nd`) {
		t.Errorf("exit %d (want 2)\n%s%s", code, stdout, stderr)
	}
}
