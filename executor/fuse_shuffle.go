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
// element is copied once, and the Concat and Reshape steps go. A Reshape
// that alone reads the Transpose's output goes into the step too, so that
// the step's output is the shuffled 4-D tensor, which the plan may keep
// channels last (nhwc.go; the shuffle then interleaves each pixel's
// channels, shuffleNHWC). A copy does not change values, so the output is
// the same bits.

// fuseConcatTranspose rewrites Concat → Reshape → Transpose (→ Reshape)
// kernel steps into one (see above), run where the last of them ran.
// Between the Concat and that step there may be only the others and
// static steps (so that nothing can write the Concat's inputs in between).
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
	// reshapeAt is the Reshape step at k reading value v as its data.
	reshapeAt := func(k int, v *canonical.Value) *hostStep {
		r := hostOp(k, "Reshape")
		if r == nil || r.ver < 5 || len(r.n.Inputs) != 2 || r.n.Inputs[0] != v || r.n.Inputs[1] == nil {
			return nil
		}
		return r
	}
	readerOf := map[*canonical.Value]int{}
	for k, st := range steps {
		if h, ok := st.(*hostStep); ok {
			for _, v := range h.n.Inputs {
				if v != nil {
					readerOf[v] = k
				}
			}
		}
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
		if r == nil || reshapeAt(kr, r.n.Inputs[0]) == nil || !passing(r.n.Inputs[0]) {
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
		// The Reshape after, when it alone reads the Transpose's output.
		last, back := k, (*hostStep)(nil)
		if v := t.n.Outputs[0]; passing(v) {
			if kb, ok := readerOf[v]; ok && kb > k && !removed[kb] {
				if back = reshapeAt(kb, v); back != nil {
					last = kb
				}
			}
		}
		between := true
		for j := kc + 1; j < last; j++ {
			switch steps[j].(type) {
			case *staticStep, *guardStep:
			default:
				between = between && (j == kr || j == k)
			}
		}
		if !between {
			continue
		}
		n := *t.n
		n.Inputs = append(append([]*canonical.Value{}, cc.n.Inputs...), r.n.Inputs[1])
		sh := shuffleSpec{
			parts:     len(cc.n.Inputs),
			axis:      cc.n.AttrInt("axis", 0),
			allowZero: r.n.AttrInt("allowzero", 0) == 1,
			perm:      t.n.AttrInts("perm", nil),
		}
		if back != nil {
			n.Inputs = append(n.Inputs, back.n.Inputs[1])
			n.Outputs = back.n.Outputs
			sh.back, sh.backZero = true, back.n.AttrInt("allowzero", 0) == 1
		}
		steps[last] = &hostStep{n: &n, ver: t.ver, packs: true, shuffle: &sh, impl: &opImpl{host: func(c *lctx) error {
			return kernelConcatTranspose(c, sh)
		}}}
		removed[kc], removed[kr] = true, true
		if last != k {
			removed[k] = true
		}
	}
	return withoutSteps(steps, removed)
}

// shuffleSpec is a step of fuseConcatTranspose: its first parts inputs
// are the Concat's (along axis), the next the first Reshape's shape
// (allowZero), then, when back, the last Reshape's (backZero); perm is the
// Transpose's.
type shuffleSpec struct {
	parts               int
	axis                int64
	allowZero, backZero bool
	back                bool
	perm                []int64
}

