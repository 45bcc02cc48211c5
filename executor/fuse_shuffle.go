package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Channel shuffle. ShuffleNet concatenates a unit's two branches and
// shuffles the channels: Concat(axis 1) → Reshape [N, g, C/g, H, W] →
// Transpose [0, 2, 1, 3, 4] → Reshape back. Run as exported, that copies
// every element twice (the Concat, then the Transpose; the Reshapes are
// views). fuseConcatTranspose rewrites each Transpose kernel step whose
// input is a Reshape of a Concat (each the sole reader of the one before,
// neither value kept or a graph output) into one step that transposes
// straight from the Concat's inputs (kernels.TransposeRowsParts): each
// element is copied once, and the Concat and Reshape steps go. A copy
// does not change values, so the output is the same bits.

// fuseConcatTranspose rewrites Concat → Reshape → Transpose kernel steps
// into one (see above). Between the Concat and the Transpose there may
// be only the Reshape and static steps (so that nothing can write the
// Concat's inputs in between).
func fuseConcatTranspose(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	u := usesOf(steps)
	readers, producer := u.readers, u.producer
	// passing reports whether v, made by step j, is read by one step
	// alone and is neither kept nor a graph output.
	passing := func(v *canonical.Value) bool {
		return v != nil && readers[v] == 1 && !keep[v] && gi.defs[v] && gi.lastUse[v] != outputUse
	}
	hostOp := func(k int, op string) *hostStep {
		h, ok := steps[k].(*hostStep)
		if !ok || h.n.OpType != op || !plainDomain(h.n) || len(h.n.Outputs) != 1 || h.n.Outputs[0] == nil || len(h.n.OuterValues()) != 0 {
			return nil
		}
		return h
	}
	removed := map[int]bool{}
	for k := range steps {
		t := hostOp(k, "Transpose")
		if t == nil || !t.packs || len(t.n.Inputs) != 1 || !passing(t.n.Inputs[0]) {
			continue
		}
		kr, ok := producer[t.n.Inputs[0]]
		if !ok || kr >= k || removed[kr] {
			continue
		}
		r := hostOp(kr, "Reshape")
		if r == nil || r.ver < 5 || len(r.n.Inputs) != 2 || r.n.Inputs[1] == nil || !passing(r.n.Inputs[0]) {
			continue
		}
		kc, ok := producer[r.n.Inputs[0]]
		if !ok || kc >= kr || removed[kc] {
			continue
		}
		cc := hostOp(kc, "Concat")
		if cc == nil || !cc.packs {
			continue
		}
		between := true
		for j := kc + 1; j < k; j++ {
			switch steps[j].(type) {
			case *staticStep, *guardStep:
			default:
				between = between && j == kr
			}
		}
		if !between {
			continue
		}
		n := *t.n
		n.Inputs = append(append([]*canonical.Value{}, cc.n.Inputs...), r.n.Inputs[1])
		axis := cc.n.AttrInt("axis", 0)
		allowZero := r.n.AttrInt("allowzero", 0) == 1
		perm := t.n.AttrInts("perm", nil)
		steps[k] = &hostStep{n: &n, ver: t.ver, packs: true, impl: &opImpl{host: func(c *lctx) error {
			return kernelConcatTranspose(c, axis, allowZero, perm)
		}}}
		removed[kc], removed[kr] = true, true
	}
	return withoutSteps(steps, removed)
}

// kernelConcatTranspose is Transpose(perm) of Reshape(allowZero) of
// Concat(axis) of inputs 0 … n−2; input n−1 is the Reshape's shape.
func kernelConcatTranspose(c *lctx, axis int64, allowZero bool, perm []int64) error {
	n := c.NIn() - 1
	hs, cshape, ax, err := concatInputs(c, n, axis)
	if err != nil {
		return err
	}
	spec, err := c.Ints(n)
	if err != nil {
		return fmt.Errorf("Reshape: %w", err)
	}
	rshape, err := resolveReshape(cshape, spec, allowZero)
	if err != nil {
		return fmt.Errorf("Reshape: %w", err)
	}
	p, err := transposePerm(perm, len(rshape))
	if err != nil {
		return err
	}
	out := make([]int, len(p))
	for i, a := range p {
		out[i] = rshape[a]
	}
	y := c.newHAs(canonical.Float, out, false) // the rows cover y
	yd, _ := f32(y)
	var parts [][]float32
	if numel(cshape[:ax]) == 1 {
		// Each input is one run of the Concat's output.
		for _, h := range hs {
			d, _ := f32(h)
			parts = append(parts, d)
		}
	} else {
		tmp := make([]float32, numel(cshape))
		c.concatF32(hs, cshape, ax, tmp, nil)
		parts = [][]float32{tmp}
	}
	rows := kernels.TransposeRowCount(rshape, p)
	c.e.kern.Range(rows, len(yd)/max(rows, 1), func(lo, hi int) { kernels.TransposeRowsParts(parts, rshape, p, yd, lo, hi) })
	c.OutH(0, y)
	return nil
}
