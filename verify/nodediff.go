package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// NodeDiff is the structural comparison, at the first divergent node of A,
// of that node with its counterpart in B: the node of B that produces a
// value of the same name as one of the node's outputs.
type NodeDiff struct {
	// Counterpart is false when B has no node producing any of the
	// outputs' names (B holds them as graph inputs or initializers); the
	// B fields are then empty and Note says what B has instead.
	Counterpart bool `json:"counterpart"`
	// BNode is the counterpart's name (or "#index Op" when unnamed).
	BNode string `json:"b_node,omitempty"`
	// Op types, domains ("ai.onnx" for the default domain) and the
	// version of the operator in force (the schema's since_version; 0 when
	// the registry does not know the op). Opset is the model's import of
	// the node's domain.
	OpTypeA  string `json:"op_type_a"`
	OpTypeB  string `json:"op_type_b,omitempty"`
	DomainA  string `json:"domain_a"`
	DomainB  string `json:"domain_b,omitempty"`
	VersionA int    `json:"version_a"`
	VersionB int    `json:"version_b,omitempty"`
	OpsetA   int64  `json:"opset_a"`
	OpsetB   int64  `json:"opset_b,omitempty"`
	// Attrs lists the attributes whose values differ, counting an absent
	// attribute as its schema default.
	Attrs []AttrDiff `json:"attrs"`
	// Inputs lists every input position of either node with its type and
	// shape on each side.
	Inputs []InputDiff `json:"inputs"`
	// Same is true when the counterpart has the same op, domain, version,
	// attribute values and input types: the divergence then comes from an
	// input's values or from how the node is computed.
	Same bool   `json:"same"`
	Note string `json:"note,omitempty"`
}

// AttrDiff is one attribute whose value differs. A and B are compact
// renderings: "1.01", "[1, 2]", "\"NOTSET\"", "float[2,3] {1, 2, 3, 4, …}",
// "1 (default)" for an absent attribute with a schema default, "(absent)"
// for one without.
type AttrDiff struct {
	Name string `json:"name"`
	A    string `json:"a"`
	B    string `json:"b"`
}

// InputDiff is one input position of the divergent node and of its
// counterpart. A and B are "dtype[dims]" as captured while bisecting (or
// from the initializer, the input sample, value_info), "?" when unknown
// and "" when that side has no input at this position.
type InputDiff struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	BName string `json:"b_name"`
	A     string `json:"a"`
	B     string `json:"b"`
	// Differs is set when the types or shapes differ or only one side has
	// the input.
	Differs bool `json:"differs"`
	// FirstDiff, for an initializer present on both sides with the same
	// element count but other values, locates the first element that
	// differs: "[0,3]: 0.0123 vs 0.012423".
	FirstDiff string `json:"first_diff,omitempty"`
}

// Headline is a one-line statement of what differs at the node.
func (d *NodeDiff) Headline() string {
	if d == nil {
		return ""
	}
	if !d.Counterpart {
		return "B has no node producing this value: " + d.Note
	}
	var parts []string
	if d.OpTypeA != d.OpTypeB || d.DomainA != d.DomainB {
		parts = append(parts, fmt.Sprintf("op %s in A, %s in B", qualifiedOp(d.DomainA, d.OpTypeA), qualifiedOp(d.DomainB, d.OpTypeB)))
	} else if d.VersionA != d.VersionB {
		parts = append(parts, fmt.Sprintf("%s-%d in A, %s-%d in B", d.OpTypeA, d.VersionA, d.OpTypeB, d.VersionB))
	}
	for _, a := range d.Attrs {
		parts = append(parts, fmt.Sprintf("attribute %s: %s vs %s", a.Name, a.A, a.B))
	}
	for _, in := range d.Inputs {
		if in.Differs {
			parts = append(parts, fmt.Sprintf("input %d: %s vs %s", in.Index, orNone(in.A), orNone(in.B)))
		}
	}
	if len(parts) == 0 {
		var vals []string
		for _, in := range d.Inputs {
			if in.FirstDiff != "" {
				vals = append(vals, fmt.Sprintf("%s differs (first at %s)", in.Name, in.FirstDiff))
			}
		}
		if len(vals) > 0 {
			return "same op, attributes and input types in B; initializer " + strings.Join(vals, ", initializer ")
		}
		return "same op, attributes and input types in B: an input's values differ, or the node is computed differently"
	}
	return strings.Join(parts, "; ")
}

