package tfops

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// shapeOps are the shape, creation, scan and indexing ops beyond
// moreOps; opTable merges them in.
func shapeOps() map[string]opFunc {
	passThrough := func(c *converter, n *Node) error {
		v, err := c.in(n, 0)
		if err != nil {
			return err
		}
		c.set(n, 0, v)
		return nil
	}
	return map[string]opFunc{
		"ArgMax":                 (*converter).argMinMax,
		"ArgMin":                 (*converter).argMinMax,
		"Size":                   (*converter).size,
		"Rank":                   (*converter).rankOp,
		"ShapeN":                 (*converter).shapeN,
		"BroadcastTo":            (*converter).broadcastTo,
		"BroadcastArgs":          (*converter).broadcastArgs,
		"OnesLike":               func(c *converter, n *Node) error { return c.fillLike(n, 1) },
		"ZerosLike":              func(c *converter, n *Node) error { return c.fillLike(n, 0) },
		"Ones":                   func(c *converter, n *Node) error { return c.fillShape(n, 1) },
		"Zeros":                  func(c *converter, n *Node) error { return c.fillShape(n, 0) },
		"LinSpace":               (*converter).linSpace,
		"OneHot":                 (*converter).oneHot,
		"Cumsum":                 (*converter).cumulative,
		"Cumprod":                (*converter).cumulative,
		"Reverse":                (*converter).reverse,
		"ReverseV2":              (*converter).reverse,
		"ScatterNd":              (*converter).scatterNd,
		"TensorScatterUpdate":    (*converter).tensorScatterUpdate,
		"SparseToDense":          (*converter).sparseToDense,
		"MatrixBandPart":         (*converter).matrixBandPart,
		"DepthToSpace":           (*converter).depthToSpace,
		"SpaceToDepth":           (*converter).depthToSpace,
		"Concat":                 (*converter).concatV1,
		"DepthwiseConv2d":        (*converter).conv2D,
		"FusedBatchNormV2":       (*converter).batchNorm,
		"IdentityN":              (*converter).identity,
		"EnsureShape":            passThrough,
		"Print":                  passThrough,
		"PlaceholderWithDefault": passThrough,
		"All":                    (*converter).boolReduce,
		"Any":                    (*converter).boolReduce,
		"EuclideanNorm":          (*converter).euclideanNorm,
		"Unique":                 (*converter).unique,
		"UniqueV2":               (*converter).unique,
		"ListDiff":               (*converter).listDiff,
		"LowerBound":             (*converter).bound,
		"UpperBound":             (*converter).bound,
		"Bincount":               (*converter).bincount,
		"DenseBincount":          (*converter).bincount,
		"NonMaxSuppressionV2":    (*converter).nms,
	}
}

// scalarAxis reads data input i of n as a constant scalar axis,
// normalized against rank (when known).
func (c *converter) scalarAxis(n *Node, i, rank int) (int64, error) {
	av, err := c.in(n, i)
	if err != nil {
		return 0, err
	}
	a, err := constInts(av, "the axis")
	if err != nil {
		return 0, err
	}
	if len(a) != 1 {
		return 0, errors.New("the axis must be a scalar")
	}
	ax := a[0]
	if ax < 0 {
		if rank < 0 {
			return 0, errors.New("a negative axis needs an input of known rank")
		}
		ax += int64(rank)
	}
	if rank >= 0 && (ax < 0 || ax >= int64(rank)) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", a[0], rank)
	}
	return ax, nil
}

// outType is n's type attr name as an ONNX type, def when absent.
func (c *converter) outType(n *Node, attr string, def canonical.DataType) (canonical.DataType, error) {
	a, ok := n.Attrs[attr]
	if !ok || a.Type == "" {
		return def, nil
	}
	dt, ok := DataType(a.Type)
	if !ok {
		return 0, fmt.Errorf("%s %s is not supported", attr, a.Type)
	}
	return dt, nil
}

func (c *converter) castTo(name, x string, dt canonical.DataType) string {
	return c.b.Op("Cast", name, []string{x}, canonical.IntAttr("to", int64(dt)))
}

