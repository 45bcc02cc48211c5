package executor

import (
	"context"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Epilogues: the elementwise tail of a fused chain headed by a Conv runs
// inside the convolution's own parallel call, on each part of the output
// as soon as that part is final (kernels.Epilogue), instead of as one
// more pass over the output with a parallel call of its own per tail op.
// On a mobile net most steps are tens of µs long, and each parallel call
// costs a fork-join and the imbalance of its chunks; the tail also finds
// the values in the cache of the thread that computed them.
//
// A tail op runs as an epilogue when its kernel is element by element on
// float32 values it overwrites in place: Relu, Clip, HardSigmoid,
// HardSwish, SiLU (a fused Swish step, fuse_silu.go), inference
// BatchNormalization (a zoo-style Conv → BN → Relu), and Add or Mul with
// an operand of the output's own shape (a residual). Each segment runs the
// same kernel function as the tail's own kernel, on the same values in
// the same order, so the results are the same bits (TestFusedEpilogues,
// TestBatchNormEpilogue). A Concat head (DenseNet's Concat → BN → Relu)
// runs its tail on each piece it copies, while the piece is in L1.

// segFn applies one tail op to y[off:off+n] in place.
type segFn func(y []float32, off, n int)

// epilogueSegs returns the segment functions of st's tail ops (steps 1…)
// over the head's output of shape out (stored channels last when nhwc),
// or nil when one of them cannot run as an epilogue of this run's values.
func (st *fusedStep) epilogueSegs(en *env, out []int, nhwc bool) []segFn {
	segs := make([]segFn, 0, len(st.steps)-1)
	for k, h := range st.steps[1:] {
		f := tailSeg(en, h, st.in[k+1], out, nhwc)
		if f == nil {
			return nil
		}
		segs = append(segs, f)
	}
	return segs
}

// clipBounds returns the float32 bounds of Clip step h whose input at is
// the chain's value (attributes before opset 11, constant inputs after,
// the defaults where absent); false when at is not 0 or an input bound
// is not a host constant of one value.
func clipBounds(en *env, h *hostStep, at int) (lo, hi float32, ok bool) {
	n := h.n
	if at != 0 {
		return 0, 0, false
	}
	dlo, dhi := clipDefaults(canonical.Float)
	lo, hi = float32(dlo), float32(dhi)
	if h.ver < 11 {
		return n.AttrFloat("min", lo), n.AttrFloat("max", hi), true
	}
	for i, dst := range []*float32{&lo, &hi} {
		if i+1 >= len(n.Inputs) || n.Inputs[i+1] == nil {
			continue
		}
		v, ok := hostF32(en, n.Inputs[i+1])
		if !ok || len(v) != 1 {
			return 0, 0, false
		}
		*dst = v[0]
	}
	return lo, hi, true
}

// tailSeg returns the segment function of tail step h whose input at is
// the chain's value (of shape out, stored channels last when nhwc), or
// nil.
func tailSeg(en *env, h *hostStep, at int, out []int, nhwc bool) segFn {
	n := h.n
	if len(n.Outputs) != 1 {
		return nil
	}
	switch n.OpType {
	case "Relu":
		return func(y []float32, off, k int) { s := y[off : off+k]; kernels.Relu(s, s) }
	case "HardSwish":
		return func(y []float32, off, k int) { s := y[off : off+k]; kernels.HardSwish(s, s) }
	case "Swish":
		if !isSiLUStep(h) {
			return nil
		}
		return func(y []float32, off, k int) { s := y[off : off+k]; kernels.SiLU(s, s) }
	case "HardSigmoid":
		al, be := n.AttrFloat("alpha", 0.2), n.AttrFloat("beta", 0.5)
		return func(y []float32, off, k int) { s := y[off : off+k]; kernels.HardSigmoid(s, s, al, be) }
	case "Clip":
		lo, hi, ok := clipBounds(en, h, at)
		if !ok {
			return nil
		}
		return func(y []float32, off, k int) { s := y[off : off+k]; kernels.Clip(s, s, lo, hi) }
	case "BatchNormalization":
		// Inference form on the chain's value (input 0), float32
		// statistics of one value per channel, as okBatchNorm takes it;
		// channels in planes (NCHW) only.
		if nhwc || at != 0 || len(n.Inputs) != 5 || len(out) < 2 || n.AttrInt("training_mode", 0) != 0 {
			return nil
		}
		ch := out[1]
		var p [4][]float32
		for i := range p {
			d, ok := hostF32(en, n.Inputs[i+1])
			if !ok || len(d) != ch {
				return nil
			}
			p[i] = d
		}
		sb := make([]float32, 2*ch)
		kernels.BatchNormScaleShift(p[0], p[1], p[2], p[3], float64(n.AttrFloat("epsilon", 1e-5)), sb[:ch], sb[ch:])
		inner := numel(out[2:])
		return func(y []float32, off, k int) { scaleShiftRange(y[off:off+k], sb[:ch], sb[ch:], inner, off) }
	case "Add", "Mul":
		if len(n.Inputs) != 2 || at < 0 || at > 1 {
			return nil
		}
		so := en.get(n.Inputs[1-at])
		if so == nil || so.h == nil || !shapeEq(so.h.shape, out) || so.h.nhwc != nhwc {
			// Element by element only when both are stored alike.
			return nil
		}
		od, ok := hostF32(en, n.Inputs[1-at])
		if !ok {
			return nil
		}
		op := kernels.AddSuffix
		if n.OpType == "Mul" {
			op = kernels.MulSuffix
		}
		// kernelBinary computes big ∘ small with big the operand of the
		// output's shape (bcastKind); with both of that shape, keep its
		// choice so that the operands are in the same order.
		chainBig := bigIsChain(at, out)
		return func(y []float32, off, k int) {
			s, o := y[off:off+k], od[off:off+k]
			if chainBig {
				op(s, o, s)
			} else {
				op(o, s, s)
			}
		}
	}
	return nil
}

// scaleShiftRange applies kernelBatchNorm's per-channel scale and shift
// (kernels.ScaleShiftBlocks, the same arithmetic) in place to y, the
// elements [off, off+len(y)) of a tensor whose channels are blocks of
// inner elements; y may start and end inside a block.
func scaleShiftRange(y, s, b []float32, inner, off int) {
	if inner <= 0 {
		return
	}
	for i := 0; i < len(y); {
		blk, pos := (off+i)/inner, (off+i)%inner
		if pos == 0 && len(y)-i >= inner {
			// Whole blocks at once.
			n := (len(y) - i) / inner * inner
			kernels.ScaleShiftBlocks(y[i:i+n], s, b, y[i:i+n], inner, blk)
			i += n
			continue
		}
		n := min(inner-pos, len(y)-i)
		kernels.ScaleShiftBlocks(y[i:i+n], s, b, y[i:i+n], n, blk)
		i += n
	}
}

// bigIsChain reports which operand kernelBinary takes as the big one
// when both have the output's shape: input 0 unless bcastKind says 1.
func bigIsChain(at int, shape []int) bool {
	bi, _, _, _ := bcastKind(shape, shape)
	return bi == at
}

// hostF32 returns v's float32 host data.
func hostF32(en *env, v *canonical.Value) ([]float32, bool) {
	s := en.get(v)
	if s == nil || s.h == nil || s.h.released || s.dt != canonical.Float {
		return nil, false
	}
	d, ok := s.h.data.([]float32)
	return d, ok
}

// execEpilogue runs st with its tail as the head's epilogue when it can
// (handled false: run it as a chain): the head kernel gets the epilogue
// (lctx.epilogue), and each tail step only passes the head's output on as
// its own (what its kernel would have written in place).
func (st *fusedStep) execEpilogue(ctx context.Context, e *Executor, en *env, ar *outArena) (handled, ok bool, err error) {
	head := st.steps[0]
	op := head.n.OpType
	if op != "Conv" && op != "Concat" || len(st.steps) < 2 || e.kern == nil {
		return false, false, nil
	}
	c, err := newHostCtx(ctx, e, en, head.n, head.impl, head.ver)
	if err != nil {
		return false, false, err
	}
	var out []int
	nhwc := false
	if op == "Conv" {
		c.conv, c.deferConv, c.nhwc, c.shareIn, c.scale = &head.conv, en.deferConv, head.nhwc, head.shareIn, head.scale
		var p kernels.Conv2D
		out, p, ok = convOutShape(c)
		nhwc = ok && c.runsNHWC(p)
	} else {
		out, ok = concatOutShape(c)
	}
	if !ok {
		return false, false, nil
	}
	segs := st.epilogueSegs(en, out, nhwc)
	st.epilogue.Store(segs != nil)
	if segs == nil {
		return false, false, nil
	}
	c.arena = ar
	if op == "Conv" {
		// A Relu, or a Clip(+0, 6) (ReLU6), right after the Conv is the
		// kernel's own activation (kernels.ActRelu, ActRelu6: in the
		// micro-kernel of a direct convolution, in the row kernel of a
		// depthwise one); any other Clip of constant bounds is clipped in
		// the depthwise row kernel, else as a pass before the rest
		// (kernels.Conv2DPackedClip).
		switch h := st.steps[1]; h.n.OpType {
		case "Relu":
			c.act, segs = kernels.ActRelu, segs[1:]
		case "Clip":
			if lo, hi, ok := clipBounds(en, h, st.in[1]); ok {
				// +0 exactly for ActRelu6: Clip(x, −0, 6) turns negative
				// x into −0.
				switch {
				case math.Float32bits(lo) == 0 && hi == 6:
					c.act, segs = kernels.ActRelu6, segs[1:]
				case !nhwc:
					c.clip, segs = []float32{lo, hi}, segs[1:]
				}
				// In NHWC any other Clip stays an epilogue segment.
			}
		}
	}
	if len(segs) > 0 {
		c.epilogue = func(y []float32) kernels.Epilogue {
			return func(off, n int) {
				// Piece by piece, so that each tail op after the first
				// finds the values in L1 (a convolution that runs its
				// epilogue as a pass after the SGEMM hands over whole
				// planes).
				for a := off; a < off+n; a += epiPiece {
					k := min(epiPiece, off+n-a)
					for _, f := range segs {
						f(y, a, k)
					}
				}
			}
		}
	}
	if err := callKernel(c, head.impl.host); err != nil {
		return true, false, err
	}
	if err := c.storeOutputs(false, false); err != nil {
		return true, false, err
	}
	for k, h := range st.steps[1:] {
		tc, err := newHostCtx(ctx, e, en, h.n, h.impl, h.ver)
		if err != nil {
			return true, false, err
		}
		// The head's output as stored (channels last too: nhwc.go), not
		// converted as H gives it to a kernel.
		hx := tc.in(st.in[k+1]).h
		if hx == nil || !hx.nhwc {
			if hx, err = tc.H(st.in[k+1]); err != nil {
				return true, false, err
			}
		}
		tc.OutH(0, hx)
		if err := tc.storeOutputs(false, false); err != nil {
			return true, false, err
		}
	}
	return true, true, nil
}

// convOutShape is the output shape and the geometry of the float32 Conv
// of c, as kernelConv computes them; false when kernelConv would not run
// it.
func convOutShape(c *lctx) ([]int, kernels.Conv2D, bool) {
	if c.NIn() < 2 || !c.Has(0) || !c.Has(1) || c.DT(0) != canonical.Float {
		return nil, kernels.Conv2D{}, false
	}
	// The input as stored (H would convert an NHWC one): only its shape
	// is read.
	hx := c.in(0).h
	if c.in(0).kind != kindTensor || hx == nil || hx.dt != canonical.Float {
		return nil, kernels.Conv2D{}, false
	}
	p, ok, err := convParams(c, hx.shape, c.Shape(1))
	if err != nil || !ok {
		return nil, kernels.Conv2D{}, false
	}
	oh, ow := p.Out()
	if len(hx.shape) == 4 {
		return []int{p.N, p.M, oh, ow}, p, true
	}
	return []int{p.N, p.M, ow}, p, true
}

// concatOutShape is the output shape of the float32 Concat of c, as
// kernelConcat computes it; false when kernelConcat would not run it.
func concatOutShape(c *lctx) ([]int, bool) {
	if !okF32Host(c) {
		return nil, false
	}
	_, out, _, err := concatInputs(c, c.NIn(), c.AInt("axis", 0))
	return out, err == nil
}
