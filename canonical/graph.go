package canonical

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// Graph is a GraphProto as a use-def graph. Nodes keep the order they had in
// the file (ONNX requires a topological order; TopoSort recomputes one).
//
// Names: a Value is found by name in its graph and, for subgraphs, in the
// enclosing graphs (Lookup). Invalid models (a name defined twice) still
// load: each definition gets its own Value and the checker reports it.
type Graph struct {
	Name      string
	DocString string

	Nodes   []*Node
	Inputs  []*Value
	Outputs []*Value
	// Initializers are the graph's constant tensors, in file order; each
	// Value has Const set. An initializer may also be listed in Inputs
	// (IR < 4 style, the input then being overridable).
	Initializers []*Value
	// ValueInfo lists the values that carry a value_info declaration, in
	// file order.
	ValueInfo []*Value

	SparseInitializers     []*onnxpb.SparseTensorProto
	QuantizationAnnotation []*onnxpb.TensorAnnotation
	MetadataProps          []StringPair

	// Parent is the enclosing graph of a subgraph (nil for the main graph
	// and function bodies); Owner is the node whose attribute holds it.
	Parent *Graph
	Owner  *Node

	values map[string]*Value // name -> Value defined or declared in this graph
	// undef holds the placeholders for names used in this graph but defined
	// nowhere in scope (an invalid model that still loads).
	undef map[string]*Value
	shell *onnxpb.GraphProto
	// decls keeps exact declarations that differ from the Value's own
	// (a name declared twice with different types), see conversion.
	decls map[declKey]*onnxpb.ValueInfoProto
}

type declKey struct {
	list  int // 0 input, 1 output, 2 value_info
	index int
}

// Node is one NodeProto. Inputs may hold nil for an omitted optional input
// (the empty name); Outputs may hold nil for an omitted optional output.
type Node struct {
	Name       string
	OpType     string
	Domain     string
	Overload   string
	Inputs     []*Value
	Outputs    []*Value
	Attributes []*Attribute
	DocString  string

	MetadataProps        []StringPair
	DeviceConfigurations []*onnxpb.NodeDeviceConfigurationProto

	// Graph is the graph the node belongs to.
	Graph *Graph

	shell *onnxpb.NodeProto
}

// Use is one consumption of a Value: input Index of Node. A value used from
// inside a subgraph (an outer-scope reference) is recorded as a Use by the
// inner node that names it; Node.OuterValues gives the implicit inputs of
// the node that holds the subgraph.
type Use struct {
	Node  *Node
	Index int
}

// Value is a named tensor (or sequence, map, optional) flowing in a graph:
// a graph input, an initializer, or a node output.
type Value struct {
	Name      string
	Type      *onnxpb.TypeProto // nil when unknown
	DocString string
	// Const holds the data of an initializer; nil otherwise.
	Const *Tensor

	MetadataProps []StringPair

	producer *Node
	outIndex int
	uses     []Use
	graph    *Graph
	shell    *onnxpb.ValueInfoProto
	// undefined marks a placeholder for a name that nothing defines.
	undefined bool
}

// Undefined reports whether v is a placeholder for a name that is used (or
// declared) but defined by no graph input, initializer or node output in
// scope. Only invalid models have such values; the checker reports them.
func (v *Value) Undefined() bool { return v.undefined }

// Producer returns the node that computes v and the output index, or nil
// for graph inputs and initializers.
func (v *Value) Producer() (*Node, int) { return v.producer, v.outIndex }

// Uses returns the consumers of v. The slice must not be modified.
func (v *Value) Uses() []Use { return v.uses }

// Graph returns the graph v is defined in.
func (v *Value) Graph() *Graph { return v.graph }

// IsConst reports whether v is an initializer.
func (v *Value) IsConst() bool { return v.Const != nil }

// NewGraph returns an empty graph named name.
func NewGraph(name string) *Graph {
	return &Graph{Name: name, values: map[string]*Value{}}
}

// Lookup finds the value named name in g or, for a subgraph, in its
// enclosing graphs. It returns nil when there is none.
func (g *Graph) Lookup(name string) *Value {
	for s := g; s != nil; s = s.Parent {
		if v := s.values[name]; v != nil {
			return v
		}
	}
	return nil
}

// NewValue creates a value named name in g (an input, initializer or node
// output to be). It does not list it anywhere. It returns an error when the
// name is already defined in g.
func (g *Graph) NewValue(name string, typ *onnxpb.TypeProto) (*Value, error) {
	if g.values == nil {
		g.values = map[string]*Value{}
	}
	if name != "" {
		if _, dup := g.values[name]; dup {
			return nil, fmt.Errorf("graph %q: value %q is already defined", g.Name, name)
		}
	}
	v := &Value{Name: name, Type: typ, graph: g, outIndex: -1}
	if name != "" {
		g.values[name] = v
	}
	return v, nil
}

