package tfops

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
)

// convOps are the convolutions, pools and image ops beyond opTable's 2-D
// ones; opTable merges them in.
func convOps() map[string]opFunc {
	return map[string]opFunc{
		"Conv2DBackpropInput": (*converter).conv2DBackpropInput,
		"Conv1D":              (*converter).conv1D,
		"Conv3D":              (*converter).conv3D,
		"AvgPool3D":           (*converter).pool3D,
		"MaxPool3D":           (*converter).pool3D,
		"MaxPoolWithArgmax":   (*converter).maxPoolWithArgmax,
		"LRN":                 (*converter).lrn,
		"SpaceToBatchND":      (*converter).spaceToBatch,
		"BatchToSpaceND":      (*converter).batchToSpace,
		"CropAndResize":       (*converter).cropAndResize,
		"Dilation2D":          (*converter).dilation2D,
	}
}

// filterInit adds constant filter w permuted by perm (dims as given).
func (c *converter) filterInit(w *value, dims []int64, perm []int, suffix string) (string, error) {
	raw, err := w.konst.Bytes()
	if err != nil {
		return "", err
	}
	pr, pd, err := canonical.TransposeBytes(raw, canonical.ElemBits(w.konst.DataType)/8, dims, perm)
	if err != nil {
		return "", fmt.Errorf("filter: %w", err)
	}
	return c.b.Init(w.konst.Name+suffix, w.konst.DataType, pd, pr), nil
}

// conv2DBackpropInput maps the transposed convolution (input_sizes,
// filter [kh, kw, out, in], out_backprop) to ONNX ConvTranspose, with the
// pads TF's forward convolution uses and an output_padding that reaches
// the constant input_sizes.
func (c *converter) conv2DBackpropInput(n *Node) error {
	if err := checkNHWC(c, n); err != nil {
		return err
	}
	size, err := c.inputSizes(n)
	if err != nil {
		return err
	}
	if size == nil {
		return c.conv2DBackpropComputed(n)
	}
	if len(size) != 4 {
		return fmt.Errorf("input_sizes %v: want 4 values", size)
	}
	a, err := c.backpropArgs(n)
	if err != nil {
		return err
	}
	kd, dyn, wname, strides, dil := a.kd, a.dy, a.w, a.strides, a.dil
	pad := c.str(n, "padding", "VALID")
	var pads, outPad [2]int64
	var explicit []int64
	if pad == "EXPLICIT" {
		explicit = c.ints(n, "explicit_paddings")
		if len(explicit) != 8 {
			return fmt.Errorf("explicit_paddings %v: want 8 values", explicit)
		}
	}
	var bePads [4]int64
	for i := 0; i < 2; i++ {
		in := size[1+i]
		keff := (kd[i]-1)*dil[i] + 1
		// The forward convolution's output length and padding.
		var out, total int64
		switch pad {
		case "SAME":
			out = (in + strides[i] - 1) / strides[i]
			total = max((out-1)*strides[i]+keff-in, 0)
			pads[i] = total / 2
		case "VALID":
			out = (in-keff)/strides[i] + 1
		case "EXPLICIT":
			pads[i] = explicit[2+2*i]
			total = explicit[2+2*i] + explicit[3+2*i]
			out = (in+total-keff)/strides[i] + 1
		default:
			return fmt.Errorf("padding %q is not supported", pad)
		}
		natural := strides[i]*(out-1) + keff - total
		outPad[i] = in - natural
		if outPad[i] < 0 || outPad[i] >= max(strides[i], dil[i]) {
			return fmt.Errorf("input_sizes %v do not fit the filter, strides and padding", size)
		}
		bePads[i], bePads[2+i] = pads[i], total-pads[i]
	}
	attrs := []*canonical.Attribute{canonical.IntsAttr("strides", strides...), canonical.IntsAttr("dilations", dil...),
		canonical.IntsAttr("kernel_shape", []int64{kd[0], kd[1]}...), canonical.IntsAttr("pads", bePads[:]...), canonical.IntsAttr("output_padding", outPad[:]...)}
	y := c.b.Op("ConvTranspose", n.Name, []string{dyn, wname}, attrs...)
	c.set(n, 0, &value{nchw: y, rank: 4, dt: a.dt})
	return nil
}

