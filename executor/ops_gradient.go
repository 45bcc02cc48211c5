package executor

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/onnxconv/onnxconv/canonical"
)

// ai.onnx.preview.training Gradient: the nodes computing y from xs are
// lowered again inside the open segment with the xs as inputs, and GoMLX's
// reverse-mode autodiff gives d(sum y)/dx for each x.

func registerGradient(r registry) {
	r.impl(trainingDomain, "Gradient").lower = lowerGradient
}

func lowerGradient(c *lctx) error {
	xs := c.n.AttrStrings("xs", nil)
	yName := c.AStr("y", "")
	g := c.n.Graph
	y := g.Lookup(yName)
	if y == nil || len(xs) == 0 {
		return fmt.Errorf("Gradient: y %q or xs missing", yName)
	}
	local := newEnv(c.en)
	xv := make([]*canonical.Value, len(xs))
	xnodes := make([]*graph.Node, len(xs))
	for i, name := range xs {
		v := g.Lookup(name)
		if v == nil {
			return fmt.Errorf("Gradient: no value %q", name)
		}
		xv[i] = v
		// Input i of the Gradient node holds x_i.
		if i >= c.NIn() || c.n.Inputs[i] != v {
			return fmt.Errorf("Gradient: input %d is not %q", i, name)
		}
		xnodes[i] = c.X(i)
		if !xnodes[i].DType().IsFloat() {
			return fmt.Errorf("Gradient: %q is not floating point", name)
		}
		local.set(v, &slot{node: xnodes[i], dt: c.DT(i)})
	}
	// The nodes between the xs and y, in graph order.
	need := map[*canonical.Node]bool{}
	stop := map[*canonical.Value]bool{}
	for _, v := range xv {
		stop[v] = true
	}
	var walk func(v *canonical.Value)
	walk = func(v *canonical.Value) {
		if v == nil || stop[v] {
			return
		}
		p, _ := v.Producer()
		if p == nil || need[p] {
			return
		}
		need[p] = true
		for _, in := range p.Inputs {
			walk(in)
		}
	}
	walk(y)
	order, err := g.TopoSort()
	if err != nil {
		return err
	}
	for _, n := range order {
		if !need[n] {
			continue
		}
		ref, err := c.e.lookupImpl(n)
		if err != nil {
			return err
		}
		if ref.impl.lower == nil {
			return fmt.Errorf("Gradient: %s has no GoMLX lowering to differentiate", n)
		}
		ins := make([]*slot, len(n.Inputs))
		for i, v := range n.Inputs {
			if v != nil {
				if ins[i] = local.get(v); ins[i] == nil {
					return fmt.Errorf("Gradient: %s input %q is not available", n, v.Name)
				}
			}
		}
		nc := &lctx{ctx: c.ctx, e: c.e, b: c.b, en: local, n: n, impl: ref.impl, ver: ref.ver, ins: ins, outs: make([]*slot, len(n.Outputs)), lowering: true}
		if err := callKernel(nc, ref.impl.lower); err != nil {
			return fmt.Errorf("Gradient: lowering %s: %w", n, err)
		}
		for i, v := range n.Outputs {
			if v != nil && nc.outs[i] != nil {
				local.set(v, nc.outs[i])
			}
		}
	}
	ys := local.get(y)
	if ys == nil || ys.node == nil {
		return fmt.Errorf("Gradient: y %q was not rebuilt", yName)
	}
	grads := graph.Gradient(graph.ReduceAllSum(ys.node), xnodes...)
	for i := range grads {
		c.Out(i, grads[i], c.DT(i))
	}
	return nil
}
