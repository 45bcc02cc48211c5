// Package build is the one graph builder of onnxconv: importers and
// transforms make canonical graphs with it. It hands out fresh unique
// names, adds nodes (one or many outputs, any domain), typed constants and
// subgraphs (If, Loop, Scan bodies), and assembles a *canonical.Model with
// its opset imports.
//
// Values are named by strings, as a source format names its tensors: a node
// may consume a name that is defined later (a graph input declared at the
// end, an outer value a subgraph reads), and the names are resolved once,
// when Model assembles the graph. An undefined name is an error then.
//
// A Builder is used by one goroutine; it holds no global state.
package build

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/onnxspec"
	"github.com/onnxconv/onnxconv/version"
)

// DefaultOpset is the ai.onnx opset a Builder emits unless told.
const DefaultOpset = 17

// Info names a graph input or output and gives its type.
type Info struct {
	Name string
	Type *onnxpb.TypeProto
}

// TensorInfo describes a tensor value: dims < 0 are symbolic ("N" for the
// first axis, else "d<i>"); nil dims with unknownRank false is a scalar.
func TensorInfo(name string, dt canonical.DataType, dims []int64, unknownRank bool) Info {
	if unknownRank {
		return Info{Name: name, Type: canonical.TensorTypeNoShape(dt)}
	}
	ds := make([]canonical.Dim, len(dims))
	for i, d := range dims {
		switch {
		case d >= 0:
			ds[i] = canonical.Dim{Value: d, Known: true}
		case i == 0:
			ds[i] = canonical.Dim{Param: "N"}
		default:
			ds[i] = canonical.Dim{Param: fmt.Sprintf("d%d", i)}
		}
	}
	return Info{Name: name, Type: canonical.TensorTypeDims(dt, ds)}
}

// RankInfo describes a tensor value of known rank and unknown dims (named
// as TensorInfo names them); a negative rank is an unknown rank.
func RankInfo(name string, dt canonical.DataType, rank int) Info {
	if rank < 0 {
		return TensorInfo(name, dt, nil, true)
	}
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = -1
	}
	return TensorInfo(name, dt, dims, false)
}

// TensorInfoDims describes a tensor value whose dims are each a symbolic
// name (a string) or a size (an int or int64); other values are unknown
// dims.
func TensorInfoDims(name string, dt canonical.DataType, dims ...any) Info {
	ds := make([]canonical.Dim, len(dims))
	for i, d := range dims {
		switch d := d.(type) {
		case string:
			ds[i] = canonical.Dim{Param: d}
		case int:
			ds[i] = canonical.Dim{Value: int64(d), Known: true}
		case int64:
			ds[i] = canonical.Dim{Value: d, Known: true}
		}
	}
	return Info{Name: name, Type: canonical.TensorTypeDims(dt, ds)}
}

// node is one node to be: values are names ("" for an omitted optional
// input or output).
type node struct {
	domain, op, name string
	in, out          []string
	attrs            []*canonical.Attribute
}

// Builder accumulates the nodes of one graph: the main graph (New) or a
// subgraph (Sub). Initializers always go to the main graph, where
// subgraphs read them from the outer scope.
type Builder struct {
	// Opset is the ai.onnx opset of the model.
	Opset int
	nodes []node
	names *canonical.Namer
	root  *Builder
	// decls are intermediate values whose type is declared (value_info).
	decls []Info
	// On the root only.
	inits  []*canonical.Tensor
	opsets map[string]int64
	subs   map[*canonical.Graph]*subgraph
}

// subgraph is a Graph made by Sub().Graph, filled when its owner node is
// assembled.
type subgraph struct {
	b        *Builder
	ins, out []Info
	done     bool
}

// New returns an empty builder for ai.onnx opset (0: DefaultOpset).
func New(opset int) *Builder {
	if opset <= 0 {
		opset = DefaultOpset
	}
	b := &Builder{Opset: opset, names: canonical.NewNamer(nil), opsets: map[string]int64{}, subs: map[*canonical.Graph]*subgraph{}}
	b.root = b
	return b
}

// WithNamer is New with names handed out by nm, which the caller shares
// (a format whose tensor names it keeps reserves them there).
func WithNamer(opset int, nm *canonical.Namer) *Builder {
	b := New(opset)
	b.names = nm
	return b
}

