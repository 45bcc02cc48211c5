package tfops

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// TF1 conditionals (tf.cond with control flow v1): Switch(data, pred)
// sends data to output 1 when pred holds, to output 0 otherwise; the
// nodes of each branch read those outputs (constants through a control
// input); Merge forwards the value of the branch that ran. The mapping
// computes both branches and Merge selects with Where(pred, then, else):
// the same values, as both branches of a tf.cond compute without side
// effects (a branch that fails on the other branch's data is not
// supported). TF1 while frames are lowered before (tf1.go); a conditional
// in a loop body converts inside the body function.

// maxCondDepth bounds the chains followed to find a value's branch.
const maxCondDepth = 1 << 14

func condOps() map[string]opFunc {
	return map[string]opFunc{
		"Switch": (*converter).switchOp,
		"Merge":  (*converter).mergeOp,
		// Recovered with their while frame (tf1.go); one left over is
		// in a frame the recovery refuses, with its reason.
		"Enter":         (*converter).frameLeftOver,
		"Exit":          (*converter).frameLeftOver,
		"NextIteration": (*converter).frameLeftOver,
		"LoopCond":      (*converter).frameLeftOver,
	}
}

func (c *converter) frameLeftOver(n *Node) error {
	return tf1Refusal(c.file, n.Name, n.Op, " outside a recognisable while loop")
}

func (c *converter) switchOp(n *Node) error {
	v, err := c.in(n, 0)
	if err != nil {
		return err
	}
	if _, err := c.in(n, 1); err != nil {
		return err
	}
	c.set(n, 0, v)
	c.set(n, 1, v)
	return nil
}

// branch is the innermost conditional a value belongs to: the Switch
// predicate and the side.
type branch struct {
	pred string // tensor key
	then bool
}

// condContext returns the stack of conditionals tensor key k is computed
// in (outermost first), following data and control inputs.
func (c *converter) condContext(k string, depth int, memo map[string][]branch) ([]branch, error) {
	if b, ok := memo[k]; ok {
		return b, nil
	}
	if depth > maxCondDepth {
		return nil, fmt.Errorf("conditional branches nested through more than %d nodes", maxCondDepth)
	}
	memo[k] = nil // a cycle reads as outside any conditional
	nm, idx := splitKey(k)
	n := c.nodes[nm]
	if n == nil {
		return nil, nil
	}
	var out []branch
	switch n.Op {
	case "Switch":
		if len(n.Inputs) < 2 {
			return nil, errors.New("a Switch without its predicate")
		}
		dk, _ := tensorKey(n.Inputs[0])
		pk, _ := tensorKey(n.Inputs[1])
		inner, err := c.condContext(dk, depth+1, memo)
		if err != nil {
			return nil, err
		}
		out = append(append([]branch{}, inner...), branch{pred: pk, then: idx == 1})
	case "Merge":
		for _, in := range n.Inputs {
			if ik, ok := tensorKey(in); ok {
				inner, err := c.condContext(ik, depth+1, memo)
				if err != nil {
					return nil, err
				}
				if len(inner) > 0 {
					out = inner[:len(inner)-1]
				}
				break
			}
		}
	default:
		for _, in := range n.Inputs {
			ik, ok := tensorKey(in)
			if !ok {
				ik = in[1:] + ":0" // a control input anchors a branch's constants
			}
			inner, err := c.condContext(ik, depth+1, memo)
			if err != nil {
				return nil, err
			}
			if len(inner) > len(out) {
				out = inner
			}
		}
	}
	memo[k] = out
	return out, nil
}

// mergeOp selects between the two branches of a conditional.
func (c *converter) mergeOp(n *Node) error {
	var keys []string
	for _, in := range n.Inputs {
		if k, ok := tensorKey(in); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) != 2 {
		return fmt.Errorf("a Merge of %d values (a conditional's merges 2)", len(keys))
	}
	memo := map[string][]branch{}
	var sides [2]branch
	var found [2]bool
	for i, k := range keys {
		ctx, err := c.condContext(k, 0, memo)
		if err != nil {
			return err
		}
		if len(ctx) > 0 {
			sides[i], found[i] = ctx[len(ctx)-1], true
		}
	}
	// A branch that is only a constant (its control input dropped with a
	// while frame's) is the other branch's opposite side.
	switch {
	case !found[0] && !found[1]:
		return errors.New("neither merged value is inside a conditional branch (a TF1 while loop that could not be recovered?)")
	case !found[0]:
		sides[0] = branch{pred: sides[1].pred, then: !sides[1].then}
	case !found[1]:
		sides[1] = branch{pred: sides[0].pred, then: !sides[0].then}
	}
	if sides[0].pred != sides[1].pred || sides[0].then == sides[1].then {
		return errors.New("the merged values are not the two branches of one conditional")
	}
	thenIdx := 0
	if !sides[0].then {
		thenIdx = 1
	}
	pv, err := c.value(sides[0].pred)
	if err != nil {
		return err
	}
	pred, err := c.asBool(pv, n.Name+"_pred")
	if err != nil {
		return err
	}
	tv, err := c.value(keys[thenIdx])
	if err != nil {
		return err
	}
	ev, err := c.value(keys[1-thenIdx])
	if err != nil {
		return err
	}
	tn, err := c.asNHWC(tv)
	if err != nil {
		return err
	}
	en, err := c.asNHWC(ev)
	if err != nil {
		return err
	}
	rank := tv.rank
	if ev.rank != rank {
		rank = -1
	}
	c.setNHWC(n, 0, c.b.Op("Where", n.Name, []string{pred, tn, en}), rank, tv.dt)
	idx := c.b.Op("Where", n.Name+"_value_index", []string{pred,
		c.castTo(n.Name+"_then_index", c.b.I64("then_index", nil, []int64{int64(thenIdx)}), canonical.Int32),
		c.castTo(n.Name+"_else_index", c.b.I64("else_index", nil, []int64{int64(1 - thenIdx)}), canonical.Int32)})
	c.setNHWC(n, 1, idx, 0, canonical.Int32)
	return nil
}
