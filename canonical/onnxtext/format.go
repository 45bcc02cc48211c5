package onnxtext

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// Format writes m in the ONNX text syntax. Fields the syntax cannot carry
// (doc strings other than the model's and functions', training info,
// sparse initializers, ...) are left out; Expressible tells whether the
// text reproduces m exactly. Format fails when m holds something it cannot
// write as parseable text at all: an unknown element type, an operator or
// attribute name that is not an identifier, a string that is not UTF-8.
//
// Beyond Syntax.md the output uses three extensions, all accepted by Parse:
// `.Op` for a node whose domain is set to the empty string, `raw {...}` or
// `raw "hex"` for tensors holding raw_data, and a quoted name after the
// type of an attribute tensor whose name is set to "".
func Format(m *onnxpb.ModelProto) ([]byte, error) {
	if m == nil {
		return nil, errors.New("onnxtext: format: nil model")
	}
	w := &writer{}
	if err := w.guard(func() { w.model(m) }); err != nil {
		return nil, fmt.Errorf("onnxtext: format: %w", err)
	}
	if w.err != nil {
		return nil, fmt.Errorf("onnxtext: format: %w", w.err)
	}
	return w.buf.Bytes(), nil
}

// FormatGraph writes a single graph.
func FormatGraph(g *onnxpb.GraphProto) ([]byte, error) {
	if g == nil {
		return nil, errors.New("onnxtext: format graph: nil graph")
	}
	w := &writer{}
	if err := w.guard(func() { w.graph(g, "") }); err != nil {
		return nil, fmt.Errorf("onnxtext: format graph: %w", err)
	}
	w.buf.WriteByte('\n')
	if w.err != nil {
		return nil, fmt.Errorf("onnxtext: format graph: %w", w.err)
	}
	return w.buf.Bytes(), nil
}

// FormatFunction writes a single function.
func FormatFunction(f *onnxpb.FunctionProto) ([]byte, error) {
	if f == nil {
		return nil, errors.New("onnxtext: format function: nil function")
	}
	w := &writer{}
	if err := w.guard(func() { w.function(f) }); err != nil {
		return nil, fmt.Errorf("onnxtext: format function: %w", err)
	}
	if w.err != nil {
		return nil, fmt.Errorf("onnxtext: format function: %w", w.err)
	}
	return w.buf.Bytes(), nil
}

type writer struct {
	buf bytes.Buffer
	err error
}

// guard runs f and turns a panic (a nil element in a repeated field of a
// hand-built message) into an error.
func (w *writer) guard(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed message: %v", r)
		}
	}()
	f()
	return nil
}

func (w *writer) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

func (w *writer) str(s string) { w.buf.WriteString(s) }

// quoted writes s as a string literal.
func (w *writer) quoted(s string) {
	if !utf8.ValidString(s) {
		w.fail("string %q is not valid UTF-8", s)
	}
	w.buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			w.buf.WriteByte('\\')
		}
		w.buf.WriteByte(s[i])
	}
	w.buf.WriteByte('"')
}

// id writes a name, quoted unless it is a plain, non-reserved identifier.
func (w *writer) id(s string) {
	if isPlainIdent(s) && !isReserved(s) {
		w.str(s)
		return
	}
	w.quoted(s)
}

func (w *writer) ids(list []string) {
	for i, s := range list {
		if i > 0 {
			w.str(", ")
		}
		w.id(s)
	}
}

func (w *writer) model(m *onnxpb.ModelProto) {
	var items []func()
	if m.IrVersion != nil {
		items = append(items, func() { w.str("ir_version: " + strconv.FormatInt(m.GetIrVersion(), 10)) })
	}
	if len(m.OpsetImport) > 0 {
		items = append(items, func() { w.str("opset_import: "); w.opsets(m.OpsetImport) })
	}
	for _, kv := range []struct {
		key string
		val *string
	}{{"producer_name", m.ProducerName}, {"producer_version", m.ProducerVersion}, {"domain", m.Domain}} {
		if kv.val != nil {
			items = append(items, func() { w.str(kv.key + ": "); w.quoted(*kv.val) })
		}
	}
	if m.ModelVersion != nil {
		items = append(items, func() { w.str("model_version: " + strconv.FormatInt(m.GetModelVersion(), 10)) })
	}
	if m.DocString != nil {
		items = append(items, func() { w.str("doc_string: "); w.quoted(m.GetDocString()) })
	}
	if len(m.MetadataProps) > 0 {
		items = append(items, func() { w.str("metadata_props: "); w.stringPairs(m.MetadataProps) })
	}
	w.header(items)
	if m.Graph == nil {
		w.fail("model has no graph")
		return
	}
	w.graph(m.Graph, "")
	w.str("\n")
	for _, f := range m.Functions {
		w.str("\n")
		w.function(f)
	}
}

