package infer

import (
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

func registerNN(reg func(handler, ...string)) {
	reg(matMul, "MatMul", "MatMulInteger")
	reg(qlinearMatMul, "QLinearMatMul")
	reg(gemm, "Gemm")
	reg(einsum, "Einsum")
	reg(conv, "Conv", "ConvInteger", "DeformConv")
	reg(qlinearConv, "QLinearConv")
	reg(convTranspose, "ConvTranspose")
	reg(pool, "MaxPool", "AveragePool", "LpPool")
	reg(globalPool, "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
	reg(maxUnpool, "MaxUnpool")
	reg(maxRoiPool, "MaxRoiPool")
	reg(roiAlign, "RoiAlign")
	reg(col2Im, "Col2Im")
	reg(reduce, "ReduceMax", "ReduceMin", "ReduceMean", "ReduceSum", "ReduceProd", "ReduceL1",
		"ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
	reg(argMax, "ArgMax", "ArgMin")
	reg(batchNorm, "BatchNormalization")
	reg(layerNorm, "LayerNormalization")
	reg(rnn, "RNN", "GRU", "LSTM")
	reg(attention, "Attention")
	reg(linearAttention, "LinearAttention")
	reg(causalConv, "CausalConvWithState")
	reg(nllLoss, "NegativeLogLikelihoodLoss")
	reg(sceLoss, "SoftmaxCrossEntropyLoss")
	reg(gridSample, "GridSample")
	reg(affineGrid, "AffineGrid")
	reg(quantize, "QuantizeLinear")
	reg(dequantize, "DequantizeLinear")
	reg(dynQuant, "DynamicQuantizeLinear")
	reg(det, "Det")
}

func matMulShape(a, b shape) (shape, bool) {
	if !a.ranked || !b.ranked || a.rank() == 0 || b.rank() == 0 {
		return unranked, a.ranked && b.ranked
	}
	ad, bd := copyDims(a.dims), copyDims(b.dims)
	aVec, bVec := len(ad) == 1, len(bd) == 1
	if aVec {
		ad = []dim{kd(1), ad[0]}
	}
	if bVec {
		bd = []dim{bd[0], kd(1)}
	}
	batch := broadcast(ranked(ad[:len(ad)-2]), ranked(bd[:len(bd)-2]))
	out := copyDims(batch.dims)
	if !aVec {
		out = append(out, ad[len(ad)-2])
	}
	if !bVec {
		out = append(out, bd[len(bd)-1])
	}
	return ranked(out), true
}

func matMul(c *nctx) {
	s, _ := matMulShape(c.shp(0), c.shp(1))
	c.setShape(0, s)
}

func qlinearMatMul(c *nctx) {
	s, _ := matMulShape(c.shp(0), c.shp(3))
	c.setShape(0, s)
}

func gemm(c *nctx) {
	a, b := c.shp(0), c.shp(1)
	if !a.ranked || !b.ranked || a.rank() != 2 || b.rank() != 2 {
		c.setShape(0, ranked(unknownDims(2)))
		return
	}
	m, n := a.dims[0], b.dims[1]
	if c.attrI("transA", 0) != 0 {
		m = a.dims[1]
	}
	if c.attrI("transB", 0) != 0 {
		n = b.dims[0]
	}
	c.setShape(0, ranked([]dim{m, n}))
}

func einsum(c *nctx) {
	eq := strings.ReplaceAll(c.attrS("equation", ""), " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(c.n.Inputs) {
		c.fail("equation %q has %d operands, the node %d inputs", eq, len(terms), len(c.n.Inputs))
		return
	}
	letters := map[rune]dim{}
	counts := map[rune]int{}
	var ell []dim
	ellRank := -1
	for i, t := range terms {
		s := c.shp(i)
		if !s.ranked {
			c.setShape(0, unranked)
			return
		}
		named := 0
		for _, r := range t {
			if r != '.' {
				named++
			}
		}
		hasEll := strings.Contains(t, "...")
		er := 0
		if hasEll {
			er = s.rank() - named
			if er < 0 {
				c.fail("operand %d rank %d too small for %q", i, s.rank(), t)
				return
			}
		}
		k := 0
		for j := 0; j < len(t); j++ {
			if t[j] == '.' {
				if strings.HasPrefix(t[j:], "...") {
					e := s.dims[k : k+er]
					if er > ellRank {
						// Broadcast ellipsis dims.
						nb := broadcast(ranked(e), ranked(ell))
						ell = nb.dims
						ellRank = er
					} else {
						ell = broadcast(ranked(ell), ranked(e)).dims
					}
					k += er
					j += 2
				}
				continue
			}
			r := rune(t[j])
			if k >= s.rank() {
				c.fail("operand %d rank %d too small for %q", i, s.rank(), t)
				return
			}
			d := s.dims[k]
			if old, ok := letters[r]; ok {
				letters[r] = broadcastDim(old, d)
			} else {
				letters[r] = d
			}
			counts[r]++
			k++
		}
	}
	var out []dim
	if explicit {
		for j := 0; j < len(rhs); j++ {
			if strings.HasPrefix(rhs[j:], "...") {
				out = append(out, ell...)
				j += 2
				continue
			}
			d, ok := letters[rune(rhs[j])]
			if !ok {
				c.fail("output letter %c not in inputs", rhs[j])
				return
			}
			out = append(out, d)
		}
	} else {
		out = append(out, ell...)
		var ls []rune
		for r, n := range counts {
			if n == 1 {
				ls = append(ls, r)
			}
		}
		sortRunes(ls)
		for _, r := range ls {
			out = append(out, letters[r])
		}
	}
	if out == nil {
		out = []dim{}
	}
	c.setShape(0, ranked(out))
}

func sortRunes(rs []rune) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j] < rs[j-1]; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// spatial computes the output spatial dims of a convolution or pooling.
func (c *nctx) spatial(in []dim, kernel []int64, ceilMode bool) []dim {
	n := len(in)
	strides := c.attrInts("strides")
	dil := c.attrInts("dilations")
	pads := c.attrInts("pads")
	autoPad := c.attrS("auto_pad", "NOTSET")
	out := make([]dim, n)
	for i := 0; i < n; i++ {
		s, d := int64(1), int64(1)
		if i < len(strides) {
			s = strides[i]
		}
		if i < len(dil) {
			d = dil[i]
		}
		if i >= len(kernel) || !in[i].Known || s <= 0 {
			out[i] = dim{}
			continue
		}
		x := in[i].Value
		ek := (kernel[i]-1)*d + 1
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			out[i] = kd(ceilDiv(x, s))
		case "VALID":
			out[i] = kd(floorDiv(x-ek, s) + 1)
		default:
			var pb, pe int64
			if len(pads) == 2*n {
				pb, pe = pads[i], pads[i+n]
			}
			total := x + pb + pe - ek
			var o int64
			if ceilMode {
				o = ceilDiv(total, s) + 1
				if (o-1)*s >= x+pb {
					o--
				}
			} else {
				o = floorDiv(total, s) + 1
			}
			out[i] = kd(o)
		}
	}
	return out
}

func (c *nctx) kernelFrom(w shape, n int) []int64 {
	if k := c.attrInts("kernel_shape"); k != nil {
		return k
	}
	if !w.ranked || w.rank() != n+2 {
		return nil
	}
	k := make([]int64, n)
	for i := range k {
		d := w.dims[2+i]
		if !d.Known {
			return nil
		}
		k[i] = d.Value
	}
	return k
}

func convShape(c *nctx, x, w shape) shape {
	if !x.ranked || x.rank() < 2 {
		if w.ranked {
			return ranked(unknownDims(w.rank()))
		}
		return unranked
	}
	n := x.rank() - 2
	m := dim{}
	if w.ranked && w.rank() > 0 {
		m = w.dims[0]
	}
	out := []dim{x.dims[0], m}
	return ranked(append(out, c.spatial(x.dims[2:], c.kernelFrom(w, n), false)...))
}

func conv(c *nctx) { c.setShape(0, convShape(c, c.shp(0), c.shp(1))) }

func qlinearConv(c *nctx) { c.setShape(0, convShape(c, c.shp(0), c.shp(3))) }

func convTranspose(c *nctx) {
	x, w := c.shp(0), c.shp(1)
	if !x.ranked || x.rank() < 2 {
		c.setShape(0, unranked)
		return
	}
	n := x.rank() - 2
	g := c.attrI("group", 1)
	ch := dim{}
	if w.ranked && w.rank() > 1 {
		ch = dimMul(w.dims[1], kd(g))
	}
	out := []dim{x.dims[0], ch}
	if os := c.attrInts("output_shape"); os != nil {
		sp := os
		if len(os) == n+2 {
			sp = os[2:]
		}
		for _, v := range sp {
			out = append(out, kd(v))
		}
		c.setShape(0, ranked(out))
		return
	}
	k := c.kernelFrom(w, n)
	strides, dil, pads, opad := c.attrInts("strides"), c.attrInts("dilations"), c.attrInts("pads"), c.attrInts("output_padding")
	autoPad := c.attrS("auto_pad", "NOTSET")
	for i := 0; i < n; i++ {
		s, d, op := int64(1), int64(1), int64(0)
		if i < len(strides) {
			s = strides[i]
		}
		if i < len(dil) {
			d = dil[i]
		}
		if i < len(opad) {
			op = opad[i]
		}
		in := x.dims[2+i]
		if !in.Known || i >= len(k) {
			out = append(out, dim{})
			continue
		}
		if autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" {
			out = append(out, kd(in.Value*s))
			continue
		}
		var pb, pe int64
		if len(pads) == 2*n && autoPad != "VALID" {
			pb, pe = pads[i], pads[i+n]
		}
		out = append(out, kd(s*(in.Value-1)+op+(k[i]-1)*d+1-pb-pe))
	}
	c.setShape(0, ranked(out))
}

