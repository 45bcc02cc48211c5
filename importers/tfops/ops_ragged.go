package tfops

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// Ragged tensors of ragged rank 1 as TF passes them between ops: row
// splits [nrows+1] (int64 or int32) and dense values; the image op
// ImageProjectiveTransformV3 and SparseFillEmptyRows; opTable merges them
// in.
func raggedOps() map[string]opFunc {
	return map[string]opFunc{
		"RaggedRange":                (*converter).raggedRange,
		"RaggedTensorToTensor":       (*converter).raggedToTensor,
		"RaggedGather":               (*converter).raggedGather,
		"ImageProjectiveTransformV3": (*converter).imageTransform,
		"SparseFillEmptyRows":        (*converter).sparseFillEmptyRows,
	}
}

// rowOf returns, for each position p in [0, total) of the dense values
// of a ragged tensor with int64 row splits, its row (the number of
// splits[1:] ≤ p) and its offset p − splits[row].
func (c *converter) rowOf(name, splits string) (pos, row, off string) {
	total := c.b.Op("Gather", name+"_total", []string{splits, c.b.I64("last", nil, []int64{-1})}, canonical.IntAttr("axis", 0))
	pos = c.b.Op("Range", name+"_pos", []string{c.b.I64("zero", nil, []int64{0}), total, c.b.I64("one", nil, []int64{1})})
	ends := c.b.Op("Slice", name+"_ends", []string{splits, c.b.Ints("one", 1), c.b.Ints("end", i64max)})
	le := c.b.Op("LessOrEqual", name+"_le", []string{c.b.Op("Unsqueeze", name+"_e", []string{ends, c.b.Ints("axis", 0)}), c.b.Op("Unsqueeze", name+"_p", []string{pos, c.b.Ints("axis", 1)})})
	row = c.b.Op("ReduceSum", name+"_row", []string{c.castTo(name+"_lei", le, canonical.Int64), c.b.Ints("axis", 1)}, canonical.IntAttr("keepdims", 0))
	off = c.b.Op("Sub", name+"_off", []string{pos, c.b.Op("Gather", name+"_start", []string{splits, row}, canonical.IntAttr("axis", 0))})
	return pos, row, off
}

// splitsOf is the row splits [0, cumsum(lens)] of int64 row lengths.
func (c *converter) splitsOf(name, lens string) string {
	cs := c.b.Op("CumSum", name+"_cumsum", []string{lens, c.b.I64("axis0", nil, []int64{0})})
	return c.b.Op("Concat", name, []string{c.b.Ints("zero", 0), cs}, canonical.IntAttr("axis", 0))
}

func (c *converter) splitsType(n *Node) (canonical.DataType, error) {
	return c.outType(n, "Tsplits", canonical.Int64)
}

// raggedRange: row i is range(starts[i], limits[i], deltas[i]).
func (c *converter) raggedRange(n *Node) error {
	vs, err := c.inputs(n, 3)
	if err != nil {
		return err
	}
	ins := make([]string, 3)
	for i, v := range vs {
		x, err := c.asNHWC(v)
		if err != nil {
			return err
		}
		ins[i] = c.b.Op("Reshape", fmt.Sprintf("%s_in%d", n.Name, i), []string{x, c.b.Ints("flat", -1)})
	}
	// Broadcast the three against each other.
	zero := c.b.Op("Mul", n.Name+"_zero", []string{c.b.Op("Add", n.Name+"_b", []string{c.b.Op("Add", n.Name+"_b0", []string{ins[0], ins[1]}), ins[2]}), c.like(0, ins[0])})
	st, lim, d := c.b.Op("Add", n.Name+"_st", []string{ins[0], zero}), c.b.Op("Add", n.Name+"_lim", []string{ins[1], zero}), c.b.Op("Add", n.Name+"_d", []string{ins[2], zero})
	f := func(x, what string) string { return c.castTo(n.Name+"_"+what+"_f", x, canonical.Double) }
	size := c.b.Op("Ceil", n.Name+"_size_f", []string{c.b.Op("Div", n.Name+"_q", []string{c.b.Op("Sub", n.Name+"_span", []string{f(lim, "lim"), f(st, "st")}), f(d, "d")})})
	lens := c.b.Op("Max", n.Name+"_lens", []string{c.castTo(n.Name+"_size", size, canonical.Int64), c.b.I64("zero", nil, []int64{0})})
	splits := c.splitsOf(n.Name+"_splits", lens)
	_, row, off := c.rowOf(n.Name, splits)
	g := func(x, what string) string {
		return c.b.Op("Gather", n.Name+"_"+what+"_row", []string{x, row}, canonical.IntAttr("axis", 0))
	}
	vals := c.b.Op("Add", n.Name+"_values", []string{g(st, "st"), c.b.Op("Mul", n.Name+"_step", []string{c.b.Op("CastLike", n.Name+"_offc", []string{off, st}), g(d, "d")})})
	dt, err := c.splitsType(n)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.castTo(n.Name, splits, dt), 1, dt)
	c.setNHWC(n, 1, c.b.Op("Identity", n.Name+"_dense_values", []string{vals}), 1, vs[0].dt)
	return nil
}

