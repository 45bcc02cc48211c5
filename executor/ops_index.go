package executor

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Indexing: Slice, Gather, GatherElements, GatherND, ScatterElements,
// ScatterND, Trilu, OneHot, NonZero, TopK, Compress, ReverseSequence,
// Unique, TensorScatter.

func registerIndex(r registry) {
	r.lower(sliceOp, "Slice")
	r.host(sliceOp, "Slice")
	r.lower(lowerGather, "Gather")
	r.host(hostGather, "Gather")
	r.host(hostGatherElements, "GatherElements")
	r.host(hostGatherND, "GatherND")
	r.host(hostScatterElements, "ScatterElements", "Scatter")
	r.host(hostScatterND, "ScatterND")
	r.host(hostTrilu, "Trilu")
	r.host(hostOneHot, "OneHot")
	r.host(hostNonZero, "NonZero")
	r.host(hostTopK, "TopK")
	r.host(hostCompress, "Compress")
	r.host(hostReverseSequence, "ReverseSequence")
	r.host(hostUnique, "Unique")
	r.host(hostTensorScatter, "TensorScatter")
}

type sliceSpec struct{ start, step, count int }

func sliceSpecs(c *lctx) ([]sliceSpec, error) {
	sh := c.Shape(0)
	r := len(sh)
	var starts, ends, axes, steps []int64
	var err error
	if c.ver < 10 {
		starts, ends, axes = c.AInts("starts", nil), c.AInts("ends", nil), c.AInts("axes", nil)
	} else {
		if starts, err = c.Ints(1); err != nil {
			return nil, err
		}
		if ends, err = c.Ints(2); err != nil {
			return nil, err
		}
		if c.Has(3) {
			if axes, err = c.Ints(3); err != nil {
				return nil, err
			}
		}
		if c.Has(4) {
			if steps, err = c.Ints(4); err != nil {
				return nil, err
			}
		}
	}
	// starts, ends, axes and steps hold one value per sliced axis; a
	// mismatch (an empty tensor computed at run time) is the model's
	// error, named with the input, not an index out of range.
	for _, l := range []struct {
		name string
		in   int
		v    []int64
		set  bool
	}{{"ends", 2, ends, true}, {"axes", 3, axes, axes != nil}, {"steps", 4, steps, steps != nil}} {
		if l.set && len(l.v) != len(starts) {
			return nil, fmt.Errorf("Slice %q: input %d (%s%s) has %d values and input 1 (starts%s) has %d: they must have one per sliced axis",
				c.n.Name, l.in, l.name, c.inName(l.in), len(l.v), c.inName(1), len(starts))
		}
	}
	specs := make([]sliceSpec, r)
	for i, d := range sh {
		specs[i] = sliceSpec{0, 1, d}
	}
	for k := range starts {
		ax := k
		if axes != nil {
			a, err := normAxis(axes[k], r)
			if err != nil {
				return nil, err
			}
			ax = a
		}
		step := int64(1)
		if steps != nil {
			step = steps[k]
		}
		if step == 0 {
			return nil, fmt.Errorf("slice step 0")
		}
		d := int64(sh[ax])
		s, e := starts[k], ends[k]
		if s < 0 {
			s += d
		}
		if e < 0 {
			e += d
		}
		var cnt int64
		if step > 0 {
			s, e = clampI(s, 0, d), clampI(e, 0, d)
			if e > s {
				cnt = (e - s + step - 1) / step
			}
		} else {
			s, e = clampI(s, 0, d-1), clampI(e, -1, d-1)
			if s > e {
				cnt = (s - e - step - 1) / (-step)
			}
		}
		specs[ax] = sliceSpec{int(s), int(step), int(cnt)}
	}
	return specs, nil
}

// inName is ", named NAME" for input i of the node when it has a name
// (before opset 10 the lists are attributes: none).
func (c *lctx) inName(i int) string {
	if c.ver < 10 || i >= len(c.n.Inputs) || c.n.Inputs[i] == nil || c.n.Inputs[i].Name == "" {
		return ""
	}
	return fmt.Sprintf(", named %q", c.n.Inputs[i].Name)
}