func (c *converter) argMinMax(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	ax, err := c.scalarAxis(n, 1, x.rank)
	if err != nil {
		return err
	}
	dt, err := c.outType(n, "output_type", canonical.Int64)
	if err != nil {
		return err
	}
	y := c.b.Op(n.Op, n.Name+"_i64", []string{xn}, canonical.IntAttr("axis", ax), canonical.IntAttr("keepdims", 0))
	if dt != canonical.Int64 {
		y = c.castTo(n.Name, y, dt)
	}
	rank := -1
	if x.rank > 0 {
		rank = x.rank - 1
	}
	c.setNHWC(n, 0, y, rank, dt)
	return nil
}

func (c *converter) size(n *Node) error {
	_, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	dt, err := c.outType(n, "out_type", canonical.Int32)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.castTo(n.Name, c.b.Op("Size", n.Name+"_i64", []string{xn}), dt), 0, dt)
	return nil
}

func (c *converter) rankOp(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	if x.rank >= 0 {
		r := canonical.NewTensor(n.Name, canonical.Int32, nil, []byte{byte(x.rank), 0, 0, 0})
		c.set(n, 0, &value{konst: r, rank: 0, dt: canonical.Int32})
		return nil
	}
	s := c.b.Op("Size", n.Name+"_rank", []string{c.b.Op("Shape", n.Name+"_shape", []string{xn})})
	c.setNHWC(n, 0, c.castTo(n.Name, s, canonical.Int32), 0, canonical.Int32)
	return nil
}

func (c *converter) shapeN(n *Node) error {
	dt, err := c.outType(n, "out_type", canonical.Int32)
	if err != nil {
		return err
	}
	for i := 0; i < dataInputs(n); i++ {
		_, xn, err := c.nhwcIn(n, i)
		if err != nil {
			return err
		}
		y := c.b.Op("Shape", fmt.Sprintf("%s_%d_i64", n.Name, i), []string{xn})
		c.setNHWC(n, i, c.castTo(fmt.Sprintf("%s_%d", n.Name, i), y, dt), 1, dt)
	}
	return nil
}

// shapeRank is the length of a constant shape input, -1 otherwise.
func shapeRank(v *value) int {
	if v.konst != nil {
		if s, err := v.konst.Int64s(); err == nil {
			return len(s)
		}
	}
	return -1
}

func (c *converter) broadcastTo(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	s, sv, err := c.int64In(n, 1, "shape")
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("Expand", n.Name, []string{xn, s}), shapeRank(sv), x.dt)
	return nil
}

// broadcastArgs is the shape of a tensor of shape s0 broadcast with one
// of shape s1: two Expands of a scalar, then Shape.
func (c *converter) broadcastArgs(n *Node) error {
	s0, v0, err := c.int64In(n, 0, "s0")
	if err != nil {
		return err
	}
	s1, _, err := c.int64In(n, 1, "s1")
	if err != nil {
		return err
	}
	z := c.b.I64(n.Name+"_zero", nil, []int64{0})
	e := c.b.Op("Expand", n.Name+"_b", []string{c.b.Op("Expand", n.Name+"_a", []string{z, s0}), s1})
	c.setNHWC(n, 0, c.castTo(n.Name, c.b.Op("Shape", n.Name+"_i64", []string{e}), v0.dt), 1, v0.dt)
	return nil
}

func (c *converter) fillLike(n *Node, v float32) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	k := c.like(v, xn)
	c.setNHWC(n, 0, c.b.Op("Expand", n.Name, []string{k, c.b.Op("Shape", n.Name+"_shape", []string{xn})}), x.rank, x.dt)
	return nil
}

func (c *converter) fillShape(n *Node, v float32) error {
	s, sv, err := c.int64In(n, 0, "shape")
	if err != nil {
		return err
	}
	dt, err := c.outType(n, "T", canonical.Float)
	if err != nil {
		return err
	}
	if dt == canonical.Undefined {
		dt = canonical.Float
	}
	k := c.castTo(n.Name+"_value", c.b.Scalar("value", v), dt)
	c.setNHWC(n, 0, c.b.Op("Expand", n.Name, []string{k, s}), shapeRank(sv), dt)
	return nil
}

