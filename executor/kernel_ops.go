package executor

import (
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// The executor's own kernels (package executor/kernels: packed SGEMM with
// AVX-512/AVX2 micro-kernels, im2col and depthwise convolution) run
// MatMul, Gemm and 1-D/2-D Conv on float32 as host steps of the plan when
// the backend is the pure-Go one. The builder asks kernelOK first; a case
// it declines (other types, 3-D convolutions, another backend) takes the
// op's GoMLX lowering as before. docs/speed.md says why host steps and
// not a wrapping backend.

// KernelsEnv names the environment variable that turns the kernels off
// ("0" or "off"), for comparing with the plain GoMLX lowering.
const KernelsEnv = "ONNXCONV_KERNELS"

func kernelsDisabled(opts Options) bool {
	if opts.DisableKernels {
		return true
	}
	v := os.Getenv(KernelsEnv)
	return v == "0" || v == "off" || v == "false"
}

func registerKernels(r registry) {
	r.kernel(kernelMatMul, okMatMul, "MatMul")
	r.kernel(kernelGemm, okGemm, "Gemm")
	r.kernel(kernelConv, okConv, "Conv")
	r.kernel(kernelMaxPool, okMaxPool, "MaxPool")
	r.kernel(kernelRelu, okRelu, "Relu")
	r.kernel(func(c *lctx) error { return kernelBinary(c, false) }, okBinary, "Add")
	r.kernel(func(c *lctx) error { return kernelBinary(c, true) }, okBinary, "Mul")
	r.kernel(kernelClip, okClip, "Clip")
	r.kernel(kernelHard, okUnaryHost, "HardSigmoid", "HardSwish")
	r.kernel(kernelGlobalAvgPool, okGlobalAvgPool, "GlobalAveragePool")
	r.kernel(kernelCastToF32, okCastToF32, "Cast")
	registerHostKernels(r)
}

// kernel registers a kernel of executor/kernels for ai.onnx ops.
func (r registry) kernel(f func(*lctx) error, ok func(*lctx) bool, ops ...string) {
	for _, op := range ops {
		r.impl("", op).kernel = f
		r.impl("", op).kernelOK = ok
	}
}

// packKey names a packed weight: the node and its input index.
type packKey struct {
	n *canonical.Node
	i int
}

// packEntry is a packed weight and the host tensor it was packed from
// (a constant: an initializer converted once, or a value folded in a
// plan); another tensor for the same input is packed again. tag says how
// it was packed: nodes that pack the same tensor the same way (a weight
// shared by several layers) share one packing.
type packEntry struct {
	h     *htensor
	tag   packTag
	mat   *kernels.Packed
	convs []*kernels.Packed
	// rows: per part (an LSTM direction) the weights as plain rows,
	// transposed (kernels.AddVecMat).
	rows [][]float32
	// ints: an integer weight (zero point subtracted) packed per group
	// for the integer GEMM (kernel_quant.go).
	ints []*kernels.IPacked
	// inPlace: a float32 GEMM operand of at least inPlaceAbove bytes
	// in the mapped model file, read where it lies instead of packed
	// (kind 'B' only).
	inPlace []float32
	// dw: a depthwise convolution's weights for DepthwiseNHWC (kind
	// 'D'; nhwc.go).
	dw *kernels.DepthwiseWeights
	// nhwcConv: a grouped or small convolution's weights for
	// ConvNHWC (kind 'G'; nhwc.go).
	nhwcConv *kernels.ConvNHWCWeights
	// zeros: MatMulNBits' zero points as floats, [N, blocks] (kind 'Z';
	// kernels.NBits.ZeroF).
	zeros []float32
}

// inPlaceAbove is the size from which a GEMM weight that the model file
// maps (an external-data or raw tensor not yet read) is read in place
// rather than packed: a packed copy would double its memory (the mapped
// pages while packing, then the copy) — 9.3 GB for a 3 GiB weight
// verified — where the source and the result of a conversion read the
// same mapped pages once. Packing pays off only over repeated runs of
// many rows.
const inPlaceAbove = 256 << 20

// usable reports whether the kernel runs on the packing alone (without
// the unpacked weights): depthwise convolutions have none.
func (p packEntry) usable() bool {
	return p.mat != nil || p.convs != nil || p.rows != nil || p.inPlace != nil || p.dw != nil
}

// packTag identifies a packing of a tensor: the kind ('B': PackB of a
// k×n operand, trans, leading dimension; 'C': PackConvWeights for M
// output channels of C inputs in groups, KH×KW; 'P': PackPointwise of M
// output channels of C inputs, 'D': PackDepthwise, for the NHWC kernels).
type packTag struct {
	kind            byte
	trans           bool
	k, n, ld        int
	m, c, g, kh, kw int
}

// packed returns the packing of input i made by pack, cached per node
// when the input is a constant; nil, nil when it is not one. A packing
// the kernel runs on alone is recorded in c.packedIn (the builder pins
// the initializers a kernel read otherwise).
func (c *lctx) packed(i int, tag packTag, pack func(h *htensor) (packEntry, error)) (packEntry, error) {
	s := c.in(i)
	if !s.valStatic || s.h == nil {
		return packEntry{}, nil
	}
	k := packKey{c.n, i}
	e := c.e
	e.cacheMu.Lock()
	ent, ok := e.packs[k]
	if !ok || ent.h != s.h || ent.tag != tag {
		ok = false
		for _, o := range e.packs {
			if o.h == s.h && o.tag == tag {
				ent, ok = o, true
				if e.packs == nil {
					e.packs = map[packKey]packEntry{}
				}
				e.packs[k] = o
				break
			}
		}
	}
	e.cacheMu.Unlock()
	if !ok {
		src := s.h
		if src.released {
			// Pack straight from the model's bytes (no host copy kept).
			v := c.n.Inputs[i]
			if v == nil || v.Const == nil {
				return packEntry{}, fmt.Errorf("input %d: released weight without its initializer", i)
			}
			if h, ok := inPlaceF32(v.Const); ok && tag.kind == 'B' {
				if d := f32Data(h); 4*int64(len(d)) >= inPlaceAbove {
					return c.keepPacked(k, packEntry{h: s.h, tag: tag, inPlace: d}, i), nil
				}
			}
			var err error
			if src, err = viewF32(v.Const); err != nil {
				return packEntry{}, err
			}
		}
		var err error
		ent, err = pack(src)
		if err != nil {
			return packEntry{}, err
		}
		if s.h.released {
			// Only the packed form is used from now on: the model's
			// mapped pages of the weight need not stay resident.
			c.e.model.ReleasePages(c.n.Inputs[i].Const)
		}
		ent.h, ent.tag = s.h, tag
		return c.keepPacked(k, ent, i), nil
	}
	if ent.usable() && i < 64 {
		c.packedIn |= 1 << uint(i)
	}
	return ent, nil
}

// keepPacked caches ent, the packing of input i, under k and records that
// the kernel runs on it alone when it does.
func (c *lctx) keepPacked(k packKey, ent packEntry, i int) packEntry {
	e := c.e
	e.cacheMu.Lock()
	if e.packs == nil {
		e.packs = map[packKey]packEntry{}
	}
	e.packs[k] = ent
	e.cacheMu.Unlock()
	if ent.usable() && i < 64 {
		c.packedIn |= 1 << uint(i)
	}
	return ent
}

// unreleased returns input i, a released initializer (htensor.released),
// converted (and pinned: kept as a host tensor from now on).
func (c *lctx) unreleased(i int) (*htensor, error) {
	v := c.n.Inputs[i]
	if v == nil || v.Const == nil {
		return nil, fmt.Errorf("input %d: released weight without its initializer", i)
	}
	return c.e.restoreInitializer(v)
}

func allF32(c *lctx, n int) bool {
	for i := 0; i < n; i++ {
		if c.Has(i) && (c.in(i).kind != kindTensor || c.DT(i) != canonical.Float) {
			return false
		}
	}
	return true
}

// floatDT returns the element type shared by the first n inputs when it
// is float32, float16 or bfloat16. Host tensors of the 16-bit types hold
// their values as float32 (already rounded to the type): the SGEMM and
// convolution kernels read them as they are (weights are converted while
// packed: the packing reads the converted copy), accumulate in float32,
// and the output is rounded to the type once (roundOut).
func floatDT(c *lctx, n int) (canonical.DataType, bool) {
	dt := canonical.DataType(0)
	for i := 0; i < n; i++ {
		if !c.Has(i) {
			continue
		}
		if c.in(i).kind != kindTensor {
			return 0, false
		}
		d := c.DT(i)
		if d != canonical.Float && d != canonical.Float16 && d != canonical.BFloat16 || dt != 0 && d != dt {
			return 0, false
		}
		dt = d
	}
	return dt, dt != 0
}

// roundOut rounds a kernel's float32 result to its 16-bit element type.
func roundOut(y *htensor) {
	if y.dt != canonical.Float {
		y.roundToType()
	}
}

// outLike returns the output tensor of an elementwise kernel over x
// (input i): x itself when the step may overwrite it (lctx.inPlace),
// else a new tensor.
func (c *lctx) outLike(i int, x *htensor) *htensor {
	if c.inPlace == i+1 && !x.released && !x.borrowed {
		return x
	}
	// Every kernel taking its output here writes each element (as it
	// must when the output is x itself).
	return c.newHAs(canonical.Float, x.shape, false)
}

// f32Data is h's float32 data, or nil (a released initializer, or
// another type) — without f32's error, for the callers that ignore it.
func f32Data(h *htensor) []float32 {
	s, _ := h.data.([]float32)
	return s
}

func f32(h *htensor) ([]float32, error) {
	s, ok := h.data.([]float32)
	if !ok {
		return nil, fmt.Errorf("expected float32 data, have %T", h.data)
	}
	return s, nil
}

func okMatMul(c *lctx) bool {
	_, ok := floatDT(c, 2)
	return c.NIn() == 2 && ok && c.Rank(0) >= 1 && c.Rank(1) >= 1
}

// kernelMatMul: numpy matmul with broadcast batch dims, one SGEMM per
// batch entry.
func kernelMatMul(c *lctx) error {
	ha, err := c.H(0)
	if err != nil {
		return err
	}
	hb, err := c.H(1)
	if err != nil {
		return err
	}
	return matMulH(c, ha, hb)
}

// matMulH is kernelMatMul on the tensors ha and hb (inputs 0 and 1, or
// views of them).
func matMulH(c *lctx, ha, hb *htensor) error {
	var err error
	as, bs := ha.shape, hb.shape
	if len(as) == 1 {
		as = []int{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int{bs[0], 1}
	}
	m, k, k2, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-2], bs[len(bs)-1]
	if k != k2 {
		return fmt.Errorf("MatMul: shapes %v and %v do not match", ha.shape, hb.shape)
	}
	batch, err := bcastShape(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return err
	}
	out := append([]int{}, batch...)
	if len(ha.shape) != 1 {
		out = append(out, m)
	}
	if len(hb.shape) != 1 {
		out = append(out, n)
	}
	y := c.newHAs(ha.dt, out, false) // SGEMM with beta 0 writes every element
	a, _ := f32(ha)
	b, _ := f32(hb)
	yd, err := f32(y)
	if err != nil {
		return err
	}
	nb := numel(batch)
	// B shared by every batch entry and A contiguous: one SGEMM with the
	// batch folded into M.
	if numel(bs[:len(bs)-2]) == 1 && numel(as[:len(as)-2]) == nb {
		pe, err := c.packed(1, packTag{kind: 'B', k: k, n: n, ld: n}, func(h *htensor) (packEntry, error) {
			d, _ := f32(h)
			p, err := kernels.PackB(false, k, n, d, n)
			return packEntry{mat: p}, err
		})
		if err != nil {
			return fmt.Errorf("MatMul: %w", err)
		}
		if pe.inPlace != nil {
			b = pe.inPlace
		}
		if err := c.e.kern.SgemmPacked(false, false, nb*m, n, k, 1, a, k, nil, b, n, pe.mat, 0, yd, n); err != nil {
			return fmt.Errorf("MatMul: %w", err)
		}
		roundOut(y)
		c.OutH(0, y)
		return nil
	}
	if hb.released {
		if hb, err = c.unreleased(1); err != nil {
			return fmt.Errorf("MatMul: %w", err)
		}
		b, _ = f32(hb)
	}
	ai := bcastIndex(as[:len(as)-2], batch)
	bi := bcastIndex(bs[:len(bs)-2], batch)
	for i := 0; i < nb; i++ {
		if err := c.e.kern.Sgemm(false, false, m, n, k, 1, a[ai[i]*m*k:], k, b[bi[i]*k*n:], n, 0, yd[i*m*n:], n); err != nil {
			return fmt.Errorf("MatMul: %w", err)
		}
	}
	roundOut(y)
	c.OutH(0, y)
	return nil
}

// bcastIndex maps each flat index of shape out to the flat index of the
// (right-aligned, broadcast) shape in.
func bcastIndex(in, out []int) []int {
	res := make([]int, numel(out))
	idx := make([]int, len(out))
	off := len(out) - len(in)
	for f := range res {
		src := 0
		for d := off; d < len(out); d++ {
			v := idx[d]
			if in[d-off] == 1 {
				v = 0
			}
			src = src*in[d-off] + v
		}
		res[f] = src
		for d := len(out) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < out[d] {
				break
			}
			idx[d] = 0
		}
	}
	return res
}

