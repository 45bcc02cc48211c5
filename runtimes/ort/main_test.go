//go:build cgo

package ort

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain reports the tests skipped for a missing ONNX Runtime library and
// fails the package for them unless ONNXCONV_SKIP_ORT=1.
func TestMain(m *testing.M) {
	code := testpaths.Main(m, "runtimes/ort")
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
