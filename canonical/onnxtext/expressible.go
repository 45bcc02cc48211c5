package onnxtext

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"google.golang.org/protobuf/proto"
)

// NotExpressibleError tells what part of a model the text syntax cannot
// carry, so that Format followed by Parse would not give the model back.
type NotExpressibleError struct {
	Path   string // where, e.g. `graph "main" / node 3 (Conv "c1") / attribute "pads"`
	Reason string // what, e.g. "doc_string has no text syntax"
}

func (e *NotExpressibleError) Error() string {
	if e.Path == "" {
		return "onnxtext: not expressible: " + e.Reason
	}
	return "onnxtext: not expressible: " + e.Path + ": " + e.Reason
}

// Expressible returns nil when Format followed by Parse reproduces m
// exactly (proto.Equal), and otherwise a *NotExpressibleError naming the
// first field or value the text syntax cannot carry.
func Expressible(m *onnxpb.ModelProto) error {
	if m == nil {
		return &NotExpressibleError{Reason: "nil model"}
	}
	c := &checker{}
	if err := c.guard(m); err != nil {
		return err
	}
	return c.err
}

// guard runs the check and turns a panic (a nil element in a repeated
// field of a hand-built message) into an error.
func (c *checker) guard(m *onnxpb.ModelProto) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &NotExpressibleError{Path: strings.Join(c.path, " / "), Reason: fmt.Sprintf("malformed message: %v", r)}
		}
	}()
	c.model(m)
	return nil
}

type checker struct {
	path []string
	err  error
}

func (c *checker) push(format string, args ...any) {
	c.path = append(c.path, fmt.Sprintf(format, args...))
}
func (c *checker) pop() { c.path = c.path[:len(c.path)-1] }

func (c *checker) fail(format string, args ...any) {
	if c.err == nil {
		c.err = &NotExpressibleError{Path: strings.Join(c.path, " / "), Reason: fmt.Sprintf(format, args...)}
	}
}

// only fails if m has unknown fields or a populated field outside allowed.
func (c *checker) only(m proto.Message, allowed ...string) {
	if c.err != nil {
		return
	}
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if !r.Has(fd) {
			continue
		}
		ok := false
		for _, a := range allowed {
			if string(fd.Name()) == a {
				ok = true
				break
			}
		}
		if !ok {
			c.fail("%s.%s has no text syntax", r.Descriptor().Name(), fd.Name())
			return
		}
	}
	if len(r.GetUnknown()) > 0 {
		c.fail("%s has unknown fields, which the text syntax cannot carry", r.Descriptor().Name())
	}
}

func (c *checker) utf8(what, s string) {
	if c.err == nil && !utf8.ValidString(s) {
		c.fail("%s %q is not valid UTF-8", what, s)
	}
}

func (c *checker) depth(d int, what string) bool {
	if d > MaxDepth {
		c.fail("%s nested deeper than %d levels", what, MaxDepth)
		return false
	}
	return true
}

func (c *checker) model(m *onnxpb.ModelProto) {
	c.only(m, "ir_version", "opset_import", "producer_name", "producer_version", "domain",
		"model_version", "doc_string", "metadata_props", "graph", "functions")
	c.utf8("producer_name", m.GetProducerName())
	c.utf8("producer_version", m.GetProducerVersion())
	c.utf8("domain", m.GetDomain())
	c.utf8("doc_string", m.GetDocString())
	c.opsets(m.OpsetImport)
	c.stringPairs("metadata_props", m.MetadataProps)
	if m.Graph == nil {
		c.fail("model has no graph")
		return
	}
	c.graph(m.Graph, 1)
	for i, f := range m.Functions {
		c.push("function %d %q", i, f.GetName())
		c.function(f)
		c.pop()
	}
}

func (c *checker) opsets(ops []*onnxpb.OperatorSetIdProto) {
	for i, op := range ops {
		c.push("opset_import %d", i)
		c.only(op, "domain", "version")
		if op.Version == nil {
			c.fail("opset version is not set")
		}
		c.utf8("domain", op.GetDomain())
		c.pop()
	}
}

func (c *checker) stringPairs(what string, kvs []*onnxpb.StringStringEntryProto) {
	for i, kv := range kvs {
		c.push("%s %d", what, i)
		c.only(kv, "key", "value")
		if kv.Key == nil || kv.Value == nil {
			c.fail("entry without key or value")
		}
		c.utf8("key", kv.GetKey())
		c.utf8("value", kv.GetValue())
		c.pop()
	}
}

