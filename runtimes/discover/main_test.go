package discover

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain runs the tests with a home of their own (testpaths.Hermetic):
// they look for runtimes and plugins, which the user's folders must not
// change. It reports the tests skipped for a missing libtorch and fails
// the package for them unless ONNXCONV_SKIP_LIBTORCH=1.
func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "runtimes/discover"))
}
