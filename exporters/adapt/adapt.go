// Package adapt fits a canonical ONNX model to a target runtime profile
// (exporters/profiles): it picks the target opset, converts with
// opset/convert, expands the operators the target lacks where an
// expansion exists, sets the IR version the opset needs and the target
// allows, and finally checks that the result uses only what the target
// supports, listing every violation with its node: operators, element
// types and the target's documented restrictions, decided per node from
// the model (kernel rank, attributes, constant inputs, ranks) by the
// profile's rules. For an ONNX Runtime target the standard LLM ops become
// the contrib ops ONNX Runtime runs with fused kernels (toContrib); for a
// target without them the contrib ops become standard ops (fromContrib).
// Writing the result (external data, files) is the exporter's:
// exporters/onnx.
//
// Nothing changes silently: every rewritten node is listed in the Report
// ("Gelu \"blk.gelu\": expanded into Erf/Mul/Add (opset 17 lacks Gelu)").
package adapt

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/infer"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/onnxspec"
	"github.com/onnxconv/onnxconv/opset/convert"
)

// Options tune Adapt and the exporter (exporters/onnx), which takes the
// same options.
type Options struct {
	// Opset forces the target ai.onnx opset; it must be in the profile's
	// range. 0 picks the model's opset when in range, else the nearest.
	Opset int
	// MLOpset forces the target ai.onnx.ml opset (0: same rule).
	MLOpset int
	// ExternalData forces external data when the exporter saves; models
	// over the 2 GB protobuf limit always get it. Adapt ignores it.
	ExternalData bool
	// ExternalAbove is the total size of tensor data from which the
	// exporter saves with external data (0: just under the 2 GiB protobuf
	// limit). Adapt ignores it.
	ExternalAbove int64
	// ExternalThreshold is the tensor size from which external data is
	// used (0: canonical.DefaultExternalThreshold). Adapt ignores it.
	ExternalThreshold int64
	// NoInfer stops Adapt from running shape inference when the
	// conversion needs ranks that the model does not declare.
	NoInfer bool
	// AllowViolations makes the exporter return (and write) the model
	// even when the target does not support all of it (the report still
	// lists the violations). Adapt ignores it.
	AllowViolations bool
}

// Action is one thing done to one node.
type Action struct {
	Graph  string `json:"graph"`
	Node   string `json:"node"`
	OpType string `json:"op_type"`
	Index  int    `json:"index"`
	What   string `json:"what"`
}

func (a Action) String() string { return fmt.Sprintf("%s %q: %s", a.OpType, a.Node, a.What) }

// Violation is one thing in the adapted model that the target does not
// support. Warnings (e.g. an operator that falls back to a slower device,
// a documented restriction to check) do not make the export fail.
type Violation struct {
	Graph   string `json:"graph"`
	Node    string `json:"node,omitempty"`
	OpType  string `json:"op_type,omitempty"`
	Domain  string `json:"domain,omitempty"`
	Index   int    `json:"index"`
	Problem string `json:"problem"`
	Fix     string `json:"fix,omitempty"`
	Warning bool   `json:"warning,omitempty"`
}

func (v Violation) String() string {
	var b strings.Builder
	if v.Warning {
		b.WriteString("warning: ")
	}
	if v.OpType != "" {
		fmt.Fprintf(&b, "%s: node %d %q (%s): %s", v.Graph, v.Index, v.Node, v.OpType, v.Problem)
	} else {
		fmt.Fprintf(&b, "%s: %s", v.Graph, v.Problem)
	}
	if v.Fix != "" {
		b.WriteString("; ")
		b.WriteString(v.Fix)
	}
	return b.String()
}

