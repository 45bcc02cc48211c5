// Package infer does ONNX type and shape inference on a canonical model:
// it sets Value.Type for every value whose type it can work out (graph
// values and subgraph values) and lists the values in Graph.ValueInfo so
// that the written model carries them.
//
// Symbolic dims propagate (a batch dim named N stays N). Shapes that
// depend on tensor values are resolved by partial constant evaluation:
// initializers, Constant nodes and Shape of a tensor with known (even
// symbolic) dims give int64 vectors whose elements may be symbolic, and
// these flow through Gather, Concat, Slice, Unsqueeze, Squeeze, Cast and
// integer arithmetic into Reshape, Expand, Tile, Pad, ConstantOfShape,
// Range, Resize, TopK, Split and the like.
package infer

import (
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/recovered"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// Options tune Infer.
type Options struct {
	// Strict makes Infer return an error when an inferred type conflicts
	// with a declared one or a node's inputs break its shape rules.
	// Otherwise these are reported in Result.Issues and the declared type
	// is kept.
	Strict bool
	// SymbolicNames gives every new unknown dim a generated name (unk__0,
	// unk__1, ...) instead of leaving it unnamed.
	SymbolicNames bool
	// NoValueInfo leaves Graph.ValueInfo alone (types are still set on the
	// values).
	NoValueInfo bool
	// InputValues gives known values for graph inputs (by name); shapes
	// that depend on them are then resolved.
	InputValues map[string]*canonical.Tensor
}

// Issue is a node whose outputs could not be (fully) inferred, or a
// conflict between an inferred and a declared type.
type Issue struct {
	Path   string
	Node   string
	OpType string
	Msg    string
}

// String formats the issue on one line.
func (i Issue) String() string {
	if i.OpType == "" {
		return fmt.Sprintf("%s: %s", i.Path, i.Msg)
	}
	return fmt.Sprintf("%s: node %q (%s): %s", i.Path, i.Node, i.OpType, i.Msg)
}

// Result reports what Infer did.
type Result struct {
	// Typed counts the values that have a complete type (element type and
	// shape) after inference; Partial those with a type but not a full
	// shape; Untyped lists the names of values still without a type.
	Typed, Partial int
	Untyped        []string
	// Added counts the value_info entries added.
	Added  int
	Issues []Issue
	// Constants holds the values of the main graph that partial constant
	// evaluation determined completely (small integer tensors computed
	// from shapes and constants, e.g. Shape -> Gather -> Mul chains), as
	// int64 tensors. Initializers are not repeated here.
	Constants map[*canonical.Value]*canonical.Tensor
}

// Infer runs type and shape inference over m in place.
func Infer(m *canonical.Model, opts Options) (res *Result, err error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("infer: the model has no graph")
	}
	defer func() {
		if r := recover(); r != nil {
			err = &recovered.Error{Pkg: "infer", Value: r, Stack: debug.Stack()}
		}
	}()
	inf := &inferrer{m: m, opts: opts, res: &Result{}, consts: map[*canonical.Value]*cval{}, handlers: handlerTable(), seqs: map[*canonical.Value][]*onnxpb.TypeProto{}}
	if err := inf.graph(m.Graph, "graph", m.Opset); err != nil {
		return inf.res, err
	}
	inf.finish(m.Graph, true)
	inf.res.Constants = map[*canonical.Value]*canonical.Tensor{}
	for v, c := range inf.consts {
		if v.Const != nil || v.Graph() != m.Graph {
			continue
		}
		if t := c.int64Tensor(v.Name); t != nil {
			inf.res.Constants[v] = t
		}
	}
	return inf.res, nil
}

// handlerTable is the read-only table of shape rules, built on first use.
var handlerTable = sync.OnceValue(buildHandlers)

type inferrer struct {
	m        *canonical.Model
	opts     Options
	res      *Result
	consts   map[*canonical.Value]*cval
	nsym     int
	handlers map[string]handler
	// seqs holds the element types of sequences built from known parts.
	seqs  map[*canonical.Value][]*onnxpb.TypeProto
	depth int
}

func (inf *inferrer) newDim() canonical.Dim {
	if !inf.opts.SymbolicNames {
		return canonical.Dim{}
	}
	d := canonical.Dim{Param: fmt.Sprintf("unk__%d", inf.nsym)}
	inf.nsym++
	return d
}

