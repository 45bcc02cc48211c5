package main

import (
	"path/filepath"
	"strings"
	"testing"
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
