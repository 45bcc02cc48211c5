package tfops

import (
	"sort"

	"github.com/onnxconv/onnxconv/importers"
)

// unsupportedOps walks every node the outputs read, up to the inputs (through data inputs,
// and every node of the library functions they call) and collects the
// ops the mapping lacks, so that one error lists them all. It returns
// nil when every op is mapped.
func (c *converter) unsupportedOps(inputs, outputs []IO, format string) *importers.UnsupportedOpsError {
	table := opTable()
	errs := &importers.UnsupportedOpsError{Format: format, File: c.file}
	seen := map[string]bool{}
	for _, io := range inputs {
		if k, ok := tensorKey(io.Tensor); ok {
			nm, _ := splitKey(k)
			seen[nm] = true // the graph is cut at its inputs
		}
	}
	var stack []string
	for _, io := range outputs {
		if k, ok := tensorKey(io.Tensor); ok {
			nm, _ := splitKey(k)
			stack = append(stack, nm)
		}
	}
	funcs := map[string]bool{}
	var fstack []string
	visit := func(n *Node, prefix string) {
		if _, ok := table[n.Op]; !ok && c.root().custom.Lookup(n.Op) == nil {
			errs.Add(n.Op, prefix+n.Name, unsupportedReason(n.Op))
		}
		names := make([]string, 0, len(n.Attrs))
		for k := range n.Attrs {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if f := n.Attrs[k].Func; f != "" && !funcs[f] {
				funcs[f] = true
				fstack = append(fstack, f)
			}
		}
	}
	for len(stack) > 0 {
		nm := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[nm] {
			continue
		}
		seen[nm] = true
		n := c.nodes[nm]
		if n == nil {
			continue // reported when the conversion reaches it
		}
		visit(n, "")
		for _, in := range n.Inputs {
			if k, ok := tensorKey(in); ok {
				dep, _ := splitKey(k)
				if !seen[dep] {
					stack = append(stack, dep)
				}
			}
		}
	}
	for len(fstack) > 0 {
		f := fstack[len(fstack)-1]
		fstack = fstack[:len(fstack)-1]
		g := c.lib[f]
		if g == nil {
			continue
		}
		for i := range g.Nodes {
			visit(&g.Nodes[i], f+"/")
		}
	}
	if len(errs.Ops) == 0 {
		return nil
	}
	return errs
}

// unsupportedReason says why op has no mapping, for the ops that cannot
// have one.
func unsupportedReason(op string) string {
	switch op {
	case "BitwiseAnd":
		return "TF.js 4.22 cannot run it (its op list binds no inputs), so no reference checks a mapping; ONNX BitwiseAnd needs opset 18"
	case "StaticRegexReplace", "StringNGrams", "StringSplit", "StringToHashBucketFast":
		return "ONNX has no operator for this string transformation"
	case "SimpleMLCreateModelResource", "SimpleMLLoadModelFromPathWithHandle", "SimpleMLInferenceOpWithHandle":
		return "TensorFlow Decision Forests models load their trees from files beside the model at run time; convert the forest with its own exporter"
	}
	return ""
}