// graph infers g's nodes in topological order. opsetOf gives the opset in
// force for a domain.
func (inf *inferrer) graph(g *canonical.Graph, path string, opsetOf func(string) int64) error {
	inf.depth++
	defer func() { inf.depth-- }()
	if inf.depth > 64 {
		return fmt.Errorf("infer: %s: subgraphs nested too deep", path)
	}
	for _, v := range g.Initializers {
		if v.Const != nil {
			if c := constFromTensor(v.Const); c != nil {
				inf.consts[v] = c
			}
			if v.Type == nil {
				v.Type = canonical.TensorType(v.Const.DataType, v.Const.Dims)
			}
		}
	}
	if g.Parent == nil && inf.opts.InputValues != nil {
		for _, v := range g.Inputs {
			if t := inf.opts.InputValues[v.Name]; t != nil {
				if c := constFromTensor(t); c != nil {
					inf.consts[v] = c
				}
			}
		}
	}
	nodes, err := g.TopoSort()
	if err != nil {
		nodes = g.Nodes
	}
	for i, n := range nodes {
		if err := inf.node(n, i, path, opsetOf); err != nil {
			return err
		}
	}
	return nil
}

func (inf *inferrer) issue(path string, n *canonical.Node, msg string) {
	is := Issue{Path: path, Msg: msg}
	if n != nil {
		is.Node, is.OpType = n.Name, n.OpType
	}
	inf.res.Issues = append(inf.res.Issues, is)
}

func (inf *inferrer) node(n *canonical.Node, idx int, path string, opsetOf func(string) int64) error {
	domain := onnxspec.NormalizeDomain(n.Domain)
	c := &nctx{inf: inf, n: n, path: path, opsetOf: opsetOf, out: make([]*onnxpb.TypeProto, len(n.Outputs))}
	if f := inf.m.Function(n.Domain, n.OpType, n.Overload); f != nil {
		inf.function(c, f)
	} else if s, ok := onnxspec.Lookup(domain, n.OpType, int(opsetOf(domain))); ok && !s.Deprecated {
		c.s = s
		c.ver = s.SinceVersion
		h := inf.handlers[domain+":"+n.OpType]
		if h != nil {
			func() {
				defer func() {
					if r := recover(); r != nil {
						c.fail("inference failed: %v", r)
					}
				}()
				h(c)
			}()
		}
		c.schemaTypes()
	} else if s, ok := onnxspec.Lookup(domain, n.OpType, 1<<20); ok && opsetOf(domain) == 0 && domain != "" {
		// A domain the model does not import: use the latest schema.
		c.s, c.ver = s, s.SinceVersion
		if h := inf.handlers[domain+":"+n.OpType]; h != nil {
			h(c)
		}
		c.schemaTypes()
	}
	if c.err != nil {
		return c.err
	}
	if c.s == nil && inf.m.Function(n.Domain, n.OpType, n.Overload) == nil {
		inf.issue(path, n, fmt.Sprintf("no schema for %s in domain %q at the model's opset and no local function: outputs left untyped", n.OpType, n.Domain))
	}
	for i, o := range n.Outputs {
		if o == nil || c.out[i] == nil || !hasElemTypes(c.out[i]) {
			continue
		}
		if err := inf.assign(o, c.out[i], path, n); err != nil {
			return err
		}
		if c.consts != nil && c.consts[i] != nil {
			inf.consts[o] = c.consts[i]
		}
		if c.seqs != nil && c.seqs[i] != nil {
			inf.seqs[o] = c.seqs[i]
		}
	}
	return nil
}

// assign merges the inferred type t into v's type.
func (inf *inferrer) assign(v *canonical.Value, t *onnxpb.TypeProto, path string, n *canonical.Node) error {
	if v.Type == nil {
		v.Type = t
		return nil
	}
	merged, conflict := mergeType(v.Type, t)
	if conflict != "" {
		msg := fmt.Sprintf("output %q: inferred type %s conflicts with declared %s: %s", v.Name, typeString(t), typeString(v.Type), conflict)
		if inf.opts.Strict {
			return fmt.Errorf("infer: %s: node %s: %s", path, n, msg)
		}
		inf.issue(path, n, msg)
		return nil
	}
	v.Type = merged
	return nil
}

// finish counts typed values and adds value_info entries.
func (inf *inferrer) finish(g *canonical.Graph, top bool) {
	listed := map[*canonical.Value]bool{}
	for _, v := range g.Inputs {
		listed[v] = true
	}
	for _, v := range g.Outputs {
		listed[v] = true
	}
	for _, v := range g.ValueInfo {
		listed[v] = true
	}
	count := func(v *canonical.Value) {
		switch {
		case v.Type == nil:
			inf.res.Untyped = append(inf.res.Untyped, v.Name)
		case complete(v.Type):
			inf.res.Typed++
		default:
			inf.res.Partial++
		}
	}
	for _, v := range g.Inputs {
		count(v)
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			count(o)
			if o.Type != nil && !listed[o] && !inf.opts.NoValueInfo {
				g.ValueInfo = append(g.ValueInfo, o)
				listed[o] = true
				inf.res.Added++
			}
		}
		for _, sg := range n.Subgraphs() {
			inf.finish(sg, false)
		}
	}
}

