package onnx

import (
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestMain reports tests skipped for a missing ONNX Runtime (see
// internal/testpaths).
func TestMain(m *testing.M) { os.Exit(testpaths.Main(m, "exporters/onnx")) }
