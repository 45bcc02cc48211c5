// Package check validates a canonical model against the ONNX operator
// schemas (package onnxspec) and the graph rules of the ONNX IR that go
// beyond structure: every node names an operator that exists at the
// model's opset, has the right number of inputs and outputs, known
// attributes of the right types with the required ones present, input and
// output types that meet the type constraints, and subgraphs that only use
// outer values defined before the node that holds them.
//
// canonical.Validate does the structural checks (SSA, cycles, undefined
// names); Check is meant to run after it and reports every problem it
// finds rather than stopping at the first.
package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// Problem is one schema or scoping violation.
type Problem struct {
	// Path names the graph the node belongs to, in the field-path style
	// of canonical.Validate: "graph" for the model's graph,
	// `graph.node[3].attribute "then_branch".g` for a subgraph,
	// `functions[0] "local.Foo"` for a function body.
	Path string
	// Node and OpType name the offending node; Index is its position in
	// its graph (-1 for a problem of the graph itself).
	Node   string
	OpType string
	Index  int
	// Msg says what is wrong, Fix what to do about it.
	Msg string
	Fix string
	// scoping marks a name-resolution problem, which canonical.Validate
	// reports as well.
	scoping bool
}

// String formats the problem on one line.
func (p Problem) String() string {
	return p.Canonical().Error()
}

// Canonical converts p to a canonical.Problem (the type canonical.Validate
// returns), for commands that list both together.
func (p Problem) Canonical() canonical.Problem {
	cp := canonical.Problem{Path: p.Path, Msg: p.Msg, Fix: p.Fix}
	if p.Index >= 0 {
		cp.Path = fmt.Sprintf("%s.node[%d]", p.Path, p.Index)
		if p.Node != "" {
			cp.Node = fmt.Sprintf("%q (%s) #%d", p.Node, p.OpType, p.Index)
		} else {
			cp.Node = fmt.Sprintf("#%d (%s)", p.Index, p.OpType)
		}
	}
	return cp
}

// Schema returns the problems of Check that canonical.Validate does not
// report (everything but name resolution and node order), as
// canonical.Problems. The check command lists
// append(canonical.Validate(m), check.Schema(m)...).
func Schema(m *canonical.Model) []canonical.Problem {
	var out []canonical.Problem
	for _, p := range Check(m) {
		if !p.scoping {
			out = append(out, p.Canonical())
		}
	}
	return out
}

// Error returns nil when problems is empty, otherwise an error listing them
// (at most 20 lines, then a count of the rest).
func Error(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d schema problem(s):", len(problems))
	for i, p := range problems {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(problems)-20)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return fmt.Errorf("%s", b.String())
}

// Check validates every node of m (main graph, subgraphs at any depth and
// model-local function bodies) against its operator schema and the IR's
// scoping rules, and returns all problems found, in graph order. A nil
// model or graph is reported as a problem. Check never panics on a
// malformed model: an internal failure is reported as a problem.
func Check(m *canonical.Model) (problems []Problem) {
	defer func() {
		if r := recover(); r != nil {
			problems = append(problems, Problem{Path: "model", Index: -1,
				Msg: fmt.Sprintf("internal error while checking: %v", r),
				Fix: "report this model to the onnxconv developers"})
		}
	}()
	if m == nil || m.Graph == nil {
		return []Problem{{Path: "model", Index: -1, Msg: "the model has no graph", Fix: "give the model a graph"}}
	}
	c := &checker{m: m, opsetOf: m.Opset}
	c.knownOpsets(m.OpsetImports, "opset_import")
	if m.Opset("") == 0 && !importsDomain(m.OpsetImports, "") {
		if usesDomain(m.Graph, "") {
			c.add(Problem{Path: "model", Index: -1, Msg: "the model does not import the ai.onnx operator set but uses its operators",
				Fix: "add an opset_import entry for domain \"\" (ai.onnx)"})
		}
	}
	c.graph(m.Graph, "graph", newScope(nil))
	for i, f := range m.Functions {
		fc := &checker{m: m, opsetOf: func(d string) int64 {
			if v := f.Opset(d); v != 0 {
				return v
			}
			return m.Opset(d)
		}, inFunction: true}
		fc.knownOpsets(f.OpsetImports, fmt.Sprintf("functions[%d] %q.opset_import", i, f.Domain+"."+f.Name))
		if f.Body == nil {
			c.problems = append(c.problems, fc.problems...)
			continue
		}
		s := newScope(nil)
		fc.graph(f.Body, fmt.Sprintf("functions[%d] %q", i, f.Domain+"."+f.Name), s)
		c.problems = append(c.problems, fc.problems...)
	}
	return c.problems
}

