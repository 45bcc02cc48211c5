package executor

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/onnxconv/onnxconv/canonical"
)

// Assorted host kernels: Pad, Einsum, EyeLike, Shrink, Swish,
// SpaceToDepth, DepthToSpace, LpNormalization, MeanVarianceNormalization,
// LRN, GroupNormalization, Det, ReverseSequence, Unique, BitCast,
// CenterCropPad, MaxUnpool.

func registerMisc(r registry) {
	r.host(hostPad, "Pad")
	r.lower(lowerPad, "Pad")
	r.host(hostEinsum, "Einsum")
	r.host(hostEyeLike, "EyeLike")
	r.host(hostShrink, "Shrink")
	r.host(func(c *lctx) error {
		h, err := c.H(0)
		if err != nil {
			return err
		}
		a := float64(c.AFloat("alpha", 1))
		v := h.f64()
		for k, x := range v {
			v[k] = x / (1 + math.Exp(-a*x))
		}
		c.OutH(0, fromF64(h.dt, h.shape, v))
		return nil
	}, "Swish")
	r.host(hostSpaceToDepth, "SpaceToDepth")
	r.host(hostDepthToSpace, "DepthToSpace")
	r.host(hostLpNorm, "LpNormalization")
	r.host(hostMVN, "MeanVarianceNormalization")
	r.host(hostLRN, "LRN")
	r.host(hostGroupNorm, "GroupNormalization")
	r.host(hostDet, "Det")
	r.host(hostReverseSequence, "ReverseSequence")
	r.host(hostUnique, "Unique")
	r.host(hostCenterCropPad, "CenterCropPad")
	r.host(hostMaxUnpool, "MaxUnpool")
	r.host(hostTensorScatter, "TensorScatter")
	r.host(hostCol2Im, "Col2Im")
	r.host(hostConvInteger, "ConvInteger")
	r.host(hostQLinearConv, "QLinearConv")
}

