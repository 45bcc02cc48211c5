package executor

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// Attention (opsets 23, 24, 25), computed on the host in float64.

func registerAttention(r registry) {
	r.host(hostAttention, "Attention")
	r.host(hostRotary, "RotaryEmbedding")
	fa := r.impl("ai.onnx.preview", "FlexAttention")
	fa.host, fa.control = hostFlexAttention, true
}

// to4D turns a 3D (B, L, heads*H) tensor into (B, heads, L, H) values.
func to4D(h *htensor, heads int) ([]float64, []int, error) {
	v := h.f64()
	if len(h.shape) == 4 {
		return v, h.shape, nil
	}
	if len(h.shape) != 3 || heads <= 0 || h.shape[2]%heads != 0 {
		return nil, nil, fmt.Errorf("3D attention input %v needs num_heads dividing its hidden size", h.shape)
	}
	B, L, hid := h.shape[0], h.shape[1], h.shape[2]
	H := hid / heads
	out := make([]float64, len(v))
	for b := 0; b < B; b++ {
		for l := 0; l < L; l++ {
			for n := 0; n < heads; n++ {
				for k := 0; k < H; k++ {
					out[((b*heads+n)*L+l)*H+k] = v[(b*L+l)*hid+n*H+k]
				}
			}
		}
	}
	return out, []int{B, heads, L, H}, nil
}