// linSpace is start + i·(stop − start)/(num − 1) for i in [0, num).
func (c *converter) linSpace(n *Node) error {
	st, start, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	_, stop, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	num, _, err := c.int64In(n, 2, "num")
	if err != nil {
		return err
	}
	num = c.b.Op("Reshape", n.Name+"_num", []string{num, c.b.I64("scalar", []int64{0}, nil)})
	one := c.b.I64(n.Name+"_one", nil, []int64{1})
	idx := c.b.Op("Range", n.Name+"_idx", []string{c.b.I64(n.Name+"_zero", nil, []int64{0}), num, one})
	idxF := c.b.Op("CastLike", n.Name+"_idxf", []string{idx, start})
	den := c.b.Op("Max", n.Name+"_den", []string{c.b.Op("Sub", n.Name+"_nm1", []string{num, one}), one})
	step := c.b.Op("Div", n.Name+"_step", []string{c.b.Op("Sub", n.Name+"_span", []string{stop, start}), c.b.Op("CastLike", n.Name+"_denf", []string{den, start})})
	y := c.b.Op("Add", n.Name, []string{start, c.b.Op("Mul", n.Name+"_off", []string{idxF, step})})
	c.setNHWC(n, 0, y, 1, st.dt)
	return nil
}

// oneHot maps OneHot; negative indices (all off in TF, counted from the
// end in ONNX) are moved out of range first.
func (c *converter) oneHot(n *Node) error {
	iv, in, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	depth, _, err := c.int64In(n, 1, "depth")
	if err != nil {
		return err
	}
	on, onN, err := c.nhwcIn(n, 2)
	if err != nil {
		return err
	}
	_, offN, err := c.nhwcIn(n, 3)
	if err != nil {
		return err
	}
	axis := c.attrInt(n, "axis", -1)
	i64 := in
	if iv.dt != canonical.Int64 {
		i64 = c.castTo(n.Name+"_indices", in, canonical.Int64)
	}
	d1 := c.b.Op("Reshape", n.Name+"_depth1", []string{depth, c.b.Ints("one", 1)})
	neg := c.b.Op("Less", n.Name+"_neg", []string{i64, c.b.I64("zero", nil, []int64{0})})
	i64 = c.b.Op("Where", n.Name+"_idx", []string{neg, d1, i64})
	values := c.b.Op("Concat", n.Name+"_values", []string{
		c.b.Op("Reshape", n.Name+"_off", []string{offN, c.b.Ints("one", 1)}),
		c.b.Op("Reshape", n.Name+"_on", []string{onN, c.b.Ints("one", 1)})}, canonical.IntAttr("axis", 0))
	rank := -1
	if iv.rank >= 0 {
		rank = iv.rank + 1
	}
	c.setNHWC(n, 0, c.b.Op("OneHot", n.Name, []string{i64, d1, values}, canonical.IntAttr("axis", axis)), rank, on.dt)
	return nil
}

