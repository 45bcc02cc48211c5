package tensorflow

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical/unsupported"
)

// Name is the format's name.
const Name = "tensorflow"

// FormatError is a TensorFlow file that cannot be read as what it claims.
type FormatError struct {
	File string
	What string
}

func (e *FormatError) Error() string { return fmt.Sprintf("%s: %s", e.File, e.What) }

// Unsupported is a valid TensorFlow construct onnxconv does not read (a
// string constant, a sliced variable, ...) at node ("" for the model as a
// whole) of op (or ""): the one *unsupported.OpsError shape, which callers
// merge so that every such node of a graph is named at once.
func Unsupported(file, node, op, what string) error {
	return &unsupported.OpsError{Format: Name, File: file, Ops: []unsupported.Op{{Op: op, Node: node, Reason: what}}}
}

// SignatureError is a SavedModel or meta graph without the signature asked
// for (Want); Have lists the signatures it has. For a TF1 checkpoint that
// has none, Placeholders and Unread are what its graph suggests (its
// Placeholders, and the nodes nothing reads besides the machinery that
// initializes, saves and trains it), and Training tells that it trains
// (the unread nodes are then a loss): they are not taken by themselves.
type SignatureError struct {
	File                 string
	Want                 string
	Have                 []string
	Placeholders, Unread []string
	Training             bool
}

func (e *SignatureError) Error() string {
	s := fmt.Sprintf("%s has no signature %q (signatures: %s)", e.File, e.Want, joinOrNone(e.Have))
	if len(e.Placeholders) > 0 || len(e.Unread) > 0 {
		s += fmt.Sprintf("; its graph's Placeholders are %s and the nodes nothing else reads are %s", joinOrNone(e.Placeholders), joinOrNone(e.Unread))
		if e.Training {
			s += " (the graph trains: those are a loss, not what the model predicts)"
		}
	}
	return s
}
