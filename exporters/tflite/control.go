package tflite

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// loweredOps are the ONNX ops lowerControl rewrites before the converter
// runs (formats/tflite lists them as decomposed).
func loweredOps() []string { return []string{"If", "Loop"} }

// maxUnroll is the largest Loop trip count unrolled into the graph.
const maxUnroll = 64

// maxUnrolledNodes bounds the nodes one unrolled Loop adds.
const maxUnrolledNodes = 4096

// lowerControl rewrites the If and Loop nodes of g (the top-level graph of
// a clone) into plain nodes TFLite can express, and returns, by node name,
// why the ones it left could not be:
//
//   - If whose branches have no nested subgraphs and outputs of one known
//     static shape: both branches are inlined and each output is
//     Where(cond, then, else) (SELECT_V2); the untaken branch is computed
//     too and its result dropped — ONNX branches have no side effects.
//   - Loop with a constant trip count (at most maxUnroll), no condition
//     input or a constant true one, a body whose condition output is its
//     condition input (or constant true), no scan outputs and no nested
//     subgraphs: the body is inlined once per iteration (the iteration
//     number a constant).
//
// notes says what was done, for the report.
func lowerControl(g *canonical.Graph) (why map[string]string, notes []string, err error) {
	why = map[string]string{}
	names := canonical.NewNamer(nil)
	names.ReserveGraph(g)
	l := &lowerer{g: g, names: names}
	for _, n := range slices.Clone(g.Nodes) {
		var reason string
		switch n.OpType {
		case "If":
			reason, err = l.lowerIf(n)
		case "Loop":
			reason, err = l.lowerLoop(n)
		default:
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("node %q (%s): %w", n.Name, n.OpType, err)
		}
		if reason != "" {
			why[n.Name] = reason
			continue
		}
		notes = append(notes, l.note)
	}
	return why, notes, nil
}

type lowerer struct {
	g     *canonical.Graph
	names *canonical.Namer // every name of g and its subgraphs
	note  string
}

// nested reports whether a node of sg holds a subgraph.
func nested(sg *canonical.Graph) bool {
	return slices.ContainsFunc(sg.Nodes, func(m *canonical.Node) bool { return len(m.Subgraphs()) > 0 })
}

// inline copies the nodes of sg into the top-level graph with vmap giving
// the values of sg's inputs (and filled with the copies of its values);
// values from outside sg stay as they are.
func (l *lowerer) inline(sg *canonical.Graph, vmap map[*canonical.Value]*canonical.Value, prefix string) error {
	e := build.On(l.g, l.names, prefix)
	for _, v := range sg.Initializers {
		t := *v.Const
		vmap[v] = e.Const(v.Name, &t)
	}
	if err := e.Err(); err != nil {
		return err
	}
	order, err := sg.TopoSort()
	if err != nil {
		return err
	}
	for _, m := range order {
		ins := make([]*canonical.Value, len(m.Inputs))
		for i, in := range m.Inputs {
			ins[i] = l.lookup(vmap, in)
		}
		outs := e.Copy(m, ins)
		if err := e.Err(); err != nil {
			return err
		}
		for i, o := range m.Outputs {
			if o != nil {
				vmap[o] = outs[i]
			}
		}
	}
	return nil
}

func (l *lowerer) lookup(vmap map[*canonical.Value]*canonical.Value, v *canonical.Value) *canonical.Value {
	if v == nil {
		return nil
	}
	if nv, ok := vmap[v]; ok {
		return nv
	}
	return v
}

// replaceOutputs removes n and makes each of its outputs computed by
// op(args[i]...) under the output's own name.
func (l *lowerer) replaceOutputs(n *canonical.Node, op string, args [][]*canonical.Value) error {
	olds := slices.Clone(n.Outputs)
	l.g.RemoveNode(n)
	e := build.On(l.g, l.names, n.Name)
	for i, old := range olds {
		if old == nil {
			continue
		}
		v := e.OpTo(op, args[i], old.Name)
		if err := e.Err(); err != nil {
			return err
		}
		l.g.ReplaceAllUsesWith(old, v)
	}
	return nil
}

// staticShape returns the dims of a tensor type with every dim known.
func staticShape(v *canonical.Value) ([]int64, bool) {
	if v == nil || v.Type == nil {
		return nil, false
	}
	_, dims, has, ok := canonical.TensorTypeOf(v.Type)
	if !ok || !has {
		return nil, false
	}
	out := make([]int64, len(dims))
	for i, d := range dims {
		if !d.Known {
			return nil, false
		}
		out[i] = d.Value
	}
	return out, true
}