func pool(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() < 2 {
		c.setShape(0, unranked)
		return
	}
	k := c.attrInts("kernel_shape")
	out := []dim{x.dims[0], x.dims[1]}
	out = append(out, c.spatial(x.dims[2:], k, c.attrI("ceil_mode", 0) != 0)...)
	c.setShape(0, ranked(out))
	if len(c.out) > 1 {
		c.set(1, canonical.Int64, ranked(copyDims(out)))
	}
}

func globalPool(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() < 2 {
		c.setShape(0, unranked)
		return
	}
	out := []dim{x.dims[0], x.dims[1]}
	for i := 2; i < x.rank(); i++ {
		out = append(out, kd(1))
	}
	c.setShape(0, ranked(out))
}

func maxUnpool(c *nctx) {
	x := c.shp(0)
	if c.has(2) {
		s, _ := c.shapeFrom(2)
		c.setShape(0, s)
		return
	}
	if !x.ranked || x.rank() < 2 {
		return
	}
	n := x.rank() - 2
	k, strides, pads := c.attrInts("kernel_shape"), c.attrInts("strides"), c.attrInts("pads")
	out := []dim{x.dims[0], x.dims[1]}
	for i := 0; i < n; i++ {
		s := int64(1)
		if i < len(strides) {
			s = strides[i]
		}
		var pb, pe int64
		if len(pads) == 2*n {
			pb, pe = pads[i], pads[i+n]
		}
		if !x.dims[2+i].Known || i >= len(k) {
			out = append(out, dim{})
			continue
		}
		out = append(out, kd((x.dims[2+i].Value-1)*s+k[i]-pb-pe))
	}
	c.setShape(0, ranked(out))
}