func (w *writer) header(items []func()) {
	if len(items) == 0 {
		return
	}
	w.str("<\n")
	for i, item := range items {
		w.str("   ")
		item()
		if i < len(items)-1 {
			w.str(",")
		}
		w.str("\n")
	}
	w.str(">\n")
}

func (w *writer) opsets(ops []*onnxpb.OperatorSetIdProto) {
	w.str("[")
	for i, op := range ops {
		if i > 0 {
			w.str(", ")
		}
		if op.Domain != nil {
			w.quoted(op.GetDomain())
			w.str(" : ")
		}
		w.str(strconv.FormatInt(op.GetVersion(), 10))
	}
	w.str("]")
}

func (w *writer) stringPairs(kvs []*onnxpb.StringStringEntryProto) {
	w.str("[")
	for i, kv := range kvs {
		if i > 0 {
			w.str(", ")
		}
		w.quoted(kv.GetKey())
		w.str(": ")
		w.quoted(kv.GetValue())
	}
	w.str("]")
}

// graph writes a graph whose closing brace sits at indent.
func (w *writer) graph(g *onnxpb.GraphProto, indent string) {
	w.id(g.GetName())
	w.str(" (")
	w.valueInfos(g.Input)
	w.str(") => (")
	w.valueInfos(g.Output)
	w.str(")")
	if len(g.Initializer) > 0 || len(g.ValueInfo) > 0 {
		w.str("\n" + indent + "   <")
		for i, t := range g.Initializer {
			if i > 0 {
				w.str(", ")
			}
			w.tensorType(t)
			w.str(" ")
			w.id(t.GetName())
			w.str(" = ")
			w.tensorData(t)
		}
		for i, vi := range g.ValueInfo {
			if i > 0 || len(g.Initializer) > 0 {
				w.str(", ")
			}
			w.valueInfo(vi)
		}
		w.str(">\n" + indent + "{\n")
	} else {
		w.str(" {\n")
	}
	w.nodes(g.Node, indent+"   ")
	w.str(indent + "}")
}

func (w *writer) nodes(nodes []*onnxpb.NodeProto, indent string) {
	for _, n := range nodes {
		w.str(indent)
		w.node(n, indent)
		w.str("\n")
	}
}

func (w *writer) valueInfos(vis []*onnxpb.ValueInfoProto) {
	for i, vi := range vis {
		if i > 0 {
			w.str(", ")
		}
		w.valueInfo(vi)
	}
}

func (w *writer) valueInfo(vi *onnxpb.ValueInfoProto) {
	if vi.Type != nil {
		w.typeProto(vi.Type)
		w.str(" ")
	}
	w.id(vi.GetName())
}

func (w *writer) elemType(dt int32) {
	name := elemTypeName(dt)
	if name == "" {
		w.fail("element type %d has no name in the text syntax", dt)
		name = "undefined"
	}
	w.str(name)
}

func (w *writer) shape(s *onnxpb.TensorShapeProto) {
	if s == nil {
		w.str("[]")
		return
	}
	if len(s.Dim) == 0 {
		return
	}
	w.str("[")
	for i, d := range s.Dim {
		if i > 0 {
			w.str(",")
		}
		switch v := d.Value.(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			w.str(strconv.FormatInt(v.DimValue, 10))
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			w.id(v.DimParam)
		default:
			w.str("?")
		}
	}
	w.str("]")
}