// Reserve marks names as taken (graph inputs and outputs the caller names
// itself).
func (b *Builder) Reserve(names ...string) { b.names.Reserve(names...) }

// Used reports whether name is taken.
func (b *Builder) Used(name string) bool { return b.names.Used(name) }

// Fresh returns an unused name based on base ("v" when empty) and
// reserves it.
func (b *Builder) Fresh(base string) string {
	if base == "" {
		base = "v"
	}
	return b.names.Fresh(base)
}

// Import declares that the model uses version of domain (ai.onnx.ml, a
// custom domain); the highest version asked for wins.
func (b *Builder) Import(domain string, version int64) {
	if v, ok := b.root.opsets[domain]; !ok || version > v {
		b.root.opsets[domain] = version
	}
}

// NodeIn appends a node of domain named name, reading in and writing out
// (names the caller chose; reserve them when not fresh).
func (b *Builder) NodeIn(domain, op, name string, in, out []string, attrs ...*canonical.Attribute) {
	b.names.Reserve(name)
	b.names.Reserve(out...)
	b.nodes = append(b.nodes, node{domain: domain, op: op, name: name,
		in: append([]string(nil), in...), out: append([]string(nil), out...), attrs: attrs})
}

// Node appends an ai.onnx node whose outputs are out; its name is out[0].
func (b *Builder) Node(op string, in, out []string, attrs ...*canonical.Attribute) {
	name := ""
	if len(out) > 0 {
		name = out[0]
	}
	b.NodeIn("", op, name, in, out, attrs...)
}

// Op appends a one-output ai.onnx node and returns its output, a fresh
// name based on base.
func (b *Builder) Op(op, base string, in []string, attrs ...*canonical.Attribute) string {
	y := b.Fresh(base)
	b.Node(op, in, []string{y}, attrs...)
	return y
}

// OpIn is Op for a node of domain.
func (b *Builder) OpIn(domain, op, base string, in []string, attrs ...*canonical.Attribute) string {
	y := b.Fresh(base)
	b.NodeIn(domain, op, y, in, []string{y}, attrs...)
	return y
}

// OpN appends an ai.onnx node with n outputs, fresh names based on base.
func (b *Builder) OpN(op, base string, n int, in []string, attrs ...*canonical.Attribute) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = b.Fresh(base)
	}
	b.Node(op, in, out, attrs...)
	return out
}

// OpTo appends a one-output ai.onnx node writing to the given output name.
func (b *Builder) OpTo(op, out string, in []string, attrs ...*canonical.Attribute) string {
	b.Node(op, in, []string{out}, attrs...)
	return out
}

// Transpose appends a Transpose of x by perm.
func (b *Builder) Transpose(x string, perm []int64, base string) string {
	return b.Op("Transpose", base, []string{x}, canonical.IntsAttr("perm", perm...))
}

// Const adds t as an initializer of the main graph under a fresh name based
// on base and returns the name. t is not copied; its name is set.
func (b *Builder) Const(base string, t *canonical.Tensor) string {
	t.Name = b.Fresh(base)
	b.root.inits = append(b.root.inits, t)
	return t.Name
}

// Tensor adds the data of t (which is not modified) as an initializer under
// a fresh name based on base.
func (b *Builder) Tensor(base string, t *canonical.Tensor) (string, error) {
	dims := append([]int64{}, t.Dims...)
	if t.DataType == canonical.String {
		s, err := t.Strings()
		if err != nil {
			return "", err
		}
		return b.Const(base, canonical.NewStringTensor("", dims, s)), nil
	}
	raw, err := t.Bytes()
	if err != nil {
		return "", err
	}
	return b.Const(base, canonical.NewTensor("", t.DataType, dims, raw)), nil
}

// ConstNamed adds t as an initializer named t.Name exactly (the caller
// made it unique); it returns the name.
func (b *Builder) ConstNamed(t *canonical.Tensor) string {
	b.names.Reserve(t.Name)
	b.root.inits = append(b.root.inits, t)
	return t.Name
}

