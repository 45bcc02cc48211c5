package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestUnnamedTFLiteIO: a TFLite model whose input and output tensors have
// empty or repeated names converts to ONNX with readable unique names (the
// signature def's keys when it has one, else input_K/output_K), and a
// plain convert verifies the result EQUIVALENT against the TFLite
// interpreter, which is fed by position.
func TestUnnamedTFLiteIO(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs-tflite", "@tensorflow/tfjs")
	dir := t.TempDir()
	for _, c := range []struct {
		model string
		ins   []string
		outs  []string
	}{
		{"unnamed_io", []string{"input_0", "input_1"}, []string{"output_0", "output_1"}},
		{"unnamed_sig", []string{"audio", "gain"}, []string{"sum", "product"}},
	} {
		t.Run(c.model, func(t *testing.T) {
			out := filepath.Join(dir, c.model+".onnx")
			code, stdout, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", "tflite", c.model+".tflite"), out)
			if code != 0 || !strings.Contains(stdout, ": EQUIVALENT") || !strings.Contains(stdout, "computed by tflite") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			m, err := canonical.Load(out, canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = m.Close() }()
			var ins, outs []string
			for _, v := range m.Graph.Inputs {
				ins = append(ins, v.Name)
			}
			for _, v := range m.Graph.Outputs {
				outs = append(outs, v.Name)
			}
			if strings.Join(ins, ",") != strings.Join(c.ins, ",") || strings.Join(outs, ",") != strings.Join(c.outs, ",") {
				t.Errorf("ONNX inputs %q outputs %q, want %q and %q", ins, outs, c.ins, c.outs)
			}
			for _, l := range strings.Split(stdout, "\n") {
				if strings.Contains(l, "EQUIVALENT") || strings.Contains(l, "computed by") {
					t.Log(strings.TrimSpace(l))
				}
			}
		})
	}
}

// TestTFLiteInterpreterNamed: the summary of a plain convert names the
// TFLite interpreter that computed the source. op_versions (SIGN version
// 2, ABS version 5) is refused by tfjs-tflite's older interpreter and was
// NOT VERIFIED with it alone; LiteRT.js computes it and it is EQUIVALENT.
// svdf keeps state in variable tensors, which LiteRT.js does not run: it
// goes to tfjs-tflite first, and the summary says why.
func TestTFLiteInterpreterNamed(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs-tflite", "@litertjs/core")
	dir := t.TempDir()
	for _, c := range []struct{ model, want string }{
		{"op_versions.tflite", "computed by @litertjs/core 2.5.3 (LiteRT.js"},
		{"svdf.tflite", "computed by @tensorflow/tfjs-tflite 0.0.1-alpha.10 (TFLite interpreter, WebAssembly SIMD, XNNPACK), tried first as the model keeps state"},
	} {
		code, stdout, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", "tflite", c.model), filepath.Join(dir, "out.onnx"), "--force", "-q")
		if code != 0 || !strings.Contains(stdout, ": EQUIVALENT") || !strings.Contains(stdout, c.want) {
			t.Errorf("%s: exit %d, want EQUIVALENT and %q\n%s%s", c.model, code, c.want, stdout, stderr)
		}
	}
}