// conv1D maps TF.js's Conv1D (NWC, filter [k, in, out], int stride and
// dilation) to a 1-D ONNX Conv on NCW.
func (c *converter) conv1D(n *Node) error {
	if f := c.str(n, "data_format", "NWC"); f != "NWC" {
		return fmt.Errorf("data_format %s is not supported (NWC only)", f)
	}
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	w, err := c.in(n, 1)
	if err != nil {
		return err
	}
	if w.konst == nil || len(w.konst.Dims) != 3 {
		return errors.New("the filter must be a constant of rank 3")
	}
	wname, err := c.filterInit(w, w.konst.Dims, layout.FromHWIO(3), "_oiw")
	if err != nil {
		return err
	}
	s, d := c.attrInt(n, "stride", 1), c.attrInt(n, "dilation", 1)
	attrs, err := c.padAttrs(n)
	if err != nil {
		return err
	}
	attrs = append(attrs, canonical.IntsAttr("strides", []int64{s}...), canonical.IntsAttr("dilations", []int64{d}...), canonical.IntsAttr("kernel_shape", []int64{w.konst.Dims[0]}...))
	xc := c.b.Transpose(xn, layout.Int64s(layout.ToFirst(3)), n.Name+"_ncw")
	y := c.b.Op("Conv", n.Name+"_conv", []string{xc, wname}, attrs...)
	c.setNHWC(n, 0, c.b.Transpose(y, layout.Int64s(layout.ToLast(3)), n.Name), 3, x.dt)
	return nil
}

// spatial3 reads the D, H, W entries of an NDHWC attr list.
func spatial3(l []int64, def int64) ([]int64, error) {
	if len(l) == 0 {
		return []int64{def, def, def}, nil
	}
	if len(l) != 5 {
		return nil, fmt.Errorf("an NDHWC list of 5 was expected, got %v", l)
	}
	for _, v := range l[1:4] {
		if v <= 0 || v > 1<<16 {
			return nil, fmt.Errorf("bad spatial values %v", l)
		}
	}
	return []int64{l[1], l[2], l[3]}, nil
}

func (c *converter) check3D(n *Node) error {
	if f := c.str(n, "data_format", "NDHWC"); f != "NDHWC" && f != "NHWC" {
		return fmt.Errorf("data_format %s is not supported (NDHWC only)", f)
	}
	return nil
}

func (c *converter) conv3D(n *Node) error {
	if err := c.check3D(n); err != nil {
		return err
	}
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	w, err := c.in(n, 1)
	if err != nil {
		return err
	}
	if w.konst == nil || len(w.konst.Dims) != 5 {
		return errors.New("the filter must be a constant of rank 5")
	}
	wname, err := c.filterInit(w, w.konst.Dims, layout.FromHWIO(5), "_oidhw")
	if err != nil {
		return err
	}
	s, err := spatial3(c.ints(n, "strides"), 1)
	if err != nil {
		return fmt.Errorf("strides: %w", err)
	}
	d, err := spatial3(c.ints(n, "dilations"), 1)
	if err != nil {
		return fmt.Errorf("dilations: %w", err)
	}
	attrs, err := c.padAttrs(n)
	if err != nil {
		return err
	}
	attrs = append(attrs, canonical.IntsAttr("strides", s...), canonical.IntsAttr("dilations", d...), canonical.IntsAttr("kernel_shape", w.konst.Dims[:3]...))
	xc := c.b.Transpose(xn, layout.Int64s(layout.ToFirst(5)), n.Name+"_ncdhw")
	y := c.b.Op("Conv", n.Name+"_conv", []string{xc, wname}, attrs...)
	c.setNHWC(n, 0, c.b.Transpose(y, layout.Int64s(layout.ToLast(5)), n.Name), 5, x.dt)
	return nil
}

func (c *converter) pool3D(n *Node) error {
	if err := c.check3D(n); err != nil {
		return err
	}
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	k, err := spatial3(c.ints(n, "ksize"), 1)
	if err != nil {
		return fmt.Errorf("ksize: %w", err)
	}
	s, err := spatial3(c.ints(n, "strides"), 1)
	if err != nil {
		return fmt.Errorf("strides: %w", err)
	}
	attrs, err := c.padAttrs(n)
	if err != nil {
		return err
	}
	attrs = append(attrs, canonical.IntsAttr("kernel_shape", k...), canonical.IntsAttr("strides", s...))
	op := "MaxPool"
	if n.Op == "AvgPool3D" {
		op = "AveragePool"
	}
	xc := c.b.Transpose(xn, layout.Int64s(layout.ToFirst(5)), n.Name+"_ncdhw")
	y := c.b.Op(op, n.Name+"_pool", []string{xc}, attrs...)
	c.setNHWC(n, 0, c.b.Transpose(y, layout.Int64s(layout.ToLast(5)), n.Name), 5, x.dt)
	return nil
}