// knownOpsets reports imports of ai.onnx or ai.onnx.ml at versions newer
// than the newest this registry knows: their operators' schemas cannot be
// known, so nothing about the model could be checked (or converted).
func (c *checker) knownOpsets(ops []canonical.OpsetID, path string) {
	for i, o := range ops {
		d := onnxspec.NormalizeDomain(o.Domain)
		if d != "" && d != onnxspec.DomainML {
			continue
		}
		if max := onnxspec.MaxOpset(d); max > 0 && o.Version > int64(max) {
			name := d
			if d == "" {
				name = "ai.onnx"
			}
			c.add(Problem{Path: fmt.Sprintf("%s[%d]", path, i), Index: -1,
				Msg: fmt.Sprintf("%s version %d is beyond the newest known opset %d", name, o.Version, max),
				Fix: fmt.Sprintf("import %s at a released version (1..%d); the file is damaged or was made by a newer ONNX than onnxconv knows", name, max)})
		}
	}
}

func importsDomain(ops []canonical.OpsetID, d string) bool {
	for _, o := range ops {
		if onnxspec.NormalizeDomain(o.Domain) == d {
			return true
		}
	}
	return false
}

func usesDomain(g *canonical.Graph, d string) bool {
	for _, n := range g.Nodes {
		if onnxspec.NormalizeDomain(n.Domain) == d {
			return true
		}
	}
	return false
}

type checker struct {
	m          *canonical.Model
	opsetOf    func(domain string) int64
	inFunction bool
	problems   []Problem
}

func (c *checker) add(p Problem) { c.problems = append(c.problems, p) }

// scope is the set of values visible at a point of a graph: those defined
// so far in it, and the scope of the enclosing graph at the node that owns
// it.
type scope struct {
	parent  *scope
	defined map[*canonical.Value]bool
}

func newScope(parent *scope) *scope {
	return &scope{parent: parent, defined: map[*canonical.Value]bool{}}
}

func (s *scope) has(v *canonical.Value) bool {
	for ; s != nil; s = s.parent {
		if s.defined[v] {
			return true
		}
	}
	return false
}

// graph checks g whose visible outer values are those of s.parent; s is
// g's own scope.
func (c *checker) graph(g *canonical.Graph, path string, s *scope) {
	for _, v := range g.Inputs {
		if v != nil {
			s.defined[v] = true
		}
	}
	for _, v := range g.Initializers {
		if v != nil {
			s.defined[v] = true
		}
	}
	// Names a later node of this graph defines: a use of one of them
	// before its definition is an ordering error, not an undefined name.
	later := map[*canonical.Value]int{}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != nil {
				if _, ok := later[o]; !ok {
					later[o] = i
				}
			}
		}
	}
	// Node names are optional, but those given are unique in a graph:
	// ONNX Runtime refuses "two nodes with same node name".
	named := map[string]int{}
	for i, n := range g.Nodes {
		if n == nil || n.Name == "" {
			continue
		}
		if j, ok := named[n.Name]; ok {
			c.add(Problem{Path: path, Node: n.Name, OpType: n.OpType, Index: i,
				Msg: fmt.Sprintf("node name %q is also the name of node[%d] (%s); ONNX Runtime refuses two nodes with the same node name", n.Name, j, g.Nodes[j].OpType),
				Fix: "give every node a unique name (canonical.Namer.Fresh)"})
			continue
		}
		named[n.Name] = i
	}
	for i, n := range g.Nodes {
		nc := &nodeCheck{c: c, n: n, index: i, path: path}
		for k, in := range n.Inputs {
			if in == nil {
				continue
			}
			nc.use(in, s, fmt.Sprintf("input %d", k), later)
		}
		nc.schema()
		for _, a := range n.Attributes {
			var gs []*canonical.Graph
			if a.G != nil {
				gs = append(gs, a.G)
			}
			gs = append(gs, a.Graphs...)
			for k, sg := range gs {
				sp := fmt.Sprintf("%s.node[%d].attribute %q.g", path, i, a.Name)
				if len(a.Graphs) > 0 {
					sp = fmt.Sprintf("%s.node[%d].attribute %q.graphs[%d]", path, i, a.Name, k)
				}
				c.graph(sg, sp, newScope(s))
			}
		}
		for _, o := range n.Outputs {
			if o != nil {
				s.defined[o] = true
			}
		}
	}
	for k, o := range g.Outputs {
		if o == nil {
			continue
		}
		if o.Undefined() || !s.has(o) {
			c.add(Problem{Path: path, Index: -1, scoping: true,
				Msg: fmt.Sprintf("graph output %d %q is not defined by any input, initializer or node of the graph or an enclosing scope", k, o.Name),
				Fix: "compute the output with a node, or remove it from the graph outputs"})
		}
	}
}

