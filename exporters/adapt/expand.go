package adapt

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/onnxspec"
	"github.com/onnxconv/onnxconv/opset/convert"
)

// expandUnsupported expands, at the target opset, every ai.onnx node whose
// operator version the profile lacks, when the converter has an expansion
// into older operators that the profile does support. Nodes that cannot be
// expanded are left for check to report.
func expandUnsupported(r *Report, m *canonical.Model, p *profiles.Profile, to int, names *canonical.Namer) {
	if to == 0 {
		return
	}
	type job struct {
		g    *canonical.Graph
		path string
		idx  int
		n    *canonical.Node
	}
	var jobs []job
	walk(m.Graph, "main", func(g *canonical.Graph, path string, idx int, n *canonical.Node) {
		if n.Domain != "" && n.Domain != "ai.onnx" {
			return
		}
		s, ok := onnxspec.Lookup("", n.OpType, to)
		if !ok {
			return
		}
		if yes, _ := p.Supports("", n.OpType, s.SinceVersion); yes {
			return
		}
		if vs := onnxspec.Versions("", n.OpType); len(vs) == 0 || vs[0].SinceVersion-1 < 7 {
			return // no older form to expand into: check reports it
		}
		jobs = append(jobs, job{g, path, idx, n})
	})
	for _, j := range jobs {
		nodes, err := expandNode(m, j.g, j.n, to, names)
		if err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("%s %q: %s lacks it and it could not be expanded: %v", j.n.OpType, j.n.Name, p.Name, err))
			continue
		}
		var ops []string
		for _, n := range nodes {
			ops = append(ops, n.OpType)
		}
		r.Actions = append(r.Actions, Action{Graph: j.path, Node: j.n.Name, OpType: j.n.OpType, Index: j.idx,
			What: fmt.Sprintf("expanded into %s (%s lacks %s)", opList(ops), p.Name, j.n.OpType)})
	}
}

