package pipeline

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
)

// checkResult runs the checker on a result before it is written: a model
// that the checker refuses (two nodes of one name, one type variable bound
// to two types, a QuantizeLinear zero point of the wrong type ...) would be
// refused by the runtime it is made for, so nothing is written and the
// error names the node.
func checkResult(out string, m *canonical.Model) error {
	if err := check.Model(m); err != nil {
		return invalidErr(fmt.Errorf("%s: the result fails the ONNX checker, nothing was written: %w", out, err))
	}
	return nil
}
