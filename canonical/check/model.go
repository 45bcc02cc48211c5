package check

import (
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// ModelError is a model that fails the checker: the structural problems
// of canonical.Validate and the schema problems of Check, each naming its
// node and the fix.
type ModelError struct {
	Problems []canonical.Problem
}

func (e *ModelError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s):", len(e.Problems))
	for i, p := range e.Problems {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Problems)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %v", p)
	}
	return b.String()
}

// Model returns a *ModelError when m fails canonical.Validate or the
// schema checks (what 'onnxconv check' lists), nil when it is valid. The
// commands that write ONNX run it on their result before writing it.
func Model(m *canonical.Model) error {
	probs := canonical.Validate(m)
	if len(m.OpsetImports) > 0 {
		probs = append(probs, Schema(m)...)
	}
	if len(probs) == 0 {
		return nil
	}
	return &ModelError{Problems: probs}
}
