// Package tfops is the one TF-op → ONNX mapping, shared by TF.js graph
// models (importers/tfjs, whose model.json holds a GraphDef in JSON) and
// TensorFlow GraphDef/SavedModel files (importers/tensorflow).
//
// Both feed it the same neutral structures: a Graph of Nodes (name, op,
// inputs as TF writes them — "node", "node:1", "^control" — and attrs as
// Attr values that mirror TF's AttrValue proto), constant tensors, and the
// graph's inputs and outputs. Convert returns an ONNX ModelProto:
//
//	g := &tfops.Graph{Nodes: nodes, Consts: weights,
//		Inputs: []tfops.IO{{Name: "input", Tensor: "input:0"}},
//		Outputs: []tfops.IO{{Name: "Identity", Tensor: "Identity:0"}}}
//	mp, err := tfops.Convert(g, tfops.Options{})
//
// Layout: TensorFlow is NHWC; the ONNX graph keeps NHWC at its inputs and
// outputs and runs convolutions, pools and the elementwise ops between them
// in NCHW, inserting a Transpose only where a value must change layout.
//
// Errors are *OpError (an unmapped op, or an op whose attrs or inputs the
// mapping cannot handle), naming the node and its op; errors.As finds them.
// Nothing in the graph is executed; constant inputs (shapes, axes,
// paddings) are read from Const nodes.
package tfops

import (
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/onnxconv/onnxconv/formats/tensorflow"
	"github.com/onnxconv/onnxconv/importers/custom"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
)

// Node is one TF NodeDef.
type Node struct {
	Name string
	Op   string
	// Inputs as TF writes them: "node" (output 0), "node:1", "^node"
	// (control dependency, ignored).
	Inputs []string
	Attrs  map[string]Attr
}

// Attr mirrors TF's AttrValue: exactly one of its fields is meaningful,
// by what the op expects.
type Attr struct {
	S      []byte
	I      int64
	F      float32
	B      bool
	Type   string // TF DataType enum name: "DT_FLOAT", "DT_INT32", ...
	Shape  *Shape
	Tensor *canonical.Tensor // a Const's value when the file holds it inline
	Func   string
	List   *AttrList
}

// AttrList is AttrValue.list.
type AttrList struct {
	S     [][]byte
	I     []int64
	F     []float32
	B     []bool
	Type  []string
	Shape []Shape
}

// Shape is a TensorShapeProto: -1 for an unknown dim.
type Shape struct {
	Dims        []int64
	UnknownRank bool
}

// IO binds an ONNX graph input or output name to a TF tensor ("node:0").
// An input may name any tensor, not only a Placeholder's: the graph is
// cut there (what computes the tensor is left out), as tf2onnx's
// --inputs does.
type IO struct {
	Name   string
	Tensor string
}

// Graph is what Convert reads.
type Graph struct {
	Nodes []Node
	// Consts holds Const values kept outside the NodeDef (TF.js weights),
	// by node name. A Const node's "value" attr tensor is used otherwise.
	Consts map[string]*canonical.Tensor
	// Inputs are the graph inputs (Placeholders); nil: every Placeholder,
	// in node order, named after its node.
	Inputs []IO
	// Outputs are the graph outputs; nil: output 0 of every node no other
	// node reads (Const and Placeholder excepted), in node order.
	Outputs []IO
	// Name of the ONNX graph.
	Name string
	// Doc is the ONNX graph's doc string.
	Doc string
	// Functions is the function library (TF's FunctionDefLibrary), by
	// function name: the branches of If/StatelessIf and the cond and body
	// of While/StatelessWhile, lowered to ONNX If and Loop subgraphs. Only
	// the top graph's library is read (a function's own is ignored).
	//
	// A function is a Graph whose Inputs are its input args in order
	// (Name and Tensor: the arg name, which its nodes read as an input)
	// and whose Outputs are its output args in order (Name: the arg name;
	// Tensor: the function's ret value, "node:out_arg:index" as a
	// FunctionDef writes it, or "node:index"). Its Nodes read inputs as a
	// FunctionDef writes them. Its Consts are looked up first, then the
	// top graph's (TF.js keeps every Const value in one weights manifest).
	Functions map[string]*Graph
	// Init is the initializer graph (a TF.js modelInitializer): hash
	// tables read their contents from its LookupTableImport nodes (a
	// frozen GraphDef holds those in Nodes).
	Init []Node
}

