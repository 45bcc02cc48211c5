// Package convert is the ONNX version converter: it moves a canonical model
// from one ai.onnx opset to another (7 to 28, up or down) and ai.onnx.ml
// between 1 and 5, one operator version step at a time.
//
// Each step of each node is handled by, in order:
//   - an adapter written for that (op, version) step (adapters.go), for
//     changes of semantics, replaced operators and attributes that became
//     inputs;
//   - otherwise the generic rule, read off the two schemas: attributes and
//     optional inputs that the newer version adds with a default that keeps
//     the old behaviour are dropped going down when unset (and block when
//     set), and type constraints that narrow going down block when the node
//     uses a type the older version lacks;
//   - for an operator that does not exist in the target opset, an
//     expansion into older operators (expand.go).
//
// Nothing stops at the first problem: Plan lists every node that blocks
// the target, with the reason and what would unblock it.
package convert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/infer"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// Options says where to convert to.
type Options struct {
	// To is the target ai.onnx opset (7..28). 0 keeps the current one.
	To int
	// ToML is the target ai.onnx.ml opset (1..5). 0 keeps the current one.
	ToML int
	// NoInfer skips the type and shape inference that runs first so that
	// adapters needing ranks or shapes (negative axes before 11, Softmax
	// before 13, expansions) can know them. Inferred types are set on the
	// values but not added to value_info.
	NoInfer bool
}

// Blocker is one node that cannot be expressed in the target opset.
type Blocker struct {
	// Graph is the path of the graph holding the node ("main", or
	// "main/If_0.then_branch" for a subgraph).
	Graph  string `json:"graph"`
	Node   string `json:"node"`
	OpType string `json:"op_type"`
	Domain string `json:"domain,omitempty"`
	Index  int    `json:"index"`
	// Step is the version step that blocks, e.g. "Softmax 13 -> 11".
	Step   string `json:"step"`
	Reason string `json:"reason"`
	Fix    string `json:"fix,omitempty"`
	// Kind tells why: KindNotExpressible (the target has no equivalent),
	// KindNeedsShapes (an equivalent exists once ranks or shapes are known)
	// or KindNoAdapter (an equivalent exists but onnxconv has no rule yet).
	Kind string `json:"kind"`
}

// Blocker kinds.
const (
	KindNotExpressible = "not-expressible"
	KindNeedsShapes    = "needs-shapes"
	KindNoAdapter      = "no-adapter"
)

// functionOps are the ai.onnx operators that ONNX 1.22 defines as
// functions of other operators (the "Function" tables of Operators.md):
// below their introduction they have an equivalent, so refusing them is a
// missing adapter. Any other operator missing from the target has no
// equivalent there. TestFunctionOpsMatchSpec keeps this list true.
var functionOps = map[string]bool{
	"AffineGrid": true, "Attention": true, "Bernoulli": true, "BlackmanWindow": true, "CastLike": true,
	"CausalConvWithState": true, "Celu": true, "CenterCropPad": true, "Clip": true, "DynamicQuantizeLinear": true,
	"Elu": true, "Gelu": true, "GreaterOrEqual": true, "GroupNormalization": true, "HammingWindow": true,
	"HannWindow": true, "HardSigmoid": true, "HardSwish": true, "LayerNormalization": true, "LeakyRelu": true,
	"LessOrEqual": true, "LinearAttention": true, "LogSoftmax": true, "MeanVarianceNormalization": true,
	"Mish": true, "NegativeLogLikelihoodLoss": true, "PRelu": true, "RMSNormalization": true, "Range": true,
	"ReduceL1": true, "ReduceL2": true, "ReduceLogSum": true, "ReduceLogSumExp": true, "ReduceSumSquare": true,
	"Relu": true, "RotaryEmbedding": true, "Selu": true, "SequenceMap": true, "Shrink": true, "Softmax": true,
	"SoftmaxCrossEntropyLoss": true, "Softplus": true, "Softsign": true, "Swish": true, "ThresholdedRelu": true,
}

// kindOf sorts a blocker into one of the kinds, from the typed error the
// step returned (never from its message): needShapes, noAdapter and
// noExpansion errors say which kind they are; any other error is
// KindNotExpressible.
func kindOf(op string, err error) string {
	var fe *fixError
	if !errors.As(err, &fe) {
		return KindNotExpressible
	}
	switch fe.kind {
	case KindNeedsShapes, KindNoAdapter:
		return fe.kind
	case kindNoExpansion:
		if functionOps[op] {
			return KindNoAdapter
		}
	}
	return KindNotExpressible
}

