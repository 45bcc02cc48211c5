package onnxtext

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"google.golang.org/protobuf/proto"
)

// MaxDepth bounds the nesting of graphs (subgraph attributes) and types
// (seq, map, optional, sparse_tensor) the parser accepts. Each graph and
// each type constructor counts one level.
const MaxDepth = 64

// SyntaxError is a parse error at a position of the input.
type SyntaxError struct {
	File string // file name given to the parser
	Line int    // 1-based line
	Col  int    // 1-based column, in characters
	Msg  string // what was expected and what was found
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

type parser struct {
	file  string
	src   []byte
	lx    lexer
	buf   [3]token // lookahead: up to two peeked tokens and one unread
	nbuf  int
	depth int
	err   error
}

func newParser(filename string, src []byte) *parser {
	return &parser{file: filename, src: src, lx: lexer{src: src}}
}

func (p *parser) errorAt(pos int, format string, args ...any) error {
	line, col := lineCol(p.src, pos)
	return &SyntaxError{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// peekN returns the n-th token ahead (0 = next, at most 1) without consuming it.
func (p *parser) peekN(n int) (token, error) {
	for p.nbuf <= n {
		t, lerr := p.lx.next()
		if lerr != nil {
			return token{}, p.errorAt(lerr.pos, "%s", lerr.msg)
		}
		p.buf[p.nbuf] = t
		p.nbuf++
	}
	return p.buf[n], nil
}

func (p *parser) peek() (token, error) { return p.peekN(0) }

func (p *parser) advance() (token, error) {
	t, err := p.peek()
	if err != nil {
		return t, err
	}
	copy(p.buf[:], p.buf[1:p.nbuf])
	p.nbuf--
	return t, nil
}

// skip drops the token that peek returned.
func (p *parser) skip() {
	if p.nbuf == 0 {
		return
	}
	copy(p.buf[:], p.buf[1:p.nbuf])
	p.nbuf--
}

// unread pushes a consumed token back.
func (p *parser) unread(t token) {
	copy(p.buf[1:], p.buf[:p.nbuf])
	p.buf[0] = t
	p.nbuf++
}

// isPunct reports whether the next token is the punctuation s.
func (p *parser) isPunct(s string) (bool, error) {
	t, err := p.peek()
	if err != nil {
		return false, err
	}
	return t.kind == tokPunct && t.text == s, nil
}

// accept consumes the punctuation s if it is next.
func (p *parser) accept(s string) (bool, error) {
	ok, err := p.isPunct(s)
	if err != nil || !ok {
		return false, err
	}
	_, err = p.advance()
	return true, err
}

func (p *parser) expect(s, context string) error {
	t, err := p.advance()
	if err != nil {
		return err
	}
	if t.kind != tokPunct || t.text != s {
		return p.errorAt(t.pos, "expected %q %s, found %s", s, context, t)
	}
	return nil
}

func (p *parser) expectIdent(context string) (token, error) {
	t, err := p.advance()
	if err != nil {
		return t, err
	}
	if t.kind != tokIdent {
		return t, p.errorAt(t.pos, "expected identifier (%s), found %s", context, t)
	}
	return t, nil
}

// quotableID parses an identifier or a quoted string.
func (p *parser) quotableID(context string) (string, error) {
	t, err := p.advance()
	if err != nil {
		return "", err
	}
	if t.kind != tokIdent && t.kind != tokString {
		return "", p.errorAt(t.pos, "expected identifier or quoted name (%s), found %s", context, t)
	}
	return t.text, nil
}

func (p *parser) expectString(context string) (string, error) {
	t, err := p.advance()
	if err != nil {
		return "", err
	}
	if t.kind != tokString {
		return "", p.errorAt(t.pos, "expected quoted string (%s), found %s", context, t)
	}
	return t.text, nil
}

func (p *parser) expectInt(context string) (int64, error) {
	t, err := p.advance()
	if err != nil {
		return 0, err
	}
	if t.kind != tokNumber || isFloatLiteral(t.text) {
		return 0, p.errorAt(t.pos, "expected integer (%s), found %s", context, t)
	}
	v, perr := strconv.ParseInt(t.text, 10, 64)
	if perr != nil {
		return 0, p.errorAt(t.pos, "integer %s out of int64 range (%s)", t.text, context)
	}
	return v, nil
}

func (p *parser) enter(pos int, what string) error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errorAt(pos, "%s nested deeper than %d levels", what, MaxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) expectEOF() error {
	t, err := p.peek()
	if err != nil {
		return err
	}
	if t.kind != tokEOF {
		return p.errorAt(t.pos, "expected end of input, found %s", t)
	}
	return nil
}

// run calls f and turns a panic (a bug) into an error, so that hostile
// input never takes the caller down.
func run[T any](filename string, f func() (T, error)) (res T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			res = zero
			err = fmt.Errorf("onnxtext: %s: internal parser error: %v", filename, r)
		}
	}()
	return f()
}

// Parse parses a model in the ONNX text syntax: an optional header
// <ir_version: ..., opset_import: [...], ...>, the main graph and any
// number of functions.
func Parse(filename string, src []byte) (*onnxpb.ModelProto, error) {
	return run(filename, func() (*onnxpb.ModelProto, error) {
		p := newParser(filename, src)
		m, err := p.model()
		if err != nil {
			return nil, fmt.Errorf("onnxtext: parse model: %w", err)
		}
		return m, nil
	})
}

// ParseGraph parses a single graph: name (inputs) => (outputs) <...> {nodes}.
func ParseGraph(filename string, src []byte) (*onnxpb.GraphProto, error) {
	return run(filename, func() (*onnxpb.GraphProto, error) {
		p := newParser(filename, src)
		g, err := p.graph()
		if err == nil {
			err = p.expectEOF()
		}
		if err != nil {
			return nil, fmt.Errorf("onnxtext: parse graph: %w", err)
		}
		return g, nil
	})
}

// ParseFunction parses a single function with its optional header.
func ParseFunction(filename string, src []byte) (*onnxpb.FunctionProto, error) {
	return run(filename, func() (*onnxpb.FunctionProto, error) {
		p := newParser(filename, src)
		f, err := p.function()
		if err == nil {
			err = p.expectEOF()
		}
		if err != nil {
			return nil, fmt.Errorf("onnxtext: parse function: %w", err)
		}
		return f, nil
	})
}

// ParseNode parses a single node such as `y = Add(a, b)`.
func ParseNode(filename string, src []byte) (*onnxpb.NodeProto, error) {
	return run(filename, func() (*onnxpb.NodeProto, error) {
		p := newParser(filename, src)
		n, err := p.node()
		if err == nil {
			err = p.expectEOF()
		}
		if err != nil {
			return nil, fmt.Errorf("onnxtext: parse node: %w", err)
		}
		return n, nil
	})
}

func (p *parser) model() (*onnxpb.ModelProto, error) {
	m := &onnxpb.ModelProto{}
	if ok, err := p.accept("<"); err != nil {
		return nil, err
	} else if ok {
		if err := p.keyValues("model header", func(key token) error { return p.modelKey(m, key) }); err != nil {
			return nil, err
		}
	}
	g, err := p.graph()
	if err != nil {
		return nil, err
	}
	m.Graph = g
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind == tokEOF {
			return m, nil
		}
		f, err := p.function()
		if err != nil {
			return nil, err
		}
		m.Functions = append(m.Functions, f)
	}
}