// raggedToTensor maps RaggedTensorToTensor of one ragged dimension, given
// as ROW_SPLITS or FIRST_DIM_SIZE + VALUE_ROWIDS: out[r, k] =
// values[splits[r] + k] where k < the row's length, default_value
// elsewhere; shape (−1 dims: the natural size) sets the rows and columns.
func (c *converter) raggedToTensor(n *Node) error {
	a, ok := n.Attrs["row_partition_types"]
	if !ok || a.List == nil {
		return errors.New("no row_partition_types")
	}
	types := a.List.S
	sv, err := c.in(n, 0)
	if err != nil {
		return err
	}
	v, vn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	_, dn, err := c.nhwcIn(n, 2)
	if err != nil {
		return err
	}
	var splits string
	switch {
	case len(types) == 1 && string(types[0]) == "ROW_SPLITS":
		if splits, _, err = c.int64In(n, 3, "row_splits"); err != nil {
			return err
		}
	case len(types) == 2 && string(types[0]) == "FIRST_DIM_SIZE" && string(types[1]) == "VALUE_ROWIDS":
		nrows, _, err := c.int64In(n, 3, "nrows")
		if err != nil {
			return err
		}
		ids, _, err := c.int64In(n, 4, "value_rowids")
		if err != nil {
			return err
		}
		nrows = c.b.Op("Reshape", n.Name+"_nrows", []string{nrows, c.b.I64("scalar", []int64{0}, nil)})
		rows := c.b.Op("Range", n.Name+"_rows", []string{c.b.I64("zero", nil, []int64{0}), nrows, c.b.I64("one", nil, []int64{1})})
		hit := c.b.Op("Equal", n.Name+"_hit", []string{c.b.Op("Unsqueeze", n.Name+"_ids", []string{ids, c.b.Ints("axis", 1)}), rows})
		lens := c.b.Op("ReduceSum", n.Name+"_lens", []string{c.castTo(n.Name+"_hiti", hit, canonical.Int64), c.b.Ints("axis0", 0)}, canonical.IntAttr("keepdims", 0))
		splits = c.splitsOf(n.Name+"_splits", lens)
	default:
		return fmt.Errorf("row_partition_types %q: one ragged dimension (ROW_SPLITS, or FIRST_DIM_SIZE and VALUE_ROWIDS) is supported", types)
	}
	lens := c.b.Op("Sub", n.Name+"_len", []string{c.b.Op("Slice", n.Name+"_hi", []string{splits, c.b.Ints("one", 1), c.b.Ints("end", i64max)}), c.b.Op("Slice", n.Name+"_lo", []string{splits, c.b.Ints("zero", 0), c.b.Ints("m1", -1)})})
	nrows := c.b.Op("Shape", n.Name+"_nr", []string{lens})
	ncols := c.reduceOp("ReduceMax", n.Name+"_nc", lens, []int64{0}, true)
	if sv.konst != nil {
		if s, err := sv.konst.Int64s(); err == nil && len(s) >= 2 {
			if s[0] >= 0 {
				nrows = c.b.Ints("rows", s[0])
			}
			if s[1] >= 0 {
				ncols = c.b.Ints("cols", s[1])
			}
		}
	}
	nr := c.b.Op("Reshape", n.Name+"_nrs", []string{nrows, c.b.I64("scalar", []int64{0}, nil)})
	nc := c.b.Op("Reshape", n.Name+"_ncs", []string{ncols, c.b.I64("scalar", []int64{0}, nil)})
	r := c.b.Op("Unsqueeze", n.Name+"_r", []string{c.b.Op("Range", n.Name+"_rr", []string{c.b.I64("zero", nil, []int64{0}), nr, c.b.I64("one", nil, []int64{1})}), c.b.Ints("axis", 1)})
	k := c.b.Op("Unsqueeze", n.Name+"_k", []string{c.b.Op("Range", n.Name+"_kr", []string{c.b.I64("zero", nil, []int64{0}), nc, c.b.I64("one", nil, []int64{1})}), c.b.Ints("axis", 0)})
	// Rows beyond the ragged tensor's (shape asks for more) are empty.
	nreal := c.b.Op("Size", n.Name+"_nreal", []string{lens})
	inRows := c.b.Op("Less", n.Name+"_inrows", []string{r, nreal})
	rs := c.b.Op("Where", n.Name+"_rsafe", []string{inRows, r, c.b.I64("zero", nil, []int64{0})})
	rowLen := c.b.Op("Where", n.Name+"_rowlen", []string{inRows, c.b.Op("Gather", n.Name+"_lenr", []string{lens, rs}, canonical.IntAttr("axis", 0)), c.b.I64("zero", nil, []int64{0})})
	valid := c.b.Op("Less", n.Name+"_valid", []string{k, rowLen})
	src := c.b.Op("Add", n.Name+"_src", []string{c.b.Op("Gather", n.Name+"_start", []string{splits, rs}, canonical.IntAttr("axis", 0)), k})
	src = c.b.Op("Where", n.Name+"_srcsafe", []string{valid, src, c.b.I64("zero", nil, []int64{0})})
	g := c.b.Op("Gather", n.Name+"_g", []string{vn, src}, canonical.IntAttr("axis", 0))
	mask := valid
	if v.rank > 1 {
		axes := make([]int64, v.rank-1)
		for i := range axes {
			axes[i] = int64(2 + i)
		}
		mask = c.b.Op("Unsqueeze", n.Name+"_mask", []string{valid, c.b.Ints("axes", axes...)})
	}
	rank := -1
	if v.rank >= 1 {
		rank = v.rank + 1
	}
	c.setNHWC(n, 0, c.b.Op("Where", n.Name, []string{mask, g, dn}), rank, v.dt)
	return nil
}

