package tensorflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
)

// inferenceIO derives what a training graph (a TF1 checkpoint whose meta
// graph holds its loss, gradients and optimizer) predicts, from the graph
// alone. losses are the nodes nothing reads but the training machinery
// (graphIO's outputs of a graph that trains).
//
// The forward graph is what the losses read (gradient, optimizer, assign,
// save and restore nodes are never on it). Following each Placeholder's
// consumers to the first node that also reads a variable:
//   - a Placeholder first meets the model's parameters (that node's other
//     operands read variables and no Placeholder): it is an input;
//   - a label first meets the prediction (the other operand reads
//     variables and an input), and after that node no layer applies a
//     variable (no variable read enters further on: what follows is the
//     loss, a regularizer at most).
//
// The outputs are the prediction operands of the nodes where the labels
// meet the prediction (less the loss's own flattening Reshape, and less an
// operand computed from another one: ArgMax(logits) of an accuracy metric
// beside logits). ok is false when the graph does not say: no label, no
// input, a Placeholder that is neither, or an output that depends on a
// label; why is one line naming the choice.
func inferenceIO(gd *tfpb.GraphDef, losses []string) (inputs, outputs []IO, why string, ok bool) {
	nodes := gd.GetNode()
	byName := make(map[string]*tfpb.NodeDef, len(nodes))
	for _, n := range nodes {
		byName[n.GetName()] = n
	}
	data := func(n *tfpb.NodeDef) []string {
		var ins []string
		for _, in := range n.GetInput() {
			if !strings.HasPrefix(in, "^") {
				ins = append(ins, in)
			}
		}
		return ins
	}
	base := func(tensor string) string { return strings.Split(tensor, ":")[0] }
	// The forward graph: what the losses read.
	fwd := map[string]bool{}
	stack := slices.Clone(losses)
	for len(stack) > 0 {
		name := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := byName[name]
		if n == nil || fwd[name] {
			continue
		}
		fwd[name] = true
		for _, in := range data(n) {
			stack = append(stack, base(in))
		}
	}
	isVar := func(op string) bool { return op == "VariableV2" || op == "Variable" || op == "VarHandleOp" }
	// varRead: a variable, or Identity/ReadVariableOp of one (W/read).
	varRead := func(name string) bool {
		n := byName[name]
		if n == nil {
			return false
		}
		if isVar(n.GetOp()) {
			return true
		}
		ins := data(n)
		return (n.GetOp() == "Identity" || n.GetOp() == "ReadVariableOp") && len(ins) == 1 && byName[base(ins[0])] != nil && isVar(byName[base(ins[0])].GetOp())
	}
	// Per forward node: does it read a variable, and which Placeholders.
	readsVar := map[string]bool{}
	phs := map[string][]string{}
	var visit func(name string, seen map[string]bool)
	visit = func(name string, seen map[string]bool) {
		if _, done := phs[name]; done || seen[name] {
			return
		}
		seen[name] = true
		n := byName[name]
		var ps []string
		v := false
		switch {
		case n == nil:
		case n.GetOp() == "Placeholder":
			ps = []string{name}
		case isVar(n.GetOp()):
			v = true
		default:
			for _, in := range data(n) {
				b := base(in)
				visit(b, seen)
				v = v || readsVar[b]
				for _, p := range phs[b] {
					if !slices.Contains(ps, p) {
						ps = append(ps, p)
					}
				}
			}
		}
		readsVar[name], phs[name] = v, ps
	}
	consumers := map[string][]string{}
	var placeholders []string
	for _, n := range nodes {
		if !fwd[n.GetName()] {
			continue
		}
		visit(n.GetName(), map[string]bool{})
		if n.GetOp() == "Placeholder" {
			placeholders = append(placeholders, n.GetName())
		}
		for _, in := range data(n) {
			if !slices.Contains(consumers[base(in)], n.GetName()) {
				consumers[base(in)] = append(consumers[base(in)], n.GetName())
			}
		}
	}
	// meets returns, for Placeholder p, the first nodes on its consumers'
	// paths that read a variable.
	meets := func(p string) []string {
		var out []string
		seen := map[string]bool{p: true}
		queue := []string{p}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, c := range consumers[x] {
				if seen[c] {
					continue
				}
				seen[c] = true
				if readsVar[c] {
					out = append(out, c)
				} else {
					queue = append(queue, c)
				}
			}
		}
		return out
	}
	// appliesVar tells whether a variable read enters the forward graph
	// at m or after it (a layer applied after the label met it).
	appliesVar := func(m string) bool {
		seen := map[string]bool{}
		queue := []string{m}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			if seen[x] {
				continue
			}
			seen[x] = true
			if x != m {
				for _, in := range data(byName[x]) {
					if varRead(base(in)) {
						return true
					}
				}
			}
			queue = append(queue, consumers[x]...)
		}
		return false
	}
	type meeting struct{ label, node string }
	var labels []string
	var ins []string
	var labelMeets []meeting
	for _, p := range placeholders {
		ms := meets(p)
		param, pred := 0, 0
		for _, m := range ms {
			others := false
			for _, in := range data(byName[m]) {
				b := base(in)
				if readsVar[b] && slices.ContainsFunc(phs[b], func(q string) bool { return q != p }) && !slices.Contains(phs[b], p) {
					others = true
				}
			}
			if others && !appliesVar(m) {
				pred++
			} else {
				param++
			}
		}
		switch {
		case len(ms) > 0 && pred == len(ms):
			labels = append(labels, p)
			for _, m := range ms {
				labelMeets = append(labelMeets, meeting{p, m})
			}
		case len(ms) > 0 && param == len(ms):
			ins = append(ins, p)
		default:
			return nil, nil, "", false
		}
	}
	if len(labels) == 0 || len(ins) == 0 {
		return nil, nil, "", false
	}
	// The prediction operands of the meeting nodes.
	var cands []string
	var where []string
	for _, lm := range labelMeets {
		n := byName[lm.node]
		for _, in := range data(n) {
			b := base(in)
			if !readsVar[b] || slices.Contains(phs[b], lm.label) || len(phs[b]) == 0 {
				continue
			}
			// The loss's own flattening (softmax_cross_entropy's Reshape
			// of the logits) is not the prediction: its input is.
			for {
				r := byName[base(in)]
				rin := data(r)
				if len(rin) == 0 || !flattening[r.GetOp()] || scope(r.GetName()) != scope(n.GetName()) && !strings.HasPrefix(r.GetName(), n.GetName()+"/") {
					break
				}
				in = rin[0]
			}
			if !strings.Contains(in, ":") {
				in += ":0"
			}
			if !slices.Contains(cands, in) {
				cands = append(cands, in)
				where = append(where, fmt.Sprintf("%s meets %s at %s (%s)", lm.label, strings.TrimSuffix(in, ":0"), n.GetName(), n.GetOp()))
			}
		}
	}
	// Leave out an operand computed from another one.
	for _, c := range cands {
		from := false
		for _, d := range cands {
			if d != c && dependsOn(byName, base(c), base(d)) {
				from = true
			}
		}
		if from {
			continue
		}
		for _, l := range labels {
			if slices.Contains(phs[base(c)], l) {
				return nil, nil, "", false
			}
		}
		outputs = append(outputs, IO{Name: strings.TrimSuffix(c, ":0"), Tensor: c})
	}
	if len(outputs) == 0 {
		return nil, nil, "", false
	}
	names := make([]string, len(outputs))
	for i, o := range outputs {
		names[i] = o.Tensor
	}
	for _, p := range ins {
		inputs = append(inputs, IO{Name: p, Tensor: p + ":0"})
	}
	why = fmt.Sprintf("the graph trains, so its inference part was taken: inputs %s, outputs %s (labels %s: %s; the loss, gradients and optimizer left out; -O inputs=/outputs= choose others)",
		strings.Join(ioTensors(inputs), ", "), strings.Join(names, ", "), strings.Join(labels, ", "), strings.Join(where, "; "))
	return inputs, outputs, why, true
}

// flattening are the ops a loss applies to the prediction before its own
// op (softmax_cross_entropy's Reshape to [-1, classes]).
var flattening = map[string]bool{"Reshape": true, "Squeeze": true, "ExpandDims": true, "StopGradient": true}

// scope is the name scope of a node ("" at the top).
func scope(name string) string {
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return ""
	}
	return name[:i]
}

// dependsOn tells whether node a reads node b through data inputs.
func dependsOn(byName map[string]*tfpb.NodeDef, a, b string) bool {
	seen := map[string]bool{}
	stack := []string{a}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := byName[x]
		if n == nil || seen[x] {
			continue
		}
		seen[x] = true
		for _, in := range n.GetInput() {
			if strings.HasPrefix(in, "^") {
				continue
			}
			y := strings.Split(in, ":")[0]
			if y == b {
				return true
			}
			stack = append(stack, y)
		}
	}
	return false
}

func ioTensors(ios []IO) []string {
	out := make([]string, len(ios))
	for i, io := range ios {
		out[i] = io.Tensor
	}
	return out
}
