package tflite

import (
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
	"github.com/onnxconv/onnxconv/runtimes/tflite/tflitetest"
)

// The package's tests run TFLite files through one pooled runner
// (runtimes/tflite/tflitetest): node started and each interpreter's
// WebAssembly compiled once, not once per model and sample; one result
// per interpreter is checked byte for byte against a process of its own.
var testRunner tflitetest.Shared

// tfliteRunner is the package's runner.
func tfliteRunner(env tfliteruntime.Env) *tflitetest.Runner { return testRunner.Get(env) }

// runTFLite is tfliteruntime.Run (one thread) through the package's
// runner.
func runTFLite(t *testing.T, env tfliteruntime.Env, path string, ins []*onnxpb.TensorProto) (*tfliteruntime.Result, error) {
	t.Helper()
	return tfliteRunner(env).Run(t, path, ins, tfliteruntime.Options{Threads: 1})
}

// runTFLiteWith is tfliteruntime.OpenWith, Run and Close through the
// package's runner.
func runTFLiteWith(t *testing.T, env tfliteruntime.Env, path string, ins []*onnxpb.TensorProto, o tfliteruntime.Options) (*tfliteruntime.Result, error) {
	t.Helper()
	return tfliteRunner(env).Run(t, path, ins, o)
}
