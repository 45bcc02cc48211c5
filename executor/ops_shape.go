package executor

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// Shape manipulation: Shape, Size, Reshape, Transpose, Concat, Split,
// Squeeze, Unsqueeze, Flatten, Expand, Tile, Constant, ConstantOfShape,
// Range, EyeLike, Pad, CenterCropPad, SpaceToDepth, DepthToSpace.

func registerShape(r registry) {
	r.impl("", "Shape").shapeOnly = true
	r.host(hostShape, "Shape")
	r.impl("", "Size").shapeOnly = true
	r.host(func(c *lctx) error { c.OutH(0, scalarI64(int64(numel(c.Shape(0))))); return nil }, "Size")
	r.host(hostConstant, "Constant")
	for _, op := range []string{"Reshape", "Squeeze", "Unsqueeze", "Flatten"} {
		op := op
		f := func(c *lctx) error {
			sh, err := reshapeTarget(c, op)
			if err != nil {
				return err
			}
			return outReshaped(c, sh)
		}
		r.lower(f, op)
		r.host(f, op)
	}
	r.lower(lowerTranspose, "Transpose")
	r.host(lowerTranspose, "Transpose")
	r.lower(lowerConcat, "Concat")
	r.host(hostConcat, "Concat")
	r.lower(lowerSplit, "Split")
	r.host(lowerSplit, "Split")
	r.lower(lowerExpand, "Expand")
	r.host(lowerExpand, "Expand")
	r.lower(lowerTile, "Tile")
	r.host(lowerTile, "Tile")
	r.host(hostConstantOfShape, "ConstantOfShape")
	r.host(hostRange, "Range")
	r.host(hostEyeLike, "EyeLike")
	r.host(hostPad, "Pad")
	r.lower(lowerPad, "Pad")
	r.host(hostCenterCropPad, "CenterCropPad")
	r.host(hostSpaceToDepth, "SpaceToDepth")
	r.host(hostDepthToSpace, "DepthToSpace")
}

func hostShape(c *lctx) error {
	sh := c.Shape(0)
	r := int64(len(sh))
	start, end := c.AInt("start", 0), c.AInt("end", r)
	if c.ver < 15 {
		start, end = 0, r
	}
	if start < 0 {
		start += r
	}
	if end < 0 {
		end += r
	}
	start, end = clampI(start, 0, r), clampI(end, 0, r)
	var v []int64
	for i := start; i < end; i++ {
		v = append(v, int64(sh[i]))
	}
	c.OutH(0, fromI64(canonical.Int64, []int{len(v)}, v))
	return nil
}

func hostConstant(c *lctx) error {
	n := c.n
	for _, a := range n.Attributes {
		switch a.Name {
		case "value":
			h, err := fromCanonical(a.T)
			if err != nil {
				return err
			}
			c.OutH(0, h)
			return nil
		case "value_float":
			c.OutH(0, fromF64(canonical.Float, nil, []float64{float64(a.F)}))
			return nil
		case "value_floats":
			v := make([]float64, len(a.Floats))
			for i, f := range a.Floats {
				v[i] = float64(f)
			}
			c.OutH(0, fromF64(canonical.Float, []int{len(v)}, v))
			return nil
		case "value_int":
			c.OutH(0, scalarI64(a.I))
			return nil
		case "value_ints":
			c.OutH(0, fromI64(canonical.Int64, []int{len(a.Ints)}, a.Ints))
			return nil
		case "value_string":
			h := newH(canonical.String, nil)
			h.data.([]string)[0] = string(a.S)
			c.OutH(0, h)
			return nil
		case "value_strings":
			h := newH(canonical.String, []int{len(a.Strings)})
			for i, s := range a.Strings {
				h.data.([]string)[i] = string(s)
			}
			c.OutH(0, h)
			return nil
		case "sparse_value":
			return sparseConstant(c, a.SparseTensor)
		}
	}
	return fmt.Errorf("Constant has no value attribute")
}

