package tfops

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// Functional control flow: If/StatelessIf → ONNX If (each branch function
// a subgraph reading its arguments from the outer scope); While/
// StatelessWhile → ONNX Loop with no trip count, its condition computed
// by the cond function before the first iteration (in the outer graph)
// and again at the end of each body (in the body subgraph), the loop
// variables carried. Loop variables the body passes through unchanged
// (TF2 captures weights and constants that way) keep their outer value
// inside the body, constants included.

// maxFuncDepth bounds the nesting of function bodies (an If in a While
// in an If ...).
const maxFuncDepth = 16

// maxPassThrough bounds the Identity chains followed to find a loop
// variable the body passes through.
const maxPassThrough = 64

func controlOps() map[string]opFunc {
	return map[string]opFunc{
		"If":             (*converter).ifOp,
		"StatelessIf":    (*converter).ifOp,
		"While":          (*converter).whileOp,
		"StatelessWhile": (*converter).whileOp,
		// Calls inside library functions (the importers inline the top
		// graph's).
		"PartitionedCall":         (*converter).partitionedCall,
		"StatefulPartitionedCall": (*converter).partitionedCall,
	}
}

// function returns the library function named by n's func attr.
func (c *converter) function(n *Node, attr string) (*Graph, string, error) {
	a, ok := n.Attrs[attr]
	if !ok || a.Func == "" {
		return nil, "", fmt.Errorf("the node has no %s function attr", attr)
	}
	f := c.lib[a.Func]
	if f == nil {
		names := make([]string, 0, len(c.lib))
		for k := range c.lib {
			names = append(names, k)
		}
		sort.Strings(names)
		if len(names) > 8 {
			names = append(names[:8], "…")
		}
		return nil, "", fmt.Errorf("%s calls function %q, which the function library lacks (it holds %d: %s)", attr, a.Func, len(c.lib), strings.Join(names, ", "))
	}
	for p := c; p != nil; p = p.parent {
		if p.fname == a.Func {
			return nil, "", fmt.Errorf("%s: function %q calls itself (recursion cannot be lowered to ONNX)", attr, a.Func)
		}
	}
	if c.depth >= maxFuncDepth {
		return nil, "", fmt.Errorf("%s: function bodies nested deeper than %d", attr, maxFuncDepth)
	}
	return f, a.Func, nil
}

