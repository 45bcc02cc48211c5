package pipeline

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/exporters/profiles"
)

// targetRuntime is the runtime in which onnxconv runs a result for target
// ("" is profiles.Default): its profile's Runtime, "" when it runs none.
func targetRuntime(target string) (string, error) {
	if target == "" {
		target = profiles.Default
	}
	p, err := profiles.Get(target)
	if err != nil {
		return "", fmt.Errorf("target: %w", err)
	}
	return p.Runtime, nil
}

// kernelRuns returns passes.FP16Options.Runs for target ("" is
// profiles.Default, the runtime the written file is checked in): whether
// the target's CPU kernel of an operator version runs a type variable in a
// type (ONNX Runtime's CPU kernels run few ops in bfloat16: MatMul, Add,
// Div, Where... stay float32). It is nil for a target onnxconv runs in no
// runtime (its profile names none) or that has no kernel table.
func kernelRuns(target string) (func(domain, op string, since int, param string, dt canonical.DataType) bool, error) {
	if target == "" {
		target = profiles.Default
	}
	p, err := profiles.Get(target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if p.Runtime == "" {
		return nil, nil
	}
	k, err := p.CPUKernels()
	if err != nil || k == nil {
		return nil, err
	}
	return func(domain, op string, since int, param string, dt canonical.DataType) bool {
		ok, _ := k.Implements(domain, op, since, param, onnxpb.TensorProto_DataType(dt))
		return ok
	}, nil
}
