package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// Bisection is the search for the first node of A, in topological order,
// whose output differs from the value of the same name in B beyond
// tolerance (on the first sample).
type Bisection struct {
	NodesTotal   int `json:"nodes_total"`
	NodesChecked int `json:"nodes_checked"`
	// NodesSkipped counts nodes before the first divergence with no
	// output whose name B also has.
	NodesSkipped int `json:"nodes_skipped"`
	// Runs is the number of capture runs made on each model.
	Runs  int          `json:"runs"`
	Batch int          `json:"batch"`
	Path  []BisectStep `json:"path"`
	// First is the first divergent node; nil when every compared value
	// agrees.
	First *DivergentNode `json:"first"`
}

// BisectStep is one compared node on the bisection path.
type BisectStep struct {
	Index      int     `json:"index"` // position in A's topological order
	Node       string  `json:"node"`
	OpType     string  `json:"op_type"`
	Status     string  `json:"status"` // "match" or "diverged"
	MaxAbs     float64 `json:"max_abs"`
	WorstRatio float64 `json:"worst_ratio"`
}

// DivergentNode describes the first node whose output diverges.
type DivergentNode struct {
	Index   int             `json:"index"`
	Node    string          `json:"node"`
	OpType  string          `json:"op_type"`
	Outputs []*OutputResult `json:"outputs"`
	Inputs  []InputStatus   `json:"inputs"`
	// Diff compares the node with its counterpart in B (op, attributes,
	// input types and shapes).
	Diff *NodeDiff `json:"diff,omitempty"`
}

// InputStatus says whether an input of the divergent node already
// differed: then the cause is upstream (or in the initializer), else it is
// the node itself.
type InputStatus struct {
	Name string `json:"name"`
	// Kind: graph_input, initializer, node_output.
	Kind string `json:"kind"`
	// Status: match, differs, not_in_b.
	Status string  `json:"status"`
	MaxAbs float64 `json:"max_abs"`
	Detail string  `json:"detail,omitempty"`
}

func capturable(v *canonical.Value, gb *canonical.Graph) bool {
	if v == nil || v.Name == "" || gb.Lookup(v.Name) == nil {
		return false
	}
	if v.Type != nil {
		if _, _, _, ok := canonical.TensorTypeOf(v.Type); !ok {
			return false
		}
	}
	return true
}

// bisect walks A's nodes with the error map's engine (errmap.Build over
// A's topological order, stopping at the first batch that holds a node
// beyond tolerance) and describes the first node that diverges: its
// outputs, the status of its inputs and what differs at its counterpart.
func bisect(ctx context.Context, ma, mb *canonical.Model, ra, rb CaptureRunner, inA, inB []*canonical.Tensor, opts *Options) (*Bisection, error) {
	order, err := ma.Graph.TopoSort()
	if err != nil {
		return nil, fmt.Errorf("sorting %s: %w", "A", err)
	}
	batch := opts.BisectBatch
	if batch <= 0 {
		batch = 64
	}
	m, err := errmap.Build(ctx, errmap.Side{Model: ma, Runner: ra, Inputs: inA}, errmap.Side{Model: mb, Runner: rb, Inputs: inB},
		errmap.Options{Tolerance: opts.mapTolerance, Batch: batch, WalkSource: true, StopAtDivergence: true})
	if err != nil {
		return nil, err
	}
	bis := &Bisection{NodesTotal: len(order), Batch: batch, Path: []BisectStep{}, Runs: m.Runs}
	gb := mb.Graph
	for i, ne := range m.Nodes {
		if ne.Status == "unmatched" || (ne.Status == "not_compared" && !diverges(ne)) {
			bis.NodesSkipped++
			continue
		}
		bis.NodesChecked++
		step := BisectStep{Index: i, Node: ne.Node, OpType: ne.OpType, Status: "match", MaxAbs: ne.MaxAbs, WorstRatio: ne.Ratio}
		if ne.Status == "match" {
			bis.Path = append(bis.Path, step)
			continue
		}
		step.Status = "diverged"
		bis.Path = append(bis.Path, step)
		// The first divergent node: its outputs and inputs, captured
		// once more in one run, for their metrics and the node diff.
		n := order[i]
		ta, tb := typeTable{}, typeTable{}
		ta.addInputs(GraphInputs(ma), inA)
		tb.addInputs(GraphInputs(mb), inB)
		var outs []string
		for _, o := range n.Outputs {
			if capturable(o, gb) {
				outs = append(outs, o.Name)
			}
		}
		first := &DivergentNode{Index: i, Node: ne.Node, OpType: ne.OpType}
		var ya, yb map[string]*canonical.Tensor
		if first.Inputs, ya, yb, err = inputStatus(ctx, n, gb, ra, rb, inA, inB, opts, ta, tb, outs); err != nil {
			return nil, err
		}
		for _, name := range outs {
			res, err := compareOne(name, ya[name], yb[name], opts)
			if err != nil {
				return nil, err
			}
			first.Outputs = append(first.Outputs, res)
		}
		first.Diff = diffNode(n, ma, mb, ta, tb)
		bis.First = first
		bis.Runs++
		break
	}
	return bis, nil
}