func okGemm(c *lctx) bool {
	if _, ok := floatDT(c, 3); c.NIn() < 2 || !ok || c.Rank(0) != 2 || c.Rank(1) != 2 {
		return false
	}
	return !c.Has(2) || c.Rank(2) <= 2
}

func kernelGemm(c *lctx) error {
	ha, err := c.H(0)
	if err != nil {
		return err
	}
	hb, err := c.H(1)
	if err != nil {
		return err
	}
	ta, tb := c.AInt("transA", 0) == 1, c.AInt("transB", 0) == 1
	m, k := ha.shape[0], ha.shape[1]
	if ta {
		m, k = k, m
	}
	k2, n := hb.shape[0], hb.shape[1]
	if tb {
		k2, n = n, k2
	}
	if k != k2 {
		return fmt.Errorf("Gemm: shapes %v and %v do not match (transA %v, transB %v)", ha.shape, hb.shape, ta, tb)
	}
	y := c.newH(ha.dt, []int{m, n})
	yd, _ := f32(y)
	beta := float32(0)
	if c.Has(2) {
		hc, err := c.H(2)
		if err != nil {
			return err
		}
		cd, _ := f32(hc)
		cs := hc.shape
		for len(cs) < 2 {
			cs = append([]int{1}, cs...)
		}
		if (cs[0] != 1 && cs[0] != m) || (cs[1] != 1 && cs[1] != n) {
			return fmt.Errorf("Gemm: C of shape %v does not broadcast to [%d %d]", hc.shape, m, n)
		}
		for i := 0; i < m; i++ {
			row := yd[i*n : (i+1)*n]
			si := 0
			if cs[0] != 1 {
				si = i * cs[1]
			}
			if cs[1] == 1 {
				v := cd[si]
				for j := range row {
					row[j] = v
				}
			} else {
				copy(row, cd[si:si+n])
			}
		}
		beta = c.AFloat("beta", 1)
	}
	a, _ := f32(ha)
	b := f32Data(hb) // nil when released (packed only)
	pe, err := c.packed(1, packTag{kind: 'B', trans: tb, k: k, n: n, ld: hb.shape[1]}, func(h *htensor) (packEntry, error) {
		d, _ := f32(h)
		p, err := kernels.PackB(tb, k, n, d, h.shape[1])
		return packEntry{mat: p}, err
	})
	if err != nil {
		return fmt.Errorf("Gemm: %w", err)
	}
	if pe.inPlace != nil {
		b = pe.inPlace
	}
	if err := c.e.kern.SgemmPacked(ta, tb, m, n, k, c.AFloat("alpha", 1), a, ha.shape[1], nil, b, hb.shape[1], pe.mat, beta, yd, n); err != nil {
		return fmt.Errorf("Gemm: %w", err)
	}
	roundOut(y)
	c.OutH(0, y)
	return nil
}