// axesArg reads axes from attribute (old versions) or input idx.
func axesArg(c *lctx, inputFrom int, idx int) ([]int64, bool, error) {
	if c.ver < inputFrom {
		a := c.n.Attr("axes")
		if a == nil {
			return nil, false, nil
		}
		return a.Ints, true, nil
	}
	if !c.Has(idx) {
		return nil, false, nil
	}
	v, err := c.Ints(idx)
	return v, true, err
}

// resolveReshape is the shape Reshape's shape input sh gives an input
// of shape in (0 copies in's dim unless allowZero, −1 is inferred).
func resolveReshape(in []int, sh []int64, allowZero bool) ([]int, error) {
	r := len(in)
	out := make([]int, len(sh))
	infer := -1
	known := 1
	for i, d := range sh {
		switch {
		case d == 0 && !allowZero:
			if i >= r {
				return nil, fmt.Errorf("shape %v copies dim %d of a rank-%d input", sh, i, r)
			}
			out[i] = in[i]
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("shape %v has two -1", sh)
			}
			infer = i
			continue
		case d < 0:
			return nil, fmt.Errorf("bad shape %v", sh)
		default:
			out[i] = int(d)
		}
		known *= out[i]
	}
	if infer >= 0 {
		if known == 0 {
			out[infer] = 0
		} else {
			out[infer] = numel(in) / known
		}
	}
	if numel(out) != numel(in) {
		return nil, fmt.Errorf("cannot reshape %v to %v", in, sh)
	}
	return out, nil
}