func hostAttention(c *lctx) error {
	qh, err := c.H(0)
	if err != nil {
		return err
	}
	kh, err := c.H(1)
	if err != nil {
		return err
	}
	vh, err := c.H(2)
	if err != nil {
		return err
	}
	is3D := len(qh.shape) == 3
	qn, kvn := int(c.AInt("q_num_heads", 0)), int(c.AInt("kv_num_heads", 0))
	q, qs, err := to4D(qh, qn)
	if err != nil {
		return err
	}
	k, ks, err := to4D(kh, kvn)
	if err != nil {
		return err
	}
	v, vs, err := to4D(vh, kvn)
	if err != nil {
		return err
	}
	B, QH, L, H := qs[0], qs[1], qs[2], qs[3]
	KH, S := ks[1], ks[2]
	VH := vs[3]
	past := 0
	if c.Has(4) {
		pk, err := c.H(4)
		if err != nil {
			return err
		}
		pv, err := c.H(5)
		if err != nil {
			return err
		}
		past = pk.shape[2]
		k, S = catSeq(pk.f64(), pk.shape, k, ks), pk.shape[2]+S
		v = catSeq(pv.f64(), pv.shape, v, vs)
		ks = []int{B, KH, S, H}
		vs = []int{B, KH, S, VH}
	}
	if QH%KH != 0 {
		return fmt.Errorf("q heads %d not a multiple of kv heads %d", QH, KH)
	}
	scale := 1 / math.Sqrt(float64(H))
	if c.HasAttr("scale") {
		scale = float64(c.AFloat("scale", 0))
	}
	softcap := float64(c.AFloat("softcap", 0))
	causal := c.AInt("is_causal", 0) == 1
	mode := c.AInt("qk_matmul_output_mode", 0)
	// mask, broadcast to (B, QH, L, S)
	var mask []float64
	if c.Has(3) {
		mh, err := c.H(3)
		if err != nil {
			return err
		}
		ms := mh.shape
		mv := mh.f64()
		mlast := ms[len(ms)-1]
		pad := append([]int{}, ms...)
		pad[len(pad)-1] = S
		full, err := bcastShape(pad, []int{B, QH, L, S})
		if err != nil {
			return fmt.Errorf("attention mask %v: %w", ms, err)
		}
		mask = make([]float64, numel(full))
		mst := strides(ms)
		off := len(full) - len(ms)
		k := 0
		forEachIndex(full, func(o []int) {
			if o[3] >= mlast {
				mask[k] = math.Inf(-1)
				k++
				return
			}
			f := 0
			for d := range ms {
				x := o[off+d]
				if ms[d] == 1 {
					x = 0
				}
				f += x * mst[d]
			}
			x := mv[f]
			if mh.dt == canonical.Bool {
				if x != 0 {
					x = 0
				} else {
					x = math.Inf(-1)
				}
			}
			mask[k] = x
			k++
		})
	}
	var nonpad []int64
	if c.Has(6) {
		if nonpad, err = c.Ints(6); err != nil {
			return err
		}
		if len(nonpad) != B {
			return fmt.Errorf("nonpad_kv_seqlen has %d values for batch %d", len(nonpad), B)
		}
		if past > 0 {
			return fmt.Errorf("nonpad_kv_seqlen cannot be combined with past_key/past_value")
		}
	}
	// Attention-25 sliding window (-1: unbounded side).
	left, right := c.AInt("left_window_size", -1), c.AInt("right_window_size", -1)
	if left < -1 || right < -1 {
		return fmt.Errorf("left_window_size %d / right_window_size %d: each must be -1 or nonnegative", left, right)
	}
	// offset is the count of valid keys before the query block: the
	// causal frontier and the window are bottom-right aligned to it.
	offset := func(b int) int {
		if nonpad != nil {
			return int(nonpad[b]) - L
		}
		return past
	}
	y := make([]float64, B*QH*L*VH)
	qk := make([]float64, B*QH*L*S)
	sq := math.Sqrt(scale)
	rep := QH / KH
	row := make([]float64, S)
	for b := 0; b < B; b++ {
		off := offset(b)
		for n := 0; n < QH; n++ {
			kn := n / rep
			for i := 0; i < L; i++ {
				base := ((b*QH+n)*L + i) * S
				p := off + i
				for j := 0; j < S; j++ {
					s := 0.0
					for d := 0; d < H; d++ {
						s += q[((b*QH+n)*L+i)*H+d] * sq * k[((b*KH+kn)*S+j)*H+d] * sq
					}
					if mode == 0 {
						qk[base+j] = s
					}
					if softcap > 0 {
						s = softcap * math.Tanh(s/softcap)
					}
					if mode == 1 {
						qk[base+j] = s
					}
					if mask != nil {
						s += mask[base+j]
					}
					if causal && j > p {
						s = math.Inf(-1)
					}
					if (left >= 0 && j < p-int(left)) || (right >= 0 && j > p+int(right)) {
						s = math.Inf(-1)
					}
					if nonpad != nil && int64(j) >= nonpad[b] {
						s = math.Inf(-1)
					}
					if mode == 2 {
						qk[base+j] = s
					}
					row[j] = s
				}
				m := math.Inf(-1)
				for _, s := range row {
					m = math.Max(m, s)
				}
				sum := 0.0
				for j, s := range row {
					e := math.Exp(s - m)
					if math.IsInf(m, -1) {
						e = 0
					}
					row[j] = e
					sum += e
				}
				for j := range row {
					if sum > 0 {
						row[j] /= sum
					}
					if mode == 3 {
						qk[base+j] = row[j]
					}
				}
				for d := 0; d < VH; d++ {
					s := 0.0
					for j := 0; j < S; j++ {
						s += row[j] * v[((b*KH+kn)*S+j)*VH+d]
					}
					y[((b*QH+n)*L+i)*VH+d] = s
				}
			}
		}
	}
	if is3D {
		y3 := make([]float64, len(y))
		for b := 0; b < B; b++ {
			for n := 0; n < QH; n++ {
				for i := 0; i < L; i++ {
					for d := 0; d < VH; d++ {
						y3[(b*L+i)*QH*VH+n*VH+d] = y[((b*QH+n)*L+i)*VH+d]
					}
				}
			}
		}
		c.OutH(0, fromF64(qh.dt, []int{B, L, QH * VH}, y3))
	} else {
		c.OutH(0, fromF64(qh.dt, []int{B, QH, L, VH}, y))
	}
	if c.HasOut(1) {
		c.OutH(1, fromF64(kh.dt, ks, k))
	}
	if c.HasOut(2) {
		c.OutH(2, fromF64(vh.dt, vs, v))
	}
	if c.HasOut(3) {
		c.OutH(3, fromF64(qh.dt, []int{B, QH, L, S}, qk))
	}
	return nil
}