func sliceOp(c *lctx) error {
	specs, err := sliceSpecs(c)
	if err != nil {
		return err
	}
	out := make([]int, len(specs))
	neg := false
	for i, s := range specs {
		out[i] = s.count
		if s.step < 0 {
			neg = true
		}
	}
	if c.lowering {
		if _, ok := gomlxDType(c.DT(0)); !ok || neg || numel(out) == 0 {
			return errUseHost
		}
		ax := make([]graph.SliceAxisSpec, len(specs))
		for i, s := range specs {
			ax[i] = graph.AxisRange(s.start, s.start+(s.count-1)*s.step+1).Stride(s.step)
		}
		c.Out(0, graph.Slice(c.X(0), ax...), c.DT(0))
		return nil
	}
	if h := c.in(0).h; c.nhwc && h != nil && h.nhwc && len(specs) == 4 {
		c.OutH(0, c.sliceNHWC(h, out, specs))
		return nil
	}
	h, err := c.H(0)
	if err != nil {
		return err
	}
	if x, ok := h.data.([]float32); ok {
		c.OutH(0, c.hostSliceF32(h, x, out, specs))
		return nil
	}
	st := strides(h.shape)
	idx := make([]int, 0, numel(out))
	forEachIndex(out, func(o []int) {
		k := 0
		for d, v := range o {
			k += (specs[d].start + v*specs[d].step) * st[d]
		}
		idx = append(idx, k)
	})
	c.OutH(0, hTake(h, out, idx))
	return nil
}

// sliceNHWC is the Slice (specs, of output shape out) of h, a float32
// [N, C, H, W] tensor stored channels last, stored channels last too: the
// plan keeps the Slice's output so (nhwc.go; ShuffleNet's halves of a
// shuffled tensor).
func (c *lctx) sliceNHWC(h *htensor, out []int, specs []sliceSpec) *htensor {
	h = denseNHWC(h)
	s := h.shape
	x, _ := f32(h)
	if ch := specs[1]; ch.step == 1 && wholeAxes(s, specs, 1) {
		px := s[0] * s[2] * s[3]
		if c.sliceView && ch.count < s[1] && px > 0 && ch.count > 0 {
			// Its one reader takes a window of the channels as it is
			// (markSliceViews): no copy.
			n := (px-1)*s[1] + ch.count
			return &htensor{dt: h.dt, shape: append([]int{}, out...), data: x[ch.start : ch.start+n : ch.start+n], borrowed: h.borrowed, nhwc: true, ld: s[1]}
		}
		// Some channels of every pixel: rows of them.
		y := c.newHAs(h.dt, out, false)
		y.nhwc = true
		yd, _ := f32(y)
		c.e.kern.Range(px, ch.count, func(lo, hi int) {
			// The sizes are checked: CopyRows cannot fail here.
			_ = kernels.CopyRows(hi-lo, ch.count, x[lo*s[1]+ch.start:], s[1], yd[lo*ch.count:], ch.count)
		})
		return y
	}
	view := &htensor{dt: h.dt, shape: []int{s[0], s[2], s[3], s[1]}, data: x, borrowed: h.borrowed}
	y := c.hostSliceF32(view, x, []int{out[0], out[2], out[3], out[1]}, []sliceSpec{specs[0], specs[2], specs[3], specs[1]})
	return &htensor{dt: y.dt, shape: append([]int{}, out...), data: y.data, borrowed: y.borrowed, nhwc: true}
}

// wholeAxes reports whether specs take every element of each axis of
// shape but axis skip.
func wholeAxes(shape []int, specs []sliceSpec, skip int) bool {
	for d, sp := range specs {
		if d != skip && (sp.start != 0 || sp.step != 1 || sp.count != shape[d]) {
			return false
		}
	}
	return true
}