// outArgs lists the output args of TF ops with more than one, for
// reading FunctionDef inputs "node:out_arg:index" (other ops have one
// output arg, possibly a list, and index counts within it).
var outArgs = map[string][]string{
	"TopKV2":              {"values", "indices"},
	"Unique":              {"y", "idx"},
	"FusedBatchNorm":      {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"},
	"FusedBatchNormV2":    {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"},
	"FusedBatchNormV3":    {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"},
	"NonMaxSuppressionV4": {"selected_indices", "valid_outputs"},
	"NonMaxSuppressionV5": {"selected_indices", "selected_scores", "valid_outputs"},
	"Switch":              {"output_false", "output_true"},
	"Merge":               {"output", "value_index"},
}

// parseRef splits a FunctionDef or GraphDef tensor reference into node,
// output arg ("" for none) and index.
func parseRef(in string) (node, arg string, idx int, err error) {
	parts := strings.Split(in, ":")
	switch len(parts) {
	case 1:
		return in, "", 0, nil
	case 2:
		idx, err = strconv.Atoi(parts[1])
		return parts[0], "", idx, err
	case 3:
		idx, err = strconv.Atoi(parts[2])
		return parts[0], parts[1], idx, err
	}
	return "", "", 0, fmt.Errorf("tensor reference %q has %d parts", in, len(parts))
}

// funcRef rewrites a FunctionDef tensor reference to GraphDef form
// ("node:k"), given the function's nodes.
func funcRef(in string, nodes map[string]*Node) (string, error) {
	ctl := strings.HasPrefix(in, "^")
	if ctl {
		return in, nil
	}
	node, arg, idx, err := parseRef(in)
	if err != nil || idx < 0 {
		return "", fmt.Errorf("input %q: not a tensor reference", in)
	}
	if arg != "" {
		if n := nodes[node]; n != nil {
			if names, ok := outArgs[n.Op]; ok {
				k := -1
				for i, a := range names {
					if a == arg {
						k = i
					}
				}
				if k < 0 {
					return "", fmt.Errorf("input %q: op %s has no output %q", in, n.Op, arg)
				}
				idx += k
			}
		}
	}
	return node + ":" + strconv.Itoa(idx), nil
}

// call converts function f (named name) with args bound to its inputs,
// adding its nodes to b (c's own builder when the function is inlined,
// a Sub builder for a subgraph), and returns its outputs.
func (c *converter) call(f *Graph, name string, args []*value, b *build.Builder) (*converter, []*value, error) {
	if len(f.Nodes) > maxNodes {
		return nil, nil, fmt.Errorf("function %q has %d nodes", name, len(f.Nodes))
	}
	if len(args) != len(f.Inputs) {
		return nil, nil, fmt.Errorf("function %q takes %d inputs, %d given", name, len(f.Inputs), len(args))
	}
	if err := c.work.take(name, len(f.Nodes)); err != nil {
		return nil, nil, err
	}
	s := &converter{b: b, g: f, file: c.file, nodes: map[string]*Node{}, vals: map[string]*value{},
		inIdx: map[string]bool{}, visits: map[string]int{}, lib: c.lib, parent: c, fname: name, depth: c.depth + 1, work: c.work}
	copies := make([]Node, len(f.Nodes))
	for i := range f.Nodes {
		copies[i] = f.Nodes[i]
		n := &copies[i]
		if n.Name == "" {
			return nil, nil, fmt.Errorf("function %q: node %d (op %s) has no name", name, i, n.Op)
		}
		if _, dup := s.nodes[n.Name]; dup {
			return nil, nil, fmt.Errorf("function %q: two nodes are named %q", name, n.Name)
		}
		s.nodes[n.Name] = n
	}
	for i := range copies {
		n := &copies[i]
		ins := make([]string, len(n.Inputs))
		for j, in := range n.Inputs {
			r, err := funcRef(in, s.nodes)
			if err != nil {
				return nil, nil, &OpError{File: c.file, Node: name + "/" + n.Name, Op: n.Op, Err: err}
			}
			ins[j] = r
		}
		n.Inputs = ins
	}
	for i, io := range f.Inputs {
		arg := io.Tensor
		if arg == "" {
			arg = io.Name
		}
		arg = strings.TrimSuffix(arg, ":0")
		if _, clash := s.nodes[arg]; clash {
			return nil, nil, fmt.Errorf("function %q: input %q has the name of a node", name, arg)
		}
		s.vals[arg+":0"] = args[i]
		s.visits[arg] = 2
	}
	outs := make([]*value, len(f.Outputs))
	for i, io := range f.Outputs {
		ref, err := funcRef(io.Tensor, s.nodes)
		if err != nil {
			return nil, nil, fmt.Errorf("function %q: output %q: %w", name, io.Name, err)
		}
		v, err := s.value(ref)
		if err != nil {
			return nil, nil, fmt.Errorf("function %q: %w", name, err)
		}
		outs[i] = v
	}
	return s, outs, nil
}

// bind returns v as a function argument: its NHWC value (made in c's
// graph), with its constant value when keepConst.
func (c *converter) bind(v *value, keepConst bool) (*value, error) {
	x, err := c.asNHWC(v)
	if err != nil {
		return nil, err
	}
	a := &value{nhwc: x, rank: v.rank, dt: v.dt, seq: v.seq, cplx: v.cplx}
	if keepConst {
		a.konst = v.konst
	}
	return a, nil
}

// asBool returns v as a one-element bool condition (TF's truth of a
// numeric scalar: non-zero).
func (c *converter) asBool(v *value, base string) (string, error) {
	x, err := c.asNHWC(v)
	if err != nil {
		return "", err
	}
	if v.dt == canonical.Bool {
		return x, nil
	}
	return c.b.Op("Cast", base, []string{x}, canonical.IntAttr("to", int64(canonical.Bool))), nil
}

// subOutputs ends subgraph s with an Identity per value (an output of a
// subgraph is a value it computes) and returns their value infos.
func subOutputs(s *converter, vals []*value, base string) ([]build.Info, error) {
	var out []build.Info
	for _, v := range vals {
		x, err := s.asNHWC(v)
		if err != nil {
			return nil, err
		}
		y := s.b.Op("Identity", base, []string{x})
		out = append(out, valueInfoOf(y, v, v.rank))
	}
	return out, nil
}

// outTypes reads a list-of-types attr (Tout, T), nil when absent.
func outTypes(n *Node, attr string) []canonical.DataType {
	a, ok := n.Attrs[attr]
	if !ok || a.List == nil {
		return nil
	}
	out := make([]canonical.DataType, len(a.List.Type))
	for i, t := range a.List.Type {
		out[i], _ = DataType(t)
	}
	return out
}

// outRanks reads output_shapes: the rank of each output, -1 unknown; nil
// when absent.
func outRanks(n *Node) []int {
	a, ok := n.Attrs["output_shapes"]
	if !ok || a.List == nil || len(a.List.Shape) == 0 {
		return nil
	}
	out := make([]int, len(a.List.Shape))
	for i, s := range a.List.Shape {
		out[i] = len(s.Dims)
		if s.UnknownRank {
			out[i] = -1
		}
	}
	return out
}

func (c *converter) ifOp(n *Node) error {
	cond, err := c.in(n, 0)
	if err != nil {
		return err
	}
	args := make([]*value, dataInputs(n)-1)
	for i := range args {
		v, err := c.in(n, i+1)
		if err != nil {
			return err
		}
		if args[i], err = c.bind(v, true); err != nil {
			return err
		}
	}
	condName, err := c.asBool(cond, n.Name+"_cond")
	if err != nil {
		return err
	}
	var graphs [2]*canonical.Graph
	var results [2][]*value
	for k, attr := range []string{"then_branch", "else_branch"} {
		f, fname, err := c.function(n, attr)
		if err != nil {
			return err
		}
		sb := c.b.Sub()
		s, outs, err := c.call(f, fname, args, sb)
		if err != nil {
			return fmt.Errorf("%s: %w", attr, err)
		}
		vis, err := subOutputs(s, outs, n.Name+"_"+strings.TrimSuffix(attr, "_branch")+"_out")
		if err != nil {
			return fmt.Errorf("%s: %w", attr, err)
		}
		graphs[k] = sb.Graph(n.Name+"_"+attr, nil, vis)
		results[k] = outs
	}
	if len(results[0]) != len(results[1]) {
		return fmt.Errorf("then_branch returns %d values, else_branch %d", len(results[0]), len(results[1]))
	}
	types, ranks := outTypes(n, "Tout"), outRanks(n)
	outNames := make([]string, len(results[0]))
	for i := range outNames {
		outNames[i] = c.b.Fresh(onnxName(n.Name + ":" + strconv.Itoa(i)))
	}
	c.b.Node("If", []string{condName}, outNames, canonical.GraphAttr("then_branch", graphs[0]), canonical.GraphAttr("else_branch", graphs[1]))
	for i, y := range outNames {
		t, e := results[0][i], results[1][i]
		dt, rank := t.dt, t.rank
		if i < len(types) && types[i] != canonical.Undefined {
			dt = types[i]
		}
		if e.rank != rank {
			rank = -1
		}
		if i < len(ranks) && ranks[i] >= 0 {
			rank = ranks[i]
		}
		c.set(n, i, &value{nhwc: y, rank: rank, dt: dt, seq: t.seq, cplx: t.cplx})
	}
	return nil
}

// passThrough reports whether body output i is its input i, directly or
// through Identity nodes.
func passThrough(f *Graph, i int) bool {
	if i >= len(f.Inputs) || i >= len(f.Outputs) {
		return false
	}
	arg := f.Inputs[i].Tensor
	if arg == "" {
		arg = f.Inputs[i].Name
	}
	arg = strings.TrimSuffix(arg, ":0")
	byName := make(map[string]*Node, len(f.Nodes))
	for j := range f.Nodes {
		byName[f.Nodes[j].Name] = &f.Nodes[j]
	}
	t := f.Outputs[i].Tensor
	for range maxPassThrough {
		node, _, idx, err := parseRef(t)
		if err != nil || idx != 0 {
			return false
		}
		nd := byName[node]
		if nd == nil {
			return node == arg
		}
		if nd.Op != "Identity" && nd.Op != "StopGradient" && nd.Op != "Snapshot" {
			return false
		}
		next := ""
		for _, in := range nd.Inputs {
			if !strings.HasPrefix(in, "^") {
				next = in
				break
			}
		}
		if next == "" {
			return false
		}
		t = next
	}
	return false
}

func (c *converter) whileOp(n *Node) error {
	nv := dataInputs(n)
	condF, condName, err := c.function(n, "cond")
	if err != nil {
		return err
	}
	bodyF, bodyName, err := c.function(n, "body")
	if err != nil {
		return err
	}
	if len(bodyF.Inputs) != nv || len(bodyF.Outputs) != nv {
		return fmt.Errorf("body %q takes %d and returns %d values for %d loop variables", bodyName, len(bodyF.Inputs), len(bodyF.Outputs), nv)
	}
	types, ranks := outTypes(n, "T"), outRanks(n)
	init := make([]*value, nv)
	initNames := make([]string, nv)
	for i := range init {
		v, err := c.in(n, i)
		if err != nil {
			return err
		}
		if init[i], err = c.bind(v, true); err != nil {
			return err
		}
		if init[i].dt == canonical.Undefined && i < len(types) {
			init[i].dt = types[i]
		}
		initNames[i] = init[i].nhwc
	}
	// The condition before the first iteration, in this graph.
	_, cv, err := c.call(condF, condName, init, c.b)
	if err != nil {
		return fmt.Errorf("cond: %w", err)
	}
	if len(cv) != 1 {
		return fmt.Errorf("cond %q returns %d values, want 1", condName, len(cv))
	}
	condInit, err := c.asBool(cv[0], n.Name+"_cond_init")
	if err != nil {
		return err
	}
	// The body: iteration number, condition, loop variables in; the
	// condition on the new variables and the variables out.
	sb := c.b.Sub()
	iter := sb.Fresh(n.Name + "_iter")
	condIn := sb.Fresh(n.Name + "_cond_in")
	bodyIns := []build.Info{build.TensorInfo(iter, canonical.Int64, nil, false), build.TensorInfo(condIn, canonical.Bool, nil, false)}
	bargs := make([]*value, nv)
	for i := range bargs {
		name := sb.Fresh(n.Name + "_var")
		rank := init[i].rank
		if i < len(ranks) && ranks[i] >= 0 {
			rank = ranks[i]
		}
		bodyIns = append(bodyIns, valueInfoOf(name, init[i], rank))
		if passThrough(bodyF, i) {
			cp := *init[i] // unchanged by the loop: the outer value
			bargs[i] = &cp
		} else {
			bargs[i] = &value{nhwc: name, rank: rank, dt: init[i].dt, seq: init[i].seq, cplx: init[i].cplx}
		}
	}
	bs, next, err := c.call(bodyF, bodyName, bargs, sb)
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	cs, cv2, err := c.call(condF, condName, next, sb)
	if err != nil {
		return fmt.Errorf("cond: %w", err)
	}
	if len(cv2) != 1 {
		return fmt.Errorf("cond %q returns %d values, want 1", condName, len(cv2))
	}
	condOut, err := cs.asBool(cv2[0], n.Name+"_cond_next")
	if err != nil {
		return err
	}
	condOut = sb.Op("Identity", n.Name+"_cond_out", []string{condOut})
	for i := range next {
		if next[i].dt != bargs[i].dt && next[i].dt != canonical.Undefined && bargs[i].dt != canonical.Undefined {
			return fmt.Errorf("body %q: loop variable %d changes type from %s to %s", bodyName, i, bargs[i].dt, next[i].dt)
		}
	}
	outVIs, err := subOutputs(bs, next, n.Name+"_next")
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	body := sb.Graph(n.Name+"_body", bodyIns, append([]build.Info{build.TensorInfo(condOut, canonical.Bool, nil, false)}, outVIs...))
	outNames := make([]string, nv)
	for i := range outNames {
		outNames[i] = c.b.Fresh(onnxName(n.Name + ":" + strconv.Itoa(i)))
	}
	c.b.Node("Loop", append([]string{"", condInit}, initNames...), outNames, canonical.GraphAttr("body", body))
	for i, y := range outNames {
		rank := init[i].rank
		if i < len(ranks) && ranks[i] >= 0 {
			rank = ranks[i]
		}
		if next[i].rank != rank {
			rank = -1
		}
		v := &value{nhwc: y, rank: rank, dt: init[i].dt, seq: init[i].seq, cplx: init[i].cplx}
		if passThrough(bodyF, i) {
			v.konst = init[i].konst
		}
		c.set(n, i, v)
	}
	return nil
}

// partitionedCall inlines the function a PartitionedCall or
// StatefulPartitionedCall calls (inside library functions; the importers
// inline the top graph's calls themselves).
func (c *converter) partitionedCall(n *Node) error {
	f, fname, err := c.function(n, "f")
	if err != nil {
		return err
	}
	args := make([]*value, dataInputs(n))
	for i := range args {
		v, err := c.in(n, i)
		if err != nil {
			return err
		}
		cp := *v
		args[i] = &cp
	}
	_, outs, err := c.call(f, fname, args, c.b)
	if err != nil {
		return err
	}
	for i, v := range outs {
		c.set(n, i, v)
	}
	return nil
}