// keyValues parses `key: value (, key: value)* >` after the opening '<'.
func (p *parser) keyValues(context string, each func(key token) error) error {
	if ok, err := p.accept(">"); err != nil || ok {
		return err
	}
	for {
		key, err := p.expectIdent("key of " + context)
		if err != nil {
			return err
		}
		if err := p.expect(":", "after "+key.text); err != nil {
			return err
		}
		if err := each(key); err != nil {
			return err
		}
		t, err := p.advance()
		if err != nil {
			return err
		}
		if t.kind == tokPunct && t.text == ">" {
			return nil
		}
		if t.kind != tokPunct || t.text != "," {
			return p.errorAt(t.pos, "expected ',' or '>' in %s, found %s", context, t)
		}
	}
}

func (p *parser) modelKey(m *onnxpb.ModelProto, key token) error {
	var err error
	switch key.text {
	case "ir_version":
		var v int64
		v, err = p.expectInt("ir_version")
		m.IrVersion = proto.Int64(v)
	case "model_version":
		var v int64
		v, err = p.expectInt("model_version")
		m.ModelVersion = proto.Int64(v)
	case "opset_import":
		var ops []*onnxpb.OperatorSetIdProto
		ops, err = p.opsetList()
		m.OpsetImport = append(m.OpsetImport, ops...)
	case "producer_name":
		var s string
		s, err = p.expectString(key.text)
		m.ProducerName = proto.String(s)
	case "producer_version":
		var s string
		s, err = p.expectString(key.text)
		m.ProducerVersion = proto.String(s)
	case "domain":
		var s string
		s, err = p.expectString(key.text)
		m.Domain = proto.String(s)
	case "doc_string":
		var s string
		s, err = p.expectString(key.text)
		m.DocString = proto.String(s)
	case "metadata_props":
		var props []*onnxpb.StringStringEntryProto
		props, err = p.stringPairs("metadata_props")
		m.MetadataProps = append(m.MetadataProps, props...)
	default:
		return p.errorAt(key.pos, "unknown model header key %q (expected ir_version, opset_import, producer_name, producer_version, domain, model_version, doc_string or metadata_props)", key.text)
	}
	return err
}