// kernelConcatTranspose is Transpose(perm) of Reshape of the Concat of
// c's first sh.parts inputs (and, when sh.back, the Reshape after), a
// step of fuseConcatTranspose.
func kernelConcatTranspose(c *lctx, sh shuffleSpec) error {
	if done, err := c.shuffleNHWC(sh); done || err != nil {
		return err
	}
	n := sh.parts
	hs, cshape, ax, err := concatInputs(c, n, sh.axis)
	if err != nil {
		return err
	}
	spec, err := c.Ints(n)
	if err != nil {
		return fmt.Errorf("Reshape: %w", err)
	}
	rshape, err := resolveReshape(cshape, spec, sh.allowZero)
	if err != nil {
		return fmt.Errorf("Reshape: %w", err)
	}
	p, err := transposePerm(sh.perm, len(rshape))
	if err != nil {
		return err
	}
	out := make([]int, len(p))
	for i, a := range p {
		out[i] = rshape[a]
	}
	var back []int
	if sh.back {
		bspec, err := c.Ints(n + 1)
		if err != nil {
			return fmt.Errorf("Reshape: %w", err)
		}
		if back, err = resolveReshape(out, bspec, sh.backZero); err != nil {
			return fmt.Errorf("Reshape: %w", err)
		}
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
	if back != nil {
		y.shape = back
	}
	c.OutH(0, y)
	return nil
}

// shuffleNHWC runs the step of sh channels last when the plan keeps its
// output so (hostStep.nhwc) and it is a channel shuffle: a Concat of
// float32 [N, Cᵢ, H, W] tensors along the channels, C of them in all,
// reshaped to [N, g, C/g, H, W], transposed by [0, 2, 1, 3, 4] and
// reshaped back to [N, C, H, W]. Output channel j·g + i of each pixel is
// then the pixel's channel i·C/g + j of the concatenation. Inputs stored
// in NCHW are transposed first. done false: not such a step (the caller
// runs it in NCHW).
func (c *lctx) shuffleNHWC(sh shuffleSpec) (done bool, err error) {
	if !c.nhwc || !sh.back || c.b != nil || c.lowering || c.e.kern == nil || len(sh.perm) != 5 || c.NIn() != sh.parts+2 {
		return false, nil
	}
	for i, a := range []int64{0, 2, 1, 3, 4} {
		if sh.perm[i] != a {
			return false, nil
		}
	}
	if ax := sh.axis; ax != 1 && ax != -3 {
		return false, nil
	}
	hs := make([]*htensor, sh.parts)
	var s0 []int
	ch := 0
	for i := range hs {
		if !c.Has(i) {
			return false, nil
		}
		h := c.in(i).h
		if h == nil || h.dt != canonical.Float || len(h.shape) != 4 {
			return false, nil
		}
		if s0 == nil {
			s0 = h.shape
		} else if h.shape[0] != s0[0] || h.shape[2] != s0[2] || h.shape[3] != s0[3] {
			return false, nil
		}
		hs[i], ch = h, ch+h.shape[1]
	}
	spec, err := c.Ints(sh.parts)
	if err != nil {
		return false, fmt.Errorf("Reshape: %w", err)
	}
	cshape := []int{s0[0], ch, s0[2], s0[3]}
	rshape, err := resolveReshape(cshape, spec, sh.allowZero)
	if err != nil || len(rshape) != 5 || rshape[0] != s0[0] || rshape[3] != s0[2] || rshape[4] != s0[3] || rshape[1] < 1 {
		return false, nil
	}
	g := rshape[1]
	bspec, err := c.Ints(sh.parts + 1)
	if err != nil {
		return false, fmt.Errorf("Reshape: %w", err)
	}
	back, err := resolveReshape([]int{rshape[0], rshape[2], rshape[1], rshape[3], rshape[4]}, bspec, sh.backZero)
	if err != nil || !shapeEq(back, cshape) {
		return false, nil
	}
	px := s0[2] * s0[3]
	parts := make([][]float32, len(hs))
	widths, lds := make([]int, len(hs)), make([]int, len(hs))
	for i, h := range hs {
		x, _ := f32(h)
		lds[i] = h.shape[1]
		if h.ld != 0 {
			// A Slice's view of a wider tensor's channels
			// (markSliceViews): read where it is.
			lds[i] = h.ld
		}
		if !h.nhwc {
			t := c.newHAs(canonical.Float, []int{h.shape[0], s0[2], s0[3], h.shape[1]}, false)
			td, _ := f32(t)
			c.transposeChannels(x, td, h.shape[0], h.shape[1], px, true)
			x = td
		}
		parts[i], widths[i] = x, h.shape[1]
	}
	y := c.newOut(canonical.Float, cshape, false)
	y.nhwc = true
	yd, _ := f32(y)
	src := shuffleSources(widths, g)
	rows := s0[0] * px
	c.e.kern.Range(rows, ch, func(lo, hi int) { shuffleRows(parts, widths, lds, g, src, yd, lo, hi) })
	c.OutH(0, y)
	return true, nil
}

// shuffleSources maps each channel of a shuffled pixel (j·g + i) to the
// concatenation's channel i·C/g + j that it holds, as the part and the
// channel in it (part widths), two entries per channel.
func shuffleSources(widths []int, g int) []int32 {
	total := 0
	for _, w := range widths {
		total += w
	}
	per := total / g
	part := make([]int32, 0, 2*total)
	for q := range total {
		at := q%g*per + q/g // the concatenation's channel
		p := 0
		for at >= widths[p] {
			at -= widths[p]
			p++
		}
		part = append(part, int32(p), int32(at))
	}
	return part
}

// shuffleRows writes pixels [lo, hi) of a channel shuffle channels last:
// y's pixel r, channel q, is part src[2q]'s pixel r, channel src[2q+1]
// (shuffleSources; part p's pixels lds[p] apart). Two parts of equal
// width shuffled in two groups, the ShuffleNet unit's, interleave as a
// whole (kernels.Interleave2), or pixel by pixel when a part is a window
// of a wider tensor's channels (kernels.Interleave2Rows).
func shuffleRows(parts [][]float32, widths, lds []int, g int, src []int32, y []float32, lo, hi int) {
	ch := len(src) / 2
	if g == 2 && len(parts) == 2 && widths[0] == widths[1] {
		w := widths[0]
		if lds[0] == w && lds[1] == w {
			if kernels.Interleave2(parts[0][lo*w:hi*w], parts[1][lo*w:hi*w], y[lo*ch:hi*ch]) == nil {
				return
			}
		} else if kernels.Interleave2Rows(hi-lo, w, parts[0][lo*lds[0]:], lds[0], parts[1][lo*lds[1]:], lds[1], y[lo*ch:hi*ch]) == nil {
			return
		}
	}
	for r := lo; r < hi; r++ {
		o := y[r*ch : (r+1)*ch]
		for q := range o {
			p := src[2*q]
			o[q] = parts[p][r*lds[p]+int(src[2*q+1])]
		}
	}
}