// Init adds an initializer of raw little-endian bytes under a fresh name.
func (b *Builder) Init(base string, dt canonical.DataType, dims []int64, raw []byte) string {
	return b.Const(base, canonical.NewTensor("", dt, append([]int64{}, dims...), raw))
}

// F32 adds a float32 initializer.
func (b *Builder) F32(base string, dims []int64, v []float32) string {
	return b.Const(base, canonical.Float32Tensor("", append([]int64{}, dims...), v))
}

// I64 adds an int64 initializer.
func (b *Builder) I64(base string, dims []int64, v []int64) string {
	return b.Const(base, canonical.Int64Tensor("", append([]int64{}, dims...), v))
}

// Ints adds a 1-D int64 initializer.
func (b *Builder) Ints(base string, v ...int64) string {
	return b.I64(base, []int64{int64(len(v))}, v)
}

// Scalar adds a float32 scalar initializer.
func (b *Builder) Scalar(base string, v float32) string { return b.F32(base, nil, []float32{v}) }

// Number adds a constant of the numeric type dt (see
// canonical.NumberTensor).
func (b *Builder) Number(base string, dt canonical.DataType, dims []int64, v ...float64) string {
	return b.Const(base, canonical.NumberTensor("", dt, append([]int64{}, dims...), v))
}

// Sub returns a builder for a subgraph (the body of an If, Loop or Scan):
// it shares b's names (a name is unique across a model and its subgraphs)
// and puts its initializers in the main graph. Its nodes are its own.
func (b *Builder) Sub() *Builder {
	return &Builder{Opset: b.Opset, names: b.names, root: b.root}
}

// Graph wraps the nodes of b (a Sub builder) into a subgraph with the given
// inputs and outputs, to be held by a GRAPH attribute of a node. Its nodes
// are assembled with the model; nodes added to b afterwards are not lost.
func (b *Builder) Graph(name string, inputs, outputs []Info) *canonical.Graph {
	g := canonical.NewGraph(name)
	b.root.subs[g] = &subgraph{b: b, ins: inputs, out: outputs}
	return g
}

// Declare gives intermediate values of b's graph a declared type
// (value_info), for values whose type not every shape inference knows.
func (b *Builder) Declare(infos ...Info) { b.decls = append(b.decls, infos...) }

// Readers returns, for each name, the op types of b's nodes (not those of
// its subgraphs) that read it.
func (b *Builder) Readers() map[string][]string {
	out := map[string][]string{}
	for _, n := range b.nodes {
		for _, in := range n.in {
			if in != "" {
				out[in] = append(out[in], n.op)
			}
		}
	}
	return out
}

// Splice moves the nodes of s (a Sub builder of the same model) to the end
// of b, as if they had been added to b.
func (b *Builder) Splice(s *Builder) {
	b.nodes = append(b.nodes, s.nodes...)
	s.nodes = nil
}

// IRVersion is the IR version a built model declares: the lowest that
// knows ai.onnx opset ai (onnxspec.IRVersion), and at least 10 with ai.onnx.ml
// 5 (which came with ONNX 1.16).
func IRVersion(ai, ml int) int64 {
	ir := onnxspec.IRVersion(onnxspec.DomainONNX, ai)
	if ml >= 5 && ir < 10 {
		ir = 10
	}
	return ir
}

