package tfops

import (
	"fmt"
	"strconv"
	"strings"
)

// TF1 while loops (tf.while_loop with control flow v1) are written as a
// frame: per loop variable Enter → Merge(Enter, NextIteration) →
// Switch(Merge, LoopCond) → Exit (Switch:0) and the body (from
// Switch:1) → NextIteration; loop invariants enter by Enter with
// is_constant. recoverTF1 lowers each such frame to a StatelessWhile whose
// cond and body functions are the nodes computing the LoopCond from the
// Merges and the NextIterations from the Switches; tfops then lowers it to
// an ONNX Loop. Conditionals (Switch/Merge) outside frames or inside a
// body convert on their own (tf1cond.go); a conditional's pivot read by
// control inputs only is dropped with the frame. Anything else (nested
// frames, a frame read from outside but through Exit, a loop Merge with
// other inputs) is refused.

// tf1Ops are the TF1 control-flow ops.
var tf1Ops = map[string]bool{"Switch": true, "Merge": true, "Enter": true, "Exit": true, "NextIteration": true, "LoopCond": true}

// dataRef returns the node and output index a data input names, ok false
// for a control input.
func dataRef(in string) (string, int, bool) {
	if strings.HasPrefix(in, "^") {
		return "", 0, false
	}
	if i := strings.LastIndexByte(in, ':'); i >= 0 {
		if k, err := strconv.Atoi(in[i+1:]); err == nil {
			return in[:i], k, true
		}
	}
	return in, 0, true
}

func tf1DataInputs(n *Node) []string {
	var out []string
	for _, in := range n.Inputs {
		if _, _, ok := dataRef(in); ok {
			out = append(out, in)
		}
	}
	return out
}

// frame is one TF1 while loop being recovered.
type frame struct {
	name     string
	vars     []*Node // non-constant Enters, one per loop variable
	invs     []*Node // constant Enters
	merges   []*Node
	switches []*Node
	nexts    []*Node
	exits    []*Node // nil where the variable has no Exit
	cond     *Node   // the LoopCond
}

// recoverTF1 rewrites the TF1 while loops of nodes to StatelessWhile
// nodes, adding their cond and body functions to lib.
func recoverTF1(file string, nodes []Node, lib map[string]*Graph) ([]Node, map[string]*Graph, error) {
	byName := map[string]*Node{}
	readers := map[string][]*Node{}
	var order []string
	frames := map[string]*frame{}
	hasTF1 := false
	for i := range nodes {
		n := &nodes[i]
		byName[n.Name] = n
		hasTF1 = hasTF1 || tf1Ops[n.Op]
	}
	if !hasTF1 {
		return nodes, lib, nil
	}
	for i := range nodes {
		n := &nodes[i]
		for _, in := range n.Inputs {
			if r, _, ok := dataRef(in); ok {
				readers[r] = append(readers[r], n)
			}
		}
		if n.Op != "Enter" {
			continue
		}
		fn := string(n.Attrs["frame_name"].S)
		if fn == "" {
			return nil, nil, tf1Refusal(file, n.Name, n.Op, " without a frame_name")
		}
		f := frames[fn]
		if f == nil {
			f = &frame{name: fn}
			frames[fn] = f
			order = append(order, fn)
		}
		if n.Attrs["is_constant"].B {
			f.invs = append(f.invs, n)
		} else {
			f.vars = append(f.vars, n)
		}
	}
	if lib == nil {
		lib = map[string]*Graph{}
	}
	removed := map[string]bool{}
	replaced := map[string]Node{}
	var whiles []Node
	for _, fn := range order {
		f := frames[fn]
		if err := f.match(file, byName, readers); err != nil {
			return nil, nil, err
		}
		w, err := f.lower(file, byName, lib, removed, replaced)
		if err != nil {
			return nil, nil, err
		}
		whiles = append(whiles, w)
	}
	dataRead := map[string]bool{}
	for _, n := range nodes {
		for _, in := range n.Inputs {
			if r, _, ok := dataRef(in); ok {
				dataRead[r] = true
			}
		}
	}
	out := make([]Node, 0, len(nodes)+len(whiles))
	for _, n := range nodes {
		if r, ok := replaced[n.Name]; ok {
			out = append(out, r)
			continue
		}
		if removed[n.Name] {
			continue
		}
		if tf1Ops[n.Op] && n.Op != "Switch" && n.Op != "Merge" {
			return nil, nil, tf1Refusal(file, n.Name, n.Op, " outside a recognisable while loop")
		}
		inside := ""
		for _, in := range n.Inputs {
			if r, _, ok := dataRef(in); ok && removed[r] && replaced[r].Name == "" {
				inside = r
			}
		}
		if inside != "" {
			if !dataRead[n.Name] {
				continue // a conditional's pivot inside the loop, read by control inputs only
			}
			return nil, nil, tf1Refusal(file, n.Name, n.Op, fmt.Sprintf(" (the node reads %q inside a while loop other than through its Exit)", inside))
		}
		out = append(out, n)
	}
	return append(out, whiles...), lib, nil
}

