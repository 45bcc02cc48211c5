package passes

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/executor"
)

// nondeterministic ops are never folded or merged.
var nondeterministic = map[string]bool{
	"RandomNormal": true, "RandomNormalLike": true, "RandomUniform": true,
	"RandomUniformLike": true, "Multinomial": true, "Bernoulli": true,
}

// notFolded are ops folding would defeat: QDQ pairs on weights are the
// point of a quantized model.
var notFolded = map[string]bool{
	"QuantizeLinear": true, "DequantizeLinear": true, "DynamicQuantizeLinear": true,
}

// foldConstants replaces the values of the main graph that depend only on
// constants (initializers, Constant nodes, static shapes) by initializers:
// shape computations found by inference first, then every node whose
// inputs are all constant, computed by the executor in one run.
func foldConstants(m *canonical.Model, opts Options) (bool, error) {
	g := m.Graph
	changed, err := constantToInitializer(m, opts)
	if err != nil {
		return changed, err
	}
	nm := canonical.NewNamer(m)
	limit := opts.foldLimit()

	// Shape computations of static shapes (Shape -> Gather -> Concat ...).
	consts := inferTypes(m)
	var shaped []*canonical.Value
	for v := range consts {
		if producer(v) != nil && elemType(v) == canonical.Int64 {
			shaped = append(shaped, v)
		}
	}
	sort.Slice(shaped, func(i, j int) bool { return shaped[i].Name < shaped[j].Name })
	for _, v := range shaped {
		if len(v.Uses()) == 0 && !isGraphOutput(v) {
			continue
		}
		t := consts[v]
		e := build.On(g, nm, v.Name)
		nv := e.Const("folded", canonical.NewTensor("", canonical.Int64, slices.Clone(t.Dims), mustBytes(t)))
		if err := e.Err(); err != nil {
			return changed, err
		}
		if bypassConst(g, v, nv) {
			changed = true
		}
	}

	// Nodes whose inputs are all constant, in topological order.
	order, err := g.TopoSort()
	if err != nil {
		return changed, err
	}
	folded := map[*canonical.Value]bool{}
	isConst := func(v *canonical.Value) bool { return v == nil || constOf(v) != nil || folded[v] }
	var nodes []*canonical.Node
	for _, n := range order {
		if (n.Domain != "" && n.Domain != "ai.onnx") || nondeterministic[n.OpType] || notFolded[n.OpType] || len(n.Subgraphs()) > 0 {
			continue
		}
		ok := true
		for _, in := range n.Inputs {
			if !isConst(in) {
				ok = false
				break
			}
		}
		if !ok || len(n.Outputs) == 0 {
			continue
		}
		// A statically known output above the limit is not folded.
		for _, o := range n.Outputs {
			if d, dt, known := tensorDims(o); known {
				if cnt, err := canonical.NumElements(d); err == nil && cnt*int64(max(canonical.ElemBits(dt), 8))/8 > limit {
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		nodes = append(nodes, n)
		for _, o := range n.Outputs {
			if o != nil {
				folded[o] = true
			}
		}
	}
	if len(nodes) == 0 {
		if changed {
			_, err := eliminateDead(m, opts)
			return true, err
		}
		return false, nil
	}
	// The values to compute: folded values used by a node that is not
	// folded, or graph outputs.
	inSet := map[*canonical.Node]bool{}
	for _, n := range nodes {
		inSet[n] = true
	}
	var want []*canonical.Value
	for _, n := range nodes {
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			need := isGraphOutput(o)
			for _, u := range o.Uses() {
				if !inSet[u.Node] {
					need = true
				}
			}
			if need {
				want = append(want, o)
			}
		}
	}
	if len(want) == 0 {
		if changed {
			_, err := eliminateDead(m, opts)
			return true, err
		}
		return false, nil
	}
	vals, err := evalNodes(m, nodes, want)
	if err != nil {
		return changed, fmt.Errorf("constant folding: %w", err)
	}
	for _, v := range want {
		t := vals[v.Name]
		if t == nil || t.DataType == canonical.String {
			continue
		}
		if b, err := t.ByteSize(); err != nil || b > limit {
			continue
		}
		raw, err := t.Bytes()
		if err != nil {
			continue
		}
		e := build.On(g, nm, v.Name)
		nv := e.Const("folded", canonical.NewTensor("", t.DataType, slices.Clone(t.Dims), raw))
		if err := e.Err(); err != nil {
			return changed, err
		}
		if bypassConst(g, v, nv) {
			changed = true
		}
	}
	if _, err := eliminateDead(m, opts); err != nil {
		return changed, err
	}
	return changed, nil
}

// bypassConst makes the uses of v use the initializer c. When v is a graph
// output, c takes v's name (an initializer may be a graph output).
func bypassConst(g *canonical.Graph, v, c *canonical.Value) bool {
	if isGraphOutput(v) {
		name := v.Name
		if err := g.RenameValue(v, nm2(name)); err != nil {
			return false
		}
		g.ReplaceAllUsesWith(v, c)
		if err := g.RenameValue(c, name); err != nil {
			return false
		}
		return true
	}
	g.ReplaceAllUsesWith(v, c)
	return true
}

func nm2(name string) string { return name + "__folded_away" }

func mustBytes(t *canonical.Tensor) []byte {
	b, err := t.Bytes()
	if err != nil {
		return nil
	}
	return b
}

// evalNodes runs nodes (all inputs constant) in a model of their own on
// the executor and returns the values named in want.
func evalNodes(m *canonical.Model, nodes []*canonical.Node, want []*canonical.Value) (map[string]*canonical.Tensor, error) {
	sub := &canonical.Model{IRVersion: m.IRVersion, Graph: canonical.NewGraph("fold")}
	for _, o := range m.OpsetImports {
		sub.SetOpset(o.Domain, o.Version)
	}
	g := sub.Graph
	// m's Namer: the copies' names clash with none of the constants taken
	// from m under their own names.
	e := build.On(g, canonical.NewNamer(m), "fold")
	vmap := map[*canonical.Value]*canonical.Value{}
	get := func(v *canonical.Value) (*canonical.Value, error) {
		if v == nil {
			return nil, nil
		}
		if w, ok := vmap[v]; ok {
			return w, nil
		}
		t := constOf(v)
		if t == nil {
			return nil, fmt.Errorf("value %q is not constant", v.Name)
		}
		c := *t
		c.Name = v.Name
		w, err := g.AddInitializer(&c)
		if err != nil {
			return nil, err
		}
		vmap[v] = w
		return w, nil
	}
	for _, n := range nodes {
		var ins []*canonical.Value
		for _, in := range n.Inputs {
			w, err := get(in)
			if err != nil {
				return nil, err
			}
			ins = append(ins, w)
		}
		outs := e.Copy(n, ins)
		if err := e.Err(); err != nil {
			return nil, err
		}
		for i, o := range n.Outputs {
			if o != nil {
				vmap[o] = outs[i]
			}
		}
	}
	for _, v := range want {
		g.Outputs = append(g.Outputs, vmap[v])
	}
	ex, err := executor.New(sub, executor.Options{})
	if err != nil {
		return nil, err
	}
	defer func() { _ = ex.Close() }()
	ys, err := ex.Run(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	out := map[string]*canonical.Tensor{}
	for i, v := range want {
		out[v.Name] = ys[i]
	}
	return out, nil
}

// cse merges nodes of the main graph that compute the same op with the same
// attributes on the same inputs.
func cse(m *canonical.Model, _ Options) (bool, error) {
	g := m.Graph
	order, err := g.TopoSort()
	if err != nil {
		return false, err
	}
	changed := false
	seen := map[string]*canonical.Node{}
	ids := map[*canonical.Value]int{}
	id := func(v *canonical.Value) int {
		if v == nil {
			return -1
		}
		if k, ok := ids[v]; ok {
			return k
		}
		ids[v] = len(ids)
		return ids[v]
	}
	for _, n := range order {
		if nondeterministic[n.OpType] || len(n.Subgraphs()) > 0 {
			continue
		}
		key, ok := nodeKey(n, id)
		if !ok {
			continue
		}
		prev, dup := seen[key]
		if !dup {
			seen[key] = n
			continue
		}
		if len(prev.Outputs) != len(n.Outputs) {
			continue
		}
		merge := true
		for i, o := range n.Outputs {
			if o != nil && (isGraphOutput(o) || prev.Outputs[i] == nil) {
				merge = false
			}
		}
		if !merge {
			continue
		}
		for i, o := range n.Outputs {
			if o != nil {
				g.ReplaceAllUsesWith(o, prev.Outputs[i])
			}
		}
		g.RemoveNode(n)
		changed = true
	}
	return changed, nil
}

// nodeKey describes a node's computation; false when an attribute cannot
// be compared.
func nodeKey(n *canonical.Node, id func(*canonical.Value) int) (string, bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|", n.Domain, n.OpType, n.Overload)
	for _, in := range n.Inputs {
		fmt.Fprintf(&b, "%d,", id(in))
	}
	b.WriteString("|")
	attrs := append([]*canonical.Attribute(nil), n.Attributes...)
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
	for _, a := range attrs {
		if a.RefAttrName != "" || a.T != nil || a.G != nil || len(a.Tensors) > 0 || len(a.Graphs) > 0 || a.SparseTensor != nil || a.TP != nil {
			return "", false
		}
		fmt.Fprintf(&b, "%s:%d:%v:%d:%q:%v:%v:%q;", a.Name, a.Type, a.F, a.I, a.S, a.Floats, a.Ints, a.Strings)
	}
	fmt.Fprintf(&b, "|%d", len(n.Outputs))
	return b.String(), true
}
