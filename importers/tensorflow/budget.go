package tensorflow

import (
	"fmt"

	"github.com/onnxconv/onnxconv/importers/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/importers/tfops"
)

// Inlining work: the function-body nodes inline may copy in all,
// counted over every call. Depth limits alone let a library whose
// functions each call the next twice expand 2^depth times from a few
// hundred bytes; this bounds the width too, in proportion to the graph.
const (
	minInlineWork   = 1 << 17
	inlineWorkRatio = 64
)

// inlineWork counts the body nodes inline has copied.
type inlineWork struct {
	file       string
	left, size int
}

func newInlineWork(file string, nodes []tfops.Node, lib *tfpb.FunctionDefLibrary) *inlineWork {
	size := len(nodes)
	for _, fd := range lib.GetFunction() {
		size += len(fd.GetNodeDef())
	}
	return &inlineWork{file: file, size: size, left: max(minInlineWork, inlineWorkRatio*size)}
}

// take charges n body nodes copied for the call node, or refuses.
func (w *inlineWork) take(call string, n int) error {
	w.left -= n
	if w.left < 0 {
		return unsupportedNode(w.file, call, "", fmt.Sprintf(
			"inlining the function calls copies more than %d nodes from a graph and library of %d (calls that fan out exponentially?)",
			max(minInlineWork, inlineWorkRatio*w.size), w.size))
	}
	return nil
}
