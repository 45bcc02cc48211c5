//go:build cgo

package tflite

import (
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// openORT opens ONNX Runtime, or skips the test when the library is not
// installed (counted and reported by TestMain, which fails the package
// unless ONNXCONV_SKIP_ORT=1).
func openORT(t testing.TB) runner {
	t.Helper()
	lib := testpaths.ORT(t)
	rt, err := ort.Open(lib, 1)
	if err != nil {
		t.Fatalf("ONNX Runtime %s: %v", lib, err)
	}
	return rt
}
