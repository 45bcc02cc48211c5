package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Transposes folded into MatMul. Attention blocks transpose Q, K and V
// (perm [0,2,1,3] or [0,2,3,1], or [1,0,2] / [1,2,0] at rank 3) right
// before the MatMuls, and the heads' outputs back right after. When the transposed operand's two matrix axes come
// from the source's last axis and one other (so the matrix is a strided
// view: rows at a stride, columns contiguous, or the reverse), the
// MatMul reads the Transpose's input directly with those strides
// (SGEMM's leading dimension and transpose flag) and the Transpose step
// goes from the plan: no copy, no allocation, one step fewer. A
// Transpose reading the MatMul's output alone, keeping its rows
// contiguous, likewise: C is written in its layout (SGEMM's ldc). SGEMM
// packs its panels from the strided view, so every output element is the
// same chain of FMAs as on the transposed copy: results are bit-identical.

// fuseTransposeMatMul rewrites the plan's MatMul kernel steps whose
// operands are the sole use of a Transpose kernel step's output.
func fuseTransposeMatMul(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	readers := usesOf(steps).readers
	producer := map[*canonical.Value]int{}
	consumer := map[*canonical.Value]int{} // a Transpose step's input
	for k, st := range steps {
		if h, ok := st.(*hostStep); ok && h.packs && h.n.OpType == "Transpose" && plainDomain(h.n) &&
			len(h.n.Inputs) == 1 && len(h.n.Outputs) == 1 && h.n.Outputs[0] != nil {
			producer[h.n.Outputs[0]] = k
			if v := h.n.Inputs[0]; v != nil {
				consumer[v] = k
			}
		}
	}
	removed := map[int]bool{}
	for k, st := range steps {
		h, ok := st.(*hostStep)
		if !ok || !h.packs || h.n.OpType != "MatMul" || !plainDomain(h.n) || len(h.n.Inputs) != 2 || h.n.Inputs[0] == h.n.Inputs[1] {
			continue
		}
		var perms [2][]int
		ins := append([]*canonical.Value{}, h.n.Inputs...)
		changed := false
		for i, v := range h.n.Inputs {
			if o := h.n.Inputs[1-i]; o != nil && o.Const != nil {
				// A weight: its packed form (kernelMatMul) beats a
				// strided operand repacked per batch entry.
				continue
			}
			j, ok := producer[v]
			if !ok || j > k || removed[j] || readers[v] != 1 || keep[v] || !gi.defs[v] || gi.lastUse[v] == outputUse {
				continue
			}
			t := steps[j].(*hostStep)
			p, ok := matrixPerm(t.n.AttrInts("perm", nil))
			if !ok || t.n.Inputs[0] == nil {
				continue
			}
			perms[i], ins[i] = p, t.n.Inputs[0]
			removed[j], changed = true, true
		}
		// The output: C written straight in the layout of the Transpose
		// that is its sole reader, when that keeps C's rows contiguous.
		var outPerm []int
		outs := h.n.Outputs
		if y := h.n.Outputs[0]; len(h.n.Outputs) == 1 && y != nil {
			if j, ok := consumer[y]; ok && j > k && !removed[j] && readers[y] == 1 && !keep[y] && gi.defs[y] && gi.lastUse[y] != outputUse {
				t := steps[j].(*hostStep)
				if p, ok := matrixPerm(t.n.AttrInts("perm", nil)); ok && p[len(p)-1] == len(p)-1 {
					outPerm, outs = p, t.n.Outputs
					removed[j], changed = true, true
				}
			}
		}
		if !changed {
			continue
		}
		n := *h.n
		n.Inputs, n.Outputs = ins, outs
		steps[k] = &hostStep{n: &n, impl: &opImpl{host: func(c *lctx) error { return kernelMatMulStrided(c, perms, outPerm) }}, ver: h.ver, packs: true}
	}
	return withoutSteps(steps, removed)
}

