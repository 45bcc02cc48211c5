package tfjs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/tfops"
)

type jsonNode struct {
	Name  string                     `json:"name"`
	Op    string                     `json:"op"`
	Input []string                   `json:"input"`
	Attr  map[string]json.RawMessage `json:"attr"`
}

type jsonGraph struct {
	Node    []jsonNode      `json:"node"`
	Library json.RawMessage `json:"library"`
}

type jsonShape struct {
	Dim []struct {
		Size json.Number `json:"size"`
	} `json:"dim"`
	UnknownRank bool `json:"unknownRank"`
}

type jsonList struct {
	S     []string      `json:"s"`
	I     []json.Number `json:"i"`
	F     []float64     `json:"f"`
	B     []bool        `json:"b"`
	Type  []string      `json:"type"`
	Shape []jsonShape   `json:"shape"`
}

type jsonAttr struct {
	S     *string      `json:"s"`
	I     *json.Number `json:"i"`
	F     any          `json:"f"`
	B     *bool        `json:"b"`
	Type  *string      `json:"type"`
	Shape *jsonShape   `json:"shape"`
	List  *jsonList    `json:"list"`
	Func  *struct {
		Name string `json:"name"`
	} `json:"func"`
}

func (s *jsonShape) shape() (*tfops.Shape, error) {
	out := &tfops.Shape{UnknownRank: s.UnknownRank}
	for _, d := range s.Dim {
		v := int64(1)
		if d.Size != "" {
			var err error
			if v, err = d.Size.Int64(); err != nil {
				return nil, fmt.Errorf("dim %q", d.Size)
			}
		}
		if v < -1 || v > 1<<31 {
			return nil, fmt.Errorf("dim %d is out of range", v)
		}
		out.Dims = append(out.Dims, v)
	}
	return out, nil
}

func jsonFloat(v any) (float32, error) {
	switch x := v.(type) {
	case float64:
		return float32(x), nil
	case string: // "NaN", "Infinity"
		f, err := strconv.ParseFloat(x, 32)
		return float32(f), err
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

func decodeAttr(raw json.RawMessage) (tfops.Attr, error) {
	var a jsonAttr
	var out tfops.Attr
	if err := json.Unmarshal(raw, &a); err != nil {
		return out, err
	}
	var err error
	if a.S != nil {
		if out.S, err = tfops.DecodeJSONBytes(*a.S); err != nil {
			return out, err
		}
	}
	if a.I != nil {
		if out.I, err = a.I.Int64(); err != nil {
			return out, fmt.Errorf("i %q", *a.I)
		}
	}
	if out.F, err = jsonFloat(a.F); err != nil {
		return out, err
	}
	if a.B != nil {
		out.B = *a.B
	}
	if a.Type != nil {
		out.Type = *a.Type
	}
	if a.Shape != nil {
		if out.Shape, err = a.Shape.shape(); err != nil {
			return out, err
		}
	}
	if a.Func != nil {
		out.Func = a.Func.Name
	}
	if l := a.List; l != nil {
		out.List = &tfops.AttrList{B: l.B, Type: l.Type}
		for _, s := range l.S {
			b, err := tfops.DecodeJSONBytes(s)
			if err != nil {
				return out, err
			}
			out.List.S = append(out.List.S, b)
		}
		for _, i := range l.I {
			v, err := i.Int64()
			if err != nil {
				return out, fmt.Errorf("list i %q", i)
			}
			out.List.I = append(out.List.I, v)
		}
		for _, f := range l.F {
			out.List.F = append(out.List.F, float32(f))
		}
		for i := range l.Shape {
			s, err := l.Shape[i].shape()
			if err != nil {
				return out, err
			}
			out.List.Shape = append(out.List.Shape, *s)
		}
	}
	return out, nil
}

// sigEntry is one signature input or output, in file order.
type sigEntry struct {
	key    string
	tensor string
}

// orderedSig reads signature.inputs or .outputs keeping the key order
// (TF.js orders the outputs of a graph model by it).
func orderedSig(raw json.RawMessage, field string) ([]sigEntry, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var sig map[string]json.RawMessage
	if err := json.Unmarshal(raw, &sig); err != nil {
		return nil, err
	}
	if inner, ok := sig["signature"]; ok { // userDefinedMetadata.signature
		if err := json.Unmarshal(inner, &sig); err != nil {
			return nil, err
		}
	}
	obj, ok := sig[field]
	if !ok {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("signature %s is not an object", field)
	}
	var out []sigEntry
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := kt.(string)
		var e struct {
			Name string `json:"name"`
		}
		if err := dec.Decode(&e); err != nil {
			return nil, err
		}
		if e.Name == "" {
			e.Name = k
		}
		out = append(out, sigEntry{key: k, tensor: e.Name})
	}
	return out, nil
}

// tensorName returns the ONNX name of a TF tensor "node:0" ("node"), as
// TF.js names it.
func tensorName(t string) string {
	if len(t) > 2 && t[len(t)-2:] == ":0" {
		return t[:len(t)-2]
	}
	return t
}

// graphModel converts a TF.js graph model.
func graphModel(path string, m *modelJSON, weights map[string]*canonical.Tensor, opset int) (*tfops.Graph, error) {
	var jg jsonGraph
	if err := json.Unmarshal(m.ModelTopology, &jg); err != nil {
		return nil, &FormatError{Path: path, Detail: "modelTopology is not a GraphDef: " + err.Error()}
	}
	if len(jg.Node) == 0 {
		return nil, &FormatError{Path: path, Detail: "modelTopology has no nodes"}
	}
	lib, err := library(path, jg.Library)
	if err != nil {
		return nil, err
	}
	g := &tfops.Graph{Consts: weights, Functions: lib}
	if g.Nodes, err = jsonNodes(path, "", jg.Node); err != nil {
		return nil, err
	}
	if len(m.ModelInitializer) > 0 && string(m.ModelInitializer) != "null" {
		var ig jsonGraph
		if err := json.Unmarshal(m.ModelInitializer, &ig); err != nil {
			return nil, &FormatError{Path: path, Detail: "modelInitializer is not a GraphDef: " + err.Error()}
		}
		if g.Init, err = jsonNodes(path, "modelInitializer", ig.Node); err != nil {
			return nil, err
		}
	}
	sig := m.Signature
	if len(sig) == 0 {
		sig = m.UserDefinedMetadata
	}
	ins, err := orderedSig(sig, "inputs")
	if err != nil {
		return nil, &FormatError{Path: path, Detail: "signature inputs: " + err.Error()}
	}
	outs, err := orderedSig(sig, "outputs")
	if err != nil {
		return nil, &FormatError{Path: path, Detail: "signature outputs: " + err.Error()}
	}
	for _, e := range ins {
		g.Inputs = append(g.Inputs, tfops.IO{Name: tensorName(e.tensor), Tensor: e.tensor})
	}
	for _, e := range outs {
		g.Outputs = append(g.Outputs, tfops.IO{Name: tensorName(e.tensor), Tensor: e.tensor})
	}
	return g, nil
}

// jsonNodes converts GraphDef nodes in JSON (of the graph, or of library
// function fn) to tfops nodes.
func jsonNodes(path, fn string, nodes []jsonNode) ([]tfops.Node, error) {
	out := make([]tfops.Node, 0, len(nodes))
	where := ""
	if fn != "" {
		where = "function " + strconv.Quote(fn) + ": "
	}
	for _, jn := range nodes {
		n := tfops.Node{Name: jn.Name, Op: jn.Op, Inputs: jn.Input, Attrs: map[string]tfops.Attr{}}
		for k, raw := range jn.Attr {
			a, err := decodeAttr(raw)
			if err != nil {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("%snode %q (%s): attr %s: %v", where, jn.Name, jn.Op, k, err)}
			}
			n.Attrs[k] = a
		}
		out = append(out, n)
	}
	return out, nil
}