// opsetList parses [ "domain" : version, ... ]; an entry without a domain
// string leaves the domain unset.
func (p *parser) opsetList() ([]*onnxpb.OperatorSetIdProto, error) {
	if err := p.expect("[", "to open opset_import"); err != nil {
		return nil, err
	}
	var out []*onnxpb.OperatorSetIdProto
	if ok, err := p.accept("]"); err != nil || ok {
		return out, err
	}
	for {
		op := &onnxpb.OperatorSetIdProto{}
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind == tokString {
			p.skip()
			op.Domain = proto.String(t.text)
			if err := p.expect(":", "between opset domain and version"); err != nil {
				return nil, err
			}
		}
		v, err := p.expectInt("opset version")
		if err != nil {
			return nil, err
		}
		op.Version = proto.Int64(v)
		out = append(out, op)
		if done, err := p.listEnd("]", "opset_import"); err != nil || done {
			return out, err
		}
	}
}

// listEnd consumes ',' (returns false) or the closing punctuation (returns true).
func (p *parser) listEnd(closer, context string) (bool, error) {
	t, err := p.advance()
	if err != nil {
		return false, err
	}
	if t.kind == tokPunct && t.text == closer {
		return true, nil
	}
	if t.kind == tokPunct && t.text == "," {
		return false, nil
	}
	return false, p.errorAt(t.pos, "expected ',' or %q in %s, found %s", closer, context, t)
}

// stringPairs parses [ "k" : "v", ... ].
func (p *parser) stringPairs(context string) ([]*onnxpb.StringStringEntryProto, error) {
	if err := p.expect("[", "to open "+context); err != nil {
		return nil, err
	}
	var out []*onnxpb.StringStringEntryProto
	if ok, err := p.accept("]"); err != nil || ok {
		return out, err
	}
	for {
		k, err := p.expectString("key in " + context)
		if err != nil {
			return nil, err
		}
		if err := p.expect(":", "between key and value in "+context); err != nil {
			return nil, err
		}
		v, err := p.expectString("value in " + context)
		if err != nil {
			return nil, err
		}
		out = append(out, &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(v)})
		if done, err := p.listEnd("]", context); err != nil || done {
			return out, err
		}
	}
}

func (p *parser) graph() (*onnxpb.GraphProto, error) {
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	if err := p.enter(t.pos, "graph"); err != nil {
		return nil, err
	}
	defer p.leave()
	name, err := p.quotableID("graph name")
	if err != nil {
		return nil, err
	}
	g := &onnxpb.GraphProto{Name: proto.String(name)}
	if err := p.expect("(", "to open the graph input list"); err != nil {
		return nil, err
	}
	if err := p.valueInfos(")", "graph inputs", true, func(vi *onnxpb.ValueInfoProto, init *onnxpb.TensorProto) {
		g.Input = append(g.Input, vi)
		if init != nil {
			g.Initializer = append(g.Initializer, init)
		}
	}); err != nil {
		return nil, err
	}
	if err := p.expect("=>", "between graph inputs and outputs"); err != nil {
		return nil, err
	}
	if err := p.expect("(", "to open the graph output list"); err != nil {
		return nil, err
	}
	if err := p.valueInfos(")", "graph outputs", false, func(vi *onnxpb.ValueInfoProto, _ *onnxpb.TensorProto) {
		g.Output = append(g.Output, vi)
	}); err != nil {
		return nil, err
	}
	if ok, err := p.accept("<"); err != nil {
		return nil, err
	} else if ok {
		if err := p.valueInfos(">", "graph initializers and value infos", true, func(vi *onnxpb.ValueInfoProto, init *onnxpb.TensorProto) {
			if init != nil {
				g.Initializer = append(g.Initializer, init)
			} else {
				g.ValueInfo = append(g.ValueInfo, vi)
			}
		}); err != nil {
			return nil, err
		}
	}
	nodes, err := p.nodeList()
	if err != nil {
		return nil, err
	}
	g.Node = nodes
	return g, nil
}

// valueInfos parses value-infos (optionally with '= data' initializers)
// up to and including closer; the opening bracket is already consumed.
func (p *parser) valueInfos(closer, context string, inits bool, add func(*onnxpb.ValueInfoProto, *onnxpb.TensorProto)) error {
	if ok, err := p.accept(closer); err != nil || ok {
		return err
	}
	for {
		vi, err := p.valueInfo(context)
		if err != nil {
			return err
		}
		var init *onnxpb.TensorProto
		if inits {
			eq, err := p.peek()
			if err != nil {
				return err
			}
			if eq.kind == tokPunct && eq.text == "=" {
				p.skip()
				init, err = p.tensorData(vi.GetType(), eq.pos)
				if err != nil {
					return err
				}
				init.Name = proto.String(vi.GetName())
			}
		}
		add(vi, init)
		if done, err := p.listEnd(closer, context); err != nil || done {
			return err
		}
	}
}

