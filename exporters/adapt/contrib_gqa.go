package adapt

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// standardGQAAny writes com.microsoft GroupQueryAttention in the forms real
// exports carry as opset-23 ops: query, key and value separate or packed
// in the query; past_key/past_value ([B, KVN, P, H]) or none; seqlens_k per
// batch (int32 [B], each batch's total length - 1) and
// total_sequence_length (int32 scalar); do_rotary with cos_cache/sin_cache
// (rotary_interleaved 0 or 1) at each token's position or at position_ids;
// local_window_size; softcap; attention_bias. With it:
//
//   - batch b's cached length is past[b] = seqlens_k[b] + 1 - S, or 0 on
//     a first prompt (S == total_sequence_length);
//   - query and new keys are rotated (RotaryEmbedding) at positions
//     past[b] … past[b]+S-1, or position_ids;
//   - the present, [B, KVN, max(total, P), H], is the past padded with
//     zeros, its positions from past[b] on zero, the new keys scattered
//     at past[b] … (ScatterElements);
//   - Attention runs over it with the mask of GroupQueryAttention written
//     out: key j is seen by new token s when j <= past[b]+s and, with a
//     window w, j > past[b]+s-w (0 or -inf, added to attention_bias,
//     after softcap as in GroupQueryAttention).
//
// smooth_softmax, head_sink and output_qk have no standard form.
func standardGQAAny(e *build.Editor, n *canonical.Node) ([]*canonical.Value, error) {
	heads, kvHeads := n.AttrInt("num_heads", 0), n.AttrInt("kv_num_heads", 0)
	if heads <= 0 || kvHeads <= 0 || heads%kvHeads != 0 {
		return nil, fmt.Errorf("num_heads %d, kv_num_heads %d", heads, kvHeads)
	}
	q, k, v, pk, pv := n.Input(0), n.Input(1), n.Input(2), n.Input(3), n.Input(4)
	dt, qd, okq, _ := canonical.TensorTypeOf(q.Type)
	if !okq || len(qd) != 3 {
		return nil, fmt.Errorf("the query's rank is not known to be 3")
	}
	if (k == nil) != (v == nil) || (pk == nil) != (pv == nil) || n.Input(5) == nil || n.Input(6) == nil {
		return nil, fmt.Errorf("key and value, past_key and past_value must come together, seqlens_k and total_sequence_length be given")
	}
	to4 := func(x *canonical.Value, h int64) *canonical.Value {
		return e.Op("Transpose", []*canonical.Value{e.Op("Reshape", []*canonical.Value{x, e.Int64s([]int64{4}, 0, 0, h, -1)})}, canonical.IntsAttr("perm", 0, 2, 1, 3))
	}
	size := int64(0) // the head size, when the query's width is known
	if k == nil {
		if !qd[2].Known || qd[2].Value%(heads+2*kvHeads) != 0 {
			return nil, fmt.Errorf("packed query, key and value of unknown width")
		}
		size = qd[2].Value / (heads + 2*kvHeads)
		parts := e.OpN("Split", 3, []*canonical.Value{q, e.Int64s([]int64{3}, heads*size, kvHeads*size, kvHeads*size)}, canonical.IntAttr("axis", 2))
		if parts == nil {
			return nil, e.Err()
		}
		q, k, v = parts[0], parts[1], parts[2]
	} else if qd[2].Known && qd[2].Value%heads == 0 {
		size = qd[2].Value / heads
	}
	zero, one := e.Int64s(nil, 0), e.Int64s(nil, 1)
	scalar := func(x *canonical.Value) *canonical.Value {
		return e.Op("Reshape", []*canonical.Value{x, e.Int64s([]int64{0})})
	}
	seq := e.Op("Shape", []*canonical.Value{q}, canonical.IntAttr("start", 1), canonical.IntAttr("end", 2))
	total := e.Op("Cast", []*canonical.Value{e.Op("Reshape", []*canonical.Value{n.Input(6), e.Int64s([]int64{1}, 1)})}, canonical.IntAttr("to", int64(canonical.Int64)))
	seqlens := e.Op("Cast", []*canonical.Value{n.Input(5)}, canonical.IntAttr("to", int64(canonical.Int64)))
	// past[b]: 0 on a first prompt, else seqlens_k[b] + 1 - S.
	past := e.Op("Where", []*canonical.Value{e.Op("Equal", []*canonical.Value{seq, total}), zero,
		e.Op("Sub", []*canonical.Value{e.Op("Add", []*canonical.Value{seqlens, one}), seq})})
	pastCol := e.Op("Unsqueeze", []*canonical.Value{past, e.Int64s([]int64{1}, 1)}) // [B, 1]
	steps := e.Op("Range", []*canonical.Value{zero, scalar(seq), one})              // [S]
	positions := e.Op("Add", []*canonical.Value{pastCol, steps})                    // [B, S]
	q4, k4, v4 := to4(q, heads), to4(k, kvHeads), to4(v, kvHeads)
	if n.AttrInt("do_rotary", 0) != 0 {
		cos, sin := n.Input(7), n.Input(8)
		if cos == nil || sin == nil {
			return nil, fmt.Errorf("do_rotary without cos_cache and sin_cache")
		}
		_, cd, okc, _ := canonical.TensorTypeOf(cos.Type)
		if !okc || len(cd) != 2 || !cd[1].Known || size == 0 {
			return nil, fmt.Errorf("the rotary caches' width or the head size is not known")
		}
		pos := positions
		if p := n.Input(9); p != nil {
			pos = e.Op("Cast", []*canonical.Value{p}, canonical.IntAttr("to", int64(canonical.Int64)))
		}
		attrs := []*canonical.Attribute{canonical.IntAttr("interleaved", n.AttrInt("rotary_interleaved", 0))}
		if rd := 2 * cd[1].Value; rd != size {
			attrs = append(attrs, canonical.IntAttr("rotary_embedding_dim", rd))
		}
		q4 = e.Op("RotaryEmbedding", []*canonical.Value{q4, cos, sin, pos}, attrs...)
		k4 = e.Op("RotaryEmbedding", []*canonical.Value{k4, cos, sin, pos}, attrs...)
	} else if n.Input(9) != nil {
		return nil, fmt.Errorf("input 9 (position_ids) without do_rotary")
	}
	// The present: the past padded to T = max(total, P), zero from
	// past[b] on, the new keys at past[b] + s.
	t := total
	presentK, presentV := k4, v4
	if pk != nil {
		p := e.Op("Shape", []*canonical.Value{pk}, canonical.IntAttr("start", 2), canonical.IntAttr("end", 3))
		t = e.Op("Max", []*canonical.Value{total, p})
		pads := e.Op("Concat", []*canonical.Value{e.Int64s([]int64{6}, 0, 0, 0, 0, 0, 0), e.Op("Sub", []*canonical.Value{t, p}), e.Int64s([]int64{1}, 0)}, canonical.IntAttr("axis", 0))
		b4 := func(x *canonical.Value) *canonical.Value {
			return e.Op("Reshape", []*canonical.Value{x, e.Int64s([]int64{4}, -1, 1, 1, 1)})
		}
		kept := e.Op("Less", []*canonical.Value{e.Op("Reshape", []*canonical.Value{e.Op("Range", []*canonical.Value{zero, scalar(t), one}), e.Int64s([]int64{4}, 1, 1, -1, 1)}), b4(past)})
		at := e.Op("Add", []*canonical.Value{b4(past), e.Op("Reshape", []*canonical.Value{steps, e.Int64s([]int64{4}, 1, 1, -1, 1)})})
		zeroF := e.Number(dt, nil, 0)
		cache := func(past, cur *canonical.Value) *canonical.Value {
			padded := e.Op("Where", []*canonical.Value{kept, e.Op("Pad", []*canonical.Value{past, pads}), zeroF})
			idx := e.Op("Expand", []*canonical.Value{at, e.Op("Shape", []*canonical.Value{cur})})
			return e.Op("ScatterElements", []*canonical.Value{padded, idx, cur}, canonical.IntAttr("axis", 2))
		}
		presentK, presentV = cache(pk, k4), cache(pv, v4)
	}
	// GroupQueryAttention's mask, [B, 1, S, T].
	rows := e.Op("Unsqueeze", []*canonical.Value{positions, e.Int64s([]int64{2}, 1, 3)})
	cols := e.Op("Range", []*canonical.Value{zero, scalar(t), one})
	seen := e.Op("Not", []*canonical.Value{e.Op("Greater", []*canonical.Value{cols, rows})})
	if w := n.AttrInt("local_window_size", -1); w > 0 {
		seen = e.Op("And", []*canonical.Value{seen, e.Op("Greater", []*canonical.Value{cols, e.Op("Sub", []*canonical.Value{rows, e.Int64s(nil, w)})})})
	}
	mask := e.Op("Where", []*canonical.Value{seen, e.Number(dt, nil, 0), e.Number(dt, nil, math.Inf(-1))})
	if b := n.Input(10); b != nil {
		b = e.Op("Slice", []*canonical.Value{b, e.Int64s([]int64{1}, 0), t, e.Int64s([]int64{1}, 3)})
		mask = e.Op("Add", []*canonical.Value{b, mask})
	}
	var attrs []*canonical.Attribute
	if s := n.AttrFloat("scale", 0); s != 0 {
		attrs = append(attrs, canonical.FloatAttr("scale", s))
	}
	if c := n.AttrFloat("softcap", 0); c > 0 {
		attrs = append(attrs, canonical.FloatAttr("softcap", c))
	}
	out := e.Op("Attention", []*canonical.Value{q4, presentK, presentV, mask}, attrs...)
	y := e.Op("Reshape", []*canonical.Value{e.Op("Transpose", []*canonical.Value{out}, canonical.IntsAttr("perm", 0, 2, 1, 3)), e.Int64s([]int64{3}, 0, 0, -1)})
	return []*canonical.Value{y, presentK, presentV}, e.Err()
}
