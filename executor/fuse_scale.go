package executor

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
)

// A squeeze-and-excitation block ends in y = Mul(x, s), s one value per
// channel, and a 1×1 projection Conv(y): a pass writing y and one reading
// it back, both over a full activation tensor. fuseScaleConv gives the
// Mul to the Conv: the Conv's node reads x, and its kernel, when it runs
// in NHWC, multiplies each pixel's channels as it reads them
// (kernels.PointwiseNHWCScaled: the Mul's own float32 products, the same
// bits); otherwise it runs the Mul's kernel first and reads its output
// (lctx.scaledInput), as the plan did before.

// scaleIn is the Mul a Conv step took (hostStep.scale).
type scaleIn struct {
	mul *hostStep        // the Mul step: Mul(x, by) was the Conv's input
	by  *canonical.Value // the Mul's operand that is not x
}

// fuseScaleConv finds each fused step whose last tail op is a Mul of its
// chain's value s by another value x (an excitation's gate times the
// block's activation), whose output only a 1×1 Conv step of one group
// reads, as its data (a host step or the head of a fused one), and is
// neither a graph output nor kept: the Mul leaves the chain and the
// Conv's node reads x in its place (hostStep.scale).
func fuseScaleConv(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	u := usesOf(steps)
	for k, st := range steps {
		f, ok := st.(*fusedStep)
		if !ok || len(f.steps) < 2 {
			continue
		}
		last := len(f.steps) - 1
		mul := f.steps[last]
		n := mul.n
		if n.OpType != "Mul" || !plainDomain(n) || len(n.Inputs) != 2 || len(n.Outputs) != 1 || len(n.Attributes) != 0 || len(n.OuterValues()) != 0 {
			continue
		}
		ci := f.in[last]
		if ci != 0 && ci != 1 {
			continue
		}
		x, by, v := n.Inputs[1-ci], n.Inputs[ci], n.Outputs[0]
		if x == nil || by == nil || x == by || v == nil || u.readers[v] != 1 || keep[v] || !gi.defs[v] || gi.lastUse[v] == outputUse {
			continue
		}
		j := u.lastReader[v]
		if j <= k {
			continue
		}
		var conv *hostStep
		switch r := steps[j].(type) {
		case *hostStep:
			conv = r
		case *fusedStep:
			conv = r.steps[0]
		}
		if conv == nil || conv.scale != nil || !conv.packs || !plainDomain(conv.n) || !nhwcPointwiseNode(conv.n) ||
			conv.n.Inputs[0] != v || slices.Contains(conv.n.Inputs[1:], v) {
			continue
		}
		cn := *conv.n
		cn.Inputs = append([]*canonical.Value{x}, conv.n.Inputs[1:]...)
		scaled := &hostStep{n: &cn, impl: conv.impl, ver: conv.ver, packs: conv.packs, scale: &scaleIn{mul: mul, by: by}}
		switch r := steps[j].(type) {
		case *hostStep:
			steps[j] = scaled
		case *fusedStep:
			r.steps[0] = scaled
		}
		f.steps, f.in = f.steps[:last], f.in[:last]
		if len(f.steps) == 1 {
			steps[k] = f.steps[0]
		}
	}
	return steps
}

// scaledInput makes the Conv's input what the graph has it: the Mul the
// Conv took (fuseScaleConv) runs (its kernel, on its own inputs) and its
// output replaces input 0; the caller removes it from the env after the
// Conv (dropMul).
func (c *lctx) scaledInput() error {
	m := c.scale.mul
	if _, err := m.execArena(c.ctx, c.e, c.en, nil); err != nil {
		return fmt.Errorf("Conv: the Mul %s before it: %w", m.n, err)
	}
	s := c.en.get(m.n.Outputs[0])
	if s == nil {
		return fmt.Errorf("Conv: the Mul %s before it wrote no output", m.n)
	}
	c.ins[0] = s
	return nil
}

// dropMul removes the output of the Mul a Conv took from the env (it ran
// only when scaledInput ran it).
func (c *lctx) dropMul() {
	c.en.del(c.scale.mul.n.Outputs[0])
}