func reshapeTarget(c *lctx, op string) ([]int, error) {
	in := c.Shape(0)
	r := len(in)
	switch op {
	case "Reshape":
		var sh []int64
		if c.ver < 5 {
			sh = c.AInts("shape", nil)
		} else {
			v, err := c.Ints(1)
			if err != nil {
				return nil, err
			}
			sh = v
		}
		return resolveReshape(in, sh, c.AInt("allowzero", 0) == 1)
	case "Flatten":
		a := c.AInt("axis", 1)
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a > int64(r) {
			return nil, fmt.Errorf("axis %d out of range", a)
		}
		return []int{numel(in[:a]), numel(in[a:])}, nil
	case "Squeeze":
		axes, ok, err := axesArg(c, 13, 1)
		if err != nil {
			return nil, err
		}
		drop := map[int]bool{}
		if !ok {
			for i, d := range in {
				if d == 1 {
					drop[i] = true
				}
			}
		}
		for _, a := range axes {
			ax, err := normAxis(a, r)
			if err != nil {
				return nil, err
			}
			if in[ax] != 1 {
				return nil, fmt.Errorf("cannot squeeze axis %d of size %d", ax, in[ax])
			}
			drop[ax] = true
		}
		var out []int
		for i, d := range in {
			if !drop[i] {
				out = append(out, d)
			}
		}
		return out, nil
	case "Unsqueeze":
		axes, _, err := axesArg(c, 13, 1)
		if err != nil {
			return nil, err
		}
		nr := r + len(axes)
		ins := map[int]bool{}
		for _, a := range axes {
			ax, err := normAxis(a, nr)
			if err != nil {
				return nil, err
			}
			ins[ax] = true
		}
		out := make([]int, 0, nr)
		j := 0
		for i := 0; i < nr; i++ {
			if ins[i] {
				out = append(out, 1)
			} else {
				out = append(out, in[j])
				j++
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown reshape op %s", op)
}

func outReshaped(c *lctx, sh []int) error {
	if c.lowering {
		if _, ok := gomlxDType(c.DT(0)); !ok {
			return errUseHost
		}
		c.Out(0, graph.Reshape(c.X(0), sh...), c.DT(0))
		return nil
	}
	h, err := c.H(0)
	if err != nil {
		return err
	}
	c.OutH(0, &htensor{dt: h.dt, shape: sh, data: h.data})
	return nil
}

func lowerTranspose(c *lctx) error {
	r := c.Rank(0)
	perm := c.AInts("perm", nil)
	p := make([]int, r)
	for i := range p {
		p[i] = r - 1 - i
	}
	if perm != nil {
		if len(perm) != r {
			return fmt.Errorf("perm %v for rank %d", perm, r)
		}
		for i, v := range perm {
			ax, err := normAxis(v, r)
			if err != nil {
				return err
			}
			p[i] = ax
		}
	}
	if c.lowering {
		if _, ok := gomlxDType(c.DT(0)); !ok {
			return errUseHost
		}
		if r == 0 {
			c.Out(0, c.X(0), c.DT(0))
			return nil
		}
		c.Out(0, graph.TransposeAllDims(c.X(0), p...), c.DT(0))
		return nil
	}
	h, err := c.H(0)
	if err != nil {
		return err
	}
	out, idx := transposeIdx(h.shape, p)
	c.OutH(0, hTake(h, out, idx))
	return nil
}

func lowerConcat(c *lctx) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok {
		return errUseHost
	}
	r := c.Rank(0)
	ax, err := normAxis(c.AInt("axis", 0), r)
	if err != nil {
		return err
	}
	var xs []*graph.Node
	for i := 0; i < c.NIn(); i++ {
		if c.Has(i) && numel(c.Shape(i)) > 0 {
			xs = append(xs, c.X(i))
		}
	}
	if len(xs) == 0 {
		return errUseHost
	}
	if len(xs) == 1 {
		c.Out(0, xs[0], dt)
		return nil
	}
	c.Out(0, graph.Concatenate(xs, ax), dt)
	return nil
}

func hostConcat(c *lctx) error {
	var hs []*htensor
	for i := 0; i < c.NIn(); i++ {
		if c.Has(i) {
			h, err := c.H(i)
			if err != nil {
				return err
			}
			hs = append(hs, h)
		}
	}
	r := len(hs[0].shape)
	ax, err := normAxis(c.AInt("axis", 0), r)
	if err != nil {
		return err
	}
	out := append([]int{}, hs[0].shape...)
	out[ax] = 0
	for _, h := range hs {
		if len(h.shape) != r {
			return fmt.Errorf("concat of ranks %d and %d", r, len(h.shape))
		}
		out[ax] += h.shape[ax]
	}
	outer := numel(out[:ax])
	var idx []int
	offs := make([]int, len(hs))
	parts := make([]any, len(hs))
	o := 0
	for k, h := range hs {
		offs[k] = o
		o += h.size()
		parts[k] = h.data
	}
	for i := 0; i < outer; i++ {
		for k, h := range hs {
			chunk := numel(h.shape[ax:])
			base := offs[k] + i*chunk
			for j := 0; j < chunk; j++ {
				idx = append(idx, base+j)
			}
		}
	}
	all := &htensor{dt: hs[0].dt, data: concatAny(parts)}
	c.OutH(0, hTake(all, out, idx))
	return nil
}

// sliceH returns x[start:end] along axis (step 1).
func sliceH(h *htensor, axis, start, end int) *htensor {
	out := append([]int{}, h.shape...)
	out[axis] = end - start
	if x, ok := h.data.([]float32); ok {
		specs := make([]sliceSpec, len(h.shape))
		for d, n := range h.shape {
			specs[d] = sliceSpec{start: 0, step: 1, count: n}
		}
		specs[axis] = sliceSpec{start: start, step: 1, count: end - start}
		return &htensor{dt: h.dt, shape: out, data: sliceF32(x, h.shape, specs)}
	}
	st := strides(h.shape)
	idx := make([]int, 0, numel(out))
	forEachIndex(out, func(o []int) {
		k := 0
		for d, v := range o {
			if d == axis {
				v += start
			}
			k += v * st[d]
		}
		idx = append(idx, k)
	})
	return hTake(h, out, idx)
}

func lowerSplit(c *lctx) error {
	sh := c.Shape(0)
	ax, err := normAxis(c.AInt("axis", 0), len(sh))
	if err != nil {
		return err
	}
	nOut := c.NOut()
	var split []int64
	if c.ver < 13 {
		split = c.AInts("split", nil)
		if split == nil && c.Has(1) {
			if split, err = c.Ints(1); err != nil {
				return err
			}
		}
	} else if c.Has(1) {
		if split, err = c.Ints(1); err != nil {
			return err
		}
	}
	if split == nil {
		n := nOut
		if c.ver >= 18 && c.HasAttr("num_outputs") {
			n = int(c.AInt("num_outputs", int64(nOut)))
		}
		size := (sh[ax] + n - 1) / n
		rem := sh[ax]
		for i := 0; i < n; i++ {
			s := size
			if s > rem {
				s = rem
			}
			split = append(split, int64(s))
			rem -= s
		}
	}
	sum := int64(0)
	for _, s := range split {
		if s < 0 {
			return fmt.Errorf("split %v has a negative size", split)
		}
		sum += s
	}
	if sum != int64(sh[ax]) || len(split) != nOut {
		return fmt.Errorf("split %v (sum %d) into %d outputs does not fit axis %d of size %d", split, sum, nOut, ax, sh[ax])
	}
	for _, s := range split {
		if s == 0 && c.lowering {
			return errUseHost
		}
	}
	start := 0
	for i, s := range split {
		end := start + int(s)
		if c.lowering {
			if _, ok := gomlxDType(c.DT(0)); !ok {
				return errUseHost
			}
			c.Out(i, graph.SliceAxis(c.X(0), ax, graph.AxisRange(start, end)), c.DT(0))
		} else {
			h, err := c.H(0)
			if err != nil {
				return err
			}
			if x, ok := h.data.([]float32); ok {
				out := append([]int{}, h.shape...)
				out[ax] = end - start
				specs := make([]sliceSpec, len(h.shape))
				for d, n := range h.shape {
					specs[d] = sliceSpec{start: 0, step: 1, count: n}
				}
				specs[ax] = sliceSpec{start: start, step: 1, count: end - start}
				c.OutH(i, c.hostSliceF32(h, x, out, specs))
			} else {
				c.OutH(i, sliceH(h, ax, start, end))
			}
		}
		start = end
	}
	return nil
}

func lowerExpand(c *lctx) error {
	shv, err := c.Ints(1)
	if err != nil {
		return err
	}
	out, err := bcastShape(c.Shape(0), toInts(shv))
	if err != nil {
		return err
	}
	if err := checkSize(out); err != nil {
		return err
	}
	if c.lowering {
		if _, ok := gomlxDType(c.DT(0)); !ok {
			return errUseHost
		}
		c.Out(0, bcastTo(c.X(0), out), c.DT(0))
		return nil
	}
	h, err := c.H(0)
	if err != nil {
		return err
	}
	c.OutH(0, hTake(h, out, bcastIdx(out, h.shape)))
	return nil
}

func lowerTile(c *lctx) error {
	rep, err := c.Ints(1)
	if err != nil {
		return err
	}
	in := c.Shape(0)
	if len(rep) != len(in) {
		return fmt.Errorf("repeats %v for rank %d", rep, len(in))
	}
	out := make([]int, len(in))
	for i := range in {
		out[i] = in[i] * int(rep[i])
	}
	if err := checkSize(out); err != nil {
		return err
	}
	if c.lowering {
		if _, ok := gomlxDType(c.DT(0)); !ok {
			return errUseHost
		}
		// x[r0,d0,r1,d1,...] then reshape
		x := c.X(0)
		var exp, bshape []int
		for i, d := range in {
			exp = append(exp, 1, d)
			bshape = append(bshape, int(rep[i]), d)
		}
		x = graph.Reshape(x, exp...)
		x = graph.BroadcastToDims(x, bshape...)
		c.Out(0, graph.Reshape(x, out...), c.DT(0))
		return nil
	}
	h, err := c.H(0)
	if err != nil {
		return err
	}
	st := strides(in)
	idx := make([]int, 0, numel(out))
	forEachIndex(out, func(o []int) {
		k := 0
		for d, v := range o {
			k += (v % in[d]) * st[d]
		}
		idx = append(idx, k)
	})
	c.OutH(0, hTake(h, out, idx))
	return nil
}

func hostConstantOfShape(c *lctx) error {
	sh, err := c.Ints(0)
	if err != nil {
		return err
	}
	out := toInts(sh)
	if err := checkSize(out); err != nil {
		return err
	}
	val := fromF64(canonical.Float, nil, []float64{0})
	if a := c.n.Attr("value"); a != nil && a.T != nil {
		if val, err = fromCanonical(a.T); err != nil {
			return err
		}
	}
	idx := make([]int, numel(out))
	c.OutH(0, hTake(val, out, idx))
	return nil
}

func hostRange(c *lctx) error {
	s, err := c.H(0)
	if err != nil {
		return err
	}
	l, err := c.H(1)
	if err != nil {
		return err
	}
	d, err := c.H(2)
	if err != nil {
		return err
	}
	if isIntType(s.dt) {
		a, b, st := s.i64()[0], l.i64()[0], d.i64()[0]
		if st == 0 {
			return fmt.Errorf("Range delta is 0")
		}
		n := int64(math.Max(math.Ceil(float64(b-a)/float64(st)), 0))
		if n > maxHostElems {
			return fmt.Errorf("Range of %d elements", n)
		}
		v := make([]int64, n)
		for i := range v {
			v[i] = a + int64(i)*st
		}
		c.OutH(0, fromI64(s.dt, []int{int(n)}, v))
		return nil
	}
	a, b, st := s.f64()[0], l.f64()[0], d.f64()[0]
	if st == 0 {
		return fmt.Errorf("Range delta is 0")
	}
	nf := math.Max(math.Ceil((b-a)/st), 0)
	if nf > maxHostElems {
		return fmt.Errorf("Range of %g elements", nf)
	}
	n := int(nf)
	v := make([]float64, n)
	for i := range v {
		v[i] = a + float64(i)*st
	}
	c.OutH(0, fromF64(s.dt, []int{n}, v))
	return nil
}

func sparseConstant(c *lctx, sp *onnxpb.SparseTensorProto) error {
	if sp == nil {
		return fmt.Errorf("sparse_value is empty")
	}
	vt, err := canonical.TensorFromProto(sp.GetValues())
	if err != nil {
		return err
	}
	it, err := canonical.TensorFromProto(sp.GetIndices())
	if err != nil {
		return err
	}
	vals, err := fromCanonical(vt)
	if err != nil {
		return err
	}
	ind, err := fromCanonical(it)
	if err != nil {
		return err
	}
	dims := toInts(sp.GetDims())
	out := newH(vals.dt, dims)
	iv := ind.i64()
	nnz := vals.size()
	st := strides(dims)
	flat := make([]int, nnz)
	for k := 0; k < nnz; k++ {
		if len(ind.shape) == 2 {
			f := 0
			for d := range dims {
				f += int(iv[k*len(dims)+d]) * st[d]
			}
			flat[k] = f
		} else {
			flat[k] = int(iv[k])
		}
	}
	of := out.f64()
	vf := vals.f64()
	for k, f := range flat {
		if f < 0 || f >= len(of) {
			return fmt.Errorf("sparse index %d out of range", f)
		}
		of[f] = vf[k]
	}
	c.OutH(0, fromF64(vals.dt, dims, of))
	return nil
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
