//go:build !cgo

package tflite

import (
	"errors"
	"testing"
)

// openORT: runtimes/ort needs cgo, so without it the numeric tests skip
// (or fail with ONNXCONV_REQUIRE_ORT=1).
func openORT(t testing.TB) runner {
	t.Helper()
	skipWithoutORT(t, errors.New("built with CGO_ENABLED=0; runtimes/ort needs cgo"))
	return nil
}
