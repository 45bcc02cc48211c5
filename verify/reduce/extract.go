package reduce

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
)

// topLevel returns the node of g that n is, or that holds the subgraph n
// is in (nil when n is not under g).
func topLevel(n *canonical.Node, g *canonical.Graph) *canonical.Node {
	for n != nil && n.Graph != g {
		if n.Graph == nil {
			return nil
		}
		n = n.Graph.Owner
	}
	return n
}

// consumed lists the values node n reads: its inputs and the outer values
// its subgraphs read.
func consumed(n *canonical.Node) []*canonical.Value {
	var out []*canonical.Value
	for _, v := range n.Inputs {
		if v != nil {
			out = append(out, v)
		}
	}
	return append(out, n.OuterValues()...)
}

// cut describes a subgraph of the main graph of a model: the nodes kept,
// the values it outputs, and the values computed by dropped nodes that it
// takes as inputs.
type cut struct {
	nodes   []*canonical.Node // kept, in the original graph's order
	outputs []*canonical.Value
	inputs  []*canonical.Value // node outputs of dropped nodes read by kept nodes
}

// plan chooses the subgraph of g made of keep: with outs given, only the
// nodes of keep from which outs are reached through kept nodes; else every
// node of keep, whose outputs that no kept node reads (or that are graph
// outputs) become the outputs.
func plan(g *canonical.Graph, keep map[*canonical.Node]bool, outs []*canonical.Value) cut {
	in := keep
	if outs != nil {
		in = map[*canonical.Node]bool{}
		work := slices.Clone(outs)
		for len(work) > 0 {
			v := work[len(work)-1]
			work = work[:len(work)-1]
			p, _ := v.Producer()
			if p == nil || !keep[p] || in[p] {
				continue
			}
			in[p] = true
			work = append(work, consumed(p)...)
		}
	}
	var c cut
	graphOut := map[*canonical.Value]bool{}
	for _, o := range g.Outputs {
		graphOut[o] = true
	}
	seen := map[*canonical.Value]bool{}
	for _, n := range g.Nodes {
		if !in[n] {
			continue
		}
		c.nodes = append(c.nodes, n)
		for _, v := range consumed(n) {
			if p, _ := v.Producer(); p != nil && !in[p] && !seen[v] {
				seen[v] = true
				c.inputs = append(c.inputs, v)
			}
		}
		if outs != nil {
			continue
		}
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			read := false
			for _, u := range o.Uses() {
				read = read || in[topLevel(u.Node, g)]
			}
			if graphOut[o] || !read {
				c.outputs = append(c.outputs, o)
			}
		}
	}
	if outs != nil {
		c.outputs = outs
	}
	return c
}

// extract returns a copy of m whose main graph is c: the nodes kept, the
// values c.inputs as graph inputs (after the graph inputs m keeps) typed
// as ref gives them, c.outputs as the graph outputs (typed as ref gives
// them where m does not say), and the initializers, inputs and value_info
// nothing kept reads dropped.
func extract(m *canonical.Model, c cut, ref map[string]*canonical.Tensor) (*canonical.Model, error) {
	sub, err := m.Clone()
	if err != nil {
		return nil, fmt.Errorf("copying the model: %w", err)
	}
	g := sub.Graph
	kept := map[*canonical.Node]bool{}
	for _, n := range c.nodes {
		kept[n] = true
	}
	// A copy keeps the order of the nodes: match them by position.
	var drop []*canonical.Node
	for i, n := range m.Graph.Nodes {
		if !kept[n] {
			drop = append(drop, g.Nodes[i])
		}
	}
	cutVals := make([]*canonical.Value, len(c.inputs))
	for i, v := range c.inputs {
		cutVals[i] = g.Lookup(v.Name)
	}
	outVals := make([]*canonical.Value, len(c.outputs))
	for i, v := range c.outputs {
		outVals[i] = g.Lookup(v.Name)
	}
	for _, n := range drop {
		g.RemoveNode(n)
	}
	for i, v := range cutVals {
		t := ref[c.inputs[i].Name]
		if v == nil || t == nil {
			sub.Close()
			return nil, fmt.Errorf("value %q: the reference did not compute it", c.inputs[i].Name)
		}
		nv, err := g.AddInput(v.Name, canonical.TensorType(t.DataType, t.Dims))
		if err != nil {
			sub.Close()
			return nil, fmt.Errorf("cutting at %q: %w", v.Name, err)
		}
		g.ReplaceAllUsesWith(v, nv)
		if i := slices.Index(outVals, v); i >= 0 {
			outVals[i] = nv
		}
	}
	for i, v := range outVals {
		if v == nil {
			sub.Close()
			return nil, fmt.Errorf("output %q: no such value", c.outputs[i].Name)
		}
		if v.Type == nil {
			t := ref[v.Name]
			if t == nil {
				sub.Close()
				return nil, fmt.Errorf("output %q: its type is unknown and the reference did not compute it", v.Name)
			}
			v.Type = canonical.TensorType(t.DataType, t.Dims)
		}
	}
	g.Outputs = outVals
	isOut := map[*canonical.Value]bool{}
	for _, v := range outVals {
		isOut[v] = true
	}
	var inputs []*canonical.Value
	for _, v := range g.Inputs {
		if len(v.Uses()) > 0 || isOut[v] {
			inputs = append(inputs, v)
		}
	}
	g.Inputs = inputs
	g.RemoveInitializers(func(v *canonical.Value) bool { return len(v.Uses()) == 0 && !isOut[v] })
	var info []*canonical.Value
	for _, v := range g.ValueInfo {
		if g.Lookup(v.Name) == v {
			info = append(info, v)
		}
	}
	g.ValueInfo = info
	return sub, nil
}
