package batch_test

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain reports the tests skipped for want of Slurm in one line and
// fails the package for them unless ONNXCONV_SKIP_SLURM=1.
func TestMain(m *testing.M) { os.Exit(testpaths.Main(m, "examples/batch")) }
