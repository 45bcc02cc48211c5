package verify

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
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

func bisect(ctx context.Context, ma, mb *canonical.Model, ra, rb CaptureRunner, inA, inB []*canonical.Tensor, opts *Options) (*Bisection, error) {
	order, err := ma.Graph.TopoSort()
	if err != nil {
		return nil, fmt.Errorf("sorting %s: %w", "A", err)
	}
	batch := opts.BisectBatch
	if batch <= 0 {
		batch = 64
	}
	bis := &Bisection{NodesTotal: len(order), Batch: batch, Path: []BisectStep{}}
	gb := mb.Graph
	// The types and shapes of the values seen, for the node diff.
	ta, tb := typeTable{}, typeTable{}
	ta.addInputs(GraphInputs(ma), inA)
	tb.addInputs(GraphInputs(mb), inB)
	type item struct {
		idx  int
		node *canonical.Node
		vals []string
	}
	i := 0
	for i < len(order) && bis.First == nil {
		// Collect the next batch of nodes (at most batch values).
		var items []item
		var want []string
		for i < len(order) && len(want) < batch {
			n := order[i]
			var vals []string
			for _, o := range n.Outputs {
				if capturable(o, gb) {
					vals = append(vals, o.Name)
				}
			}
			if len(vals) == 0 {
				bis.NodesSkipped++
			} else {
				items = append(items, item{i, n, vals})
				want = append(want, vals...)
			}
			i++
		}
		if len(want) == 0 {
			continue
		}
		ya, err := ra.RunCapture(ctx, inA, want)
		if err != nil {
			return nil, fmt.Errorf("capturing %d values of A: %w", len(want), err)
		}
		yb, err := rb.RunCapture(ctx, inB, want)
		if err != nil {
			return nil, fmt.Errorf("capturing %d values of B: %w", len(want), err)
		}
		bis.Runs++
		ta.addTensors(ya)
		tb.addTensors(yb)
		for _, it := range items {
			bis.NodesChecked++
			step := BisectStep{Index: it.idx, Node: nodeLabel(it.node, it.idx), OpType: it.node.OpType, Status: "match"}
			var results []*OutputResult
			for _, name := range it.vals {
				res, err := compareOne(name, ya[name], yb[name], opts)
				if err != nil {
					return nil, err
				}
				results = append(results, res)
				if res.Float != nil {
					step.MaxAbs = max(step.MaxAbs, res.Float.MaxAbs)
					step.WorstRatio = max(step.WorstRatio, res.Float.WorstRatio)
				}
				if !res.Pass {
					step.Status = "diverged"
				}
			}
			bis.Path = append(bis.Path, step)
			if step.Status == "diverged" {
				first := &DivergentNode{Index: it.idx, Node: step.Node, OpType: step.OpType, Outputs: results}
				if first.Inputs, err = inputStatus(ctx, it.node, gb, ra, rb, inA, inB, opts, ta, tb); err != nil {
					return nil, err
				}
				first.Diff = diffNode(it.node, ma, mb, ta, tb)
				bis.First = first
				bis.Runs++
				break
			}
		}
	}
	return bis, nil
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
func inputStatus(ctx context.Context, n *canonical.Node, gb *canonical.Graph, ra, rb CaptureRunner, inA, inB []*canonical.Tensor, opts *Options, ta, tb typeTable) ([]InputStatus, error) {
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
				return nil, err
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
	if len(capture) > 0 {
		ya, err := ra.RunCapture(ctx, inA, capture)
		if err != nil {
			return nil, fmt.Errorf("capturing the inputs of %s in A: %w", n.OpType, err)
		}
		yb, err := rb.RunCapture(ctx, inB, captureB)
		if err != nil {
			return nil, fmt.Errorf("capturing the inputs of %s in B: %w", n.OpType, err)
		}
		ta.addTensors(ya)
		tb.addTensors(yb)
		for _, name := range capture {
			res, err := compareOne(name, ya[name], yb[name], opts)
			if err != nil {
				return nil, err
			}
			s := &st[pos[name]]
			s.Status, s.Detail = statusOf(res)
			if res.Float != nil {
				s.MaxAbs = res.Float.MaxAbs
			}
		}
	}
	return st, nil
}

func statusOf(res *OutputResult) (string, string) {
	if res.Pass {
		return "match", ""
	}
	return "differs", res.Reason
}
