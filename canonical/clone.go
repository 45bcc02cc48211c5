package canonical

import (
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// ErrClosed is returned (wrapped) by operations on a model after Close.
var ErrClosed = errors.New("the model was closed")

// Clone returns a deep copy of m: graph, nodes, values with their use-def
// links, attributes, subgraphs, functions, metadata, training info and the
// shells that keep unknown fields and field presence. Any change to the
// clone (renaming, rewiring, converting it to another opset, adapting it to
// a target, editing types, dims or attribute values in place) leaves m
// unchanged, and the other way round; ToProto of the clone is proto.Equal
// to ToProto of m until one of them is changed.
//
// Tensor data is shared, not copied: raw data (often a slice of the
// memory-mapped model file), external data mappings, typed data fields and
// the bytes of STRING elements. Tensor data is immutable in canonical
// models (Bytes documents that its result must not be modified; SetBytes
// replaces the data rather than writing into it), so sharing is safe.
//
// Ownership: the clone shares the mappings of m (the model file read by
// Load, external data files) and keeps them alive. They are released when
// the last of m and its clones is closed, so the clone stays valid after
// m.Close and needs its own Close when it comes from a loaded model.
//
// Clone reads m: it must not run concurrently with changes to m. It returns
// an error wrapping ErrClosed when m was closed.
func (m *Model) Clone() (*Model, error) {
	if m == nil {
		return nil, errors.New("clone: nil model")
	}
	if m.closed {
		return nil, ErrClosed
	}
	c := newCloner()
	out := &Model{
		IRVersion:       m.IRVersion,
		OpsetImports:    cloneOpsets(m.OpsetImports),
		ProducerName:    m.ProducerName,
		ProducerVersion: m.ProducerVersion,
		Domain:          m.Domain,
		ModelVersion:    m.ModelVersion,
		DocString:       m.DocString,
		MetadataProps:   clonePairs(m.MetadataProps),
		TrainingInfo:    cloneMsgs(m.TrainingInfo),
		Configuration:   cloneMsgs(m.Configuration),
		Dir:             m.Dir,
		shell:           cloneMsg(m.shell),
		ext:             m.ext,
		src:             m.src,
	}
	// First every graph and node, so that links (outer-scope values, uses
	// by nodes of subgraphs) can be mapped whatever order they come in.
	c.declareGraph(m.Graph)
	for _, f := range m.Functions {
		c.declareGraph(f.Body)
		for _, a := range f.AttributeDefaults {
			c.declareAttr(a)
		}
	}
	out.Graph = c.graph(m.Graph)
	for _, f := range m.Functions {
		out.Functions = append(out.Functions, c.function(f))
	}
	if m.own != nil {
		m.own.acquire()
		out.own = m.own
	}
	return out, nil
}

type cloner struct {
	graphs  map[*Graph]*Graph
	nodes   map[*Node]*Node
	values  map[*Value]*Value
	tensors map[*Tensor]*Tensor
	filled  map[any]bool // graphs and nodes whose clone is filled in
}

func newCloner() *cloner {
	return &cloner{
		graphs:  map[*Graph]*Graph{},
		nodes:   map[*Node]*Node{},
		values:  map[*Value]*Value{},
		tensors: map[*Tensor]*Tensor{},
		filled:  map[any]bool{},
	}
}

func (c *cloner) declareGraph(g *Graph) {
	if g == nil || c.graphs[g] != nil {
		return
	}
	c.graphs[g] = &Graph{}
	for _, n := range g.Nodes {
		if n == nil || c.nodes[n] != nil {
			continue
		}
		c.nodes[n] = &Node{}
		for _, a := range n.Attributes {
			c.declareAttr(a)
		}
	}
}

func (c *cloner) declareAttr(a *Attribute) {
	if a == nil {
		return
	}
	c.declareGraph(a.G)
	for _, sg := range a.Graphs {
		c.declareGraph(sg)
	}
}

// graph fills the clone of g (declared before) and of its subgraphs.
func (c *cloner) graph(g *Graph) *Graph {
	if g == nil {
		return nil
	}
	out := c.graphs[g]
	if c.filled[g] {
		return out // listed twice
	}
	c.filled[g] = true
	out.Name = g.Name
	out.DocString = g.DocString
	out.Inputs = c.valueList(g.Inputs)
	out.Outputs = c.valueList(g.Outputs)
	out.Initializers = c.valueList(g.Initializers)
	out.ValueInfo = c.valueList(g.ValueInfo)
	out.SparseInitializers = cloneMsgs(g.SparseInitializers)
	out.QuantizationAnnotation = cloneMsgs(g.QuantizationAnnotation)
	out.MetadataProps = clonePairs(g.MetadataProps)
	out.Parent = c.graphs[g.Parent]
	out.Owner = c.nodes[g.Owner]
	out.shell = cloneMsg(g.shell)
	out.values = make(map[string]*Value, len(g.values))
	for k, v := range g.values {
		out.values[k] = c.value(v)
	}
	if g.undef != nil {
		out.undef = make(map[string]*Value, len(g.undef))
		for k, v := range g.undef {
			out.undef[k] = c.value(v)
		}
	}
	if g.decls != nil {
		out.decls = make(map[declKey]*onnxpb.ValueInfoProto, len(g.decls))
		for k, d := range g.decls {
			out.decls[k] = cloneMsg(d)
		}
	}
	if g.Nodes != nil {
		out.Nodes = make([]*Node, len(g.Nodes))
	}
	for i, n := range g.Nodes {
		out.Nodes[i] = c.node(n, out)
	}
	return out
}

func (c *cloner) node(n *Node, in *Graph) *Node {
	if n == nil {
		return nil
	}
	out := c.nodes[n]
	if c.filled[n] {
		return out // listed twice
	}
	c.filled[n] = true
	out.Name = n.Name
	out.OpType = n.OpType
	out.Domain = n.Domain
	out.Overload = n.Overload
	out.DocString = n.DocString
	out.MetadataProps = clonePairs(n.MetadataProps)
	out.DeviceConfigurations = cloneMsgs(n.DeviceConfigurations)
	out.Graph = in
	if g := c.graphs[n.Graph]; g != nil {
		out.Graph = g
	}
	out.shell = cloneMsg(n.shell)
	out.Inputs = c.valueList(n.Inputs)
	out.Outputs = c.valueList(n.Outputs)
	if n.Attributes != nil {
		out.Attributes = make([]*Attribute, len(n.Attributes))
		for i, a := range n.Attributes {
			out.Attributes[i] = c.attribute(a)
		}
	}
	return out
}

func (c *cloner) attribute(a *Attribute) *Attribute {
	if a == nil {
		return nil
	}
	out := &Attribute{
		Name:          a.Name,
		Type:          a.Type,
		RefAttrName:   a.RefAttrName,
		DocString:     a.DocString,
		F:             a.F,
		I:             a.I,
		S:             cloneSlice(a.S),
		T:             c.tensor(a.T),
		SparseTensor:  cloneMsg(a.SparseTensor),
		TP:            cloneMsg(a.TP),
		Floats:        cloneSlice(a.Floats),
		Ints:          cloneSlice(a.Ints),
		SparseTensors: cloneMsgs(a.SparseTensors),
		TypeProtos:    cloneMsgs(a.TypeProtos),
		shell:         cloneMsg(a.shell),
	}
	if a.Strings != nil {
		out.Strings = make([][]byte, len(a.Strings))
		for i, s := range a.Strings {
			out.Strings[i] = cloneSlice(s)
		}
	}
	if a.Tensors != nil {
		out.Tensors = make([]*Tensor, len(a.Tensors))
		for i, t := range a.Tensors {
			out.Tensors[i] = c.tensor(t)
		}
	}
	if a.G != nil {
		c.declareGraph(a.G) // a no-op unless a is reached only here
		out.G = c.graph(a.G)
	}
	if a.Graphs != nil {
		out.Graphs = make([]*Graph, len(a.Graphs))
		for i, sg := range a.Graphs {
			c.declareGraph(sg)
			out.Graphs[i] = c.graph(sg)
		}
	}
	return out
}

func (c *cloner) function(f *Function) *Function {
	out := &Function{
		Domain:        f.Domain,
		Name:          f.Name,
		Overload:      f.Overload,
		Attributes:    cloneSlice(f.Attributes),
		OpsetImports:  cloneOpsets(f.OpsetImports),
		DocString:     f.DocString,
		MetadataProps: clonePairs(f.MetadataProps),
		shell:         cloneMsg(f.shell),
	}
	if f.AttributeDefaults != nil {
		out.AttributeDefaults = make([]*Attribute, len(f.AttributeDefaults))
		for i, a := range f.AttributeDefaults {
			out.AttributeDefaults[i] = c.attribute(a)
		}
	}
	out.Body = c.graph(f.Body)
	return out
}

func (c *cloner) valueList(vs []*Value) []*Value {
	if vs == nil {
		return nil
	}
	out := make([]*Value, len(vs))
	for i, v := range vs {
		out[i] = c.value(v)
	}
	return out
}

// value returns the clone of v, making it on first use. Uses by nodes that
// are in no graph of the model (left over from an edit) are dropped.
func (c *cloner) value(v *Value) *Value {
	if v == nil {
		return nil
	}
	if w := c.values[v]; w != nil {
		return w
	}
	w := &Value{
		Name:          v.Name,
		Type:          cloneMsg(v.Type),
		DocString:     v.DocString,
		Const:         c.tensor(v.Const),
		MetadataProps: clonePairs(v.MetadataProps),
		producer:      c.nodes[v.producer],
		outIndex:      v.outIndex,
		graph:         c.graphs[v.graph],
		shell:         cloneMsg(v.shell),
		undefined:     v.undefined,
	}
	c.values[v] = w
	if v.uses != nil {
		w.uses = make([]Use, 0, len(v.uses))
		for _, u := range v.uses {
			if n := c.nodes[u.Node]; n != nil {
				w.uses = append(w.uses, Use{Node: n, Index: u.Index})
			}
		}
	}
	return w
}

// tensor copies t's description and shares its data (see Clone).
func (c *cloner) tensor(t *Tensor) *Tensor {
	if t == nil {
		return nil
	}
	if u := c.tensors[t]; u != nil {
		return u
	}
	u := &Tensor{
		Name:      t.Name,
		DataType:  t.DataType,
		Dims:      cloneSlice(t.Dims),
		DocString: t.DocString,
		raw:       t.raw,
		hasRaw:    t.hasRaw,
		strs:      cloneSlice(t.strs),
		shell:     cloneTensorShell(t.shell),
	}
	if e := t.ext; e != nil {
		e.mu.Lock()
		u.ext = &externalData{
			location: e.location, offset: e.offset, length: e.length, checksum: e.checksum,
			load: e.load, data: e.data, err: e.err,
		}
		e.mu.Unlock()
	}
	c.tensors[t] = u
	return u
}

// cloneTensorShell copies the description fields of a tensor shell and
// shares its typed data slices (immutable, see Clone).
func cloneTensorShell(s *onnxpb.TensorProto) *onnxpb.TensorProto {
	if s == nil {
		return nil
	}
	out := &onnxpb.TensorProto{
		Dims:          cloneSlice(s.Dims),
		DataType:      clonePtr(s.DataType),
		Segment:       cloneMsg(s.Segment),
		FloatData:     s.FloatData,
		Int32Data:     s.Int32Data,
		StringData:    s.StringData,
		Int64Data:     s.Int64Data,
		Name:          clonePtr(s.Name),
		DocString:     clonePtr(s.DocString),
		RawData:       s.RawData,
		ExternalData:  cloneMsgs(s.ExternalData),
		DataLocation:  clonePtr(s.DataLocation),
		DoubleData:    s.DoubleData,
		Uint64Data:    s.Uint64Data,
		MetadataProps: cloneMsgs(s.MetadataProps),
	}
	keepUnknown(out, s)
	return out
}

func cloneOpsets(ops []OpsetID) []OpsetID {
	if ops == nil {
		return nil
	}
	out := make([]OpsetID, len(ops))
	for i, o := range ops {
		out[i] = OpsetID{Domain: o.Domain, Version: o.Version, shell: cloneMsg(o.shell)}
	}
	return out
}

func clonePairs(ps []StringPair) []StringPair {
	if ps == nil {
		return nil
	}
	out := make([]StringPair, len(ps))
	for i, p := range ps {
		out[i] = StringPair{Key: p.Key, Value: p.Value, shell: cloneMsg(p.shell)}
	}
	return out
}

// cloneMsg deep-copies a protobuf message; a nil message stays nil.
func cloneMsg[M proto.Message](x M) M {
	if !x.ProtoReflect().IsValid() {
		return x
	}
	return proto.Clone(x).(M)
}

func cloneMsgs[M proto.Message](xs []M) []M {
	if xs == nil {
		return nil
	}
	out := make([]M, len(xs))
	for i, x := range xs {
		out[i] = cloneMsg(x)
	}
	return out
}

// cloneSlice copies s, keeping nil apart from empty (which protobuf bytes
// fields tell apart).
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