func maxRoiPool(c *nctx) {
	x, rois := c.shp(0), c.shp(1)
	ps := c.attrInts("pooled_shape")
	if !x.ranked || !rois.ranked || x.rank() < 2 || rois.rank() < 1 || len(ps) != 2 {
		return
	}
	c.setShape(0, ranked([]dim{rois.dims[0], x.dims[1], kd(ps[0]), kd(ps[1])}))
}

func roiAlign(c *nctx) {
	x, rois := c.shp(0), c.shp(1)
	if !x.ranked || !rois.ranked || x.rank() < 2 || rois.rank() < 1 {
		return
	}
	c.setShape(0, ranked([]dim{rois.dims[0], x.dims[1], kd(c.attrI("output_height", 1)), kd(c.attrI("output_width", 1))}))
}

func col2Im(c *nctx) {
	x := c.shp(0)
	img, ok1 := c.ints(1)
	blk, ok2 := c.ints(2)
	if !x.ranked || x.rank() != 3 || !ok1 || !ok2 {
		return
	}
	b := int64(1)
	for _, v := range blk {
		b *= v
	}
	out := []dim{x.dims[0], dimDivExact(x.dims[1], b)}
	for _, v := range img {
		out = append(out, kd(v))
	}
	c.setShape(0, ranked(out))
}

