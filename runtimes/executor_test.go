package runtimes_test

import (
	"errors"
	"testing"

	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
)

// TestExecutorConformance runs the runtime conformance suite on the
// executor as a Runtime, against the outputs ONNX's reference
// implementation stored for the backend tests.
func TestExecutorConformance(t *testing.T) {
	runtimetest.Run(t, runtimetest.Suite{
		Runtime: runtimes.NewExecutor(executor.Options{}),
		Cases:   runtimetest.ONNXCases(t, false),
		BadModel: func(err error) bool {
			var le *runtimes.LoadError
			return errors.As(err, &le)
		},
	})
}