func lowerGather(c *lctx) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok {
		return errUseHost
	}
	sh := c.Shape(0)
	r := len(sh)
	ax, err := normAxis(c.AInt("axis", 0), r)
	if err != nil {
		return err
	}
	// Zero-size data or indices (a selection that kept nothing) run on
	// the host, decided before X makes the inputs segment parameters.
	is := c.Shape(1)
	if numel(is) == 0 || numel(sh) == 0 {
		return errUseHost
	}
	x, ind := c.X(0), c.X(1)
	ind = graph.ConvertDType(ind, gdt(canonical.Int64))
	ind = graph.Where(graph.LessThan(ind, scalarLike(ind, 0)), graph.Add(ind, scalarLike(ind, float64(sh[ax]))), ind)
	// move axis to front
	perm := []int{ax}
	for i := 0; i < r; i++ {
		if i != ax {
			perm = append(perm, i)
		}
	}
	xt := x
	if ax != 0 {
		xt = graph.TransposeAllDims(x, perm...)
	}
	if r == 1 {
		xt = graph.Reshape(xt, sh[0], 1)
	}
	y := graph.Gather(xt, graph.Reshape(ind, numel(is), 1))
	rest := xt.Shape().Dimensions[1:]
	if r == 1 {
		rest = nil
	}
	y = graph.Reshape(y, append(append([]int{}, is...), rest...)...)
	// y: is + sh[:ax] + sh[ax+1:]  -> want sh[:ax] + is + sh[ax+1:]
	ni := len(is)
	if ax != 0 {
		var p []int
		for i := 0; i < ax; i++ {
			p = append(p, ni+i)
		}
		for i := 0; i < ni; i++ {
			p = append(p, i)
		}
		for i := ni + ax; i < ni+r-1; i++ {
			p = append(p, i)
		}
		y = graph.TransposeAllDims(y, p...)
	}
	c.Out(0, y, dt)
	return nil
}

func hostGather(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ih, err := c.H(1)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", 0), len(h.shape))
	if err != nil {
		return err
	}
	y, err := gatherAxis(h, ih, ax)
	if err != nil {
		return err
	}
	c.OutH(0, y)
	return nil
}

// gatherAxis is Gather: the slices of h along axis ax that ih's indices
// (negative from the end) pick, ih's shape in place of the axis.
func gatherAxis(h, ih *htensor, ax int) (*htensor, error) {
	ind := ih.i64()
	out := append(append(append([]int{}, h.shape[:ax]...), ih.shape...), h.shape[ax+1:]...)
	outer, inner, d := numel(h.shape[:ax]), numel(h.shape[ax+1:]), h.shape[ax]
	idx := make([]int, 0, numel(out))
	for o := 0; o < outer; o++ {
		for _, i := range ind {
			if i < 0 {
				i += int64(d)
			}
			if i < 0 || i >= int64(d) {
				return nil, fmt.Errorf("index %d out of range [0,%d)", i, d)
			}
			for k := 0; k < inner; k++ {
				idx = append(idx, (o*d+int(i))*inner+k)
			}
		}
	}
	return hTake(h, out, idx), nil
}

func hostGatherElements(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ih, err := c.H(1)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", 0), len(h.shape))
	if err != nil {
		return err
	}
	ind := ih.i64()
	st := strides(h.shape)
	idx := make([]int, 0, len(ind))
	k := 0
	var bad error
	forEachIndex(ih.shape, func(o []int) {
		f := 0
		for d, v := range o {
			if d == ax {
				i := ind[k]
				if i < 0 {
					i += int64(h.shape[ax])
				}
				if i < 0 || i >= int64(h.shape[ax]) {
					bad = fmt.Errorf("index %d out of range", ind[k])
				}
				v = int(i)
			}
			f += v * st[d]
		}
		idx = append(idx, f)
		k++
	})
	if bad != nil {
		return bad
	}
	c.OutH(0, hTake(h, ih.shape, idx))
	return nil
}

func hostGatherND(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ih, err := c.H(1)
	if err != nil {
		return err
	}
	b := int(c.AInt("batch_dims", 0))
	ind := ih.i64()
	q := len(ih.shape)
	kk := ih.shape[q-1]
	out := append(append([]int{}, ih.shape[:q-1]...), h.shape[b+kk:]...)
	st := strides(h.shape)
	inner := numel(h.shape[b+kk:])
	nb := numel(h.shape[:b])
	per := numel(ih.shape[b : q-1])
	idx := make([]int, 0, numel(out))
	for bi := 0; bi < nb; bi++ {
		for p := 0; p < per; p++ {
			tup := ind[(bi*per+p)*kk : (bi*per+p+1)*kk]
			f := bi * numel(h.shape[b:])
			for j, v := range tup {
				d := h.shape[b+j]
				if v < 0 {
					v += int64(d)
				}
				f += int(v) * st[b+j]
			}
			for k := 0; k < inner; k++ {
				idx = append(idx, f+k)
			}
		}
	}
	c.OutH(0, hTake(h, out, idx))
	return nil
}