func qualifiedOp(domain, op string) string {
	if domain == "" || domain == "ai.onnx" {
		return op
	}
	return domain + "." + op
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func displayDomain(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}

// typeTable records the type and shape of values of one model as known
// while bisecting: captured tensors first, then initializers and input
// samples, then declared types.
type typeTable map[string]string

func tensorTypeString(t *canonical.Tensor) string {
	if t == nil {
		return "?"
	}
	var b strings.Builder
	b.WriteString(canonical.ElemTypeName(t.DataType))
	b.WriteString("[")
	for i, d := range t.Dims {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteString("]")
	return b.String()
}

func (tt typeTable) addTensors(m map[string]*canonical.Tensor) {
	for name, t := range m {
		if t != nil {
			tt[name] = tensorTypeString(t)
		}
	}
}

// addInputs records the input sample's tensors under the names of the
// graph inputs they feed.
func (tt typeTable) addInputs(vs []*canonical.Value, in []*canonical.Tensor) {
	for i, v := range vs {
		if i < len(in) && in[i] != nil {
			tt[v.Name] = tensorTypeString(in[i])
		}
	}
}

// of returns the type string of v.
func (tt typeTable) of(v *canonical.Value) string {
	if v == nil {
		return ""
	}
	if s, ok := tt[v.Name]; ok {
		return s
	}
	if v.Const != nil {
		return tensorTypeString(v.Const)
	}
	if v.Type != nil {
		return canonical.TypeString(v.Type)
	}
	return "?"
}

// counterpart returns B's node producing one of n's outputs, in output
// order, or nil and a note on what B has instead.
func counterpart(n *canonical.Node, gb *canonical.Graph) (*canonical.Node, string) {
	var notes []string
	for _, o := range n.Outputs {
		if o == nil || o.Name == "" {
			continue
		}
		vb := gb.Lookup(o.Name)
		if vb == nil {
			continue
		}
		if p, _ := vb.Producer(); p != nil {
			return p, ""
		}
		kind := "a graph input"
		if vb.Const != nil {
			kind = "an initializer"
		}
		notes = append(notes, fmt.Sprintf("%q is %s of B", o.Name, kind))
	}
	if len(notes) == 0 {
		return nil, "B has no value named like the node's outputs"
	}
	return nil, strings.Join(notes, "; ")
}

func nodeIndex(g *canonical.Graph, n *canonical.Node) int {
	for i, x := range g.Nodes {
		if x == n {
			return i
		}
	}
	return -1
}

// diffNode compares A's divergent node na with its counterpart in B.
func diffNode(na *canonical.Node, ma, mb *canonical.Model, ta, tb typeTable) *NodeDiff {
	d := &NodeDiff{OpTypeA: na.OpType, DomainA: displayDomain(na.Domain), Attrs: []AttrDiff{}, Inputs: []InputDiff{}}
	d.OpsetA = ma.Opset(na.Domain)
	sa, okA := onnxspec.Lookup(na.Domain, na.OpType, int(d.OpsetA))
	if okA {
		d.VersionA = sa.SinceVersion
	}
	nb, note := counterpart(na, mb.Graph)
	if nb == nil {
		d.Note = note
		for i, v := range na.Inputs {
			if v == nil {
				continue
			}
			d.Inputs = append(d.Inputs, InputDiff{Index: i, Name: v.Name, A: ta.of(v)})
		}
		return d
	}
	d.Counterpart = true
	d.BNode = nb.Name
	if d.BNode == "" {
		d.BNode = fmt.Sprintf("#%d %s", nodeIndex(mb.Graph, nb), nb.OpType)
	}
	d.OpTypeB, d.DomainB = nb.OpType, displayDomain(nb.Domain)
	d.OpsetB = mb.Opset(nb.Domain)
	sb, okB := onnxspec.Lookup(nb.Domain, nb.OpType, int(d.OpsetB))
	if okB {
		d.VersionB = sb.SinceVersion
	}
	if !okA {
		sa = nil
	}
	if !okB {
		sb = nil
	}
	d.Attrs = diffAttrs(na, nb, sa, sb)

	for i := 0; i < max(len(na.Inputs), len(nb.Inputs)); i++ {
		va, vb := na.Input(i), nb.Input(i)
		if va == nil && vb == nil {
			continue
		}
		in := InputDiff{Index: i}
		if va != nil {
			in.Name, in.A = va.Name, ta.of(va)
		}
		if vb != nil {
			in.BName, in.B = vb.Name, tb.of(vb)
		}
		in.Differs = va == nil || vb == nil || (in.A != in.B && in.A != "?" && in.B != "?")
		if va != nil && vb != nil && va.Const != nil && vb.Const != nil && !in.Differs {
			in.FirstDiff = firstDiff(va.Const, vb.Const)
		}
		d.Inputs = append(d.Inputs, in)
	}
	d.Same = d.OpTypeA == d.OpTypeB && d.DomainA == d.DomainB && d.VersionA == d.VersionB && len(d.Attrs) == 0
	for _, in := range d.Inputs {
		if in.Differs {
			d.Same = false
		}
	}
	return d
}

// attrSide is one side's value of an attribute: what is shown and what is
// compared.
type attrSide struct{ show, key string }

func sideValue(n *canonical.Node, s *onnxspec.Schema, name string) attrSide {
	if a := n.Attr(name); a != nil {
		show, key := attrValue(a)
		return attrSide{show, key}
	}
	if s != nil {
		for i := range s.Attributes {
			sa := &s.Attributes[i]
			if sa.Name != name || !sa.HasDefault {
				continue
			}
			if def := defaultAttr(sa); def != nil {
				show, key := attrValue(def)
				return attrSide{show + " (default)", key}
			}
			return attrSide{sa.Default + " (default)", "raw:" + sa.Default}
		}
	}
	return attrSide{"(absent)", "<absent>"}
}

// diffAttrs lists the attributes set on either node whose values differ
// (an absent attribute counts as its schema default).
func diffAttrs(na, nb *canonical.Node, sa, sb *onnxspec.Schema) []AttrDiff {
	out := []AttrDiff{}
	seen := map[string]bool{}
	var order []string
	for _, n := range []*canonical.Node{na, nb} {
		for _, a := range n.Attributes {
			if !seen[a.Name] {
				seen[a.Name] = true
				order = append(order, a.Name)
			}
		}
	}
	for _, name := range order {
		va, vb := sideValue(na, sa, name), sideValue(nb, sb, name)
		if va.key != vb.key {
			out = append(out, AttrDiff{Name: name, A: va.show, B: vb.show})
		}
	}
	return out
}

// defaultAttr builds the attribute a parsed schema default stands for.
func defaultAttr(sa *onnxspec.Attribute) *canonical.Attribute {
	if !sa.DefaultParsed {
		return nil
	}
	switch sa.Type {
	case onnxspec.AttrFloat:
		return canonical.FloatAttr(sa.Name, sa.DefaultFloat)
	case onnxspec.AttrInt:
		return canonical.IntAttr(sa.Name, sa.DefaultInt)
	case onnxspec.AttrString:
		return canonical.StringAttr(sa.Name, sa.DefaultString)
	case onnxspec.AttrFloats:
		return canonical.FloatsAttr(sa.Name, sa.DefaultFloats...)
	case onnxspec.AttrInts:
		return canonical.IntsAttr(sa.Name, sa.DefaultInts...)
	case onnxspec.AttrStrings:
		return canonical.StringsAttr(sa.Name, sa.DefaultStrings...)
	}
	return nil
}

// maxListItems bounds the elements shown of a list or tensor attribute.
const maxListItems = 8

func fmtFloat32(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

func fmtList[T any](xs []T, f func(T) string) string {
	var b strings.Builder
	b.WriteString("[")
	for i, x := range xs {
		if i == maxListItems {
			fmt.Fprintf(&b, ", … (%d items)", len(xs))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f(x))
	}
	b.WriteString("]")
	return b.String()
}

// attrValue renders an attribute compactly and returns a key that is equal
// for equal values.
func attrValue(a *canonical.Attribute) (show, key string) {
	if a.RefAttrName != "" {
		s := "@" + a.RefAttrName
		return s, s
	}
	switch a.Type {
	case canonical.AttrFloat:
		s := fmtFloat32(a.F)
		return s, "f:" + s
	case canonical.AttrInt:
		s := strconv.FormatInt(a.I, 10)
		return s, "i:" + s
	case canonical.AttrString:
		s := strconv.Quote(string(a.S))
		return s, "s:" + s
	case canonical.AttrFloats:
		s := fmtList(a.Floats, fmtFloat32)
		return s, "fs:" + fmt.Sprint(a.Floats)
	case canonical.AttrInts:
		s := fmtList(a.Ints, func(i int64) string { return strconv.FormatInt(i, 10) })
		return s, "is:" + fmt.Sprint(a.Ints)
	case canonical.AttrStrings:
		s := fmtList(a.Strings, func(b []byte) string { return strconv.Quote(string(b)) })
		var k strings.Builder
		for _, x := range a.Strings {
			k.WriteString(strconv.Quote(string(x)))
		}
		return s, "ss:" + k.String()
	case canonical.AttrTensor:
		return tensorSummary(a.T), "t:" + tensorKey(a.T)
	case canonical.AttrTensors:
		var s, k []string
		for _, t := range a.Tensors {
			s = append(s, tensorSummary(t))
			k = append(k, tensorKey(t))
		}
		return fmtList(s, func(x string) string { return x }), "ts:" + strings.Join(k, ",")
	case canonical.AttrGraph:
		return graphSummary(a.G), "g:" + graphKey(a.G, 0)
	case canonical.AttrGraphs:
		var s, k []string
		for _, g := range a.Graphs {
			s = append(s, graphSummary(g))
			k = append(k, graphKey(g, 0))
		}
		return fmtList(s, func(x string) string { return x }), "gs:" + strings.Join(k, ",")
	case canonical.AttrTypeProto:
		s := canonical.TypeString(a.TP)
		return s, "tp:" + s
	case canonical.AttrTypeProtos:
		var s []string
		for _, tp := range a.TypeProtos {
			s = append(s, canonical.TypeString(tp))
		}
		l := fmtList(s, func(x string) string { return x })
		return l, "tps:" + strings.Join(s, ",")
	}
	s := strings.ToLower(a.Type.String())
	return s, "?:" + s
}

// tensorSummary renders a tensor as dtype[dims] and its first values.
func tensorSummary(t *canonical.Tensor) string {
	if t == nil {
		return "(no tensor)"
	}
	s := tensorTypeString(t)
	if t.DataType == canonical.String {
		strs, err := t.Strings()
		if err != nil {
			return s
		}
		return s + " " + fmtList(strs, func(b []byte) string { return strconv.Quote(string(b)) })
	}
	vals, err := t.Float64s()
	if err != nil {
		return s
	}
	var b strings.Builder
	b.WriteString(s + " {")
	for i, v := range vals {
		if i == maxTensorValues {
			fmt.Fprintf(&b, ", … (%d values)", len(vals))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatFloat(v, 'g', 6, 64))
	}
	b.WriteString("}")
	return b.String()
}

// maxTensorValues bounds the values shown of a tensor attribute.
const maxTensorValues = 4

func tensorKey(t *canonical.Tensor) string {
	if t == nil {
		return "nil"
	}
	h := sha256.New()
	if t.DataType == canonical.String {
		strs, _ := t.Strings()
		for _, s := range strs {
			fmt.Fprintf(h, "%d:%s", len(s), s)
		}
	} else if raw, err := t.Bytes(); err == nil {
		h.Write(raw)
	} else {
		fmt.Fprintf(h, "error %v", err)
	}
	return tensorTypeString(t) + ":" + hex.EncodeToString(h.Sum(nil)[:12])
}

func graphSummary(g *canonical.Graph) string {
	if g == nil {
		return "graph (none)"
	}
	ops := make([]string, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		ops = append(ops, n.OpType)
	}
	return fmt.Sprintf("graph %q: %d nodes %s", g.Name, len(g.Nodes), fmtList(ops, func(s string) string { return s }))
}

// graphKey fingerprints a subgraph by its ops and their attribute values
// (not by value names, which conversions may change).
func graphKey(g *canonical.Graph, depth int) string {
	if g == nil || depth > 8 {
		return "nil"
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d in %d out %d init;", len(g.Inputs), len(g.Outputs), len(g.Initializers))
	for _, v := range g.Initializers {
		fmt.Fprintf(h, "%s;", tensorKey(v.Const))
	}
	for _, n := range g.Nodes {
		fmt.Fprintf(h, "%s.%s(%d)->%d{", n.Domain, n.OpType, len(n.Inputs), len(n.Outputs))
		for _, a := range n.Attributes {
			if a.Type == canonical.AttrGraph {
				fmt.Fprintf(h, "%s=%s,", a.Name, graphKey(a.G, depth+1))
				continue
			}
			_, k := attrValue(a)
			fmt.Fprintf(h, "%s=%s,", a.Name, k)
		}
		h.Write([]byte("}"))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// firstDiff locates the first element where two numeric tensors of the
// same element count differ: "[0,3]: 0.0123 vs 0.012423"; "" when they
// are equal or cannot be decoded.
func firstDiff(a, b *canonical.Tensor) string {
	if a.DataType == canonical.String || b.DataType == canonical.String {
		return ""
	}
	va, err := a.Float64s()
	if err != nil {
		return ""
	}
	vb, err := b.Float64s()
	if err != nil || len(va) != len(vb) {
		return ""
	}
	for i := range va {
		if va[i] == vb[i] || (va[i] != va[i] && vb[i] != vb[i]) {
			continue
		}
		return fmt.Sprintf("%s: %s vs %s", multiIndex(i, a.Dims),
			strconv.FormatFloat(va[i], 'g', 7, 64), strconv.FormatFloat(vb[i], 'g', 7, 64))
	}
	return ""
}

// multiIndex turns a flat row-major index into "[i,j,...]".
func multiIndex(flat int, dims []int64) string {
	if len(dims) == 0 {
		return "[]"
	}
	idx := make([]string, len(dims))
	r := int64(flat)
	for k := len(dims) - 1; k >= 0; k-- {
		d := dims[k]
		if d <= 0 {
			idx[k] = "0"
			continue
		}
		idx[k] = strconv.FormatInt(r%d, 10)
		r /= d
	}
	return "[" + strings.Join(idx, ",") + "]"
}
