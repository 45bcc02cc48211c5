package torchscript

import (
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
)

// atenIndex converts aten::index.
func (c *conv) atenIndex(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.self()
	if err != nil {
		return nil, err
	}
	// x[None, idx, …]: one index tensor, at the axis of its position
	l, ok := call.arg(1, "indices").(*list)
	if !ok {
		return nil, nil
	}
	ax, idx := -1, (*tensor)(nil)
	for i, it := range l.items {
		if it == nil {
			continue
		}
		t, ok := it.(*tensor)
		if !ok || idx != nil || t.dt == canonical.Bool {
			return nil, nil // several index tensors or a mask
		}
		ax, idx = i, t
	}
	if idx == nil || ax >= x.rank() {
		return nil, nil
	}
	return c.gather(x, idx, ax), nil
}

// atenIndexSelect converts aten::index_select.
func (c *conv) atenIndexSelect(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.self()
	if err != nil {
		return nil, err
	}
	d, _ := call.arg(1, "dim").(int64)
	idx, ok := call.arg(2, "index").(*tensor)
	if !ok {
		return nil, c.errAt(p, "index_select index %s", describe(call.arg(2, "index")))
	}
	ax, err := c.axis(p, d, x.rank())
	if err != nil {
		return nil, err
	}
	return c.gather(x, idx, ax), nil
}

// atenGroupNorm converts aten::group_norm.
func (c *conv) atenGroupNorm(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.self()
	if err != nil {
		return nil, err
	}
	g, _ := call.arg(1, "num_groups").(int64)
	w, _ := call.arg(2, "weight").(*tensor)
	b, _ := call.arg(3, "bias").(*tensor)
	eps, _ := num(orDefault(call.arg(4, "eps"), 1e-5))
	if g <= 0 || x.rank() < 3 || x.dims[1]%g != 0 {
		return nil, c.errAt(p, "group_norm of %v in %d groups", x.dims, g)
	}
	// normalize [N, G, C/G·spatial] over its last axis, then scale per channel
	shape := []int64{x.dims[0], g, prod(x.dims[1:]) / g}
	r := c.reshape(x, shape)
	mean := c.out("ReduceMean", "gn_mean", []string{r.name}, x.dt, []int64{shape[0], g, 1}, canonical.IntsAttr("axes", []int64{2}...), canonical.IntAttr("keepdims", 1))
	d := c.out("Sub", "gn_d", []string{r.name, mean.name}, x.dt, shape)
	sq := c.out("Mul", "gn_sq", []string{d.name, d.name}, x.dt, shape)
	vr := c.out("ReduceMean", "gn_var", []string{sq.name}, x.dt, []int64{shape[0], g, 1}, canonical.IntsAttr("axes", []int64{2}...), canonical.IntAttr("keepdims", 1))
	e, _ := c.constOf(eps, x.dt)
	ve := c.out("Add", "gn_ve", []string{vr.name, e.name}, x.dt, vr.dims)
	sd := c.out("Sqrt", "gn_sd", []string{ve.name}, x.dt, vr.dims)
	y := c.reshape(c.out("Div", "gn", []string{d.name, sd.name}, x.dt, shape), x.dims)
	bshape := append([]int64{x.dims[1]}, rep([]int64{1}, x.rank()-2)...)
	if x.rank() == 3 {
		bshape = []int64{x.dims[1], 1}
	}
	if w != nil {
		y = c.out("Mul", "gn_w", []string{y.name, c.reshape(w, bshape).name}, x.dt, x.dims)
	}
	if b != nil {
		y = c.out("Add", "gn_b", []string{y.name, c.reshape(b, bshape).name}, x.dt, x.dims)
	}
	return y, nil
}