// cumulative maps Cumsum (ONNX CumSum) and Cumprod (no ONNX op before
// opset 26): the product of the magnitudes is exp(cumsum(log|x|)), its
// sign (−1)^(number of negatives so far), and it is 0 after a 0.
func (c *converter) cumulative(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	ax, err := c.scalarAxis(n, 1, x.rank)
	if err != nil {
		return err
	}
	attrs := []int64{0, 0}
	if c.attrBool(n, "exclusive") {
		attrs[0] = 1
	}
	if c.attrBool(n, "reverse") {
		attrs[1] = 1
	}
	axis := c.b.I64(n.Name+"_axis", nil, []int64{ax})
	cum := func(name, v string) string {
		return c.b.Op("CumSum", name, []string{v, axis}, canonical.IntAttr("exclusive", attrs[0]), canonical.IntAttr("reverse", attrs[1]))
	}
	if n.Op == "Cumsum" {
		c.setNHWC(n, 0, cum(n.Name, xn), x.rank, x.dt)
		return nil
	}
	xf := xn
	if x.dt != canonical.Float && x.dt != canonical.Double {
		xf = c.castTo(n.Name+"_f", xn, canonical.Float)
	}
	zero := c.like(0, xf)
	mag := c.b.Op("Exp", n.Name+"_mag", []string{cum(n.Name+"_logsum", c.b.Op("Log", n.Name+"_log", []string{c.b.Op("Abs", n.Name+"_abs", []string{xf})}))})
	negs := cum(n.Name+"_negs", c.castTo(n.Name+"_isneg", c.b.Op("Less", n.Name+"_neg", []string{xf, zero}), canonical.Float))
	odd := c.b.Op("Mod", n.Name+"_odd", []string{negs, c.b.Scalar("two", 2)}, canonical.IntAttr("fmod", 1))
	sign := c.b.Op("Sub", n.Name+"_sign", []string{c.b.Scalar("one", 1), c.b.Op("Mul", n.Name+"_2odd", []string{odd, c.b.Scalar("two", 2)})})
	zeros := cum(n.Name+"_zeros", c.castTo(n.Name+"_iszero", c.b.Op("Equal", n.Name+"_eq0", []string{xf, zero}), canonical.Float))
	p := c.b.Op("Mul", n.Name+"_signed", []string{c.b.Op("CastLike", n.Name+"_signl", []string{sign, mag}), mag})
	p = c.b.Op("Where", n.Name+"_p", []string{c.b.Op("Greater", n.Name+"_hit0", []string{zeros, c.b.Scalar("zero", 0)}), c.b.Op("CastLike", n.Name+"_z", []string{c.b.Scalar("zero", 0), p}), p})
	if x.dt != canonical.Float && x.dt != canonical.Double {
		p = c.castTo(n.Name, c.b.Op("Round", n.Name+"_round", []string{p}), x.dt)
	}
	c.setNHWC(n, 0, p, x.rank, x.dt)
	return nil
}

// reverse maps ReverseV2 (axes) and Reverse (a bool per axis) as a Slice
// with step −1 on each reversed axis.
func (c *converter) reverse(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	av, err := c.in(n, 1)
	if err != nil {
		return err
	}
	var axes []int64
	if n.Op == "Reverse" {
		if av.konst == nil {
			return errors.New("the dims must be a constant")
		}
		raw, err := av.konst.Bytes()
		if err != nil {
			return err
		}
		for i, b := range raw {
			if b != 0 {
				axes = append(axes, int64(i))
			}
		}
	} else {
		if axes, err = constInts(av, "the axes"); err != nil {
			return err
		}
		if axes, err = normAxes(axes, x.rank); err != nil && x.rank >= 0 {
			return err
		}
	}
	if len(axes) == 0 {
		c.setNHWC(n, 0, c.b.Op("Identity", n.Name, []string{xn}), x.rank, x.dt)
		return nil
	}
	starts, ends, steps := make([]int64, len(axes)), make([]int64, len(axes)), make([]int64, len(axes))
	for i := range axes {
		starts[i], ends[i], steps[i] = -1, i64min, -1
	}
	y := c.b.Op("Slice", n.Name, []string{xn, c.b.Ints("starts", starts...), c.b.Ints("ends", ends...), c.b.Ints("axes", axes...), c.b.Ints("steps", steps...)})
	c.setNHWC(n, 0, y, x.rank, x.dt)
	return nil
}

// zerosOf is a tensor of zeros of shape (int64) and the type of like.
func (c *converter) zerosOf(name, shape, like string) string {
	return c.b.Op("Expand", name, []string{c.like(0, like), shape})
}

func (c *converter) scatterNd(n *Node) error {
	idx, _, err := c.int64In(n, 0, "indices")
	if err != nil {
		return err
	}
	u, un, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	s, sv, err := c.int64In(n, 2, "shape")
	if err != nil {
		return err
	}
	base := c.zerosOf(n.Name+"_zeros", s, un)
	c.setNHWC(n, 0, c.b.Op("ScatterND", n.Name, []string{base, idx, un}, canonical.StringAttr("reduction", "add")), shapeRank(sv), u.dt)
	return nil
}

func (c *converter) tensorScatterUpdate(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	idx, _, err := c.int64In(n, 1, "indices")
	if err != nil {
		return err
	}
	_, un, err := c.nhwcIn(n, 2)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("ScatterND", n.Name, []string{xn, idx, un}), x.rank, x.dt)
	return nil
}