// maxPoolWithArgmax maps MaxPoolWithArgmax to MaxPool's Indices output,
// renumbered from ONNX's NCHW flat index ((b·C + c)·H + h)·W + w to TF's
// NHWC one ((b·H + h)·W + w)·C + c (without b unless
// include_batch_in_index).
func (c *converter) maxPoolWithArgmax(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	xin, attrs, err := c.poolInput(n, x)
	if err != nil {
		return err
	}
	y, idx := c.b.Fresh(n.Name), c.b.Fresh(n.Name+"_nchw_index")
	c.b.Node("MaxPool", []string{xin}, []string{y, idx}, attrs...)
	shape := c.b.Op("Shape", n.Name+"_shape", []string{xin})
	dim := func(i int64, what string) string {
		return c.b.Op("Gather", n.Name+"_"+what, []string{shape, c.b.I64(what, nil, []int64{i})}, canonical.IntAttr("axis", 0))
	}
	ch, hw := dim(1, "c"), c.b.Op("Mul", n.Name+"_hw", []string{dim(2, "h"), dim(3, "w")})
	pos := c.b.Op("Mod", n.Name+"_pos", []string{idx, hw})
	bc := c.b.Op("Div", n.Name+"_bc", []string{idx, hw})
	cc := c.b.Op("Mod", n.Name+"_cc", []string{bc, ch})
	flat := pos
	if c.attrBool(n, "include_batch_in_index") {
		b := c.b.Op("Div", n.Name+"_b", []string{bc, ch})
		flat = c.b.Op("Add", n.Name+"_bpos", []string{c.b.Op("Mul", n.Name+"_boff", []string{b, hw}), pos})
	}
	tfIdx := c.b.Op("Add", n.Name+"_tf_index", []string{c.b.Op("Mul", n.Name+"_scaled", []string{flat, ch}), cc})
	dt, err := c.outType(n, "Targmax", canonical.Int64)
	if err != nil {
		return err
	}
	if dt != canonical.Int64 {
		tfIdx = c.castTo(n.Name+"_argmax", tfIdx, dt)
	}
	c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
	c.set(n, 1, &value{nchw: tfIdx, rank: 4, dt: dt})
	return nil
}

// lrn maps LRN: ONNX divides alpha by the window size, TF does not.
func (c *converter) lrn(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	xin, err := c.asNCHW(x)
	if err != nil {
		return err
	}
	r := c.attrInt(n, "depth_radius", 5)
	if r < 0 || r > 1<<12 {
		return fmt.Errorf("depth_radius %d", r)
	}
	f := func(name string, def float32) float32 {
		if a, ok := n.Attrs[name]; ok {
			return a.F
		}
		return def
	}
	size := 2*r + 1
	y := c.b.Op("LRN", n.Name, []string{xin}, canonical.IntAttr("size", size), canonical.FloatAttr("alpha", f("alpha", 1)*float32(size)),
		canonical.FloatAttr("beta", f("beta", 0.5)), canonical.FloatAttr("bias", f("bias", 1)))
	c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
	return nil
}

// blockArgs reads the constant block shape and the [M, 2] paddings or
// crops of SpaceToBatchND / BatchToSpaceND.
func (c *converter) blockArgs(n *Node, what string) ([]int64, []int64, error) {
	bv, err := c.in(n, 1)
	if err != nil {
		return nil, nil, err
	}
	block, err := constInts(bv, "block_shape")
	if err != nil {
		return nil, nil, err
	}
	if len(block) == 0 {
		return nil, nil, errors.New("an empty block_shape")
	}
	for _, b := range block {
		if b < 1 || b > 1<<16 {
			return nil, nil, fmt.Errorf("block_shape %v", block)
		}
	}
	pv, err := c.in(n, 2)
	if err != nil {
		return nil, nil, err
	}
	if pv.konst == nil {
		return block, nil, nil // computed: see blockEdges
	}
	pads, err := constInts(pv, what)
	if err != nil {
		return nil, nil, err
	}
	if len(block) == 0 || len(pads) != 2*len(block) {
		return nil, nil, fmt.Errorf("block_shape %v and %s %v", block, what, pads)
	}
	return block, pads, nil
}

// blockEdges returns, as int64 ONNX vectors of M values, the leading and
// trailing columns of the computed [M, 2] paddings or crops (input 2 of
// SpaceToBatchND / BatchToSpaceND).
func (c *converter) blockEdges(n *Node, what string) (string, string, error) {
	p, _, err := c.int64In(n, 2, what)
	if err != nil {
		return "", "", err
	}
	col := func(i int64, suffix string) string {
		sl := c.b.Op("Slice", n.Name+"_"+suffix+"_col", []string{p, c.b.Ints("start", i), c.b.Ints("end", i+1), c.b.Ints("axes", 1)})
		return c.b.Op("Reshape", n.Name+"_"+suffix, []string{sl, c.b.Ints("flat", -1)})
	}
	return col(0, what+"_begin"), col(1, what+"_end"), nil
}

// dims returns ONNX values for the dims of x (its Shape, gathered).
func (c *converter) dimOf(name, shape string, i int) string {
	return c.b.Op("Slice", name, []string{shape, c.b.Ints("start", int64(i)), c.b.Ints("end", int64(i+1))})
}

