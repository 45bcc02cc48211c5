package canonical

import (
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/internal/bytesize"
)

// Problem is one structural defect of a model found by Validate.
type Problem struct {
	// Path is the field path of the defect, e.g.
	// `graph.node[3].attribute "then_branch".g.output[0]`.
	Path string
	// Node names the node involved, as `"name" (OpType) #index`, or "".
	Node string
	// Msg says what is wrong; Fix what to do about it.
	Msg string
	Fix string
}

// Error formats the problem on one line.
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.Path)
	if p.Node != "" {
		b.WriteString(": node ")
		b.WriteString(p.Node)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	if p.Fix != "" {
		b.WriteString(" (fix: ")
		b.WriteString(p.Fix)
		b.WriteString(")")
	}
	return b.String()
}

// Lowest and highest IR versions Validate accepts: 14 is the IR_VERSION of
// the ONNX main snapshot's onnx.in.proto (../shared/onnx-main-1.23dev; it
// only makes TypeProto.Opaque available outside ONNX-ML builds, which the
// ONNX-ML proto read here always had).
const (
	MinIRVersion = 3
	MaxIRVersion = 14
)

// Validate checks m's structure, without operator schemas: ir_version and
// opset_import, that every value name is defined once (SSA, across graph
// inputs, initializers and node outputs, and without shadowing names of
// enclosing graphs in subgraphs), that every node input and graph output is
// defined, that the nodes are in a topological order (there is no cycle)
// and that every node has an op_type. It lists every problem found, in
// model order; none means the model is structurally valid.
func Validate(m *Model) []Problem {
	if m == nil {
		return []Problem{{Path: "model", Msg: "no model"}}
	}
	v := &validator{}
	switch {
	case m.IRVersion == 0:
		v.add(Problem{Path: "ir_version", Msg: "ir_version is missing", Fix: fmt.Sprintf("set ir_version to the IR version the model follows (%d..%d)", MinIRVersion, MaxIRVersion)})
	case m.IRVersion < MinIRVersion || m.IRVersion > MaxIRVersion:
		v.add(Problem{Path: "ir_version", Msg: fmt.Sprintf("ir_version %d is not supported (accepted: %d..%d)", m.IRVersion, MinIRVersion, MaxIRVersion), Fix: "re-export the model with a supported ONNX version"})
	}
	if len(m.OpsetImports) == 0 {
		v.add(Problem{Path: "opset_import", Msg: "opset_import is missing: the model does not say which operator sets it uses", Fix: "add an opset_import entry for the default domain \"\" with the opset the model was made for"})
	}
	v.opsets(m.OpsetImports, "opset_import")
	if m.Graph == nil {
		v.add(Problem{Path: "graph", Msg: "the model has no graph", Fix: "the file is not a complete ONNX model; re-export it"})
	} else {
		v.graph(m.Graph, "graph", nil, true)
	}
	seen := map[string]int{}
	for i, f := range m.Functions {
		path := fmt.Sprintf("functions[%d] %q", i, f.Domain+"."+f.Name)
		if f.Name == "" {
			v.add(Problem{Path: path + ".name", Msg: "function has no name", Fix: "name the function"})
		}
		key := f.Domain + "\x00" + f.Name + "\x00" + f.Overload
		if j, dup := seen[key]; dup {
			v.add(Problem{Path: path, Msg: fmt.Sprintf("function %s.%s (overload %q) is defined twice (also functions[%d])", f.Domain, f.Name, f.Overload, j), Fix: "remove or rename one of them"})
		} else {
			seen[key] = i
		}
		v.opsets(f.OpsetImports, path+".opset_import")
		if f.Body != nil {
			v.graph(f.Body, path, nil, false)
		}
	}
	return v.problems
}

type validator struct {
	problems []Problem
}

func (v *validator) add(p Problem) { v.problems = append(v.problems, p) }