// sparseToDense scatters the values (a scalar broadcast to every index)
// into a tensor of the default value; indices of rank 0 or 1 index the
// first axis.
func (c *converter) sparseToDense(n *Node) error {
	idx, iv, err := c.int64In(n, 0, "indices")
	if err != nil {
		return err
	}
	s, sv, err := c.int64In(n, 1, "output_shape")
	if err != nil {
		return err
	}
	v, vn, err := c.nhwcIn(n, 2)
	if err != nil {
		return err
	}
	_, dn, err := c.nhwcIn(n, 3)
	if err != nil {
		return err
	}
	if iv.rank < 2 {
		idx = c.b.Op("Reshape", n.Name+"_idx", []string{idx, c.b.Ints("col", -1, 1)})
	}
	count := c.b.Op("Slice", n.Name+"_count", []string{c.b.Op("Shape", n.Name+"_ishape", []string{idx}), c.b.Ints("zero", 0), c.b.Ints("one", 1)})
	vals := c.b.Op("Expand", n.Name+"_values", []string{vn, count})
	base := c.b.Op("Expand", n.Name+"_default", []string{dn, s})
	c.setNHWC(n, 0, c.b.Op("ScatterND", n.Name, []string{base, idx, vals}), shapeRank(sv), v.dt)
	return nil
}

// matrixBandPart keeps x[..., i, j] where (lower < 0 or i − j ≤ lower)
// and (upper < 0 or j − i ≤ upper), zeroing the rest.
func (c *converter) matrixBandPart(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	lo, _, err := c.int64In(n, 1, "num_lower")
	if err != nil {
		return err
	}
	up, _, err := c.int64In(n, 2, "num_upper")
	if err != nil {
		return err
	}
	shape := c.b.Op("Shape", n.Name+"_shape", []string{xn})
	dim := func(k int64, what string) string {
		d := c.b.Op("Gather", n.Name+"_"+what, []string{shape, c.b.I64(what, nil, []int64{k})}, canonical.IntAttr("axis", 0))
		return c.b.Op("Range", n.Name+"_"+what+"_range", []string{c.b.I64("zero", nil, []int64{0}), d, c.b.I64("one", nil, []int64{1})})
	}
	i := c.b.Op("Unsqueeze", n.Name+"_i", []string{dim(-2, "rows"), c.b.Ints("axis", 1)})
	j := dim(-1, "cols")
	zero := c.b.I64("zero", nil, []int64{0})
	keep := func(d, bound, what string) string {
		unbounded := c.b.Op("Less", n.Name+"_"+what+"_all", []string{bound, zero})
		return c.b.Op("Or", n.Name+"_"+what, []string{unbounded, c.b.Op("LessOrEqual", n.Name+"_"+what+"_in", []string{d, bound})})
	}
	mask := c.b.Op("And", n.Name+"_mask", []string{
		keep(c.b.Op("Sub", n.Name+"_below", []string{i, j}), c.b.Op("Reshape", n.Name+"_lo", []string{lo, c.b.I64("scalar", []int64{0}, nil)}), "lower"),
		keep(c.b.Op("Sub", n.Name+"_above", []string{j, i}), c.b.Op("Reshape", n.Name+"_up", []string{up, c.b.I64("scalar", []int64{0}, nil)}), "upper")})
	c.setNHWC(n, 0, c.b.Op("Where", n.Name, []string{mask, xn, c.like(0, xn)}), x.rank, x.dt)
	return nil
}

// depthToSpace maps DepthToSpace (ONNX's DCR order is TF's) and
// SpaceToDepth, run NCHW.
func (c *converter) depthToSpace(n *Node) error {
	if err := checkNHWC(c, n); err != nil {
		return err
	}
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	xn, err := c.asNCHW(x)
	if err != nil {
		return err
	}
	bs := c.attrInt(n, "block_size", 0)
	if bs < 2 || bs > 1<<12 {
		return fmt.Errorf("block_size %d", bs)
	}
	attrs := canonical.IntAttr("blocksize", bs)
	var y string
	if n.Op == "DepthToSpace" {
		y = c.b.Op("DepthToSpace", n.Name, []string{xn}, attrs, canonical.StringAttr("mode", "DCR"))
	} else {
		y = c.b.Op("SpaceToDepth", n.Name, []string{xn}, attrs)
	}
	c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
	return nil
}