// AddInput appends a new graph input.
func (g *Graph) AddInput(name string, typ *onnxpb.TypeProto) (*Value, error) {
	v, err := g.NewValue(name, typ)
	if err != nil {
		return nil, err
	}
	g.Inputs = append(g.Inputs, v)
	return v, nil
}

// AddInitializer appends a new initializer holding t; its value is named
// after t.Name.
func (g *Graph) AddInitializer(t *Tensor) (*Value, error) {
	v, err := g.NewValue(t.Name, TensorType(t.DataType, t.Dims))
	if err != nil {
		return nil, err
	}
	v.Const = t
	g.Initializers = append(g.Initializers, v)
	return v, nil
}

// AddNode appends a node computing op over inputs (nil for an omitted
// optional input) into new values named outputs ("" for an omitted
// optional output). Use-def links are set.
func (g *Graph) AddNode(name, domain, op string, inputs []*Value, outputs []string, attrs ...*Attribute) (*Node, error) {
	n := &Node{Name: name, Domain: domain, OpType: op, Attributes: attrs, Graph: g}
	for _, in := range inputs {
		n.Inputs = append(n.Inputs, in)
	}
	for i, in := range n.Inputs {
		if in != nil {
			in.uses = append(in.uses, Use{Node: n, Index: i})
		}
	}
	for i, o := range outputs {
		if o == "" {
			n.Outputs = append(n.Outputs, nil)
			continue
		}
		v, err := g.NewValue(o, nil)
		if err != nil {
			return nil, fmt.Errorf("node %q (%s): %w", name, op, err)
		}
		v.producer, v.outIndex = n, i
		n.Outputs = append(n.Outputs, v)
	}
	g.Nodes = append(g.Nodes, n)
	return n, nil
}

// SetInput replaces input i of n with v (nil to omit it), keeping use-def
// links right. It grows the input list when i is past its end.
func (n *Node) SetInput(i int, v *Value) {
	for len(n.Inputs) <= i {
		n.Inputs = append(n.Inputs, nil)
	}
	if old := n.Inputs[i]; old != nil {
		old.removeUse(n, i)
	}
	n.Inputs[i] = v
	if v != nil {
		v.uses = append(v.uses, Use{Node: n, Index: i})
	}
}

// TrimInputs drops trailing omitted (nil) inputs.
func (n *Node) TrimInputs() {
	for len(n.Inputs) > 0 && n.Inputs[len(n.Inputs)-1] == nil {
		n.Inputs = n.Inputs[:len(n.Inputs)-1]
	}
}

func (v *Value) removeUse(n *Node, i int) {
	for k, u := range v.uses {
		if u.Node == n && u.Index == i {
			v.uses = append(v.uses[:k], v.uses[k+1:]...)
			return
		}
	}
}

// ReplaceAllUsesWith makes every consumer of old consume nw instead,
// including graph outputs that list old.
func (g *Graph) ReplaceAllUsesWith(old, nw *Value) {
	uses := append([]Use(nil), old.uses...)
	for _, u := range uses {
		u.Node.SetInput(u.Index, nw)
	}
	for s := g; s != nil; s = s.Parent {
		for i, o := range s.Outputs {
			if o == old {
				s.Outputs[i] = nw
			}
		}
	}
}

// RemoveNode deletes n from g and its use-def links. Its outputs stay
// defined but have no producer; callers replace their uses first.
func (g *Graph) RemoveNode(n *Node) {
	for i, in := range n.Inputs {
		if in != nil {
			in.removeUse(n, i)
		}
	}
	for _, o := range n.Outputs {
		if o != nil && o.producer == n {
			o.producer = nil
			delete(g.values, o.Name)
		}
	}
	for i, m := range g.Nodes {
		if m == n {
			g.Nodes = append(g.Nodes[:i], g.Nodes[i+1:]...)
			break
		}
	}
}

