package ortnode

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain reports the tests skipped for a missing Node.js or npm package
// and fails the package for them unless ONNXCONV_SKIP_NODE=1.
func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "runtimes/ortnode"))
}
