package executor

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
)

// StepTimes records the wall time of each step of the main graph's plan
// while it is started (Options.StepTimes): a host kernel, a fused chain
// (a kernel and its epilogue), a Concat with the steps writing into it,
// a GoMLX segment. Only replays are timed (every run after a model's
// first with the same input shapes); subgraphs (If, Loop, Scan bodies)
// count in the step of the node that runs them. A step is timed with
// time.Now before and after, so a step of a few µs carries the clock's
// cost (tens of ns) and any preemption; take the least or the median of
// several runs.
type StepTimes struct {
	on    atomic.Bool
	mu    sync.Mutex
	idx   map[step]int
	steps []StepTime
}

// StepTime is one step of the plan and its recorded times.
type StepTime struct {
	// Kind is "host" (one node's kernel), "fused" (a kernel and the
	// elementwise steps fused after it), "concat" (a Concat and the steps
	// writing into its output), "segment" (nodes run through GoMLX),
	// "empty" (a node with an empty output), "guard" or "static".
	Kind string
	// Nodes and Ops are the names and op types of the step's nodes in
	// order (for a segment: the nodes producing its outputs).
	Nodes, Ops []string
	// Outputs are the names of the values the step writes.
	Outputs []string
	// Times holds the step's wall time in each timed run, in order.
	Times []time.Duration
}

// Start starts recording; Stop stops it; Reset forgets what was recorded.
func (t *StepTimes) Start() { t.on.Store(true) }

// Stop stops recording.
func (t *StepTimes) Stop() { t.on.Store(false) }

// Reset forgets the recorded steps and times.
func (t *StepTimes) Reset() {
	t.mu.Lock()
	t.idx, t.steps = nil, nil
	t.mu.Unlock()
}

// Steps returns a copy of the recorded steps in the order they first ran.
func (t *StepTimes) Steps() []StepTime {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]StepTime, len(t.steps))
	for i, s := range t.steps {
		out[i] = StepTime{Kind: s.Kind, Nodes: append([]string(nil), s.Nodes...), Ops: append([]string(nil), s.Ops...),
			Outputs: append([]string(nil), s.Outputs...), Times: append([]time.Duration(nil), s.Times...)}
	}
	return out
}

func (t *StepTimes) record(st step, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.idx[st]
	if !ok {
		if t.idx == nil {
			t.idx = map[step]int{}
		}
		i = len(t.steps)
		t.idx[st] = i
		kind, nodes := describeStep(st)
		s := StepTime{Kind: kind}
		for _, n := range nodes {
			s.Nodes = append(s.Nodes, n.Name)
			s.Ops = append(s.Ops, n.OpType)
		}
		_, writes := stepIO(st)
		for _, v := range writes {
			if v != nil {
				s.Outputs = append(s.Outputs, v.Name)
			}
		}
		t.steps = append(t.steps, s)
	}
	t.steps[i].Times = append(t.steps[i].Times, d)
}

// describeStep names a step's kind and its nodes.
func describeStep(st step) (string, []*canonical.Node) {
	switch st := st.(type) {
	case *hostStep:
		return "host", []*canonical.Node{st.n}
	case *fusedStep:
		var ns []*canonical.Node
		for _, h := range st.steps {
			ns = append(ns, h.n)
		}
		return "fused", ns
	case *expandDwStep:
		_, a := describeStep(st.expand)
		_, b := describeStep(st.dw)
		return "expand+depthwise", append(a, b...)
	case *concatStep:
		var ns []*canonical.Node
		for _, p := range st.parts {
			_, pn := describeStep(p)
			ns = append(ns, pn...)
		}
		return "concat", append(ns, st.concat.n)
	case *segStep:
		var ns []*canonical.Node
		seen := map[*canonical.Node]bool{}
		for _, v := range st.outs {
			if n, _ := v.Producer(); n != nil && !seen[n] {
				seen[n] = true
				ns = append(ns, n)
			}
		}
		return "segment", ns
	case *emptyStep:
		return "empty", []*canonical.Node{st.n}
	case *guardStep:
		return "guard", nil
	case *staticStep:
		return "static", nil
	}
	return "other", nil
}

// stepLabel names a step for kernels.ParallelProfile's step breakdown:
// its kind and its nodes' op types.
func stepLabel(st step) string {
	kind, nodes := describeStep(st)
	ops := make([]string, len(nodes))
	for i, n := range nodes {
		ops[i] = n.OpType
	}
	return kind + " " + strings.Join(ops, "+")
}
