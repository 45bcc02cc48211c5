package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Channels-last activations. A mobile net's blocks (a 1×1 expansion, a
// depthwise convolution, a 1×1 projection, a residual Add) gain from a
// second thread only when each thread reads what it wrote: in NCHW every
// channel-mixing step reads planes the other core just wrote, while in
// NHWC a thread can keep its pixels through a block (docs/threads.md,
// "What is left"). So a plan keeps a Conv's output channels last (the
// htensor's nhwc flag, its shape still [N, C, H, W]) when every step that
// reads it is a Conv that runs in NHWC too — the 1×1 convolutions
// (kernels.PointwiseNHWC; of strides above 1, a downsampling shortcut,
// PointwiseNHWCSubsampled), the depthwise ones (DepthwiseNHWC), and with
// AVX-512 RegNet's grouped ones and the mobile nets' stems (ConvNHWC,
// the stem reading the graph's NCHW input as it is) with their fused
// element-by-element tails, a residual Add or Mul reading another
// such output — or a step that only moves channels and keeps its output
// so as well (ShuffleNet's: a Slice of some channels, sliceNHWC; a
// channel shuffle, shuffleNHWC), or a GlobalAveragePool or ReduceMean
// over the pixels, which pools it as stored (poolNHWC; a squeeze-and-
// excitation's, whose Mul by channel then keeps the scaled tensor
// channels last, binaryNHWC), or, at the region's end, a 1×1 Conv that
// reads it converted (markNHWC). The first step of a region transposes
// its NCHW input (once for all its readers when they all run in NHWC:
// hostStep.shareIn); every other reader of an NHWC tensor gets
// it in NCHW (lctx.H, graph outputs, GoMLX segments). The build (the
// plan's first run) and each run's own checks of the shapes (runsNHWC,
// and the Slice's and shuffle's) keep the NCHW path wherever NHWC does
// not apply. Each element is the same chain of multiply-adds in either
// layout (in the same order, from the bias: the NCHW depthwise kernels
// add a padded tap's 0·w, which changes at most the sign of a zero), the
// moves copy and the pools sum in the same order: the mobile and RegNet
// fixtures' outputs are the same bits (TestNHWCPlan).

// nhwcUnit is a Conv step and its fused tail steps (nil in: none), as a
// plan runs them, or a step that only moves channels: a Slice, a channel
// shuffle (fuseConcatTranspose).
type nhwcUnit struct {
	steps []*hostStep
	in    []int // fusedStep.in: the input of steps[k] that steps[k−1] wrote
	// heads: the inputs of steps[0] read in the unit's layout (a Conv's
	// data, a Slice's data, a shuffle's parts).
	heads []int
}

// head reports whether input i of steps[0] is one of u's heads.
func (u *nhwcUnit) head(i int) bool {
	for _, h := range u.heads {
		if h == i {
			return true
		}
	}
	return false
}

// out is the unit's result: its last step's output.
func (u *nhwcUnit) out() *canonical.Value {
	n := u.steps[len(u.steps)-1].n
	if len(n.Outputs) == 0 {
		return nil
	}
	return n.Outputs[0]
}

// nhwcReader is a step reading a value: a unit reading it as one of its
// heads (head) or as a residual operand of its tail (ok), or anything
// else (ok false, u nil when the step is no unit).
type nhwcReader struct {
	u        *nhwcUnit
	ok, head bool
	// pool: a GlobalAveragePool or a ReduceMean, which pool an NHWC
	// input over its pixels as stored (ok, u nil).
	pool bool
}

// nhwcKeep is how many edges from one NHWC unit's output to another's
// input a region needs per conversion (an NCHW input transposed at its
// start, an NHWC output transposed for an NCHW 1×1 convolution after it)
// to be kept: a region of one or two blocks between conversions costs
// more than it saves (a squeeze-and-excitation net's projections).
const nhwcKeep = 2