// convMemo is the geometry convParams found for inputs of shapes xs, ws
// (read-only once stored).
type convMemo struct {
	xs, ws []int
	p      kernels.Conv2D
	ok     bool
}

// convParams maps a 1-D or 2-D ONNX Conv on inputs of shape xs, ws to the
// kernel's geometry; a replayed step finds it in its memo (c.conv) when
// the shapes are those of its last run.
func convParams(c *lctx, xs, ws []int) (kernels.Conv2D, bool, error) {
	if c.conv != nil {
		if m := c.conv.Load(); m != nil && shapeEq(m.xs, xs) && shapeEq(m.ws, ws) {
			return m.p, m.ok, nil
		}
	}
	p, ok, err := parseConvParams(c, xs, ws)
	if err == nil && c.conv != nil {
		c.conv.Store(&convMemo{xs: slices.Clone(xs), ws: slices.Clone(ws), p: p, ok: ok})
	}
	return p, ok, err
}

// parseConvParams is convParams from the node's attributes.
func parseConvParams(c *lctx, xs, ws []int) (kernels.Conv2D, bool, error) {
	ns := len(xs) - 2
	if ns < 1 || ns > 2 || len(ws) != len(xs) {
		return kernels.Conv2D{}, false, nil
	}
	kernel := ws[2:]
	if ks := c.AInts("kernel_shape", nil); ks != nil {
		kernel = toInts(ks)
	}
	if len(kernel) != ns || !shapeEq(kernel, ws[2:]) {
		return kernels.Conv2D{}, false, nil
	}
	g, err := resolveGeom(c, xs[2:], kernel, false)
	if err != nil {
		return kernels.Conv2D{}, false, err
	}
	p := kernels.Conv2D{N: xs[0], C: xs[1], H: 1, W: xs[2], M: ws[0], KH: 1, KW: kernel[0],
		SH: 1, SW: g.strides[0], DH: 1, DW: g.dil[0], PL: g.padB[0], PR: g.padE[0], Groups: int(c.AInt("group", 1))}
	if ns == 2 {
		p.H, p.W, p.KH, p.KW = xs[2], xs[3], kernel[0], kernel[1]
		p.SH, p.SW, p.DH, p.DW = g.strides[0], g.strides[1], g.dil[0], g.dil[1]
		p.PT, p.PL, p.PB, p.PR = g.padB[0], g.padB[1], g.padE[0], g.padE[1]
	}
	if p.Groups < 1 || p.C%p.Groups != 0 || p.M%p.Groups != 0 || ws[1] != p.C/p.Groups {
		return kernels.Conv2D{}, false, nil
	}
	oh, ow := p.Out()
	if p.N < 1 || oh < 1 || ow < 1 || p.PT < 0 || p.PL < 0 || p.PB < 0 || p.PR < 0 {
		return kernels.Conv2D{}, false, nil
	}
	return p, true, nil
}