// valueInfo parses `type? name`.
func (p *parser) valueInfo(context string) (*onnxpb.ValueInfoProto, error) {
	vi := &onnxpb.ValueInfoProto{}
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	if t.kind == tokIdent && isTypeKeyword(t.text) {
		tp, err := p.typeProto()
		if err != nil {
			return nil, err
		}
		vi.Type = tp
	}
	name, err := p.quotableID("value name in " + context)
	if err != nil {
		return nil, err
	}
	vi.Name = proto.String(name)
	return vi, nil
}

func (p *parser) typeProto() (*onnxpb.TypeProto, error) {
	t, err := p.advance()
	if err != nil {
		return nil, err
	}
	if t.kind != tokIdent {
		return nil, p.errorAt(t.pos, "expected a type, found %s", t)
	}
	if err := p.enter(t.pos, "type"); err != nil {
		return nil, err
	}
	defer p.leave()
	if dt := elemTypeByName(t.text); dt != 0 {
		shape, err := p.optShape()
		if err != nil {
			return nil, err
		}
		return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(dt), Shape: shape}}}, nil
	}
	switch t.text {
	case "seq", "optional":
		if err := p.expect("(", "after "+t.text); err != nil {
			return nil, err
		}
		elem, err := p.typeProto()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")", "to close "+t.text+"(...)"); err != nil {
			return nil, err
		}
		if t.text == "seq" {
			return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: elem}}}, nil
		}
		return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_OptionalType{OptionalType: &onnxpb.TypeProto_Optional{ElemType: elem}}}, nil
	case "map":
		if err := p.expect("(", "after map"); err != nil {
			return nil, err
		}
		kt, err := p.expectIdent("map key type")
		if err != nil {
			return nil, err
		}
		key := elemTypeByName(kt.text)
		if key == 0 {
			return nil, p.errorAt(kt.pos, "expected a primitive type as map key type, found %s", kt)
		}
		if err := p.expect(",", "after the map key type"); err != nil {
			return nil, err
		}
		val, err := p.typeProto()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")", "to close map(...)"); err != nil {
			return nil, err
		}
		return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_MapType{MapType: &onnxpb.TypeProto_Map{KeyType: proto.Int32(key), ValueType: val}}}, nil
	case "sparse_tensor":
		if err := p.expect("(", "after sparse_tensor"); err != nil {
			return nil, err
		}
		et, err := p.expectIdent("sparse tensor element type")
		if err != nil {
			return nil, err
		}
		dt := elemTypeByName(et.text)
		if dt == 0 {
			return nil, p.errorAt(et.pos, "expected a primitive type in sparse_tensor(...), found %s", et)
		}
		shape, err := p.optShape()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")", "to close sparse_tensor(...)"); err != nil {
			return nil, err
		}
		return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SparseTensorType{SparseTensorType: &onnxpb.TypeProto_SparseTensor{ElemType: proto.Int32(dt), Shape: shape}}}, nil
	}
	return nil, p.errorAt(t.pos, "expected a type (element type, seq, map, optional or sparse_tensor), found %s", t)
}

// optShape parses an optional [dims]: absent means rank 0, [] means unknown rank (nil).
func (p *parser) optShape() (*onnxpb.TensorShapeProto, error) {
	ok, err := p.accept("[")
	if err != nil {
		return nil, err
	}
	if !ok {
		return &onnxpb.TensorShapeProto{}, nil
	}
	if ok, err := p.accept("]"); err != nil || ok {
		return nil, err
	}
	shape := &onnxpb.TensorShapeProto{}
	for {
		t, err := p.advance()
		if err != nil {
			return nil, err
		}
		d := &onnxpb.TensorShapeProto_Dimension{}
		switch {
		case t.kind == tokPunct && t.text == "?":
		case t.kind == tokIdent || t.kind == tokString:
			d.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: t.text}
		case t.kind == tokNumber && !isFloatLiteral(t.text):
			v, perr := strconv.ParseInt(t.text, 10, 64)
			if perr != nil {
				return nil, p.errorAt(t.pos, "dimension %s out of int64 range", t.text)
			}
			d.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: v}
		default:
			return nil, p.errorAt(t.pos, "expected a dimension ('?', a name or an integer), found %s", t)
		}
		shape.Dim = append(shape.Dim, d)
		if done, err := p.listEnd("]", "tensor shape"); err != nil || done {
			return shape, err
		}
	}
}