func reduce(c *nctx) {
	x := c.shp(0)
	keep := c.attrI("keepdims", 1) != 0
	var axes []int64
	given := false
	since := 18
	if c.n.OpType == "ReduceSum" {
		since = 13
	}
	if c.ver < since {
		axes = c.attrInts("axes")
		given = axes != nil
	} else if c.has(1) {
		a, ok := c.ints(1)
		if !ok {
			if keep && x.ranked {
				c.setShape(0, ranked(unknownDims(x.rank())))
			} else {
				c.setShape(0, unranked)
			}
			return
		}
		axes, given = a, true
	}
	if !x.ranked {
		c.setShape(0, unranked)
		return
	}
	if given && len(axes) == 0 {
		given = false
	}
	if !given && c.ver >= since && c.attrI("noop_with_empty_axes", 0) != 0 {
		c.setShape(0, x)
		return
	}
	red := map[int]bool{}
	if given {
		for _, a := range axes {
			red[normAxis(a, x.rank())] = true
		}
	} else {
		for i := range x.dims {
			red[i] = true
		}
	}
	out := []dim{}
	for i, d := range x.dims {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, kd(1))
		}
	}
	c.setShape(0, ranked(out))
	// Reductions of a constant vector (sizes computed from a shape).
	if v := c.cv(0); v != nil && v.ints != nil && len(v.shape) == 1 && red[0] {
		var r dim
		switch c.n.OpType {
		case "ReduceProd":
			r = prod(v.ints)
		case "ReduceSum":
			r = kd(0)
			for _, d := range v.ints {
				r = dimAdd(r, d)
			}
		case "ReduceMax", "ReduceMin":
			k, ok := v.allKnown()
			if !ok || len(k) == 0 {
				return
			}
			m := k[0]
			for _, x := range k[1:] {
				if (c.n.OpType == "ReduceMax") == (x > m) {
					m = x
				}
			}
			r = kd(m)
		default:
			return
		}
		shp := []int64{}
		if keep {
			shp = []int64{1}
		}
		c.setConst(0, intCval(v.dt, shp, []dim{r}))
	}
}

func argMax(c *nctx) {
	x := c.shp(0)
	if !x.ranked {
		c.set(0, canonical.Int64, unranked)
		return
	}
	ax := normAxis(c.attrI("axis", 0), x.rank())
	if !validAxis(ax, x.rank()) {
		c.fail("axis out of range")
		return
	}
	out := []dim{}
	for i, d := range x.dims {
		if i == ax {
			if c.attrI("keepdims", 1) != 0 {
				out = append(out, kd(1))
			}
			continue
		}
		out = append(out, d)
	}
	c.set(0, canonical.Int64, ranked(out))
}

