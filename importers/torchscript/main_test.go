package torchscript_test

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func TestMain(m *testing.M) {
	code := testpaths.Main(m, "importers/torchscript")
	if libtorchPlugin.dir != "" {
		os.RemoveAll(libtorchPlugin.dir)
	}
	os.Exit(code)
}