// raggedGather maps RaggedGather of ragged rank 1 with 1-D indices: the
// gathered rows' lengths make the output splits; each output value is
// values[splits[indices[row]] + offset].
func (c *converter) raggedGather(n *Node) error {
	if r := c.attrInt(n, "PARAMS_RAGGED_RANK", 1); r != 1 {
		return fmt.Errorf("PARAMS_RAGGED_RANK %d: ragged rank 1 only", r)
	}
	if r := c.attrInt(n, "OUTPUT_RAGGED_RANK", 1); r != 1 {
		return fmt.Errorf("OUTPUT_RAGGED_RANK %d: 1-D indices only", r)
	}
	splits, sv, err := c.int64In(n, 0, "params_nested_splits")
	if err != nil {
		return err
	}
	v, vn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	idx, _, err := c.int64In(n, 2, "indices")
	if err != nil {
		return err
	}
	lo := c.b.Op("Gather", n.Name+"_lo", []string{splits, idx}, canonical.IntAttr("axis", 0))
	hi := c.b.Op("Gather", n.Name+"_hi", []string{splits, c.b.Op("Add", n.Name+"_idx1", []string{idx, c.b.I64("one", nil, []int64{1})})}, canonical.IntAttr("axis", 0))
	out := c.splitsOf(n.Name+"_splits", c.b.Op("Sub", n.Name+"_lens", []string{hi, lo}))
	_, row, off := c.rowOf(n.Name, out)
	src := c.b.Op("Add", n.Name+"_src", []string{c.b.Op("Gather", n.Name+"_base", []string{lo, row}, canonical.IntAttr("axis", 0)), off})
	c.setNHWC(n, 0, c.castTo(n.Name, out, sv.dt), 1, sv.dt)
	c.setNHWC(n, 1, c.b.Op("Gather", n.Name+"_values", []string{vn, src}, canonical.IntAttr("axis", 0)), v.rank, v.dt)
	return nil
}