// maxFunctions bounds the functions of a graph model's library.
const maxFunctions = 1 << 16

// jsonFunction is a FunctionDef in protobuf JSON, as tensorflowjs_converter
// writes the library of a graph model with control flow.
type jsonFunction struct {
	Signature struct {
		Name      string    `json:"name"`
		InputArg  []jsonArg `json:"inputArg"`
		OutputArg []jsonArg `json:"outputArg"`
	} `json:"signature"`
	NodeDef []jsonNode        `json:"nodeDef"`
	Ret     map[string]string `json:"ret"`
}

type jsonArg struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// library reads modelTopology.library: the functions that If/While nodes
// call (then_branch/else_branch, cond/body), for tfops to lower to ONNX
// If and Loop subgraphs. Their Const values are in the weights manifest,
// by node name, as TF.js reads them.
func library(path string, raw json.RawMessage) (map[string]*tfops.Graph, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var l struct {
		Function []jsonFunction `json:"function"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, &FormatError{Path: path, Detail: "modelTopology.library is not a FunctionDefLibrary: " + err.Error()}
	}
	if len(l.Function) == 0 {
		return nil, nil
	}
	if len(l.Function) > maxFunctions {
		return nil, &FormatError{Path: path, Detail: fmt.Sprintf("%d library functions, more than %d", len(l.Function), maxFunctions)}
	}
	out := make(map[string]*tfops.Graph, len(l.Function))
	for _, f := range l.Function {
		name := f.Signature.Name
		if name == "" {
			return nil, &FormatError{Path: path, Detail: "a library function has no name"}
		}
		if _, dup := out[name]; dup {
			return nil, &FormatError{Path: path, Detail: fmt.Sprintf("two library functions are named %q", name)}
		}
		nodes, err := jsonNodes(path, name, f.NodeDef)
		if err != nil {
			return nil, err
		}
		g := &tfops.Graph{Name: name, Nodes: nodes}
		for _, a := range f.Signature.InputArg {
			g.Inputs = append(g.Inputs, tfops.IO{Name: a.Name, Tensor: a.Name})
		}
		for _, a := range f.Signature.OutputArg {
			ret, ok := f.Ret[a.Name]
			if !ok {
				return nil, &FormatError{Path: path, Detail: fmt.Sprintf("library function %q has no ret value for output %q", name, a.Name)}
			}
			g.Outputs = append(g.Outputs, tfops.IO{Name: a.Name, Tensor: ret})
		}
		out[name] = g
	}
	return out, nil
}