// fuseTransposeDiv folds a Transpose kernel step into the Div by a
// constant scalar that is its output's sole reader (attention's Q scaled
// by √d after the heads' Transpose, torch's nn.MultiheadAttention): the
// Div reads the Transpose's input and writes each chunk of transposed
// rows, then divides it while it is in L1 (kernels.DivScalar, the Div's
// own kernel on the same values: bit-identical). One pass over the tensor
// and one step fewer.
func fuseTransposeDiv(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	readers := usesOf(steps).readers
	producer := map[*canonical.Value]int{}
	for k, st := range steps {
		if h, ok := st.(*hostStep); ok && h.packs && h.n.OpType == "Transpose" && plainDomain(h.n) &&
			len(h.n.Inputs) == 1 && h.n.Inputs[0] != nil && len(h.n.Outputs) == 1 && h.n.Outputs[0] != nil {
			producer[h.n.Outputs[0]] = k
		}
	}
	removed := map[int]bool{}
	for k, st := range steps {
		h, ok := st.(*hostStep)
		if !ok || !h.packs || h.n.OpType != "Div" || !plainDomain(h.n) || len(h.n.Inputs) != 2 || len(h.n.Outputs) != 1 {
			continue
		}
		v, d := h.n.Inputs[0], h.n.Inputs[1]
		if v == nil || !scalarConst(d) {
			continue
		}
		j, ok := producer[v]
		if !ok || j > k || removed[j] || readers[v] != 1 || keep[v] || !gi.defs[v] || gi.lastUse[v] == outputUse {
			continue
		}
		t := steps[j].(*hostStep)
		perm := t.n.AttrInts("perm", nil)
		n := *h.n
		n.Inputs = []*canonical.Value{t.n.Inputs[0], d}
		steps[k] = &hostStep{n: &n, impl: &opImpl{host: func(c *lctx) error { return kernelTransposeDiv(c, perm) }}, ver: h.ver, packs: true}
		removed[j] = true
	}
	return withoutSteps(steps, removed)
}

// scalarConst reports whether v is a float32 initializer or Constant
// node output of one value and rank 0 or 1.
func scalarConst(v *canonical.Value) bool {
	if v == nil {
		return false
	}
	t := v.Const
	if t == nil {
		p, _ := v.Producer()
		if p == nil || p.OpType != "Constant" || !plainDomain(p) || len(p.Attributes) != 1 {
			return false
		}
		if a := p.Attr("value"); a != nil && a.Type == canonical.AttrTensor {
			t = a.T
		}
	}
	return t != nil && t.DataType == canonical.Float && len(t.Dims) <= 1 && numel64(t.Dims) == 1
}

func numel64(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

// kernelTransposeDiv is Transpose(perm) of input 0 divided by the scalar
// in input 1 (fuseTransposeDiv).
func kernelTransposeDiv(c *lctx, perm []int64) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	if hx.released {
		if hx, err = c.unreleased(0); err != nil {
			return fmt.Errorf("Div: %w", err)
		}
	}
	hd, err := c.H(1)
	if err != nil {
		return err
	}
	if hd.released {
		if hd, err = c.unreleased(1); err != nil {
			return fmt.Errorf("Div: %w", err)
		}
	}
	x, err := f32(hx)
	if err != nil {
		return fmt.Errorf("Div: %w", err)
	}
	d, err := f32(hd)
	if err != nil || len(d) != 1 || len(hd.shape) > len(hx.shape) {
		return fmt.Errorf("Div: a transposed input of shape %v by one of shape %v", hx.shape, hd.shape)
	}
	r := len(hx.shape)
	p, err := transposePerm(perm, r)
	if err != nil {
		return err
	}
	out := make([]int, r)
	for i, a := range p {
		out[i] = hx.shape[a]
	}
	y := c.newHAs(hx.dt, out, false) // every element written
	yd, _ := f32(y)
	if len(yd) == 0 {
		c.OutH(0, y)
		return nil
	}
	if r < 2 {
		// Rank 0 or 1: the Transpose is the identity.
		kernels.DivScalar(x[:len(yd)], d[0], yd)
		c.OutH(0, y)
		return nil
	}
	if p[r-1] == r-1 {
		// Rows stay rows: each output row is the division of a source row.
		w, st := out[r-1], strides(hx.shape)
		c.e.kern.Range(len(yd)/max(w, 1), w, func(lo, hi int) {
			idx := make([]int, r-1)
			for i, q := r-2, lo; i >= 0; i-- {
				idx[i], q = q%out[i], q/out[i]
			}
			for row := lo; row < hi; row++ {
				src := 0
				for i, v := range idx {
					src += v * st[p[i]]
				}
				kernels.DivScalar(x[src:src+w], d[0], yd[row*w:row*w+w])
				for i := r - 2; i >= 0; i-- {
					if idx[i]++; idx[i] < out[i] {
						break
					}
					idx[i] = 0
				}
			}
		})
		c.OutH(0, y)
		return nil
	}
	rows := kernels.TransposeRowCount(hx.shape, p)
	w := len(yd) / max(rows, 1)
	c.e.kern.Range(rows, w, func(lo, hi int) {
		kernels.TransposeRows(x, hx.shape, p, yd, lo, hi)
		kernels.DivScalar(yd[lo*w:hi*w], d[0], yd[lo*w:hi*w])
	})
	c.OutH(0, y)
	return nil
}

