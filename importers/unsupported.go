package importers

import (
	"fmt"
	"sort"
	"strings"
)

// UnsupportedOp is one operator of a source model that an importer (or an
// exporter) cannot map: its op type, the first node that uses it, how many
// nodes use it, and why it is not mapped.
type UnsupportedOp struct {
	// Op is the source operator's type ("AddN", "CONV_3D",
	// "aten::stft").
	Op string
	// Node names the first node of the model that uses Op.
	Node string
	// Count is how many nodes use Op (0 is read as 1).
	Count int
	// Reason says why it is not mapped, or what would map it; "" when
	// there is no mapping at all.
	Reason string
}

// UnsupportedOpsError is the one error shape for a model that uses
// operators an importer or exporter cannot map. It lists every such
// operator at once, so a user sees how far a model is from converting.
// Classify it with errors.As.
type UnsupportedOpsError struct {
	// Format is the format whose operators are missing ("tfjs",
	// "tflite", "torchscript", "tflite export").
	Format string
	// File is the model file, when known.
	File string
	// Ops are the unsupported operators, one entry per op type.
	Ops []UnsupportedOp
}

// Add records one node that uses an unsupported op, merging it into the
// entry for its op type.
func (e *UnsupportedOpsError) Add(op, node, reason string) {
	for i := range e.Ops {
		if e.Ops[i].Op == op {
			if e.Ops[i].Count == 0 {
				e.Ops[i].Count = 1
			}
			e.Ops[i].Count++
			return
		}
	}
	e.Ops = append(e.Ops, UnsupportedOp{Op: op, Node: node, Count: 1, Reason: reason})
}

// Err returns e when it lists any op and nil otherwise, so that a
// converter can collect every unsupported node and end with
// `return errs.Err()`.
func (e *UnsupportedOpsError) Err() error {
	if e == nil || len(e.Ops) == 0 {
		return nil
	}
	return e
}

func (e *UnsupportedOpsError) Error() string {
	ops := append([]UnsupportedOp(nil), e.Ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Op < ops[j].Op })
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	n := len(ops)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%d %s operator%s not supported:", n, e.Format, plural)
	for _, op := range ops {
		count := op.Count
		if count == 0 {
			count = 1
		}
		fmt.Fprintf(&b, "\n  %s (node %q", op.Op, op.Node)
		if count > 1 {
			fmt.Fprintf(&b, " and %d more", count-1)
		}
		b.WriteString(")")
		if op.Reason != "" {
			fmt.Fprintf(&b, ": %s", op.Reason)
		}
	}
	return b.String()
}
