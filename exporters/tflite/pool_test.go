package tflite

import (
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	rt "github.com/onnxconv/onnxconv/runtimes/tflite"
	"github.com/onnxconv/onnxconv/runtimes/tflite/tflitetest"
)

// The package's tests run their TFLite files through one pooled runner
// (runtimes/tflite/tflitetest): node started and each interpreter's
// WebAssembly compiled once, not once per model and sample; one result
// per interpreter is checked byte for byte against a process of its own.
var testRunner tflitetest.Shared

// runner is the package's runner.
func runner(env rt.Env) *tflitetest.Runner { return testRunner.Get(env) }

// runTFLite is rt.Run (one thread) through the package's runner.
func runTFLite(t *testing.T, env rt.Env, path string, ins []*onnxpb.TensorProto) (*rt.Result, error) {
	t.Helper()
	return runner(env).Run(t, path, ins, rt.Options{Threads: 1})
}

// runTFLiteWith is rt.OpenWith, Run and Close through the package's
// runner.
func runTFLiteWith(t *testing.T, env rt.Env, path string, ins []*onnxpb.TensorProto, o rt.Options) (*rt.Result, error) {
	t.Helper()
	return runner(env).Run(t, path, ins, o)
}