// Attr returns the attribute named name, or nil.
func (n *Node) Attr(name string) *Attribute {
	for _, a := range n.Attributes {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// SetAttr sets (replaces or appends) an attribute.
func (n *Node) SetAttr(a *Attribute) {
	for i, b := range n.Attributes {
		if b.Name == a.Name {
			n.Attributes[i] = a
			return
		}
	}
	n.Attributes = append(n.Attributes, a)
}

// DeleteAttr removes the attribute named name, if any.
func (n *Node) DeleteAttr(name string) {
	for i, b := range n.Attributes {
		if b.Name == name {
			n.Attributes = append(n.Attributes[:i], n.Attributes[i+1:]...)
			return
		}
	}
}

// Input returns input i, or nil when it is omitted or past the end.
func (n *Node) Input(i int) *Value {
	if i < 0 || i >= len(n.Inputs) {
		return nil
	}
	return n.Inputs[i]
}

// Output returns output i, or nil when it is omitted or past the end.
func (n *Node) Output(i int) *Value {
	if i < 0 || i >= len(n.Outputs) {
		return nil
	}
	return n.Outputs[i]
}

// Subgraphs returns the graphs held by n's attributes (If branches, Loop
// and Scan bodies), in attribute order.
func (n *Node) Subgraphs() []*Graph {
	var gs []*Graph
	for _, a := range n.Attributes {
		if a.G != nil {
			gs = append(gs, a.G)
		}
		gs = append(gs, a.Graphs...)
	}
	return gs
}

// String names the node for messages: `"name" (OpType)`, or `#i (OpType)`
// when it has no name.
func (n *Node) String() string {
	if n.Name != "" {
		return fmt.Sprintf("%q (%s)", n.Name, n.OpType)
	}
	if n.Graph != nil {
		for i, m := range n.Graph.Nodes {
			if m == n {
				return fmt.Sprintf("#%d (%s)", i, n.OpType)
			}
		}
	}
	return fmt.Sprintf("(%s)", n.OpType)
}

// TopoSort returns g's nodes in a topological order, keeping file order
// where the dependencies allow. Implicit inputs of subgraph nodes (outer
// values used inside a body) count as dependencies. It returns an error
// naming a node on a cycle when there is one.
func (g *Graph) TopoSort() ([]*Node, error) {
	index := make(map[*Node]int, len(g.Nodes))
	for i, n := range g.Nodes {
		index[n] = i
	}
	deps := make([][]int, len(g.Nodes))
	indeg := make([]int, len(g.Nodes))
	users := make([][]int, len(g.Nodes))
	for i, n := range g.Nodes {
		seen := map[int]bool{}
		addDep := func(v *Value) {
			if v == nil {
				return
			}
			// Walk up to the producer in g (v may be produced in g itself).
			if p := v.producer; p != nil {
				if j, ok := index[p]; ok && !seen[j] {
					seen[j] = true
					deps[i] = append(deps[i], j)
				}
			}
		}
		for _, in := range n.Inputs {
			addDep(in)
		}
		for _, v := range n.OuterValues() {
			addDep(v)
		}
		indeg[i] = len(deps[i])
		for _, j := range deps[i] {
			users[j] = append(users[j], i)
		}
	}
	order := make([]*Node, 0, len(g.Nodes))
	// Kahn's algorithm with a min-heap on file index keeps file order.
	h := &intHeap{}
	for i := range g.Nodes {
		if indeg[i] == 0 {
			h.push(i)
		}
	}
	for h.len() > 0 {
		i := h.pop()
		order = append(order, g.Nodes[i])
		for _, u := range users[i] {
			indeg[u]--
			if indeg[u] == 0 {
				h.push(u)
			}
		}
	}
	if len(order) != len(g.Nodes) {
		for i, d := range indeg {
			if d > 0 {
				return nil, fmt.Errorf("graph %q: node %s is on a cycle", g.Name, g.Nodes[i])
			}
		}
	}
	return order, nil
}

// OuterValues returns the values that n's subgraphs (at any depth) use from
// outside themselves and that are defined in n's graph or above: the
// implicit inputs of an If, Loop or Scan node.
func (n *Node) OuterValues() []*Value {
	subs := n.Subgraphs()
	if len(subs) == 0 {
		return nil
	}
	var out []*Value
	seen := map[*Value]bool{}
	var walk func(sg *Graph)
	walk = func(sg *Graph) {
		for _, m := range sg.Nodes {
			for _, in := range m.Inputs {
				if in != nil && !seen[in] && !definedWithin(in, sg, n.Graph) {
					seen[in] = true
					out = append(out, in)
				}
			}
			for _, s := range m.Subgraphs() {
				walk(s)
			}
		}
		for _, o := range sg.Outputs {
			if o != nil && !seen[o] && !definedWithin(o, sg, n.Graph) {
				seen[o] = true
				out = append(out, o)
			}
		}
	}
	for _, s := range subs {
		walk(s)
	}
	return out
}

// definedWithin reports whether v is defined in sg or a graph nested below
// it, i.e. not in outer (or above).
func definedWithin(v *Value, sg, outer *Graph) bool {
	for g := v.graph; g != nil; g = g.Parent {
		if g == outer {
			return false
		}
		if g == sg {
			return true
		}
	}
	return false
}

type intHeap struct{ a []int }

func (h *intHeap) len() int { return len(h.a) }
func (h *intHeap) push(x int) {
	h.a = append(h.a, x)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}
func (h *intHeap) pop() int {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.a) && h.a[l] < h.a[m] {
			m = l
		}
		if r < len(h.a) && h.a[r] < h.a[m] {
			m = r
		}
		if m == i {
			break
		}
		h.a[m], h.a[i] = h.a[i], h.a[m]
		i = m
	}
	return top
}