func okConv(c *lctx) bool {
	if _, ok := floatDT(c, 3); c.NIn() < 2 || !ok {
		return false
	}
	_, ok, err := convParams(c, c.Shape(0), c.Shape(1))
	return ok && err == nil
}

func kernelConv(c *lctx) error {
	// nhwc: the plan keeps this Conv's output channels last (nhwc.go)
	// and this run's shapes let it.
	var p kernels.Conv2D
	nhwc := false
	if hr := c.in(0).h; c.nhwc && hr != nil {
		q, ok, err := convParams(c, hr.shape, c.Shape(1))
		p, nhwc = q, err == nil && ok && c.runsNHWC(q)
	}
	var scale []float32
	if c.scale != nil {
		// The Mul by channel this Conv took (fuse_scale.go): applied as
		// the NHWC kernel reads its input, or run first.
		if nhwc {
			scale = c.channelScale(p)
		}
		if scale == nil {
			if err := c.scaledInput(); err != nil {
				return err
			}
			defer c.dropMul()
		}
	}
	if nhwc {
		return c.convNHWC(p, scale)
	}
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	hw, err := c.H(1)
	if err != nil {
		return err
	}
	p, ok, err := convParams(c, hx.shape, hw.shape)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("Conv: shapes %v and %v are not a 1-D or 2-D convolution the kernel runs", hx.shape, hw.shape)
	}
	var bias []float32
	if c.Has(2) {
		hb, err := c.H(2)
		if err != nil {
			return err
		}
		bias, _ = f32(hb)
	}
	oh, ow := p.Out()
	out := []int{p.N, p.M, ow}
	if len(hx.shape) == 4 {
		out = []int{p.N, p.M, oh, ow}
	}
	// Every path of Conv2DPacked writes each output element when the
	// reduction is not empty (the bias first, or an SGEMM with beta 0,
	// or the depthwise loops' bias start).
	y := c.newOut(hx.dt, out, p.C/max(p.Groups, 1)*p.KH*p.KW == 0)
	x, _ := f32(hx)
	w := f32Data(hw) // nil when released (packed only)
	yd, _ := f32(y)
	tag := packTag{kind: 'C', m: p.M, c: p.C, g: p.Groups, kh: p.KH, kw: p.KW}
	pe, err := c.packed(1, tag, func(h *htensor) (packEntry, error) {
		d, _ := f32(h)
		pw, err := kernels.PackConvWeights(p, d)
		return packEntry{convs: pw}, err
	})
	if err != nil {
		return fmt.Errorf("Conv: %w", err)
	}
	if pe.convs == nil && hw.released {
		if hw, err = c.unreleased(1); err != nil {
			return fmt.Errorf("Conv: %w", err)
		}
		w, _ = f32(hw)
	}
	var epi kernels.Epilogue
	if c.epilogue != nil {
		epi = c.epilogue(yd)
	}
	done := false
	switch {
	case c.deferConv && c.clip == nil && y.dt == canonical.Float && c.en.deferPending(c.e.kern, p, x, w, pe.convs, bias, yd, c.act, epi):
		// An expansion: computed by the depthwise convolution after it
		// (fuse_expanddw.go).
		done = true
	case c.en.pend.Set():
		done, err = c.convAfter(p, x, w, bias, yd, epi)
	}
	switch {
	case done || err != nil:
	case c.clip != nil:
		err = c.e.kern.Conv2DPackedClip(p, x, w, pe.convs, bias, yd, c.clip[0], c.clip[1], epi)
	default:
		err = c.e.kern.Conv2DPackedAct(p, x, w, pe.convs, bias, yd, c.act, epi)
	}
	if err != nil {
		return fmt.Errorf("Conv: %w", err)
	}
	roundOut(y)
	c.OutH(0, y)
	return nil
}

