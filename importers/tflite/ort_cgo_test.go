//go:build cgo

package tflite

import (
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
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

// openORTSession loads the model at path once in ONNX Runtime (closed when
// t ends) and returns its run, for tests that run one model on many
// samples (a session per sample is most of such a test's time).
func openORTSession(t testing.TB, path string) func([]*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	t.Helper()
	s, err := openORT(t).(*ort.Runtime).NewSession(path)
	if err != nil {
		t.Fatalf("ONNX Runtime: %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the ONNX Runtime session of %s: %v", path, err)
		}
	})
	return s.Run
}