// spaceToBatch maps SpaceToBatchND: pad the M spatial axes, split each
// into (size/b, b), move the block axes before the batch, merge them
// into it.
func (c *converter) spaceToBatch(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	if x.rank < 0 {
		return errors.New("an input of unknown rank")
	}
	block, pads, err := c.blockArgs(n, "paddings")
	if err != nil {
		return err
	}
	m, r := len(block), x.rank
	if m+1 > r {
		return fmt.Errorf("block_shape %v for a rank-%d input", block, r)
	}
	var onnxPads string
	if pads != nil {
		op := make([]int64, 2*r)
		for i := 0; i < m; i++ {
			op[1+i], op[r+1+i] = pads[2*i], pads[2*i+1]
		}
		onnxPads = c.b.Ints("pads", op...)
	} else {
		// Computed paddings: [0, begins, 0…] ++ [0, ends, 0…].
		begin, end, err := c.blockEdges(n, "paddings")
		if err != nil {
			return err
		}
		zero := c.b.Ints("zero", 0)
		parts := []string{zero, begin}
		tail := []string{zero, end}
		if r > m+1 {
			rest := c.b.Ints("rest", make([]int64, r-m-1)...)
			parts, tail = append(parts, rest), append(tail, rest)
		}
		onnxPads = c.b.Op("Concat", n.Name+"_pads", append(parts, tail...), canonical.IntAttr("axis", 0))
	}
	p := c.b.Op("Pad", n.Name+"_pad", []string{xn, onnxPads})
	shape := c.b.Op("Shape", n.Name+"_shape", []string{p})
	parts := []string{c.dimOf(n.Name+"_n", shape, 0)}
	for i := 0; i < m; i++ {
		parts = append(parts, c.b.Op("Div", fmt.Sprintf("%s_s%d", n.Name, i), []string{c.dimOf(fmt.Sprintf("%s_d%d", n.Name, i), shape, 1+i), c.b.Ints("b", block[i])}), c.b.Ints("b", block[i]))
	}
	if r > m+1 {
		parts = append(parts, c.b.Op("Slice", n.Name+"_rest", []string{shape, c.b.Ints("start", int64(m+1)), c.b.Ints("end", i64max)}))
	}
	split := c.b.Op("Reshape", n.Name+"_split", []string{p, c.b.Op("Concat", n.Name+"_split_shape", parts, canonical.IntAttr("axis", 0))})
	var perm []int64
	for i := 0; i < m; i++ {
		perm = append(perm, int64(2+2*i))
	}
	perm = append(perm, 0)
	for i := 0; i < m; i++ {
		perm = append(perm, int64(1+2*i))
	}
	for i := 2*m + 1; i < r+m; i++ {
		perm = append(perm, int64(i))
	}
	t := c.b.Transpose(split, perm, n.Name+"_moved")
	prod := int64(1)
	for _, b := range block {
		prod *= b
	}
	out := []string{c.b.Op("Mul", n.Name+"_batch", []string{parts[0], c.b.Ints("prod", prod)})}
	for i := 0; i < m; i++ {
		out = append(out, parts[1+2*i])
	}
	if r > m+1 {
		out = append(out, parts[len(parts)-1])
	}
	c.setNHWC(n, 0, c.b.Op("Reshape", n.Name, []string{t, c.b.Op("Concat", n.Name+"_out_shape", out, canonical.IntAttr("axis", 0))}), r, x.dt)
	return nil
}

// batchToSpace maps BatchToSpaceND: split the batch into the block and
// the batch, interleave the block axes after the spatial ones, merge, and
// crop.
func (c *converter) batchToSpace(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	if x.rank < 0 {
		return errors.New("an input of unknown rank")
	}
	block, crops, err := c.blockArgs(n, "crops")
	if err != nil {
		return err
	}
	m, r := len(block), x.rank
	if m+1 > r {
		return fmt.Errorf("block_shape %v for a rank-%d input", block, r)
	}
	prod := int64(1)
	for _, b := range block {
		prod *= b
	}
	shape := c.b.Op("Shape", n.Name+"_shape", []string{xn})
	batch := c.b.Op("Div", n.Name+"_batch", []string{c.dimOf(n.Name+"_n", shape, 0), c.b.Ints("prod", prod)})
	parts := []string{c.b.Ints("block", block...), batch, c.b.Op("Slice", n.Name+"_rest", []string{shape, c.b.Ints("start", 1), c.b.Ints("end", i64max)})}
	split := c.b.Op("Reshape", n.Name+"_split", []string{xn, c.b.Op("Concat", n.Name+"_split_shape", parts, canonical.IntAttr("axis", 0))})
	perm := []int64{int64(m)}
	for i := 0; i < m; i++ {
		perm = append(perm, int64(m+1+i), int64(i))
	}
	for i := 2*m + 1; i < r+m; i++ {
		perm = append(perm, int64(i))
	}
	t := c.b.Transpose(split, perm, n.Name+"_moved")
	out := []string{batch}
	for i := 0; i < m; i++ {
		out = append(out, c.b.Op("Mul", fmt.Sprintf("%s_s%d", n.Name, i), []string{c.dimOf(fmt.Sprintf("%s_d%d", n.Name, i), shape, 1+i), c.b.Ints("b", block[i])}))
	}
	if r > m+1 {
		out = append(out, c.b.Op("Slice", n.Name+"_tail", []string{shape, c.b.Ints("start", int64(m+1)), c.b.Ints("end", i64max)}))
	}
	y := c.b.Op("Reshape", n.Name+"_merged", []string{t, c.b.Op("Concat", n.Name+"_out_shape", out, canonical.IntAttr("axis", 0))})
	if crops == nil {
		// Computed crops: from begin to the merged size less end.
		begin, end, err := c.blockEdges(n, "crops")
		if err != nil {
			return err
		}
		sizes := c.b.Op("Slice", n.Name+"_spatial", []string{c.b.Op("Shape", n.Name+"_merged_shape", []string{y}), c.b.Ints("start", 1), c.b.Ints("end", int64(m+1))})
		axes := make([]int64, m)
		for i := range axes {
			axes[i] = int64(1 + i)
		}
		stop := c.b.Op("Sub", n.Name+"_stop", []string{sizes, end})
		c.setNHWC(n, 0, c.b.Op("Slice", n.Name, []string{y, begin, stop, c.b.Ints("axes", axes...)}), r, x.dt)
		return nil
	}
	starts, ends, axes := make([]int64, m), make([]int64, m), make([]int64, m)
	for i := 0; i < m; i++ {
		starts[i], ends[i], axes[i] = crops[2*i], -crops[2*i+1], int64(1+i)
		if crops[2*i+1] == 0 {
			ends[i] = i64max
		}
	}
	c.setNHWC(n, 0, c.b.Op("Slice", n.Name, []string{y, c.b.Ints("starts", starts...), c.b.Ints("ends", ends...), c.b.Ints("axes", axes...)}), r, x.dt)
	return nil
}