// catSeq concatenates (B, N, P, H) and (B, N, S, H) along axis 2.
func catSeq(a []float64, as []int, b []float64, bs []int) []float64 {
	B, N, P, H := as[0], as[1], as[2], as[3]
	S := bs[2]
	out := make([]float64, B*N*(P+S)*H)
	for x := 0; x < B*N; x++ {
		copy(out[x*(P+S)*H:], a[x*P*H:(x+1)*P*H])
		copy(out[x*(P+S)*H+P*H:], b[x*S*H:(x+1)*S*H])
	}
	return out
}

func hostRotary(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	ch, err := c.H(1)
	if err != nil {
		return err
	}
	sh, err := c.H(2)
	if err != nil {
		return err
	}
	x := xh.f64()
	cosv, sinv := ch.f64(), sh.f64()
	var B, S, NH, HS int
	// at(b, s, n, d) is the flat index in x
	var at func(b, s, n, d int) int
	if len(xh.shape) == 4 {
		B, NH, S, HS = xh.shape[0], xh.shape[1], xh.shape[2], xh.shape[3]
		at = func(b, s, n, d int) int { return ((b*NH+n)*S+s)*HS + d }
	} else {
		B, S = xh.shape[0], xh.shape[1]
		NH = int(c.AInt("num_heads", 0))
		if NH == 0 {
			return fmt.Errorf("RotaryEmbedding on 3D input needs num_heads")
		}
		HS = xh.shape[2] / NH
		at = func(b, s, n, d int) int { return (b*S+s)*NH*HS + n*HS + d }
	}
	rd := int(c.AInt("rotary_embedding_dim", 0))
	if rd == 0 {
		rd = HS
	}
	half := rd / 2
	var pos []int64
	if c.Has(3) {
		if pos, err = c.Ints(3); err != nil {
			return err
		}
	}
	cacheIdx := func(b, s int) int {
		if pos != nil {
			return int(pos[b*S+s]) * half
		}
		if len(ch.shape) == 2 {
			return s * half
		}
		return (b*S + s) * half
	}
	out := append([]float64{}, x...)
	rope{cos: cosv, sin: sinv, half: half, inter: c.AInt("interleaved", 0) == 1}.apply(out, B, S, NH, at, cacheIdx)
	c.OutH(0, fromF64(xh.dt, xh.shape, out))
	return nil
}

// rope is a rotary embedding: the first 2·half values of each head turned
// by the angles whose cosines and sines are cos and sin, pairs (i,
// i+half) or, interleaved, (2i, 2i+1).
type rope struct {
	cos, sin []float64
	half     int
	inter    bool
}

// apply rotates x in place; at(b, s, n, d) is the flat index of a value
// and cacheIdx(b, s) the offset of its position's row in cos and sin.
func (r rope) apply(x []float64, B, S, NH int, at func(b, s, n, d int) int, cacheIdx func(b, s int) int) {
	for b := 0; b < B; b++ {
		for s := 0; s < S; s++ {
			ci := cacheIdx(b, s)
			for n := 0; n < NH; n++ {
				for i := 0; i < r.half; i++ {
					i1, i2 := i, i+r.half
					if r.inter {
						i1, i2 = 2*i, 2*i+1
					}
					x1, x2 := x[at(b, s, n, i1)], x[at(b, s, n, i2)]
					co, si := r.cos[ci+i], r.sin[ci+i]
					x[at(b, s, n, i1)] = co*x1 - si*x2
					x[at(b, s, n, i2)] = si*x1 + co*x2
				}
			}
		}
	}
}