func (b Blocker) String() string {
	s := fmt.Sprintf("%s: node %d %q (%s), %s: %s", b.Graph, b.Index, b.Node, b.OpType, b.Step, b.Reason)
	if b.Fix != "" {
		s += "; " + b.Fix
	}
	return s
}

// BlockedError is returned by Convert when some nodes cannot be converted.
type BlockedError struct {
	From, To int
	Blockers []Blocker
}

func (e *BlockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d node(s) block the conversion from opset %d to %d:", len(e.Blockers), e.From, e.To)
	for _, bl := range e.Blockers {
		b.WriteString("\n  ")
		b.WriteString(bl.String())
	}
	return b.String()
}

// Unwrap gives the blockers in the one unsupported-op shape, so that
// callers classify a blocked conversion with errors.As on an
// *unsupported.OpsError (Stage StageConvert) without importing this
// package.
func (e *BlockedError) Unwrap() error {
	u := &unsupported.OpsError{Format: "ai.onnx", Stage: unsupported.StageConvert}
	for _, bl := range e.Blockers {
		o := unsupported.Op{Op: bl.OpType, Domain: bl.Domain, Node: bl.Node, Reason: bl.Step + ": " + bl.Reason}
		if bl.Domain == "" || bl.Domain == "ai.onnx" {
			o.Version = e.To
		}
		if bl.Fix != "" {
			o.Reason += "; " + bl.Fix
		}
		u.AddOp(o)
	}
	return u.Err()
}

// Result summarises a conversion.
type Result struct {
	FromOpset, ToOpset     int
	FromMLOpset, ToMLOpset int
	// Rewritten counts the nodes an adapter or expansion changed.
	Rewritten int
	// Notes are human-readable remarks (e.g. "Softmax \"sm\": axis
	// normalised to 1").
	Notes []string
}

// Convert rewrites m in place to the target opsets: it modifies its
// argument (nodes, values, types, initializers, opset imports). Callers
// that need the original model afterwards convert a copy made with
// m.Clone(). When some nodes block, it returns a *BlockedError listing all
// of them and m is left partly converted: convert a clone (or use Plan)
// when that matters.
func Convert(m *canonical.Model, opts Options) (*Result, error) {
	c, err := newConverter(m, opts)
	if err != nil {
		return nil, err
	}
	if !opts.NoInfer && c.from != c.to && (c.to < c.from || !fullyTyped(m.Graph)) {
		// Best effort: what inference cannot tell stays unknown, and the
		// adapters that need it say so. Going down, its constant folding
		// also lets inputs computed from static shapes become attributes.
		if res, err := infer.Infer(m, infer.Options{NoValueInfo: true}); err == nil {
			c.folded = res.Constants
		}
	}
	c.run()
	for g, set := range c.dropped {
		g.RemoveInitializers(func(v *canonical.Value) bool { return set[v] && len(v.Uses()) == 0 })
	}
	if len(c.blockers) > 0 {
		return c.result(), &BlockedError{From: c.from, To: c.to, Blockers: c.blockers}
	}
	if c.to != 0 {
		m.SetOpset("", int64(c.to))
	}
	if c.toML != 0 && m.Opset(canonical.MLDomain) != 0 {
		m.SetOpset(canonical.MLDomain, int64(c.toML))
	}
	if c.to != 0 {
		if ir := onnxspec.IRVersion("", c.to); m.IRVersion < ir {
			m.IRVersion = ir
		}
	}
	if c.toML != 0 && m.Opset(canonical.MLDomain) != 0 {
		if ir := onnxspec.IRVersion(onnxspec.DomainML, c.toML); m.IRVersion < ir {
			m.IRVersion = ir
		}
	}
	return c.result(), nil
}

// fullyTyped reports whether every node output of g (and its subgraphs)
// already has a tensor type with a shape, so inference has nothing to add.
func fullyTyped(g *canonical.Graph) bool {
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			if _, _, hasShape, ok := canonical.TensorTypeOf(o.Type); !ok || !hasShape {
				return false
			}
		}
		for _, sg := range n.Subgraphs() {
			if !fullyTyped(sg) {
				return false
			}
		}
	}
	return true
}

