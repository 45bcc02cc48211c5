//go:build cgo

package ortagree

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain reports the tests skipped for a missing ONNX Runtime library and
// fails the package for them unless ONNXCONV_SKIP_ORT=1.
func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "executor/ortagree"))
}
