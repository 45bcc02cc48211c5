package executor

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Host kernels for the ops around the matrix kernels: when their inputs
// are already host tensors (after a Conv or MatMul kernel), running them
// on the host keeps a CNN or a transformer block in one chain of host
// steps instead of cutting it into tiny GoMLX segments (a copy in, a
// simplego dispatch and a copy out each). Views (Reshape, Squeeze,
// Unsqueeze, Flatten) share their input's data; Transpose, Concat, Split
// and Slice copy contiguous runs; BatchNormalization (inference),
// InstanceNormalization, LayerNormalization, Softmax, AveragePool,
// Sigmoid, Tanh, Sub and Div are single-pass kernels of executor/kernels;
// ConvTranspose is one SGEMM and a col2im per image and group.
// Each accepts float32 only (views: any type) and declines everything
// else, which then takes the op's GoMLX lowering as before.

func registerHostKernels(r registry) {
	for _, op := range []string{"Reshape", "Squeeze", "Unsqueeze", "Flatten"} {
		op := op
		r.kernel(func(c *lctx) error {
			sh, err := reshapeTarget(c, op)
			if err != nil {
				return err
			}
			return outReshaped(c, sh)
		}, okAllHost, op)
	}
	r.kernel(lowerExpand, okAllHost, "Expand")
	r.kernel(kernelPad, okPad, "Pad")
	r.kernel(kernelTranspose, okF32Host, "Transpose")
	r.kernel(kernelConcat, okF32Host, "Concat")
	r.kernel(lowerSplit, okF32Host, "Split")
	r.kernel(sliceOp, okF32Host, "Slice")
	r.kernel(kernelGather, okGather, "Gather")
	r.kernel(kernelTopK, okTopK, "TopK")
	r.kernel(kernelWhere, okWhere, "Where")
	r.kernel(kernelBatchNorm, okBatchNorm, "BatchNormalization")
	r.kernel(kernelInstanceNorm, okInstanceNorm, "InstanceNormalization")
	r.kernel(kernelLayerNorm, okLayerNorm, "LayerNormalization")
	r.kernel(kernelSoftmax, okSoftmax, "Softmax")
	r.kernel(kernelAvgPool, okAvgPool, "AveragePool")
	r.kernel(kernelConvTranspose, okConvTranspose, "ConvTranspose")
	r.kernel(kernelLSTM, okLSTM, "LSTM")
	r.kernel(kernelReduceMean, okReduceMean, "ReduceMean")
	r.kernel(kernelPow, okPow, "Pow")
	r.kernel(kernelGeluErf, okGelu, "Gelu", "Erf", "Sqrt")
	r.kernel(kernelUnary, okUnaryHost, "Sigmoid", "Tanh")
	r.kernel(func(c *lctx) error { return kernelSubDiv(c, false) }, okBinary, "Sub")
	r.kernel(func(c *lctx) error { return kernelSubDiv(c, true) }, okBinary, "Div")
}

// okAllHost: every input is a host tensor.
func okAllHost(c *lctx) bool {
	for i := 0; i < c.NIn(); i++ {
		if c.Has(i) && (c.in(i).kind != kindTensor || c.in(i).h == nil) {
			return false
		}
	}
	return c.NIn() > 0 && c.Has(0)
}

// okF32Host: every input is a host tensor and input 0 is float32.
func okF32Host(c *lctx) bool {
	return okAllHost(c) && c.DT(0) == canonical.Float
}

func kernelTranspose(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	r := len(hx.shape)
	p, err := transposePerm(c.AInts("perm", nil), r)
	if err != nil {
		return err
	}
	out := make([]int, r)
	for i, a := range p {
		out[i] = hx.shape[a]
	}
	if transposeIsReshape(hx.shape, p) {
		// Only axes of size 1 move: the same data in the same order, a
		// view (as Reshape's).
		c.OutH(0, &htensor{dt: hx.dt, shape: out, data: hx.data})
		return nil
	}
	y := c.newHAs(hx.dt, out, false) // Transpose writes every element
	x, _ := f32(hx)
	yd, _ := f32(y)
	rows := kernels.TransposeRowCount(hx.shape, p)
	c.e.kern.Range(rows, len(yd)/max(rows, 1), func(lo, hi int) { kernels.TransposeRows(x, hx.shape, p, yd, lo, hi) })
	c.OutH(0, y)
	return nil
}