// Plan reports every node of m that blocks the target, without changing
// m: it converts a copy.
func Plan(m *canonical.Model, opts Options) ([]Blocker, error) {
	p, err := m.ToProto()
	if err != nil {
		return nil, fmt.Errorf("copying the model: %w", err)
	}
	cp, err := canonical.FromProto(p, m.Dir)
	if err != nil {
		return nil, fmt.Errorf("copying the model: %w", err)
	}
	_, err = Convert(cp, opts)
	var be *BlockedError
	if errors.As(err, &be) {
		return be.Blockers, nil
	}
	return nil, err
}

type converter struct {
	m         *canonical.Model
	from, to  int
	fromML    int
	toML      int
	blockers  []Blocker
	rewritten int
	notes     []string
	names     *canonical.Namer
	adapters  map[adapterKey]adapter
	// folded holds values that inference evaluated from static shapes.
	folded map[*canonical.Value]*canonical.Tensor
	// dropped are initializers left without consumers, removed at the end.
	dropped map[*canonical.Graph]map[*canonical.Value]bool
}

func newConverter(m *canonical.Model, opts Options) (*converter, error) {
	c := &converter{m: m, from: int(m.Opset("")), fromML: int(m.Opset(canonical.MLDomain))}
	c.to, c.toML = opts.To, opts.ToML
	if c.to == 0 {
		c.to = c.from
	}
	if c.toML == 0 {
		c.toML = c.fromML
	}
	if c.from == 0 && c.to != 0 {
		// A model with only ai.onnx.ml nodes may import no ai.onnx opset.
		c.from = c.to
	}
	if c.to != 0 && (c.to < 7 || c.to > onnxspec.MaxOpset("")) {
		return nil, fmt.Errorf("target opset %d is outside 7..%d", c.to, onnxspec.MaxOpset(""))
	}
	if c.from != 0 && c.from < 1 {
		return nil, fmt.Errorf("model imports ai.onnx opset %d", c.from)
	}
	if c.toML != 0 && (c.toML < 1 || c.toML > onnxspec.MaxOpset(onnxspec.DomainML)) {
		return nil, fmt.Errorf("target ai.onnx.ml opset %d is outside 1..%d", c.toML, onnxspec.MaxOpset(onnxspec.DomainML))
	}
	c.adapters = adapters()
	c.dropped = map[*canonical.Graph]map[*canonical.Value]bool{}
	c.names = canonical.NewNamer(m)
	return c, nil
}

func (c *converter) result() *Result {
	return &Result{FromOpset: c.from, ToOpset: c.to, FromMLOpset: c.fromML, ToMLOpset: c.toML,
		Rewritten: c.rewritten, Notes: c.notes}
}

func (c *converter) run() {
	c.convertGraph(c.m.Graph, "main")
	for _, f := range c.m.Functions {
		// Local functions import their own opsets; convert them when they
		// use the model's default opset version.
		if f.Body != nil && int(f.Opset("")) == c.from {
			c.convertGraph(f.Body, "function "+f.Name)
			for i := range f.OpsetImports {
				if f.OpsetImports[i].Domain == "" || f.OpsetImports[i].Domain == "ai.onnx" {
					f.OpsetImports[i].Version = int64(c.to)
				}
			}
		}
	}
}

func (c *converter) convertGraph(g *canonical.Graph, path string) {
	// Nodes may be replaced while walking: iterate over a snapshot.
	nodes := append([]*canonical.Node(nil), g.Nodes...)
	for idx, n := range nodes {
		for _, a := range n.Attributes {
			if a.G != nil {
				c.convertGraph(a.G, path+"/"+nodeLabel(n, idx)+"."+a.Name)
			}
			for k, sg := range a.Graphs {
				c.convertGraph(sg, fmt.Sprintf("%s/%s.%s[%d]", path, nodeLabel(n, idx), a.Name, k))
			}
		}
		c.convertNode(g, path, idx, n)
	}
}

func nodeLabel(n *canonical.Node, idx int) string {
	if n.Name != "" {
		return n.Name
	}
	return fmt.Sprintf("%s_%d", n.OpType, idx)
}