// atenUpsample converts aten::upsample_nearest1d, aten::upsample_nearest2d,
// aten::upsample_nearest3d, aten::upsample_bilinear2d,
// aten::upsample_linear1d.
func (c *conv) atenUpsample(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.self()
	if err != nil {
		return nil, err
	}
	nd := x.rank() - 2
	var out []int64
	if s, ok := intsOf(call.arg(1, "output_size")); ok && len(s) == nd {
		out = s
	} else {
		scales := call.arg(2, "scale_factors")
		if name == "upsample_bilinear2d" || name == "upsample_linear1d" {
			scales = call.arg(3, "scale_factors")
		}
		l, ok := scales.(*list)
		if !ok || len(l.items) != nd {
			return nil, nil
		}
		for i, it := range l.items {
			f, ok := num(it)
			if !ok {
				return nil, nil
			}
			out = append(out, int64(math.Floor(float64(x.dims[2+i])*f)))
		}
	}
	dims := append(slices.Clone(x.dims[:2]), out...)
	mode, ctm, nm := "nearest", "asymmetric", "floor"
	if name == "upsample_bilinear2d" || name == "upsample_linear1d" {
		mode, nm = "linear", "floor"
		ctm = "pytorch_half_pixel"
		if ac, _ := call.arg(2, "align_corners").(bool); ac {
			ctm = "align_corners"
		}
	}
	sizes := c.b.Ints("sizes", dims...)
	return c.out("Resize", name, []string{x.name, "", "", sizes}, x.dt, dims,
		canonical.StringAttr("mode", mode), canonical.StringAttr("coordinate_transformation_mode", ctm), canonical.StringAttr("nearest_mode", nm)), nil
}

// atenConvTranspose converts aten::conv_transpose1d, aten::conv_transpose2d,
// aten::conv_transpose3d.
func (c *conv) atenConvTranspose(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.self()
	if err != nil {
		return nil, err
	}
	w, ok := call.arg(1, "weight").(*tensor)
	if !ok {
		return nil, c.errAt(p, "%s weight %s", name, describe(call.arg(1, "weight")))
	}
	nd := x.rank() - 2
	get := func(i int, k string, def int64) []int64 {
		r, ok := intsOf(call.arg(i, k))
		if !ok {
			r = []int64{def}
		}
		return rep(r, nd)
	}
	stride, pad, outPad := get(3, "stride", 1), get(4, "padding", 0), get(5, "output_padding", 0)
	groups, _ := call.arg(6, "groups").(int64)
	if groups == 0 {
		groups = 1
	}
	dil := get(7, "dilation", 1)
	dims := []int64{x.dims[0], w.dims[1] * groups}
	for i := 0; i < nd; i++ {
		dims = append(dims, (x.dims[2+i]-1)*stride[i]-2*pad[i]+dil[i]*(w.dims[2+i]-1)+outPad[i]+1)
	}
	in := []string{x.name, w.name}
	if b, ok := call.arg(2, "bias").(*tensor); ok {
		in = append(in, b.name)
	}
	return c.out("ConvTranspose", name, in, x.dt, dims, canonical.IntsAttr("kernel_shape", w.dims[2:]...), canonical.IntsAttr("strides", stride...),
		canonical.IntsAttr("pads", append(slices.Clone(pad), pad...)...), canonical.IntsAttr("output_padding", outPad...), canonical.IntsAttr("dilations", dil...),
		canonical.IntAttr("group", groups)), nil
}

// atenCumsum converts aten::cumsum.
func (c *conv) atenCumsum(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.self()
	if err != nil {
		return nil, err
	}
	d, _ := call.arg(1, "dim").(int64)
	ax, err := c.axis(p, d, x.rank())
	if err != nil {
		return nil, err
	}
	return c.out("CumSum", name, []string{x.name, c.b.I64("axis", nil, []int64{int64(ax)})}, x.dt, x.dims), nil
}

