package tensorflow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
)

// maxInlineDepth bounds nested function calls.
const maxInlineDepth = 32

// Inline replaces PartitionedCall/StatefulPartitionedCall nodes by the
// bodies of the functions they call (recursively), and rewrites
// ReadVariableOp to Identity (variables are constants by now).
// The returned resolve maps a tensor name that named a call's output to
// the tensor of the inlined body.
func Inline(file string, nodes []*tfpb.NodeDef, lib *tfpb.FunctionDefLibrary) ([]*tfpb.NodeDef, func(string) string, error) {
	funcs := map[string]*tfpb.FunctionDef{}
	for _, fd := range lib.GetFunction() {
		funcs[fd.GetSignature().GetName()] = fd
	}
	alias := map[string]string{} // "call:i" -> tensor
	var out []*tfpb.NodeDef
	work := newInlineWork(file, len(nodes), lib)
	var expand func(n *tfpb.NodeDef, depth int) error
	add := func(n *tfpb.NodeDef, depth int) error {
		if n.Op == "ReadVariableOp" {
			n.Op = "Identity"
		}
		if (n.Op == "PartitionedCall" || n.Op == "StatefulPartitionedCall") && n.GetAttr()["f"].GetFunc().GetName() != "" {
			return expand(n, depth)
		}
		if len(out) >= maxNodes {
			return &FormatError{File: file, What: fmt.Sprintf("more than %d nodes after inlining functions", maxNodes)}
		}
		out = append(out, n)
		return nil
	}
	expand = func(call *tfpb.NodeDef, depth int) error {
		if depth > maxInlineDepth {
			return Unsupported(file, call.GetName(), call.GetOp(), fmt.Sprintf("function calls nested deeper than %d (recursion?)", maxInlineDepth))
		}
		fd, ok := funcs[call.GetAttr()["f"].GetFunc().GetName()]
		if !ok {
			return &FormatError{File: file, What: fmt.Sprintf("node %q calls function %q, which the library lacks", call.GetName(), call.GetAttr()["f"].GetFunc().GetName())}
		}
		var ins []string
		for _, in := range call.Input {
			if !strings.HasPrefix(in, "^") {
				ins = append(ins, in)
			}
		}
		args := fd.GetSignature().GetInputArg()
		if len(args) != len(ins) {
			return &FormatError{File: file, What: fmt.Sprintf("node %q passes %d inputs to %q, which takes %d", call.GetName(), len(ins), fd.GetSignature().GetName(), len(args))}
		}
		argMap := map[string]string{}
		for i, a := range args {
			argMap[a.GetName()] = ins[i]
		}
		prefix := call.GetName() + "/"
		rewrite := func(in string) string {
			ctl := strings.HasPrefix(in, "^")
			in = strings.TrimPrefix(in, "^")
			parts := strings.Split(in, ":")
			var r string
			switch {
			case len(parts) == 1 && argMap[parts[0]] != "":
				r = argMap[parts[0]]
			case len(parts) == 3:
				idx, _ := strconv.Atoi(parts[2])
				r = prefix + parts[0] + ":" + strconv.Itoa(idx)
				if idx == 0 {
					r = prefix + parts[0]
				}
			default:
				r = prefix + in
			}
			if ctl {
				return "^" + strings.Split(r, ":")[0]
			}
			return r
		}
		if err := work.take(call.GetName(), len(fd.GetNodeDef())); err != nil {
			return err
		}
		for _, bn := range fd.GetNodeDef() {
			// A new node sharing the body's attrs, which nothing changes.
			n := &tfpb.NodeDef{Name: prefix + bn.GetName(), Op: bn.GetOp(), Device: bn.GetDevice(), Attr: bn.GetAttr(),
				Input: make([]string, len(bn.GetInput()))}
			for i, in := range bn.GetInput() {
				n.Input[i] = rewrite(in)
			}
			if err := add(n, depth+1); err != nil {
				return err
			}
		}
		for i, oa := range fd.GetSignature().GetOutputArg() {
			ret, ok := fd.GetRet()[oa.GetName()]
			if !ok {
				return &FormatError{File: file, What: fmt.Sprintf("function %q has no value for output %q", fd.GetSignature().GetName(), oa.GetName())}
			}
			alias[call.GetName()+":"+strconv.Itoa(i)] = rewrite(ret)
		}
		return nil
	}
	for _, n := range nodes {
		if err := add(n, 0); err != nil {
			return nil, nil, err
		}
	}
	resolve := func(in string) string {
		for range maxInlineDepth * 4 {
			k := in
			if !strings.Contains(k, ":") {
				k += ":0"
			}
			r, ok := alias[k]
			if !ok {
				return in
			}
			in = r
		}
		return in
	}
	for _, n := range out {
		for j, in := range n.Input {
			if !strings.HasPrefix(in, "^") {
				n.Input[j] = resolve(in)
			} else if _, ok := alias[in[1:]+":0"]; ok {
				n.Input[j] = "" // a control edge to an inlined call
			}
		}
		n.Input = slices.DeleteFunc(n.Input, func(s string) bool { return s == "" })
	}
	return out, resolve, nil
}

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

func newInlineWork(file string, nodes int, lib *tfpb.FunctionDefLibrary) *inlineWork {
	size := nodes
	for _, fd := range lib.GetFunction() {
		size += len(fd.GetNodeDef())
	}
	return &inlineWork{file: file, size: size, left: max(minInlineWork, inlineWorkRatio*size)}
}

// take charges n body nodes copied for the call node, or refuses.
func (w *inlineWork) take(call string, n int) error {
	w.left -= n
	if w.left < 0 {
		return Unsupported(w.file, call, "", fmt.Sprintf(
			"inlining the function calls copies more than %d nodes from a graph and library of %d (calls that fan out exponentially?)",
			max(minInlineWork, inlineWorkRatio*w.size), w.size))
	}
	return nil
}
