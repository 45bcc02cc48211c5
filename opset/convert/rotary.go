package convert

import (
	"github.com/onnxconv/onnxconv/canonical"
)

// slice emits Slice over one axis in the input form (opset >= 10).
func (b *builder) slice(x *canonical.Value, axis, start, end, step int64) *canonical.Value {
	return b.op("Slice", []*canonical.Value{x, b.constI([]int64{1}, start), b.constI([]int64{1}, end),
		b.constI([]int64{1}, axis), b.constI([]int64{1}, step)})
}

// expandRotary rewrites RotaryEmbedding (23) following the operator's
// reference algorithm: the rotated part of each head is split in halves
// (or interleaved pairs), rotated by the cos/sin caches gathered at the
// position ids, and put back. The heads and head size must be known; the
// batch and sequence may be dynamic (the Reshapes copy them with 0).
func expandRotary(sc *stepCtx, to int) error {
	n := sc.n
	if to < 10 {
		return blocked("target opset 10 or later", "the expansion of RotaryEmbedding uses Slice with steps")
	}
	x, cosC, sinC, pos := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	// Batch and sequence may be dynamic (0 in a Reshape copies them);
	// the heads and the head size must be known.
	xs, ok := rankedShapeOf(x)
	if !ok || (len(xs) != 3 && len(xs) != 4) || xs[len(xs)-1] < 0 || (len(xs) == 4 && xs[1] < 0) {
		return needShapes("the input's shape is known", "RotaryEmbedding needs a 3-D or 4-D input whose heads and head size are known to expand")
	}
	b := newBuilder(sc, to)
	var batch, seq, heads, d int64
	h := x
	if len(xs) == 4 {
		batch, heads, seq, d = 0, xs[1], 0, xs[3]
		h = b.op("Transpose", []*canonical.Value{x}, canonical.IntsAttr("perm", 0, 2, 1, 3))
	} else {
		heads = n.AttrInt("num_heads", 0)
		if heads <= 0 || xs[2]%heads != 0 {
			return blocked("", "3-D RotaryEmbedding needs num_heads dividing the hidden size %d", xs[2])
		}
		batch, seq, d = 0, 0, xs[2]/heads
		h = b.op("Reshape", []*canonical.Value{x, b.constI([]int64{4}, batch, seq, heads, d)})
	}
	rd := n.AttrInt("rotary_embedding_dim", 0)
	if rd == 0 {
		rd = d
	}
	if rd%2 != 0 || rd > d {
		return blocked("", "rotary_embedding_dim %d must be even and at most the head size %d", rd, d)
	}
	rot := h
	if rd < d {
		rot = b.slice(h, 3, 0, rd, 1)
	}
	if pos != nil {
		cosC = b.op("Gather", []*canonical.Value{cosC, pos}, canonical.IntAttr("axis", 0))
		sinC = b.op("Gather", []*canonical.Value{sinC, pos}, canonical.IntAttr("axis", 0))
	}
	cs, sn := b.unsqueeze(cosC, 2), b.unsqueeze(sinC, 2)
	interleaved := n.AttrInt("interleaved", 0) != 0
	var x1, x2 *canonical.Value
	if interleaved {
		x1, x2 = b.slice(rot, 3, 0, rd, 2), b.slice(rot, 3, 1, rd, 2)
	} else {
		x1, x2 = b.slice(rot, 3, 0, rd/2, 1), b.slice(rot, 3, rd/2, rd, 1)
	}
	mul := func(a, c *canonical.Value) *canonical.Value { return b.op("Mul", []*canonical.Value{a, c}) }
	real := b.op("Sub", []*canonical.Value{mul(cs, x1), mul(sn, x2)})
	imag := b.op("Add", []*canonical.Value{mul(sn, x1), mul(cs, x2)})
	var rotated *canonical.Value
	if interleaved {
		pair := b.op("Concat", []*canonical.Value{b.unsqueeze(real, 4), b.unsqueeze(imag, 4)}, canonical.IntAttr("axis", 4))
		rotated = b.op("Reshape", []*canonical.Value{pair, b.constI([]int64{4}, batch, seq, heads, rd)})
	} else {
		rotated = b.op("Concat", []*canonical.Value{real, imag}, canonical.IntAttr("axis", 3))
	}
	out := rotated
	if rd < d {
		out = b.op("Concat", []*canonical.Value{rotated, b.slice(h, 3, rd, d, 1)}, canonical.IntAttr("axis", 3))
	}
	if len(xs) == 4 {
		out = b.op("Transpose", []*canonical.Value{out}, canonical.IntsAttr("perm", 0, 2, 1, 3))
	} else {
		out = b.op("Reshape", []*canonical.Value{out, b.constI([]int64{3}, 0, 0, xs[2])})
	}
	return b.finish(out)
}
