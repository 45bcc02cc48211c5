package torchscript_test

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "importers/torchscript"))
}
