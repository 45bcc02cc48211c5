package convert

import (
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// expandAttention rewrites Attention (23, 24, 25) into MatMul/Softmax and
// friends, following the operator's definition: heads split out of 3-D
// inputs, past key/value concatenated, key/value heads repeated for
// grouped-query attention, Q and K each scaled by sqrt(scale), optional
// softcap, additive bias from the mask, the causal frontier and the
// sliding window (both bottom-right aligned to the count of keys before
// the query block: past_key's length, or nonpad_kv_seqlen - q length per
// batch), the padding of nonpad_kv_seqlen, softmax (a fully masked row
// gives zeros, not NaN), and the product with V. The shapes of Q, K, V
// (and past) must be known: the static biases are built as constants, the
// ones that depend on nonpad_kv_seqlen from comparisons with it.
func expandAttention(sc *stepCtx, to int) error {
	n := sc.n
	const shapes = "the shapes of Q, K and V are known"
	if to < 9 {
		return blocked("target opset 9 or later", "the expansion of Attention uses Where and Expand")
	}
	q, k, v := n.Input(0), n.Input(1), n.Input(2)
	mask, pastK, pastV := n.Input(3), n.Input(4), n.Input(5)
	qs, ok1 := shapeOf(q)
	ks, ok2 := shapeOf(k)
	vs, ok3 := shapeOf(v)
	// dyn: 4-D Q, K, V (and past) whose batch and sequence lengths are
	// dynamic (a decoder's), with their heads and head sizes known; the
	// causal frontier and the window are then built at run time from the
	// lengths. nonpad_kv_seqlen needs the static path.
	dyn := false
	pastKnown := pastK == nil
	if pastK != nil {
		_, pastKnown = shapeOf(pastK)
	}
	if !ok1 || !ok2 || !ok3 || pastK != nil && !pastKnown {
		qs, ok1 = rankedShapeOf(q)
		ks, ok2 = rankedShapeOf(k)
		vs, ok3 = rankedShapeOf(v)
		dyn = ok1 && ok2 && ok3 && len(qs) == 4 && len(ks) == 4 && len(vs) == 4 &&
			qs[1] > 0 && ks[1] > 0 && qs[3] > 0 && vs[3] > 0 && n.Input(6) == nil
		if pastK != nil {
			ps, ok := rankedShapeOf(pastK)
			dyn = dyn && ok && len(ps) == 4 && pastV != nil
		}
		if !dyn {
			return needShapes(shapes, "Attention needs Q, K and V of known 3-D or 4-D shapes to expand (or 4-D ones with known heads and head sizes, without nonpad_kv_seqlen)")
		}
		if to < 11 {
			return blocked("target opset 11 or later", "Attention on dynamic lengths expands with Pad's pads computed at run time")
		}
	}
	if len(qs) != len(ks) || len(qs) != len(vs) || (len(qs) != 3 && len(qs) != 4) {
		return needShapes(shapes, "Attention needs Q, K and V of known 3-D or 4-D shapes to expand")
	}
	three := len(qs) == 3
	batch, sq := qs[0], qs[len(qs)-2]
	var hq, hkv, d, dv, skv int64
	if three {
		hq, hkv = n.AttrInt("q_num_heads", 0), n.AttrInt("kv_num_heads", 0)
		if hq <= 0 || hkv <= 0 || qs[2]%hq != 0 || ks[2]%hkv != 0 || vs[2]%hkv != 0 {
			return blocked("", "3-D Attention needs q_num_heads and kv_num_heads dividing the hidden sizes")
		}
		d, dv, skv = qs[2]/hq, vs[2]/hkv, ks[1]
	} else {
		hq, hkv, d, dv, skv = qs[1], ks[1], qs[3], vs[3], ks[2]
	}
	if hkv <= 0 || hq%hkv != 0 {
		return blocked("", "q heads (%d) must be a multiple of kv heads (%d)", hq, hkv)
	}
	past := int64(0)
	if pastK != nil && !dyn {
		ps, ok := shapeOf(pastK)
		if !ok || len(ps) != 4 {
			return needShapes(shapes, "Attention needs the shape of past_key to expand")
		}
		past = ps[2]
	}
	total := past + skv
	b := newBuilder(sc, to)
	heads := func(x *canonical.Value, h, seq int64) *canonical.Value {
		if !three {
			return x
		}
		r := b.op("Reshape", []*canonical.Value{x, b.constI([]int64{4}, batch, seq, h, -1)})
		return b.op("Transpose", []*canonical.Value{r}, canonical.IntsAttr("perm", 0, 2, 1, 3))
	}
	qr, kr, vr := heads(q, hq, sq), heads(k, hkv, skv), heads(v, hkv, skv)
	if pastK != nil {
		kr = b.op("Concat", []*canonical.Value{pastK, kr}, canonical.IntAttr("axis", 2))
	}
	if pastV != nil {
		vr = b.op("Concat", []*canonical.Value{pastV, vr}, canonical.IntAttr("axis", 2))
	}
	presentK, presentV := kr, vr
	if g := hq / hkv; g > 1 {
		repeat := func(x *canonical.Value, hd int64) *canonical.Value {
			u := b.unsqueeze(x, 2)
			if dyn {
				e := b.op("Expand", []*canonical.Value{u, b.constI([]int64{5}, 1, 1, g, 1, 1)})
				return b.op("Reshape", []*canonical.Value{e, b.constI([]int64{4}, 0, hq, -1, hd)})
			}
			e := b.op("Expand", []*canonical.Value{u, b.constI([]int64{5}, batch, hkv, g, total, hd)})
			return b.op("Reshape", []*canonical.Value{e, b.constI([]int64{4}, batch, hq, total, hd)})
		}
		kr, vr = repeat(kr, d), repeat(vr, dv)
	}
	scale := float64(n.AttrFloat("scale", float32(1/math.Sqrt(float64(d)))))
	s := b.scalar(math.Sqrt(scale))
	kt := b.op("Transpose", []*canonical.Value{kr}, canonical.IntsAttr("perm", 0, 1, 3, 2))
	qk := b.op("MatMul", []*canonical.Value{b.op("Mul", []*canonical.Value{qr, s}), b.op("Mul", []*canonical.Value{kt, s})})
	mode := n.AttrInt("qk_matmul_output_mode", 0)
	var qkOut *canonical.Value
	if mode == 0 {
		qkOut = qk
	}
	if c := float64(n.AttrFloat("softcap", 0)); c > 0 {
		qk = b.op("Mul", []*canonical.Value{b.op("Tanh", []*canonical.Value{b.op("Div", []*canonical.Value{qk, b.scalar(c)})}), b.scalar(c)})
	}
	if mode == 1 {
		qkOut = qk
	}
	var bias *canonical.Value
	if mask != nil {
		ms, ok := shapeOf(mask)
		if dyn {
			ms, ok = rankedShapeOf(mask)
		}
		if !ok || len(ms) == 0 {
			return needShapes(shapes, "Attention needs the shape of attn_mask to expand")
		}
		m := mask
		if elemType(mask) == canonical.Bool {
			m = b.op("Where", []*canonical.Value{mask, b.scalar(0), b.scalar(math.Inf(-1))})
		}
		if dyn {
			m = padMaskTo(b, m, len(ms), presentK)
		} else if last := ms[len(ms)-1]; last < total {
			padDims := append(append([]int64(nil), ms[:len(ms)-1]...), total-last)
			cnt := int64(1)
			for _, x := range padDims {
				cnt *= x
			}
			fill := make([]float64, cnt)
			for i := range fill {
				fill[i] = math.Inf(-1)
			}
			m = b.op("Concat", []*canonical.Value{m, b.constF(padDims, fill...)}, canonical.IntAttr("axis", -1))
		}
		bias = m
	}
	causal := n.AttrInt("is_causal", 0) != 0
	left, right := n.AttrInt("left_window_size", -1), n.AttrInt("right_window_size", -1)
	if left < -1 || right < -1 {
		return blocked("", "left_window_size %d / right_window_size %d must each be -1 or nonnegative", left, right)
	}
	windowed := left >= 0 || right >= 0
	addBias := func(c *canonical.Value) {
		if bias == nil {
			bias = c
		} else {
			bias = b.op("Add", []*canonical.Value{bias, c})
		}
	}
	if nonpad := n.Input(6); nonpad != nil {
		if pastK != nil {
			return blocked("", "Attention: nonpad_kv_seqlen cannot be used with past_key/past_value")
		}
		addBias(nonpadBias(b, nonpad, batch, sq, total, causal, left, right))
	} else if (causal || windowed) && dyn {
		addBias(frontierBias(b, pastK, qr, presentK, causal, left, right))
	} else if causal || windowed {
		// Query i sits at p = past + i and attends key j iff j <= p
		// (causal) and p - left <= j <= p + right (window).
		tri := make([]float64, sq*total)
		for i := int64(0); i < sq; i++ {
			p := past + i
			for j := int64(0); j < total; j++ {
				if causal && j > p || left >= 0 && j < p-left || right >= 0 && j > p+right {
					tri[i*total+j] = math.Inf(-1)
				}
			}
		}
		addBias(b.constF([]int64{sq, total}, tri...))
	}
	if bias != nil {
		qk = b.op("Add", []*canonical.Value{qk, bias})
	}
	if mode == 2 {
		qkOut = qk
	}
	axis := int64(-1)
	if to < 11 {
		axis = 3
	}
	x := qk
	dt := b.dt
	if p := n.Attr("softmax_precision"); p != nil && dt != canonical.Undefined && canonical.DataType(p.I) != dt {
		x = b.op("Cast", []*canonical.Value{x}, canonical.IntAttr("to", p.I))
	}
	probs := b.op("Softmax", []*canonical.Value{x}, canonical.IntAttr("axis", axis))
	if x != qk {
		probs = b.op("Cast", []*canonical.Value{probs}, canonical.IntAttr("to", int64(dt)))
	}
	if mask != nil || windowed || n.Input(6) != nil {
		// A row with no key left (masked out, outside the window, or all
		// padding) is all -inf: Softmax gives NaN there, the operator a
		// zero row.
		probs = b.op("Where", []*canonical.Value{b.op("IsNaN", []*canonical.Value{probs}), b.scalar(0), probs})
	}
	if mode == 3 {
		qkOut = probs
	}
	y := b.op("MatMul", []*canonical.Value{probs, vr})
	if three {
		t := b.op("Transpose", []*canonical.Value{y}, canonical.IntsAttr("perm", 0, 2, 1, 3))
		y = b.op("Reshape", []*canonical.Value{t, b.constI([]int64{3}, batch, sq, hq*dv)})
	}
	outs := []*canonical.Value{y, nil, nil, nil}
	if n.Output(1) != nil {
		outs[1] = b.op("Identity", []*canonical.Value{presentK})
	}
	if n.Output(2) != nil {
		outs[2] = b.op("Identity", []*canonical.Value{presentV})
	}
	if n.Output(3) != nil {
		outs[3] = b.op("Identity", []*canonical.Value{qkOut})
	}
	return b.finish(outs...)
}

// padMaskTo pads the additive mask m (of the given rank) with -inf along
// its last axis up to the keys' length (axis 2 of the 4-D k), computed at
// run time: Attention reads a shorter mask as padded.
func padMaskTo(b *builder, m *canonical.Value, rank int, k *canonical.Value) *canonical.Value {
	keys := b.op("Gather", []*canonical.Value{b.op("Shape", []*canonical.Value{k}), b.constI([]int64{1}, 2)}, canonical.IntAttr("axis", 0))
	ms := b.op("Shape", []*canonical.Value{m})
	last := b.op("Gather", []*canonical.Value{ms, b.constI([]int64{1}, int64(rank-1))}, canonical.IntAttr("axis", 0))
	pads := b.op("Concat", []*canonical.Value{b.constI([]int64{int64(2*rank - 1)}, make([]int64, 2*rank-1)...),
		b.op("Sub", []*canonical.Value{keys, last})}, canonical.IntAttr("axis", 0))
	return b.op("Pad", []*canonical.Value{m, pads, b.scalar(math.Inf(-1))})
}

// frontierBias is the additive [S, T] bias of the causal frontier and the
// window on dynamic lengths, computed at run time: query i sits at
// p = P + i (P past_key's length, 0 without; S the queries' length, T the
// keys' with the past: axis 2 of the 4-D q and keys) and attends key j iff
// d = j - p is <= 0 (causal), >= -left and <= right (window).
func frontierBias(b *builder, pastK, q, keys *canonical.Value, causal bool, left, right int64) *canonical.Value {
	length := func(x *canonical.Value) *canonical.Value {
		return b.op("Reshape", []*canonical.Value{b.op("Gather", []*canonical.Value{b.op("Shape", []*canonical.Value{x}), b.constI([]int64{1}, 2)}, canonical.IntAttr("axis", 0)), b.constI([]int64{0})})
	}
	p := b.constI(nil, 0)
	if pastK != nil {
		p = length(pastK)
	}
	one := b.constI(nil, 1)
	rows := b.unsqueeze(b.op("Range", []*canonical.Value{p, b.op("Add", []*canonical.Value{p, length(q)}), one}), 1)
	d := b.op("Sub", []*canonical.Value{b.op("Range", []*canonical.Value{b.constI(nil, 0), length(keys), one}), rows})
	var out *canonical.Value
	or := func(c *canonical.Value) {
		if out == nil {
			out = c
		} else {
			out = b.op("Or", []*canonical.Value{out, c})
		}
	}
	if causal {
		or(b.op("Greater", []*canonical.Value{d, b.constI(nil, 0)}))
	}
	if left >= 0 {
		or(b.op("Less", []*canonical.Value{d, b.constI(nil, -left)}))
	}
	if right >= 0 {
		or(b.op("Greater", []*canonical.Value{d, b.constI(nil, right)}))
	}
	return b.op("Where", []*canonical.Value{out, b.scalar(math.Inf(-1)), b.scalar(0)})
}

// nonpadBias is the additive (B, 1, sq, total) bias of nonpad_kv_seqlen
// (B,): key j of batch b is padding when j >= nonpad[b], and the causal
// frontier and the window are aligned to offset = nonpad[b] - sq, so with
// d(i, j) = j - i + sq: causal allows d <= nonpad, the left window
// d + left >= nonpad, the right window d - right <= nonpad.
func nonpadBias(b *builder, nonpad *canonical.Value, batch, sq, total int64, causal bool, left, right int64) *canonical.Value {
	np := b.op("Reshape", []*canonical.Value{nonpad, b.constI([]int64{4}, batch, 1, 1, 1)})
	js := make([]int64, total)
	for j := range js {
		js[j] = int64(j)
	}
	allowed := b.op("Less", []*canonical.Value{b.constI([]int64{1, 1, 1, total}, js...), np})
	diag := func(shift int64) *canonical.Value {
		d := make([]int64, sq*total)
		for i := int64(0); i < sq; i++ {
			for j := int64(0); j < total; j++ {
				d[i*total+j] = j - i + sq + shift
			}
		}
		return b.constI([]int64{1, 1, sq, total}, d...)
	}
	and := func(c *canonical.Value) {
		allowed = b.op("And", []*canonical.Value{allowed, c})
	}
	if causal {
		and(b.op("Not", []*canonical.Value{b.op("Greater", []*canonical.Value{diag(0), np})}))
	}
	if left >= 0 {
		and(b.op("Not", []*canonical.Value{b.op("Less", []*canonical.Value{diag(left), np})}))
	}
	if right >= 0 {
		and(b.op("Not", []*canonical.Value{b.op("Greater", []*canonical.Value{diag(-right), np})}))
	}
	return b.op("Where", []*canonical.Value{allowed, b.scalar(0), b.scalar(math.Inf(-1))})
}

// expandTensorScatter writes TensorScatter-24 as ScatterElements along the
// sequence axis: the index of update element (b, ..., s, ...) is
// write_indices[b] + s (mod max_sequence_length when mode is circular),
// broadcast over the update's other dimensions. The shapes of past_cache
// and update must be known.
func expandTensorScatter(sc *stepCtx, to int) error {
	n := sc.n
	if to < 11 {
		return blocked("target opset 11 or later", "the expansion of TensorScatter uses ScatterElements")
	}
	past, upd, wi := n.Input(0), n.Input(1), n.Input(2)
	ps, ok1 := shapeOf(past)
	us, ok2 := shapeOf(upd)
	if !ok1 || !ok2 || len(ps) != len(us) || len(ps) < 2 {
		return needShapes("the shapes of past_cache and update are known", "TensorScatter needs past_cache and update of known shapes to expand")
	}
	r := int64(len(ps))
	axis := n.AttrInt("axis", -2)
	if axis < 0 {
		axis += r
	}
	if axis <= 0 || axis >= r {
		return blocked("", "TensorScatter axis %d is outside 1..%d (axis 0 is the batch)", n.AttrInt("axis", -2), r-1)
	}
	mode := n.AttrString("mode", "linear")
	if mode != "linear" && mode != "circular" {
		return blocked("", "TensorScatter mode %q is neither linear nor circular", mode)
	}
	b := newBuilder(sc, to)
	seq := us[axis]
	steps := make([]int64, seq)
	for i := range steps {
		steps[i] = int64(i)
	}
	stepDims := make([]int64, r)
	for i := range stepDims {
		stepDims[i] = 1
	}
	stepDims[axis] = seq
	idx := b.constI(stepDims, steps...)
	if wi != nil {
		bDims := make([]int64, r)
		for i := range bDims {
			bDims[i] = 1
		}
		bDims[0] = us[0]
		idx = b.op("Add", []*canonical.Value{b.op("Reshape", []*canonical.Value{wi, b.constI([]int64{r}, bDims...)}), idx})
	}
	if mode == "circular" {
		idx = b.op("Mod", []*canonical.Value{idx, b.constI(nil, ps[axis])})
	}
	idx = b.op("Expand", []*canonical.Value{idx, b.constI([]int64{r}, us...)})
	return b.finish(b.op("ScatterElements", []*canonical.Value{past, idx, upd}, canonical.IntAttr("axis", axis)))
}