func reduceInto(dst []float64, k int, v float64, red string) {
	switch red {
	case "add":
		dst[k] += v
	case "mul":
		dst[k] *= v
	case "max":
		dst[k] = math.Max(dst[k], v)
	case "min":
		dst[k] = math.Min(dst[k], v)
	default:
		dst[k] = v
	}
}

func hostScatterElements(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ih, err := c.H(1)
	if err != nil {
		return err
	}
	uh, err := c.H(2)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", 0), len(h.shape))
	if err != nil {
		return err
	}
	red := c.AStr("reduction", "none")
	data := h.f64()
	upd := uh.f64()
	ind := ih.i64()
	st := strides(h.shape)
	k := 0
	forEachIndex(ih.shape, func(o []int) {
		f := 0
		for d, v := range o {
			if d == ax {
				i := ind[k]
				if i < 0 {
					i += int64(h.shape[ax])
				}
				v = int(i)
			}
			f += v * st[d]
		}
		reduceInto(data, f, upd[k], red)
		k++
	})
	c.OutH(0, fromF64(h.dt, h.shape, data))
	return nil
}

func hostScatterND(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ih, err := c.H(1)
	if err != nil {
		return err
	}
	uh, err := c.H(2)
	if err != nil {
		return err
	}
	red := c.AStr("reduction", "none")
	data := h.f64()
	upd := uh.f64()
	ind := ih.i64()
	q := len(ih.shape)
	kk := ih.shape[q-1]
	st := strides(h.shape)
	inner := numel(h.shape[kk:])
	n := numel(ih.shape[:q-1])
	for p := 0; p < n; p++ {
		f := 0
		for j, v := range ind[p*kk : (p+1)*kk] {
			if v < 0 {
				v += int64(h.shape[j])
			}
			f += int(v) * st[j]
		}
		for k := 0; k < inner; k++ {
			reduceInto(data, f+k, upd[p*inner+k], red)
		}
	}
	c.OutH(0, fromF64(h.dt, h.shape, data))
	return nil
}

func hostTrilu(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	k := int64(0)
	if c.Has(1) {
		kv, err := c.Ints(1)
		if err != nil {
			return err
		}
		k = kv[0]
	}
	upper := c.AInt("upper", 1) == 1
	r := len(h.shape)
	rows, cols := h.shape[r-2], h.shape[r-1]
	n := h.size()
	idx := make([]int, n)
	zeroAt := h.size()
	all := &htensor{dt: h.dt, data: concatAny([]any{h.data, newH(h.dt, []int{1}).data})}
	for f := 0; f < n; f++ {
		j := f % cols
		i := (f / cols) % rows
		keep := int64(j-i) >= k
		if !upper {
			keep = int64(j-i) <= k
		}
		if keep {
			idx[f] = f
		} else {
			idx[f] = zeroAt
		}
	}
	c.OutH(0, hTake(all, h.shape, idx))
	return nil
}

func hostOneHot(c *lctx) error {
	ih, err := c.H(0)
	if err != nil {
		return err
	}
	dh, err := c.H(1)
	if err != nil {
		return err
	}
	vh, err := c.H(2)
	if err != nil {
		return err
	}
	depth := int(dh.f64()[0])
	r := len(ih.shape) + 1
	ax, err := normAxis(c.AInt("axis", -1), r)
	if err != nil {
		return err
	}
	out := append(append(append([]int{}, ih.shape[:ax]...), depth), ih.shape[ax:]...)
	ind := ih.f64()
	inner := numel(ih.shape[ax:])
	idx := make([]int, numel(out))
	f := 0
	forEachIndex(out, func(o []int) {
		outerI := numel(ih.shape[ax:]) // placeholder to keep vet quiet
		_ = outerI
		flatIn := 0
		// index into ih: o without axis ax
		m := 0
		st := strides(ih.shape)
		for d, v := range o {
			if d == ax {
				continue
			}
			flatIn += v * st[m]
			m++
		}
		want := int(ind[flatIn])
		if want < 0 {
			want += depth
		}
		if o[ax] == want {
			idx[f] = 1
		}
		f++
	})
	_ = inner
	c.OutH(0, hTake(vh, out, idx))
	return nil
}