type nodeCheck struct {
	scoping bool
	c       *checker
	n       *canonical.Node
	index   int
	path    string
}

func (nc *nodeCheck) add(msg, fix string) {
	nc.c.add(Problem{Path: nc.path, Node: nc.n.Name, OpType: nc.n.OpType, Index: nc.index, Msg: msg, Fix: fix, scoping: nc.scoping})
}

func (nc *nodeCheck) use(in *canonical.Value, s *scope, what string, later map[*canonical.Value]int) {
	if s.has(in) {
		return
	}
	nc.scoping = true
	defer func() { nc.scoping = false }()
	switch {
	case in.Undefined():
		nc.add(fmt.Sprintf("%s %q is not defined in this graph or any enclosing scope", what, in.Name),
			"feed it from a graph input, an initializer or a node output, or correct the name")
	case later[in] > nc.index || (later[in] == nc.index && producedBy(in, nc.n)):
		if producedBy(in, nc.n) {
			nc.add(fmt.Sprintf("%s %q is an output of the node itself", what, in.Name),
				"break the cycle: a node cannot consume its own output")
			return
		}
		nc.add(fmt.Sprintf("%s %q is used before node[%d] defines it", what, in.Name, later[in]),
			"sort the graph's nodes topologically (onnxconv convert does this)")
	case in.Graph() != nil && in.Graph() != nc.n.Graph:
		nc.add(fmt.Sprintf("%s %q comes from an enclosing graph where it is defined after the node that holds this subgraph, or from a graph that is not in scope", what, in.Name),
			"a subgraph may only use outer values defined before the node that holds it: move the defining node before it")
	default:
		nc.add(fmt.Sprintf("%s %q is not visible at this node", what, in.Name),
			"define the value before the node uses it")
	}
}

func producedBy(v *canonical.Value, n *canonical.Node) bool {
	p, _ := v.Producer()
	return p == n
}

// schema checks n against its operator schema.
func (nc *nodeCheck) schema() {
	n := nc.n
	domain := onnxspec.NormalizeDomain(n.Domain)
	if nc.c.m.Function(n.Domain, n.OpType, n.Overload) != nil {
		return // a call of a model-local function
	}
	known := domain == onnxspec.DomainONNX || domain == onnxspec.DomainML ||
		domain == onnxspec.DomainPreview || domain == onnxspec.DomainTraining
	if !known {
		return // custom domain: no schema to check against
	}
	ver := int(nc.c.opsetOf(domain))
	if ver == 0 {
		nc.add(fmt.Sprintf("domain %s is not imported by the model", onnxspec.DisplayDomain(domain)),
			fmt.Sprintf("add an opset_import entry for domain %q", domain))
		return
	}
	versions := onnxspec.Versions(domain, n.OpType)
	if len(versions) == 0 {
		nc.add(fmt.Sprintf("unknown operator %s in domain %s", n.OpType, onnxspec.DisplayDomain(domain)),
			"check the op_type spelling and domain (see `onnxconv ops`), or give the node a custom domain and provide a function for it")
		return
	}
	s, ok := onnxspec.Lookup(domain, n.OpType, ver)
	if !ok {
		nc.add(fmt.Sprintf("operator %s was introduced in %s opset %d, but the model imports opset %d",
			n.OpType, onnxspec.DisplayDomain(domain), versions[0].SinceVersion, ver),
			fmt.Sprintf("raise the %s opset import to at least %d (onnxconv opset --to %d)", onnxspec.DisplayDomain(domain), versions[0].SinceVersion, versions[0].SinceVersion))
		return
	}
	if s.Deprecated {
		fix := "replace the operator with its documented alternative"
		for _, v := range versions {
			if v.SinceVersion > s.SinceVersion && !v.Deprecated {
				fix = fmt.Sprintf("use %s-%d (raise the opset import to %d) or replace the operator", n.OpType, v.SinceVersion, v.SinceVersion)
				break
			}
		}
		nc.add(fmt.Sprintf("operator %s is deprecated in %s opset %d (since version %d)", n.OpType, onnxspec.DisplayDomain(domain), ver, s.SinceVersion), fix)
		return
	}
	nc.arity(s)
	nc.attributes(s)
	nc.types(s)
	nc.quantization(s)
	nc.bodies()
}

