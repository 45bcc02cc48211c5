package libtorch_test

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain reports the tests skipped for a missing libtorch and fails the
// package for them unless ONNXCONV_SKIP_LIBTORCH=1.
func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "runtimes/libtorch"))
}