func hostNonZero(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	v := h.f64()
	r := len(h.shape)
	var coords [][]int
	k := 0
	forEachIndex(h.shape, func(o []int) {
		if v[k] != 0 {
			coords = append(coords, append([]int{}, o...))
		}
		k++
	})
	if r == 0 && len(v) == 1 && v[0] != 0 {
		coords = [][]int{{}}
	}
	out := make([]int64, r*len(coords))
	for j, cd := range coords {
		for d := 0; d < r; d++ {
			out[d*len(coords)+j] = int64(cd[d])
		}
	}
	c.OutH(0, fromI64(canonical.Int64, []int{r, len(coords)}, out))
	return nil
}

// topKArgs reads TopK's operands: the data, K (an attribute before
// opset 10, input 1 after) checked against the axis, and the axis.
func topKArgs(c *lctx) (h *htensor, k, ax int, err error) {
	h, err = c.H(0)
	if err != nil {
		return nil, 0, 0, err
	}
	if c.ver < 10 {
		k = int(c.AInt("k", 0))
	} else {
		kv, err := c.Ints(1)
		if err != nil {
			return nil, 0, 0, err
		}
		if len(kv) != 1 {
			return nil, 0, 0, fmt.Errorf("TopK: K has %d values, want 1", len(kv))
		}
		k = int(kv[0])
	}
	ax, err = normAxis(c.AInt("axis", -1), len(h.shape))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("TopK: %w", err)
	}
	if n := h.shape[ax]; k < 0 || k > n {
		return nil, 0, 0, fmt.Errorf("TopK: K = %d for an axis of %d", k, n)
	}
	return h, k, ax, nil
}

func hostTopK(c *lctx) error {
	h, k, ax, err := topKArgs(c)
	if err != nil {
		return err
	}
	largest, sorted := c.AInt("largest", 1) == 1, c.AInt("sorted", 1) == 1
	_ = sorted
	v := h.f64()
	st := strides(h.shape)
	n := h.shape[ax]
	out := append([]int{}, h.shape...)
	out[ax] = k
	ost := strides(out)
	vals := make([]int, numel(out))
	inds := make([]int64, numel(out))
	outer := append([]int{}, h.shape...)
	outer[ax] = 1
	forEachIndex(outer, func(o []int) {
		base, obase := 0, 0
		for d, x := range o {
			base += x * st[d]
			obase += x * ost[d]
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			x, y := v[base+order[a]*st[ax]], v[base+order[b]*st[ax]]
			if largest {
				return x > y
			}
			return x < y
		})
		for j := 0; j < k; j++ {
			vals[obase+j*ost[ax]] = base + order[j]*st[ax]
			inds[obase+j*ost[ax]] = int64(order[j])
		}
	})
	c.OutH(0, hTake(h, out, vals))
	c.OutH(1, fromI64(canonical.Int64, out, inds))
	return nil
}

func hostCompress(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ch, err := c.H(1)
	if err != nil {
		return err
	}
	cond := ch.f64()
	if !c.HasAttr("axis") {
		var idx []int
		for i := 0; i < h.size() && i < len(cond); i++ {
			if cond[i] != 0 {
				idx = append(idx, i)
			}
		}
		c.OutH(0, hTake(h, []int{len(idx)}, idx))
		return nil
	}
	ax, err := normAxis(c.AInt("axis", 0), len(h.shape))
	if err != nil {
		return err
	}
	var keep []int
	for i := 0; i < h.shape[ax] && i < len(cond); i++ {
		if cond[i] != 0 {
			keep = append(keep, i)
		}
	}
	out := append([]int{}, h.shape...)
	out[ax] = len(keep)
	st := strides(h.shape)
	idx := make([]int, 0, numel(out))
	forEachIndex(out, func(o []int) {
		f := 0
		for d, v := range o {
			if d == ax {
				v = keep[v]
			}
			f += v * st[d]
		}
		idx = append(idx, f)
	})
	c.OutH(0, hTake(h, out, idx))
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
	if len(h.shape) < 2 || bax < 0 || tax < 0 || bax >= len(h.shape) || tax >= len(h.shape) || bax == tax {
		return fmt.Errorf("batch_axis %d and time_axis %d do not fit input of shape %v", bax, tax, h.shape)
	}
	if len(lens) != h.shape[bax] {
		return fmt.Errorf("sequence_lens has %d values, the batch holds %d", len(lens), h.shape[bax])
	}
	for b, l := range lens {
		if l < 0 || l > int64(h.shape[tax]) {
			return fmt.Errorf("sequence_lens[%d] = %d is outside [0, %d] (the time axis)", b, l, h.shape[tax])
		}
	}
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
