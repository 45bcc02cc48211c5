package pipeline

import (
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/exporters/profiles"
)

// fp16DefaultTarget is the profile whose CPU kernels a float16 (bfloat16)
// conversion fits when no target is given: ONNX Runtime, the runtime the
// written file is checked in.
const fp16DefaultTarget = "onnxruntime-1.30"

// kernelRuns returns passes.FP16Options.Runs for target ("" is
// fp16DefaultTarget): whether the target's CPU kernel of an operator
// version runs a type variable in a type (ONNX Runtime's CPU kernels run
// few ops in bfloat16: MatMul, Add, Div, Where... stay float32). It is
// nil for a target that is not ONNX Runtime or has no kernel table.
func kernelRuns(target string) (func(domain, op string, since int, param string, dt canonical.DataType) bool, error) {
	if target == "" {
		target = fp16DefaultTarget
	}
	if !strings.HasPrefix(target, "onnxruntime") {
		return nil, nil
	}
	p, err := profiles.Get(target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
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