// deferPending leaves the direct convolution of its arguments to the
// next Conv kernel (en.pend) when kernels.Defer takes it.
func (en *env) deferPending(x *kernels.Context, p kernels.Conv2D, in, w []float32, pw []*kernels.Packed, bias, y []float32, act kernels.Act, epi kernels.Epilogue) bool {
	d, ok := x.Defer(p, in, w, pw, bias, y, act, epi)
	if ok {
		en.pend = d
	}
	return ok
}

// convAfter runs the pending expansion (env.pend) and the depthwise
// convolution p of its output as one kernel call when p reads it
// (kernels.Conv2DAfter: done); else only the expansion, and p is left to
// the caller.
func (c *lctx) convAfter(p kernels.Conv2D, x, w, bias, y []float32, epi kernels.Epilogue) (done bool, err error) {
	d := c.en.pend
	c.en.pend = kernels.Pending{}
	if w == nil || !d.Feeds(p, x) || y == nil {
		return false, c.e.kern.Run(&d)
	}
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	switch {
	case c.clip != nil:
		lo, hi = c.clip[0], c.clip[1]
	case c.act == kernels.ActRelu:
		lo = 0
	case c.act == kernels.ActRelu6:
		lo, hi = 0, 6
	}
	return true, c.e.kern.Conv2DAfter(&d, p, x, w, bias, y, lo, hi, epi)
}