// Model assembles the main graph with the given inputs and outputs into a
// model: IR version from the opsets (IRVersion), producer onnxconv, the
// ai.onnx opset and every domain Import declared. Names are resolved here;
// a node input or graph output that nothing defines is an error.
func (b *Builder) Model(graphName string, inputs, outputs []Info) (*canonical.Model, error) {
	if b.root != b {
		return nil, errors.New("build: Model called on a subgraph builder")
	}
	m := &canonical.Model{
		IRVersion:       IRVersion(b.Opset, int(b.opsets[canonical.MLDomain])),
		ProducerName:    "onnxconv",
		ProducerVersion: version.Get().Short(),
	}
	m.SetOpset("", int64(b.Opset))
	for _, d := range sortedKeys(b.opsets) {
		m.SetOpset(d, b.opsets[d])
	}
	g := canonical.NewGraph(graphName)
	a := &assembler{root: b}
	if err := a.declare(g, inputs); err != nil {
		return nil, err
	}
	for _, t := range b.inits {
		if _, err := g.AddInitializer(t); err != nil {
			return nil, fmt.Errorf("build: initializer: %w", err)
		}
	}
	if err := a.nodes(g, b); err != nil {
		return nil, err
	}
	if err := a.link(); err != nil {
		return nil, err
	}
	if err := a.outputs(g, outputs); err != nil {
		return nil, err
	}
	if err := a.declared(g, b.decls); err != nil {
		return nil, err
	}
	for _, s := range a.pendingOuts {
		if err := a.outputs(s.g, s.out); err != nil {
			return nil, err
		}
		if err := a.declared(s.g, s.decls); err != nil {
			return nil, err
		}
	}
	m.Graph = g
	return m, nil
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

type link struct {
	n  *canonical.Node
	in []string
}

type pendingGraph struct {
	g          *canonical.Graph
	out, decls []Info
}

type assembler struct {
	root        *Builder
	links       []link
	pendingOuts []pendingGraph
}

func (a *assembler) declare(g *canonical.Graph, inputs []Info) error {
	for _, io := range inputs {
		if _, err := g.AddInput(io.Name, io.Type); err != nil {
			return fmt.Errorf("build: input: %w", err)
		}
	}
	return nil
}

// nodes adds b's nodes to g with their outputs; inputs are linked later
// (link), so that the order of definition does not matter.
func (a *assembler) nodes(g *canonical.Graph, b *Builder) error {
	for _, nd := range b.nodes {
		n, err := g.AddNode(nd.name, nd.domain, nd.op, nil, nd.out, nd.attrs...)
		if err != nil {
			return fmt.Errorf("build: %w", err)
		}
		a.links = append(a.links, link{n: n, in: nd.in})
		for _, at := range nd.attrs {
			gs := at.Graphs
			if at.G != nil {
				gs = []*canonical.Graph{at.G}
			}
			for _, sg := range gs {
				if err := a.subgraph(sg, g, n); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (a *assembler) subgraph(sg, parent *canonical.Graph, owner *canonical.Node) error {
	s := a.root.subs[sg]
	if s == nil {
		// A graph the caller made itself: keep it, only wire its scope.
		sg.Parent, sg.Owner = parent, owner
		return nil
	}
	if s.done {
		return fmt.Errorf("build: subgraph %q is held by two nodes", sg.Name)
	}
	s.done = true
	sg.Parent, sg.Owner = parent, owner
	if err := a.declare(sg, s.ins); err != nil {
		return fmt.Errorf("build: subgraph %q: %w", sg.Name, err)
	}
	if err := a.nodes(sg, s.b); err != nil {
		return fmt.Errorf("build: subgraph %q: %w", sg.Name, err)
	}
	a.pendingOuts = append(a.pendingOuts, pendingGraph{g: sg, out: s.out, decls: s.b.decls})
	return nil
}

func (a *assembler) link() error {
	for _, l := range a.links {
		for i, name := range l.in {
			if name == "" {
				l.n.SetInput(i, nil)
				continue
			}
			v := l.n.Graph.Lookup(name)
			if v == nil {
				return fmt.Errorf("build: node %q (%s): input %q is not defined", l.n.Name, l.n.OpType, name)
			}
			l.n.SetInput(i, v)
		}
	}
	return nil
}

func (a *assembler) outputs(g *canonical.Graph, outputs []Info) error {
	for _, io := range outputs {
		v := g.Lookup(io.Name)
		if v == nil {
			return fmt.Errorf("build: graph %q: output %q is not defined", g.Name, io.Name)
		}
		if v.Type == nil || v.Graph() == g {
			if p, _ := v.Producer(); p != nil || v.Type == nil {
				v.Type = io.Type
			}
		}
		g.Outputs = append(g.Outputs, v)
	}
	return nil
}

func (a *assembler) declared(g *canonical.Graph, decls []Info) error {
	for _, io := range decls {
		v := g.Lookup(io.Name)
		if v == nil || v.Graph() != g {
			return fmt.Errorf("build: graph %q: declared value %q is not defined in it", g.Name, io.Name)
		}
		v.Type = io.Type
		g.ValueInfo = append(g.ValueInfo, v)
	}
	return nil
}