// match finds the Merge, Switch, NextIteration, Exit and LoopCond of each
// loop variable, refusing any other shape.
func (f *frame) match(file string, byName map[string]*Node, readers map[string][]*Node) error {
	if len(f.vars) == 0 {
		return tf1Refusal(file, f.invs[0].Name, "Enter", fmt.Sprintf(" (frame %q has no loop variable)", f.name))
	}
	only := func(n *Node, op string) (*Node, error) {
		var found *Node
		for _, r := range readers[n.Name] {
			if r.Op == op {
				if found != nil && found != r {
					return nil, tf1Refusal(file, n.Name, n.Op, fmt.Sprintf(" read by two %s nodes", op))
				}
				found = r
			}
		}
		if found == nil {
			return nil, tf1Refusal(file, n.Name, n.Op, fmt.Sprintf(" without a %s (not a while loop)", op))
		}
		return found, nil
	}
	for _, e := range f.vars {
		m, err := only(e, "Merge")
		if err != nil {
			return err
		}
		ins := tf1DataInputs(m)
		if len(ins) != 2 {
			return tf1Refusal(file, m.Name, m.Op, fmt.Sprintf(" with %d inputs (a while loop's has 2)", len(ins)))
		}
		var ni *Node
		for _, in := range ins {
			r, _, _ := dataRef(in)
			if r == e.Name {
				continue
			}
			if ni = byName[r]; ni == nil || ni.Op != "NextIteration" {
				return tf1Refusal(file, m.Name, m.Op, " that merges other values than an Enter and a NextIteration (a conditional)")
			}
		}
		if ni == nil {
			return tf1Refusal(file, m.Name, m.Op, " without a NextIteration")
		}
		s, err := only(m, "Switch")
		if err != nil {
			return err
		}
		sins := tf1DataInputs(s)
		if len(sins) != 2 {
			return tf1Refusal(file, s.Name, s.Op, " without a predicate")
		}
		if r, _, _ := dataRef(sins[0]); r != m.Name {
			return tf1Refusal(file, s.Name, s.Op, " that switches another value than its Merge")
		}
		lcName, _, _ := dataRef(sins[1])
		lc := byName[lcName]
		if lc == nil || lc.Op != "LoopCond" || (f.cond != nil && f.cond != lc) {
			return tf1Refusal(file, s.Name, s.Op, " whose predicate is not the frame's one LoopCond (a conditional)")
		}
		f.cond = lc
		var exit *Node
		for _, r := range readers[s.Name] {
			for _, in := range r.Inputs {
				nm, k, ok := dataRef(in)
				if !ok || nm != s.Name || k != 0 {
					continue
				}
				if r.Op != "Exit" || exit != nil {
					return tf1Refusal(file, s.Name, s.Op, " whose false output feeds more than one Exit")
				}
				exit = r
			}
		}
		f.merges = append(f.merges, m)
		f.switches = append(f.switches, s)
		f.nexts = append(f.nexts, ni)
		f.exits = append(f.exits, exit)
	}
	if len(tf1DataInputs(f.cond)) != 1 {
		return tf1Refusal(file, f.cond.Name, f.cond.Op, " without one input")
	}
	return nil
}