// hostFlexAttention is ai.onnx.preview.FlexAttention: attention with
// optional score_mod / prob_mod subgraphs run on the (B, Hq, L, S) scores
// and probabilities.
func hostFlexAttention(c *lctx) error {
	qh, err := c.H(0)
	if err != nil {
		return err
	}
	kh, err := c.H(1)
	if err != nil {
		return err
	}
	vh, err := c.H(2)
	if err != nil {
		return err
	}
	if len(qh.shape) != 4 || len(kh.shape) != 4 || len(vh.shape) != 4 {
		return fmt.Errorf("FlexAttention needs rank-4 Q, K, V")
	}
	B, Hq, L, E := qh.shape[0], qh.shape[1], qh.shape[2], qh.shape[3]
	Hk, S, Ev := kh.shape[1], kh.shape[2], vh.shape[3]
	if Hq%Hk != 0 {
		return fmt.Errorf("q heads %d not a multiple of kv heads %d", Hq, Hk)
	}
	prec := canonical.Float
	if qh.dt == canonical.Double {
		prec = canonical.Double
	}
	if c.HasAttr("softmax_precision") {
		prec = canonical.DataType(c.AInt("softmax_precision", int64(prec)))
	}
	scale := 1 / math.Sqrt(float64(E))
	if c.HasAttr("scale") {
		scale = float64(c.AFloat("scale", 0))
	}
	q, k, v := qh.f64(), kh.f64(), vh.f64()
	rep := Hq / Hk
	sc := make([]float64, B*Hq*L*S)
	for b := 0; b < B; b++ {
		for h := 0; h < Hq; h++ {
			kvh := h / rep
			for i := 0; i < L; i++ {
				for j := 0; j < S; j++ {
					s := 0.0
					for d := 0; d < E; d++ {
						s += q[((b*Hq+h)*L+i)*E+d] * k[((b*Hk+kvh)*S+j)*E+d]
					}
					sc[((b*Hq+h)*L+i)*S+j] = s * scale
				}
			}
		}
	}
	shape := []int{B, Hq, L, S}
	scores := fromF64(prec, shape, sc)
	apply := func(name string, h *htensor) (*htensor, error) {
		a := c.n.Attr(name)
		if a == nil || a.G == nil {
			return h, nil
		}
		outs, err := c.runSub(a.G, []*slot{{h: h, dt: h.dt}})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(outs) != 1 || outs[0].h == nil || !shapeEq(outs[0].h.shape, shape) {
			return nil, fmt.Errorf("%s must return one tensor of shape %v", name, shape)
		}
		return outs[0].h, nil
	}
	if scores, err = apply("score_mod", scores); err != nil {
		return err
	}
	p := scores.f64()
	for r := 0; r < B*Hq*L; r++ {
		row := p[r*S : (r+1)*S]
		m := math.Inf(-1)
		for _, x := range row {
			m = math.Max(m, x)
		}
		sum := 0.0
		for j, x := range row {
			e := math.Exp(x - m)
			if math.IsInf(m, -1) {
				e = 0
			}
			row[j] = e
			sum += e
		}
		for j := range row {
			if sum > 0 {
				row[j] /= sum
			}
		}
	}
	probs, err := apply("prob_mod", fromF64(prec, shape, p))
	if err != nil {
		return err
	}
	p = probs.f64()
	y := make([]float64, B*Hq*L*Ev)
	for b := 0; b < B; b++ {
		for h := 0; h < Hq; h++ {
			kvh := h / rep
			for i := 0; i < L; i++ {
				for d := 0; d < Ev; d++ {
					s := 0.0
					for j := 0; j < S; j++ {
						s += p[((b*Hq+h)*L+i)*S+j] * v[((b*Hk+kvh)*S+j)*Ev+d]
					}
					y[((b*Hq+h)*L+i)*Ev+d] = s
				}
			}
		}
	}
	c.OutH(0, fromF64(qh.dt, []int{B, Hq, L, Ev}, y))
	return nil
}
