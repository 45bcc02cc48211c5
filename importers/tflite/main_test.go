package tflite

import (
	"fmt"
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain reports the tests skipped for a missing ONNX Runtime and fails
// the package for them unless ONNXCONV_SKIP_ORT=1.
func TestMain(m *testing.M) {
	code := testpaths.Main(m, "importers/tflite")
	if err := testRunner.Close(); err != nil && code == 0 {
		fmt.Fprintf(os.Stderr, "importers/tflite: closing the TFLite runner: %v\n", err)
		code = 1
	}
	os.Exit(code)
}