// poolParams maps a 1-D or 2-D MaxPool on an input of shape xs to the
// kernel's geometry.
func poolParams(c *lctx, xs []int) (kernels.Pool2D, bool, error) {
	ns := len(xs) - 2
	if ns < 1 || ns > 2 {
		return kernels.Pool2D{}, false, nil
	}
	kernel := toInts(c.AInts("kernel_shape", nil))
	if len(kernel) != ns {
		return kernels.Pool2D{}, false, nil
	}
	g, err := resolveGeom(c, xs[2:], kernel, c.AInt("ceil_mode", 0) == 1)
	if err != nil {
		return kernels.Pool2D{}, false, err
	}
	p := kernels.Pool2D{N: xs[0], C: xs[1], H: 1, W: xs[2], KH: 1, KW: kernel[0], SH: 1, SW: g.strides[0],
		DH: 1, DW: g.dil[0], PL: g.padB[0], OH: 1, OW: g.out[0]}
	if ns == 2 {
		p.H, p.W, p.KH, p.KW = xs[2], xs[3], kernel[0], kernel[1]
		p.SH, p.SW, p.DH, p.DW = g.strides[0], g.strides[1], g.dil[0], g.dil[1]
		p.PT, p.PL, p.OH, p.OW = g.padB[0], g.padB[1], g.out[0], g.out[1]
	}
	if p.PT < 0 || p.PL < 0 || p.OH < 1 || p.OW < 1 || p.N < 1 || p.C < 1 {
		return kernels.Pool2D{}, false, nil
	}
	return p, true, nil
}

func okMaxPool(c *lctx) bool {
	if c.NIn() != 1 || !allF32(c, 1) || c.HasOut(1) {
		return false
	}
	_, ok, err := poolParams(c, c.Shape(0))
	return ok && err == nil
}

func kernelMaxPool(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	p, ok, err := poolParams(c, hx.shape)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("MaxPool: shape %v is not a 1-D or 2-D pool the kernel runs", hx.shape)
	}
	out := []int{p.N, p.C, p.OW}
	if len(hx.shape) == 4 {
		out = []int{p.N, p.C, p.OH, p.OW}
	}
	// MaxPool2D writes every element (TestMaxPoolWritesEveryElement): a
	// reused buffer needs no zeroing on the caller first.
	y := c.newHAs(canonical.Float, out, false)
	x, _ := f32(hx)
	yd, _ := f32(y)
	if err := c.e.kern.MaxPool2D(p, x, yd); err != nil {
		return fmt.Errorf("MaxPool: %w", err)
	}
	c.OutH(0, y)
	return nil
}

// onHost reports whether input i is already a host tensor: elementwise
// ops run on the host only then (after a kernel), so that they never cut
// a GoMLX segment in two.
func onHost(c *lctx, i int) bool { return c.Has(i) && c.in(i).h != nil }

func okRelu(c *lctx) bool { return c.NIn() == 1 && allF32(c, 1) && onHost(c, 0) }

func kernelRelu(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	c.e.kern.Range(len(x), 1, func(lo, hi int) { kernels.Relu(x[lo:hi], yd[lo:hi]) })
	c.OutH(0, y)
	return nil
}

// okBinary: Add or Mul on float32 host tensors where one operand has the
// output's shape and the other broadcasts as a suffix (a bias along the
// last axes) or as a prefix (one value per block: a per-channel scale).
func okBinary(c *lctx) bool {
	// Before opset 7 Add and Mul broadcast along "axis" (legacy semantics).
	if c.NIn() != 2 || c.HasAttr("axis") || c.HasAttr("broadcast") || !allF32(c, 2) || !onHost(c, 0) || !onHost(c, 1) {
		return false
	}
	_, _, _, ok := bcastKind(c.Shape(0), c.Shape(1))
	return ok
}

// bcastKind returns which operand has the output's shape (big) and how
// the other one broadcasts: suffix (inner == 0) or prefix blocks of inner
// elements.
func bcastKind(a, b []int) (big int, suffix bool, inner int, ok bool) {
	isSuffix := func(bg, sm []int) bool {
		for len(sm) > 0 && sm[0] == 1 {
			sm = sm[1:]
		}
		return len(sm) <= len(bg) && shapeEq(bg[len(bg)-len(sm):], sm)
	}
	// isPrefix: sm (left-padded with 1s) equals bg on its first k axes
	// and is 1 after them; returns the block size.
	isPrefix := func(bg, sm []int) (int, bool) {
		if len(sm) > len(bg) {
			return 0, false
		}
		pad := make([]int, len(bg))
		for i := range pad {
			pad[i] = 1
		}
		copy(pad[len(bg)-len(sm):], sm)
		k := len(bg)
		for k > 0 && pad[k-1] == 1 {
			k--
		}
		if !shapeEq(pad[:k], bg[:k]) {
			return 0, false
		}
		return numel(bg[k:]), true
	}
	for _, o := range [][2]int{{0, 1}, {1, 0}} {
		bg, sm := a, b
		if o[0] == 1 {
			bg, sm = b, a
		}
		if len(sm) > len(bg) {
			continue
		}
		if isSuffix(bg, sm) {
			return o[0], true, 0, true
		}
		if in, ok := isPrefix(bg, sm); ok {
			return o[0], false, in, true
		}
	}
	return 0, false, 0, false
}