// concatV1 is Concat(axis, values...): ConcatV2 with the axis first.
func (c *converter) concatV1(n *Node) error {
	var ins []string
	for _, s := range n.Inputs {
		if s != "" && s[0] != '^' {
			ins = append(ins, s)
		}
	}
	if len(ins) < 2 {
		return errors.New("Concat needs the axis and a value")
	}
	m := *n
	m.Inputs = append(append([]string{}, ins[1:]...), ins[0])
	return c.concat(&m)
}

// boolReduce maps All and Any: ReduceMin and ReduceMax of the values as
// int32, back to bool.
func (c *converter) boolReduce(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	av, err := c.in(n, 1)
	if err != nil {
		return err
	}
	axes, err := constInts(av, "the reduction axes")
	if err != nil {
		return err
	}
	keep := c.attrBool(n, "keep_dims")
	op := "ReduceMin"
	if n.Op == "Any" {
		op = "ReduceMax"
	}
	xi := c.castTo(n.Name+"_i", xn, canonical.Int32)
	var y string
	if len(axes) == 0 {
		y = xi
	} else {
		y = c.reduceOp(op, n.Name+"_r", xi, axes, keep)
	}
	rank := -1
	if x.rank >= 0 {
		rank = x.rank
		if !keep {
			rank -= len(axes)
		}
	}
	c.setNHWC(n, 0, c.castTo(n.Name, y, canonical.Bool), rank, canonical.Bool)
	return nil
}

func (c *converter) euclideanNorm(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	av, err := c.in(n, 1)
	if err != nil {
		return err
	}
	axes, err := constInts(av, "the reduction axes")
	if err != nil {
		return err
	}
	keep := c.attrBool(n, "keep_dims")
	k := int64(0)
	if keep {
		k = 1
	}
	var y string
	if c.b.Opset >= 18 {
		y = c.b.Op("ReduceL2", n.Name, []string{xn, c.b.Ints("axes", axes...)}, canonical.IntAttr("keepdims", k))
	} else {
		y = c.b.Op("ReduceL2", n.Name, []string{xn}, canonical.IntsAttr("axes", axes...), canonical.IntAttr("keepdims", k))
	}
	rank := -1
	if x.rank >= 0 {
		rank = x.rank
		if !keep {
			rank -= len(axes)
		}
	}
	c.setNHWC(n, 0, y, rank, x.dt)
	return nil
}

// unique maps Unique and UniqueV2: ONNX Unique unsorted keeps the order
// of first occurrence, as TF does; idx is its inverse_indices.
func (c *converter) unique(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	attrs := []*canonical.Attribute{canonical.IntAttr("sorted", 0)}
	if n.Op == "UniqueV2" {
		av, err := c.in(n, 1)
		if err != nil {
			return err
		}
		a, err := constInts(av, "the axis")
		if err != nil {
			return err
		}
		if len(a) == 1 {
			attrs = append(attrs, canonical.IntAttr("axis", a[0]))
		} else if len(a) > 1 {
			return errors.New("more than one axis")
		}
	}
	y, idx := c.b.Fresh(n.Name), c.b.Fresh(n.Name+"_idx64")
	c.b.Node("Unique", []string{xn}, []string{y, "", idx}, attrs...)
	dt, err := c.outType(n, "out_idx", canonical.Int32)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, y, x.rank, x.dt)
	c.setNHWC(n, 1, c.castTo(n.Name+"_idx", idx, dt), 1, dt)
	return nil
}