func (v *validator) opsets(ops []OpsetID, path string) {
	seen := map[string]bool{}
	for i, o := range ops {
		d := normDomain(o.Domain)
		if seen[d] {
			v.add(Problem{Path: fmt.Sprintf("%s[%d]", path, i), Msg: fmt.Sprintf("domain %q is imported twice", o.Domain), Fix: "keep one entry per domain"})
		}
		seen[d] = true
		if o.Version <= 0 {
			v.add(Problem{Path: fmt.Sprintf("%s[%d]", path, i), Msg: fmt.Sprintf("domain %q is imported with version %d", o.Domain, o.Version), Fix: "set a positive opset version"})
		}
	}
}

// tensorData reports a tensor whose dims call for elements but that holds
// no data at all (a hostile file can claim any size this way, and a
// consumer that trusts the dims allocates it).
func (v *validator) tensorData(t *Tensor, path, node string) {
	if t.HasData() || (t.shell != nil && t.shell.Segment != nil) {
		return
	}
	n, err := t.NumElements()
	if err != nil || n == 0 {
		return // overflow and negative dims are load errors
	}
	size := "its elements"
	if b, err := t.ByteSize(); err == nil && b > 0 {
		size = bytesize.Format(b) + " of data"
	} else if t.DataType != String {
		size = fmt.Sprintf("%d elements", n)
	}
	v.add(Problem{Path: path, Node: node,
		Msg: fmt.Sprintf("dims %v of %s claim %s but the tensor holds none", t.Dims, ElemTypeName(t.DataType), size),
		Fix: "store the tensor's data (raw_data, a typed data field or external data), or give it no elements"})
}

func nodeLabel(n *Node, i int) string {
	if n.Name != "" {
		return fmt.Sprintf("%q (%s) #%d", n.Name, n.OpType, i)
	}
	return fmt.Sprintf("#%d (%s)", i, n.OpType)
}