// withoutSteps returns steps without those whose index removed holds.
func withoutSteps(steps []step, removed map[int]bool) []step {
	if len(removed) == 0 {
		return steps
	}
	out := make([]step, 0, len(steps)-len(removed))
	for k, st := range steps {
		if !removed[k] {
			out = append(out, st)
		}
	}
	return out
}

func plainDomain(n *canonical.Node) bool { return n.Domain == "" || n.Domain == "ai.onnx" }

// matrixPerm returns perm as ints when it is a permutation of rank ≥ 2
// whose last two axes include the source's last axis (the transposed
// matrix is a strided view of the source).
func matrixPerm(perm []int64) ([]int, bool) {
	r := len(perm)
	if r < 2 {
		return nil, false
	}
	p := make([]int, r)
	seen := make([]bool, r)
	for i, v := range perm {
		if v < 0 {
			v += int64(r)
		}
		if v < 0 || v >= int64(r) || seen[v] {
			return nil, false
		}
		seen[v], p[i] = true, int(v)
	}
	return p, p[r-1] == r-1 || p[r-2] == r-1
}

// stridedOperand is a MatMul operand seen through a permutation: its
// logical shape and the strides of its source.
type stridedOperand struct {
	shape, stride []int
	data          []float32
}

// contiguous reports whether the operand is row-major in its logical
// shape (axes of size 1 aside).
func (o *stridedOperand) contiguous() bool {
	want := 1
	for d := len(o.shape) - 1; d >= 0; d-- {
		if o.shape[d] == 1 {
			continue
		}
		if o.stride[d] != want {
			return false
		}
		want *= o.shape[d]
	}
	return true
}

// matrix returns the SGEMM form of the operand's matrices: transposed or
// not and the leading dimension.
func (o *stridedOperand) matrix() (trans bool, ld int, err error) {
	r := len(o.shape)
	rows, cols := o.shape[r-2], o.shape[r-1]
	sr, sc := o.stride[r-2], o.stride[r-1]
	switch {
	case sc == 1 || cols == 1:
		return false, max(sr, cols, 1), nil
	case sr == 1 || rows == 1:
		return true, max(sc, rows, 1), nil
	}
	return false, 0, fmt.Errorf("operand strides %v are not a matrix view", o.stride)
}