func (w *writer) typeProto(t *onnxpb.TypeProto) {
	switch v := t.Value.(type) {
	case *onnxpb.TypeProto_TensorType:
		w.elemType(v.TensorType.GetElemType())
		w.shape(v.TensorType.GetShape())
	case *onnxpb.TypeProto_SequenceType:
		w.str("seq(")
		w.typeProto(v.SequenceType.GetElemType())
		w.str(")")
	case *onnxpb.TypeProto_OptionalType:
		w.str("optional(")
		w.typeProto(v.OptionalType.GetElemType())
		w.str(")")
	case *onnxpb.TypeProto_MapType:
		w.str("map(")
		w.elemType(v.MapType.GetKeyType())
		w.str(", ")
		w.typeProto(v.MapType.GetValueType())
		w.str(")")
	case *onnxpb.TypeProto_SparseTensorType:
		w.str("sparse_tensor(")
		w.elemType(v.SparseTensorType.GetElemType())
		w.shape(v.SparseTensorType.GetShape())
		w.str(")")
	default:
		w.fail("type %v has no text syntax", t)
	}
}

func (w *writer) tensorType(t *onnxpb.TensorProto) {
	w.elemType(t.GetDataType())
	if len(t.Dims) > 0 {
		w.str("[")
		for i, d := range t.Dims {
			if i > 0 {
				w.str(",")
			}
			w.str(strconv.FormatInt(d, 10))
		}
		w.str("]")
	}
}

func (w *writer) tensorData(t *onnxpb.TensorProto) {
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		w.stringPairs(t.ExternalData)
		return
	}
	if t.RawData != nil {
		if vals, ok := rawValues(t.GetDataType(), t.RawData); ok {
			w.str("raw {" + strings.Join(vals, ", ") + "}")
			return
		}
		w.str("raw \"" + hex.EncodeToString(t.RawData) + "\"")
		return
	}
	w.str("{")
	switch typedField(t.GetDataType()) {
	case fieldInt32:
		for i, v := range t.Int32Data {
			w.sep(i)
			w.str(strconv.FormatInt(int64(v), 10))
		}
	case fieldInt64:
		for i, v := range t.Int64Data {
			w.sep(i)
			w.str(strconv.FormatInt(v, 10))
		}
	case fieldUint64:
		for i, v := range t.Uint64Data {
			w.sep(i)
			w.str(strconv.FormatUint(v, 10))
		}
	case fieldFloat:
		for i, v := range t.FloatData {
			w.sep(i)
			w.str(formatFloat32(v))
		}
	case fieldDouble:
		for i, v := range t.DoubleData {
			w.sep(i)
			w.str(formatFloat64(v))
		}
	case fieldString:
		for i, v := range t.StringData {
			w.sep(i)
			w.quoted(string(v))
		}
	}
	w.str("}")
}

func (w *writer) sep(i int) {
	if i > 0 {
		w.str(", ")
	}
}

// attrTensor writes a tensor constant as an attribute value.
func (w *writer) attrTensor(t *onnxpb.TensorProto) {
	w.tensorType(t)
	if t.Name != nil {
		w.str(" ")
		w.id(t.GetName())
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		// "float [..." would read as a shape: the '=' separates the data.
		w.str(" =")
	}
	w.str(" ")
	w.tensorData(t)
}

func (w *writer) node(n *onnxpb.NodeProto, indent string) {
	if n.Name != nil {
		w.str("[")
		w.id(n.GetName())
		w.str("] ")
	}
	w.ids(n.Output)
	if len(n.Output) > 0 {
		w.str(" ")
	}
	w.str("= ")
	if n.Domain != nil {
		if n.GetDomain() != "" && !isQualifiedID(n.GetDomain()) {
			w.fail("node domain %q is not a dotted identifier", n.GetDomain())
		}
		w.str(n.GetDomain() + ".")
	}
	if !isPlainIdent(n.GetOpType()) {
		w.fail("operator type %q is not an identifier", n.GetOpType())
	}
	w.str(n.GetOpType())
	if n.Overload != nil {
		if !isPlainIdent(n.GetOverload()) {
			w.fail("overload %q is not an identifier", n.GetOverload())
		}
		w.str(":" + n.GetOverload())
	}
	hasGraph := false
	for _, a := range n.Attribute {
		if a.G != nil || len(a.Graphs) > 0 {
			hasGraph = true
		}
	}
	if !hasGraph && len(n.Attribute) > 0 {
		w.attrs(n.Attribute, indent)
	}
	w.str(" (")
	w.ids(n.Input)
	w.str(")")
	if hasGraph {
		w.attrs(n.Attribute, indent)
	}
}

func (w *writer) attrs(attrs []*onnxpb.AttributeProto, indent string) {
	w.str(" <")
	for i, a := range attrs {
		if i > 0 {
			w.str(", ")
		}
		w.attr(a, indent)
	}
	w.str(">")
}

