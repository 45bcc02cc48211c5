package canonical

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// MaxDepth bounds the nesting of subgraphs (graph attributes inside graph
// attributes) and of types (sequence of map of optional of …) that a model
// may have. Deeper input is rejected, so that hostile files cannot exhaust
// the stack.
const MaxDepth = 64

// MaxNameLen bounds the length in bytes of names (values, nodes, ops,
// domains, attributes, graphs, functions).
const MaxNameLen = 64 << 10

// FromProto converts mp into a canonical Model. dir is the folder that
// external data locations are relative to ("" when there is none: external
// tensors then cannot be read).
//
// The model takes ownership of mp: it keeps references to mp's sub-messages
// (types, sparse tensors, training info) and byte slices (raw_data) instead
// of copying them, so mp must not be modified afterwards.
//
// Structurally invalid models (names defined twice, undefined inputs,
// cycles) still convert: the checker (Validate) reports them. Malformed
// data is an error: subgraphs or types nested deeper than MaxDepth, names
// that are not valid UTF-8, negative dims, element counts that overflow,
// data sizes that disagree with the dims, unsafe external data locations.
func FromProto(mp *onnxpb.ModelProto, dir string) (*Model, error) {
	return fromProto(mp, dir, true)
}

func fromProto(mp *onnxpb.ModelProto, dir string, checkData bool) (*Model, error) {
	if mp == nil {
		return nil, fmt.Errorf("nil ModelProto")
	}
	m := &Model{
		IRVersion:       mp.GetIrVersion(),
		ProducerName:    mp.GetProducerName(),
		ProducerVersion: mp.GetProducerVersion(),
		Domain:          mp.GetDomain(),
		ModelVersion:    mp.GetModelVersion(),
		DocString:       mp.GetDocString(),
		TrainingInfo:    mp.TrainingInfo,
		Configuration:   mp.Configuration,
		Dir:             dir,
	}
	if dir != "" {
		m.ext = newExtFiles(dir)
		m.own = &owner{refs: 1, ext: m.ext}
	}
	sh := &onnxpb.ModelProto{
		IrVersion: mp.IrVersion, ProducerName: mp.ProducerName, ProducerVersion: mp.ProducerVersion,
		Domain: mp.Domain, ModelVersion: mp.ModelVersion, DocString: mp.DocString,
	}
	keepUnknown(sh, mp)
	m.shell = sh
	c := &converter{m: m, checkData: checkData}
	var err error
	if m.OpsetImports, err = c.opsets(mp.OpsetImport, "opset_import"); err != nil {
		return nil, err
	}
	m.MetadataProps = pairs(mp.MetadataProps)
	if mp.Graph != nil {
		if m.Graph, err = c.graph(mp.Graph, nil, nil, 0, "graph"); err != nil {
			return nil, err
		}
	}
	for i, fp := range mp.Functions {
		f, err := c.function(fp, fmt.Sprintf("functions[%d] %q", i, fp.GetDomain()+"."+fp.GetName()))
		if err != nil {
			return nil, err
		}
		m.Functions = append(m.Functions, f)
	}
	for i, ti := range mp.TrainingInfo {
		for _, g := range []*onnxpb.GraphProto{ti.Initialization, ti.Algorithm} {
			if g != nil {
				if err := c.checkRawGraph(g, 0, fmt.Sprintf("training_info[%d]", i)); err != nil {
					return nil, err
				}
			}
		}
	}
	return m, nil
}

// keepUnknown copies the unknown fields of src into dst.
func keepUnknown(dst, src proto.Message) {
	if u := src.ProtoReflect().GetUnknown(); len(u) > 0 {
		dst.ProtoReflect().SetUnknown(u)
	}
}

type converter struct {
	m         *Model
	checkData bool
}

func (c *converter) opsets(ops []*onnxpb.OperatorSetIdProto, path string) ([]OpsetID, error) {
	var out []OpsetID
	for i, o := range ops {
		if err := checkName(o.GetDomain(), fmt.Sprintf("%s[%d].domain", path, i)); err != nil {
			return nil, err
		}
		sh := &onnxpb.OperatorSetIdProto{Domain: o.Domain, Version: o.Version}
		keepUnknown(sh, o)
		out = append(out, OpsetID{Domain: o.GetDomain(), Version: o.GetVersion(), shell: sh})
	}
	return out, nil
}

func pairs(ps []*onnxpb.StringStringEntryProto) []StringPair {
	if ps == nil {
		return nil
	}
	out := make([]StringPair, len(ps))
	for i, p := range ps {
		sh := &onnxpb.StringStringEntryProto{Key: p.Key, Value: p.Value}
		keepUnknown(sh, p)
		out[i] = StringPair{Key: p.GetKey(), Value: p.GetValue(), shell: sh}
	}
	return out
}