// binaryOperands is the prologue of the float32 binary kernels: the two
// operands, the larger (x, its data) and the broadcast one (b) with bcastKind's
// layout (bi the index of the larger, suffix or per-block with inner
// elements), and the output y shaped like the larger.
type binaryOperands struct {
	bi, inner int
	suffix    bool
	x, b, yd  []float32
	y         *htensor
}

func binaryPrologue(c *lctx) (binaryOperands, error) {
	ha, err := c.H(0)
	if err != nil {
		return binaryOperands{}, err
	}
	hb, err := c.H(1)
	if err != nil {
		return binaryOperands{}, err
	}
	bi, suffix, inner, ok := bcastKind(ha.shape, hb.shape)
	if !ok {
		return binaryOperands{}, fmt.Errorf("%s: shapes %v and %v are not a suffix or prefix broadcast", c.n.OpType, ha.shape, hb.shape)
	}
	big, small := ha, hb
	if bi == 1 {
		big, small = hb, ha
	}
	op := binaryOperands{bi: bi, inner: inner, suffix: suffix, y: c.outLike(bi, big)}
	op.x, _ = f32(big)
	op.b, _ = f32(small)
	op.yd, _ = f32(op.y)
	return op, nil
}

func kernelBinary(c *lctx, mul bool) error {
	if c.binaryNHWC(mul) {
		return nil
	}
	ops, err := binaryPrologue(c)
	if err != nil {
		return err
	}
	y, x, b, yd, suffix, inner := ops.y, ops.x, ops.b, ops.yd, ops.suffix, ops.inner
	switch {
	case len(b) == 0:
	case suffix:
		op := kernels.AddSuffix
		if mul {
			op = kernels.MulSuffix
		}
		n := len(b)
		if len(x)/n >= 8 || n < 1024 {
			c.e.kern.Range(len(x)/n, n, func(lo, hi int) { op(x[lo*n:hi*n], b, yd[lo*n:hi*n]) })
			break
		}
		// Few long rows (a residual Add: b as large as x): split by
		// element ranges, each cut at the row ends.
		c.e.kern.Range(len(x), 1, func(lo, hi int) {
			for g := lo; g < hi; {
				a := g % n
				e := min(n, a+hi-g)
				op(x[g:g+e-a], b[a:e], yd[g:g+e-a])
				g += e - a
			}
		})
	default:
		c.e.kern.Range(len(b), inner, func(lo, hi int) {
			if mul {
				kernels.MulBlocks(x[lo*inner:hi*inner], b[lo:hi], yd[lo*inner:hi*inner], inner)
			} else {
				kernels.AddBlocks(x[lo*inner:hi*inner], b[lo:hi], yd[lo*inner:hi*inner], inner)
			}
		})
	}
	c.OutH(0, y)
	return nil
}

// poolNHWC writes the mean of each channel of hx, a [N, C, H, W] tensor
// stored channels last (nhwc.go), over its pixels: GlobalAveragePool, or
// a ReduceMean over H and W, of output shape out. Pooled as stored, with
// the NCHW pool's bits (kernels.GlobalAveragePoolNHWC).
func (c *lctx) poolNHWC(hx *htensor, out []int) error {
	s := hx.shape
	y := c.newHAs(canonical.Float, out, false)
	x, _ := f32(hx)
	yd, _ := f32(y)
	if err := c.e.kern.GlobalAveragePoolNHWC(s[0], s[2]*s[3], s[1], x, yd); err != nil {
		return fmt.Errorf("%s: %w", c.n.OpType, err)
	}
	c.OutH(0, y)
	return nil
}

