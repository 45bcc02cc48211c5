package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestConvertTFLiteOutputShapeInput: tflite-micro's SEANet transposed
// convolutions take TRANSPOSE_CONV's output_shape as a graph input (int32
// [4]). The converted graph computes the declared output shape, and the
// interpreter computes it only when fed that shape: the importer records
// it (verify.InputValuesKey) and the generated input holds it, so a plain
// convert is EQUIVALENT against the TFLite interpreter, every int16 value
// equal — where random values in [0, 10) made the interpreter compute a
// [2 6 3 4] output against the graph's [1 3 22 32] (NOT EQUIVALENT).
func TestConvertTFLiteOutputShapeInput(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs-tflite")
	in := testpaths.Shared(t, "tflite-micro", "seanet", "transpose_conv1.tflite")
	code, stdout, stderr := execCmd(t, "convert", in, filepath.Join(t.TempDir(), "out.onnx"))
	if code != 0 || !strings.Contains(stdout, "verify against the source (tflite ") || !strings.Contains(stdout, "int16 [1 3 22 32]  4224 of 4224 equal, max 0 step(s)") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}
