package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify"
)

func verifyFixture(name string) string {
	return filepath.Join("..", "..", "fixtures", "models", name, "model.onnx")
}

func runVerify(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"verify"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func readReport(t *testing.T, path string) *verify.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r verify.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestVerifyCmdSelf(t *testing.T) {
	dir := t.TempDir()
	js, xml := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
	code, out, errs := runVerify(t, verifyFixture("mlp_opset17"), verifyFixture("mlp_opset17"), "--samples", "3", "--seed", "9", "--report", js, "--report", xml)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errs)
	}
	r := readReport(t, js)
	f := r.Outputs[0].Float
	if !r.Equivalent || r.Samples != 3 || f.MaxAbs != 0 || f.RMSE != 0 || f.MaxULP != 0 || f.Cosine != 1 {
		t.Errorf("self report: equivalent %v samples %d metrics %+v", r.Equivalent, r.Samples, f)
	}
	if _, err := os.Stat(xml); err != nil {
		t.Errorf("JUnit report not written: %v", err)
	}
}

func TestVerifyCmdScaled(t *testing.T) {
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
	dir := t.TempDir()
	cand := filepath.Join(dir, "scaled.onnx")
	if err := canonical.Save(cand, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "r.json")
	code, out, errs := runVerify(t, verifyFixture("mlp_opset17"), cand, "--bisect", "--map", "--samples", "2", "--report", js, "--report", filepath.Join(dir, "r.html"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, `first divergent node "/4/Gemm" (Gemm)`) || !strings.Contains(out, "input 4.weight (initializer): differs") {
		t.Errorf("output does not name the node and the initializer:\n%s", out)
	}
	r := readReport(t, js)
	if r.Bisect == nil || r.Bisect.First == nil || r.Bisect.First.Node != "/4/Gemm" || r.Bisect.NodesChecked != 5 {
		t.Fatalf("bisect %+v", r.Bisect)
	}
	// --map: the same node ranked first, in the text, the JSON and the
	// Model Explorer data beside it.
	if m := r.Map; m == nil || m.First < 0 || m.Nodes[m.Ranked[0]].Node != "/4/Gemm" || !m.Nodes[m.Ranked[0]].Jump {
		t.Errorf("map %+v", r.Map)
	}
	if !strings.Contains(out, "error map: the error starts at /4/Gemm (Gemm)") {
		t.Errorf("output does not give the map's summary:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.modelexplorer.json")); err != nil {
		t.Errorf("no Model Explorer data beside the JSON report: %v", err)
	}
	if d := r.Outputs[0].Drift; d.Slope < 1.007 || d.Slope > 1.010 || d.R2 < 0.999 {
		t.Errorf("drift %+v, want slope near 1.01", d)
	}
	// A loose enough tolerance makes the same pair equivalent.
	if code, out, _ := runVerify(t, verifyFixture("mlp_opset17"), cand, "--rtol", "0.05", "--atol", "0.01", "-q"); code != 0 || out != "" {
		t.Errorf("--rtol 0.05 --atol 0.01: exit %d output %q, want 0 and quiet", code, out)
	}
}

func TestVerifyCmdOpsetsAndStored(t *testing.T) {
	if code, out, errs := runVerify(t, verifyFixture("mlp_opset9"), verifyFixture("mlp_opset17"), "--bisect"); code != 0 {
		t.Errorf("opset 9 vs 17: exit %d\n%s%s", code, out, errs)
	}
	// B as a folder of stored torch outputs (inputs from the same folder).
	stored := filepath.Join("..", "..", "fixtures", "models", "transformer_block_opset21")
	code, out, errs := runVerify(t, filepath.Join(stored, "model.onnx"), stored)
	if code != 0 || !strings.Contains(out, "over 1 sample(s)") {
		t.Errorf("model vs stored outputs: exit %d\n%s%s", code, out, errs)
	}
}

func TestVerifyCmdErrors(t *testing.T) {
	a := verifyFixture("mlp_opset9")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{a, a, "--report", "r.pdf"}, "unknown format"},
		{[]string{a, "absent.onnx"}, "absent.onnx"},
		{[]string{a, a, "--profile", "fp12"}, "unknown tolerance profile"},
		{[]string{a, a, "--dim", "batch"}, "want NAME=N"},
		{[]string{a, verifyFixture("transformer_block_opset21")}, "rank"},
	} {
		code, out, errs := runVerify(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q (stdout %q)", c.args, code, errs, c.want, out)
		}
	}
}

// TestVerifyRefusesAFunctionLibrary: an ONNX file of functions without a
// graph (what -O custom= takes) is refused with a line saying so before
// any runtime opens it (with --runtime onnxruntime it panicked there).
func TestVerifyRefusesAFunctionLibrary(t *testing.T) {
	lib := filepath.Join("..", "..", "fixtures", "custom", "multiply_beta.onnx")
	for _, args := range [][]string{{"verify", lib, lib}, {"verify", lib, filepath.Join("..", "..", "fixtures", "models", "mlp_opset17", "model.onnx")}} {
		code, _, stderr := runCmd(args...)
		if code != 2 || !strings.Contains(stderr, "no graph: a function library") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
