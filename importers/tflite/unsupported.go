package tflite

import (
	"fmt"
	"github.com/onnxconv/onnxconv/importers/custom"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	"github.com/onnxconv/onnxconv/importers"
)

// unsupportedOps names, before any operator is converted, every operator
// of the converter's subgraph that has no mapping at all (a custom
// operator, a builtin without a handler, an elementwise op whose ONNX form
// needs a newer opset than the one asked), all at once, in the one
// unsupported-op shape; nil when there is none.
func (c *converter) unsupportedOps() error {
	errs := &importers.UnsupportedOpsError{Format: Name}
	known := handlers()
	for _, o := range c.g.ops {
		u := importers.UnsupportedOp{Op: opName(o), Node: c.firstOutName(o)}
		row, elementwise := formats.Elementwise(o.code)
		_, handled := known[o.code]
		switch {
		case o.code == fb.BuiltinOperatorCUSTOM && customHandlers()[o.custom] == nil && c.st.custom.Lookup(o.custom) == nil:
			u.Reason = "a custom operator: no mapping; " + custom.Hint("TFLite custom operator", o.custom)
		case o.code == fb.BuiltinOperatorCUSTOM:
			continue // MediaPipe's (ops_mediapipe.go)
		case elementwise && row.Since > c.opts.Opset && o.code != fb.BuiltinOperatorHARD_SWISH:
			u.Version, u.Reason = c.opts.Opset, fmt.Sprintf("its ONNX form %s needs opset %d: -O opset=%d or later", row.ONNX, row.Since, row.Since)
		case !elementwise && !handled:
			u.Reason = "no mapping ('onnxconv formats tflite --ops' lists the mapped operators)"
		default:
			continue
		}
		errs.AddOp(u)
	}
	return errs.Err()
}