// expandNode replaces n (in g, at opset to) by the converter's expansion of
// its operator: the node alone is put in a scratch model, converted below
// the operator's first version and back up to to, and the resulting nodes
// are spliced in place of n. Nothing changes when it fails.
func expandNode(m *canonical.Model, g *canonical.Graph, n *canonical.Node, to int, names *canonical.Namer) ([]*canonical.Node, error) {
	if len(n.Subgraphs()) > 0 {
		return nil, fmt.Errorf("nodes holding subgraphs are not expanded")
	}
	vs := onnxspec.Versions("", n.OpType)
	if len(vs) == 0 {
		return nil, fmt.Errorf("unknown operator")
	}
	below := vs[0].SinceVersion - 1
	if below < 7 {
		return nil, fmt.Errorf("%s exists since opset %d: there is no older form to expand it into", n.OpType, vs[0].SinceVersion)
	}
	// The scratch model is at an opset that has the operator (a node
	// written for a lower target, as fromContrib's, is expanded too).
	scratch := max(to, vs[0].SinceVersion)
	mm := &canonical.Model{IRVersion: m.IRVersion, OpsetImports: []canonical.OpsetID{{Domain: "", Version: int64(scratch)}}, Graph: canonical.NewGraph("expand")}
	mg := mm.Graph
	inVals := map[string]*canonical.Value{} // scratch name -> original value
	var ins []*canonical.Value
	for _, in := range n.Inputs {
		if in == nil {
			ins = append(ins, nil)
			continue
		}
		if v := mg.Lookup(in.Name); v != nil {
			ins = append(ins, v)
			continue
		}
		var v *canonical.Value
		var err error
		if in.Const != nil {
			t := *in.Const
			v, err = mg.AddInitializer(&t)
		} else {
			v, err = mg.AddInput(in.Name, in.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("building the scratch model: %w", err)
		}
		inVals[in.Name] = in
		ins = append(ins, v)
	}
	outNames := make([]string, len(n.Outputs))
	for i, o := range n.Outputs {
		if o != nil {
			outNames[i] = o.Name
		}
	}
	attrs := make([]*canonical.Attribute, len(n.Attributes))
	for i, a := range n.Attributes {
		c := *a
		attrs[i] = &c
	}
	sn, err := mg.AddNode(n.Name, "", n.OpType, ins, outNames, attrs...)
	if err != nil {
		return nil, fmt.Errorf("building the scratch model: %w", err)
	}
	for i, o := range sn.Outputs {
		if o != nil {
			o.Type = n.Outputs[i].Type
			mg.Outputs = append(mg.Outputs, o)
		}
	}
	if _, err := convert.Convert(mm, convert.Options{To: below}); err != nil {
		return nil, err
	}
	if _, err := convert.Convert(mm, convert.Options{To: to}); err != nil {
		return nil, fmt.Errorf("bringing the expansion back to opset %d: %w", to, err)
	}
	if len(mg.Nodes) == 1 && mg.Nodes[0].OpType == n.OpType {
		return nil, fmt.Errorf("the converter left it unchanged")
	}

	// Splice: map scratch values to values of g.
	base := n.Name
	if base == "" {
		base = n.OpType
	}
	e := build.On(g, names, base)
	vals := map[*canonical.Value]*canonical.Value{}
	for _, v := range mg.Inputs {
		vals[v] = inVals[v.Name]
	}
	for _, v := range mg.Initializers {
		if orig, ok := inVals[v.Name]; ok {
			vals[v] = orig
			continue
		}
		t := *v.Const
		nv := e.Const(v.Name, &t)
		if err := e.Err(); err != nil {
			return nil, err
		}
		vals[v] = nv
	}
	var addedInits []*canonical.Value
	undo := func() {
		for i := len(e.Added) - 1; i >= 0; i-- {
			g.RemoveNode(e.Added[i])
		}
		for _, v := range addedInits {
			g.RemoveInitializer(v)
		}
	}
	for _, v := range mg.Initializers {
		if _, ok := inVals[v.Name]; !ok {
			addedInits = append(addedInits, vals[v])
		}
	}
	for _, sn := range mg.Nodes {
		var nins []*canonical.Value
		for _, in := range sn.Inputs {
			if in == nil {
				nins = append(nins, nil)
				continue
			}
			mv, ok := vals[in]
			if !ok || mv == nil {
				undo()
				return nil, fmt.Errorf("internal: expansion input %q has no counterpart", in.Name)
			}
			nins = append(nins, mv)
		}
		outs := e.Copy(sn, nins)
		if err := e.Err(); err != nil {
			undo()
			return nil, err
		}
		for i, o := range sn.Outputs {
			if o != nil {
				vals[o] = outs[i]
				outs[i].Type = o.Type
			}
		}
	}
	// The scratch graph's outputs are n's outputs, in order.
	repl := make([]*canonical.Value, len(n.Outputs))
	k := 0
	for i, o := range n.Outputs {
		if o == nil {
			continue
		}
		rv := vals[mg.Outputs[k]]
		k++
		if rv == nil {
			undo()
			return nil, fmt.Errorf("internal: output %q has no counterpart", o.Name)
		}
		if p, _ := rv.Producer(); p == nil {
			// The expansion passes an input through: keep a node
			// producing the output.
			rv = e.Op("Identity", []*canonical.Value{rv})
			if err := e.Err(); err != nil {
				undo()
				return nil, err
			}
		}
		repl[i] = rv
	}
	// Position: where n stood.
	var at *canonical.Node
	for i, x := range g.Nodes {
		if x == n && i+1 < len(g.Nodes) {
			at = g.Nodes[i+1]
		}
	}
	inputs := append([]*canonical.Value(nil), n.Inputs...)
	for i, o := range n.Outputs {
		if o != nil {
			g.ReplaceAllUsesWith(o, repl[i])
		}
	}
	g.RemoveNode(n)
	for i, o := range n.Outputs {
		if o == nil {
			continue
		}
		if err := g.RenameValue(repl[i], o.Name); err != nil {
			return nil, fmt.Errorf("renaming the expansion's output: %w", err)
		}
		if repl[i].Type == nil {
			repl[i].Type = o.Type
		}
	}
	g.MoveNodes(e.Added, at)
	for _, in := range inputs {
		if in != nil && in.Const != nil && len(in.Uses()) == 0 && !isListed(g.Outputs, in) && !isListed(g.Inputs, in) {
			g.RemoveInitializer(in)
		}
	}
	return e.Added, nil
}

func isListed(vs []*canonical.Value, v *canonical.Value) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}
