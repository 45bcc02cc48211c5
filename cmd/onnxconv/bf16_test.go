package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	checkpkg "github.com/onnxconv/onnxconv/canonical/check"
)

// TestBF16Command: `fp16 --bf16` of attention_causal, whose Where (opset
// 14) has no bfloat16 type, used to fail the checker before writing; it
// now exits 0, says EQUIVALENT (verified by default) and writes a file
// that passes the checker, Where reading float32. The same for
// `convert --bf16`.
func TestBF16Command(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"attention_causal", "transformer_encoder"} {
		in := fixtureModel(t, name)
		for _, args := range [][]string{
			{"fp16", in, filepath.Join(dir, name+".fp16.onnx"), "--bf16"},
			{"fp16", in, filepath.Join(dir, name+".fp16io.onnx"), "--bf16", "--keep-io-types"},
			{"convert", in, filepath.Join(dir, name+".convert.onnx"), "--bf16"},
		} {
			code, stdout, stderr := runCmd(args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s%s", args, code, stdout, stderr)
			}
			if !strings.Contains(stdout, ": EQUIVALENT") {
				t.Errorf("%v: no EQUIVALENT verdict:\n%s", args, stdout)
			}
			m, err := canonical.Load(args[2], canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := checkpkg.Model(m); err != nil {
				t.Errorf("%v: the written file fails the checker: %v", args, err)
			}
			_ = m.Close()
		}
	}
}