// markNHWC sets hostStep.nhwc on the steps whose output the plan keeps
// channels last (see above). Candidates are the units whose Conv is a 1×1
// or depthwise convolution of constant weights with a tail of
// element-by-element ops, and the Slices and channel shuffles, whose
// result is neither a graph output nor kept and is read by units and
// pools only. Then, until nothing changes, a candidate is dropped when
// its result has a reader that is not a candidate or a pool but for the
// input of a 1×1 convolution (which reads it converted: an exit), and
// every region of candidates (linked by their results read) is dropped
// unless it has nhwcKeep edges from one candidate's result to another's
// input per conversion in and out.
func markNHWC(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) {
	var units []*nhwcUnit
	readers := map[*canonical.Value][]nhwcReader{}
	producer := map[*canonical.Value]*nhwcUnit{}
	other := func(st step) {
		reads, _ := stepIO(st)
		for _, v := range reads {
			if v != nil {
				readers[v] = append(readers[v], nhwcReader{})
			}
		}
	}
	var visit func(st step)
	visit = func(st step) {
		var u *nhwcUnit
		switch st := st.(type) {
		case *hostStep:
			switch {
			case st.n.OpType == "Conv", st.n.OpType == "Slice" && plainDomain(st.n) && len(st.n.Outputs) == 1:
				u = &nhwcUnit{steps: []*hostStep{st}, in: []int{-1}, heads: []int{0}}
			case st.shuffle != nil && st.shuffle.back:
				u = &nhwcUnit{steps: []*hostStep{st}, in: []int{-1}}
				for i := range st.shuffle.parts {
					u.heads = append(u.heads, i)
				}
			}
		case *fusedStep:
			if st.steps[0].n.OpType == "Conv" {
				u = &nhwcUnit{steps: st.steps, in: st.in, heads: []int{0}}
			}
		case *expandDwStep:
			visit(st.expand)
			visit(st.dw)
			return
		}
		if h, ok := st.(*hostStep); ok && (h.n.OpType == "GlobalAveragePool" || h.n.OpType == "ReduceMean") && plainDomain(h.n) && len(h.n.Inputs) > 0 && h.n.Inputs[0] != nil {
			// A pool over the pixels reads the input as stored (a
			// ReduceMean over other axes gets it converted: its kernel
			// checks).
			readers[h.n.Inputs[0]] = append(readers[h.n.Inputs[0]], nhwcReader{ok: true, pool: true})
			for _, v := range h.n.Inputs[1:] {
				if v != nil {
					readers[v] = append(readers[v], nhwcReader{})
				}
			}
			return
		}
		if u == nil {
			other(st)
			return
		}
		units = append(units, u)
		if v := u.out(); v != nil {
			producer[v] = u
		}
		for k, h := range u.steps {
			for i, v := range h.n.Inputs {
				switch {
				case v == nil || k > 0 && i == u.in[k]:
					// The chain's own value.
				case k == 0 && u.head(i):
					readers[v] = append(readers[v], nhwcReader{u: u, ok: true, head: true})
				case k > 0 && (h.n.OpType == "Add" || h.n.OpType == "Mul"):
					readers[v] = append(readers[v], nhwcReader{u: u, ok: true})
				default:
					readers[v] = append(readers[v], nhwcReader{u: u})
				}
			}
			for _, v := range h.n.OuterValues() {
				readers[v] = append(readers[v], nhwcReader{u: u})
			}
			if h.scale != nil {
				readers[h.scale.by] = append(readers[h.scale.by], nhwcReader{u: u})
			}
		}
	}
	for _, st := range steps {
		visit(st)
	}
	in := map[*nhwcUnit]bool{}
	for _, u := range units {
		v := u.out()
		if v != nil && gi.defs[v] && !keep[v] && gi.lastUse[v] != outputUse && len(readers[v]) > 0 && nhwcCapable(u) {
			in[u] = true
		}
	}
	// exitOK: a reader of an NHWC result that runs in NCHW and reads it
	// converted (lctx.H): the input of a 1×1 convolution.
	exitOK := func(r nhwcReader) bool {
		return r.u != nil && r.head && nhwcCapable(r.u) && nhwcPointwiseNode(r.u.steps[0].n)
	}
	for changed := true; changed; {
		changed = false
		// In plan order, so that the result never depends on a map's.
		for _, u := range units {
			if !in[u] {
				continue
			}
			for _, r := range readers[u.out()] {
				if !r.ok || r.u == nil && !r.pool || r.u != nil && !in[r.u] && !exitOK(r) {
					delete(in, u)
					changed = true
					break
				}
			}
		}
		// The regions, and their conversions and inner edges.
		root := map[*nhwcUnit]*nhwcUnit{}
		var find func(u *nhwcUnit) *nhwcUnit
		find = func(u *nhwcUnit) *nhwcUnit {
			if r, ok := root[u]; ok && r != u {
				r = find(r)
				root[u] = r
				return r
			}
			return u
		}
		for _, u := range units {
			if !in[u] {
				continue
			}
			for _, r := range readers[u.out()] {
				if in[r.u] {
					a, b := find(u), find(r.u)
					if a != b {
						root[a] = b
					}
				}
			}
		}
		conv, inner := map[*nhwcUnit]int{}, map[*nhwcUnit]int{}
		for _, u := range units {
			if !in[u] {
				continue
			}
			reg := find(u)
			for _, i := range u.heads {
				if p := producer[u.steps[0].n.Inputs[i]]; p == nil || !in[p] {
					conv[reg]++ // converted in
				}
			}
			for _, r := range readers[u.out()] {
				switch {
				case r.pool:
					// Pooled as stored.
				case !in[r.u]:
					conv[reg]++ // converted out
				case r.head:
					inner[reg]++
				}
			}
		}
		var drop []*nhwcUnit
		for _, u := range units {
			if reg := find(u); in[u] && inner[reg] < nhwcKeep*conv[reg] {
				drop = append(drop, u)
			}
		}
		for _, u := range drop {
			delete(in, u)
			changed = true
		}
	}
	for u := range in {
		u.steps[0].nhwc = true
	}
	// An NCHW value that only units of regions read as a head (and pools)
	// is converted once, by whichever of its Conv readers runs first
	// (hostStep.shareIn): RegNet's stem output, read by the first block
	// and its shortcut.
	for _, u := range units {
		if !in[u] || u.steps[0].n.OpType != "Conv" {
			continue
		}
		v := u.steps[0].n.Inputs[0]
		if p := producer[v]; p != nil && in[p] || !gi.defs[v] || keep[v] || gi.lastUse[v] == outputUse {
			continue
		}
		heads, only := 0, true
		for _, r := range readers[v] {
			switch {
			case r.pool:
			case r.u != nil && in[r.u] && r.head:
				heads++
			default:
				only = false
			}
		}
		u.steps[0].shareIn = only && heads > 1
	}
}