// atenMaxMin converts aten::max, aten::min, aten::argmax, aten::argmin.
func (c *conv) atenMaxMin(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.self()
	if err != nil {
		return nil, err
	}
	d, hasDim := call.arg(1, "dim").(int64)
	if !hasDim {
		if name == "max" || name == "min" {
			if y, ok := call.arg(1, "other").(*tensor); ok {
				return c.tensorOp(p, map[string]string{"max": "maximum", "min": "minimum"}[name], []value{x, y}, nil)
			}
			axes := make([]int64, x.rank())
			for i := range axes {
				axes[i] = int64(i)
			}
			op := map[string]string{"max": "ReduceMax", "min": "ReduceMin"}[name]
			return c.out(op, name, []string{x.name}, x.dt, nil, canonical.IntsAttr("axes", axes...), canonical.IntAttr("keepdims", 0)), nil
		}
		return nil, nil
	}
	ax, err := c.axis(p, d, x.rank())
	if err != nil {
		return nil, err
	}
	keep, _ := call.arg(2, "keepdim").(bool)
	k := int64(0)
	dims := slices.Delete(slices.Clone(x.dims), ax, ax+1)
	if keep {
		k = 1
		dims = slices.Clone(x.dims)
		dims[ax] = 1
	}
	argOp := map[string]string{"max": "ArgMax", "argmax": "ArgMax", "min": "ArgMin", "argmin": "ArgMin"}[name]
	idx := c.out(argOp, "arg", []string{x.name}, canonical.Int64, dims, canonical.IntAttr("axis", int64(ax)), canonical.IntAttr("keepdims", k), canonical.IntAttr("select_last_index", 0))
	if name == "argmax" || name == "argmin" {
		return idx, nil
	}
	redOp := map[string]string{"max": "ReduceMax", "min": "ReduceMin"}[name]
	vals := c.out(redOp, name, []string{x.name}, x.dt, dims, canonical.IntsAttr("axes", []int64{int64(ax)}...), canonical.IntAttr("keepdims", k))
	return &tuple{items: []value{vals, idx}}, nil
}

// atenArange converts aten::arange.
func (c *conv) atenArange(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	var nums []float64
	for _, a := range args {
		if n, ok := num(a); ok {
			nums = append(nums, n)
		} else {
			break
		}
	}
	start, end, step := 0.0, 0.0, 1.0
	switch len(nums) {
	case 1:
		end = nums[0]
	case 2:
		start, end = nums[0], nums[1]
	case 3:
		start, end, step = nums[0], nums[1], nums[2]
	default:
		return nil, c.errAt(p, "arange of %s", describe(&tuple{items: args}))
	}
	if step == 0 {
		return nil, c.errAt(p, "arange with step 0")
	}
	n := int64(math.Ceil((end - start) / step))
	if n < 0 {
		n = 0
	}
	if n > 1<<24 {
		return nil, c.errAt(p, "arange of %d elements", n)
	}
	dt := canonical.Int64
	for _, a := range args[:len(nums)] {
		if _, f := a.(float64); f {
			dt = canonical.Float
		}
	}
	if d, ok := kw["dtype"].(int64); ok {
		if t, ok := scalarTypes[d]; ok {
			dt = t
		}
	}
	l := &list{}
	for i := int64(0); i < n; i++ {
		l.items = append(l.items, start+float64(i)*step)
	}
	t, err := c.constOf(l, dt)
	if err != nil {
		return nil, c.errAt(p, "arange: %v", err)
	}
	return t, nil
}

// gather is x indexed along ax by the integer tensor idx (negative
// indices count from the end, as ONNX Gather reads them).
func (c *conv) gather(x, idx *tensor, ax int) *tensor {
	dims := slices.Clone(x.dims[:ax])
	dims = append(dims, idx.dims...)
	dims = append(dims, x.dims[ax+1:]...)
	i := idx
	if i.dt != canonical.Int64 && i.dt != canonical.Int32 {
		i = c.cast(i, canonical.Int64)
	}
	return c.out("Gather", "index", []string{x.name, i.name}, x.dt, dims, canonical.IntAttr("axis", int64(ax)))
}