// cropAndResize maps CropAndResize: each box's image (gathered by
// box_ind) sampled by GridSample at TF's points y1·(H−1) + i·(y2−y1)·(H−1)/(ch−1)
// (align_corners), points outside the image set to extrapolation_value.
func (c *converter) cropAndResize(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	xin, err := c.asNCHW(x)
	if err != nil {
		return err
	}
	_, boxes, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	ind, _, err := c.int64In(n, 2, "box_ind")
	if err != nil {
		return err
	}
	cv, err := c.in(n, 3)
	if err != nil {
		return err
	}
	crop, err := constInts(cv, "crop_size")
	if err != nil {
		return err
	}
	if len(crop) != 2 || crop[0] < 1 || crop[1] < 1 || crop[0] > 1<<14 || crop[1] > 1<<14 {
		return fmt.Errorf("crop_size %v", crop)
	}
	mode := "bilinear"
	switch m := c.str(n, "method", "bilinear"); m {
	case "bilinear":
	case "nearest":
		mode = "nearest"
	default:
		return fmt.Errorf("method %q is not supported (bilinear, nearest)", m)
	}
	extra := float32(0)
	if a, ok := n.Attrs["extrapolation_value"]; ok {
		extra = a.F
	}
	imgs := c.b.Op("Gather", n.Name+"_images", []string{xin, ind}, canonical.IntAttr("axis", 0))
	col := func(i int64) string {
		return c.b.Op("Gather", fmt.Sprintf("%s_b%d", n.Name, i), []string{boxes, c.b.I64("col", nil, []int64{i})}, canonical.IntAttr("axis", 1))
	}
	y1, x1, y2, x2 := col(0), col(1), col(2), col(3)
	// Normalized box coordinates t in [0, 1] of the image map to the
	// GridSample coordinate 2t − 1 (align_corners=1).
	steps := func(k int64, a, b, what string) string {
		var frac []float32
		for i := int64(0); i < k; i++ {
			if k > 1 {
				frac = append(frac, float32(i)/float32(k-1))
			} else {
				frac = append(frac, 0.5)
			}
		}
		f := c.b.F32(what+"_frac", []int64{1, k}, frac)
		a2 := c.b.Op("Unsqueeze", n.Name+"_"+what+"_a", []string{a, c.b.Ints("axis", 1)})
		b2 := c.b.Op("Unsqueeze", n.Name+"_"+what+"_b", []string{b, c.b.Ints("axis", 1)})
		var t string
		if k > 1 {
			t = c.b.Op("Add", n.Name+"_"+what, []string{a2, c.b.Op("Mul", n.Name+"_"+what+"_off", []string{f, c.b.Op("Sub", n.Name+"_"+what+"_span", []string{b2, a2})})})
		} else {
			t = c.b.Op("Mul", n.Name+"_"+what, []string{c.b.Op("Add", n.Name+"_"+what+"_sum", []string{a2, b2}), c.b.Scalar("half", 0.5)})
		}
		return t // [nb, k]
	}
	ty, tx := steps(crop[0], y1, y2, "ys"), steps(crop[1], x1, x2, "xs")
	gy := c.b.Op("Sub", n.Name+"_gy", []string{c.b.Op("Mul", n.Name+"_gy2", []string{ty, c.b.Scalar("two", 2)}), c.b.Scalar("one", 1)})
	gx := c.b.Op("Sub", n.Name+"_gx", []string{c.b.Op("Mul", n.Name+"_gx2", []string{tx, c.b.Scalar("two", 2)}), c.b.Scalar("one", 1)})
	// grid [nb, ch, cw, 2] holding (x, y).
	gridShape := c.b.Op("Concat", n.Name+"_grid_shape", []string{c.b.Op("Slice", n.Name+"_nb", []string{c.b.Op("Shape", n.Name+"_bshape", []string{boxes}), c.b.Ints("zero", 0), c.b.Ints("one", 1)}), c.b.Ints("crop", crop[0], crop[1], 1)}, canonical.IntAttr("axis", 0))
	gxe := c.b.Op("Expand", n.Name+"_gxe", []string{c.b.Op("Unsqueeze", n.Name+"_gxu", []string{gx, c.b.Ints("axes", 1, 3)}), gridShape})
	gye := c.b.Op("Expand", n.Name+"_gye", []string{c.b.Op("Unsqueeze", n.Name+"_gyu", []string{gy, c.b.Ints("axes", 2, 3)}), gridShape})
	grid := c.b.Op("Concat", n.Name+"_grid", []string{gxe, gye}, canonical.IntAttr("axis", 3))
	s := c.b.Op("GridSample", n.Name+"_sampled", []string{imgs, grid}, canonical.IntAttr("align_corners", 1), canonical.StringAttr("mode", mode), canonical.StringAttr("padding_mode", "border"))
	// Outside the image (a coordinate beyond [−1, 1]): extrapolation_value.
	outside := func(g, what string) string {
		return c.b.Op("Greater", n.Name+"_"+what+"_out", []string{c.b.Op("Abs", n.Name+"_"+what+"_abs", []string{g}), c.b.Scalar("one", 1)})
	}
	oy := c.b.Op("Unsqueeze", n.Name+"_oy", []string{outside(gy, "y"), c.b.Ints("axes", 1, 3)})
	ox := c.b.Op("Unsqueeze", n.Name+"_ox", []string{outside(gx, "x"), c.b.Ints("axes", 1, 2)})
	mask := c.b.Op("Or", n.Name+"_outside", []string{oy, ox})
	y := c.b.Op("Where", n.Name, []string{mask, c.b.Op("CastLike", n.Name+"_extra", []string{c.b.Scalar("extrapolation", extra), s}), s})
	c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
	return nil
}