// listDiff returns the values of x not in y, and their positions.
func (c *converter) listDiff(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	_, yn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	eq := c.b.Op("Equal", n.Name+"_eq", []string{c.b.Op("Unsqueeze", n.Name+"_x", []string{xn, c.b.Ints("axis", 1)}), c.b.Op("Unsqueeze", n.Name+"_y", []string{yn, c.b.Ints("axis", 0)})})
	anyEq := c.reduceOp("ReduceMax", n.Name+"_in", c.castTo(n.Name+"_eqi", eq, canonical.Int32), []int64{1}, false)
	keep := c.b.Op("Equal", n.Name+"_keep", []string{anyEq, c.castTo(n.Name+"_zero", c.b.Scalar("zero", 0), canonical.Int32)})
	idx := c.b.Op("Reshape", n.Name+"_idx64", []string{c.b.Op("NonZero", n.Name+"_nz", []string{keep}), c.b.Ints("flat", -1)})
	dt, err := c.outType(n, "out_idx", canonical.Int32)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("Gather", n.Name, []string{xn, idx}, canonical.IntAttr("axis", 0)), 1, x.dt)
	c.setNHWC(n, 1, c.castTo(n.Name+"_idx", idx, dt), 1, dt)
	return nil
}

// bound maps LowerBound (the count of sorted values < v) and UpperBound
// (≤ v), row by row.
func (c *converter) bound(n *Node) error {
	_, sn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	v, vn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	op := "Less"
	if n.Op == "UpperBound" {
		op = "LessOrEqual"
	}
	cmp := c.b.Op(op, n.Name+"_cmp", []string{c.b.Op("Unsqueeze", n.Name+"_s", []string{sn, c.b.Ints("axis", -2)}), c.b.Op("Unsqueeze", n.Name+"_v", []string{vn, c.b.Ints("axis", -1)})})
	cnt := c.b.Op("ReduceSum", n.Name+"_count", []string{c.castTo(n.Name+"_cmpi", cmp, canonical.Int64), c.b.Ints("axis", -1)}, canonical.IntAttr("keepdims", 0))
	dt, err := c.outType(n, "out_type", canonical.Int32)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.castTo(n.Name, cnt, dt), v.rank, dt)
	return nil
}

// bincount counts (or sums the weights of) the values of x equal to each
// of 0 … size−1: DenseBincount of a matrix counts row by row; an empty
// weights tensor counts, binary_output gives 0/1.
func (c *converter) bincount(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	size, _, err := c.int64In(n, 1, "size")
	if err != nil {
		return err
	}
	w, wn, err := c.nhwcIn(n, 2)
	if err != nil {
		return err
	}
	size = c.b.Op("Reshape", n.Name+"_size", []string{size, c.b.I64("scalar", []int64{0}, nil)})
	bins := c.b.Op("Range", n.Name+"_bins", []string{c.b.I64("zero", nil, []int64{0}), size, c.b.I64("one", nil, []int64{1})})
	x64 := c.castTo(n.Name+"_x64", xn, canonical.Int64)
	hit := c.b.Op("Equal", n.Name+"_hit", []string{c.b.Op("Unsqueeze", n.Name+"_xu", []string{x64, c.b.Ints("axis", -1)}), bins})
	noWeights := w.konst != nil && len(w.konst.Dims) > 0 && w.konst.Dims[0] == 0
	var contrib string
	dt := w.dt
	if noWeights || c.attrBool(n, "binary_output") {
		contrib = c.b.Op("CastLike", n.Name+"_ones", []string{hit, wn})
	} else {
		contrib = c.b.Op("Mul", n.Name+"_w", []string{c.b.Op("CastLike", n.Name+"_hitw", []string{hit, wn}), c.b.Op("Unsqueeze", n.Name+"_wu", []string{wn, c.b.Ints("axis", -1)})})
	}
	axis := int64(0)
	if x.rank == 2 {
		axis = 1
	}
	y := c.b.Op("ReduceSum", n.Name+"_sum", []string{contrib, c.b.Ints("axis", axis)}, canonical.IntAttr("keepdims", 0))
	if c.attrBool(n, "binary_output") {
		y = c.b.Op("CastLike", n.Name+"_bin", []string{c.b.Op("Greater", n.Name+"_any", []string{y, c.like(0, y)}), y})
	}
	c.setNHWC(n, 0, c.b.Op("Identity", n.Name, []string{y}), max(x.rank, 1), dt)
	return nil
}