// quantization checks QuantizeLinear and DequantizeLinear beyond their
// type constraints, as ONNX Runtime does when it loads them: before
// opset 13 the scale and zero point are scalars (per-axis quantization,
// the axis attribute, came with version 13); scale and zero point have
// the same shape; a per-axis scale is 1-D.
func (nc *nodeCheck) quantization(s *onnxspec.Schema) {
	n := nc.n
	if onnxspec.NormalizeDomain(n.Domain) != onnxspec.DomainONNX || (n.OpType != "QuantizeLinear" && n.OpType != "DequantizeLinear") || len(n.Inputs) < 2 {
		return
	}
	scale, sok := dimsOf(n.Inputs[1])
	var zp []int64
	zok := false
	if len(n.Inputs) > 2 && n.Inputs[2] != nil {
		zp, zok = dimsOf(n.Inputs[2])
	}
	if s.SinceVersion < 13 {
		for _, p := range []struct {
			what string
			d    []int64
			ok   bool
		}{{"scale", scale, sok}, {"zero point", zp, zok}} {
			if p.ok && len(p.d) > 0 && numel(p.d) != 1 {
				nc.add(fmt.Sprintf("%s-%d takes a scalar %s, this one has shape %v (per-axis quantization needs opset 13)", n.OpType, s.SinceVersion, p.what, p.d),
					"raise the ai.onnx opset import to 13 (onnxconv opset --opset 13), or quantize per tensor")
				return
			}
		}
		return
	}
	if sok && len(scale) > 1 && n.AttrInt("block_size", 0) == 0 {
		nc.add(fmt.Sprintf("the scale of %s has shape %v: it must be a scalar (per tensor) or 1-D (per axis)", n.OpType, scale),
			"reshape the scale to 1-D along the quantized axis")
	}
	if sok && zok && numel(scale) != numel(zp) {
		nc.add(fmt.Sprintf("the scale of %s has shape %v but its zero point %v: they must match", n.OpType, scale, zp),
			"give the zero point the scale's shape")
	}
}

// dimsOf returns the static shape of v from its type or its constant.
func dimsOf(v *canonical.Value) ([]int64, bool) {
	if v == nil {
		return nil, false
	}
	if v.Const != nil {
		return v.Const.Dims, true
	}
	if v.Type == nil || v.Type.GetTensorType() == nil || v.Type.GetTensorType().GetShape() == nil {
		return nil, false
	}
	var d []int64
	for _, x := range v.Type.GetTensorType().GetShape().GetDim() {
		if _, ok := x.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); !ok {
			return nil, false
		}
		d = append(d, x.GetDimValue())
	}
	return d, true
}

func numel(d []int64) int64 {
	n := int64(1)
	for _, x := range d {
		n *= x
	}
	return n
}