// Options configure Convert.
type Options struct {
	// Opset is the ai.onnx opset (0: build.DefaultOpset, 17; at least 13).
	Opset int
	// File names the source file in error messages.
	File string
	// Layout is the layout of the graph's rank-4 inputs and outputs:
	// "" or "nhwc" (TF's own), or "nchw" (channels-first: the channel
	// axis moved from last to second, with no Transpose at those edges).
	// Values of other ranks are the same in both. Any other value is an
	// error.
	Layout string
	// Format names the source format in the error that lists unmapped
	// ops ("tfjs"; "" is "TensorFlow").
	Format string
	// Warn, when set, receives what the conversion changed that a user
	// should know (training-mode dropout made the identity, assertion and
	// summary ops removed, defaults taken).
	Warn func(string)
	// Custom holds the user's ONNX functions for TF ops the mapping
	// lacks (-O custom=FILE.onnx; importers/custom): a node of such an op
	// becomes a call of the function of the op's name.
	Custom *custom.Set
}

// OpError is a node Convert cannot map. When the graph uses ops the
// mapping lacks, Convert returns one OpError with Unsupported set, naming
// the first, whose Err is an *importers.UnsupportedOpsError listing every
// unmapped op of the graph (errors.As finds either).
type OpError struct {
	File string
	Node string
	Op   string
	// Unsupported is true for an op with no mapping at all.
	Unsupported bool
	Err         error
}

func (e *OpError) Error() string {
	where := ""
	if e.File != "" {
		where = e.File + ": "
	}
	var ue *importers.UnsupportedOpsError
	if e.Unsupported && errors.As(e.Err, &ue) {
		return ue.Error() + "\n" + custom.Hint("TF op", ue.Ops[0].Op) + "; or a model re-exported without them ('onnxconv formats tfjs --ops' lists the mapped ops)"
	}
	if e.Unsupported {
		return fmt.Sprintf("%snode %q: TF op %s is not supported by the TF-op mapping; %s; or re-export the model without it ('onnxconv formats tfjs --ops' lists the mapped ops)",
			where, e.Node, e.Op, custom.Hint("TF op", e.Op))
	}
	return fmt.Sprintf("%snode %q (TF op %s): %v", where, e.Node, e.Op, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// Supported lists the TF ops Convert maps, sorted.
func Supported() []string {
	var out []string
	for k := range opTable() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DecodeJSONBytes decodes a TF.js JSON "s" attr (base64 as protobuf JSON
// writes bytes).
func DecodeJSONBytes(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("attr string is not base64")
	}
	return b, nil
}

// DataType maps a TF DataType name to the ONNX element type
// (formats/tensorflow's one table).
func DataType(tf string) (canonical.DataType, bool) { return tensorflow.DataType(tf) }

// ParseTensors reads the value of an inputs= or outputs= option: TF
// tensor names separated by commas ("X:0,Placeholder:0"); each becomes an
// IO named after the tensor (":0" dropped), as tf2onnx's --inputs and
// --outputs name them.
func ParseTensors(s string) ([]IO, error) {
	var out []IO
	seen := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "^") {
			return nil, fmt.Errorf("%q is a control input, not a tensor", t)
		}
		k, _ := tensorKey(t)
		if seen[k] {
			return nil, fmt.Errorf("tensor %q is named twice", t)
		}
		seen[k] = true
		out = append(out, IO{Name: onnxName(k), Tensor: k})
	}
	if len(out) == 0 {
		return nil, errors.New("no tensor names (want NAME:0,NAME:1,…)")
	}
	return out, nil
}
