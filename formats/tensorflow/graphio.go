package tensorflow

import (
	"slices"
	"strings"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
)

// graphIO finds what a TF1 meta graph without a signature computes: its
// Placeholders are the inputs, and the nodes no other node reads that
// depend on a Placeholder are the outputs, leaving out what initializes,
// saves, restores and trains the variables (NoOp, Assign*, Save*,
// Restore*, Apply*/ResourceApply* and what only they read). training
// tells whether the graph trains (an optimizer's Apply* update ops): its
// unread nodes are then a loss, not what the model predicts, and the
// caller does not take them.
func graphIO(gd *tfpb.GraphDef) (inputs, outputs []string, training bool) {
	nodes := gd.GetNode()
	byName := make(map[string]*tfpb.NodeDef, len(nodes))
	for _, n := range nodes {
		byName[n.GetName()] = n
	}
	machinery := func(op string) bool {
		switch {
		case op == "NoOp", strings.HasPrefix(op, "Assign"), strings.HasPrefix(op, "Save"), strings.HasPrefix(op, "Restore"),
			op == "MergeV2Checkpoints", op == "ShardedFilename", op == "ShardedFilespec":
			return true
		case strings.HasPrefix(op, "Apply"), strings.HasPrefix(op, "ResourceApply"):
			training = true
			return true
		}
		return false
	}
	read := map[string]bool{}
	for _, n := range nodes {
		if machinery(n.GetOp()) {
			continue
		}
		for _, in := range n.GetInput() {
			if !strings.HasPrefix(in, "^") {
				read[strings.Split(in, ":")[0]] = true
			}
		}
	}
	// fed: the node depends on a Placeholder (through data inputs).
	fed := map[string]bool{}
	var feeds func(name string, seen map[string]bool) bool
	feeds = func(name string, seen map[string]bool) bool {
		if v, ok := fed[name]; ok {
			return v
		}
		n := byName[name]
		if n == nil || seen[name] {
			return false
		}
		seen[name] = true
		v := n.GetOp() == "Placeholder"
		for _, in := range n.GetInput() {
			if !v && !strings.HasPrefix(in, "^") {
				v = feeds(strings.Split(in, ":")[0], seen)
			}
		}
		fed[name] = v
		return v
	}
	for _, n := range nodes {
		name, op := n.GetName(), n.GetOp()
		switch {
		case op == "Placeholder":
			inputs = append(inputs, name)
		case machinery(op) || read[name] || strings.HasPrefix(name, "gradients/") || strings.Contains(name, "/gradients/"):
		case feeds(name, map[string]bool{}):
			outputs = append(outputs, name)
		}
	}
	return slices.Clip(inputs), slices.Clip(outputs), training
}