// transposePerm is Transpose's perm attribute (nil: reversed axes) for
// an input of rank r, checked.
func transposePerm(perm []int64, r int) ([]int, error) {
	p := make([]int, r)
	for i := range p {
		p[i] = r - 1 - i
	}
	if perm == nil {
		return p, nil
	}
	if len(perm) != r {
		return nil, fmt.Errorf("Transpose: perm %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	for i, v := range perm {
		ax, err := normAxis(v, r)
		if err != nil || seen[ax] {
			return nil, fmt.Errorf("Transpose: perm %v is not a permutation of %d axes", perm, r)
		}
		seen[ax], p[i] = true, ax
	}
	return p, nil
}

// transposeIsReshape reports whether permutation p of shape keeps the
// axes longer than 1 in their order (the elements stay in place).
func transposeIsReshape(shape, p []int) bool {
	last := -1
	for _, a := range p {
		if shape[a] == 1 {
			continue
		}
		if a < last {
			return false
		}
		last = a
	}
	return true
}

func kernelConcat(c *lctx) error {
	hs, out, ax, err := concatInputs(c, c.NIn(), c.AInt("axis", 0))
	if err != nil {
		return err
	}
	if c.epilogue != nil {
		// Concat → BatchNormalization → Relu (DenseNet's pre-activation):
		// the tail runs on each range right after it is copied.
		y := c.newHAs(canonical.Float, out, false)
		yd, _ := f32(y)
		c.concatF32(hs, out, ax, yd, c.epilogue(yd))
		c.OutH(0, y)
		return nil
	}
	if v := c.arena.adjacent(hs, out, ax); v != nil {
		// The inputs already lie side by side in one buffer (an output
		// arena, fuse_concat.go): the output is a view of them.
		c.OutH(0, &htensor{dt: canonical.Float, shape: out, data: v})
		return nil
	}
	y := c.newHAs(canonical.Float, out, false) // concatRange writes every element
	yd, _ := f32(y)
	c.concatF32(hs, out, ax, yd, nil)
	c.OutH(0, y)
	return nil
}

// concatF32 writes the Concat of hs (output shape out, axis ax) into yd,
// then runs epi (nil: none) on each range it wrote.
func (c *lctx) concatF32(hs []*htensor, out []int, ax int, yd []float32, epi kernels.Epilogue) {
	row := numel(out[ax:])
	// Y is, row after row, the inputs' rows in order: ends[i] is where
	// input i's part of a row ends. Y is split over the threads by
	// element ranges, so that a Concat of few rows (the channel axis of
	// one image) is split too.
	xs := make([][]float32, len(hs))
	ends := make([]int, len(hs))
	off := 0
	for i, h := range hs {
		xs[i], _ = f32(h)
		off += numel(h.shape[ax:])
		ends[i] = off
	}
	c.e.kern.Range(len(yd), 1, func(lo, hi int) {
		if epi == nil {
			concatRange(yd, xs, ends, row, lo, hi)
			return
		}
		// Pieces of a few thousand elements, still in L1 when the
		// epilogue reads them back.
		for a := lo; a < hi; a += epiPiece {
			b := min(a+epiPiece, hi)
			concatRange(yd, xs, ends, row, a, b)
			epi(a, b-a)
		}
	})
}

// epiPiece is the length of the pieces a copying kernel runs its
// epilogue on (16 KiB of float32).
const epiPiece = 4096

// concatInputs returns Concat's float32 inputs among its first n (the
// omitted ones skipped), its output shape and its axis (attribute axis).
func concatInputs(c *lctx, n int, axis int64) (hs []*htensor, out []int, ax int, err error) {
	for i := 0; i < n; i++ {
		if !c.Has(i) {
			continue
		}
		h, err := c.H(i)
		if err != nil {
			return nil, nil, 0, err
		}
		if h.dt != canonical.Float {
			return nil, nil, 0, fmt.Errorf("Concat: input %d is %v, not float32", i, h.dt)
		}
		hs = append(hs, h)
	}
	if len(hs) == 0 {
		return nil, nil, 0, fmt.Errorf("Concat: no inputs")
	}
	r := len(hs[0].shape)
	if ax, err = normAxis(axis, r); err != nil {
		return nil, nil, 0, fmt.Errorf("Concat: %w", err)
	}
	out = append([]int{}, hs[0].shape...)
	out[ax] = 0
	for _, h := range hs {
		if len(h.shape) != r {
			return nil, nil, 0, fmt.Errorf("Concat: ranks %d and %d", r, len(h.shape))
		}
		for d := range out {
			if d != ax && h.shape[d] != out[d] {
				return nil, nil, 0, fmt.Errorf("Concat: shapes %v and %v differ off axis %d", hs[0].shape, h.shape, ax)
			}
		}
		out[ax] += h.shape[ax]
	}
	return hs, out, ax, nil
}

// concatRange writes elements [lo, hi) of Concat's output y (rows of row
// elements; input i fills columns [ends[i−1], ends[i]) of each row).
func concatRange(y []float32, xs [][]float32, ends []int, row, lo, hi int) {
	for g := lo; g < hi; {
		r, col := g/row, g%row
		i := 0
		for ends[i] <= col {
			i++
		}
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		w := ends[i] - start
		n := min(hi-g, ends[i]-col)
		src := r*w + col - start
		copy(y[g:g+n], xs[i][src:src+n])
		g += n
	}
}

// sliceF32 copies the strided slice specs of x (shape) into a new slice,
// whole runs when the last axis has step 1.
func sliceF32(x []float32, shape []int, specs []sliceSpec) []float32 {
	y := make([]float32, sliceLen(specs))
	shape, specs = coalesceSlice(shape, specs)
	sliceF32Rows(x, shape, specs, y, 0, sliceRows(specs))
	return y
}

// sliceLen is the number of elements of a slice.
func sliceLen(specs []sliceSpec) int {
	n := 1
	for _, s := range specs {
		n *= s.count
	}
	return n
}

// sliceRows is the number of rows (runs of the last axis) of a slice.
func sliceRows(specs []sliceSpec) int {
	if len(specs) == 0 {
		return 1
	}
	if last := specs[len(specs)-1].count; last > 0 {
		return sliceLen(specs) / last
	}
	return 0
}

// hostSliceF32 is the slice specs (output shape out) of h, whose data is
// x: a view of x when the slice is one contiguous run of it (a Split or
// Slice of the channels of one image: ShuffleNet's halves), else
// sliceF32 into a buffer of the run (every element is written), its rows
// split over the kernel threads. A view is safe: the run's buffers are
// reused only after the run, and a kernel writes over its input only
// when that input is a fused chain's own intermediate (lctx.outLike),
// which no Slice or Split makes.
func (c *lctx) hostSliceF32(h *htensor, x []float32, out []int, specs []sliceSpec) *htensor {
	dt, shape := h.dt, h.shape
	if off, ok := contiguousSlice(shape, specs); ok {
		n := sliceLen(specs)
		return &htensor{dt: dt, shape: out, data: x[off : off+n : off+n], borrowed: h.borrowed}
	}
	y := c.newHAs(dt, out, false)
	yd, _ := f32(y)
	shape, specs = coalesceSlice(shape, specs)
	rows := sliceRows(specs)
	if c.e.kern == nil {
		sliceF32Rows(x, shape, specs, yd, 0, rows)
		return y
	}
	c.e.kern.Range(rows, len(yd)/max(rows, 1), func(lo, hi int) { sliceF32Rows(x, shape, specs, yd, lo, hi) })
	return y
}

// coalesceSlice merges each whole axis (start 0, step 1, all of it) into
// the axis before it when that one has step 1: the same elements in the
// same order, in runs as long as they can be (a Slice of some channels
// of several images copies whole planes, not rows).
func coalesceSlice(shape []int, specs []sliceSpec) ([]int, []sliceSpec) {
	if len(specs) != len(shape) {
		return shape, specs
	}
	var sh []int
	var sp []sliceSpec
	for d, s := range specs {
		if k := len(sp) - 1; k >= 0 && sp[k].step == 1 && s.start == 0 && s.step == 1 && s.count == shape[d] {
			sp[k] = sliceSpec{start: sp[k].start * shape[d], step: 1, count: sp[k].count * shape[d]}
			sh[k] *= shape[d]
			continue
		}
		sh, sp = append(sh, shape[d]), append(sp, s)
	}
	return sh, sp
}

// contiguousSlice reports whether the slice specs of a row-major tensor
// of shape is one contiguous run of its elements, and the run's offset:
// axes of one element, then an axis of step 1 (or one element), then
// whole axes. An empty slice is not (it is made, empty, as before).
func contiguousSlice(shape []int, specs []sliceSpec) (off int, ok bool) {
	if len(specs) != len(shape) || sliceLen(specs) == 0 {
		return 0, false
	}
	st := strides(shape)
	d := 0
	for d < len(specs) && specs[d].count == 1 {
		off += specs[d].start * st[d]
		d++
	}
	if d < len(specs) {
		if specs[d].step != 1 {
			return 0, false
		}
		off += specs[d].start * st[d]
		d++
	}
	for ; d < len(specs); d++ {
		if specs[d].start != 0 || specs[d].step != 1 || specs[d].count != shape[d] {
			return 0, false
		}
	}
	return off, true
}

// sliceF32Rows writes rows r0 ≤ row < r1 of the slice of x (shape)
// given by specs into y, which holds the whole slice.
func sliceF32Rows(x []float32, shape []int, specs []sliceSpec, y []float32, r0, r1 int) {
	r := len(shape)
	if len(y) == 0 || r0 >= r1 {
		return
	}
	if r == 0 {
		copy(y, x)
		return
	}
	out := make([]int, r)
	for i, s := range specs {
		out[i] = s.count
	}
	st := strides(shape)
	last := specs[r-1]
	idx := make([]int, r-1)
	for d, q := r-2, r0; d >= 0; d-- {
		idx[d] = q % out[d]
		q /= out[d]
	}
	for o := r0 * last.count; o < r1*last.count; o += last.count {
		src := last.start * st[r-1]
		for d, v := range idx {
			src += (specs[d].start + v*specs[d].step) * st[d]
		}
		dst := y[o : o+last.count]
		if last.step == 1 {
			copy(dst, x[src:src+last.count])
		} else {
			for j := range dst {
				dst[j] = x[src+j*last.step]
			}
		}
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			if idx[d] < out[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// okBatchNorm: inference mode (no running statistics out), float32,
// statistics on the host.
func okBatchNorm(c *lctx) bool {
	if c.NIn() != 5 || !okAllHost(c) || !allF32(c, 5) || c.Rank(0) < 2 {
		return false
	}
	if c.AInt("training_mode", 0) == 1 || c.HasOut(1) || c.HasOut(2) {
		return false
	}
	ch := c.Shape(0)[1]
	for i := 1; i < 5; i++ {
		if numel(c.Shape(i)) != ch || c.Rank(i) != 1 {
			return false
		}
	}
	return true
}

func kernelBatchNorm(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	var p [4][]float32
	for i := range p {
		h, err := c.H(i + 1)
		if err != nil {
			return err
		}
		if p[i], err = f32(h); err != nil {
			return fmt.Errorf("BatchNormalization: input %d: %w", i+1, err)
		}
	}
	ch := hx.shape[1]
	if len(p[0]) != ch || len(p[1]) != ch || len(p[2]) != ch || len(p[3]) != ch {
		return fmt.Errorf("BatchNormalization: %d channels, parameters of %d, %d, %d, %d", ch, len(p[0]), len(p[1]), len(p[2]), len(p[3]))
	}
	sb := make([]float32, 2*ch)
	kernels.BatchNormScaleShift(p[0], p[1], p[2], p[3], float64(c.AFloat("epsilon", 1e-5)), sb[:ch], sb[ch:])
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	inner := numel(hx.shape[2:])
	c.e.kern.Range(len(x)/max(inner, 1), inner, func(lo, hi int) {
		kernels.ScaleShiftBlocks(x[lo*inner:hi*inner], sb[:ch], sb[ch:], yd[lo*inner:hi*inner], inner, lo)
	})
	c.OutH(0, y)
	return nil
}

func okInstanceNorm(c *lctx) bool {
	if c.NIn() != 3 || !okAllHost(c) || !allF32(c, 3) || c.Rank(0) < 3 {
		return false
	}
	ch := c.Shape(0)[1]
	return numel(c.Shape(1)) == ch && numel(c.Shape(2)) == ch
}

func kernelInstanceNorm(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	hs, err := c.H(1)
	if err != nil {
		return err
	}
	hb, err := c.H(2)
	if err != nil {
		return err
	}
	s, _ := f32(hs)
	b, _ := f32(hb)
	if len(s) != hx.shape[1] || len(b) != hx.shape[1] {
		return fmt.Errorf("InstanceNormalization: %d channels, scale %d, bias %d", hx.shape[1], len(s), len(b))
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	inner, eps := numel(hx.shape[2:]), float64(c.AFloat("epsilon", 1e-5))
	c.e.kern.Range(len(x)/max(inner, 1), inner, func(lo, hi int) {
		kernels.InstanceNorm(x[lo*inner:hi*inner], s, b, yd[lo*inner:hi*inner], inner, lo, eps)
	})
	c.OutH(0, y)
	return nil
}

// okLayerNorm: float32, no Mean/InvStdDev outputs, scale and bias of the
// normalized axes' full size (no broadcast).
func okLayerNorm(c *lctx) bool {
	if c.NIn() < 2 || !okAllHost(c) || !allF32(c, 3) || c.HasOut(1) || c.HasOut(2) {
		return false
	}
	if c.HasAttr("stash_type") && c.AInt("stash_type", 1) != 1 {
		return false
	}
	r := c.Rank(0)
	ax, err := normAxis(c.AInt("axis", -1), r)
	if err != nil || r == 0 {
		return false
	}
	inner := numel(c.Shape(0)[ax:])
	return numel(c.Shape(1)) == inner && (!c.Has(2) || numel(c.Shape(2)) == inner)
}

func kernelLayerNorm(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", -1), len(hx.shape))
	if err != nil {
		return fmt.Errorf("LayerNormalization: %w", err)
	}
	inner := numel(hx.shape[ax:])
	hs, err := c.H(1)
	if err != nil {
		return err
	}
	s, _ := f32(hs)
	var b []float32
	if c.Has(2) {
		hb, err := c.H(2)
		if err != nil {
			return err
		}
		b, _ = f32(hb)
	}
	if len(s) != inner || b != nil && len(b) != inner {
		return fmt.Errorf("LayerNormalization: %d normalized elements, scale %d, bias %d", inner, len(s), len(b))
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	eps := float64(c.AFloat("epsilon", 1e-5))
	c.e.kern.Range(len(x)/inner, inner, func(lo, hi int) {
		kernels.LayerNorm(x[lo*inner:hi*inner], s, b, yd[lo*inner:hi*inner], eps)
	})
	c.OutH(0, y)
	return nil
}

// okSoftmax: float32 over the last axis (before opset 13 the input is
// coerced to 2-D at axis, which is the same when axis is the last one).
func okSoftmax(c *lctx) bool {
	if c.NIn() != 1 || !okF32Host(c) || c.Rank(0) < 1 {
		return false
	}
	def := int64(-1)
	if c.ver < 13 {
		def = 1
	}
	ax, err := normAxis(c.AInt("axis", def), c.Rank(0))
	return err == nil && ax == c.Rank(0)-1
}

func kernelSoftmax(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	n := hx.shape[len(hx.shape)-1]
	if n == 0 {
		c.OutH(0, y)
		return nil
	}
	c.e.kern.Range(len(x)/n, n, func(lo, hi int) { kernels.Softmax(x[lo*n:hi*n], yd[lo*n:hi*n], n) })
	c.OutH(0, y)
	return nil
}

func okAvgPool(c *lctx) bool {
	if c.NIn() != 1 || !okF32Host(c) {
		return false
	}
	_, ok, err := poolParams(c, c.Shape(0))
	return ok && err == nil
}

func kernelAvgPool(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	p, ok, err := poolParams(c, hx.shape)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("AveragePool: shape %v is not a 1-D or 2-D pool the kernel runs", hx.shape)
	}
	kernel := toInts(c.AInts("kernel_shape", nil))
	g, err := resolveGeom(c, hx.shape[2:], kernel, c.AInt("ceil_mode", 0) == 1)
	if err != nil {
		return err
	}
	pb, pr := 0, g.padE[0]
	if len(g.padE) == 2 {
		pb, pr = g.padE[0], g.padE[1]
	}
	out := []int{p.N, p.C, p.OW}
	if len(hx.shape) == 4 {
		out = []int{p.N, p.C, p.OH, p.OW}
	}
	y := c.newH(canonical.Float, out)
	x, _ := f32(hx)
	yd, _ := f32(y)
	if err := c.e.kern.AvgPool2D(p, pb, pr, c.AInt("count_include_pad", 0) == 1, x, yd); err != nil {
		return fmt.Errorf("AveragePool: %w", err)
	}
	c.OutH(0, y)
	return nil
}

func kernelUnary(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	switch c.n.OpType {
	case "Sigmoid":
		c.e.kern.Range(len(x), 1, func(lo, hi int) { kernels.Sigmoid(x[lo:hi], yd[lo:hi]) })
	case "Tanh":
		c.e.kern.Range(len(x), 1, func(lo, hi int) { kernels.Tanh(x[lo:hi], yd[lo:hi]) })
	case "Swish": // a fused Mul(x, Sigmoid(x)) (fuseSiLU), alpha 1
		if c.n.Attr("alpha") != nil {
			return fmt.Errorf("no host kernel for %s with alpha", c.n.OpType)
		}
		c.e.kern.Range(len(x), 1, func(lo, hi int) { kernels.SiLU(x[lo:hi], yd[lo:hi]) })
	default:
		return fmt.Errorf("no host kernel for %s", c.n.OpType)
	}
	c.OutH(0, y)
	return nil
}

// kernelSubDiv: a − b or a / b with one operand broadcast as a suffix or
// per block (bcastKind), in the operands' order.
func kernelSubDiv(c *lctx, div bool) error {
	ops, err := binaryPrologue(c)
	if err != nil {
		return err
	}
	y, x, s, yd, suffix, inner, bi := ops.y, ops.x, ops.b, ops.yd, ops.suffix, ops.inner, ops.bi
	n := len(s)
	if n == 0 {
		c.OutH(0, y)
		return nil
	}
	switch {
	case suffix && n == 1: // a scalar: one pass (Q's scaling in attention)
		subDivRow(x, nil, s, yd, div, bi == 1)
	case suffix:
		for o := 0; o+n <= len(x); o += n {
			subDivRow(x[o:o+n], s, nil, yd[o:o+n], div, bi == 1)
		}
	default:
		for i := range s {
			subDivRow(x[i*inner:(i+1)*inner], nil, s[i:i+1], yd[i*inner:(i+1)*inner], div, bi == 1)
		}
	}
	c.OutH(0, y)
	return nil
}

// subDivRow sets y = x − b (or x / b) elementwise with b = vec, or the
// scalar sc[0] when vec is nil; swapped computes b − x (b / x).
func subDivRow(x, vec, sc, y []float32, div, swapped bool) {
	y = y[:len(x)]
	if vec == nil {
		v := sc[0]
		switch {
		case div && swapped:
			for i, u := range x {
				y[i] = v / u
			}
		case div:
			kernels.DivScalar(x, v, y)
		case swapped:
			for i, u := range x {
				y[i] = v - u
			}
		default:
			for i, u := range x {
				y[i] = u - v
			}
		}
		return
	}
	vec = vec[:len(x)]
	switch {
	case div && swapped:
		for i, u := range x {
			y[i] = vec[i] / u
		}
	case div:
		for i, u := range x {
			y[i] = u / vec[i]
		}
	case swapped:
		for i, u := range x {
			y[i] = vec[i] - u
		}
	default:
		for i, u := range x {
			y[i] = u - vec[i]
		}
	}
}

// convTParams maps a 1-D or 2-D float32 ConvTranspose to the kernel's
// geometry.
func convTParams(c *lctx, xs, ws []int) (kernels.ConvT2D, bool) {
	ns := len(xs) - 2
	if ns < 1 || ns > 2 || len(ws) != len(xs) {
		return kernels.ConvT2D{}, false
	}
	kernel, strd, dil, pb, out, groups, cout := convTransposeGeom(c, xs, ws)
	if len(kernel) != ns || !shapeEq(kernel, ws[2:]) || groups < 1 || xs[1] != ws[0] || xs[1]%groups != 0 {
		return kernels.ConvT2D{}, false
	}
	p := kernels.ConvT2D{N: xs[0], C: xs[1], H: 1, W: xs[2], M: cout, KH: 1, KW: kernel[0], SH: 1, SW: strd[0],
		DH: 1, DW: dil[0], PL: pb[0], OH: 1, OW: out[0], Groups: groups}
	if ns == 2 {
		p.H, p.W, p.KH, p.KW = xs[2], xs[3], kernel[0], kernel[1]
		p.SH, p.SW, p.DH, p.DW = strd[0], strd[1], dil[0], dil[1]
		p.PT, p.PL, p.OH, p.OW = pb[0], pb[1], out[0], out[1]
	}
	// Negative begin pads (output_shape larger than the full output) and
	// degenerate sizes stay with the reference kernel.
	if p.N < 1 || p.PT < 0 || p.PL < 0 || p.OH < 1 || p.OW < 1 || p.SH < 1 || p.SW < 1 || p.DH < 1 || p.DW < 1 {
		return kernels.ConvT2D{}, false
	}
	return p, true
}

func okConvTranspose(c *lctx) bool {
	if c.NIn() < 2 || !okAllHost(c) || !allF32(c, 3) {
		return false
	}
	_, ok := convTParams(c, c.Shape(0), c.Shape(1))
	return ok
}

func kernelConvTranspose(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	hw, err := c.H(1)
	if err != nil {
		return err
	}
	p, ok := convTParams(c, hx.shape, hw.shape)
	if !ok {
		return fmt.Errorf("ConvTranspose: shapes %v and %v are not a 1-D or 2-D transposed convolution the kernel runs", hx.shape, hw.shape)
	}
	var bias []float32
	if c.Has(2) {
		hb, err := c.H(2)
		if err != nil {
			return err
		}
		bias, _ = f32(hb)
	}
	out := []int{p.N, p.M, p.OW}
	if len(hx.shape) == 4 {
		out = []int{p.N, p.M, p.OH, p.OW}
	}
	y := c.newH(canonical.Float, out)
	x, _ := f32(hx)
	w, _ := f32(hw)
	yd, _ := f32(y)
	if err := c.e.kern.ConvTranspose2D(p, x, w, bias, yd); err != nil {
		return fmt.Errorf("ConvTranspose: %w", err)
	}
	c.OutH(0, y)
	return nil
}

// padSpec returns a constant-mode Pad's begin and end pads per axis and
// its value when the kernel runs it: float32, no negative pads, no axes
// input.
func padSpec(c *lctx) (pb, pe []int, val float32, ok bool) {
	if c.AStr("mode", "constant") != "constant" || c.ver >= 18 && c.Has(3) {
		return nil, nil, 0, false
	}
	r := c.Rank(0)
	var pads []int64
	if c.ver < 11 {
		pads = c.AInts("pads", c.AInts("paddings", nil))
		val = c.AFloat("value", 0)
	} else {
		if !c.Has(1) || c.in(1).h == nil {
			return nil, nil, 0, false
		}
		pads = c.in(1).h.i64()
		if c.Has(2) {
			h := c.in(2).h
			v, isF := h.data.([]float32)
			if h == nil || !isF || len(v) != 1 {
				return nil, nil, 0, false
			}
			val = v[0]
		}
	}
	if len(pads) != 2*r {
		return nil, nil, 0, false
	}
	pb, pe = make([]int, r), make([]int, r)
	for i := 0; i < r; i++ {
		pb[i], pe[i] = int(pads[i]), int(pads[i+r])
		if pb[i] < 0 || pe[i] < 0 {
			return nil, nil, 0, false
		}
	}
	return pb, pe, val, true
}

func okPad(c *lctx) bool {
	if !okF32Host(c) {
		return false
	}
	_, _, _, ok := padSpec(c)
	return ok
}

// kernelPad: constant padding by whole-row copies; all-zero pads share
// the input's data (a view).
func kernelPad(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	pb, pe, val, ok := padSpec(c)
	if !ok {
		return fmt.Errorf("Pad: not a non-negative constant padding the kernel runs")
	}
	r := len(hx.shape)
	out := make([]int, r)
	zero := true
	for i := range out {
		out[i] = hx.shape[i] + pb[i] + pe[i]
		zero = zero && pb[i] == 0 && pe[i] == 0
	}
	if zero {
		c.OutH(0, &htensor{dt: hx.dt, shape: out, data: hx.data})
		return nil
	}
	y := c.newH(canonical.Float, out)
	yd, _ := f32(y)
	if val != 0 {
		for i := range yd {
			yd[i] = val
		}
	}
	x, _ := f32(hx)
	if len(x) == 0 || r == 0 {
		c.OutH(0, y)
		return nil
	}
	ost := strides(out)
	inner := hx.shape[r-1]
	idx := make([]int, r-1)
	for o := 0; o < len(x); o += inner {
		dst := pb[r-1]
		for d, v := range idx {
			dst += (v + pb[d]) * ost[d]
		}
		copy(yd[dst:dst+inner], x[o:o+inner])
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			if idx[d] < hx.shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	c.OutH(0, y)
	return nil
}

// reduceTail returns the number of trailing elements a ReduceMean sums
// per output element when its axes are the last k axes of the input (the
// only layout the kernel runs), k, and whether they are.
func reduceTail(c *lctx) (int, int, bool) {
	r := c.Rank(0)
	var axes []int64
	if c.ver >= 18 {
		if c.Has(1) {
			h := c.in(1).h
			if h == nil {
				return 0, 0, false
			}
			axes = h.i64()
		}
	} else {
		axes = c.AInts("axes", nil)
	}
	if len(axes) == 0 {
		if c.ver >= 18 && c.AInt("noop_with_empty_axes", 0) == 1 {
			return 0, 0, false
		}
		return numel(c.Shape(0)), r, r > 0
	}
	seen := make([]bool, r)
	for _, a := range axes {
		ax, err := normAxis(a, r)
		if err != nil || seen[ax] {
			return 0, 0, false
		}
		seen[ax] = true
	}
	k := len(axes)
	for i := r - k; i < r; i++ {
		if i < 0 || !seen[i] {
			return 0, 0, false
		}
	}
	return numel(c.Shape(0)[r-k:]), k, true
}

func okReduceMean(c *lctx) bool {
	if !okF32Host(c) || c.Rank(0) == 0 {
		return false
	}
	inner, _, ok := reduceTail(c)
	return ok && inner > 0
}

// kernelReduceMean: the mean over the trailing axes (sums in float64).
func kernelReduceMean(c *lctx) error {
	if hr := denseNHWC(c.in(0).h); hr != nil && hr.nhwc && len(hr.shape) == 4 {
		if inner, k, ok := reduceTail(c); ok && k == 2 && inner > 0 {
			// Over the pixels of a tensor stored channels last
			// (nhwc.go): pooled as stored.
			out := append([]int{}, hr.shape[:2]...)
			if c.AInt("keepdims", 1) == 1 {
				out = append(out, 1, 1)
			}
			return c.poolNHWC(hr, out)
		}
	}
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	inner, k, ok := reduceTail(c)
	if !ok || inner == 0 {
		return fmt.Errorf("ReduceMean: axes are not the trailing axes of %v", hx.shape)
	}
	r := len(hx.shape)
	out := append([]int{}, hx.shape[:r-k]...)
	if c.AInt("keepdims", 1) == 1 {
		for i := 0; i < k; i++ {
			out = append(out, 1)
		}
	}
	y := c.newH(canonical.Float, out)
	x, _ := f32(hx)
	yd, _ := f32(y)
	if r == 4 && k == 2 {
		// Over the pixels: GlobalAveragePool's sums (the bits of the
		// NHWC pool above).
		if err := c.e.kern.GlobalAveragePoolNCHW(hx.shape[0], hx.shape[1], inner, x, yd); err != nil {
			return fmt.Errorf("ReduceMean: %w", err)
		}
	} else {
		c.e.kern.Range(len(yd), inner, func(lo, hi int) { kernels.GlobalAveragePoolRows(x, yd, inner, lo, hi) })
	}
	c.OutH(0, y)
	return nil
}

// okPow: float32 base on the host, a constant scalar exponent of 2 or 0.5.
func okPow(c *lctx) bool {
	if c.NIn() != 2 || !okF32Host(c) || c.DT(1) != canonical.Float || numel(c.Shape(1)) != 1 || !c.in(1).valStatic {
		return false
	}
	e := c.in(1).h.data.([]float32)[0]
	return e == 2 || e == 0.5
}

func kernelPow(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	he, err := c.H(1)
	if err != nil {
		return err
	}
	ev, err := f32(he)
	if err != nil || len(ev) != 1 {
		return fmt.Errorf("Pow: exponent is not one float32")
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	switch ev[0] {
	case 2:
		for i, v := range x {
			yd[i] = v * v
		}
	case 0.5:
		for i, v := range x {
			yd[i] = float32(math.Sqrt(float64(v)))
			if math.IsInf(float64(v), -1) {
				yd[i] = float32(math.Inf(1)) // pow(-Inf, 0.5), as math.Pow and ONNX Runtime; Sqrt gives NaN
			}
		}
	default:
		return fmt.Errorf("Pow: exponent %g has no host kernel", ev[0])
	}
	c.OutH(0, y)
	return nil
}

// okGelu: float32 Gelu (exact or tanh approximation) or Erf on the host.
func okGelu(c *lctx) bool {
	if c.NIn() != 1 || !okF32Host(c) {
		return false
	}
	a := c.AStr("approximate", "none")
	return a == "none" || a == "tanh"
}

func kernelGeluErf(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	switch {
	case c.n.OpType == "Erf":
		for i, v := range x {
			yd[i] = float32(math.Erf(float64(v)))
		}
	case c.n.OpType == "Sqrt":
		for i, v := range x {
			yd[i] = float32(math.Sqrt(float64(v)))
		}
	case c.AStr("approximate", "none") == "tanh":
		for i, v := range x {
			u := float64(v)
			yd[i] = float32(0.5 * u * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(u+0.044715*u*u*u))))
		}
	default:
		kernels.Gelu(x, yd)
	}
	c.OutH(0, y)
	return nil
}

// kernelShapeStatic reports whether a kernel step's output shapes follow
// from its inputs' shapes alone (given that those are static in the
// plan): for the ops listed, whose shapes depend on input shapes and
// attributes only, and for any op whose other inputs (shape, pads,
// starts, split sizes, axes) are constants. Shape and the integer
// arithmetic on it then fold at build time instead of running as tiny
// segments on every replay.
func kernelShapeStatic(n *canonical.Node, ins []*slot) bool {
	switch n.OpType {
	case "MatMul", "Gemm", "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
		"Relu", "Clip", "HardSigmoid", "HardSwish", "Sigmoid", "Tanh", "Gelu", "Erf", "Sqrt", "Pow",
		"Add", "Mul", "Sub", "Div", "BatchNormalization", "InstanceNormalization", "LayerNormalization",
		"Softmax", "Concat", "Transpose", "LSTM", "Gather", "Where":
		return true
	}
	for i, s := range ins {
		if i > 0 && s != nil && !s.valStatic {
			return false
		}
	}
	return true
}
