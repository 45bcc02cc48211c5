package verify

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain reports the tests skipped for a missing headless Chromium and
// fails the package for them unless ONNXCONV_SKIP_CHROMIUM=1.
func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "verify"))
}