func hostPad(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	r := len(h.shape)
	var pads []int64
	if c.ver < 11 {
		pads = c.AInts("pads", c.AInts("paddings", nil))
	} else if pads, err = c.Ints(1); err != nil {
		return err
	}
	mode := c.AStr("mode", "constant")
	cval := float64(c.AFloat("value", 0))
	var cvalH *htensor
	if c.ver >= 11 && c.Has(2) {
		if cvalH, err = c.H(2); err != nil {
			return err
		}
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if c.ver >= 18 && c.Has(3) {
		av, err := c.Ints(3)
		if err != nil {
			return err
		}
		axes = axes[:0]
		for _, a := range av {
			ax, err := normAxis(a, r)
			if err != nil {
				return err
			}
			axes = append(axes, ax)
		}
	}
	pb, pe := make([]int, r), make([]int, r)
	na := len(axes)
	if len(pads) != 2*na {
		return fmt.Errorf("pads %v for %d axes", pads, na)
	}
	for i, ax := range axes {
		pb[ax], pe[ax] = int(pads[i]), int(pads[i+na])
	}
	out := make([]int, r)
	for i := range out {
		out[i] = h.shape[i] + pb[i] + pe[i]
		if out[i] < 0 {
			return fmt.Errorf("negative output dim")
		}
	}
	if err := checkSize(out); err != nil {
		return err
	}
	st := strides(h.shape)
	n := h.size()
	idx := make([]int, 0, numel(out))
	forEachIndex(out, func(o []int) {
		f := 0
		for d, v := range o {
			x := v - pb[d]
			D := h.shape[d]
			if x < 0 || x >= D {
				switch mode {
				case "edge":
					if x < 0 {
						x = 0
					} else {
						x = D - 1
					}
				case "reflect":
					if D == 1 {
						x = 0
					} else {
						p := 2 * (D - 1)
						x = ((x % p) + p) % p
						if x >= D {
							x = p - x
						}
					}
				case "wrap":
					x = ((x % D) + D) % D
				default:
					f = -1
				}
			}
			if f < 0 {
				break
			}
			f += x * st[d]
		}
		if f < 0 {
			f = n
		}
		idx = append(idx, f)
	})
	fill := newH(h.dt, []int{1})
	if cvalH != nil && cvalH.size() > 0 {
		fill = hTake(cvalH, []int{1}, []int{0})
	} else if h.dt != canonical.String {
		fill = fromF64(h.dt, []int{1}, []float64{cval})
	}
	all := &htensor{dt: h.dt, data: concatAny([]any{h.data, fill.data})}
	c.OutH(0, hTake(all, out, idx))
	return nil
}

func hostEinsum(c *lctx) error {
	eq := strings.ReplaceAll(c.AStr("equation", ""), " ", "")
	var ins []*htensor
	for i := 0; i < c.NIn(); i++ {
		h, err := c.H(i)
		if err != nil {
			return err
		}
		ins = append(ins, h)
	}
	lhs, rhs, hasArrow := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(ins) {
		return fmt.Errorf("equation %q has %d operands, got %d", eq, len(terms), len(ins))
	}
	dims := map[byte]int{}
	// expand ellipsis
	ell := 0
	for i, t := range terms {
		if strings.Contains(t, "...") {
			k := len(ins[i].shape) - (len(t) - 3)
			if k > ell {
				ell = k
			}
		}
	}
	ellLetters := ""
	for i := 0; i < ell; i++ {
		ellLetters += string(rune('A' + i))
	}
	for i, t := range terms {
		if strings.Contains(t, "...") {
			k := len(ins[i].shape) - (len(t) - 3)
			terms[i] = strings.Replace(t, "...", ellLetters[ell-k:], 1)
		}
		if len(terms[i]) != len(ins[i].shape) {
			return fmt.Errorf("term %q for shape %v", terms[i], ins[i].shape)
		}
		for j := 0; j < len(terms[i]); j++ {
			d := ins[i].shape[j]
			if old, ok := dims[terms[i][j]]; ok && old != d && old != 1 && d != 1 {
				return fmt.Errorf("dimension %c mismatch", terms[i][j])
			}
			if d > dims[terms[i][j]] || dims[terms[i][j]] == 0 {
				dims[terms[i][j]] = d
			}
		}
	}
	if !hasArrow {
		counts := map[byte]int{}
		for _, t := range terms {
			for j := 0; j < len(t); j++ {
				counts[t[j]]++
			}
		}
		var ls []byte
		for l, n := range counts {
			if n == 1 && !(l >= 'A' && l <= 'Z') {
				ls = append(ls, l)
			}
		}
		sort.Slice(ls, func(a, b int) bool { return ls[a] < ls[b] })
		rhs = ellLetters + string(ls)
	} else {
		rhs = strings.Replace(rhs, "...", ellLetters, 1)
	}
	var all []byte
	seen := map[byte]bool{}
	for j := 0; j < len(rhs); j++ {
		all = append(all, rhs[j])
		seen[rhs[j]] = true
	}
	for _, t := range terms {
		for j := 0; j < len(t); j++ {
			if !seen[t[j]] {
				seen[t[j]] = true
				all = append(all, t[j])
			}
		}
	}
	pos := map[byte]int{}
	full := make([]int, len(all))
	for i, l := range all {
		pos[l] = i
		full[i] = dims[l]
	}
	outShape := full[:len(rhs)]
	res := make([]float64, numel(outShape))
	vals := make([][]float64, len(ins))
	sts := make([][]int, len(ins))
	for i, h := range ins {
		vals[i] = h.f64()
		sts[i] = strides(h.shape)
	}
	ost := strides(outShape)
	forEachIndex(full, func(o []int) {
		p := 1.0
		for i, t := range terms {
			f := 0
			for j := 0; j < len(t); j++ {
				x := o[pos[t[j]]]
				if ins[i].shape[j] == 1 {
					x = 0
				}
				f += x * sts[i][j]
			}
			p *= vals[i][f]
		}
		f := 0
		for j := range outShape {
			f += o[j] * ost[j]
		}
		res[f] += p
	})
	c.OutH(0, fromF64(ins[0].dt, outShape, res))
	return nil
}

func hostEyeLike(c *lctx) error {
	sh := c.Shape(0)
	dt := c.DT(0)
	if a := c.n.Attr("dtype"); a != nil {
		dt = canonical.DataType(a.I)
	}
	k := int(c.AInt("k", 0))
	v := make([]float64, numel(sh))
	for i := 0; i < sh[0]; i++ {
		j := i + k
		if j >= 0 && j < sh[1] {
			v[i*sh[1]+j] = 1
		}
	}
	c.OutH(0, fromF64(dt, sh, v))
	return nil
}

func hostShrink(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	l, b := float64(c.AFloat("lambd", 0.5)), float64(c.AFloat("bias", 0))
	v := h.f64()
	for k, x := range v {
		switch {
		case x < -l:
			v[k] = x + b
		case x > l:
			v[k] = x - b
		default:
			v[k] = 0
		}
	}
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

func hostSpaceToDepth(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	bs := int(c.AInt("blocksize", 1))
	N, C, H, W := h.shape[0], h.shape[1], h.shape[2], h.shape[3]
	// reshape N,C,H/b,b,W/b,b -> transpose 0,3,5,1,2,4
	tmp := &htensor{dt: h.dt, shape: []int{N, C, H / bs, bs, W / bs, bs}, data: h.data}
	out, idx := transposeIdx(tmp.shape, []int{0, 3, 5, 1, 2, 4})
	_ = out
	c.OutH(0, hTake(tmp, []int{N, C * bs * bs, H / bs, W / bs}, idx))
	return nil
}

func hostDepthToSpace(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	bs := int(c.AInt("blocksize", 1))
	N, C, H, W := h.shape[0], h.shape[1], h.shape[2], h.shape[3]
	var tmp *htensor
	var perm []int
	if c.AStr("mode", "DCR") == "CRD" {
		tmp = &htensor{dt: h.dt, shape: []int{N, C / (bs * bs), bs, bs, H, W}, data: h.data}
		perm = []int{0, 1, 4, 2, 5, 3}
	} else {
		tmp = &htensor{dt: h.dt, shape: []int{N, bs, bs, C / (bs * bs), H, W}, data: h.data}
		perm = []int{0, 3, 4, 1, 5, 2}
	}
	_, idx := transposeIdx(tmp.shape, perm)
	c.OutH(0, hTake(tmp, []int{N, C / (bs * bs), H * bs, W * bs}, idx))
	return nil
}

// alongAxis calls f with the flat indices of each 1-D line along axis.
func alongAxis(shape []int, axis int, f func(idx []int)) {
	st := strides(shape)
	outer := append([]int{}, shape...)
	outer[axis] = 1
	forEachIndex(outer, func(o []int) {
		base := 0
		for d, x := range o {
			base += x * st[d]
		}
		idx := make([]int, shape[axis])
		for j := range idx {
			idx[j] = base + j*st[axis]
		}
		f(idx)
	})
}

func hostLpNorm(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", -1), len(h.shape))
	if err != nil {
		return err
	}
	p := c.AInt("p", 2)
	v := h.f64()
	alongAxis(h.shape, ax, func(idx []int) {
		s := 0.0
		for _, i := range idx {
			if p == 1 {
				s += math.Abs(v[i])
			} else {
				s += v[i] * v[i]
			}
		}
		if p != 1 {
			s = math.Sqrt(s)
		}
		for _, i := range idx {
			if s != 0 {
				v[i] /= s
			}
		}
	})
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

// reduceGroups normalizes v over groups of elements sharing the
// coordinates not in axes.
func normalizeOver(shape []int, axes []int, v []float64, eps float64, varOnly bool) {
	red := map[int]bool{}
	for _, a := range axes {
		red[a] = true
	}
	out := append([]int{}, shape...)
	for a := range red {
		out[a] = 1
	}
	ost := strides(out)
	n := numel(out)
	sum, sq, cnt := make([]float64, n), make([]float64, n), make([]float64, n)
	grp := make([]int, len(v))
	k := 0
	forEachIndex(shape, func(o []int) {
		f := 0
		for d, x := range o {
			if !red[d] {
				f += x * ost[d]
			}
		}
		grp[k] = f
		sum[f] += v[k]
		cnt[f]++
		k++
	})
	for k := range v {
		sq[grp[k]] += (v[k] - sum[grp[k]]/cnt[grp[k]]) * (v[k] - sum[grp[k]]/cnt[grp[k]])
	}
	for k := range v {
		g := grp[k]
		m := sum[g] / cnt[g]
		sd := math.Sqrt(sq[g]/cnt[g] + eps)
		v[k] = (v[k] - m) / sd
	}
}

func hostMVN(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	axes := toInts(c.AInts("axes", []int64{0, 2, 3}))
	v := h.f64()
	normalizeOver(h.shape, axes, v, 1e-9, false)
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

func hostLRN(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	alpha, beta, bias := float64(c.AFloat("alpha", 1e-4)), float64(c.AFloat("beta", 0.75)), float64(c.AFloat("bias", 1))
	size := int(c.AInt("size", 1))
	v := h.f64()
	out := make([]float64, len(v))
	C := h.shape[1]
	st := strides(h.shape)
	k := 0
	forEachIndex(h.shape, func(o []int) {
		s := 0.0
		lo := o[1] - (size-1)/2
		hi := o[1] + int(math.Ceil(float64(size-1)/2))
		for ch := lo; ch <= hi; ch++ {
			if ch < 0 || ch >= C {
				continue
			}
			x := v[k+(ch-o[1])*st[1]]
			s += x * x
		}
		out[k] = v[k] / math.Pow(bias+alpha/float64(size)*s, beta)
		k++
	})
	c.OutH(0, fromF64(h.dt, h.shape, out))
	return nil
}

func hostGroupNorm(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	sc, err := c.H(1)
	if err != nil {
		return err
	}
	bi, err := c.H(2)
	if err != nil {
		return err
	}
	G := int(c.AInt("num_groups", 1))
	eps := float64(c.AFloat("epsilon", 1e-5))
	N, C := h.shape[0], h.shape[1]
	sp := numel(h.shape[2:])
	v := h.f64()
	normalizeOver([]int{N, G, C / G * sp}, []int{2}, v, eps, false)
	s, b := sc.f64(), bi.f64()
	perGroupScale := len(s) == G && G != C
	for k := range v {
		ch := (k / sp) % C
		si := ch
		if perGroupScale {
			si = ch / (C / G)
		}
		v[k] = v[k]*s[si] + b[si]
	}
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

func hostDet(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	r := len(h.shape)
	n := h.shape[r-1]
	v := h.f64()
	batch := numel(h.shape[:r-2])
	out := make([]float64, batch)
	for b := 0; b < batch; b++ {
		m := append([]float64{}, v[b*n*n:(b+1)*n*n]...)
		det := 1.0
		for i := 0; i < n; i++ {
			p := i
			for j := i + 1; j < n; j++ {
				if math.Abs(m[j*n+i]) > math.Abs(m[p*n+i]) {
					p = j
				}
			}
			if m[p*n+i] == 0 {
				det = 0
				break
			}
			if p != i {
				for k := 0; k < n; k++ {
					m[i*n+k], m[p*n+k] = m[p*n+k], m[i*n+k]
				}
				det = -det
			}
			det *= m[i*n+i]
			for j := i + 1; j < n; j++ {
				f := m[j*n+i] / m[i*n+i]
				for k := i; k < n; k++ {
					m[j*n+k] -= f * m[i*n+k]
				}
			}
		}
		out[b] = det
	}
	c.OutH(0, fromF64(h.dt, h.shape[:r-2], out))
	return nil
}

func hostReverseSequence(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	lens, err := c.Ints(1)
	if err != nil {
		return err
	}
	bax, tax := int(c.AInt("batch_axis", 1)), int(c.AInt("time_axis", 0))
	st := strides(h.shape)
	idx := make([]int, 0, h.size())
	forEachIndex(h.shape, func(o []int) {
		f := 0
		for d, x := range o {
			if d == tax && int64(x) < lens[o[bax]] {
				x = int(lens[o[bax]]) - 1 - x
			}
			f += x * st[d]
		}
		idx = append(idx, f)
	})
	c.OutH(0, hTake(h, h.shape, idx))
	return nil
}

func hostUnique(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	sorted := c.AInt("sorted", 1) == 1
	var lines [][]int // flat indices of each slice
	var shape []int
	ax := -1
	if c.HasAttr("axis") {
		if ax, err = normAxis(c.AInt("axis", 0), len(h.shape)); err != nil {
			return err
		}
		st := strides(h.shape)
		rest := append([]int{}, h.shape...)
		rest[ax] = 1
		for i := 0; i < h.shape[ax]; i++ {
			var l []int
			forEachIndex(rest, func(o []int) {
				f := 0
				for d, x := range o {
					if d == ax {
						x = i
					}
					f += x * st[d]
				}
				l = append(l, f)
			})
			lines = append(lines, l)
		}
	} else {
		for i := 0; i < h.size(); i++ {
			lines = append(lines, []int{i})
		}
	}
	v := h.f64()
	key := func(l []int) string {
		var sb strings.Builder
		for _, i := range l {
			fmt.Fprintf(&sb, "%v,", v[i])
		}
		return sb.String()
	}
	first := map[string]int{}
	var order []int // line index of first occurrence
	inverse := make([]int64, len(lines))
	counts := map[string]int64{}
	for i, l := range lines {
		k := key(l)
		if _, ok := first[k]; !ok {
			first[k] = len(order)
			order = append(order, i)
		}
		counts[k]++
	}
	if sorted {
		sort.SliceStable(order, func(a, b int) bool {
			la, lb := lines[order[a]], lines[order[b]]
			for j := range la {
				if v[la[j]] != v[lb[j]] {
					return v[la[j]] < v[lb[j]]
				}
			}
			return false
		})
		for j, i := range order {
			first[key(lines[i])] = j
		}
	}
	for i, l := range lines {
		inverse[i] = int64(first[key(l)])
	}
	var idx []int
	indices := make([]int64, len(order))
	cnt := make([]int64, len(order))
	for j, i := range order {
		indices[j] = int64(i)
		cnt[j] = counts[key(lines[i])]
	}
	if ax < 0 {
		for _, i := range order {
			idx = append(idx, i)
		}
		shape = []int{len(order)}
	} else {
		shape = append([]int{}, h.shape...)
		shape[ax] = len(order)
		st := strides(h.shape)
		forEachIndex(shape, func(o []int) {
			f := 0
			for d, x := range o {
				if d == ax {
					x = order[x]
				}
				f += x * st[d]
			}
			idx = append(idx, f)
		})
	}
	c.OutH(0, hTake(h, shape, idx))
	c.OutH(1, fromI64(canonical.Int64, []int{len(indices)}, indices))
	c.OutH(2, fromI64(canonical.Int64, []int{len(inverse)}, inverse))
	c.OutH(3, fromI64(canonical.Int64, []int{len(cnt)}, cnt))
	return nil
}

func hostCenterCropPad(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	sv, err := c.Ints(1)
	if err != nil {
		return err
	}
	r := len(h.shape)
	axes := make([]int, 0, r)
	if av := c.AInts("axes", nil); av != nil {
		for _, a := range av {
			ax, err := normAxis(a, r)
			if err != nil {
				return err
			}
			axes = append(axes, ax)
		}
	} else {
		for i := 0; i < r; i++ {
			axes = append(axes, i)
		}
	}
	out := append([]int{}, h.shape...)
	off := make([]int, r)
	for i, ax := range axes {
		t := int(sv[i])
		d := h.shape[ax]
		out[ax] = t
		if t <= d {
			off[ax] = (d - t) / 2 // crop start
		} else {
			off[ax] = -((t - d) / 2) // pad start
		}
	}
	st := strides(h.shape)
	n := h.size()
	idx := make([]int, 0, numel(out))
	forEachIndex(out, func(o []int) {
		f := 0
		for d, x := range o {
			y := x + off[d]
			if y < 0 || y >= h.shape[d] {
				f = -1
				break
			}
			f += y * st[d]
		}
		if f < 0 {
			f = n
		}
		idx = append(idx, f)
	})
	all := &htensor{dt: h.dt, data: concatAny([]any{h.data, newH(h.dt, []int{1}).data})}
	c.OutH(0, hTake(all, out, idx))
	return nil
}

func hostMaxUnpool(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ind, err := c.Ints(1)
	if err != nil {
		return err
	}
	ks := toInts(c.AInts("kernel_shape", nil))
	ns := len(ks)
	st, pads := c.AInts("strides", nil), c.AInts("pads", nil)
	out := append([]int{}, h.shape...)
	for i := 0; i < ns; i++ {
		s := 1
		if st != nil {
			s = int(st[i])
		}
		p := 0
		if pads != nil {
			p = int(pads[i] + pads[i+ns])
		}
		out[2+i] = (h.shape[2+i]-1)*s + ks[i] - p
	}
	def := out
	if c.Has(2) {
		os, err := c.Ints(2)
		if err != nil {
			return err
		}
		out = toInts(os)
	}
	res := make([]float64, numel(out))
	v := h.f64()
	dst, ost := strides(def), strides(out)
	for k, i := range ind {
		// indices address the default-shaped output; re-address them
		f, rem := 0, int(i)
		for d := range def {
			x := rem / dst[d]
			rem %= dst[d]
			f += x * ost[d]
		}
		if f >= 0 && f < len(res) {
			res[f] = v[k]
		}
	}
	c.OutH(0, fromF64(h.dt, out, res))
	return nil
}

func hostTensorScatter(c *lctx) error {
	ph, err := c.H(0)
	if err != nil {
		return err
	}
	uh, err := c.H(1)
	if err != nil {
		return err
	}
	r := len(ph.shape)
	ax, err := normAxis(c.AInt("axis", -2), r)
	if err != nil {
		return err
	}
	var wi []int64
	if c.Has(2) {
		if wi, err = c.Ints(2); err != nil {
			return err
		}
	}
	circ := c.AStr("mode", "linear") == "circular"
	maxS := ph.shape[ax]
	pst := strides(ph.shape)
	// idx maps each cache element to itself, or to size(past)+update index
	idx := make([]int, ph.size())
	for i := range idx {
		idx[i] = i
	}
	n := ph.size()
	k := 0
	var bad error
	forEachIndex(uh.shape, func(o []int) {
		w := int64(0)
		if wi != nil {
			w = wi[o[0]]
		}
		p := int(w) + o[ax]
		if circ {
			p = ((p % maxS) + maxS) % maxS
		}
		if p < 0 || p >= maxS {
			bad = fmt.Errorf("write index %d out of range", p)
			return
		}
		f := 0
		for d, x := range o {
			if d == ax {
				x = p
			}
			f += x * pst[d]
		}
		idx[f] = n + k
		k++
	})
	if bad != nil {
		return bad
	}
	all := &htensor{dt: ph.dt, data: concatAny([]any{ph.data, uh.data})}
	c.OutH(0, hTake(all, ph.shape, idx))
	return nil
}

func hostCol2Im(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	imgv, err := c.Ints(1)
	if err != nil {
		return err
	}
	blkv, err := c.Ints(2)
	if err != nil {
		return err
	}
	img, blk := toInts(imgv), toInts(blkv)
	nd := len(img)
	dil, pads, st := c.AInts("dilations", nil), c.AInts("pads", nil), c.AInts("strides", nil)
	d, pb, s := make([]int, nd), make([]int, nd), make([]int, nd)
	outBlocks := make([]int, nd)
	for i := 0; i < nd; i++ {
		d[i], s[i] = 1, 1
		pe := 0
		if dil != nil {
			d[i] = int(dil[i])
		}
		if st != nil {
			s[i] = int(st[i])
		}
		if pads != nil {
			pb[i], pe = int(pads[i]), int(pads[i+nd])
		}
		outBlocks[i] = (img[i]+pb[i]+pe-(d[i]*(blk[i]-1)+1))/s[i] + 1
	}
	N := h.shape[0]
	kb := numel(blk)
	C := h.shape[1] / kb
	L := h.shape[2]
	v := h.f64()
	out := make([]float64, N*C*numel(img))
	ist := strides(img)
	for n := 0; n < N; n++ {
		for ch := 0; ch < C; ch++ {
			forEachIndexFlat(blk, func(kp []int, kf int) {
				forEachIndexFlat(outBlocks, func(bp []int, l int) {
					if l >= L {
						return
					}
					f := 0
					for i := 0; i < nd; i++ {
						p := bp[i]*s[i] - pb[i] + kp[i]*d[i]
						if p < 0 || p >= img[i] {
							return
						}
						f += p * ist[i]
					}
					out[(n*C+ch)*numel(img)+f] += v[((n*C+ch)*kb+kf)*L+l]
				})
			})
		}
	}
	c.OutH(0, fromF64(h.dt, append([]int{N, C}, img...), out))
	return nil
}

// convDirect is a direct N-D convolution in float64 (groups, strides,
// dilations, pads, auto_pad), used by the integer convolutions.
func convDirect(c *lctx, x []float64, xs []int, w []float64, ws []int) ([]float64, []int, error) {
	ns := len(xs) - 2
	kernel := ws[2:]
	if ks := c.AInts("kernel_shape", nil); ks != nil {
		kernel = toInts(ks)
	}
	g, err := resolveGeom(c, xs[2:], kernel, false)
	if err != nil {
		return nil, nil, err
	}
	groups := int(c.AInt("group", 1))
	N, C, M := xs[0], xs[1], ws[0]
	cg, mg := C/groups, M/groups
	out := append([]int{N, M}, g.out...)
	res := make([]float64, numel(out))
	xst := strides(xs[2:])
	spIn, spK, spO := numel(xs[2:]), numel(kernel), numel(g.out)
	for n := 0; n < N; n++ {
		for m := 0; m < M; m++ {
			gi := m / mg
			forEachIndexFlat(g.out, func(op []int, of int) {
				s := 0.0
				for ci := 0; ci < cg; ci++ {
					ch := gi*cg + ci
					forEachIndexFlat(kernel, func(kp []int, kf int) {
						f := 0
						for d := 0; d < ns; d++ {
							p := op[d]*g.strides[d] - g.padB[d] + kp[d]*g.dil[d]
							if p < 0 || p >= xs[2+d] {
								return
							}
							f += p * xst[d]
						}
						s += x[(n*C+ch)*spIn+f] * w[(m*cg+ci)*spK+kf]
					})
				}
				res[(n*M+m)*spO+of] = s
			})
		}
	}
	return res, out, nil
}

func hostConvInteger(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	wh, err := c.H(1)
	if err != nil {
		return err
	}
	x, w := xh.f64(), wh.f64()
	if c.Has(2) {
		z, err := c.H(2)
		if err != nil {
			return err
		}
		zv := z.f64()[0]
		for k := range x {
			x[k] -= zv
		}
	}
	if c.Has(3) {
		z, err := c.H(3)
		if err != nil {
			return err
		}
		zv := z.f64()
		per := wh.size() / wh.shape[0]
		for k := range w {
			if len(zv) == 1 {
				w[k] -= zv[0]
			} else {
				w[k] -= zv[k/per]
			}
		}
	}
	y, ys, err := convDirect(c, x, xh.shape, w, wh.shape)
	if err != nil {
		return err
	}
	c.OutH(0, fromF64(canonical.Int32, ys, y))
	return nil
}

func hostQLinearConv(c *lctx) error {
	get := func(i int) (*htensor, []float64, error) {
		h, err := c.H(i)
		if err != nil {
			return nil, nil, err
		}
		return h, h.f64(), nil
	}
	xh, x, err := get(0)
	if err != nil {
		return err
	}
	_, xs, err := get(1)
	if err != nil {
		return err
	}
	_, xz, err := get(2)
	if err != nil {
		return err
	}
	wh, w, err := get(3)
	if err != nil {
		return err
	}
	_, wsc, err := get(4)
	if err != nil {
		return err
	}
	_, wz, err := get(5)
	if err != nil {
		return err
	}
	_, ys, err := get(6)
	if err != nil {
		return err
	}
	yzh, yz, err := get(7)
	if err != nil {
		return err
	}
	for k := range x {
		x[k] = (x[k] - xz[0]) * xs[0]
	}
	per := wh.size() / wh.shape[0]
	for k := range w {
		m := k / per
		s, z := wsc[0], wz[0]
		if len(wsc) > 1 {
			s = wsc[m]
		}
		if len(wz) > 1 {
			z = wz[m]
		}
		w[k] = (w[k] - z) * s
	}
	y, shp, err := convDirect(c, x, xh.shape, w, wh.shape)
	if err != nil {
		return err
	}
	if c.Has(8) {
		_, b, err := get(8)
		if err != nil {
			return err
		}
		sp := numel(shp[2:])
		for k := range y {
			y[k] += b[(k/sp)%shp[1]] * xs[0] * wsc[minInt((k/sp)%shp[1], len(wsc)-1)]
		}
	}
	lo, hi, _ := quantRange(yzh.dt)
	iv := make([]int64, len(y))
	for k, v := range y {
		iv[k] = int64(math.Max(lo, math.Min(hi, math.RoundToEven(v/ys[0])+yz[0])))
	}
	c.OutH(0, fromI64(yzh.dt, shp, iv))
	return nil
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// lowerPad lowers constant-mode Pad with non-negative pads by
// concatenating constant blocks (simplego has no Pad op); other modes and
// negative pads run on the host.
func lowerPad(c *lctx) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok || c.AStr("mode", "constant") != "constant" {
		return errUseHost
	}
	sh := c.Shape(0)
	r := len(sh)
	var pads []int64
	var err error
	if c.ver < 11 {
		pads = c.AInts("pads", c.AInts("paddings", nil))
	} else if pads, err = c.Ints(1); err != nil {
		return err
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if c.ver >= 18 && c.Has(3) {
		av, err := c.Ints(3)
		if err != nil {
			return err
		}
		axes = axes[:0]
		for _, a := range av {
			ax, err := normAxis(a, r)
			if err != nil {
				return err
			}
			axes = append(axes, ax)
		}
	}
	if len(pads) != 2*len(axes) {
		return fmt.Errorf("pads %v for %d axes", pads, len(axes))
	}
	val := float64(c.AFloat("value", 0))
	if c.ver >= 11 && c.Has(2) {
		vh, err := c.H(2)
		if err != nil {
			return err
		}
		if vh.size() > 0 {
			val = vh.f64()[0]
		}
	}
	x := c.X(0)
	for i, ax := range axes {
		b, e := int(pads[i]), int(pads[i+len(axes)])
		if b < 0 || e < 0 {
			return errUseHost
		}
		parts := []*graph.Node{}
		dims := x.Shape().Dimensions
		if b > 0 {
			d := append([]int{}, dims...)
			d[ax] = b
			parts = append(parts, graph.FillScalar(x.Graph(), shapes.Make(x.DType(), d...), val))
		}
		parts = append(parts, x)
		if e > 0 {
			d := append([]int{}, dims...)
			d[ax] = e
			parts = append(parts, graph.FillScalar(x.Graph(), shapes.Make(x.DType(), d...), val))
		}
		if len(parts) > 1 {
			x = graph.Concatenate(parts, ax)
		}
	}
	c.Out(0, x, dt)
	return nil
}
