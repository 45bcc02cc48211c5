package discover

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain runs the tests with a home of their own (testpaths.Hermetic):
// they look for runtimes and plugins, which the user's folders must not
// change.
func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "runtimes/discover"))
}