// binaryNHWC runs the Add or Mul (mul) of c when one input is stored
// channels last (nhwc.go) and the other is one value per channel ([C, 1,
// 1], [1, C, 1, 1] or [N, C, 1, 1]: a squeeze-and-excitation's scale),
// its output channels last too: each pixel's channels against the
// operand's (kernels.MulSuffix, AddSuffix; each element the one operation
// the NCHW blocks make: the same bits). false: not such an operation (the
// NCHW kernel runs it).
func (c *lctx) binaryNHWC(mul bool) bool {
	if c.NIn() != 2 || !c.Has(0) || !c.Has(1) || c.lowering || c.b != nil {
		return false
	}
	bi, ha, hb := 0, denseNHWC(c.in(0).h), denseNHWC(c.in(1).h)
	if hb != nil && hb.nhwc {
		bi, ha, hb = 1, hb, ha
	}
	if ha == nil || hb == nil || !ha.nhwc || hb.nhwc || hb.released || hb.dt != canonical.Float || len(ha.shape) != 4 {
		return false
	}
	n, ch, px := ha.shape[0], ha.shape[1], ha.shape[2]*ha.shape[3]
	s := hb.shape
	switch {
	case len(s) == 3 && s[0] == ch && s[1] == 1 && s[2] == 1:
	case len(s) == 4 && (s[0] == 1 || s[0] == n) && s[1] == ch && s[2] == 1 && s[3] == 1:
	default:
		return false
	}
	x, _ := f32(ha)
	b, err := f32(hb)
	if err != nil || len(b) < ch {
		return false
	}
	y := c.outLike(bi, ha)
	y.nhwc = true
	yd, _ := f32(y)
	op := kernels.AddSuffix
	if mul {
		op = kernels.MulSuffix
	}
	c.e.kern.Range(n*px, ch, func(lo, hi int) {
		for r := lo; r < hi; {
			img := r / px
			e := min(hi, (img+1)*px)
			row := b[:ch]
			if len(b) > ch {
				row = b[img*ch : (img+1)*ch]
			}
			op(x[r*ch:e*ch], row, yd[r*ch:e*ch])
			r = e
		}
	})
	c.OutH(0, y)
	return true
}

func okUnaryHost(c *lctx) bool { return c.NIn() == 1 && allF32(c, 1) && onHost(c, 0) }

func kernelHard(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	if hx.dt != canonical.Float {
		return fmt.Errorf("%s: input is %v, not float32", c.n.OpType, hx.dt)
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	if c.n.OpType == "HardSwish" {
		c.e.kern.Range(len(x), 1, func(lo, hi int) { kernels.HardSwish(x[lo:hi], yd[lo:hi]) })
	} else {
		al, be := c.AFloat("alpha", 0.2), c.AFloat("beta", 0.5)
		c.e.kern.Range(len(x), 1, func(lo, hi int) { kernels.HardSigmoid(x[lo:hi], yd[lo:hi], al, be) })
	}
	c.OutH(0, y)
	return nil
}

// okClip: float32 on the host, bounds (Clip-11+) scalars on the host.
func okClip(c *lctx) bool {
	if c.NIn() < 1 || !allF32(c, 3) || !onHost(c, 0) {
		return false
	}
	for i := 1; i < c.NIn() && i < 3; i++ {
		if c.Has(i) && (!onHost(c, i) || numel(c.Shape(i)) != 1) {
			return false
		}
	}
	return true
}

func kernelClip(c *lctx) error {
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	dlo, dhi := clipDefaults(canonical.Float)
	lo, hi := float32(dlo), float32(dhi)
	if c.ver < 11 {
		lo, hi = c.AFloat("min", lo), c.AFloat("max", hi)
	}
	for i, dst := range []*float32{&lo, &hi} {
		if c.ver >= 11 && c.Has(i+1) {
			h, err := c.H(i + 1)
			if err != nil {
				return err
			}
			v, _ := f32(h)
			if len(v) != 1 {
				return fmt.Errorf("Clip: bound %d has %d elements, want 1", i+1, len(v))
			}
			*dst = v[0]
		}
	}
	y := c.outLike(0, hx)
	x, _ := f32(hx)
	yd, _ := f32(y)
	c.e.kern.Range(len(x), 1, func(a, b int) { kernels.Clip(x[a:b], yd[a:b], lo, hi) })
	c.OutH(0, y)
	return nil
}

func okGlobalAvgPool(c *lctx) bool {
	return c.NIn() == 1 && allF32(c, 1) && onHost(c, 0) && c.Rank(0) >= 3
}

func kernelGlobalAvgPool(c *lctx) error {
	if hx := denseNHWC(c.in(0).h); hx != nil && hx.nhwc && len(hx.shape) == 4 {
		s := hx.shape
		return c.poolNHWC(hx, []int{s[0], s[1], 1, 1})
	}
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	out := append([]int{}, hx.shape[:2]...)
	for range hx.shape[2:] {
		out = append(out, 1)
	}
	y := c.newH(canonical.Float, out)
	x, _ := f32(hx)
	yd, _ := f32(y)
	inner := numel(hx.shape[2:])
	if inner == 0 {
		return fmt.Errorf("GlobalAveragePool: empty spatial extent in %v", hx.shape)
	}
	if err := c.e.kern.GlobalAveragePoolNCHW(hx.shape[0], hx.shape[1], inner, x, yd); err != nil {
		return fmt.Errorf("GlobalAveragePool: %w", err)
	}
	c.OutH(0, y)
	return nil
}