func batchNorm(c *nctx) {
	x := c.shp(0)
	c.setShape(0, x)
	ch := c.shp(1)
	for i := 1; i < len(c.out); i++ {
		if c.ver >= 14 && i < 3 {
			c.set(i, c.dt(3), ch)
		} else {
			c.setShape(i, ch)
		}
	}
}

func layerNorm(c *nctx) {
	x := c.shp(0)
	c.setShape(0, x)
	if !x.ranked {
		return
	}
	ax := normAxis(c.attrI("axis", -1), x.rank())
	if !validAxis(ax, x.rank()) {
		c.fail("axis %d out of range for rank %d", c.attrI("axis", -1), x.rank())
		return
	}
	st := canonical.DataType(c.attrI("stash_type", int64(canonical.Float)))
	d := copyDims(x.dims)
	for i := ax; i < len(d); i++ {
		d[i] = kd(1)
	}
	for i := 1; i < len(c.out); i++ {
		c.set(i, st, ranked(copyDims(d)))
	}
}

func rnn(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() != 3 {
		return
	}
	dirs := int64(1)
	if c.attrS("direction", "forward") == "bidirectional" {
		dirs = 2
	}
	hs := dim{}
	if c.hasAttr("hidden_size") {
		hs = kd(c.attrI("hidden_size", 0))
	} else if r := c.shp(2); r.ranked && r.rank() == 3 {
		hs = r.dims[2]
	}
	seq, batch := x.dims[0], x.dims[1]
	layout := c.attrI("layout", 0)
	if layout == 1 {
		seq, batch = x.dims[1], x.dims[0]
	}
	if layout == 0 {
		c.setShape(0, ranked([]dim{seq, kd(dirs), batch, hs}))
		for i := 1; i < len(c.out); i++ {
			c.setShape(i, ranked([]dim{kd(dirs), batch, hs}))
		}
	} else {
		c.setShape(0, ranked([]dim{batch, seq, kd(dirs), hs}))
		for i := 1; i < len(c.out); i++ {
			c.setShape(i, ranked([]dim{batch, kd(dirs), hs}))
		}
	}
}

func attention(c *nctx) {
	q, k, v := c.shp(0), c.shp(1), c.shp(2)
	if !q.ranked || !k.ranked || !v.ranked {
		return
	}
	var b, qh, qs, kvh, kvs, vh dim
	b = q.dims[0]
	switch {
	case q.rank() == 4 && k.rank() == 4 && v.rank() == 4:
		qh, qs = q.dims[1], q.dims[2]
		kvh, kvs = k.dims[1], k.dims[2]
		vh = v.dims[3]
		c.setShape(0, ranked([]dim{b, qh, qs, vh}))
	case q.rank() == 3 && k.rank() == 3 && v.rank() == 3:
		qn, kn := c.attrI("q_num_heads", 0), c.attrI("kv_num_heads", 0)
		if qn == 0 || kn == 0 {
			return
		}
		qh, qs = kd(qn), q.dims[1]
		kvh, kvs = kd(kn), k.dims[1]
		vh = dimDivExact(v.dims[2], kn)
		c.setShape(0, ranked([]dim{b, qs, dimMul(kd(qn), vh)}))
	default:
		return
	}
	total := kvs
	if c.has(4) {
		if p := c.shp(4); p.ranked && p.rank() == 4 {
			total = dimAdd(p.dims[2], kvs)
		} else {
			total = dim{}
		}
	}
	hd := dim{}
	if k.rank() == 4 {
		hd = k.dims[3]
	} else {
		hd = dimDivExact(k.dims[2], c.attrI("kv_num_heads", 1))
	}
	if len(c.out) > 1 {
		c.setShape(1, ranked([]dim{b, kvh, total, hd}))
	}
	if len(c.out) > 2 {
		c.setShape(2, ranked([]dim{b, kvh, total, vh}))
	}
	if len(c.out) > 3 {
		c.setShape(3, ranked([]dim{b, qh, qs, total}))
	}
}

