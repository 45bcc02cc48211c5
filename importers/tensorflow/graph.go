package tensorflow

import (
	"errors"
	"fmt"

	tftf "github.com/onnxconv/onnxconv/formats/tensorflow"
	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/tfops"
)

// FormatError is a TensorFlow file that cannot be read as what it claims
// (formats/tensorflow's).
type FormatError = tftf.FormatError

// neutral converts NodeDefs to tfops nodes; consts receives the values
// of Const nodes.
func neutral(file string, nodes []*tfpb.NodeDef) ([]tfops.Node, error) {
	return neutralNodes(file, nodes, false)
}

// tf1Refusal is the error for TF1 control flow this importer does not
// recover.
func tf1Refusal(file, node, op, why string) error {
	return tftf.Unsupported(file, node, op, fmt.Sprintf(
		"TF1 control flow%s: this importer converts functional If/While and simple counted TF1 while loops only; re-export the model with TF2 control flow (tf.function, control_flow_v2)", why))
}

// neutralNodes converts NodeDefs to tfops nodes; TF1 control-flow ops are
// refused unless tf1 (the top graph, whose TF1 loops recoverTF1 lowers).
func neutralNodes(file string, nodes []*tfpb.NodeDef, tf1 bool) ([]tfops.Node, error) {
	out := make([]tfops.Node, 0, len(nodes))
	// every unsupported node is named at once
	errs := &importers.UnsupportedOpsError{Format: Name, File: file}
	for _, nd := range nodes {
		n := tfops.Node{Name: nd.GetName(), Op: nd.GetOp(), Inputs: nd.GetInput(), Attrs: map[string]tfops.Attr{}}
		switch n.Op {
		case "Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond":
			if !tf1 {
				mergeUnsupported(errs, tf1Refusal(file, n.Name, n.Op, ""))
				continue
			}
		}
		for k, av := range nd.GetAttr() {
			a, err := attr(file, n.Name, av)
			if mergeUnsupported(errs, err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			n.Attrs[k] = a
		}
		out = append(out, n)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// mergeUnsupported adds the ops of err to errs when err is an
// *importers.UnsupportedOpsError, and tells whether it was.
func mergeUnsupported(errs *importers.UnsupportedOpsError, err error) bool {
	var ue *importers.UnsupportedOpsError
	if !errors.As(err, &ue) {
		return false
	}
	for _, o := range ue.Ops {
		errs.AddOp(o)
	}
	return true
}

func attr(file, node string, av *tfpb.AttrValue) (tfops.Attr, error) {
	var a tfops.Attr
	switch v := av.GetValue().(type) {
	case *tfpb.AttrValue_S:
		a.S = v.S
	case *tfpb.AttrValue_I:
		a.I = v.I
	case *tfpb.AttrValue_F:
		a.F = v.F
	case *tfpb.AttrValue_B:
		a.B = v.B
	case *tfpb.AttrValue_Type:
		a.Type = v.Type.String()
	case *tfpb.AttrValue_Shape:
		a.Shape = shape(v.Shape)
	case *tfpb.AttrValue_Tensor:
		t, err := tftf.TensorFromProto(file, node, v.Tensor)
		if err != nil {
			return a, err
		}
		a.Tensor = t
	case *tfpb.AttrValue_Func:
		a.Func = v.Func.GetName()
	case *tfpb.AttrValue_List:
		l := &tfops.AttrList{S: v.List.GetS(), I: v.List.GetI(), F: v.List.GetF(), B: v.List.GetB()}
		for _, t := range v.List.GetType() {
			l.Type = append(l.Type, t.String())
		}
		for _, s := range v.List.GetShape() {
			l.Shape = append(l.Shape, *shape(s))
		}
		a.List = l
	}
	return a, nil
}

func shape(sp *tfpb.TensorShapeProto) *tfops.Shape {
	s := &tfops.Shape{UnknownRank: sp.GetUnknownRank()}
	for _, d := range sp.GetDim() {
		s.Dims = append(s.Dims, d.GetSize())
	}
	return s
}

// maxFunctions bounds the functions of a library.
const maxFunctions = 1 << 16

// functions converts the functions of a FunctionDefLibrary that nodes
// call, directly or through other functions (the branches of If and the
// cond and body of While, lowered by tfops to ONNX If and Loop; the
// saver's functions are left out). Variables are constants by now:
// ReadVariableOp becomes Identity.
func functions(file string, lib *tfpb.FunctionDefLibrary, nodes []tfops.Node) (map[string]*tfops.Graph, error) {
	fds := lib.GetFunction()
	if len(fds) == 0 {
		return nil, nil
	}
	if len(fds) > maxFunctions {
		return nil, &FormatError{File: file, What: fmt.Sprintf("%d library functions, more than %d", len(fds), maxFunctions)}
	}
	byName := make(map[string]*tfpb.FunctionDef, len(fds))
	for _, fd := range fds {
		name := fd.GetSignature().GetName()
		if name == "" {
			return nil, &FormatError{File: file, What: "a library function has no name"}
		}
		if _, dup := byName[name]; dup {
			return nil, &FormatError{File: file, What: fmt.Sprintf("two library functions are named %q", name)}
		}
		byName[name] = fd
	}
	var todo []string
	called := func(ns []tfops.Node) {
		for _, n := range ns {
			for _, a := range n.Attrs {
				if a.Func != "" {
					todo = append(todo, a.Func)
				}
			}
		}
	}
	called(nodes)
	out := map[string]*tfops.Graph{}
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		fd := byName[name]
		if _, done := out[name]; done || fd == nil {
			continue // a missing function is named by tfops where it is called
		}
		sig := fd.GetSignature()
		nodes, err := neutral(file, fd.GetNodeDef())
		if err != nil {
			return nil, fmt.Errorf("function %q: %w", name, err)
		}
		for i := range nodes {
			if nodes[i].Op == "ReadVariableOp" {
				nodes[i].Op = "Identity"
			}
		}
		called(nodes)
		g := &tfops.Graph{Name: name, Nodes: nodes}
		for _, a := range sig.GetInputArg() {
			g.Inputs = append(g.Inputs, tfops.IO{Name: a.GetName(), Tensor: a.GetName()})
		}
		for _, a := range sig.GetOutputArg() {
			ret, ok := fd.GetRet()[a.GetName()]
			if !ok {
				return nil, &FormatError{File: file, What: fmt.Sprintf("function %q has no value for output %q", name, a.GetName())}
			}
			g.Outputs = append(g.Outputs, tfops.IO{Name: a.GetName(), Tensor: ret})
		}
		out[name] = g
	}
	return out, nil
}