// tensorData parses the data of a tensor constant of type tp:
// {values}, raw {values}, raw "hex" or [ "key": "value", ... ] (external).
func (p *parser) tensorData(tp *onnxpb.TypeProto, pos int) (*onnxpb.TensorProto, error) {
	tt := tp.GetTensorType()
	if tt == nil {
		return nil, p.errorAt(pos, "a tensor constant needs a tensor type")
	}
	if tt.Shape == nil {
		return nil, p.errorAt(pos, "a tensor constant needs a shape (write float for a scalar, float[2,3] for a matrix)")
	}
	dt := tt.GetElemType()
	tensor := &onnxpb.TensorProto{DataType: proto.Int32(dt)}
	for _, d := range tt.Shape.Dim {
		v, ok := d.Value.(*onnxpb.TensorShapeProto_Dimension_DimValue)
		if !ok {
			return nil, p.errorAt(pos, "a tensor constant needs numeric dimensions")
		}
		tensor.Dims = append(tensor.Dims, v.DimValue)
	}
	t, err := p.advance()
	if err != nil {
		return nil, err
	}
	switch {
	case t.kind == tokPunct && t.text == "{":
		return tensor, p.typedValues(tensor)
	case t.kind == tokIdent && t.text == "raw":
		return tensor, p.rawData(tensor)
	case t.kind == tokPunct && t.text == "[":
		p.unread(t)
		ext, err := p.stringPairs("external data")
		if err != nil {
			return nil, err
		}
		tensor.ExternalData = ext
		tensor.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
		return tensor, nil
	}
	return nil, p.errorAt(t.pos, "expected tensor data ('{', 'raw' or '[' for external data), found %s", t)
}

func (p *parser) typedValues(tensor *onnxpb.TensorProto) error {
	dt := tensor.GetDataType()
	field := typedField(dt)
	if ok, err := p.accept("}"); err != nil || ok {
		return err
	}
	if field == fieldNone {
		t, _ := p.peek()
		return p.errorAt(t.pos, "no value syntax for element type %s", elemTypeName(dt))
	}
	for {
		t, err := p.advance()
		if err != nil {
			return err
		}
		if field == fieldString {
			if t.kind != tokString {
				return p.errorAt(t.pos, "expected quoted string element, found %s", t)
			}
			tensor.StringData = append(tensor.StringData, []byte(t.text))
		} else {
			if t.kind != tokNumber && !(t.kind == tokIdent && isSpecialFloat(t.text)) {
				return p.errorAt(t.pos, "expected numeric element, found %s", t)
			}
			switch field {
			case fieldFloat, fieldDouble:
				bits := 32
				if field == fieldDouble {
					bits = 64
				}
				f, ok := parseFloatText(t.text, bits)
				if !ok {
					return p.errorAt(t.pos, "invalid or out-of-range float %s", t.text)
				}
				if bits == 32 {
					tensor.FloatData = append(tensor.FloatData, float32(f))
				} else {
					tensor.DoubleData = append(tensor.DoubleData, f)
				}
			case fieldInt32, fieldInt64:
				if isFloatLiteral(t.text) {
					return p.errorAt(t.pos, "expected integer element, found %s", t)
				}
				bits := 32
				if field == fieldInt64 {
					bits = 64
				}
				v, perr := strconv.ParseInt(t.text, 10, bits)
				if perr != nil {
					return p.errorAt(t.pos, "integer %s out of int%d range", t.text, bits)
				}
				if bits == 32 {
					tensor.Int32Data = append(tensor.Int32Data, int32(v))
				} else {
					tensor.Int64Data = append(tensor.Int64Data, v)
				}
			case fieldUint64:
				if isFloatLiteral(t.text) {
					return p.errorAt(t.pos, "expected integer element, found %s", t)
				}
				v, perr := strconv.ParseUint(t.text, 10, 64)
				if perr != nil {
					return p.errorAt(t.pos, "unsigned integer %s out of range", t.text)
				}
				tensor.Uint64Data = append(tensor.Uint64Data, v)
			}
		}
		if done, err := p.listEnd("}", "tensor values"); err != nil || done {
			return err
		}
	}
}

func (p *parser) rawData(tensor *onnxpb.TensorProto) error {
	t, err := p.advance()
	if err != nil {
		return err
	}
	if t.kind == tokString {
		b, herr := hex.DecodeString(t.text)
		if herr != nil {
			return p.errorAt(t.pos, "raw data string must be hexadecimal bytes: %v", herr)
		}
		tensor.RawData = b
		return nil
	}
	if t.kind != tokPunct || t.text != "{" {
		return p.errorAt(t.pos, "expected '{' or a hex string after raw, found %s", t)
	}
	raw := []byte{}
	if ok, err := p.accept("}"); err != nil || ok {
		tensor.RawData = raw
		return err
	}
	for {
		v, err := p.advance()
		if err != nil {
			return err
		}
		if v.kind != tokNumber && !(v.kind == tokIdent && isSpecialFloat(v.text)) {
			return p.errorAt(v.pos, "expected numeric element, found %s", v)
		}
		var msg string
		raw, msg = appendRawValue(raw, tensor.GetDataType(), v.text)
		if msg != "" {
			return p.errorAt(v.pos, "%s", msg)
		}
		done, err := p.listEnd("}", "raw tensor values")
		if err != nil {
			return err
		}
		if done {
			tensor.RawData = raw
			return nil
		}
	}
}