func checkName(s, path string) error {
	if len(s) > MaxNameLen {
		return fmt.Errorf("%s: name is %d bytes long, more than the %d allowed", path, len(s), MaxNameLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: name %q is not valid UTF-8", path, s)
	}
	return nil
}

func nodePath(gpath string, i int, np *onnxpb.NodeProto) string {
	return fmt.Sprintf("%s.node[%d](%s %q)", gpath, i, np.GetOpType(), np.GetName())
}

// define creates a value named name in g. A name already defined in g gets a
// separate Value that is not registered (the checker reports the duplicate).
func (g *Graph) define(name string) *Value {
	v := &Value{Name: name, graph: g, outIndex: -1}
	if name != "" {
		if _, dup := g.values[name]; !dup {
			g.values[name] = v
		}
	}
	return v
}

// resolve finds name in scope or returns (creating it once) a placeholder
// marked undefined.
func (g *Graph) resolve(name string) *Value {
	if v := g.Lookup(name); v != nil {
		return v
	}
	if v := g.undef[name]; v != nil {
		return v
	}
	if g.undef == nil {
		g.undef = map[string]*Value{}
	}
	v := &Value{Name: name, graph: g, outIndex: -1, undefined: true}
	g.undef[name] = v
	return v
}

// declare records a ValueInfoProto declaration of v found at (list, index)
// of g. The first declaration sets v's type and doc; a later one that says
// something else is kept verbatim in g.decls.
func (c *converter) declare(g *Graph, v *Value, list, index int, vi *onnxpb.ValueInfoProto, path string) error {
	if err := checkType(vi.Type, 0, path+".type"); err != nil {
		return err
	}
	if v.shell == nil {
		v.Type = vi.Type
		v.DocString = vi.GetDocString()
		v.MetadataProps = pairs(vi.MetadataProps)
		sh := &onnxpb.ValueInfoProto{Name: vi.Name, DocString: vi.DocString}
		keepUnknown(sh, vi)
		v.shell = sh
		return nil
	}
	if !proto.Equal(valueInfoOf(v), vi) {
		if g.decls == nil {
			g.decls = map[declKey]*onnxpb.ValueInfoProto{}
		}
		g.decls[declKey{list, index}] = vi
	}
	return nil
}

func checkType(t *onnxpb.TypeProto, depth int, path string) error {
	for t != nil {
		if depth > MaxDepth {
			return fmt.Errorf("%s: type nesting is deeper than %d levels", path, MaxDepth)
		}
		switch x := t.Value.(type) {
		case *onnxpb.TypeProto_SequenceType:
			t = x.SequenceType.GetElemType()
		case *onnxpb.TypeProto_OptionalType:
			t = x.OptionalType.GetElemType()
		case *onnxpb.TypeProto_MapType:
			t = x.MapType.GetValueType()
		case *onnxpb.TypeProto_TensorType:
			for i, d := range x.TensorType.GetShape().GetDim() {
				if err := checkName(d.GetDimParam(), fmt.Sprintf("%s.shape.dim[%d].dim_param", path, i)); err != nil {
					return err
				}
			}
			return nil
		default:
			return nil
		}
		depth++
	}
	return nil
}

func (c *converter) graph(gp *onnxpb.GraphProto, parent *Graph, owner *Node, depth int, path string) (*Graph, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%s: subgraphs are nested deeper than %d levels", path, MaxDepth)
	}
	if err := checkName(gp.GetName(), path+".name"); err != nil {
		return nil, err
	}
	g := &Graph{
		Name:                   gp.GetName(),
		DocString:              gp.GetDocString(),
		SparseInitializers:     gp.SparseInitializer,
		QuantizationAnnotation: gp.QuantizationAnnotation,
		MetadataProps:          pairs(gp.MetadataProps),
		Parent:                 parent,
		Owner:                  owner,
		values:                 map[string]*Value{},
	}
	sh := &onnxpb.GraphProto{Name: gp.Name, DocString: gp.DocString}
	keepUnknown(sh, gp)
	g.shell = sh

	isInput := make(map[*Value]bool, len(gp.Input))
	for i, vi := range gp.Input {
		p := fmt.Sprintf("%s.input[%d]", path, i)
		if err := checkName(vi.GetName(), p); err != nil {
			return nil, err
		}
		v := g.define(vi.GetName())
		isInput[v] = true
		g.Inputs = append(g.Inputs, v)
		if err := c.declare(g, v, 0, i, vi, p); err != nil {
			return nil, err
		}
	}
	for i, tp := range gp.Initializer {
		p := fmt.Sprintf("%s.initializer[%d] %q", path, i, tp.GetName())
		t, err := c.tensor(tp, p)
		if err != nil {
			return nil, err
		}
		v := g.values[t.Name]
		if v == nil || !isInput[v] || v.Const != nil {
			v = g.define(t.Name)
		}
		v.Const = t
		if v.shell == nil {
			v.Type = TensorType(t.DataType, t.Dims)
		}
		g.Initializers = append(g.Initializers, v)
	}
	for i, sp := range gp.SparseInitializer {
		name := sp.GetValues().GetName()
		if err := checkName(name, fmt.Sprintf("%s.sparse_initializer[%d].values.name", path, i)); err != nil {
			return nil, err
		}
		if name != "" {
			if _, dup := g.values[name]; !dup {
				g.values[name] = &Value{Name: name, graph: g, outIndex: -1}
			}
		}
	}
	// Nodes and their outputs first, so that every name of g is defined
	// before inputs (and subgraphs) are resolved.
	g.Nodes = make([]*Node, len(gp.Node))
	for i, np := range gp.Node {
		n, err := c.node(g, np, nodePath(path, i, np))
		if err != nil {
			return nil, err
		}
		g.Nodes[i] = n
	}
	for i, np := range gp.Node {
		if err := c.nodeBody(g, g.Nodes[i], np, depth, nodePath(path, i, np)); err != nil {
			return nil, err
		}
	}
	for i, vi := range gp.Output {
		p := fmt.Sprintf("%s.output[%d]", path, i)
		if err := checkName(vi.GetName(), p); err != nil {
			return nil, err
		}
		v := g.resolve(vi.GetName())
		g.Outputs = append(g.Outputs, v)
		if err := c.declare(g, v, 1, i, vi, p); err != nil {
			return nil, err
		}
	}
	for i, vi := range gp.ValueInfo {
		p := fmt.Sprintf("%s.value_info[%d]", path, i)
		if err := checkName(vi.GetName(), p); err != nil {
			return nil, err
		}
		v := g.resolve(vi.GetName())
		g.ValueInfo = append(g.ValueInfo, v)
		if err := c.declare(g, v, 2, i, vi, p); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// node creates n with its outputs defined in g.
func (c *converter) node(g *Graph, np *onnxpb.NodeProto, path string) (*Node, error) {
	for _, s := range []struct{ v, f string }{{np.GetName(), "name"}, {np.GetOpType(), "op_type"}, {np.GetDomain(), "domain"}, {np.GetOverload(), "overload"}} {
		if err := checkName(s.v, path+"."+s.f); err != nil {
			return nil, err
		}
	}
	n := &Node{
		Name:                 np.GetName(),
		OpType:               np.GetOpType(),
		Domain:               np.GetDomain(),
		Overload:             np.GetOverload(),
		DocString:            np.GetDocString(),
		MetadataProps:        pairs(np.MetadataProps),
		DeviceConfigurations: np.DeviceConfigurations,
		Graph:                g,
	}
	sh := &onnxpb.NodeProto{Name: np.Name, OpType: np.OpType, Domain: np.Domain, Overload: np.Overload, DocString: np.DocString}
	keepUnknown(sh, np)
	n.shell = sh
	n.Outputs = make([]*Value, len(np.Output))
	for j, o := range np.Output {
		if err := checkName(o, fmt.Sprintf("%s.output[%d]", path, j)); err != nil {
			return nil, err
		}
		if o == "" {
			continue
		}
		v := g.define(o)
		v.producer, v.outIndex = n, j
		n.Outputs[j] = v
	}
	return n, nil
}

// nodeBody converts n's attributes (subgraphs) and links its inputs.
func (c *converter) nodeBody(g *Graph, n *Node, np *onnxpb.NodeProto, depth int, path string) error {
	n.Attributes = make([]*Attribute, 0, len(np.Attribute))
	for _, ap := range np.Attribute {
		a, err := c.attribute(ap, g, n, depth, fmt.Sprintf("%s.attribute %q", path, ap.GetName()))
		if err != nil {
			return err
		}
		n.Attributes = append(n.Attributes, a)
	}
	if len(np.Attribute) == 0 {
		n.Attributes = nil
	}
	n.Inputs = make([]*Value, len(np.Input))
	for j, in := range np.Input {
		if err := checkName(in, fmt.Sprintf("%s.input[%d]", path, j)); err != nil {
			return err
		}
		if in == "" {
			continue
		}
		v := g.resolve(in)
		n.Inputs[j] = v
		v.uses = append(v.uses, Use{Node: n, Index: j})
	}
	return nil
}

func (c *converter) attribute(ap *onnxpb.AttributeProto, g *Graph, n *Node, depth int, path string) (*Attribute, error) {
	if err := checkName(ap.GetName(), path+".name"); err != nil {
		return nil, err
	}
	if err := checkName(ap.GetRefAttrName(), path+".ref_attr_name"); err != nil {
		return nil, err
	}
	a := &Attribute{
		Name:          ap.GetName(),
		Type:          ap.GetType(),
		RefAttrName:   ap.GetRefAttrName(),
		DocString:     ap.GetDocString(),
		F:             ap.GetF(),
		I:             ap.GetI(),
		S:             ap.S,
		SparseTensor:  ap.SparseTensor,
		TP:            ap.Tp,
		Floats:        ap.Floats,
		Ints:          ap.Ints,
		Strings:       ap.Strings,
		SparseTensors: ap.SparseTensors,
		TypeProtos:    ap.TypeProtos,
	}
	sh := &onnxpb.AttributeProto{Name: ap.Name, RefAttrName: ap.RefAttrName, DocString: ap.DocString, Type: ap.Type, F: ap.F, I: ap.I}
	keepUnknown(sh, ap)
	a.shell = sh
	if err := checkType(ap.Tp, 0, path+".tp"); err != nil {
		return nil, err
	}
	for i, t := range ap.TypeProtos {
		if err := checkType(t, 0, fmt.Sprintf("%s.type_protos[%d]", path, i)); err != nil {
			return nil, err
		}
	}
	var err error
	if ap.T != nil {
		if a.T, err = c.tensor(ap.T, path+".t"); err != nil {
			return nil, err
		}
	}
	for i, tp := range ap.Tensors {
		t, err := c.tensor(tp, fmt.Sprintf("%s.tensors[%d]", path, i))
		if err != nil {
			return nil, err
		}
		a.Tensors = append(a.Tensors, t)
	}
	if ap.G != nil {
		if a.G, err = c.graph(ap.G, g, n, depth+1, path+".g"); err != nil {
			return nil, err
		}
	}
	for i, gp := range ap.Graphs {
		sg, err := c.graph(gp, g, n, depth+1, fmt.Sprintf("%s.graphs[%d]", path, i))
		if err != nil {
			return nil, err
		}
		a.Graphs = append(a.Graphs, sg)
	}
	return a, nil
}

// checkRawGraph bounds the nesting depth of a graph kept as a protobuf
// message (training info) and checks its names.
func (c *converter) checkRawGraph(gp *onnxpb.GraphProto, depth int, path string) error {
	if depth > MaxDepth {
		return fmt.Errorf("%s: subgraphs are nested deeper than %d levels", path, MaxDepth)
	}
	for i, np := range gp.Node {
		for _, ap := range np.Attribute {
			p := fmt.Sprintf("%s.attribute %q", nodePath(path, i, np), ap.GetName())
			if ap.G != nil {
				if err := c.checkRawGraph(ap.G, depth+1, p+".g"); err != nil {
					return err
				}
			}
			for j, sg := range ap.Graphs {
				if err := c.checkRawGraph(sg, depth+1, fmt.Sprintf("%s.graphs[%d]", p, j)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (c *converter) function(fp *onnxpb.FunctionProto, path string) (*Function, error) {
	for _, s := range []struct{ v, f string }{{fp.GetName(), "name"}, {fp.GetDomain(), "domain"}, {fp.GetOverload(), "overload"}} {
		if err := checkName(s.v, path+"."+s.f); err != nil {
			return nil, err
		}
	}
	f := &Function{
		Domain:        fp.GetDomain(),
		Name:          fp.GetName(),
		Overload:      fp.GetOverload(),
		Attributes:    fp.Attribute,
		DocString:     fp.GetDocString(),
		MetadataProps: pairs(fp.MetadataProps),
	}
	sh := &onnxpb.FunctionProto{Name: fp.Name, Domain: fp.Domain, Overload: fp.Overload, DocString: fp.DocString}
	keepUnknown(sh, fp)
	f.shell = sh
	var err error
	if f.OpsetImports, err = c.opsets(fp.OpsetImport, path+".opset_import"); err != nil {
		return nil, err
	}
	for i, ap := range fp.AttributeProto {
		a, err := c.attribute(ap, nil, nil, 0, fmt.Sprintf("%s.attribute_proto[%d]", path, i))
		if err != nil {
			return nil, err
		}
		f.AttributeDefaults = append(f.AttributeDefaults, a)
	}
	g := &Graph{values: map[string]*Value{}}
	f.Body = g
	for i, name := range fp.Input {
		if err := checkName(name, fmt.Sprintf("%s.input[%d]", path, i)); err != nil {
			return nil, err
		}
		g.Inputs = append(g.Inputs, g.define(name))
	}
	g.Nodes = make([]*Node, len(fp.Node))
	for i, np := range fp.Node {
		if g.Nodes[i], err = c.node(g, np, nodePath(path, i, np)); err != nil {
			return nil, err
		}
	}
	for i, np := range fp.Node {
		if err := c.nodeBody(g, g.Nodes[i], np, 0, nodePath(path, i, np)); err != nil {
			return nil, err
		}
	}
	for i, name := range fp.Output {
		if err := checkName(name, fmt.Sprintf("%s.output[%d]", path, i)); err != nil {
			return nil, err
		}
		g.Outputs = append(g.Outputs, g.resolve(name))
	}
	for i, vi := range fp.ValueInfo {
		p := fmt.Sprintf("%s.value_info[%d]", path, i)
		if err := checkName(vi.GetName(), p); err != nil {
			return nil, err
		}
		v := g.resolve(vi.GetName())
		g.ValueInfo = append(g.ValueInfo, v)
		if err := c.declare(g, v, 2, i, vi, p); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (c *converter) tensor(tp *onnxpb.TensorProto, path string) (*Tensor, error) {
	if err := checkName(tp.GetName(), path+".name"); err != nil {
		return nil, err
	}
	t := &Tensor{
		Name:      tp.GetName(),
		DataType:  DataType(tp.GetDataType()),
		Dims:      tp.Dims,
		DocString: tp.GetDocString(),
		raw:       tp.RawData,
		hasRaw:    tp.RawData != nil,
		strs:      tp.StringData,
	}
	sh := &onnxpb.TensorProto{
		Name: tp.Name, DataType: tp.DataType, DocString: tp.DocString,
		Segment: tp.Segment, FloatData: tp.FloatData, Int32Data: tp.Int32Data, Int64Data: tp.Int64Data,
		DoubleData: tp.DoubleData, Uint64Data: tp.Uint64Data, ExternalData: tp.ExternalData,
		DataLocation: tp.DataLocation, MetadataProps: tp.MetadataProps,
	}
	keepUnknown(sh, tp)
	t.shell = sh
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		t.ext = parseExternal(tp.ExternalData)
		if t.ext.err != nil {
			t.ext.err = fmt.Errorf("%s.external_data: %w", path, t.ext.err)
			return nil, t.ext.err
		}
		if c.m.ext != nil {
			e := t.ext
			files := c.m.ext
			e.load = func() ([]byte, error) { return files.slice(e.location, e.offset, e.length, e.checksum) }
			if c.checkData {
				n, err := files.check(e.location, e.offset, e.length)
				if err != nil {
					return nil, fmt.Errorf("%s.external_data: %w", path, err)
				}
				if want, err := t.ByteSize(); err == nil && ElemBits(t.DataType) != 0 && n != want && tp.Segment == nil {
					return nil, fmt.Errorf("%s.external_data: %q holds %d bytes from offset %d but dims %v of %v need %d", path, e.location, n, e.offset, t.Dims, t.DataType, want)
				}
			}
		}
	}
	if c.checkData {
		if err := checkTensorData(t, path); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func parseExternal(kv []*onnxpb.StringStringEntryProto) *externalData {
	e := &externalData{length: -1}
	seenLoc := false
	for _, p := range kv {
		switch p.GetKey() {
		case "location":
			e.location, seenLoc = p.GetValue(), true
		case "offset":
			n, err := strconv.ParseInt(p.GetValue(), 10, 64)
			if err != nil || n < 0 {
				e.err = fmt.Errorf("offset %q is not a non-negative integer", p.GetValue())
				return e
			}
			e.offset = n
		case "length":
			n, err := strconv.ParseInt(p.GetValue(), 10, 64)
			if err != nil || n < 0 {
				e.err = fmt.Errorf("length %q is not a non-negative integer", p.GetValue())
				return e
			}
			e.length = n
		case "checksum":
			e.checksum = p.GetValue()
		}
	}
	if !seenLoc || e.location == "" {
		e.err = fmt.Errorf("data_location is EXTERNAL but there is no \"location\" entry")
		return e
	}
	if err := checkLocation(e.location); err != nil {
		e.err = err
	}
	return e
}

// checkTensorData checks dims and that the data present matches them.
func checkTensorData(t *Tensor, path string) error {
	n, err := t.NumElements()
	if err != nil {
		return fmt.Errorf("%s.dims: %w", path, err)
	}
	if t.shell.Segment != nil {
		return nil // a segment of a bigger tensor: sizes are not comparable
	}
	if t.ext != nil {
		if t.DataType == String {
			return fmt.Errorf("%s: STRING tensors cannot use external data", path)
		}
		want, err := t.ByteSize()
		if err != nil {
			return fmt.Errorf("%s.dims: %w", path, err)
		}
		if t.ext.length >= 0 && t.ext.length != want && ElemBits(t.DataType) != 0 {
			return fmt.Errorf("%s.external_data: length is %d bytes but dims %v of %v need %d", path, t.ext.length, t.Dims, t.DataType, want)
		}
		return nil
	}
	if t.hasRaw {
		if ElemBits(t.DataType) == 0 {
			return fmt.Errorf("%s.raw_data: data_type %v cannot hold raw_data", path, t.DataType)
		}
		want, err := t.ByteSize()
		if err != nil {
			return fmt.Errorf("%s.dims: %w", path, err)
		}
		if int64(len(t.raw)) != want {
			return fmt.Errorf("%s.raw_data: holds %d bytes but dims %v of %v need %d", path, len(t.raw), t.Dims, t.DataType, want)
		}
		return nil
	}
	if t.DataType == String {
		if int64(len(t.strs)) != n && len(t.strs) != 0 {
			return fmt.Errorf("%s.string_data: holds %d strings but dims %v need %d", path, len(t.strs), t.Dims, n)
		}
		return nil
	}
	field, got := typedCount(t.DataType, t.shell)
	if got == 0 {
		return nil // no data at all: the tensor describes a shape only
	}
	var want int64
	switch t.DataType {
	case Complex64, Complex128:
		want = n * 2
	case Int4, Uint4, Float4E2M1:
		want = (n + 1) / 2
	case Int2, Uint2:
		want = (n + 3) / 4
	default:
		want = n
	}
	if field == "" {
		return fmt.Errorf("%s: data_type %v cannot hold typed data", path, t.DataType)
	}
	if int64(got) != want {
		return fmt.Errorf("%s.%s: holds %d values but dims %v of %v need %d", path, field, got, t.Dims, t.DataType, want)
	}
	return nil
}

// typedCount returns the typed data field that dt uses and its length.
func typedCount(dt DataType, s *onnxpb.TensorProto) (string, int) {
	switch dt {
	case Float, Complex64:
		return "float_data", len(s.FloatData)
	case Double, Complex128:
		return "double_data", len(s.DoubleData)
	case Int64:
		return "int64_data", len(s.Int64Data)
	case Uint64, Uint32:
		return "uint64_data", len(s.Uint64Data)
	case Undefined:
		return "", len(s.FloatData) + len(s.DoubleData) + len(s.Int64Data) + len(s.Uint64Data) + len(s.Int32Data)
	}
	if ElemBits(dt) != 0 {
		return "int32_data", len(s.Int32Data)
	}
	return "", len(s.FloatData) + len(s.DoubleData) + len(s.Int64Data) + len(s.Uint64Data) + len(s.Int32Data)
}

// ToProto converts m back to a ModelProto. The result shares sub-messages
// and byte slices (raw_data) with m: clone it before modifying it.
func (m *Model) ToProto() (*onnxpb.ModelProto, error) {
	return m.toProto(nil)
}

// tensorHook lets Save rewrite each TensorProto as it is produced (to move
// data to an external file or inline external data).
type tensorHook func(t *Tensor, tp *onnxpb.TensorProto) error

type emitter struct {
	hook tensorHook
}

func (m *Model) toProto(hook tensorHook) (*onnxpb.ModelProto, error) {
	e := &emitter{hook: hook}
	sh := m.shell
	if sh == nil {
		sh = &onnxpb.ModelProto{}
	}
	out := &onnxpb.ModelProto{
		IrVersion:       optInt(m.IRVersion, sh.IrVersion),
		ProducerName:    optStr(m.ProducerName, sh.ProducerName),
		ProducerVersion: optStr(m.ProducerVersion, sh.ProducerVersion),
		Domain:          optStr(m.Domain, sh.Domain),
		ModelVersion:    optInt(m.ModelVersion, sh.ModelVersion),
		DocString:       optStr(m.DocString, sh.DocString),
		OpsetImport:     opsetsOut(m.OpsetImports),
		MetadataProps:   pairsOut(m.MetadataProps),
		TrainingInfo:    m.TrainingInfo,
		Configuration:   m.Configuration,
	}
	keepUnknown(out, sh)
	if m.Graph != nil {
		g, err := e.graph(m.Graph)
		if err != nil {
			return nil, err
		}
		out.Graph = g
	}
	for _, f := range m.Functions {
		fp, err := e.function(f)
		if err != nil {
			return nil, err
		}
		out.Functions = append(out.Functions, fp)
	}
	return out, nil
}

func optStr(v string, had *string) *string {
	if v != "" || had != nil {
		return &v
	}
	return nil
}

func optInt(v int64, had *int64) *int64 {
	if v != 0 || had != nil {
		return &v
	}
	return nil
}

func opsetsOut(ops []OpsetID) []*onnxpb.OperatorSetIdProto {
	var out []*onnxpb.OperatorSetIdProto
	for _, o := range ops {
		sh := o.shell
		if sh == nil {
			// A new entry: always say both fields.
			d, v := o.Domain, o.Version
			out = append(out, &onnxpb.OperatorSetIdProto{Domain: &d, Version: &v})
			continue
		}
		op := &onnxpb.OperatorSetIdProto{Domain: optStr(o.Domain, sh.Domain), Version: optInt(o.Version, sh.Version)}
		keepUnknown(op, sh)
		out = append(out, op)
	}
	return out
}

func pairsOut(ps []StringPair) []*onnxpb.StringStringEntryProto {
	if ps == nil {
		return nil
	}
	out := make([]*onnxpb.StringStringEntryProto, len(ps))
	for i, p := range ps {
		sh := p.shell
		if sh == nil {
			sh = &onnxpb.StringStringEntryProto{}
		}
		e := &onnxpb.StringStringEntryProto{Key: optStr(p.Key, sh.Key), Value: optStr(p.Value, sh.Value)}
		keepUnknown(e, sh)
		out[i] = e
	}
	return out
}

// valueInfoOf builds the ValueInfoProto that v's own fields describe.
func valueInfoOf(v *Value) *onnxpb.ValueInfoProto {
	sh := v.shell
	if sh == nil {
		sh = &onnxpb.ValueInfoProto{}
	}
	vi := &onnxpb.ValueInfoProto{
		Name:          optStr(v.Name, sh.Name),
		Type:          v.Type,
		DocString:     optStr(v.DocString, sh.DocString),
		MetadataProps: pairsOut(v.MetadataProps),
	}
	keepUnknown(vi, sh)
	return vi
}

func (g *Graph) declOut(list int, vs []*Value) []*onnxpb.ValueInfoProto {
	if vs == nil {
		return nil
	}
	out := make([]*onnxpb.ValueInfoProto, len(vs))
	for i, v := range vs {
		if d := g.decls[declKey{list, i}]; d != nil && d.GetName() == v.Name {
			out[i] = d
			continue
		}
		out[i] = valueInfoOf(v)
	}
	return out
}

func valueName(v *Value) string {
	if v == nil {
		return ""
	}
	return v.Name
}

func (e *emitter) graph(g *Graph) (*onnxpb.GraphProto, error) {
	sh := g.shell
	if sh == nil {
		sh = &onnxpb.GraphProto{}
	}
	out := &onnxpb.GraphProto{
		Name:                   optStr(g.Name, sh.Name),
		DocString:              optStr(g.DocString, sh.DocString),
		SparseInitializer:      g.SparseInitializers,
		QuantizationAnnotation: g.QuantizationAnnotation,
		MetadataProps:          pairsOut(g.MetadataProps),
		Input:                  g.declOut(0, g.Inputs),
		Output:                 g.declOut(1, g.Outputs),
		ValueInfo:              g.declOut(2, g.ValueInfo),
	}
	keepUnknown(out, sh)
	if len(g.Initializers) > 0 {
		out.Initializer = make([]*onnxpb.TensorProto, 0, len(g.Initializers))
	}
	for _, v := range g.Initializers {
		if v.Const == nil {
			return nil, fmt.Errorf("graph %q: initializer %q has no tensor", g.Name, v.Name)
		}
		tp, err := e.tensor(v.Const, v.Name)
		if err != nil {
			return nil, err
		}
		out.Initializer = append(out.Initializer, tp)
	}
	if len(g.Nodes) > 0 {
		out.Node = make([]*onnxpb.NodeProto, 0, len(g.Nodes))
	}
	for _, n := range g.Nodes {
		np, err := e.node(n)
		if err != nil {
			return nil, err
		}
		out.Node = append(out.Node, np)
	}
	return out, nil
}

func (e *emitter) node(n *Node) (*onnxpb.NodeProto, error) {
	sh := n.shell
	if sh == nil {
		sh = &onnxpb.NodeProto{}
	}
	out := &onnxpb.NodeProto{
		Name:                 optStr(n.Name, sh.Name),
		OpType:               optStr(n.OpType, sh.OpType),
		Domain:               optStr(n.Domain, sh.Domain),
		Overload:             optStr(n.Overload, sh.Overload),
		DocString:            optStr(n.DocString, sh.DocString),
		MetadataProps:        pairsOut(n.MetadataProps),
		DeviceConfigurations: n.DeviceConfigurations,
	}
	keepUnknown(out, sh)
	if len(n.Inputs) > 0 {
		out.Input = make([]string, len(n.Inputs))
		for i, v := range n.Inputs {
			out.Input[i] = valueName(v)
		}
	}
	if len(n.Outputs) > 0 {
		out.Output = make([]string, len(n.Outputs))
		for i, v := range n.Outputs {
			out.Output[i] = valueName(v)
		}
	}
	for _, a := range n.Attributes {
		ap, err := e.attribute(a)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n, err)
		}
		out.Attribute = append(out.Attribute, ap)
	}
	return out, nil
}

func (e *emitter) attribute(a *Attribute) (*onnxpb.AttributeProto, error) {
	sh := a.shell
	fresh := sh == nil
	if fresh {
		sh = &onnxpb.AttributeProto{}
	}
	out := &onnxpb.AttributeProto{
		Name:          optStr(a.Name, sh.Name),
		RefAttrName:   optStr(a.RefAttrName, sh.RefAttrName),
		DocString:     optStr(a.DocString, sh.DocString),
		S:             a.S,
		SparseTensor:  a.SparseTensor,
		Tp:            a.TP,
		Floats:        a.Floats,
		Ints:          a.Ints,
		Strings:       a.Strings,
		SparseTensors: a.SparseTensors,
		TypeProtos:    a.TypeProtos,
	}
	keepUnknown(out, sh)
	if a.Type != 0 || sh.Type != nil {
		t := a.Type
		out.Type = &t
	}
	if a.F != 0 || sh.F != nil || (fresh && a.Type == AttrFloat && a.RefAttrName == "") {
		f := a.F
		out.F = &f
	}
	if a.I != 0 || sh.I != nil || (fresh && a.Type == AttrInt && a.RefAttrName == "") {
		i := a.I
		out.I = &i
	}
	if out.S == nil && fresh && a.Type == AttrString && a.RefAttrName == "" {
		out.S = []byte{}
	}
	var err error
	if a.T != nil {
		if out.T, err = e.tensor(a.T, a.T.Name); err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
	}
	for _, t := range a.Tensors {
		tp, err := e.tensor(t, t.Name)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		out.Tensors = append(out.Tensors, tp)
	}
	if a.G != nil {
		if out.G, err = e.graph(a.G); err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
	}
	for _, g := range a.Graphs {
		gp, err := e.graph(g)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		out.Graphs = append(out.Graphs, gp)
	}
	return out, nil
}

func (e *emitter) function(f *Function) (*onnxpb.FunctionProto, error) {
	sh := f.shell
	if sh == nil {
		sh = &onnxpb.FunctionProto{}
	}
	out := &onnxpb.FunctionProto{
		Name:          optStr(f.Name, sh.Name),
		Domain:        optStr(f.Domain, sh.Domain),
		Overload:      optStr(f.Overload, sh.Overload),
		DocString:     optStr(f.DocString, sh.DocString),
		Attribute:     f.Attributes,
		OpsetImport:   opsetsOut(f.OpsetImports),
		MetadataProps: pairsOut(f.MetadataProps),
	}
	keepUnknown(out, sh)
	for _, a := range f.AttributeDefaults {
		ap, err := e.attribute(a)
		if err != nil {
			return nil, fmt.Errorf("function %s.%s: %w", f.Domain, f.Name, err)
		}
		out.AttributeProto = append(out.AttributeProto, ap)
	}
	if b := f.Body; b != nil {
		for _, v := range b.Inputs {
			out.Input = append(out.Input, valueName(v))
		}
		for _, v := range b.Outputs {
			out.Output = append(out.Output, valueName(v))
		}
		out.ValueInfo = b.declOut(2, b.ValueInfo)
		for _, n := range b.Nodes {
			np, err := e.node(n)
			if err != nil {
				return nil, fmt.Errorf("function %s.%s: %w", f.Domain, f.Name, err)
			}
			out.Node = append(out.Node, np)
		}
	}
	return out, nil
}

func (e *emitter) tensor(t *Tensor, name string) (*onnxpb.TensorProto, error) {
	sh := t.shell
	if sh == nil {
		sh = &onnxpb.TensorProto{}
	}
	out := &onnxpb.TensorProto{
		Name:          optStr(name, sh.Name),
		DocString:     optStr(t.DocString, sh.DocString),
		Dims:          t.Dims,
		Segment:       sh.Segment,
		FloatData:     sh.FloatData,
		Int32Data:     sh.Int32Data,
		Int64Data:     sh.Int64Data,
		DoubleData:    sh.DoubleData,
		Uint64Data:    sh.Uint64Data,
		ExternalData:  sh.ExternalData,
		DataLocation:  sh.DataLocation,
		MetadataProps: sh.MetadataProps,
		StringData:    t.strs,
	}
	if t.DataType != 0 || sh.DataType != nil {
		dt := int32(t.DataType)
		out.DataType = &dt
	}
	if t.hasRaw {
		out.RawData = t.raw
		if out.RawData == nil {
			out.RawData = []byte{}
		}
	}
	keepUnknown(out, sh)
	if e.hook != nil {
		if err := e.hook(t, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}
