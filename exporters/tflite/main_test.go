package tflite

import (
	"fmt"
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func TestMain(m *testing.M) {
	code := testpaths.Main(m, "exporters/tflite")
	if err := testRunner.Close(); err != nil && code == 0 {
		fmt.Fprintf(os.Stderr, "exporters/tflite: closing the TFLite pool: %v\n", err)
		code = 1
	}
	os.Exit(code)
}