func (l *lowerer) lowerIf(n *canonical.Node) (string, error) {
	th, el := n.Attr("then_branch"), n.Attr("else_branch")
	if th == nil || th.G == nil || el == nil || el.G == nil || len(n.Inputs) < 1 || n.Inputs[0] == nil {
		return "If without its condition or both branches", nil
	}
	if nested(th.G) || nested(el.G) {
		return "a branch holds a nested If/Loop/Scan (only flat branches are lowered to SELECT_V2)", nil
	}
	if len(th.G.Outputs) != len(n.Outputs) || len(el.G.Outputs) != len(n.Outputs) {
		return "branch outputs do not match the If's outputs", nil
	}
	for i := range n.Outputs {
		ts, ok1 := staticShape(th.G.Outputs[i])
		es, ok2 := staticShape(el.G.Outputs[i])
		if !ok1 || !ok2 || !slices.Equal(ts, es) {
			return fmt.Sprintf("output %d: the branches do not give one known static shape (then %v, else %v); TFLite has no IF subgraphs here, the If is lowered to SELECT_V2 only when both branches have the same static shapes (pass -O shapes=… or fix the input shapes)", i, ts, es), nil
		}
	}
	tm, em := map[*canonical.Value]*canonical.Value{}, map[*canonical.Value]*canonical.Value{}
	if err := l.inline(th.G, tm, n.Name+"/then"); err != nil {
		return "", err
	}
	if err := l.inline(el.G, em, n.Name+"/else"); err != nil {
		return "", err
	}
	args := make([][]*canonical.Value, len(n.Outputs))
	for i := range n.Outputs {
		args[i] = []*canonical.Value{n.Inputs[0], l.lookup(tm, th.G.Outputs[i]), l.lookup(em, el.G.Outputs[i])}
	}
	if err := l.replaceOutputs(n, "Where", args); err != nil {
		return "", err
	}
	l.note = fmt.Sprintf("If %q: both branches computed (%d + %d nodes), SELECT_V2 picks each output", n.Name, len(th.G.Nodes), len(el.G.Nodes))
	return "", nil
}

// constScalar returns the single value of a constant int64 or bool tensor.
func constScalar(v *canonical.Value) (int64, bool) {
	if v == nil || v.Const == nil {
		return 0, false
	}
	if n, err := canonical.NumElements(v.Const.Dims); err != nil || n != 1 {
		return 0, false
	}
	switch v.Const.DataType {
	case canonical.Int64, canonical.Int32, canonical.Bool:
		x, err := v.Const.Float64s()
		if err != nil || len(x) != 1 {
			return 0, false
		}
		return int64(x[0]), true
	}
	return 0, false
}

func (l *lowerer) lowerLoop(n *canonical.Node) (string, error) {
	ba := n.Attr("body")
	if ba == nil || ba.G == nil {
		return "Loop without a body", nil
	}
	body := ba.G
	trips, ok := constScalar(n.Input(0))
	if !ok {
		return "the trip count is not a constant (only Loops with a constant trip count are unrolled; TFLite WHILE is not written)", nil
	}
	if trips < 0 || trips > maxUnroll {
		return fmt.Sprintf("trip count %d: only up to %d iterations are unrolled", trips, maxUnroll), nil
	}
	if c := n.Input(1); c != nil {
		if v, ok := constScalar(c); !ok || v == 0 {
			return "the loop condition is not a constant true (a data-dependent exit needs TFLite WHILE, which is not written)", nil
		}
	}
	nCarried := len(n.Inputs) - 2
	if nCarried < 0 || len(body.Inputs) != nCarried+2 || len(body.Outputs) != nCarried+1 {
		return "scan outputs (or a malformed body): only loop-carried values are unrolled", nil
	}
	if nested(body) {
		return "the body holds a nested If/Loop/Scan", nil
	}
	if trips*int64(len(body.Nodes)) > maxUnrolledNodes {
		return fmt.Sprintf("unrolling %d iterations of %d nodes would add more than %d nodes", trips, len(body.Nodes), maxUnrolledNodes), nil
	}
	condIn, condOut := body.Inputs[1], body.Outputs[0]
	if p, _ := condOut.Producer(); condOut != condIn && !(p != nil && p.OpType == "Identity" && p.Input(0) == condIn) {
		if v, ok := constScalar(condOut); !ok || v == 0 {
			return "the body computes its own exit condition (a data-dependent exit needs TFLite WHILE, which is not written)", nil
		}
	}
	e := build.On(l.g, l.names, n.Name)
	trueV := e.Const("cond", canonical.NewTensor("", canonical.Bool, nil, []byte{1}))
	if err := e.Err(); err != nil {
		return "", err
	}
	cur := slices.Clone(n.Inputs[2:])
	for it := int64(0); it < trips; it++ {
		vmap := map[*canonical.Value]*canonical.Value{condIn: trueV}
		if len(body.Inputs[0].Uses()) > 0 {
			iv := e.Const(fmt.Sprintf("iter%d", it), canonical.Int64Tensor("", nil, []int64{it}))
			if err := e.Err(); err != nil {
				return "", err
			}
			vmap[body.Inputs[0]] = iv
		}
		for j := range cur {
			vmap[body.Inputs[2+j]] = cur[j]
		}
		if err := l.inline(body, vmap, fmt.Sprintf("%s/iter%d", n.Name, it)); err != nil {
			return "", err
		}
		for j := range cur {
			cur[j] = l.lookup(vmap, body.Outputs[1+j])
		}
	}
	args := make([][]*canonical.Value, len(n.Outputs))
	for j := range args {
		args[j] = []*canonical.Value{cur[j]}
	}
	if err := l.replaceOutputs(n, "Identity", args); err != nil {
		return "", err
	}
	l.note = fmt.Sprintf("Loop %q: unrolled, %d iterations of %d nodes", n.Name, trips, len(body.Nodes))
	return "", nil
}
