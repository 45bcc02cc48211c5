package executor

import (
	"fmt"
	"math"
)

// com.microsoft attention operators as ONNX Runtime's CPU kernels define
// them, on the host in float64.

func registerContribAttention(r registry) {
	r.impl("com.microsoft", "GroupQueryAttention").host = hostGroupQueryAttention
	r.impl("com.microsoft", "RotaryEmbedding").host = hostRotaryMS
	r.impl("com.microsoft", "MultiHeadAttention").host = hostMultiHeadAttention
}

// softmaxRow turns scores into probabilities in place; entries at -Inf
// get 0, and a row of only -Inf stays all 0.
func softmaxRow(row []float64) { softmaxSink(row, math.Inf(-1)) }

// softmaxSink is softmaxRow with one more score, sink, that takes part in
// the normalization but is not returned (-Inf: none).
func softmaxSink(row []float64, sink float64) {
	m := sink
	for _, s := range row {
		m = math.Max(m, s)
	}
	if math.IsInf(m, -1) {
		clear(row)
		return
	}
	sum := math.Exp(sink - m)
	for j, s := range row {
		row[j] = math.Exp(s - m)
		sum += row[j]
	}
	for j := range row {
		row[j] /= sum
	}
}

// splitHeads takes heads [from, from+n) of (B, heads, S, H) values.
func splitHeads(v []float64, B, heads, S, H, from, n int) []float64 {
	out := make([]float64, 0, B*n*S*H)
	for b := 0; b < B; b++ {
		out = append(out, v[((b*heads+from)*S)*H:((b*heads+from+n)*S)*H]...)
	}
	return out
}

// pastPair reads the past_key and past_value inputs at i and i+1 (both or
// neither), (B, heads, P, H) and (B, heads, P, Hv); nil and P 0 without.
func pastPair(c *lctx, op string, i, B, heads, H, Hv int) (k, v []float64, P int, err error) {
	if c.Has(i) != c.Has(i+1) {
		return nil, nil, 0, fmt.Errorf("%s: past_key and past_value must be given together", op)
	}
	if !c.Has(i) {
		return nil, nil, 0, nil
	}
	hs, err := c.Hs(i, i+1)
	if err != nil {
		return nil, nil, 0, err
	}
	pk, pv := hs[0], hs[1]
	if len(pk.shape) != 4 || !shapeEq(pk.shape, []int{B, heads, pk.shape[2], H}) || !shapeEq(pv.shape, []int{B, heads, pk.shape[2], Hv}) {
		return nil, nil, 0, fmt.Errorf("%s: past_key %v and past_value %v: want [%d %d P %d] and [%d %d P %d]", op, pk.shape, pv.shape, B, heads, H, B, heads, Hv)
	}
	return pk.f64(), pv.f64(), pk.shape[2], nil
}

// gqa is one GroupQueryAttention call's sizes.
type gqa struct {
	B, S, N, KVN, H int
	// T is the present cache's length, past[b] the cached positions of
	// batch b before this call.
	T    int
	past []int
	// sink is each query head's extra softmax score (smooth_softmax: 0,
	// head_sink: given); nil for none.
	sink []float64
	// bias is attention_bias, biasShape its (B or 1, N or 1, S, T) shape;
	// nil for none.
	bias      []float64
	biasShape []int
}