// imageTransform maps ImageProjectiveTransformV3 (fill_mode CONSTANT or
// NEAREST, the coordinates clamped: GridSample's border padding):
// output pixel (x, y) samples the input at ((a0·x + a1·y + a2)/k,
// (b0·x + b1·y + b2)/k), k = c0·x + c1·y + 1, with GridSample (align
// corners) of images − fill, plus fill: points outside read fill_value.
func (c *converter) imageTransform(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	xin, err := c.asNCHW(x)
	if err != nil {
		return err
	}
	_, tn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	ov, err := c.in(n, 2)
	if err != nil {
		return err
	}
	osz, err := constInts(ov, "output_shape")
	if err != nil {
		return err
	}
	if len(osz) != 2 || osz[0] < 1 || osz[1] < 1 || osz[0]*osz[1] > 1<<24 {
		return fmt.Errorf("output_shape %v", osz)
	}
	_, fn, err := c.nhwcIn(n, 3)
	if err != nil {
		return err
	}
	fillMode := c.str(n, "fill_mode", "CONSTANT")
	if fillMode != "CONSTANT" && fillMode != "NEAREST" {
		return fmt.Errorf("fill_mode %s is not supported (CONSTANT, NEAREST)", fillMode)
	}
	mode := "bilinear"
	switch m := c.str(n, "interpolation", "NEAREST"); m {
	case "BILINEAR":
	case "NEAREST":
		mode = "nearest"
	default:
		return fmt.Errorf("interpolation %s is not supported (NEAREST, BILINEAR)", m)
	}
	oh, ow := osz[0], osz[1]
	xs, ys := make([]float32, oh*ow), make([]float32, oh*ow)
	for i := int64(0); i < oh; i++ {
		for j := int64(0); j < ow; j++ {
			xs[i*ow+j], ys[i*ow+j] = float32(j), float32(i)
		}
	}
	px := c.b.F32("px", []int64{1, oh, ow}, xs)
	py := c.b.F32("py", []int64{1, oh, ow}, ys)
	col := func(i int64) string {
		g := c.b.Op("Gather", fmt.Sprintf("%s_t%d", n.Name, i), []string{tn, c.b.I64("col", nil, []int64{i})}, canonical.IntAttr("axis", 1))
		return c.b.Op("Unsqueeze", fmt.Sprintf("%s_u%d", n.Name, i), []string{g, c.b.Ints("axes", 1, 2)})
	}
	lin := func(a, b, cc string, what string) string {
		return c.b.Op("Add", n.Name+"_"+what, []string{c.b.Op("Add", n.Name+"_"+what+"_xy", []string{c.b.Op("Mul", n.Name+"_"+what+"_x", []string{a, px}), c.b.Op("Mul", n.Name+"_"+what+"_y", []string{b, py})}), cc})
	}
	k := lin(col(6), col(7), c.b.Scalar("one", 1), "k")
	mx := c.b.Op("Div", n.Name+"_mx", []string{lin(col(0), col(1), col(2), "nx"), k})
	my := c.b.Op("Div", n.Name+"_my", []string{lin(col(3), col(4), col(5), "ny"), k})
	shape := c.b.Op("Cast", n.Name+"_shape_f", []string{c.b.Op("Shape", n.Name+"_shape", []string{xin})}, canonical.IntAttr("to", int64(canonical.Float)))
	dim := func(i int64, what string) string {
		return c.b.Op("Gather", n.Name+"_"+what, []string{shape, c.b.I64(what, nil, []int64{i})}, canonical.IntAttr("axis", 0))
	}
	norm := func(m, size, what string) string {
		den := c.b.Op("Max", n.Name+"_"+what+"_den", []string{c.b.Op("Sub", n.Name+"_"+what+"_m1", []string{size, c.b.Scalar("one", 1)}), c.b.Scalar("one", 1)})
		return c.b.Op("Sub", n.Name+"_"+what, []string{c.b.Op("Div", n.Name+"_"+what+"_2", []string{c.b.Op("Mul", n.Name+"_"+what+"_x2", []string{m, c.b.Scalar("two", 2)}), den}), c.b.Scalar("one", 1)})
	}
	gx := c.b.Op("Unsqueeze", n.Name+"_gxu", []string{norm(mx, dim(3, "w"), "gx"), c.b.Ints("last", -1)})
	gy := c.b.Op("Unsqueeze", n.Name+"_gyu", []string{norm(my, dim(2, "h"), "gy"), c.b.Ints("last", -1)})
	// The transforms may be one for the whole batch.
	nb := c.b.Op("Slice", n.Name+"_nb", []string{c.b.Op("Shape", n.Name+"_xshape", []string{xin}), c.b.Ints("zero", 0), c.b.Ints("one", 1)})
	grid := c.b.Op("Expand", n.Name+"_grid", []string{c.b.Op("Concat", n.Name+"_gridxy", []string{gx, gy}, canonical.IntAttr("axis", -1)),
		c.b.Op("Concat", n.Name+"_gshape", []string{nb, c.b.Ints("hw2", oh, ow, 2)}, canonical.IntAttr("axis", 0))})
	if fillMode == "NEAREST" {
		// Coordinates clamped to the image: GridSample's border padding.
		y := c.b.Op("GridSample", n.Name, []string{xin, grid}, canonical.IntAttr("align_corners", 1), canonical.StringAttr("mode", mode), canonical.StringAttr("padding_mode", "border"))
		c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
		return nil
	}
	fill := c.b.Op("CastLike", n.Name+"_fill", []string{fn, xin})
	s := c.b.Op("GridSample", n.Name+"_sampled", []string{c.b.Op("Sub", n.Name+"_shifted", []string{xin, fill}), grid},
		canonical.IntAttr("align_corners", 1), canonical.StringAttr("mode", mode), canonical.StringAttr("padding_mode", "zeros"))
	c.set(n, 0, &value{nchw: c.b.Op("Add", n.Name, []string{s, fill}), rank: 4, dt: x.dt})
	return nil
}