// dilation2D maps Dilation2D (grayscale morphological dilation: max over
// the window of x + filter): one strided slice per filter tap, added to
// the tap's values, and a Max over them; SAME pads with the lowest float
// as TF's forward convolution pads (the sizes computed from the input's
// shape).
func (c *converter) dilation2D(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	w, err := c.in(n, 1)
	if err != nil {
		return err
	}
	if w.konst == nil || len(w.konst.Dims) != 3 {
		return errors.New("the filter must be a constant of rank 3")
	}
	st, err := spatial(c.ints(n, "strides"), 1)
	if err != nil {
		return err
	}
	rates, err := spatial(c.ints(n, "rates"), 1)
	if err != nil {
		return err
	}
	kh, kw, ch := w.konst.Dims[0], w.konst.Dims[1], w.konst.Dims[2]
	if kh*kw > 1024 {
		return fmt.Errorf("a %dx%d filter is too large to unroll", kh, kw)
	}
	fv, err := w.konst.Float32s()
	if err != nil {
		return err
	}
	if int64(len(fv)) != kh*kw*ch {
		return fmt.Errorf("filter of %d values for shape %v", len(fv), w.konst.Dims)
	}
	eff := []int64{(kh-1)*rates[0] + 1, (kw-1)*rates[1] + 1}
	shape := c.b.Op("Shape", n.Name+"_shape", []string{xn})
	hw := c.b.Op("Slice", n.Name+"_hw", []string{shape, c.b.Ints("one", 1), c.b.Ints("three", 3)})
	stv, effv := c.b.Ints("strides", st...), c.b.Ints("eff", eff...)
	one2 := c.b.Ints("ones", 1, 1)
	var out, src string
	switch p := c.str(n, "padding", "VALID"); p {
	case "VALID":
		out = c.b.Op("Add", n.Name+"_out", []string{c.b.Op("Div", n.Name+"_q", []string{c.b.Op("Sub", n.Name+"_room", []string{hw, effv}), stv}), one2})
		src = xn
	case "SAME":
		out = c.b.Op("Div", n.Name+"_out", []string{c.b.Op("Sub", n.Name+"_up", []string{c.b.Op("Add", n.Name+"_hs", []string{hw, stv}), one2}), stv})
		need := c.b.Op("Sub", n.Name+"_need", []string{c.b.Op("Add", n.Name+"_span", []string{c.b.Op("Mul", n.Name+"_steps", []string{c.b.Op("Sub", n.Name+"_om1", []string{out, one2}), stv}), effv}), hw})
		total := c.b.Op("Max", n.Name+"_total", []string{need, c.b.Ints("zeros", 0, 0)})
		before := c.b.Op("Div", n.Name+"_before", []string{total, c.b.Ints("twos", 2, 2)})
		after := c.b.Op("Sub", n.Name+"_after", []string{total, before})
		z := c.b.Ints("zero", 0)
		pads := c.b.Op("Concat", n.Name+"_pads", []string{z, before, z, z, after, z}, canonical.IntAttr("axis", 0))
		src = c.b.Op("Pad", n.Name+"_pad", []string{xn, pads, c.b.Op("CastLike", n.Name+"_ninf", []string{c.b.Scalar("ninf", -3.4028235e38), xn})})
	default:
		return fmt.Errorf("padding %q is not supported", p)
	}
	// A tap's slice: from its offset, stride steps, out values.
	length := c.b.Op("Add", n.Name+"_len", []string{c.b.Op("Mul", n.Name+"_lm", []string{c.b.Op("Sub", n.Name+"_o1", []string{out, one2}), stv}), one2})
	var taps []string
	for i := int64(0); i < kh; i++ {
		for j := int64(0); j < kw; j++ {
			starts := c.b.Ints("starts", i*rates[0], j*rates[1])
			ends := c.b.Op("Add", fmt.Sprintf("%s_end%d_%d", n.Name, i, j), []string{starts, length})
			sl := c.b.Op("Slice", fmt.Sprintf("%s_tap%d_%d", n.Name, i, j), []string{src, starts, ends, c.b.Ints("axes", 1, 2), stv})
			tap := fv[(i*kw+j)*ch : (i*kw+j+1)*ch]
			taps = append(taps, c.b.Op("Add", fmt.Sprintf("%s_sum%d_%d", n.Name, i, j), []string{sl, c.b.Op("CastLike", n.Name+"_w", []string{c.b.F32("tap", []int64{ch}, tap), xn})}))
		}
	}
	c.setNHWC(n, 0, c.b.Op("Max", n.Name, taps), 4, x.dt)
	return nil
}