// lower builds the cond and body functions and the StatelessWhile node.
func (f *frame) lower(file string, byName map[string]*Node, lib map[string]*Graph, removed map[string]bool, replaced map[string]Node) (Node, error) {
	varArg := func(k int) string { return "_var" + strconv.Itoa(k) }
	invArg := func(j int) string { return "_inv" + strconv.Itoa(j) }
	inv := map[string]int{}
	for j, e := range f.invs {
		inv[e.Name] = j
	}
	merge, sw := map[string]int{}, map[string]int{}
	for k := range f.vars {
		merge[f.merges[k].Name] = k
		sw[f.switches[k].Name] = k
	}
	// slice collects the nodes computing roots from the frame's args.
	slice := func(what string, roots []string, arg func(node string, idx int) (string, bool)) ([]Node, []string, error) {
		var fn []Node
		seen := map[string]bool{}
		mapRef := func(in string) (string, string, error) {
			nm, idx, _ := dataRef(in)
			if a, ok := arg(nm, idx); ok {
				return a, "", nil
			}
			n := byName[nm]
			if n == nil {
				return "", "", fmt.Errorf("%s: the loop reads %q, which no node produces", file, nm)
			}
			// A conditional's Switch and Merge in the body convert with it
			// (tf1cond.go); any other TF1 op is a nested loop.
			if (tf1Ops[n.Op] && n.Op != "Switch" && n.Op != "Merge") || n.Op == "Placeholder" {
				return "", "", tf1Refusal(file, n.Name, n.Op, fmt.Sprintf(" inside the %s of while loop %q (a nested loop)", what, f.name))
			}
			return in, nm, nil
		}
		var rets []string
		var stack []string
		for _, r := range roots {
			ref, nm, err := mapRef(r)
			if err != nil {
				return nil, nil, err
			}
			rets = append(rets, ref)
			if nm != "" {
				stack = append(stack, nm)
			}
		}
		for len(stack) > 0 {
			nm := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[nm] {
				continue
			}
			seen[nm] = true
			if len(seen) > maxNodes {
				return nil, nil, fmt.Errorf("%s: while loop %q: more than %d nodes", file, f.name, maxNodes)
			}
			n := *byName[nm]
			var ins []string
			for _, in := range n.Inputs {
				if _, _, ok := dataRef(in); !ok {
					continue // frame placement, not data
				}
				ref, dep, err := mapRef(in)
				if err != nil {
					return nil, nil, err
				}
				ins = append(ins, ref)
				if dep != "" {
					stack = append(stack, dep)
				}
			}
			n.Inputs = ins
			fn = append(fn, n)
			removed[nm] = true
		}
		return fn, rets, nil
	}
	invOrNot := func(nm string) (string, bool) {
		if j, ok := inv[nm]; ok {
			return invArg(j), true
		}
		return "", false
	}
	condNodes, condRets, err := slice("condition", tf1DataInputs(f.cond), func(nm string, idx int) (string, bool) {
		if k, ok := merge[nm]; ok && idx == 0 {
			return varArg(k), true
		}
		return invOrNot(nm)
	})
	if err != nil {
		return Node{}, err
	}
	var nextRefs []string
	for _, ni := range f.nexts {
		ins := tf1DataInputs(ni)
		if len(ins) != 1 {
			return Node{}, tf1Refusal(file, ni.Name, ni.Op, " without one input")
		}
		nextRefs = append(nextRefs, ins[0])
	}
	bodyNodes, bodyRets, err := slice("body", nextRefs, func(nm string, idx int) (string, bool) {
		if k, ok := sw[nm]; ok && idx == 1 {
			return varArg(k), true
		}
		return invOrNot(nm)
	})
	if err != nil {
		return Node{}, err
	}
	name := f.name + "/tf1_while"
	for i := 1; byName[name] != nil; i++ {
		name = f.name + "/tf1_while_" + strconv.Itoa(i)
	}
	condName, bodyName := name+"/cond", name+"/body"
	if lib[condName] != nil || lib[bodyName] != nil {
		return Node{}, fmt.Errorf("%s: library functions %q or %q exist already", file, condName, bodyName)
	}
	var args []IO
	var types []string
	var inputs []string
	for k, e := range f.vars {
		args = append(args, IO{Name: varArg(k), Tensor: varArg(k)})
		types = append(types, e.Attrs["T"].Type)
		ins := tf1DataInputs(e)
		if len(ins) != 1 {
			return Node{}, tf1Refusal(file, e.Name, e.Op, " without one input")
		}
		inputs = append(inputs, ins[0])
	}
	for j, e := range f.invs {
		args = append(args, IO{Name: invArg(j), Tensor: invArg(j)})
		types = append(types, e.Attrs["T"].Type)
		ins := tf1DataInputs(e)
		if len(ins) != 1 {
			return Node{}, tf1Refusal(file, e.Name, e.Op, " without one input")
		}
		inputs = append(inputs, ins[0])
	}
	cond := &Graph{Name: condName, Nodes: condNodes, Inputs: args, Outputs: []IO{{Name: "output_0", Tensor: condRets[0]}}}
	body := &Graph{Name: bodyName, Nodes: bodyNodes, Inputs: args}
	for k, r := range bodyRets {
		body.Outputs = append(body.Outputs, IO{Name: "output_" + strconv.Itoa(k), Tensor: r})
	}
	for j := range f.invs {
		body.Outputs = append(body.Outputs, IO{Name: "output_" + strconv.Itoa(len(f.vars)+j), Tensor: invArg(j)})
	}
	lib[condName], lib[bodyName] = cond, body
	for _, group := range [][]*Node{f.vars, f.invs, f.merges, f.switches, f.nexts, {f.cond}} {
		for _, n := range group {
			removed[n.Name] = true
		}
	}
	for k, x := range f.exits {
		if x != nil {
			removed[x.Name] = true
			replaced[x.Name] = Node{Name: x.Name, Op: "Identity", Inputs: []string{name + ":" + strconv.Itoa(k)}, Attrs: map[string]Attr{"T": x.Attrs["T"]}}
		}
	}
	return Node{Name: name, Op: "StatelessWhile", Inputs: inputs, Attrs: map[string]Attr{
		"T":    {List: &AttrList{Type: types}},
		"cond": {Func: condName},
		"body": {Func: bodyName},
	}}, nil
}

// tf1Refusal is the error for TF1 control flow the mapping does not
// recover.
func tf1Refusal(file, node, op, why string) error {
	return &OpError{File: file, Node: node, Op: op, Err: fmt.Errorf(
		"TF1 control flow (%s)%s: the TF-op mapping converts functional If/While, TF1 while loops whose bodies hold no nested loop or conditional, and TF1 conditionals (Switch/Merge); re-export the model with TF2 control flow (tf.function, control_flow_v2)", op, why)}
}