func linearAttention(c *nctx) {
	q, k, v := c.shp(0), c.shp(1), c.shp(2)
	qn, kn := c.attrI("q_num_heads", 0), c.attrI("kv_num_heads", 0)
	if !q.ranked || !k.ranked || !v.ranked || q.rank() != 3 || k.rank() != 3 || v.rank() != 3 || qn == 0 || kn == 0 {
		return
	}
	dv := dimDivExact(v.dims[2], kn)
	dk := dimDivExact(k.dims[2], kn)
	c.setShape(0, ranked([]dim{q.dims[0], q.dims[1], dimMul(kd(qn), dv)}))
	if len(c.out) > 1 {
		c.set(1, c.dt(0), ranked([]dim{q.dims[0], kd(kn), dk, dv}))
	}
}

func causalConv(c *nctx) {
	x, w := c.shp(0), c.shp(1)
	c.setShape(0, x)
	if x.ranked && x.rank() == 3 && w.ranked && w.rank() == 3 && len(c.out) > 1 {
		c.setShape(1, ranked([]dim{x.dims[0], x.dims[1], dimSub(w.dims[2], kd(1))}))
	}
}

func nllLoss(c *nctx) {
	t := c.shp(1)
	if c.attrS("reduction", "mean") == "none" {
		c.setShape(0, t)
	} else {
		c.setShape(0, ranked([]dim{}))
	}
}

func sceLoss(c *nctx) {
	t := c.shp(1)
	if c.attrS("reduction", "mean") == "none" {
		c.setShape(0, t)
	} else {
		c.setShape(0, ranked([]dim{}))
	}
	if len(c.out) > 1 {
		c.setShape(1, c.shp(0))
	}
}

func gridSample(c *nctx) {
	x, g := c.shp(0), c.shp(1)
	if !x.ranked || !g.ranked || x.rank() < 3 || g.rank() != x.rank() {
		return
	}
	out := []dim{x.dims[0], x.dims[1]}
	out = append(out, g.dims[1:g.rank()-1]...)
	c.setShape(0, ranked(out))
}

func affineGrid(c *nctx) {
	sz, _ := c.shapeFrom(1)
	if !sz.ranked || sz.rank() < 3 {
		return
	}
	out := []dim{sz.dims[0]}
	out = append(out, sz.dims[2:]...)
	out = append(out, kd(int64(sz.rank()-2)))
	c.setShape(0, ranked(out))
}

func quantize(c *nctx) {
	dt := canonical.Uint8
	switch {
	case c.has(2) && c.dt(2) != 0:
		dt = c.dt(2)
	case c.hasAttr("output_dtype") && c.attrI("output_dtype", 0) != 0:
		dt = canonical.DataType(c.attrI("output_dtype", 0))
	}
	c.set(0, dt, c.shp(0))
}

func dequantize(c *nctx) {
	dt := c.dt(1)
	if c.hasAttr("output_dtype") && c.attrI("output_dtype", 0) != 0 {
		dt = canonical.DataType(c.attrI("output_dtype", 0))
	}
	if dt == 0 {
		dt = canonical.Float
	}
	c.set(0, dt, c.shp(0))
}

func dynQuant(c *nctx) {
	c.set(0, canonical.Uint8, c.shp(0))
	c.set(1, canonical.Float, ranked([]dim{}))
	c.set(2, canonical.Uint8, ranked([]dim{}))
}

func det(c *nctx) {
	x := c.shp(0)
	if !x.ranked || x.rank() < 2 {
		return
	}
	c.setShape(0, ranked(copyDims(x.dims[:x.rank()-2])))
}