// nhwcPointwiseNode reports whether Conv node n is a 1×1 convolution of
// one group (nhwcCapable checks its stride and padding).
func nhwcPointwiseNode(n *canonical.Node) bool {
	if n.OpType != "Conv" || len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const == nil {
		return false
	}
	ws := n.Inputs[1].Const.Dims
	return len(ws) == 4 && ws[2] == 1 && ws[3] == 1 && n.AttrInt("group", 1) == 1
}

// nhwcCapable reports whether u may run in NHWC: its Conv is a 2-D 1×1
// convolution (no padding, one group), a depthwise one of at most 64
// taps or one ConvNHWC takes (grouped, or a stem), of constant weights,
// and each tail op is element by element on the chain's value (an
// activation, or an Add or Mul whose other operand TailSeg checks at run
// time).
func nhwcCapable(u *nhwcUnit) bool {
	n := u.steps[0].n
	if n.OpType != "Conv" {
		// A Slice or a channel shuffle: its kernel checks the shapes
		// (sliceNHWC, shuffleNHWC) and else runs in NCHW.
		return len(u.steps) == 1
	}
	if len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const == nil || len(n.Outputs) != 1 {
		return false
	}
	ws := n.Inputs[1].Const.Dims
	if len(ws) != 4 {
		return false
	}
	m, cg, kh, kw := ws[0], ws[1], ws[2], ws[3]
	g := n.AttrInt("group", 1)
	ones := func(name string) bool {
		for _, v := range n.AttrInts(name, nil) {
			if v != 1 {
				return false
			}
		}
		return true
	}
	zeros := func(name string) bool {
		for _, v := range n.AttrInts(name, nil) {
			if v != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case kh == 1 && kw == 1 && g == 1:
		// Any strides: those above 1 subsample (nhwcSubsampled).
		ap := n.AttrString("auto_pad", "NOTSET")
		if !ones("dilations") || !zeros("pads") || ap != "NOTSET" && ap != "VALID" {
			return false
		}
	case cg == 1 && g == m && kh*kw <= 64:
	case kernels.ConvNHWCFits(kernels.Conv2D{C: int(cg * g), M: int(m), KH: int(kh), KW: int(kw), Groups: int(g)}):
		// A grouped convolution (RegNet's) or a small one (a stem).
	default:
		return false
	}
	for _, h := range u.steps[1:] {
		switch h.n.OpType {
		case "Relu", "Clip", "HardSwish", "HardSigmoid", "Sigmoid", "Swish", "Add", "Mul":
		default:
			return false
		}
	}
	return true
}

// runsNHWC reports whether the Conv of c, of geometry p, runs in NHWC on
// this run: the plan keeps its output so, it is replayed (not built), it
// is float32, and p is a 2-D 1×1 or depthwise convolution the NHWC
// kernels take, with no Clip but ReLU6 folded into it.
func (c *lctx) runsNHWC(p kernels.Conv2D) bool {
	if !c.nhwc || c.b != nil || c.lowering || c.e.kern == nil || c.clip != nil || c.NIn() < 2 || !c.Has(0) || !c.Has(1) {
		return false
	}
	if w := c.in(1); !w.valStatic || w.h == nil {
		return false // packed once: constant weights only
	}
	if h := c.in(0).h; h == nil || h.dt != canonical.Float || len(h.shape) != 4 {
		return false
	}
	if c.Has(2) && c.DT(2) != canonical.Float {
		return false
	}
	if p.H*p.W == 1 {
		// One pixel is the same memory in either layout: the NCHW
		// kernels run it (a squeeze-and-excitation's products).
		return false
	}
	return nhwcPointwise(p) || nhwcSubsampled(p) || nhwcDepthwise(p) || kernels.ConvNHWCFits(p)
}

func nhwcPointwise(p kernels.Conv2D) bool {
	return p.Groups == 1 && p.KH == 1 && p.KW == 1 && p.SH == 1 && p.SW == 1 && p.PT == 0 && p.PL == 0 && p.PB == 0 && p.PR == 0
}

// nhwcSubsampled reports whether p is a 1×1 convolution of one group
// and strides above 1, no padding (a downsampling shortcut).
func nhwcSubsampled(p kernels.Conv2D) bool {
	return p.Groups == 1 && p.KH == 1 && p.KW == 1 && (p.SH > 1 || p.SW > 1) && p.PT == 0 && p.PL == 0 && p.PB == 0 && p.PR == 0
}

func nhwcDepthwise(p kernels.Conv2D) bool {
	return p.Groups == p.C && p.M == p.C && p.KH*p.KW <= 64
}

// channelScale is the per-channel operand of the Mul a 1×1 Conv took
// (fuse_scale.go) as the NHWC kernel takes it — one value per input
// channel ([C, 1, 1], [1, C, 1, 1]) or per image and channel ([N, C, 1,
// 1]), float32 — or nil when it is not such an operand.
func (c *lctx) channelScale(p kernels.Conv2D) []float32 {
	if !nhwcPointwise(p) {
		return nil
	}
	sl := c.en.get(c.scale.by)
	if sl == nil || sl.kind != kindTensor || sl.h == nil || sl.h.nhwc || sl.h.released || sl.h.dt != canonical.Float {
		return nil
	}
	s := sl.h.shape
	switch {
	case len(s) == 3 && s[0] == p.C && s[1] == 1 && s[2] == 1:
	case len(s) == 4 && (s[0] == 1 || s[0] == p.N) && s[1] == p.C && s[2] == 1 && s[3] == 1:
	default:
		return nil
	}
	b, err := f32(sl.h)
	if err != nil || len(b) != numel(s) {
		return nil
	}
	return b
}

// convNHWC runs the Conv of c (runsNHWC) with the NHWC kernels: its input
// as stored, or transposed from NCHW at the start of an NHWC region
// (ConvNHWC reads NCHW as it is), multiplied by channel by scale (nil:
// not; channelScale) as the 1×1 kernel reads it; its output channels
// last.
func (c *lctx) convNHWC(p kernels.Conv2D, scale []float32) error {
	if c.en.pend.Set() {
		// The expansion this convolution reads was left to it
		// (fuse_expanddw.go) and runs in NCHW: compute it first.
		d := c.en.pend
		c.en.pend = kernels.Pending{}
		if err := c.e.kern.Run(&d); err != nil {
			return fmt.Errorf("Conv: %w", err)
		}
	}
	hx := c.in(0).h
	lda := p.C // the input's pixel stride
	if hx.ld != 0 {
		// A Slice's view of a wider tensor's channels (markSliceViews):
		// the 1×1 kernel reads it as it is, any other copies it.
		if nhwcPointwise(p) && scale == nil {
			lda = hx.ld
		} else {
			hx = denseNHWC(hx)
		}
	}
	x, err := f32(hx)
	if err != nil {
		return fmt.Errorf("Conv: %w", err)
	}
	// dense: ConvNHWC's (grouped, or a stem), which reads NCHW input too.
	dense := !nhwcPointwise(p) && !nhwcSubsampled(p) && !nhwcDepthwise(p)
	if !hx.nhwc && !dense {
		t := c.newHAs(canonical.Float, []int{p.N, p.C, p.H, p.W}, false) // stored N, H, W, C
		td, _ := f32(t)
		c.transposeChannels(x, td, p.N, p.C, p.H*p.W, true)
		x = td
		if c.shareIn && !c.in(0).valStatic {
			// Every reader of the input runs in NHWC (markNHWC): the
			// later ones take it as stored, converted once.
			t.nhwc = true
			c.in(0).h = t
		}
	}
	var bias []float32
	if c.Has(2) {
		hb, err := c.H(2)
		if err != nil {
			return err
		}
		if bias, err = f32(hb); err != nil {
			return fmt.Errorf("Conv: %w", err)
		}
	}
	oh, ow := p.Out()
	y := c.newOut(canonical.Float, []int{p.N, p.M, oh, ow}, false)
	y.nhwc = true
	yd, _ := f32(y)
	var epi kernels.Epilogue
	if c.epilogue != nil {
		epi = c.epilogue(yd)
	}
	switch {
	case nhwcPointwise(p) || nhwcSubsampled(p):
		var pe packEntry
		if pe, err = c.packedNHWC(packTag{kind: 'P', m: p.M, c: p.C}, func(d []float32) (packEntry, error) {
			pk, err := kernels.PackPointwise(p.C, p.M, d)
			return packEntry{mat: pk}, err
		}); err == nil {
			switch {
			case nhwcSubsampled(p):
				err = c.e.kern.PointwiseNHWCSubsampled(p, x, pe.mat, bias, yd, c.act, epi)
			case scale != nil:
				err = c.e.kern.PointwiseNHWCScaled(p.N, p.H*p.W, p.C, p.M, x, scale, pe.mat, bias, yd, c.act, epi)
			case lda != p.C:
				err = c.e.kern.PointwiseNHWCStrided(p.N, p.H*p.W, p.C, lda, p.M, x, pe.mat, bias, yd, c.act, epi)
			default:
				err = c.e.kern.PointwiseNHWC(p.N, p.H*p.W, p.C, p.M, x, pe.mat, bias, yd, c.act, epi)
			}
		}
	case nhwcDepthwise(p):
		var pe packEntry
		if pe, err = c.packedNHWC(packTag{kind: 'D', m: p.M, c: p.C, g: p.Groups, kh: p.KH, kw: p.KW}, func(d []float32) (packEntry, error) {
			dw, err := kernels.PackDepthwise(p, d)
			return packEntry{dw: dw}, err
		}); err == nil {
			err = c.e.kern.DepthwiseNHWC(p, x, pe.dw, bias, yd, c.act, epi)
		}
	default: // dense
		var pe packEntry
		if pe, err = c.packedNHWC(packTag{kind: 'G', m: p.M, c: p.C, g: p.Groups, kh: p.KH, kw: p.KW}, func(d []float32) (packEntry, error) {
			w, err := kernels.PackConvNHWC(p, d)
			return packEntry{nhwcConv: w}, err
		}); err == nil {
			err = c.e.kern.ConvNHWC(p, x, !hx.nhwc, pe.nhwcConv, bias, yd, c.act, epi)
		}
	}
	if err != nil {
		return fmt.Errorf("Conv: %w", err)
	}
	c.OutH(0, y)
	return nil
}

// packedNHWC is the packing of the Conv's constant weights (input 1) made
// by pack, cached as lctx.packed caches it (runsNHWC takes constant
// weights only).
func (c *lctx) packedNHWC(tag packTag, pack func(d []float32) (packEntry, error)) (packEntry, error) {
	pe, err := c.packed(1, tag, func(h *htensor) (packEntry, error) {
		d, err := f32(h)
		if err != nil {
			return packEntry{}, err
		}
		return pack(d)
	})
	if err == nil && pe.mat == nil && pe.dw == nil && pe.nhwcConv == nil {
		err = fmt.Errorf("weights %q are not a constant", c.n.Inputs[1].Name)
	}
	return pe, err
}

// transposeChannels moves n images of ch channels of px pixels from
// planes (NCHW) to channels last (toNHWC) or back, split over the kernel
// threads.
func (c *lctx) transposeChannels(x, y []float32, n, ch, px int, toNHWC bool) {
	shape, perm := []int{n, ch, px}, []int{0, 2, 1}
	if !toNHWC {
		shape = []int{n, px, ch}
	}
	rows := kernels.TransposeRowCount(shape, perm)
	c.e.kern.Range(rows, len(y)/max(rows, 1), func(lo, hi int) { kernels.TransposeRows(x, shape, perm, y, lo, hi) })
}

// toNCHW returns the NHWC tensor h in NCHW, in a new tensor.
func (c *lctx) toNCHW(h *htensor) *htensor {
	h = denseNHWC(h)
	t := c.newHAs(h.dt, h.shape, false)
	x, _ := f32(h)
	y, _ := f32(t)
	s := h.shape
	c.transposeChannels(x, y, s[0], s[1], numel(s[2:]), false)
	return t
}

// nchwOf is h, or h in NCHW when it is stored channels last (a new
// tensor): for the ways out of a run that are not kernels (graph outputs,
// a GoMLX segment's inputs).
func nchwOf(h *htensor) *htensor {
	if h == nil || !h.nhwc {
		return h
	}
	h = denseNHWC(h)
	t := newH(h.dt, h.shape)
	s := h.shape
	x, _ := f32(h)
	y, _ := f32(t)
	kernels.Transpose(x, []int{s[0], numel(s[2:]), s[1]}, []int{0, 2, 1}, y)
	return t
}

// denseNHWC is h, or when h is a window of a wider tensor's channels
// (htensor.ld) its channels copied into a new dense NHWC tensor: for every
// reader but the Slice view's own (markSliceViews).
func denseNHWC(h *htensor) *htensor {
	if h == nil || h.ld == 0 {
		return h
	}
	t := newH(h.dt, h.shape)
	t.nhwc = true
	x, _ := f32(h)
	y, _ := f32(t)
	s := h.shape
	// The sizes are checked: CopyRows cannot fail here.
	_ = kernels.CopyRows(s[0]*s[2]*s[3], s[1], x, h.ld, y, s[1])
	return t
}

// markSliceViews sets hostStep.view on each Slice the plan keeps channels
// last (markNHWC) whose output one node alone reads, that node kept
// channels last too and reading it as it is stored: a 1×1 Conv, as its
// input 0 with no Mul by channel taken (fuse_scale.go), or a channel
// shuffle, as one of its parts. Such a Slice of some channels of every
// pixel then hands its reader a view of its input (sliceNHWC:
// htensor.ld; kernels.PointwiseNHWCStrided, kernels.Interleave2Rows)
// instead of a copy: a ShuffleNet unit's two halves of its input, one
// convolved by the branch, the other shuffled. The view keeps its
// input's buffer from reuse while it is held (runBufs.release tests
// overlaps), and no step writes a value in place but a fused chain's own
// ones, which no Slice reads.
func markSliceViews(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) {
	type use struct {
		r     *hostStep // the last node to read the value
		in, n int       // its input index; how many reads in all
	}
	uses := map[*canonical.Value]*use{}
	get := func(v *canonical.Value) *use {
		u := uses[v]
		if u == nil {
			u = &use{}
			uses[v] = u
		}
		return u
	}
	var hosts []*hostStep
	var walk func(st step)
	walk = func(st step) {
		switch st := st.(type) {
		case *hostStep:
			hosts = append(hosts, st)
		case *fusedStep:
			hosts = append(hosts, st.steps...)
		case *expandDwStep:
			walk(st.expand)
			walk(st.dw)
		case *concatStep:
			for _, p := range st.parts {
				walk(p)
			}
			walk(st.concat)
		default:
			// A segment, a guard: reads it does not name per node.
			reads, _ := stepIO(st)
			for _, v := range reads {
				if v != nil {
					get(v).n += 2
				}
			}
		}
	}
	for _, st := range steps {
		walk(st)
	}
	for _, h := range hosts {
		for i, v := range h.n.Inputs {
			if v != nil {
				u := get(v)
				u.r, u.in, u.n = h, i, u.n+1
			}
		}
		for _, v := range h.n.OuterValues() {
			get(v).n += 2
		}
		if h.scale != nil {
			get(h.scale.by).n += 2
		}
	}
	for _, h := range hosts {
		if !h.nhwc || h.n.OpType != "Slice" || !plainDomain(h.n) || len(h.n.Outputs) != 1 {
			continue
		}
		v := h.n.Outputs[0]
		if v == nil || !gi.defs[v] || keep[v] || gi.lastUse[v] == outputUse {
			continue
		}
		u := uses[v]
		if u == nil || u.n != 1 || !u.r.nhwc {
			continue
		}
		switch r := u.r; {
		case r.n.OpType == "Conv" && u.in == 0 && r.scale == nil && nhwcPointwiseNode(r.n):
		case r.shuffle != nil && u.in < r.shuffle.parts:
		default:
			continue
		}
		h.view = true
	}
}