func (w *writer) attr(a *onnxpb.AttributeProto, indent string) {
	if !isPlainIdent(a.GetName()) {
		w.fail("attribute name %q is not an identifier", a.GetName())
	}
	w.str(a.GetName())
	if a.Type != nil {
		name := attrTypeName(a.GetType())
		if name == "" {
			w.fail("attribute %q has unknown type %d", a.GetName(), a.GetType())
		}
		w.str(": " + name)
	}
	w.str(" = ")
	if a.RefAttrName != nil {
		if !isPlainIdent(a.GetRefAttrName()) {
			w.fail("attribute reference %q is not an identifier", a.GetRefAttrName())
		}
		w.str("@" + a.GetRefAttrName())
		return
	}
	switch a.GetType() {
	case onnxpb.AttributeProto_INT:
		w.str(strconv.FormatInt(a.GetI(), 10))
	case onnxpb.AttributeProto_FLOAT:
		w.str(formatFloat32(a.GetF()))
	case onnxpb.AttributeProto_STRING:
		w.quoted(string(a.S))
	case onnxpb.AttributeProto_TENSOR:
		if a.T == nil {
			w.fail("tensor attribute %q has no tensor", a.GetName())
			return
		}
		w.attrTensor(a.T)
	case onnxpb.AttributeProto_GRAPH:
		if a.G == nil {
			w.fail("graph attribute %q has no graph", a.GetName())
			return
		}
		w.graph(a.G, indent)
	case onnxpb.AttributeProto_TYPE_PROTO:
		if a.Tp == nil {
			w.fail("type attribute %q has no type", a.GetName())
			return
		}
		w.typeProto(a.Tp)
	case onnxpb.AttributeProto_INTS:
		w.list(len(a.Ints), func(i int) { w.str(strconv.FormatInt(a.Ints[i], 10)) })
	case onnxpb.AttributeProto_FLOATS:
		w.list(len(a.Floats), func(i int) { w.str(formatFloat32(a.Floats[i])) })
	case onnxpb.AttributeProto_STRINGS:
		w.list(len(a.Strings), func(i int) { w.quoted(string(a.Strings[i])) })
	case onnxpb.AttributeProto_TENSORS:
		w.list(len(a.Tensors), func(i int) { w.attrTensor(a.Tensors[i]) })
	case onnxpb.AttributeProto_GRAPHS:
		w.list(len(a.Graphs), func(i int) { w.graph(a.Graphs[i], indent) })
	case onnxpb.AttributeProto_TYPE_PROTOS:
		w.list(len(a.TypeProtos), func(i int) { w.typeProto(a.TypeProtos[i]) })
	default:
		w.fail("attribute %q of type %s has no text syntax", a.GetName(), a.GetType())
	}
}

func (w *writer) list(n int, each func(int)) {
	w.str("[")
	for i := 0; i < n; i++ {
		w.sep(i)
		each(i)
	}
	w.str("]")
}

func (w *writer) function(f *onnxpb.FunctionProto) {
	var items []func()
	if f.Domain != nil {
		items = append(items, func() { w.str("domain: "); w.quoted(f.GetDomain()) })
	}
	if f.Overload != nil {
		items = append(items, func() { w.str("overload: "); w.quoted(f.GetOverload()) })
	}
	if f.DocString != nil {
		items = append(items, func() { w.str("doc_string: "); w.quoted(f.GetDocString()) })
	}
	if len(f.OpsetImport) > 0 {
		items = append(items, func() { w.str("opset_import: "); w.opsets(f.OpsetImport) })
	}
	w.header(items)
	w.id(f.GetName())
	w.str(" ")
	if len(f.Attribute)+len(f.AttributeProto) > 0 {
		w.str("<")
		for i, a := range f.Attribute {
			w.sep(i)
			w.id(a)
		}
		for i, a := range f.AttributeProto {
			w.sep(i + len(f.Attribute))
			w.attr(a, "")
		}
		w.str("> ")
	}
	w.str("(")
	w.ids(f.Input)
	w.str(") => (")
	w.ids(f.Output)
	w.str(")")
	if len(f.ValueInfo) > 0 {
		w.str("\n   <")
		w.valueInfos(f.ValueInfo)
		w.str(">\n{\n")
	} else {
		w.str(" {\n")
	}
	w.nodes(f.Node, "   ")
	w.str("}\n")
}