// kernelMatMulStrided is kernelMatMul with operand i read through
// perms[i] (nil: as it is) from the tensor in the MatMul's input i, and
// its output written transposed by outPerm (nil: as it is).
func kernelMatMulStrided(c *lctx, perms [2][]int, outPerm []int) error {
	var ops [2]stridedOperand
	var dt canonical.DataType
	for i := range ops {
		h, err := c.H(i)
		if err != nil {
			return err
		}
		if h.released {
			if h, err = c.unreleased(i); err != nil {
				return fmt.Errorf("MatMul: %w", err)
			}
		}
		d, err := f32(h)
		if err != nil {
			return fmt.Errorf("MatMul: %w", err)
		}
		if i == 0 {
			dt = h.dt
		}
		st := strides(h.shape)
		o := stridedOperand{data: d}
		switch p := perms[i]; {
		case p != nil:
			if len(p) != len(h.shape) {
				return fmt.Errorf("MatMul: perm %v for an input of shape %v", p, h.shape)
			}
			for _, a := range p {
				o.shape, o.stride = append(o.shape, h.shape[a]), append(o.stride, st[a])
			}
		case len(h.shape) == 1 && i == 0:
			o.shape, o.stride = []int{1, h.shape[0]}, []int{h.shape[0], 1}
		case len(h.shape) == 1:
			o.shape, o.stride = []int{h.shape[0], 1}, []int{1, 1}
		default:
			o.shape, o.stride = h.shape, st
		}
		ops[i] = o
	}
	if outPerm == nil && (perms[0] == nil || ops[0].contiguous()) && (perms[1] == nil || ops[1].contiguous()) {
		// The Transposes moved only unit axes: plain views.
		var hs [2]*htensor
		for i := range hs {
			h, err := c.H(i)
			if err != nil {
				return err
			}
			if perms[i] != nil {
				h = &htensor{dt: h.dt, shape: ops[i].shape, data: h.data}
			}
			hs[i] = h
		}
		return matMulH(c, hs[0], hs[1])
	}
	a, b := &ops[0], &ops[1]
	ra, rb := len(a.shape), len(b.shape)
	m, k, k2, n := a.shape[ra-2], a.shape[ra-1], b.shape[rb-2], b.shape[rb-1]
	if k != k2 {
		return fmt.Errorf("MatMul: shapes %v and %v do not match", a.shape, b.shape)
	}
	batch, err := bcastShape(a.shape[:ra-2], b.shape[:rb-2])
	if err != nil {
		return err
	}
	out := append([]int{}, batch...)
	if perms[0] != nil || len(c.Shape(0)) != 1 {
		out = append(out, m)
	}
	if perms[1] != nil || len(c.Shape(1)) != 1 {
		out = append(out, n)
	}
	// C's batch entries and rows in the output's layout.
	r := len(out)
	cstr, ldc := strides(out), n
	var after []int // a Transpose left to do (a rank-1 operand's output)
	if outPerm != nil && len(outPerm) != r {
		return fmt.Errorf("MatMul: output perm %v for an output of shape %v", outPerm, out)
	}
	if outPerm != nil && r != len(batch)+2 {
		after, outPerm = outPerm, nil
	}
	if outPerm != nil {
		z := make([]int, r)
		for i, a := range outPerm {
			z[i] = out[a]
		}
		zs := strides(z)
		for i, a := range outPerm {
			cstr[a] = zs[i]
		}
		out, ldc = z, cstr[r-2]
	}
	y := c.newHAs(dt, out, false) // every batch entry's C written with beta 0 (and the Transpose after it)
	yd, err := f32(y)
	if err != nil {
		return err
	}
	ta, lda, err := a.matrix()
	if err != nil {
		return fmt.Errorf("MatMul: %w", err)
	}
	tb, ldb, err := b.matrix()
	if err != nil {
		return fmt.Errorf("MatMul: %w", err)
	}
	if m*n == 0 && after == nil {
		c.OutH(0, y)
		return nil
	}
	idx := make([]int, len(batch))
	for f := 0; f < numel(batch); f++ {
		oa, ob := batchOffset(a, idx, len(batch)), batchOffset(b, idx, len(batch))
		oc := 0
		for d, v := range idx {
			oc += v * cstr[d]
		}
		if err := c.e.kern.Sgemm(ta, tb, m, n, k, 1, a.data[oa:], lda, b.data[ob:], ldb, 0, yd[oc:], ldc); err != nil {
			return fmt.Errorf("MatMul: %w", err)
		}
		for d := len(idx) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < batch[d] {
				break
			}
			idx[d] = 0
		}
	}
	roundOut(y)
	if after != nil {
		z := make([]int, r)
		for i, a := range after {
			z[i] = out[a]
		}
		t := c.newHAs(dt, z, false) // TransposeRows writes every element
		td, _ := f32(t)
		rows := kernels.TransposeRowCount(out, after)
		c.e.kern.Range(rows, len(td)/max(rows, 1), func(lo, hi int) { kernels.TransposeRows(yd, out, after, td, lo, hi) })
		y = t
	}
	c.OutH(0, y)
	return nil
}

// batchOffset is the offset of batch entry idx (over nb broadcast batch
// axes) in operand o, whose batch axes are right-aligned to them.
func batchOffset(o *stridedOperand, idx []int, nb int) int {
	ob := len(o.shape) - 2
	off := 0
	for d := 0; d < ob; d++ {
		if o.shape[d] != 1 {
			off += idx[nb-ob+d] * o.stride[d]
		}
	}
	return off
}
