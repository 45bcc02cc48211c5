package canonical

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// AttrType is the type of an attribute (AttributeProto.AttributeType).
type AttrType = onnxpb.AttributeProto_AttributeType

// Attribute types.
const (
	AttrUndefined     = onnxpb.AttributeProto_UNDEFINED
	AttrFloat         = onnxpb.AttributeProto_FLOAT
	AttrInt           = onnxpb.AttributeProto_INT
	AttrString        = onnxpb.AttributeProto_STRING
	AttrTensor        = onnxpb.AttributeProto_TENSOR
	AttrGraph         = onnxpb.AttributeProto_GRAPH
	AttrSparseTensor  = onnxpb.AttributeProto_SPARSE_TENSOR
	AttrTypeProto     = onnxpb.AttributeProto_TYPE_PROTO
	AttrFloats        = onnxpb.AttributeProto_FLOATS
	AttrInts          = onnxpb.AttributeProto_INTS
	AttrStrings       = onnxpb.AttributeProto_STRINGS
	AttrTensors       = onnxpb.AttributeProto_TENSORS
	AttrGraphs        = onnxpb.AttributeProto_GRAPHS
	AttrSparseTensors = onnxpb.AttributeProto_SPARSE_TENSORS
	AttrTypeProtos    = onnxpb.AttributeProto_TYPE_PROTOS
)

// Attribute is one AttributeProto. Graph-valued attributes hold canonical
// Graphs (use-def linked to the enclosing graph); tensors are Tensors.
type Attribute struct {
	Name string
	Type AttrType
	// RefAttrName, inside a function body, names the function attribute
	// this one takes its value from.
	RefAttrName string
	DocString   string

	F             float32
	I             int64
	S             []byte
	T             *Tensor
	G             *Graph
	SparseTensor  *onnxpb.SparseTensorProto
	TP            *onnxpb.TypeProto
	Floats        []float32
	Ints          []int64
	Strings       [][]byte
	Tensors       []*Tensor
	Graphs        []*Graph
	SparseTensors []*onnxpb.SparseTensorProto
	TypeProtos    []*onnxpb.TypeProto

	shell *onnxpb.AttributeProto
}

// IntAttr returns an INT attribute.
func IntAttr(name string, v int64) *Attribute { return &Attribute{Name: name, Type: AttrInt, I: v} }

// FloatAttr returns a FLOAT attribute.
func FloatAttr(name string, v float32) *Attribute {
	return &Attribute{Name: name, Type: AttrFloat, F: v}
}

// StringAttr returns a STRING attribute.
func StringAttr(name, v string) *Attribute {
	return &Attribute{Name: name, Type: AttrString, S: []byte(v)}
}

// IntsAttr returns an INTS attribute.
func IntsAttr(name string, v ...int64) *Attribute {
	return &Attribute{Name: name, Type: AttrInts, Ints: v}
}

// FloatsAttr returns a FLOATS attribute.
func FloatsAttr(name string, v ...float32) *Attribute {
	return &Attribute{Name: name, Type: AttrFloats, Floats: v}
}

// StringsAttr returns a STRINGS attribute.
func StringsAttr(name string, v ...string) *Attribute {
	a := &Attribute{Name: name, Type: AttrStrings}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

// TensorAttr returns a TENSOR attribute.
func TensorAttr(name string, t *Tensor) *Attribute {
	return &Attribute{Name: name, Type: AttrTensor, T: t}
}

// GraphAttr returns a GRAPH attribute.
func GraphAttr(name string, g *Graph) *Attribute {
	return &Attribute{Name: name, Type: AttrGraph, G: g}
}

// AttrInt returns the INT attribute name of n, or def when absent.
func (n *Node) AttrInt(name string, def int64) int64 {
	if a := n.Attr(name); a != nil {
		return a.I
	}
	return def
}

// AttrFloat returns the FLOAT attribute name of n, or def when absent.
func (n *Node) AttrFloat(name string, def float32) float32 {
	if a := n.Attr(name); a != nil {
		return a.F
	}
	return def
}

// AttrString returns the STRING attribute name of n, or def when absent.
func (n *Node) AttrString(name, def string) string {
	if a := n.Attr(name); a != nil {
		return string(a.S)
	}
	return def
}

// AttrInts returns the INTS attribute name of n, or def when absent.
func (n *Node) AttrInts(name string, def []int64) []int64 {
	if a := n.Attr(name); a != nil {
		return a.Ints
	}
	return def
}

// AttrFloats returns the FLOATS attribute name of n, or def when absent.
func (n *Node) AttrFloats(name string, def []float32) []float32 {
	if a := n.Attr(name); a != nil {
		return a.Floats
	}
	return def
}

// AttrStrings returns the STRINGS attribute name of n as strings, or def
// when absent.
func (n *Node) AttrStrings(name string, def []string) []string {
	a := n.Attr(name)
	if a == nil {
		return def
	}
	out := make([]string, len(a.Strings))
	for i, s := range a.Strings {
		out[i] = string(s)
	}
	return out
}

// String describes the attribute for messages.
func (a *Attribute) String() string {
	return fmt.Sprintf("%s:%s", a.Name, a.Type)
}