// bodies checks that the subgraphs of If, Loop and Scan have the number
// of inputs and outputs the node implies.
func (nc *nodeCheck) bodies() {
	n := nc.n
	body := func(name string) *canonical.Graph {
		if a := n.Attr(name); a != nil {
			return a.G
		}
		return nil
	}
	switch n.OpType {
	case "If":
		for _, b := range []string{"then_branch", "else_branch"} {
			if g := body(b); g != nil && len(g.Outputs) != len(n.Outputs) {
				nc.add(fmt.Sprintf("%s has %d outputs but the node has %d", b, len(g.Outputs), len(n.Outputs)),
					"give both branches one output per If output")
			}
			if g := body(b); g != nil && len(g.Inputs) != 0 {
				nc.add(fmt.Sprintf("%s declares %d inputs; If branches take none", b, len(g.Inputs)),
					"remove the branch inputs and use outer values directly")
			}
		}
	case "Loop":
		g := body("body")
		if g == nil {
			return
		}
		carried := len(n.Inputs) - 2
		if carried < 0 {
			carried = 0
		}
		if len(g.Inputs) != 2+carried {
			nc.add(fmt.Sprintf("body has %d inputs, want 2 + %d loop-carried = %d", len(g.Inputs), carried, 2+carried),
				"the body takes (iteration_num, condition, loop-carried values...)")
		}
		if len(g.Outputs) < 1+carried || len(g.Outputs)-1 != len(n.Outputs) {
			nc.add(fmt.Sprintf("body has %d outputs for %d loop-carried values and %d node outputs", len(g.Outputs), carried, len(n.Outputs)),
				"the body returns (condition, loop-carried values..., scan outputs...) and the node has one output per loop-carried value and scan output")
		}
	case "Scan":
		g := body("body")
		if g == nil {
			return
		}
		first := 0
		if v, ok := onnxspec.Lookup("", "Scan", int(nc.c.opsetOf(""))); ok && v.SinceVersion < 9 {
			first = 1
		}
		if len(g.Inputs) != len(n.Inputs)-first {
			nc.add(fmt.Sprintf("body has %d inputs, the node passes %d states and scan inputs", len(g.Inputs), len(n.Inputs)-first),
				"give the body one input per state and scan input")
		}
		if len(g.Outputs) != len(n.Outputs) {
			nc.add(fmt.Sprintf("body has %d outputs, the node %d", len(g.Outputs), len(n.Outputs)),
				"give the node one output per body output")
		}
	}
}

func (nc *nodeCheck) arity(s *onnxspec.Schema) {
	n := nc.n
	nin := len(n.Inputs)
	if nin > s.MaxInputs {
		nc.add(fmt.Sprintf("has %d inputs, %s takes %s", nin, s, onnxspec.FormatArity(s.MinInputs, s.MaxInputs)),
			"remove the extra inputs")
	}
	nc.params("input", n.Inputs, s.Inputs, s.MinInputs, s.MaxInputs)
	nout := len(n.Outputs)
	if nout > s.MaxOutputs {
		nc.add(fmt.Sprintf("has %d outputs, %s has %s", nout, s, onnxspec.FormatArity(s.MinOutputs, s.MaxOutputs)),
			"remove the extra outputs")
	}
	nc.params("output", n.Outputs, s.Outputs, s.MinOutputs, s.MaxOutputs)
}

func (nc *nodeCheck) params(kind string, vals []*canonical.Value, formals []onnxspec.FormalParameter, lo, hi int) {
	for j, f := range formals {
		switch f.Option {
		case onnxspec.Single:
			if j >= len(vals) || vals[j] == nil {
				nc.add(fmt.Sprintf("required %s %d (%s) is missing; the operator takes %s %ss", kind, j, f.Name, onnxspec.FormatArity(lo, hi), kind),
					fmt.Sprintf("connect a value to %s %s", kind, f.Name))
			}
		case onnxspec.Variadic:
			cnt := 0
			if len(vals) > j {
				cnt = len(vals) - j
			}
			if cnt < f.MinArity {
				nc.add(fmt.Sprintf("variadic %s %s takes at least %d value(s), the node gives %d", kind, f.Name, f.MinArity, cnt),
					fmt.Sprintf("connect at least %d value(s) from %s %d on", f.MinArity, kind, j))
			}
		}
	}
}

func (nc *nodeCheck) attributes(s *onnxspec.Schema) {
	n := nc.n
	seen := map[string]bool{}
	for _, a := range n.Attributes {
		if seen[a.Name] {
			nc.add(fmt.Sprintf("attribute %s is given twice", a.Name), "keep one of them")
		}
		seen[a.Name] = true
		sa, ok := s.Attribute(a.Name)
		if !ok {
			names := make([]string, len(s.Attributes))
			for i, x := range s.Attributes {
				names[i] = x.Name
			}
			sort.Strings(names)
			fix := "remove it"
			if len(names) > 0 {
				fix = "remove it or use one of: " + strings.Join(names, ", ")
			}
			nc.add(fmt.Sprintf("unknown attribute %s for %s", a.Name, s), fix)
			continue
		}
		if int32(a.Type) != int32(sa.Type) {
			nc.add(fmt.Sprintf("attribute %s has type %s, %s expects %s", a.Name, a.Type, s, sa.Type),
				fmt.Sprintf("store %s as %s", a.Name, sa.Type))
		}
	}
	for _, sa := range s.Attributes {
		if sa.Required && !seen[sa.Name] {
			nc.add(fmt.Sprintf("required attribute %s (%s) is missing", sa.Name, sa.Type),
				fmt.Sprintf("set attribute %s", sa.Name))
		}
	}
}

