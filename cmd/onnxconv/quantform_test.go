package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/runtimes/ortnode"
)

// TestQuantizeFormCommand: resnet_small quantized static per channel
// (QDQ around every Conv, Add, pool and the Gemm), then 'quantize --format
// qoperator' (20 QLinearConv, 8 com.microsoft QLinearAdd, a
// QLinearGlobalAveragePool and a QGemm: 30 nodes) and back with 'quantize
// --format qdq' (no QLinear op left): each result EQUIVALENT to its input
// with both run by ONNX Runtime 1.30. A model with nothing in the other
// form, and a quantization flag with --format alone, are refused, nothing
// written.
func TestQuantizeFormCommand(t *testing.T) {
	useModules(t, ortnode.Package)
	dir := t.TempDir()
	qdq, qop, back := filepath.Join(dir, "qdq.onnx"), filepath.Join(dir, "qop.onnx"), filepath.Join(dir, "back.onnx")
	if code, stdout, stderr := runCmd("quantize", fixtureModel(t, "resnet_small"), qdq, "--mode", "static", "--per-channel", "--calibration-samples", "8"); code != 0 {
		t.Fatalf("quantize static: exit %d: %s%s", code, stdout, stderr)
	}
	qlinear := []string{"QLinearConv", "QLinearAdd", "QLinearGlobalAveragePool", "QGemm"}
	for _, c := range []struct {
		in, out, form string
		want          int // QLinear and QGemm nodes in the result
	}{{qdq, qop, "qoperator", 30}, {qop, back, "qdq", 0}} {
		code, stdout, stderr := runCmd("quantize", c.in, c.out, "--format", c.form)
		if code != 0 {
			t.Fatalf("--format %s: exit %d: %s%s", c.form, code, stdout, stderr)
		}
		for _, want := range []string{": EQUIVALENT", "computed by onnxruntime 1.30", "30 nodes rewritten to " + c.form} {
			if !strings.Contains(stdout, want) {
				t.Errorf("--format %s: summary lacks %q:\n%s", c.form, want, stdout)
			}
		}
		ops, _ := opCounts(t, c.out)
		got := 0
		for _, op := range qlinear {
			got += ops[op]
		}
		if got != c.want || c.want > 0 && (ops["QLinearConv"] != 20 || ops["QLinearAdd"] != 8) {
			t.Errorf("--format %s: %d QLinear and QGemm nodes, want %d (20 QLinearConv, 8 QLinearAdd): %v", c.form, got, c.want, ops)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{qdq, filepath.Join(dir, "x.onnx"), "--format", "qdq"}, 1, "no node has a form that rewrites to qdq"},
		{[]string{qdq, filepath.Join(dir, "x.onnx"), "--format", "matmulnbits"}, 2, "want qoperator or qdq"},
		{[]string{qdq, filepath.Join(dir, "x.onnx"), "--format", "qoperator", "--per-channel"}, 2, "needs --mode"},
	} {
		code, _, stderr := runCmd(append([]string{"quantize"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", c.args, code, c.code, c.want, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "x.onnx")); err == nil {
			t.Errorf("%v: output written", c.args)
		}
	}
}