func (c *checker) graph(g *onnxpb.GraphProto, d int) {
	c.push("graph %q", g.GetName())
	defer c.pop()
	if !c.depth(d, "graph") {
		return
	}
	c.only(g, "name", "input", "output", "initializer", "value_info", "node")
	if g.Name == nil {
		c.fail("graph name is not set")
	}
	c.utf8("graph name", g.GetName())
	for i, vi := range g.Input {
		c.push("input %d", i)
		c.valueInfo(vi, d+1)
		c.pop()
	}
	for i, vi := range g.Output {
		c.push("output %d", i)
		c.valueInfo(vi, d+1)
		c.pop()
	}
	for i, t := range g.Initializer {
		c.push("initializer %d %q", i, t.GetName())
		if t.Name == nil {
			c.fail("initializer name is not set")
		}
		c.tensor(t, d+1)
		c.pop()
	}
	for i, vi := range g.ValueInfo {
		c.push("value_info %d", i)
		c.valueInfo(vi, d+1)
		c.pop()
	}
	c.nodes(g.Node, d+1)
}

func (c *checker) nodes(nodes []*onnxpb.NodeProto, d int) {
	for i, n := range nodes {
		if c.err != nil {
			return
		}
		c.push("node %d (%s %q)", i, n.GetOpType(), n.GetName())
		c.node(n, d)
		c.pop()
	}
}

func (c *checker) valueInfo(vi *onnxpb.ValueInfoProto, d int) {
	c.only(vi, "name", "type")
	if vi.Name == nil {
		c.fail("value name is not set")
	}
	c.utf8("value name", vi.GetName())
	if vi.Type != nil {
		c.typeProto(vi.Type, d)
	}
}

func (c *checker) elemType(dt *int32, what string) {
	if dt == nil {
		c.fail("%s is not set", what)
		return
	}
	if elemTypeName(*dt) == "" {
		c.fail("%s %d has no name in the text syntax", what, *dt)
	}
}

func (c *checker) shape(s *onnxpb.TensorShapeProto) {
	if s == nil {
		return
	}
	c.only(s, "dim")
	for i, dim := range s.Dim {
		c.push("dim %d", i)
		c.only(dim, "dim_value", "dim_param")
		c.utf8("dim_param", dim.GetDimParam())
		c.pop()
	}
}

func (c *checker) typeProto(t *onnxpb.TypeProto, d int) {
	if c.err != nil || !c.depth(d, "type") {
		return
	}
	c.only(t, "tensor_type", "sequence_type", "map_type", "optional_type", "sparse_tensor_type")
	switch v := t.Value.(type) {
	case *onnxpb.TypeProto_TensorType:
		c.only(v.TensorType, "elem_type", "shape")
		c.elemType(v.TensorType.ElemType, "tensor element type")
		c.shape(v.TensorType.Shape)
	case *onnxpb.TypeProto_SparseTensorType:
		c.only(v.SparseTensorType, "elem_type", "shape")
		c.elemType(v.SparseTensorType.ElemType, "sparse tensor element type")
		c.shape(v.SparseTensorType.Shape)
	case *onnxpb.TypeProto_SequenceType:
		c.only(v.SequenceType, "elem_type")
		if v.SequenceType.ElemType == nil {
			c.fail("sequence element type is not set")
			return
		}
		c.typeProto(v.SequenceType.ElemType, d+1)
	case *onnxpb.TypeProto_OptionalType:
		c.only(v.OptionalType, "elem_type")
		if v.OptionalType.ElemType == nil {
			c.fail("optional element type is not set")
			return
		}
		c.typeProto(v.OptionalType.ElemType, d+1)
	case *onnxpb.TypeProto_MapType:
		c.only(v.MapType, "key_type", "value_type")
		c.elemType(v.MapType.KeyType, "map key type")
		if v.MapType.ValueType == nil {
			c.fail("map value type is not set")
			return
		}
		c.typeProto(v.MapType.ValueType, d+1)
	default:
		c.fail("type has no value (or an opaque type), which has no text syntax")
	}
}

// tensor checks a tensor constant whose type is parsed at depth d.
func (c *checker) tensor(t *onnxpb.TensorProto, d int) {
	if c.err != nil || !c.depth(d, "type") {
		return
	}
	allowed := []string{"dims", "data_type", "name"}
	dt := t.GetDataType()
	switch {
	case t.DataLocation != nil:
		if t.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
			c.fail("data_location set to DEFAULT explicitly has no text syntax")
			return
		}
		allowed = append(allowed, "data_location", "external_data")
	case t.RawData != nil:
		allowed = append(allowed, "raw_data")
	default:
		allowed = append(allowed, typedField(dt).String())
	}
	c.only(t, allowed...)
	c.elemType(t.DataType, "tensor data type")
	c.utf8("tensor name", t.GetName())
	c.stringPairs("external_data", t.ExternalData)
	for _, s := range t.StringData {
		c.utf8("string element", string(s))
	}
}