func (p *parser) nodeList() ([]*onnxpb.NodeProto, error) {
	if err := p.expect("{", "to open the node list"); err != nil {
		return nil, err
	}
	var nodes []*onnxpb.NodeProto
	for {
		if ok, err := p.accept("}"); err != nil || ok {
			return nodes, err
		}
		n, err := p.node()
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
}

// idList parses names separated by commas, where a name may be empty
// (written "" or left out before a comma), up to but not including the
// terminator.
func (p *parser) idList() ([]string, error) {
	var ids []string
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		var id string
		switch {
		case t.kind == tokIdent || t.kind == tokString:
			p.skip()
			id = t.text
		case t.kind == tokPunct && t.text == ",":
			// empty name
		default:
			return ids, nil
		}
		ids = append(ids, id)
		if ok, err := p.accept(","); err != nil || !ok {
			return ids, err
		}
	}
}

func (p *parser) node() (*onnxpb.NodeProto, error) {
	n := &onnxpb.NodeProto{}
	if ok, err := p.accept("["); err != nil {
		return nil, err
	} else if ok {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		name := ""
		if t.kind == tokIdent || t.kind == tokString {
			p.skip()
			name = t.text
		}
		n.Name = proto.String(name)
		if err := p.expect("]", "to close the node name"); err != nil {
			return nil, err
		}
	}
	outs, err := p.idList()
	if err != nil {
		return nil, err
	}
	n.Output = outs
	if err := p.expect("=", "after node outputs"); err != nil {
		return nil, err
	}
	// qualified op: .Op (empty domain), dom.sub.Op, Op
	var parts []string
	lead, err := p.accept(".")
	if err != nil {
		return nil, err
	}
	for {
		id, err := p.expectIdent("operator type")
		if err != nil {
			return nil, err
		}
		parts = append(parts, id.text)
		if ok, err := p.accept("."); err != nil {
			return nil, err
		} else if !ok {
			break
		}
	}
	n.OpType = proto.String(parts[len(parts)-1])
	if len(parts) > 1 || lead {
		n.Domain = proto.String(strings.Join(parts[:len(parts)-1], "."))
	}
	if ok, err := p.accept(":"); err != nil {
		return nil, err
	} else if ok {
		ov, err := p.expectIdent("operator overload")
		if err != nil {
			return nil, err
		}
		n.Overload = proto.String(ov.text)
	}
	hadAttrs := false
	if ok, err := p.accept("<"); err != nil {
		return nil, err
	} else if ok {
		hadAttrs = true
		if n.Attribute, err = p.attrList(); err != nil {
			return nil, err
		}
	}
	if err := p.expect("(", "to open the node inputs"); err != nil {
		return nil, err
	}
	if n.Input, err = p.idList(); err != nil {
		return nil, err
	}
	if err := p.expect(")", "to close the node inputs"); err != nil {
		return nil, err
	}
	if !hadAttrs {
		if ok, err := p.accept("<"); err != nil {
			return nil, err
		} else if ok {
			if n.Attribute, err = p.attrList(); err != nil {
				return nil, err
			}
		}
	}
	return n, nil
}

// attrList parses attributes after '<' up to and including '>'.
func (p *parser) attrList() ([]*onnxpb.AttributeProto, error) {
	var attrs []*onnxpb.AttributeProto
	for {
		name, err := p.expectIdent("attribute name")
		if err != nil {
			return nil, err
		}
		a, err := p.attribute(name)
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, a)
		if done, err := p.listEnd(">", "attribute list"); err != nil || done {
			return attrs, err
		}
	}
}

