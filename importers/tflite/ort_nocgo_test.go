//go:build !cgo

package tflite

import (
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// openORT: runtimes/ort needs cgo, so without it the numeric tests skip
// (counted and reported by TestMain, which fails the package unless
// ONNXCONV_SKIP_ORT=1).
func openORT(t testing.TB) runner {
	t.Helper()
	testpaths.SkipORT(t, "built with CGO_ENABLED=0; runtimes/ort needs cgo")
	return nil
}

// openORTSession: see openORT.
func openORTSession(t testing.TB, path string) func([]*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	t.Helper()
	openORT(t)
	return nil
}
