package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestConvertKerasGRUResetAfter: a plain convert of a Keras GRU with
// reset_after=True (fixtures/keras_rnn), which TF.js 4.22's GRUCell
// refuses, is verified against the TF.js runtime's reset-after GRU in
// TF.js ops (runtimes/tfjs checks it against torch's stored output): it
// ends EQUIVALENT with exit 0, and the summary says what computed the
// reference.
func TestConvertKerasGRUResetAfter(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	out := filepath.Join(t.TempDir(), "gru.onnx")
	code, stdout, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "fixtures", "keras_rnn", "gru_reset_after.json"), out)
	if code != 0 || !strings.Contains(stdout, ": EQUIVALENT") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "computed by tfjs 4.22.0 (in a node process; a reset-after GRU in TF.js ops for layer(s) gru") {
		t.Errorf("the summary does not say what computed the reference:\n%s", stdout)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}