// convertNode walks n through each version step between the source and the
// target opset of its domain.
func (c *converter) convertNode(g *canonical.Graph, path string, idx int, n *canonical.Node) {
	dom := n.Domain
	if dom == "ai.onnx" {
		dom = ""
	}
	var from, to int
	switch dom {
	case "":
		from, to = c.from, c.to
	case onnxspec.DomainML:
		from, to = c.fromML, c.toML
	default:
		return // custom domains are left alone
	}
	if from == to {
		return
	}
	block := func(step string, err error) {
		c.blockers = append(c.blockers, Blocker{Graph: path, Node: n.Name, OpType: n.OpType, Domain: n.Domain,
			Index: idx, Step: step, Reason: err.Error(), Fix: fixOf(err), Kind: kindOf(n.OpType, err)})
	}
	cur, ok := onnxspec.Lookup(dom, n.OpType, from)
	if !ok {
		block(fmt.Sprintf("%s at opset %d", n.OpType, from), blocked("fix the model: the op or its domain is wrong", "operator %s does not exist at the model's opset %d", n.OpType, from))
		return
	}
	sc := &stepCtx{c: c, g: g, n: n, path: path, idx: idx}
	if to > from {
		for {
			op := n.OpType
			next := nextVersion(dom, op, cur.SinceVersion, to)
			if next == nil {
				return
			}
			sc.old, sc.new = cur, next
			if err := c.step(sc, true); err != nil {
				block(fmt.Sprintf("%s %d -> %d", op, cur.SinceVersion, next.SinceVersion), err)
				return
			}
			if sc.replaced != nil {
				c.rewritten++ // the node became other nodes, valid at the target
				return
			}
			cur = next
			if n.OpType != op {
				// Replaced operator (Upsample -> Resize, Scatter ->
				// ScatterElements): go on from the new op's version.
				c.rewritten++
				s, ok := onnxspec.Lookup(dom, n.OpType, next.SinceVersion)
				if !ok {
					block(fmt.Sprintf("%s -> %s", op, n.OpType), errors.New("internal: no schema for the replacement op"))
					return
				}
				cur = s
			}
		}
	}
	// Down: walk the versions from the one in force down to the one in force
	// at the target.
	for cur.SinceVersion > to {
		op := n.OpType
		prev, ok := onnxspec.Lookup(dom, op, cur.SinceVersion-1)
		if !ok || prev.Deprecated {
			// The op does not exist below cur: expand it into older ops.
			sc.old, sc.new = nil, cur
			if err := c.expand(sc, to); err != nil {
				block(fmt.Sprintf("%s %d -> opset %d", op, cur.SinceVersion, to), err)
				return
			}
			c.rewritten++
			if sc.replaced != nil {
				return
			}
			// Renamed to an older op (Resize -> Upsample): go on with it.
			s, ok := onnxspec.Lookup(dom, n.OpType, cur.SinceVersion-1)
			if !ok || n.OpType == op {
				block(fmt.Sprintf("%s %d -> opset %d", op, cur.SinceVersion, to), errors.New("internal: expansion left the node unchanged"))
				return
			}
			cur = s
			continue
		}
		sc.old, sc.new = prev, cur
		if err := c.step(sc, false); err != nil {
			block(fmt.Sprintf("%s %d -> %d", op, cur.SinceVersion, prev.SinceVersion), err)
			return
		}
		if sc.replaced != nil {
			c.rewritten++
			return
		}
		cur = prev
	}
}

// nextVersion returns the first version of op after since that is in force
// at or below to, or nil.
func nextVersion(dom, op string, since, to int) *onnxspec.Schema {
	for _, v := range onnxspec.Versions(dom, op) {
		if v.SinceVersion > since && v.SinceVersion <= to {
			return v
		}
	}
	return nil
}

// stepCtx is what an adapter sees: one node, one version step.
type stepCtx struct {
	c    *converter
	g    *canonical.Graph
	n    *canonical.Node
	path string
	idx  int
	// old is the older schema and new the newer one of the step (going up
	// old -> new, going down new -> old).
	old, new *onnxspec.Schema
	// replaced is set by an adapter that replaced n by other nodes that
	// are already valid at the target opset.
	replaced []*canonical.Node
}

// fixError is a blocking error with a suggestion and the kind of
// blocker it makes (see kindOf).
type fixError struct {
	msg, fix, kind string
}

func (e *fixError) Error() string { return e.msg }

// kindNoExpansion marks an operator missing below its introduction:
// KindNoAdapter for the operators ONNX defines as functions, else
// KindNotExpressible.
const kindNoExpansion = "no-expansion"