// sparseFillEmptyRows adds (row, 0, …) with default_value for each row
// of dense_shape[0] without an entry, ordered by row (entries of a row
// in their input order, the added one last), with the empty-row flags
// and each input entry's position in the output.
func (c *converter) sparseFillEmptyRows(n *Node) error {
	idx, iv, err := c.int64In(n, 0, "indices")
	if err != nil {
		return err
	}
	v, vn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	shape, _, err := c.int64In(n, 2, "dense_shape")
	if err != nil {
		return err
	}
	_, dn, err := c.nhwcIn(n, 3)
	if err != nil {
		return err
	}
	nrows := c.b.Op("Slice", n.Name+"_nrows", []string{shape, c.b.Ints("zero", 0), c.b.Ints("one", 1)})
	nr := c.b.Op("Reshape", n.Name+"_nr", []string{nrows, c.b.I64("scalar", []int64{0}, nil)})
	rows := c.b.Op("Range", n.Name+"_rows", []string{c.b.I64("zero", nil, []int64{0}), nr, c.b.I64("one", nil, []int64{1})})
	r0 := c.b.Op("Gather", n.Name+"_r0", []string{idx, c.b.I64("c0", nil, []int64{0})}, canonical.IntAttr("axis", 1))
	hit := c.b.Op("Equal", n.Name+"_hit", []string{c.b.Op("Unsqueeze", n.Name+"_r0u", []string{r0, c.b.Ints("axis", 1)}), rows})
	cnt := c.b.Op("ReduceSum", n.Name+"_cnt", []string{c.castTo(n.Name+"_hiti", hit, canonical.Int64), c.b.Ints("axis0", 0)}, canonical.IntAttr("keepdims", 1))
	cnt = c.b.Op("Reshape", n.Name+"_cntf", []string{cnt, c.b.Ints("flat", -1)})
	empty := c.b.Op("Equal", n.Name+"_empty", []string{cnt, c.b.I64("zero", nil, []int64{0})})
	emptyRows := c.b.Op("Reshape", n.Name+"_erows", []string{c.b.Op("NonZero", n.Name+"_nz", []string{empty}), c.b.Ints("flat", -1)})
	// New entries: (row, 0, …, 0).
	rank := c.b.Op("Shape", n.Name+"_rank", []string{shape})
	zerosRest := c.b.Op("Expand", n.Name+"_zr", []string{c.b.I64("zero", nil, []int64{0}), c.b.Op("Concat", n.Name+"_zrs", []string{c.b.Op("Shape", n.Name+"_ne", []string{emptyRows}), c.b.Op("Sub", n.Name+"_rm1", []string{rank, c.b.Ints("one", 1)})}, canonical.IntAttr("axis", 0))})
	newIdx := c.b.Op("Concat", n.Name+"_newidx", []string{c.b.Op("Unsqueeze", n.Name+"_eru", []string{emptyRows, c.b.Ints("axis", 1)}), zerosRest}, canonical.IntAttr("axis", 1))
	newVals := c.b.Op("Expand", n.Name+"_newvals", []string{dn, c.b.Op("Shape", n.Name+"_ne2", []string{emptyRows})})
	allIdx := c.b.Op("Concat", n.Name+"_allidx", []string{idx, newIdx}, canonical.IntAttr("axis", 0))
	allVals := c.b.Op("Concat", n.Name+"_allvals", []string{vn, newVals}, canonical.IntAttr("axis", 0))
	// Stable sort by row: key row·M + position, M the entry count.
	allRows := c.b.Op("Gather", n.Name+"_allrows", []string{allIdx, c.b.I64("c0", nil, []int64{0})}, canonical.IntAttr("axis", 1))
	m := c.b.Op("Shape", n.Name+"_m", []string{allRows})
	pos := c.b.Op("Range", n.Name+"_pos", []string{c.b.I64("zero", nil, []int64{0}), c.b.Op("Reshape", n.Name+"_ms", []string{m, c.b.I64("scalar", []int64{0}, nil)}), c.b.I64("one", nil, []int64{1})})
	key := c.b.Op("Add", n.Name+"_key", []string{c.b.Op("Mul", n.Name+"_rk", []string{allRows, m}), pos})
	sorted, order := c.b.Fresh(n.Name+"_sorted"), c.b.Fresh(n.Name+"_order")
	c.b.Node("TopK", []string{key, m}, []string{sorted, order}, canonical.IntAttr("axis", 0), canonical.IntAttr("largest", 0), canonical.IntAttr("sorted", 1))
	outIdx := c.b.Op("Gather", n.Name+"_out_indices", []string{allIdx, order}, canonical.IntAttr("axis", 0))
	outVals := c.b.Op("Gather", n.Name+"_out_values", []string{allVals, order}, canonical.IntAttr("axis", 0))
	// reverse_index_map[i]: where input entry i went.
	inv := c.b.Op("ScatterND", n.Name+"_inv", []string{pos, c.b.Op("Unsqueeze", n.Name+"_ordu", []string{order, c.b.Ints("axis", 1)}), pos})
	n0 := c.b.Op("Slice", n.Name+"_n0", []string{c.b.Op("Shape", n.Name+"_vshape", []string{vn}), c.b.Ints("zero", 0), c.b.Ints("one", 1)})
	rev := c.b.Op("Slice", n.Name+"_rev", []string{inv, c.b.Ints("zero", 0), n0})
	c.setNHWC(n, 0, c.castTo(n.Name, outIdx, iv.dt), 2, iv.dt)
	c.setNHWC(n, 1, c.b.Op("Identity", n.Name+"_output_values", []string{outVals}), 1, v.dt)
	c.setNHWC(n, 2, c.b.Op("Identity", n.Name+"_empty_row_indicator", []string{empty}), 1, canonical.Bool)
	c.setNHWC(n, 3, c.castTo(n.Name+"_reverse_index_map", rev, iv.dt), 1, iv.dt)
	return nil
}