// padComputed maps Pad, PadV2 and MirrorPad whose paddings ([rank, 2])
// are computed: ONNX's pads are their transpose, flattened.
func (c *converter) padComputed(n *Node, x, pv *value) error {
	xn, err := c.asNHWC(x)
	if err != nil {
		return err
	}
	pn, err := c.asNHWC(pv)
	if err != nil {
		return err
	}
	if pv.dt != canonical.Int64 {
		pn = c.castTo(n.Name+"_pads64", pn, canonical.Int64)
	}
	pads := c.b.Op("Reshape", n.Name+"_pads", []string{c.b.Transpose(pn, []int64{1, 0}, n.Name+"_pads_t"), c.b.Ints("flat", -1)})
	mode := "constant"
	if n.Op == "MirrorPad" {
		switch m := c.str(n, "mode", "REFLECT"); m {
		case "REFLECT":
			mode = "reflect"
		default:
			return fmt.Errorf("MirrorPad mode %s with computed paddings is not supported (REFLECT only)", m)
		}
	}
	ins := []string{xn, pads}
	if n.Op == "PadV2" {
		_, cn, err := c.nhwcIn(n, 2)
		if err != nil {
			return err
		}
		ins = append(ins, cn)
	}
	c.setNHWC(n, 0, c.b.Op("Pad", n.Name, ins, canonical.StringAttr("mode", mode)), x.rank, x.dt)
	return nil
}

// inputSizes reads Conv2DBackpropInput's input_sizes: a constant, or a
// Pack whose height, width and channels are constants (the batch size
// computed, as models with a free batch write it; it is not needed). It
// returns nil when the height or width is computed (from the input's
// shape, typically): conv2DBackpropComputed maps those.
func (c *converter) inputSizes(n *Node) ([]int64, error) {
	sv, err := c.in(n, 0)
	if err != nil {
		return nil, err
	}
	if sv.konst != nil {
		return constInts(sv, "input_sizes")
	}
	k, _ := tensorKey(n.Inputs[0])
	nm, _ := splitKey(k)
	p := c.nodes[nm]
	if p == nil || p.Op != "Pack" || dataInputs(p) != 4 {
		return nil, nil
	}
	out := []int64{-1}
	for i := 1; i < 4; i++ {
		v, err := c.in(p, i)
		if err != nil {
			return nil, err
		}
		d, err := constInts(v, "input_sizes")
		if err != nil || len(d) != 1 {
			return nil, nil
		}
		out = append(out, d[0])
	}
	return out, nil
}

// backprop holds what both forms of Conv2DBackpropInput read: the filter
// [kh, kw, out, in] as an ONNX initializer w (IOHW) with its TF dims kd,
// out_backprop as NCHW dy, strides and dilations.
type backprop struct {
	w, dy        string
	dt           canonical.DataType
	kd           []int64
	strides, dil []int64
}