// blocked is a blocker with no equivalent at the target
// (KindNotExpressible).
func blocked(fix, format string, args ...any) error {
	return &fixError{msg: fmt.Sprintf(format, args...), fix: fix}
}

// needShapes is a blocker that shape inference lifts (KindNeedsShapes):
// the fix asks to run 'onnxconv infer' so that what is known.
func needShapes(what, format string, args ...any) error {
	return &fixError{msg: fmt.Sprintf(format, args...), fix: "run 'onnxconv infer' first so " + what, kind: KindNeedsShapes}
}

// noAdapter is a blocker for which an equivalent exists but onnxconv has
// no rule yet (KindNoAdapter).
func noAdapter(fix, format string, args ...any) error {
	return &fixError{msg: fmt.Sprintf(format, args...), fix: fix, kind: KindNoAdapter}
}

// noExpansion is a blocker for an operator that onnxconv cannot expand
// below its introduction (see kindNoExpansion).
func noExpansion(fix, format string, args ...any) error {
	return &fixError{msg: fmt.Sprintf(format, args...), fix: fix, kind: kindNoExpansion}
}

func fixOf(err error) string {
	var fe *fixError
	if errors.As(err, &fe) {
		return fe.fix
	}
	return ""
}

// step applies one version step to sc.n.
func (c *converter) step(sc *stepCtx, up bool) error {
	key := adapterKey{domain: sc.new.Domain, op: sc.new.Name, since: sc.new.SinceVersion, up: up}
	if a, ok := c.adapters[key]; ok {
		if err := a(sc); err != nil {
			return err
		}
		if sc.replaced == nil {
			return c.checkTypes(sc, up)
		}
		return nil
	}
	if sc.new.Deprecated && up {
		return blocked("no replacement is known", "%s is removed at opset %d", sc.new.Name, sc.new.SinceVersion)
	}
	if err := genericStep(sc, up); err != nil {
		return err
	}
	return c.checkTypes(sc, up)
}

// checkTypes blocks a downgrade when the node uses an element type that the
// older version does not allow. Unknown types pass.
func (c *converter) checkTypes(sc *stepCtx, up bool) error {
	if up {
		return nil
	}
	s := sc.old
	check := func(params []onnxspec.FormalParameter, vals []*canonical.Value, kind string) error {
		for i, v := range vals {
			if v == nil || v.Type == nil {
				continue
			}
			pi := i
			if pi >= len(params) {
				if len(params) == 0 || params[len(params)-1].Option != onnxspec.Variadic {
					continue
				}
				pi = len(params) - 1
			}
			ts := typeString(v)
			if ts == "" {
				continue
			}
			allowed := allowedTypes(s, params[pi].TypeStr)
			if allowed == nil {
				continue
			}
			if !contains(allowed, ts) {
				return blocked(fmt.Sprintf("cast %s %q to a type %s-%d accepts, or keep opset >= %d", kind, v.Name, s.Name, s.SinceVersion, sc.new.SinceVersion),
					"%s %q is %s, which %s-%d does not accept (%s)", kind, v.Name, ts, s.Name, s.SinceVersion, strings.Join(allowed, ", "))
			}
		}
		return nil
	}
	if err := check(s.Inputs, sc.n.Inputs, "input"); err != nil {
		return err
	}
	return check(s.Outputs, sc.n.Outputs, "output")
}

func allowedTypes(s *onnxspec.Schema, typeStr string) []string {
	if strings.Contains(typeStr, "(") {
		return []string{typeStr}
	}
	if tc, ok := s.TypeConstraint(typeStr); ok {
		return tc.Allowed
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// typeString renders a value's type as the spec writes it
// ("tensor(float)"), or "" when unknown.
func typeString(v *canonical.Value) string {
	tp := v.Type
	if tp == nil {
		return ""
	}
	if tt := tp.GetTensorType(); tt != nil {
		if tt.GetElemType() == 0 {
			return ""
		}
		return "tensor(" + elemName(canonical.DataType(tt.GetElemType())) + ")"
	}
	return ""
}

func elemName(dt canonical.DataType) string {
	switch dt {
	case canonical.Float:
		return "float"
	case canonical.Double:
		return "double"
	case canonical.Float16:
		return "float16"
	case canonical.BFloat16:
		return "bfloat16"
	}
	return strings.ToLower(dt.String())
}