func (c *checker) node(n *onnxpb.NodeProto, d int) {
	c.only(n, "input", "output", "name", "op_type", "domain", "overload", "attribute")
	if !isPlainIdent(n.GetOpType()) {
		c.fail("operator type %q is not an identifier", n.GetOpType())
	}
	if n.Domain != nil && n.GetDomain() != "" && !isQualifiedID(n.GetDomain()) {
		c.fail("domain %q is not a dotted identifier", n.GetDomain())
	}
	if n.Overload != nil && !isPlainIdent(n.GetOverload()) {
		c.fail("overload %q is not an identifier", n.GetOverload())
	}
	c.utf8("node name", n.GetName())
	for _, s := range n.Input {
		c.utf8("input name", s)
	}
	for _, s := range n.Output {
		c.utf8("output name", s)
	}
	for _, a := range n.Attribute {
		c.push("attribute %q", a.GetName())
		c.attribute(a, d)
		c.pop()
	}
}

// attribute checks an attribute of a node at graph depth d-1 (its graphs
// and types are parsed at depth d).
func (c *checker) attribute(a *onnxpb.AttributeProto, d int) {
	if c.err != nil {
		return
	}
	if !isPlainIdent(a.GetName()) {
		c.fail("attribute name %q is not an identifier", a.GetName())
		return
	}
	if a.RefAttrName != nil {
		c.only(a, "name", "type", "ref_attr_name")
		if !isPlainIdent(a.GetRefAttrName()) {
			c.fail("referenced attribute name %q is not an identifier", a.GetRefAttrName())
		}
		if a.Type != nil {
			switch t := a.GetType(); t {
			case onnxpb.AttributeProto_UNDEFINED, onnxpb.AttributeProto_SPARSE_TENSOR, onnxpb.AttributeProto_SPARSE_TENSORS:
				c.fail("attribute type %s has no text syntax", t)
			default:
				if attrTypeName(t) == "" {
					c.fail("unknown attribute type %d", t)
				}
			}
		}
		return
	}
	if a.Type == nil {
		c.fail("attribute type is not set")
		return
	}
	var field string
	var present bool
	switch a.GetType() {
	case onnxpb.AttributeProto_INT:
		field, present = "i", a.I != nil
	case onnxpb.AttributeProto_FLOAT:
		field, present = "f", a.F != nil
	case onnxpb.AttributeProto_STRING:
		field, present = "s", a.S != nil
		c.utf8("string value", string(a.S))
	case onnxpb.AttributeProto_TENSOR:
		field, present = "t", a.T != nil
		if a.T != nil {
			c.tensor(a.T, d)
		}
	case onnxpb.AttributeProto_GRAPH:
		field, present = "g", a.G != nil
		if a.G != nil {
			c.graph(a.G, d)
		}
	case onnxpb.AttributeProto_TYPE_PROTO:
		field, present = "tp", a.Tp != nil
		if a.Tp != nil {
			c.typeProto(a.Tp, d)
		}
	case onnxpb.AttributeProto_INTS:
		field, present = "ints", true
	case onnxpb.AttributeProto_FLOATS:
		field, present = "floats", true
	case onnxpb.AttributeProto_STRINGS:
		field, present = "strings", true
		for _, s := range a.Strings {
			c.utf8("string value", string(s))
		}
	case onnxpb.AttributeProto_TENSORS:
		field, present = "tensors", true
		for _, t := range a.Tensors {
			c.tensor(t, d)
		}
	case onnxpb.AttributeProto_GRAPHS:
		field, present = "graphs", true
		for _, g := range a.Graphs {
			c.graph(g, d)
		}
	case onnxpb.AttributeProto_TYPE_PROTOS:
		field, present = "type_protos", true
		for _, t := range a.TypeProtos {
			c.typeProto(t, d)
		}
	default:
		c.fail("attribute type %s has no text syntax", a.GetType())
		return
	}
	if !present {
		c.fail("attribute of type %s has no %s value", a.GetType(), field)
	}
	c.only(a, "name", "type", field)
}

func (c *checker) function(f *onnxpb.FunctionProto) {
	c.only(f, "name", "input", "output", "attribute", "attribute_proto", "node",
		"doc_string", "opset_import", "domain", "overload", "value_info")
	if f.Name == nil {
		c.fail("function name is not set")
	}
	for _, s := range []string{f.GetName(), f.GetDocString(), f.GetDomain(), f.GetOverload()} {
		c.utf8("string", s)
	}
	for _, lists := range [][]string{f.Input, f.Output, f.Attribute} {
		for _, s := range lists {
			c.utf8("name", s)
		}
	}
	c.opsets(f.OpsetImport)
	for i, a := range f.AttributeProto {
		c.push("attribute_proto %d %q", i, a.GetName())
		c.attribute(a, 1)
		c.pop()
	}
	for i, vi := range f.ValueInfo {
		c.push("value_info %d", i)
		c.valueInfo(vi, 1)
		c.pop()
	}
	c.nodes(f.Node, 1)
}