func (c *converter) backpropArgs(n *Node) (*backprop, error) {
	w, err := c.in(n, 1)
	if err != nil {
		return nil, err
	}
	if w.konst == nil || len(w.konst.Dims) != 4 {
		return nil, errors.New("the filter must be a constant of rank 4")
	}
	dy, err := c.in(n, 2)
	if err != nil {
		return nil, err
	}
	a := &backprop{kd: w.konst.Dims, dt: dy.dt}
	if a.dy, err = c.asNCHW(dy); err != nil {
		return nil, err
	}
	if a.w, err = c.filterInit(w, a.kd, layout.FromHWIO(4), "_iohw"); err != nil {
		return nil, err
	}
	if a.strides, err = spatial(c.ints(n, "strides"), 1); err != nil {
		return nil, fmt.Errorf("strides: %w", err)
	}
	if a.dil, err = spatial(c.ints(n, "dilations"), 1); err != nil {
		return nil, fmt.Errorf("dilations: %w", err)
	}
	return a, nil
}

// conv2DBackpropComputed maps Conv2DBackpropInput whose input_sizes
// height or width is computed in the graph: an unpadded ConvTranspose
// (its output spans s·(o−1)+keff), zero-filled at the end where
// input_sizes reaches past it (TF's output_padding), then cut at the
// forward convolution's leading padding to input_sizes' height and width,
// all as ONNX shape computations. TF's leading padding is 0 (VALID), the
// explicit one (EXPLICIT), or half of max((o−1)·s+keff−in, 0) (SAME).
func (c *converter) conv2DBackpropComputed(n *Node) error {
	sizes, _, err := c.int64In(n, 0, "input_sizes")
	if err != nil {
		return err
	}
	a, err := c.backpropArgs(n)
	if err != nil {
		return err
	}
	kd, dyn, wname, strides, dil := a.kd, a.dy, a.w, a.strides, a.dil
	keff := []int64{(kd[0]-1)*dil[0] + 1, (kd[1]-1)*dil[1] + 1}
	full := c.b.Op("ConvTranspose", n.Name+"_full", []string{dyn, wname}, canonical.IntsAttr("strides", strides...),
		canonical.IntsAttr("dilations", dil...), canonical.IntsAttr("kernel_shape", kd[0], kd[1]))
	hw := c.b.Op("Slice", n.Name+"_hw", []string{sizes, c.b.Ints("start", 1), c.b.Ints("end", 3)})
	var before string
	switch pad := c.str(n, "padding", "VALID"); pad {
	case "VALID":
		before = c.b.Ints("zeros", 0, 0)
	case "EXPLICIT":
		e := c.ints(n, "explicit_paddings")
		if len(e) != 8 {
			return fmt.Errorf("explicit_paddings %v: want 8 values", e)
		}
		before = c.b.Ints("before", e[2], e[4])
	case "SAME":
		o := c.b.Op("Slice", n.Name+"_o", []string{c.b.Op("Shape", n.Name+"_dy_shape", []string{dyn}), c.b.Ints("start", 2), c.b.Ints("end", 4)})
		span := c.b.Op("Add", n.Name+"_span", []string{c.b.Op("Mul", n.Name+"_steps", []string{c.b.Op("Sub", n.Name+"_om1", []string{o, c.b.Ints("ones", 1, 1)}), c.b.Ints("strides", strides...)}), c.b.Ints("keff", keff...)})
		total := c.b.Op("Max", n.Name+"_total", []string{c.b.Op("Sub", n.Name+"_need", []string{span, hw}), c.b.Ints("zeros", 0, 0)})
		before = c.b.Op("Div", n.Name+"_before", []string{total, c.b.Ints("twos", 2, 2)})
	default:
		return fmt.Errorf("padding %q is not supported", pad)
	}
	end := c.b.Op("Add", n.Name+"_end", []string{before, hw})
	fullHW := c.b.Op("Slice", n.Name+"_full_hw", []string{c.b.Op("Shape", n.Name+"_full_shape", []string{full}), c.b.Ints("start", 2), c.b.Ints("end", 4)})
	extra := c.b.Op("Max", n.Name+"_extra", []string{c.b.Op("Sub", n.Name+"_past", []string{end, fullHW}), c.b.Ints("zeros", 0, 0)})
	pads := c.b.Op("Concat", n.Name+"_pads", []string{c.b.Ints("zeros6", 0, 0, 0, 0, 0, 0), extra}, canonical.IntAttr("axis", 0))
	padded := c.b.Op("Pad", n.Name+"_padded", []string{full, pads})
	y := c.b.Op("Slice", n.Name, []string{padded, before, end, c.b.Ints("axes", 2, 3)})
	c.set(n, 0, &value{nchw: y, rank: 4, dt: a.dt})
	return nil
}