// attribute parses `(: type)? = value` after the attribute name.
func (p *parser) attribute(name token) (*onnxpb.AttributeProto, error) {
	a := &onnxpb.AttributeProto{Name: proto.String(name.text)}
	expected := onnxpb.AttributeProto_UNDEFINED
	if ok, err := p.accept(":"); err != nil {
		return nil, err
	} else if ok {
		tt, err := p.expectIdent("attribute type")
		if err != nil {
			return nil, err
		}
		at, ok := attrTypeByName(tt.text)
		if !ok {
			return nil, p.errorAt(tt.pos, "unknown attribute type %q (expected int, float, string, tensor, graph, type_proto or a list form such as ints)", tt.text)
		}
		if at == onnxpb.AttributeProto_SPARSE_TENSOR || at == onnxpb.AttributeProto_SPARSE_TENSORS {
			return nil, p.errorAt(tt.pos, "sparse tensor attribute values have no text syntax")
		}
		expected = at
		a.Type = at.Enum()
	}
	if err := p.expect("=", "after attribute "+name.text); err != nil {
		return nil, err
	}
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	if t.kind == tokPunct && t.text == "@" {
		p.skip()
		ref, err := p.expectIdent("referenced attribute name after '@'")
		if err != nil {
			return nil, err
		}
		a.RefAttrName = proto.String(ref.text)
		return a, nil
	}
	if t.kind == tokPunct && t.text == "[" {
		p.skip()
		elem := onnxpb.AttributeProto_UNDEFINED
		if expected != onnxpb.AttributeProto_UNDEFINED {
			s, isList := singletonOf(expected)
			if !isList {
				return nil, p.errorAt(t.pos, "attribute %s of type %s cannot be a list", name.text, attrTypeName(expected))
			}
			elem = s
		}
		if ok, err := p.accept("]"); err != nil {
			return nil, err
		} else if ok {
			if expected == onnxpb.AttributeProto_UNDEFINED {
				return nil, p.errorAt(t.pos, "empty list attribute %s needs a type annotation such as ': ints'", name.text)
			}
			return a, nil
		}
		for {
			vt, err := p.peek()
			if err != nil {
				return nil, err
			}
			v, err := p.singleAttrValue(elem)
			if err != nil {
				return nil, err
			}
			if elem == onnxpb.AttributeProto_UNDEFINED {
				elem = v.GetType()
				a.Type = listOf(elem).Enum()
			} else if v.GetType() != elem {
				return nil, p.errorAt(vt.pos, "list element of type %s in a list of %s", attrTypeName(v.GetType()), attrTypeName(elem))
			}
			switch elem {
			case onnxpb.AttributeProto_INT:
				a.Ints = append(a.Ints, v.GetI())
			case onnxpb.AttributeProto_FLOAT:
				a.Floats = append(a.Floats, v.GetF())
			case onnxpb.AttributeProto_STRING:
				a.Strings = append(a.Strings, v.S)
			case onnxpb.AttributeProto_TENSOR:
				a.Tensors = append(a.Tensors, v.T)
			case onnxpb.AttributeProto_GRAPH:
				a.Graphs = append(a.Graphs, v.G)
			case onnxpb.AttributeProto_TYPE_PROTO:
				a.TypeProtos = append(a.TypeProtos, v.Tp)
			}
			if done, err := p.listEnd("]", "attribute list value"); err != nil || done {
				return a, err
			}
		}
	}
	if _, isList := singletonOf(expected); isList {
		return nil, p.errorAt(t.pos, "attribute %s of type %s needs a list value in [...]", name.text, attrTypeName(expected))
	}
	v, err := p.singleAttrValue(expected)
	if err != nil {
		return nil, err
	}
	v.Name = a.Name
	return v, nil
}

// singleAttrValue parses one attribute value; expected (if not UNDEFINED)
// is the type annotation.
func (p *parser) singleAttrValue(expected onnxpb.AttributeProto_AttributeType) (*onnxpb.AttributeProto, error) {
	a := &onnxpb.AttributeProto{}
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case t.kind == tokIdent && isTypeKeyword(t.text):
		tp, err := p.typeProto()
		if err != nil {
			return nil, err
		}
		nt, err := p.peek()
		if err != nil {
			return nil, err
		}
		isTensor := (nt.kind == tokPunct && (nt.text == "{" || nt.text == "=")) || nt.kind == tokIdent || nt.kind == tokString
		if !isTensor && expected == onnxpb.AttributeProto_TENSOR {
			return nil, p.errorAt(nt.pos, "expected tensor data after the tensor type, found %s", nt)
		}
		if !isTensor {
			a.Type = onnxpb.AttributeProto_TYPE_PROTO.Enum()
			a.Tp = tp
			break
		}
		var name *string
		if (nt.kind == tokIdent && nt.text != "raw") || nt.kind == tokString {
			p.skip()
			name = proto.String(nt.text)
		}
		if _, err := p.accept("="); err != nil {
			return nil, err
		}
		tensor, err := p.tensorData(tp, nt.pos)
		if err != nil {
			return nil, err
		}
		tensor.Name = name
		a.Type = onnxpb.AttributeProto_TENSOR.Enum()
		a.T = tensor
	case t.kind == tokIdent && isSpecialFloat(t.text), t.kind == tokNumber:
		p.skip()
		if expected == onnxpb.AttributeProto_INT || (expected == onnxpb.AttributeProto_UNDEFINED && !isFloatLiteral(t.text)) {
			if isFloatLiteral(t.text) {
				return nil, p.errorAt(t.pos, "expected integer value, found %s", t)
			}
			v, perr := strconv.ParseInt(t.text, 10, 64)
			if perr != nil {
				return nil, p.errorAt(t.pos, "integer %s out of int64 range", t.text)
			}
			a.Type = onnxpb.AttributeProto_INT.Enum()
			a.I = proto.Int64(v)
			break
		}
		f, ok := parseFloatText(t.text, 32)
		if !ok {
			return nil, p.errorAt(t.pos, "invalid or out-of-range float %s", t.text)
		}
		a.Type = onnxpb.AttributeProto_FLOAT.Enum()
		a.F = proto.Float32(float32(f))
	case t.kind == tokIdent:
		g, err := p.graph()
		if err != nil {
			return nil, err
		}
		a.Type = onnxpb.AttributeProto_GRAPH.Enum()
		a.G = g
	case t.kind == tokString:
		nt, err := p.peekN(1)
		if err != nil {
			return nil, err
		}
		if nt.kind == tokPunct && nt.text == "(" {
			g, err := p.graph()
			if err != nil {
				return nil, err
			}
			a.Type = onnxpb.AttributeProto_GRAPH.Enum()
			a.G = g
			break
		}
		p.skip()
		a.Type = onnxpb.AttributeProto_STRING.Enum()
		a.S = []byte(t.text)
	default:
		return nil, p.errorAt(t.pos, "expected an attribute value (number, string, tensor, type, graph or @reference), found %s", t)
	}
	if expected != onnxpb.AttributeProto_UNDEFINED && a.GetType() != expected {
		return nil, p.errorAt(t.pos, "attribute value of type %s does not match the annotation %s", attrTypeName(a.GetType()), attrTypeName(expected))
	}
	return a, nil
}