// graph checks g. outer holds the names visible from enclosing graphs (nil
// for a top-level graph); main is true for the model's graph.
func (v *validator) graph(g *Graph, path string, outer map[string]bool, main bool) {
	defined := map[string]string{} // name -> where it is first defined
	define := func(name, where, p, node string) {
		if name == "" {
			return
		}
		if first, dup := defined[name]; dup {
			v.add(Problem{Path: p, Node: node, Msg: fmt.Sprintf("value %q is defined twice (first by %s, again by %s)", name, first, where), Fix: "rename one of them: every value name must be defined once (SSA)"})
			return
		}
		defined[name] = where
		if outer[name] {
			v.add(Problem{Path: p, Node: node, Msg: fmt.Sprintf("value %q shadows a value of the same name in an enclosing graph", name), Fix: "rename it: names in a subgraph must differ from the names visible from outside"})
		}
	}
	inputs := map[*Value]bool{}
	for i, in := range g.Inputs {
		p := fmt.Sprintf("%s.input[%d]", path, i)
		if in.Name == "" {
			v.add(Problem{Path: p, Msg: "graph input has no name", Fix: "name it"})
		}
		if main && in.Type == nil {
			v.add(Problem{Path: p, Msg: fmt.Sprintf("input %q of the main graph has no type", in.Name), Fix: "declare its element type and shape"})
		}
		inputs[in] = true
		define(in.Name, fmt.Sprintf("graph input %d", i), p, "")
	}
	for i, init := range g.Initializers {
		p := fmt.Sprintf("%s.initializer[%d]", path, i)
		if init.Name == "" {
			v.add(Problem{Path: p, Msg: "initializer has no name", Fix: "name it"})
		}
		if init.Const != nil {
			v.tensorData(init.Const, fmt.Sprintf("%s %q", p, init.Name), "")
		}
		if inputs[init] {
			continue // an input with a default value: one definition
		}
		define(init.Name, fmt.Sprintf("initializer %d", i), p, "")
	}
	for i, n := range g.Nodes {
		label := nodeLabel(n, i)
		for j, o := range n.Outputs {
			if o != nil {
				define(o.Name, "node "+label, fmt.Sprintf("%s.node[%d].output[%d]", path, i, j), label)
			}
		}
	}

	index := make(map[*Node]int, len(g.Nodes))
	for i, n := range g.Nodes {
		index[n] = i
	}
	_, cycleErr := g.TopoSort()
	for i, n := range g.Nodes {
		label := nodeLabel(n, i)
		np := fmt.Sprintf("%s.node[%d]", path, i)
		if n.OpType == "" {
			v.add(Problem{Path: np + ".op_type", Node: label, Msg: "node has no op_type", Fix: "set the operator the node runs"})
		}
		attrs := map[string]bool{}
		for _, a := range n.Attributes {
			ap := fmt.Sprintf("%s.attribute %q", np, a.Name)
			if a.T != nil {
				v.tensorData(a.T, ap+".t", label)
			}
			for j, t := range a.Tensors {
				v.tensorData(t, fmt.Sprintf("%s.tensors[%d]", ap, j), label)
			}
		}
		for k, a := range n.Attributes {
			if attrs[a.Name] {
				v.add(Problem{Path: fmt.Sprintf("%s.attribute[%d]", np, k), Node: label, Msg: fmt.Sprintf("attribute %q is given twice", a.Name), Fix: "keep one of them"})
			}
			attrs[a.Name] = true
		}
		for j, in := range n.Inputs {
			if in == nil {
				continue
			}
			ip := fmt.Sprintf("%s.input[%d]", np, j)
			if in.undefined {
				v.add(Problem{Path: ip, Node: label, Msg: fmt.Sprintf("input %q is not defined by any graph input, initializer or node output in scope", in.Name), Fix: "define it (graph input, initializer or output of an earlier node) or fix the name"})
				continue
			}
			if cycleErr == nil {
				if p, _ := in.Producer(); p != nil {
					if k, ok := index[p]; ok && k >= i {
						v.add(Problem{Path: ip, Node: label, Msg: fmt.Sprintf("input %q is produced by node %s, which comes later: nodes are not in topological order", in.Name, nodeLabel(p, k)), Fix: "reorder the nodes topologically (canonical Graph.TopoSort)"})
					}
				}
			}
		}
		if cycleErr == nil {
			for _, ov := range n.OuterValues() {
				if p, _ := ov.Producer(); p != nil {
					if k, ok := index[p]; ok && k >= i {
						v.add(Problem{Path: np, Node: label, Msg: fmt.Sprintf("a subgraph uses %q, produced by node %s, which comes later: nodes are not in topological order", ov.Name, nodeLabel(p, k)), Fix: "reorder the nodes topologically (canonical Graph.TopoSort)"})
					}
				}
			}
		}
	}
	if cycleErr != nil {
		v.add(Problem{Path: path, Msg: fmt.Sprintf("the nodes form a cycle: %v", cycleErr), Fix: "break the cycle: a node cannot depend on its own output"})
	}
	for i, o := range g.Outputs {
		p := fmt.Sprintf("%s.output[%d]", path, i)
		switch {
		case o.Name == "":
			v.add(Problem{Path: p, Msg: "graph output has no name", Fix: "name it after the value it returns"})
		case o.undefined:
			v.add(Problem{Path: p, Msg: fmt.Sprintf("graph output %q is not defined by any graph input, initializer or node output", o.Name), Fix: "produce it with a node or fix the name"})
		}
		if main && o.Type == nil {
			v.add(Problem{Path: p, Msg: fmt.Sprintf("output %q of the main graph has no type", o.Name), Fix: "declare its element type (run shape inference)"})
		}
	}

	// Subgraphs see every name of g and of the enclosing graphs.
	var inner map[string]bool
	for i, n := range g.Nodes {
		for _, a := range n.Attributes {
			if a.G == nil && len(a.Graphs) == 0 {
				continue
			}
			if inner == nil {
				inner = make(map[string]bool, len(outer)+len(defined))
				for k := range outer {
					inner[k] = true
				}
				for k := range defined {
					inner[k] = true
				}
			}
			ap := fmt.Sprintf("%s.node[%d].attribute %q", path, i, a.Name)
			if a.G != nil {
				v.graph(a.G, ap+".g", inner, false)
			}
			for j, sg := range a.Graphs {
				v.graph(sg, fmt.Sprintf("%s.graphs[%d]", ap, j), inner, false)
			}
		}
	}
}