// types checks the known types of the node's inputs and outputs against
// the type constraints, binding each type parameter consistently.
func (nc *nodeCheck) types(s *onnxspec.Schema) {
	n := nc.n
	type binding struct {
		typ   string
		where string
	}
	bound := map[string]binding{}
	check := func(kind string, i int, v *canonical.Value, f onnxspec.FormalParameter) {
		if v == nil || v.Type == nil {
			return
		}
		ts, ok := TypeString(v.Type)
		if !ok {
			return
		}
		allowed := s.AllowedTypes(f.TypeStr)
		if !contains(allowed, ts) {
			what := fmt.Sprintf("%s %d (%s) %q has type %s", kind, i, f.Name, v.Name, ts)
			if _, isParam := s.TypeConstraint(f.TypeStr); isParam {
				nc.add(fmt.Sprintf("%s, not allowed for type parameter %s of %s (allowed: %s)", what, f.TypeStr, s, strings.Join(allowed, ", ")),
					fmt.Sprintf("insert a Cast to one of the allowed types before %s %s", kind, f.Name))
			} else {
				nc.add(fmt.Sprintf("%s, %s requires %s", what, s, f.TypeStr),
					fmt.Sprintf("Cast %s %s to %s", kind, f.Name, f.TypeStr))
			}
			return
		}
		if _, isParam := s.TypeConstraint(f.TypeStr); !isParam || (f.Option == onnxspec.Variadic && !f.Homogeneous) {
			return
		}
		where := fmt.Sprintf("%s %d (%s)", kind, i, f.Name)
		if b, ok := bound[f.TypeStr]; ok {
			if b.typ != ts {
				nc.add(fmt.Sprintf("type parameter %s is %s at %s but %s at %s %q", f.TypeStr, b.typ, b.where, ts, where, v.Name),
					fmt.Sprintf("all values bound to %s must have the same type: insert a Cast", f.TypeStr))
			}
			return
		}
		bound[f.TypeStr] = binding{ts, where}
	}
	for i, v := range n.Inputs {
		if f, ok := formalAt(s.Inputs, i); ok {
			check("input", i, v, f)
		}
	}
	for i, v := range n.Outputs {
		if f, ok := formalAt(s.Outputs, i); ok {
			check("output", i, v, f)
		}
	}
}

func formalAt(fs []onnxspec.FormalParameter, i int) (onnxspec.FormalParameter, bool) {
	if i < len(fs) {
		return fs[i], true
	}
	if len(fs) > 0 && fs[len(fs)-1].Option == onnxspec.Variadic {
		return fs[len(fs)-1], true
	}
	return onnxspec.FormalParameter{}, false
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// ElemTypeName returns the spec's name of a tensor element type: "float",
// "int64", "float8e4m3fn", ...
func ElemTypeName(dt canonical.DataType) string {
	return strings.ToLower(dt.String())
}

// TypeString renders a TypeProto as the type strings of the operator
// schemas: "tensor(float)", "seq(tensor(int64))", "map(string, int64)",
// "optional(seq(tensor(float)))". ok is false when the type is incomplete
// (no element type).
func TypeString(t *onnxpb.TypeProto) (string, bool) {
	switch x := t.GetValue().(type) {
	case *onnxpb.TypeProto_TensorType:
		et := x.TensorType.GetElemType()
		if et == 0 {
			return "", false
		}
		return "tensor(" + ElemTypeName(canonical.DataType(et)) + ")", true
	case *onnxpb.TypeProto_SparseTensorType:
		et := x.SparseTensorType.GetElemType()
		if et == 0 {
			return "", false
		}
		return "sparse_tensor(" + ElemTypeName(canonical.DataType(et)) + ")", true
	case *onnxpb.TypeProto_SequenceType:
		e, ok := TypeString(x.SequenceType.GetElemType())
		return "seq(" + e + ")", ok
	case *onnxpb.TypeProto_OptionalType:
		e, ok := TypeString(x.OptionalType.GetElemType())
		return "optional(" + e + ")", ok
	case *onnxpb.TypeProto_MapType:
		k := x.MapType.GetKeyType()
		if k == 0 {
			return "", false
		}
		v, ok := TypeString(x.MapType.GetValueType())
		if !ok {
			return "", false
		}
		return "map(" + ElemTypeName(canonical.DataType(k)) + ", " + v + ")", true
	}
	return "", false
}