func (p *parser) function() (*onnxpb.FunctionProto, error) {
	f := &onnxpb.FunctionProto{}
	if ok, err := p.accept("<"); err != nil {
		return nil, err
	} else if ok {
		err := p.keyValues("function header", func(key token) error {
			var err error
			var s string
			switch key.text {
			case "domain":
				s, err = p.expectString(key.text)
				f.Domain = proto.String(s)
			case "overload":
				s, err = p.expectString(key.text)
				f.Overload = proto.String(s)
			case "doc_string":
				s, err = p.expectString(key.text)
				f.DocString = proto.String(s)
			case "opset_import":
				var ops []*onnxpb.OperatorSetIdProto
				ops, err = p.opsetList()
				f.OpsetImport = append(f.OpsetImport, ops...)
			default:
				return p.errorAt(key.pos, "unknown function header key %q (expected domain, overload, opset_import or doc_string)", key.text)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	name, err := p.quotableID("function name")
	if err != nil {
		return nil, err
	}
	f.Name = proto.String(name)
	if ok, err := p.accept("<"); err != nil {
		return nil, err
	} else if ok {
		for {
			t, err := p.advance()
			if err != nil {
				return nil, err
			}
			if t.kind != tokIdent && t.kind != tokString {
				return nil, p.errorAt(t.pos, "expected function attribute name, found %s", t)
			}
			nt, err := p.peek()
			if err != nil {
				return nil, err
			}
			if t.kind == tokIdent && nt.kind == tokPunct && (nt.text == ":" || nt.text == "=") {
				a, err := p.attribute(t)
				if err != nil {
					return nil, err
				}
				f.AttributeProto = append(f.AttributeProto, a)
			} else {
				f.Attribute = append(f.Attribute, t.text)
			}
			if done, err := p.listEnd(">", "function attributes"); err != nil || done {
				if err != nil {
					return nil, err
				}
				break
			}
		}
	}
	for i, list := range []*[]string{&f.Input, &f.Output} {
		if i == 1 {
			if err := p.expect("=>", "between function inputs and outputs"); err != nil {
				return nil, err
			}
		}
		if err := p.expect("(", "to open the function inputs or outputs"); err != nil {
			return nil, err
		}
		if err := p.valueInfos(")", "function inputs or outputs", false, func(vi *onnxpb.ValueInfoProto, _ *onnxpb.TensorProto) {
			*list = append(*list, vi.GetName())
			if vi.Type != nil {
				f.ValueInfo = append(f.ValueInfo, vi)
			}
		}); err != nil {
			return nil, err
		}
	}
	if ok, err := p.accept("<"); err != nil {
		return nil, err
	} else if ok {
		if err := p.valueInfos(">", "function value infos", false, func(vi *onnxpb.ValueInfoProto, _ *onnxpb.TensorProto) {
			f.ValueInfo = append(f.ValueInfo, vi)
		}); err != nil {
			return nil, err
		}
	}
	if f.Node, err = p.nodeList(); err != nil {
		return nil, err
	}
	return f, nil
}