// Report says what Adapt did and what is left.
type Report struct {
	Profile       string `json:"profile"`
	FromOpset     int    `json:"from_opset"`
	ToOpset       int    `json:"to_opset"`
	FromMLOpset   int    `json:"from_ml_opset,omitempty"`
	ToMLOpset     int    `json:"to_ml_opset,omitempty"`
	FromIRVersion int64  `json:"from_ir_version"`
	ToIRVersion   int64  `json:"to_ir_version"`
	// ExternalData is set by the exporter when it saves the model with
	// external data (Adapt leaves it false).
	ExternalData bool `json:"external_data"`
	// Converted is false when the conversion was blocked and the model
	// left unchanged.
	Converted  bool        `json:"converted"`
	Actions    []Action    `json:"actions,omitempty"`
	Violations []Violation `json:"violations,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
	// Tolerance names the verification profile a rewrite that changes
	// the numbers by design needs ("": none): "int8" when MatMulNBits
	// nodes of accuracy_level 4 (activations quantized to int8) became
	// float32 DequantizeLinear + MatMul.
	Tolerance string `json:"tolerance,omitempty"`
}

// OK reports whether the target supports the adapted model (warnings
// allowed).
func (r *Report) OK() bool { return len(r.Errors()) == 0 }

// Errors returns the violations that are not warnings.
func (r *Report) Errors() []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if !v.Warning {
			out = append(out, v)
		}
	}
	return out
}

// WriteText writes the report for people: a header, Lines and the
// verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.Header())
	b.WriteString("\n")
	for _, l := range r.Lines() {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if r.OK() {
		b.WriteString("result: supported by the target\n")
	} else {
		fmt.Fprintf(&b, "result: %d violation(s): the target will not load this model as is\n", len(r.Errors()))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Header is the first line of the report: "target onnxruntime-1.15:
// opset 21 -> 19, IR 10 -> 8".
func (r *Report) Header() string {
	var b strings.Builder
	fmt.Fprintf(&b, "target %s: opset %d -> %d", r.Profile, r.FromOpset, r.ToOpset)
	if r.FromMLOpset != 0 || r.ToMLOpset != 0 {
		fmt.Fprintf(&b, ", ai.onnx.ml %d -> %d", r.FromMLOpset, r.ToMLOpset)
	}
	fmt.Fprintf(&b, ", IR %d -> %d", r.FromIRVersion, r.ToIRVersion)
	if r.ExternalData {
		b.WriteString(", external data")
	}
	return b.String()
}

// Lines are the report's actions, notes and violations as lines for
// people. Actions, and warnings, that say the same of several nodes of one
// operator become one line ("18 Identity nodes (\"a\", \"b\", \"c\" and 15
// more): ..."); errors keep one line per node. Actions and Violations keep
// every node for programs.
func (r *Report) Lines() []string {
	var out []string
	type group struct {
		first int
		nodes []string
	}
	agroups := map[string]*group{}
	var aorder []string
	for i, a := range r.Actions {
		k := a.OpType + "\x00" + a.What
		g := agroups[k]
		if g == nil {
			g = &group{first: i}
			agroups[k] = g
			aorder = append(aorder, k)
		}
		g.nodes = append(g.nodes, nodeLabel(a.Node, a.OpType, a.Index))
	}
	for _, k := range aorder {
		g := agroups[k]
		a := r.Actions[g.first]
		if len(g.nodes) == 1 {
			out = append(out, a.String())
			continue
		}
		out = append(out, fmt.Sprintf("%d %s nodes (%s): %s", len(g.nodes), a.OpType, nodeList(g.nodes), a.What))
	}
	for _, n := range r.Notes {
		out = append(out, "note: "+n)
	}
	vgroups := map[string]*group{}
	var vorder []string
	graphs := map[string]map[string]bool{}
	for i, v := range r.Violations {
		k := fmt.Sprint(i)
		if v.Warning && v.OpType != "" {
			k = "w\x00" + v.OpType + "\x00" + v.Domain + "\x00" + v.Problem + "\x00" + v.Fix
		}
		g := vgroups[k]
		if g == nil {
			g = &group{first: i}
			vgroups[k] = g
			vorder = append(vorder, k)
			graphs[k] = map[string]bool{}
		}
		g.nodes = append(g.nodes, nodeLabel(v.Node, v.OpType, v.Index))
		graphs[k][v.Graph] = true
	}
	for _, k := range vorder {
		g := vgroups[k]
		v := r.Violations[g.first]
		if len(g.nodes) == 1 {
			out = append(out, v.String())
			continue
		}
		where := v.Graph
		if len(graphs[k]) > 1 {
			where = fmt.Sprintf("%d graphs", len(graphs[k]))
		}
		line := fmt.Sprintf("warning: %s: %d %s nodes (%s): %s", where, len(g.nodes), v.OpType, nodeList(g.nodes), v.Problem)
		if v.Fix != "" {
			line += "; " + v.Fix
		}
		out = append(out, line)
	}
	return out
}

// nodeLabel is a node's quoted name, or "OpType_index" for a node without
// one.
func nodeLabel(name, op string, idx int) string {
	if name == "" {
		return fmt.Sprintf("%s_%d", op, idx)
	}
	return fmt.Sprintf("%q", name)
}

// nodeList names the first three nodes and counts the others.
func nodeList(nodes []string) string {
	const shown = 3
	if len(nodes) <= shown {
		return strings.Join(nodes, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(nodes[:shown], ", "), len(nodes)-shown)
}

// UnsupportedError is returned when the adapted model (or the conversion
// towards it) still uses something the target does not support. It is the
// target's report (graph paths, indexes, fixes); Unwrap gives the same in
// the one unsupported-op shape, which callers classify with errors.As.
type UnsupportedError struct {
	Profile    string
	Violations []Violation
}

func (e *UnsupportedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d violation(s) of target %s:", len(e.Violations), e.Profile)
	for _, v := range e.Violations {
		b.WriteString("\n  ")
		b.WriteString(v.String())
	}
	return b.String()
}

// Unwrap gives the violations as an *unsupported.OpsError (Stage
// StageTarget, Format the profile): one entry per operator, and one per
// problem of the model as a whole (Op "").
func (e *UnsupportedError) Unwrap() error {
	u := &unsupported.OpsError{Format: e.Profile, Stage: unsupported.StageTarget}
	for _, v := range e.Violations {
		if v.Warning {
			continue
		}
		reason := v.Problem
		if v.Fix != "" {
			reason += "; " + v.Fix
		}
		u.AddOp(unsupported.Op{Op: v.OpType, Domain: v.Domain, Node: v.Node, Reason: reason})
	}
	return u.Err()
}

// Adapt rewrites m in place for profile p: it modifies its argument.
// Callers that need the original model afterwards (to verify the result
// against it, for one) adapt a copy made with m.Clone(). The report is returned whenever
// the model was examined; the error is an *UnsupportedError when the model
// cannot be fitted to the target (the report lists why), or another error
// for bad arguments. When the conversion itself is blocked m is left
// unchanged, but for contrib ops already made standard (fromContrib).
func Adapt(m *canonical.Model, p *profiles.Profile, opts Options) (*Report, error) {
	if m == nil || m.Graph == nil {
		return nil, errors.New("adapt: model has no graph")
	}
	if p == nil {
		return nil, errors.New("adapt: no target profile")
	}
	r := &Report{Profile: p.Name, FromOpset: int(m.Opset("")), FromMLOpset: int(m.Opset(canonical.MLDomain)), FromIRVersion: m.IRVersion}
	to, err := pickOpset(r.FromOpset, opts.Opset, p.MinOpset, p.MaxOpset, "ai.onnx", p.Name)
	if err != nil {
		return nil, err
	}
	toML := r.FromMLOpset
	if r.FromMLOpset != 0 && p.MLMaxOpset != 0 {
		if toML, err = pickOpset(r.FromMLOpset, opts.MLOpset, p.MLMinOpset, p.MLMaxOpset, "ai.onnx.ml", p.Name); err != nil {
			return nil, err
		}
	}
	r.ToOpset, r.ToMLOpset = to, toML

	// ONNX Runtime's contrib ops become standard ops for a target
	// without them, before the conversion expands those for its opset.
	if err := fromContrib(r, m, p); err != nil {
		return r, fmt.Errorf("adapt to %s: %w", p.Name, err)
	}
	// Dry run first: a blocked conversion leaves m as it was.
	copts := convert.Options{To: to, ToML: toML}
	if r.FromMLOpset == 0 {
		copts.ToML = 0
	}
	blockers, err := convert.Plan(m, copts)
	if err != nil {
		return nil, fmt.Errorf("adapt to %s: planning the conversion to opset %d: %w", p.Name, to, err)
	}
	if needsShapes(blockers) && !opts.NoInfer {
		// Some adapters need ranks (negative axes going below opset 11):
		// infer them and plan again.
		res, err := infer.Infer(m, infer.Options{})
		if err == nil {
			r.Notes = append(r.Notes, fmt.Sprintf("ran shape inference so that ranks are known (%d value_info added)", res.Added))
			if blockers, err = convert.Plan(m, copts); err != nil {
				return nil, fmt.Errorf("adapt to %s: planning the conversion to opset %d: %w", p.Name, to, err)
			}
		}
	}
	if len(blockers) > 0 {
		for _, b := range blockers {
			r.Violations = append(r.Violations, Violation{Graph: b.Graph, Node: b.Node, OpType: b.OpType, Domain: b.Domain, Index: b.Index,
				Problem: fmt.Sprintf("cannot convert to opset %d (%s): %s", to, b.Step, b.Reason), Fix: b.Fix})
		}
		r.ToIRVersion = m.IRVersion
		return r, &UnsupportedError{Profile: p.Name, Violations: r.Violations}
	}

	before := snapshot(m)
	res, err := convert.Convert(m, copts)
	if err != nil {
		return r, fmt.Errorf("adapt to %s: converting to opset %d: %w", p.Name, to, err)
	}
	r.Converted = true
	r.Notes = append(r.Notes, res.Notes...)
	describeConversion(r, before, m, to)

	// Operators that exist at the target opset but that the target lacks:
	// expand them where the converter knows an expansion.
	names := canonical.NewNamer(m)
	expandUnsupported(r, m, p, to, names)
	if runsContrib(p) {
		if err := toContrib(r, m, names); err != nil {
			return r, fmt.Errorf("adapt to %s: %w", p.Name, err)
		}
	}
	fitKernels(r, m, p, names)

	setIRVersion(r, m, p, to, toML)
	r.ToIRVersion = m.IRVersion

	check(r, m, p)
	if !r.OK() {
		return r, &UnsupportedError{Profile: p.Name, Violations: r.Errors()}
	}
	return r, nil
}

// needsShapes reports whether some blocker is lifted by shape inference
// (convert.KindNeedsShapes).
func needsShapes(bs []convert.Blocker) bool {
	for _, b := range bs {
		if b.Kind == convert.KindNeedsShapes {
			return true
		}
	}
	return false
}

// pickOpset chooses the target version: forced, or the model's when in
// range, else the nearest bound.
func pickOpset(cur, forced, lo, hi int, domain, profile string) (int, error) {
	if forced != 0 {
		if forced < lo || forced > hi {
			return 0, fmt.Errorf("adapt: %s opset %d is outside %s's range %d..%d", domain, forced, profile, lo, hi)
		}
		return forced, nil
	}
	switch {
	case cur == 0:
		return 0, nil
	case cur > hi:
		return hi, nil
	case cur < lo:
		return lo, nil
	}
	return cur, nil
}

// nodeInfo is what snapshot remembers of a node.
type nodeInfo struct {
	graph  string
	index  int
	name   string
	opType string
	domain string
}

type snap struct {
	nodes map[*canonical.Node]nodeInfo
	order []*canonical.Node
}

func snapshot(m *canonical.Model) *snap {
	s := &snap{nodes: map[*canonical.Node]nodeInfo{}}
	walk(m.Graph, "main", func(g *canonical.Graph, path string, idx int, n *canonical.Node) {
		s.nodes[n] = nodeInfo{graph: path, index: idx, name: n.Name, opType: n.OpType, domain: n.Domain}
		s.order = append(s.order, n)
	})
	return s
}

// walk calls fn on every node of g and of its subgraphs, subgraphs first
// (like the converter); see canonical.WalkFrom.
func walk(g *canonical.Graph, path string, fn func(g *canonical.Graph, path string, idx int, n *canonical.Node)) {
	_ = canonical.WalkFrom(g, path, func(g *canonical.Graph, path string, idx int, n *canonical.Node) error {
		fn(g, path, idx, n)
		return nil
	})
}

// describeConversion lists what the converter did to each node: nodes it
// replaced (expanded) and nodes whose operator changed.
func describeConversion(r *Report, before *snap, m *canonical.Model, to int) {
	after := map[*canonical.Node]bool{}
	var added []*canonical.Node
	walk(m.Graph, "main", func(g *canonical.Graph, path string, idx int, n *canonical.Node) {
		after[n] = true
		if _, ok := before.nodes[n]; !ok {
			added = append(added, n)
		}
	})
	claimed := map[*canonical.Node]bool{}
	kept := 0
	for _, n := range before.order {
		info := before.nodes[n]
		if after[n] {
			kept++
			if n.OpType != info.opType {
				r.Actions = append(r.Actions, Action{Graph: info.graph, Node: info.name, OpType: info.opType, Index: info.index,
					What: fmt.Sprintf("replaced by %s (opset %d)", n.OpType, to)})
			}
			continue
		}
		var ops []string
		for _, a := range added {
			if claimed[a] {
				continue
			}
			base := info.name
			if base == "" {
				base = info.opType // the converter names new nodes after the op then
			}
			if a.Name == info.name && info.name != "" || strings.HasPrefix(a.Name, base+"_") {
				claimed[a] = true
				ops = append(ops, a.OpType)
			}
		}
		why := fmt.Sprintf("opset %d lacks %s", to, info.opType)
		if s, ok := onnxspec.Lookup(info.domain, info.opType, to); ok && !s.Deprecated {
			why = fmt.Sprintf("rewritten for opset %d", to)
		}
		r.Actions = append(r.Actions, Action{Graph: info.graph, Node: info.name, OpType: info.opType, Index: info.index,
			What: fmt.Sprintf("expanded into %s (%s)", opList(ops), why)})
	}
	if r.FromOpset != to && to != 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d node(s) moved from opset %d to %d as they are (adapters applied where a version changed)", kept, r.FromOpset, to))
	}
}

// opList writes distinct op types in first-seen order: "Erf/Mul/Add".
func opList(ops []string) string {
	seen := map[string]bool{}
	var out []string
	for _, o := range ops {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return "other operators"
	}
	return strings.Join(out, "/")
}

// setIRVersion sets the IR version: raised towards the one the opsets
// were released with, lowered to what the target reads. Element types
// that need a newer IR version set a hard floor; the opset pairing does
// not (ONNX Runtime 1.15 reads opset 19 at IR 8).
func setIRVersion(r *Report, m *canonical.Model, p *profiles.Profile, to, toML int) {
	want := int64(3)
	if to != 0 {
		want = profiles.IRVersionForOpset(to)
	}
	if toML != 0 {
		want = max(want, profiles.IRVersionForMLOpset(toML))
	}
	floor := typesIRVersion(m)
	want = max(want, floor)
	switch {
	case m.IRVersion < want:
		m.IRVersion = max(min(want, p.MaxIRVersion), floor, m.IRVersion)
	case m.IRVersion > p.MaxIRVersion:
		m.IRVersion = max(p.MaxIRVersion, floor)
	}
	if m.IRVersion != r.FromIRVersion {
		r.Notes = append(r.Notes, fmt.Sprintf("IR version %d -> %d (opset %d was released with IR %d; %s reads up to %d)", r.FromIRVersion, m.IRVersion, to, want, p.Name, p.MaxIRVersion))
	}
}

// irOfType is the IR version that introduced an element type (onnx.proto
// comments: float8 in IR 9, 4-bit ints in 10, float4 in 11, 2-bit ints
// and float8e8m0 in 12).
func irOfType(dt canonical.DataType) int64 {
	switch dt.String() {
	case "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ":
		return 9
	case "UINT4", "INT4":
		return 10
	case "FLOAT4E2M1":
		return 11
	case "FLOAT8E8M0", "UINT2", "INT2":
		return 12
	}
	return 3
}

// typesIRVersion is the highest IR version the element types of the
// model's values need.
func typesIRVersion(m *canonical.Model) int64 {
	v := int64(3)
	forEachValue(m.Graph, "main", func(path, kind string, val *canonical.Value) {
		if dt, ok := elemType(val); ok {
			v = max(v, irOfType(dt))
		}
	})
	return v
}

func elemType(v *canonical.Value) (canonical.DataType, bool) {
	if v.Const != nil {
		return v.Const.DataType, true
	}
	if v.Type == nil {
		return 0, false
	}
	dt, _, _, ok := canonical.TensorTypeOf(v.Type)
	return dt, ok
}

// forEachValue calls fn on every declared value (inputs, outputs,
// initializers, value_info) of g and its subgraphs.
func forEachValue(g *canonical.Graph, path string, fn func(path, kind string, v *canonical.Value)) {
	_ = canonical.WalkGraphsFrom(g, path, func(g *canonical.Graph, path string) error {
		for _, v := range g.Inputs {
			fn(path, "input", v)
		}
		for _, v := range g.Outputs {
			fn(path, "output", v)
		}
		for _, v := range g.Initializers {
			fn(path, "initializer", v)
		}
		for _, v := range g.ValueInfo {
			fn(path, "value", v)
		}
		return nil
	})
}

// typeName is the ONNX spelling of an element type ("float", "double").
func typeName(dt canonical.DataType) string { return strings.ToLower(dt.String()) }

// check lists everything in m that p does not support.
func check(r *Report, m *canonical.Model, p *profiles.Profile) {
	to := int(m.Opset(""))
	toML := int(m.Opset(canonical.MLDomain))
	if to != 0 && (to < p.MinOpset || to > p.MaxOpset) {
		r.Violations = append(r.Violations, Violation{Graph: "model", Problem: fmt.Sprintf("ai.onnx opset %d is outside %s's range %d..%d", to, p.Name, p.MinOpset, p.MaxOpset),
			Fix: fmt.Sprintf("convert to an opset in %d..%d", p.MinOpset, p.MaxOpset)})
	}
	if toML != 0 && p.MLMaxOpset != 0 && (toML < p.MLMinOpset || toML > p.MLMaxOpset) {
		r.Violations = append(r.Violations, Violation{Graph: "model", Problem: fmt.Sprintf("ai.onnx.ml opset %d is outside %s's range %d..%d", toML, p.Name, p.MLMinOpset, p.MLMaxOpset)})
	}
	if m.IRVersion > p.MaxIRVersion {
		r.Violations = append(r.Violations, Violation{Graph: "model", Problem: fmt.Sprintf("IR version %d is above %s's maximum %d", m.IRVersion, p.Name, p.MaxIRVersion),
			Fix: "the model uses element types or opsets that need a newer IR version than the target reads"})
	}
	walk(m.Graph, "main", func(g *canonical.Graph, path string, idx int, n *canonical.Node) {
		dom := n.Domain
		if dom == "ai.onnx" {
			dom = ""
		}
		if dom != "" && dom != canonical.MLDomain && m.Function(n.Domain, n.OpType, n.Overload) != nil {
			return // a call of a model-local function: its body is checked below
		}
		if dom == "" && n.OpType == "Constant" && p.Fallback {
			return // folded into an initializer when the session loads
		}
		var ver int
		switch dom {
		case "":
			ver = to
		case canonical.MLDomain:
			ver = toML
		default:
			ver = int(m.Opset(dom))
		}
		since := ver
		if dom == "" || dom == canonical.MLDomain {
			s, ok := onnxspec.Lookup(dom, n.OpType, ver)
			if !ok {
				r.Violations = append(r.Violations, Violation{Graph: path, Node: n.Name, OpType: n.OpType, Domain: n.Domain, Index: idx,
					Problem: fmt.Sprintf("%s does not exist at opset %d", n.OpType, ver), Fix: "fix the model"})
				return
			}
			since = s.SinceVersion
		}
		if ok, why := p.Supports(dom, n.OpType, since); !ok {
			v := Violation{Graph: path, Node: n.Name, OpType: n.OpType, Domain: n.Domain, Index: idx, Problem: why, Warning: p.Fallback}
			switch {
			case p.Fallback:
				v.Fix = "runs on the fallback (CPU) provider: slower, with copies between devices"
			case dom != "" && dom != canonical.MLDomain:
				v.Fix = "replace the custom operator before export, or pick a target that implements its domain"
			default:
				v.Fix = fixFor(p, dom, n.OpType, since)
			}
			r.Violations = append(r.Violations, v)
			return
		}
		checkRestrictions(r, p, dom, g, path, idx, n)
	})
	for _, f := range m.Functions {
		if f.Body == nil {
			continue
		}
		walk(f.Body, "function "+f.Name, func(g *canonical.Graph, path string, idx int, n *canonical.Node) {
			dom := n.Domain
			if dom == "ai.onnx" {
				dom = ""
			}
			if dom != "" && dom != canonical.MLDomain {
				return
			}
			ver := int(f.Opset(dom))
			s, ok := onnxspec.Lookup(dom, n.OpType, ver)
			if !ok {
				return
			}
			if ok, why := p.Supports(dom, n.OpType, s.SinceVersion); !ok {
				r.Violations = append(r.Violations, Violation{Graph: path, Node: n.Name, OpType: n.OpType, Domain: n.Domain, Index: idx, Problem: why, Warning: p.Fallback})
			}
		})
	}
	if p.Types != nil {
		seen := map[string]bool{}
		forEachValue(m.Graph, "main", func(path, kind string, v *canonical.Value) {
			dt, ok := elemType(v)
			if !ok || seen[path+"\x00"+v.Name] {
				return
			}
			seen[path+"\x00"+v.Name] = true
			name := typeName(dt)
			why := p.Types.Limited[name]
			switch {
			case p.TypeUnsupported(name):
				r.Violations = append(r.Violations, Violation{Graph: path, Problem: fmt.Sprintf("%s %q has element type %s, which %s does not support", kind, v.Name, name, p.Name),
					Fix: "cast it to a supported type before export"})
			case why == "":
			case p.Types.Where[name] == "":
				r.Violations = append(r.Violations, Violation{Graph: path, Problem: fmt.Sprintf("%s %q has element type %s: %s %s", kind, v.Name, name, p.Name, why),
					Fix: "check that the values fit", Warning: true})
			case !typeAllowedWhere(p.Types.Where[name], m.Graph, path, v):
				r.Violations = append(r.Violations, Violation{Graph: path, Problem: fmt.Sprintf("%s %q has element type %s: %s accepts %s %s", kind, v.Name, name, p.Name, name, why),
					Fix: "cast it to a supported type, or quantize through QuantizeLinear/DequantizeLinear"})
			}
		})
	}
}

// fixFor suggests what to do about an unsupported operator version.
func fixFor(p *profiles.Profile, dom, op string, since int) string {
	if !p.Lists(dom, op) {
		return fmt.Sprintf("onnxconv has no expansion of %s into operators %s runs: replace it in the source model or use a custom plugin", op, p.Name)
	}
	// Listed, but another version: find the opsets where a supported
	// version is in force.
	var ok []string
	for n := p.MinOpset; n <= p.MaxOpset; n++ {
		if s, found := onnxspec.Lookup(dom, op, n); found {
			if yes, _ := p.Supports(dom, op, s.SinceVersion); yes {
				ok = append(ok, fmt.Sprint(n))
			}
		}
	}
	if len(ok) > 0 {
		return fmt.Sprintf("export at an opset where %s has a supported version (%s)", op, compactInts(ok))
	}
	return fmt.Sprintf("no opset in %s's range has a version of %s it runs", p.Name, op)
}

func compactInts(s []string) string {
	if len(s) <= 3 {
		return strings.Join(s, ", ")
	}
	return s[0] + ".." + s[len(s)-1]
}

// Opset moves m to the opsets of opts with the version converter
// (opset/convert) and reports what it did to each node, as Adapt does for
// a target profile, without a profile's checks. Like Adapt it changes m:
// Clone it first to keep the original. A blocked conversion is the
// converter's *convert.BlockedError.
func Opset(m *canonical.Model, opts convert.Options) (*Report, error) {
	r := &Report{FromOpset: int(m.Opset("")), FromMLOpset: int(m.Opset("ai.onnx.ml")), FromIRVersion: m.IRVersion}
	before := snapshot(m)
	res, err := convert.Convert(m, opts)
	if err != nil {
		return r, err
	}
	r.Converted = true
	r.ToOpset, r.ToMLOpset = res.ToOpset, res.ToMLOpset
	r.Notes = append(r.Notes, res.Notes...)
	describeConversion(r, before, m, res.ToOpset)
	r.ToIRVersion = m.IRVersion
	return r, nil
}