// complete reports whether t has an element type and a full shape.
func complete(t *onnxpb.TypeProto) bool {
	switch x := t.GetValue().(type) {
	case *onnxpb.TypeProto_TensorType:
		if x.TensorType.GetElemType() == 0 || x.TensorType.Shape == nil {
			return false
		}
		for _, d := range x.TensorType.Shape.Dim {
			if _, ok := d.Value.(*onnxpb.TensorShapeProto_Dimension_DimValue); !ok {
				if d.GetDimParam() == "" {
					return false
				}
			}
		}
		return true
	case *onnxpb.TypeProto_SequenceType:
		return x.SequenceType.ElemType != nil && complete(x.SequenceType.ElemType)
	case *onnxpb.TypeProto_OptionalType:
		return x.OptionalType.ElemType != nil && complete(x.OptionalType.ElemType)
	case *onnxpb.TypeProto_MapType:
		return x.MapType.ValueType != nil
	case *onnxpb.TypeProto_SparseTensorType:
		return x.SparseTensorType.GetElemType() != 0
	}
	return false
}

// function infers a call of a model-local function by inferring its body
// with the call's input types; the body's own values are left untyped.
func (inf *inferrer) function(c *nctx, f *canonical.Function) {
	if f.Body == nil {
		return
	}
	saved := map[*canonical.Value]*onnxpb.TypeProto{}
	var all []*canonical.Value
	all = append(all, f.Body.Inputs...)
	for _, n := range f.Body.Nodes {
		all = append(all, n.Outputs...)
	}
	for _, v := range all {
		if v != nil {
			saved[v] = v.Type
		}
	}
	for i, v := range f.Body.Inputs {
		if in := c.n.Input(i); in != nil && v != nil {
			v.Type = in.Type
			if cv := inf.consts[in]; cv != nil {
				inf.consts[v] = cv
			}
		}
	}
	opsetOf := func(d string) int64 {
		if v := f.Opset(d); v != 0 {
			return v
		}
		return inf.m.Opset(d)
	}
	// Substitute attribute references (@name) with the call's attributes
	// or the function's defaults for the time of the inference.
	restore := substituteRefs(f.Body, func(ref string) *canonical.Attribute {
		if a := c.n.Attr(ref); a != nil {
			return a
		}
		for _, a := range f.AttributeDefaults {
			if a.Name == ref {
				return a
			}
		}
		return nil
	})
	defer restore()
	if err := inf.graph(f.Body, c.path+"/function "+f.Domain+"."+f.Name, opsetOf); err == nil {
		for i, o := range f.Body.Outputs {
			if i < len(c.out) && o != nil && o.Type != nil {
				c.out[i] = o.Type
			}
		}
	}
	for _, v := range all {
		if v != nil {
			v.Type = saved[v]
			delete(inf.consts, v)
		}
	}
}

// substituteRefs replaces, in g and its subgraphs, every attribute that
// references a function attribute by the value lookup gives (dropping it
// when there is none, so that the operator default applies). The returned
// function puts the original attributes back.
func substituteRefs(g *canonical.Graph, lookup func(string) *canonical.Attribute) func() {
	type saved struct {
		n     *canonical.Node
		attrs []*canonical.Attribute
	}
	var undo []saved
	var walk func(g *canonical.Graph)
	walk = func(g *canonical.Graph) {
		for _, n := range g.Nodes {
			changed := false
			for _, a := range n.Attributes {
				if a.RefAttrName != "" {
					changed = true
				}
			}
			if changed {
				undo = append(undo, saved{n, n.Attributes})
				var attrs []*canonical.Attribute
				for _, a := range n.Attributes {
					if a.RefAttrName == "" {
						attrs = append(attrs, a)
						continue
					}
					if v := lookup(a.RefAttrName); v != nil {
						cp := *v
						cp.Name = a.Name
						cp.RefAttrName = ""
						attrs = append(attrs, &cp)
					}
				}
				n.Attributes = attrs
			}
			for _, sg := range n.Subgraphs() {
				walk(sg)
			}
		}
	}
	walk(g)
	return func() {
		for _, s := range undo {
			s.n.Attributes = s.attrs
		}
	}
}

// hasElemTypes reports whether every tensor in t has an element type (a
// type without one would be written as an invalid value_info).
func hasElemTypes(t *onnxpb.TypeProto) bool {
	switch x := t.GetValue().(type) {
	case *onnxpb.TypeProto_TensorType:
		return x.TensorType.GetElemType() != 0
	case *onnxpb.TypeProto_SequenceType:
		return x.SequenceType.ElemType != nil && hasElemTypes(x.SequenceType.ElemType)
	case *onnxpb.TypeProto_OptionalType:
		return x.OptionalType.ElemType != nil && hasElemTypes(x.OptionalType.ElemType)
	case *onnxpb.TypeProto_MapType:
		return x.MapType.GetKeyType() != 0 && x.MapType.ValueType != nil && hasElemTypes(x.MapType.ValueType)
	case *onnxpb.TypeProto_SparseTensorType:
		return x.SparseTensorType.GetElemType() != 0
	}
	return false
}
