//go:build cgo

package tflite

import (
	"testing"

	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// openORT opens ONNX Runtime or skips the test when it is not installed
// (fails instead with ONNXCONV_REQUIRE_ORT=1).
func openORT(t testing.TB) runner {
	t.Helper()
	lib, err := ort.FindLibrary()
	if err == nil {
		var rt *ort.Runtime
		if rt, err = ort.Open(lib, 1); err == nil {
			return rt
		}
	}
	skipWithoutORT(t, err)
	return nil
}