// diverges says whether a node the map could not compare counts as
// diverged for bisection: a value one side did not compute, or of another
// element count (not a string tensor, not a node after the stop).
func diverges(ne errmap.NodeError) bool {
	return ne.Detail == "value not captured" || strings.HasPrefix(ne.Detail, "element count differs")
}

func nodeLabel(n *canonical.Node, i int) string {
	if n.Name != "" {
		return n.Name
	}
	return fmt.Sprintf("#%d %s", i, n.OpType)
}

// compareOne compares two captured values with the options' tolerance.
func compareOne(name string, ta, tb *canonical.Tensor, opts *Options) (*OutputResult, error) {
	res := &OutputResult{Name: name, BName: name, Pass: true}
	if ta == nil || tb == nil {
		res.Pass, res.Reason = false, "value not captured"
		return res, nil
	}
	acc := newAccumulator(res, opts.toleranceFor(ta.DataType, tb.DataType), 1)
	acc.noDrift = true
	if err := acc.add(ta, tb); err != nil {
		return nil, fmt.Errorf("value %q: %w", name, err)
	}
	acc.finish()
	return res, nil
}

// inputStatus compares the inputs of the divergent node across the models.
// It records the types and shapes of the values it captures in ta and tb,
// and captures in B also the inputs of n's counterpart that B names
// otherwise, for the node diff.
// The values named in also (the node's outputs) are captured in the same
// run on both sides and returned with the inputs.
func inputStatus(ctx context.Context, n *canonical.Node, gb *canonical.Graph, ra, rb CaptureRunner, inA, inB []*canonical.Tensor, opts *Options, ta, tb typeTable, also []string) ([]InputStatus, map[string]*canonical.Tensor, map[string]*canonical.Tensor, error) {
	st := []InputStatus{}
	var capture []string
	pos := map[string]int{}
	for _, v := range n.Inputs {
		if v == nil {
			continue
		}
		if _, seen := pos[v.Name]; seen {
			continue
		}
		s := InputStatus{Name: v.Name, Kind: "node_output"}
		if p, _ := v.Producer(); p == nil {
			s.Kind = "graph_input"
			if v.Const != nil {
				s.Kind = "initializer"
			}
		}
		vb := gb.Lookup(v.Name)
		switch {
		case vb == nil:
			s.Status = "not_in_b"
			s.Detail = "B has no value of this name"
		case v.Const != nil && vb.Const != nil:
			res, err := compareOne(v.Name, v.Const, vb.Const, opts)
			if err != nil {
				return nil, nil, nil, err
			}
			s.Status, s.Detail = statusOf(res)
			if res.Float != nil {
				s.MaxAbs = res.Float.MaxAbs
			}
		default:
			capture = append(capture, v.Name)
		}
		pos[v.Name] = len(st)
		st = append(st, s)
	}
	captureB := capture
	if nb, _ := counterpart(n, gb); nb != nil && len(capture) > 0 {
		inCapture := map[string]bool{}
		for _, name := range capture {
			inCapture[name] = true
		}
		captureB = append([]string(nil), capture...)
		for _, v := range nb.Inputs {
			if v == nil || v.Const != nil || inCapture[v.Name] || !capturable(v, gb) {
				continue
			}
			if _, known := tb[v.Name]; known {
				continue
			}
			inCapture[v.Name] = true
			captureB = append(captureB, v.Name)
		}
	}
	if len(capture)+len(also) == 0 {
		return st, nil, nil, nil
	}
	ya, err := ra.RunCapture(ctx, inA, append(slices.Clone(capture), also...))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("capturing the inputs of %s in A: %w", n.OpType, err)
	}
	yb, err := rb.RunCapture(ctx, inB, append(slices.Clone(captureB), also...))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("capturing the inputs of %s in B: %w", n.OpType, err)
	}
	ta.addTensors(ya)
	tb.addTensors(yb)
	for _, name := range capture {
		res, err := compareOne(name, ya[name], yb[name], opts)
		if err != nil {
			return nil, nil, nil, err
		}
		s := &st[pos[name]]
		s.Status, s.Detail = statusOf(res)
		if res.Float != nil {
			s.MaxAbs = res.Float.MaxAbs
		}
	}
	return st, ya, yb, nil
}

func statusOf(res *OutputResult) (string, string) {
	if res.Pass {
		return "match", ""
	}
	return "differs", res.Reason
}