// hostGroupQueryAttention is com.microsoft GroupQueryAttention: query
// (B, S, N·H) with key and value (B, S, KVN·H), or query packing all three
// (B, S, (N+2·KVN)·H); past_key/past_value (B, KVN, P, H); seqlens_k
// (int32 [B]: each batch's total length - 1); total_sequence_length
// (int32 scalar); cos_cache/sin_cache for do_rotary, at each token's
// position (past + index) or at position_ids (input 9, (B, S)). On the first prompt
// (S == total_sequence_length) nothing is cached; otherwise batch b's
// new tokens sit at positions seqlens_k[b]+1-S on. Each query attends
// causally to the cache and new keys, within local_window_size keys when
// it is positive, scores scaled (scale, default 1/√H) and capped by
// softcap·tanh(s/softcap) when softcap > 0; smooth_softmax or head_sink
// (input 11, one score a head) adds a score that only normalizes;
// attention_bias (input 10, (B or 1, N or 1, S, T)) is added to the scores
// after softcap. Rows of a right-padded first prompt past seqlens_k[b]
// have no defined value in ONNX Runtime; here they attend causally like
// the rest. Outputs: output (B, S, N·H),
// present_key and present_value (B, KVN, max(total, P), H).
func hostGroupQueryAttention(c *lctx) error {
	const op = "GroupQueryAttention"
	N, KVN := int(c.AInt("num_heads", 0)), int(c.AInt("kv_num_heads", 0))
	if N <= 0 || KVN <= 0 || N%KVN != 0 {
		return fmt.Errorf("%s: num_heads %d and kv_num_heads %d: want both > 0, num_heads a multiple of kv_num_heads", op, N, KVN)
	}
	if c.HasOut(3) {
		return fmt.Errorf("%s: output_qk is not supported", op)
	}
	if c.Has(9) && c.AInt("do_rotary", 0) == 0 {
		return fmt.Errorf("%s: position_ids (input 9) is read only with do_rotary", op)
	}
	qh, err := c.H(0)
	if err != nil {
		return err
	}
	if len(qh.shape) != 3 {
		return fmt.Errorf("%s: query has shape %v; it must be (batch, sequence, hidden)", op, qh.shape)
	}
	B, S := qh.shape[0], qh.shape[1]
	var q, k, v []float64
	var H int
	if c.Has(1) != c.Has(2) {
		return fmt.Errorf("%s: key and value must be given together (or both packed in query)", op)
	}
	if !c.Has(1) {
		all, shape, err := to4D(qh, N+2*KVN)
		if err != nil {
			return fmt.Errorf("%s: packed query: %w", op, err)
		}
		H = shape[3]
		q = splitHeads(all, B, N+2*KVN, S, H, 0, N)
		k = splitHeads(all, B, N+2*KVN, S, H, N, KVN)
		v = splitHeads(all, B, N+2*KVN, S, H, N+KVN, KVN)
	} else {
		var shape []int
		if q, shape, err = to4D(qh, N); err != nil {
			return fmt.Errorf("%s: query: %w", op, err)
		}
		H = shape[3]
		for i, dst := range []*[]float64{&k, &v} {
			h, err := c.H(1 + i)
			if err != nil {
				return err
			}
			if len(h.shape) != 3 || h.shape[0] != B || h.shape[1] != S || h.shape[2] != KVN*H {
				return fmt.Errorf("%s: input %d has shape %v, want [%d %d %d]", op, 1+i, h.shape, B, S, KVN*H)
			}
			if *dst, _, err = to4D(h, KVN); err != nil {
				return fmt.Errorf("%s: input %d: %w", op, 1+i, err)
			}
		}
	}
	g := gqa{B: B, S: S, N: N, KVN: KVN, H: H}
	pastK, pastV, P, err := pastPair(c, op, 3, B, KVN, H, H)
	if err != nil {
		return err
	}
	seqlens, err := c.Ints(5)
	if err != nil {
		return err
	}
	tot, err := c.Ints(6)
	if err != nil {
		return err
	}
	if len(seqlens) != B || len(tot) != 1 {
		return fmt.Errorf("%s: seqlens_k has %d values and total_sequence_length %d; want %d and 1", op, len(seqlens), len(tot), B)
	}
	total := int(tot[0])
	g.T = max(total, P)
	first := S == total
	g.past = make([]int, B)
	for b, l := range seqlens {
		if !first {
			g.past[b] = int(l) + 1 - S
		}
		if g.past[b] < 0 || g.past[b] > P || g.past[b]+S > g.T {
			return fmt.Errorf("%s: seqlens_k[%d] is %d with %d new tokens, %d cached and total_sequence_length %d: out of range", op, b, l, S, P, total)
		}
	}
	if c.Has(10) {
		ah, err := c.H(10)
		if err != nil {
			return err
		}
		as := ah.shape
		if len(as) != 4 || (as[0] != 1 && as[0] != B) || (as[1] != 1 && as[1] != N) || as[2] != S || as[3] < g.T {
			return fmt.Errorf("%s: attention_bias has shape %v; want [%d or 1, %d or 1, %d, >= %d]", op, as, B, N, S, g.T)
		}
		g.bias, g.biasShape = ah.f64(), as
	}
	if c.Has(11) {
		sh, err := c.H(11)
		if err != nil {
			return err
		}
		if g.sink = sh.f64(); len(g.sink) != N {
			return fmt.Errorf("%s: head_sink has shape %v; want [%d]", op, sh.shape, N)
		}
	} else if c.AInt("smooth_softmax", 0) != 0 {
		g.sink = make([]float64, N)
	}
	if c.AInt("do_rotary", 0) != 0 {
		if err := g.rotate(c, q, k); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	presK, presV := g.present(pastK, P, k), g.present(pastV, P, v)
	scale := 1 / math.Sqrt(float64(H))
	if s := c.AFloat("scale", 0); s != 0 {
		scale = float64(s)
	}
	y := g.attend(q, presK, presV, scale, float64(c.AFloat("softcap", 0)), int(c.AInt("local_window_size", -1)))
	c.OutH(0, fromF64(qh.dt, []int{B, S, N * H}, y))
	if c.HasOut(1) {
		c.OutH(1, fromF64(qh.dt, []int{B, KVN, g.T, H}, presK))
	}
	if c.HasOut(2) {
		c.OutH(2, fromF64(qh.dt, []int{B, KVN, g.T, H}, presV))
	}
	return nil
}

// rotate applies the rotary embedding of cos_cache and sin_cache (inputs
// 7 and 8, [positions, rotary_dim/2]) to q and k (B, heads, S, H) at
// each token's position.
func (g gqa) rotate(c *lctx, q, k []float64) error {
	if !c.Has(7) || !c.Has(8) {
		return fmt.Errorf("do_rotary needs cos_cache and sin_cache (inputs 7 and 8)")
	}
	hs, err := c.Hs(7, 8)
	if err != nil {
		return err
	}
	ch, sh := hs[0], hs[1]
	if len(ch.shape) != 2 || !shapeEq(ch.shape, sh.shape) || 2*ch.shape[1] > g.H {
		return fmt.Errorf("cos_cache %v and sin_cache %v: want both [positions, at most %d]", ch.shape, sh.shape, g.H/2)
	}
	half := ch.shape[1]
	if last := g.T; last > ch.shape[0] {
		return fmt.Errorf("cos_cache has %d positions; the sequence reaches %d", ch.shape[0], last)
	}
	r := rope{cos: ch.f64(), sin: sh.f64(), half: half, inter: c.AInt("rotary_interleaved", 0) != 0}
	pos := func(b, s int) int { return (g.past[b] + s) * half }
	var bad error
	if c.Has(9) {
		// position_ids (B, S): each token's rotary position.
		ids, err := c.Ints(9)
		if err != nil {
			return err
		}
		if len(ids) != g.B*g.S {
			return fmt.Errorf("position_ids has %d values; want %d (batch × sequence)", len(ids), g.B*g.S)
		}
		pos = func(b, s int) int {
			p := int(ids[b*g.S+s])
			if p < 0 || p >= ch.shape[0] {
				bad = fmt.Errorf("position_ids: position %d is outside the caches' %d positions", p, ch.shape[0])
				p = 0
			}
			return p * half
		}
	}
	for _, x := range []struct {
		v     []float64
		heads int
	}{{q, g.N}, {k, g.KVN}} {
		heads := x.heads
		r.apply(x.v, g.B, g.S, heads, func(b, s, n, d int) int { return ((b*heads+n)*g.S+s)*g.H + d }, pos)
	}
	return bad
}

// present is the cache after this call, (B, KVN, T, H): batch b's first
// past[b] cached positions, then the new ones; the rest 0.
func (g gqa) present(past []float64, P int, cur []float64) []float64 {
	out := make([]float64, g.B*g.KVN*g.T*g.H)
	for b := 0; b < g.B; b++ {
		for n := 0; n < g.KVN; n++ {
			dst := out[(b*g.KVN+n)*g.T*g.H:]
			if past != nil {
				copy(dst, past[(b*g.KVN+n)*P*g.H:][:g.past[b]*g.H])
			}
			copy(dst[g.past[b]*g.H:], cur[(b*g.KVN+n)*g.S*g.H:][:g.S*g.H])
		}
	}
	return out
}

// attend is each query head's causal attention over its key/value head
// in the present cache, (B, S, N·H).
func (g gqa) attend(q, k, v []float64, scale, softcap float64, window int) []float64 {
	y := make([]float64, g.B*g.S*g.N*g.H)
	row := make([]float64, g.T)
	rep := g.N / g.KVN
	for b := 0; b < g.B; b++ {
		for n := 0; n < g.N; n++ {
			kv := (b*g.KVN + n/rep) * g.T * g.H
			for s := 0; s < g.S; s++ {
				qi := ((b*g.N+n)*g.S + s) * g.H
				end := g.past[b] + s + 1
				start := 0
				if window > 0 {
					start = max(0, end-window)
				}
				for j := range row {
					row[j] = math.Inf(-1)
					if j < start || j >= end {
						continue
					}
					dot := 0.0
					for d := 0; d < g.H; d++ {
						dot += q[qi+d] * k[kv+j*g.H+d]
					}
					dot *= scale
					if softcap > 0 {
						dot = softcap * math.Tanh(dot/softcap)
					}
					if g.bias != nil {
						bs := g.biasShape
						dot += g.bias[(((b%bs[0])*bs[1]+n%bs[1])*g.S+s)*bs[3]+j]
					}
					row[j] = dot
				}
				sink := math.Inf(-1)
				if g.sink != nil {
					sink = g.sink[n]
				}
				softmaxSink(row, sink)
				out := y[((b*g.S+s)*g.N+n)*g.H:]
				for d := 0; d < g.H; d++ {
					acc := 0.0
					for j := start; j < end; j++ {
						acc += row[j] * v[kv+j*g.H+d]
					}
					out[d] = acc
				}
			}
		}
	}
	return y
}

// hostRotaryMS is com.microsoft RotaryEmbedding (input, position_ids,
// cos_cache, sin_cache): input (B, S, N·H) or (B, N, S, H); position_ids
// int64 (B, S), or one start position for positions start, start+1, …;
// caches [positions, rotary_dim/2]. Without num_heads a 3D input's heads
// are rotary_dim wide.
func hostRotaryMS(c *lctx) error {
	const op = "com.microsoft RotaryEmbedding"
	pos, err := c.Ints(1)
	if err != nil {
		return err
	}
	hs, err := c.Hs(0, 2, 3)
	if err != nil {
		return err
	}
	xh, ch, sh := hs[0], hs[1], hs[2]
	if len(ch.shape) != 2 || !shapeEq(ch.shape, sh.shape) || ch.shape[1] == 0 {
		return fmt.Errorf("%s: cos_cache %v and sin_cache %v: want both [positions, rotary_dim/2]", op, ch.shape, sh.shape)
	}
	half := ch.shape[1]
	if rd := int(c.AInt("rotary_embedding_dim", 0)); rd > 0 && rd != 2*half {
		return fmt.Errorf("%s: rotary_embedding_dim %d but the caches hold %d angles", op, rd, half)
	}
	var B, S, N, H int
	var at func(b, s, n, d int) int
	switch len(xh.shape) {
	case 4:
		B, N, S, H = xh.shape[0], xh.shape[1], xh.shape[2], xh.shape[3]
		at = func(b, s, n, d int) int { return ((b*N+n)*S+s)*H + d }
	case 3:
		B, S = xh.shape[0], xh.shape[1]
		if N = int(c.AInt("num_heads", 0)); N == 0 {
			N = xh.shape[2] / (2 * half)
		}
		if N <= 0 || xh.shape[2]%N != 0 {
			return fmt.Errorf("%s: hidden size %d does not split into heads (num_heads %d, rotary_dim %d)", op, xh.shape[2], N, 2*half)
		}
		H = xh.shape[2] / N
		at = func(b, s, n, d int) int { return ((b*S+s)*N+n)*H + d }
	default:
		return fmt.Errorf("%s: input has shape %v; it must be 3D or 4D", op, xh.shape)
	}
	if 2*half > H {
		return fmt.Errorf("%s: rotary_dim %d exceeds the head size %d", op, 2*half, H)
	}
	if len(pos) != 1 && len(pos) != B*S {
		return fmt.Errorf("%s: position_ids has %d values; want 1 or %d (batch × sequence)", op, len(pos), B*S)
	}
	rows := ch.shape[0]
	var bad error
	cacheIdx := func(b, s int) int {
		p := int(pos[0]) + s
		if len(pos) > 1 {
			p = int(pos[b*S+s])
		}
		if p < 0 || p >= rows {
			bad = fmt.Errorf("%s: position %d is outside the caches' %d positions", op, p, rows)
			p = 0
		}
		return p * half
	}
	y := xh.f64()
	rope{cos: ch.f64(), sin: sh.f64(), half: half, inter: c.AInt("interleaved", 0) != 0}.apply(y, B, S, N, at, cacheIdx)
	if bad != nil {
		return bad
	}
	c.OutH(0, fromF64(xh.dt, xh.shape, y))
	return nil
}

// hostMultiHeadAttention is com.microsoft MultiHeadAttention with separate
// query (B, S, N·H), key (B, L, N·H) and value (B, L, N·Hv) — or key and
// value already (B, N, L, H) — bias (3 concatenated vectors) added to the
// 3D ones, past_key/past_value (B, N, P, H) before the new keys,
// key_padding_mask (B, P+L) of 1s and 0s, attention_bias (B or 1, N or 1,
// S, P+L) and unidirectional (causal). Masked scores get
// mask_filter_value (default -10000). Outputs: output (B, S, N·Hv),
// present_key/present_value (B, N, P+L, H).
func hostMultiHeadAttention(c *lctx) error {
	const op = "MultiHeadAttention"
	N := int(c.AInt("num_heads", 0))
	if N <= 0 {
		return fmt.Errorf("%s: num_heads is %d; it must be > 0", op, N)
	}
	if !c.Has(1) || !c.Has(2) {
		return fmt.Errorf("%s: only separate key and value inputs are supported (no packed QKV or KV)", op)
	}
	if c.Has(8) || c.Has(9) {
		return fmt.Errorf("%s: past_sequence_length and cache_indirection (inputs 8, 9) are not supported", op)
	}
	hs, err := c.Hs(0, 1, 2)
	if err != nil {
		return err
	}
	if len(hs[0].shape) != 3 || hs[0].shape[2]%N != 0 {
		return fmt.Errorf("%s: query has shape %v; it must be (batch, sequence, num_heads·head_size)", op, hs[0].shape)
	}
	B, S, H := hs[0].shape[0], hs[0].shape[1], hs[0].shape[2]/N
	var bias []float64
	if c.Has(3) {
		bh, err := c.H(3)
		if err != nil {
			return err
		}
		bias = bh.f64()
	}
	// q, k, v as (B, N, len, size), the bias added to 3D inputs.
	vals := make([][]float64, 3)
	lens, sizes := make([]int, 3), make([]int, 3)
	off := 0
	for i, h := range hs {
		if len(h.shape) == 4 && i > 0 {
			if h.shape[0] != B || h.shape[1] != N {
				return fmt.Errorf("%s: input %d has shape %v, want [%d %d L H]", op, i, h.shape, B, N)
			}
			if bias != nil {
				return fmt.Errorf("%s: bias with key and value in (B, N, L, H) form is not supported", op)
			}
			vals[i], lens[i], sizes[i] = h.f64(), h.shape[2], h.shape[3]
			continue
		}
		if len(h.shape) != 3 || h.shape[0] != B || h.shape[2]%N != 0 {
			return fmt.Errorf("%s: input %d has shape %v; it must be (%d, length, num_heads·size)", op, i, h.shape, B)
		}
		x := h.f64()
		if bias != nil {
			w := h.shape[2]
			if off+w > len(bias) {
				return fmt.Errorf("%s: bias has %d values; query, key and value need more", op, len(bias))
			}
			for j := range x {
				x[j] += bias[off+j%w]
			}
			off += w
		}
		v, shape, err := to4D(fromF64(h.dt, h.shape, x), N)
		if err != nil {
			return fmt.Errorf("%s: input %d: %w", op, i, err)
		}
		vals[i], lens[i], sizes[i] = v, shape[2], shape[3]
	}
	q, k, v := vals[0], vals[1], vals[2]
	L, Hv := lens[1], sizes[2]
	if sizes[1] != H || lens[2] != L {
		return fmt.Errorf("%s: key %v and value %v do not match query %v", op, hs[1].shape, hs[2].shape, hs[0].shape)
	}
	pk, pv, P, err := pastPair(c, op, 6, B, N, H, Hv)
	if err != nil {
		return err
	}
	if pk != nil {
		k = catSeq(pk, []int{B, N, P, H}, k, []int{B, N, L, H})
		v = catSeq(pv, []int{B, N, P, Hv}, v, []int{B, N, L, Hv})
	}
	T := P + L
	filter := float64(c.AFloat("mask_filter_value", -10000))
	// addMask[(b, n, s, j)] is added to each score.
	addMask := make([]float64, B*N*S*T)
	if c.Has(4) {
		mh, err := c.H(4)
		if err != nil {
			return err
		}
		if !shapeEq(mh.shape, []int{B, T}) {
			return fmt.Errorf("%s: key_padding_mask has shape %v; only (batch, total length) = [%d %d] is supported", op, mh.shape, B, T)
		}
		m := mh.f64()
		forEachIndex([]int{B, N, S, T}, func(o []int) {
			if m[o[0]*T+o[3]] == 0 {
				addMask[((o[0]*N+o[1])*S+o[2])*T+o[3]] += filter
			}
		})
	}
	if c.Has(5) {
		ah, err := c.H(5)
		if err != nil {
			return err
		}
		full, err := bcastShape(ah.shape, []int{B, N, S, T})
		if err != nil || len(ah.shape) != 4 || !shapeEq(full, []int{B, N, S, T}) {
			return fmt.Errorf("%s: attention_bias has shape %v; it must broadcast to [%d %d %d %d]", op, ah.shape, B, N, S, T)
		}
		a, st := ah.f64(), strides(ah.shape)
		i := 0
		forEachIndex(full, func(o []int) {
			f := 0
			for d, x := range o {
				if ah.shape[d] != 1 {
					f += x * st[d]
				}
			}
			addMask[i] += a[f]
			i++
		})
	}
	scale := 1 / math.Sqrt(float64(H))
	if s := c.AFloat("scale", 0); s != 0 {
		scale = float64(s)
	}
	causal := c.AInt("unidirectional", 0) != 0
	y := make([]float64, B*S*N*Hv)
	row := make([]float64, T)
	for b := 0; b < B; b++ {
		for n := 0; n < N; n++ {
			kv := (b*N + n) * T
			for s := 0; s < S; s++ {
				qi := ((b*N+n)*S + s) * H
				for j := range row {
					dot := 0.0
					for d := 0; d < H; d++ {
						dot += q[qi+d] * k[(kv+j)*H+d]
					}
					row[j] = dot*scale + addMask[((b*N+n)*S+s)*T+j]
					if causal && j > P+s {
						row[j] += filter
					}
				}
				softmaxRow(row)
				out := y[((b*S+s)*N+n)*Hv:]
				for d := 0; d < Hv; d++ {
					acc := 0.0
					for j, p := range row {
						acc += p * v[(kv+j)*Hv+d]
					}
					out[d] = acc
				}
			}
		}
	}
	dt := hs[0].dt
	c.OutH(0, fromF64(dt, []int{B, S, N * Hv}, y))
	if c.HasOut(1) {
		c.OutH(1, fromF64(dt, []int{B, N, T, H}, k))
	}
	if c.HasOut(2) {
		c.OutH(2, fromF64(dt, []int{B, N, T, Hv}, v))
	}
	return nil
}
