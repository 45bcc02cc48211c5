package tfops

import (
	"errors"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// moreOps are the shape, indexing, image and detection ops; opTable
// merges them in.
func moreOps() map[string]opFunc {
	cmp := func(op string, not bool) opFunc {
		return func(c *converter, n *Node) error { return c.compare(n, op, not) }
	}
	return map[string]opFunc{
		"StridedSlice":          (*converter).stridedSlice,
		"Slice":                 (*converter).slice,
		"Gather":                (*converter).gather,
		"GatherV2":              (*converter).gather,
		"GatherNd":              (*converter).gatherNd,
		"Split":                 (*converter).split,
		"SplitV":                (*converter).splitV,
		"Pack":                  (*converter).pack,
		"Unpack":                (*converter).unpack,
		"Tile":                  (*converter).tile,
		"Fill":                  (*converter).fill,
		"Range":                 (*converter).rangeOp,
		"Shape":                 (*converter).shapeOp,
		"ResizeBilinear":        (*converter).resize,
		"ResizeNearestNeighbor": (*converter).resize,
		"NonMaxSuppressionV3":   (*converter).nms,
		"NonMaxSuppressionV4":   (*converter).nms,
		"NonMaxSuppressionV5":   (*converter).nms,
		"TopKV2":                (*converter).topK,
		"Where":                 (*converter).where,
		"Select":                (*converter).selectOp,
		"SelectV2":              (*converter).selectOp,
		"Einsum":                (*converter).einsum,
		"Greater":               cmp("Greater", false),
		"GreaterEqual":          cmp("GreaterOrEqual", false),
		"Less":                  cmp("Less", false),
		"LessEqual":             cmp("LessOrEqual", false),
		"Equal":                 cmp("Equal", false),
		"NotEqual":              cmp("Equal", true),
		"LogicalAnd":            cmp("And", false),
		"LogicalOr":             cmp("Or", false),
		"LogicalNot":            (*converter).logicalNot,
	}
}

// nhwcIn returns data input i of n in TF layout.
func (c *converter) nhwcIn(n *Node, i int) (*value, string, error) {
	v, err := c.in(n, i)
	if err != nil {
		return nil, "", err
	}
	s, err := c.asNHWC(v)
	return v, s, err
}

// int64In returns data input i of n as an int64 ONNX value (a constant
// initializer when it is one, a Cast otherwise).
func (c *converter) int64In(n *Node, i int, what string) (string, *value, error) {
	v, err := c.in(n, i)
	if err != nil {
		return "", nil, err
	}
	if v.konst != nil {
		vals, err := v.konst.Int64s()
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", what, err)
		}
		return c.b.I64(n.Name+"_"+what, v.konst.Dims, vals), v, nil
	}
	s, err := c.asNHWC(v)
	if err != nil {
		return "", nil, err
	}
	if v.dt == canonical.Int64 {
		return s, v, nil
	}
	return c.b.Op("Cast", n.Name+"_"+what, []string{s}, canonical.IntAttr("to", int64(canonical.Int64))), v, nil
}

func (c *converter) setNHWC(n *Node, idx int, y string, rank int, dt canonical.DataType) {
	c.set(n, idx, &value{nhwc: y, rank: rank, dt: dt})
}

func (c *converter) attrInt(n *Node, name string, def int64) int64 {
	if a, ok := n.Attrs[name]; ok {
		return a.I
	}
	return def
}

func (c *converter) attrBool(n *Node, name string) bool {
	a, ok := n.Attrs[name]
	return ok && a.B
}

const (
	i64max = math.MaxInt64
	i64min = math.MinInt64
)

// stridedSlice maps StridedSlice with every mask: ONNX Slice over the
// sliced axes, Squeeze of the shrunk ones, Unsqueeze of the new ones.
func (c *converter) stridedSlice(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	var spec [3][]int64
	for i, what := range []string{"begin", "end", "strides"} {
		v, err := c.in(n, i+1)
		if err != nil {
			return err
		}
		if spec[i], err = constInts(v, what); err != nil {
			return err
		}
	}
	begin, end, strides := spec[0], spec[1], spec[2]
	if len(end) != len(begin) || len(strides) != len(begin) {
		return fmt.Errorf("begin %v, end %v and strides %v differ in length", begin, end, strides)
	}
	bm, em := c.attrInt(n, "begin_mask", 0), c.attrInt(n, "end_mask", 0)
	elm, nam, sam := c.attrInt(n, "ellipsis_mask", 0), c.attrInt(n, "new_axis_mask", 0), c.attrInt(n, "shrink_axis_mask", 0)
	bit := func(m int64, i int) bool { return m>>uint(i)&1 == 1 }
	// Dims of the input that the spec consumes (all but new axes and the ellipsis).
	consumed := 0
	ellipsis := false
	for i := range begin {
		if bit(elm, i) {
			if ellipsis {
				return errors.New("more than one ellipsis")
			}
			ellipsis = true
		} else if !bit(nam, i) {
			consumed++
		}
	}
	if x.rank >= 0 && consumed > x.rank {
		return fmt.Errorf("the slice spec covers %d axes of a rank-%d input", consumed, x.rank)
	}
	// An ellipsis over an input of unknown rank: the spec is read as if
	// the ellipsis covered no axis, and the axes after it are then
	// counted from the end (negative ONNX axes).
	rank, fromEnd := x.rank, -1
	if ellipsis && rank < 0 {
		rank = consumed
	}
	var starts, ends, axes, steps, squeeze, unsq []int64
	dim, outPos, outFromEnd := 0, 0, -1
	for i := range begin {
		switch {
		case bit(elm, i):
			k := rank - consumed
			dim += k
			outPos += k
			if x.rank < 0 {
				fromEnd, outFromEnd = dim, outPos
			}
		case bit(nam, i):
			unsq = append(unsq, int64(outPos))
			outPos++
		case bit(sam, i):
			b := begin[i]
			e := b + 1
			if b == -1 {
				e = i64max
			}
			starts, ends, axes, steps = append(starts, b), append(ends, e), append(axes, int64(dim)), append(steps, 1)
			squeeze = append(squeeze, int64(dim))
			dim++
		default:
			s := strides[i]
			if s == 0 {
				return errors.New("a stride of 0")
			}
			b, e := begin[i], end[i]
			if bit(bm, i) {
				b = 0
				if s < 0 {
					b = i64max
				}
			}
			if bit(em, i) {
				e = i64max
				if s < 0 {
					e = i64min
				}
			}
			if !(b == 0 && e == i64max && s == 1) {
				starts, ends, axes, steps = append(starts, b), append(ends, e), append(axes, int64(dim)), append(steps, s)
			}
			dim++
			outPos++
		}
	}
	if fromEnd >= 0 {
		outRank := int64(rank - len(squeeze) + len(unsq))
		for _, l := range [][]int64{axes, squeeze} {
			for j, a := range l {
				if a >= int64(fromEnd) {
					l[j] = a - int64(rank)
				}
			}
		}
		for j, a := range unsq {
			if a >= int64(outFromEnd) {
				unsq[j] = a - outRank
			}
		}
	}
	y := xn
	if len(axes) > 0 {
		y = c.b.Op("Slice", n.Name+"_slice", []string{y, c.b.Ints("starts", starts...), c.b.Ints("ends", ends...),
			c.b.Ints("axes", axes...), c.b.Ints("steps", steps...)})
	}
	if len(squeeze) > 0 {
		y = c.b.Op("Squeeze", n.Name+"_squeeze", []string{y, c.b.Ints("axes", squeeze...)})
	}
	if len(unsq) > 0 {
		y = c.b.Op("Unsqueeze", n.Name+"_unsqueeze", []string{y, c.b.Ints("axes", unsq...)})
	}
	y = c.b.Op("Identity", n.Name, []string{y})
	outRank := -1
	if x.rank >= 0 {
		outRank = x.rank - len(squeeze) + len(unsq)
	}
	c.setNHWC(n, 0, y, outRank, x.dt)
	return nil
}

// slice maps Slice(x, begin, size): size -1 is "to the end".
func (c *converter) slice(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	bv, err := c.in(n, 1)
	if err != nil {
		return err
	}
	sv, err := c.in(n, 2)
	if err != nil {
		return err
	}
	if bv.konst != nil && sv.konst != nil {
		b, err := bv.konst.Int64s()
		if err != nil {
			return err
		}
		s, err := sv.konst.Int64s()
		if err != nil {
			return err
		}
		if len(b) != len(s) {
			return fmt.Errorf("begin %v and size %v differ in length", b, s)
		}
		e := make([]int64, len(b))
		for i := range b {
			e[i] = b[i] + s[i]
			if s[i] < 0 {
				e[i] = i64max
			}
		}
		c.setNHWC(n, 0, c.b.Op("Slice", n.Name, []string{xn, c.b.Ints("starts", b...), c.b.Ints("ends", e...)}), x.rank, x.dt)
		return nil
	}
	b, _, err := c.int64In(n, 1, "begin")
	if err != nil {
		return err
	}
	s, _, err := c.int64In(n, 2, "size")
	if err != nil {
		return err
	}
	neg := c.b.Op("Less", n.Name+"_to_end", []string{s, c.b.I64("zero", nil, []int64{0})})
	e := c.b.Op("Where", n.Name+"_ends", []string{neg, c.b.I64("max", nil, []int64{i64max}), c.b.Op("Add", n.Name+"_end", []string{b, s})})
	c.setNHWC(n, 0, c.b.Op("Slice", n.Name, []string{xn, b, e}), x.rank, x.dt)
	return nil
}

func (c *converter) gather(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	iv, in, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	axis := int64(0)
	if n.Op == "GatherV2" {
		av, err := c.in(n, 2)
		if err != nil {
			return err
		}
		a, err := constInts(av, "the axis")
		if err != nil {
			return err
		}
		if len(a) != 1 {
			return errors.New("the axis must be a scalar")
		}
		axis = a[0]
	}
	if bd := c.attrInt(n, "batch_dims", 0); bd != 0 {
		return c.gatherBatched(n, x, iv, xn, in, axis, bd)
	}
	rank := -1
	if x.rank >= 0 && iv.rank >= 0 {
		rank = x.rank - 1 + iv.rank
	}
	c.setNHWC(n, 0, c.b.Op("Gather", n.Name, []string{xn, in}, canonical.IntAttr("axis", axis)), rank, x.dt)
	return nil
}

func (c *converter) gatherNd(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	in, _, err := c.int64In(n, 1, "indices")
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("GatherND", n.Name, []string{xn, in}), -1, x.dt)
	return nil
}

// splitEqual splits xn into k equal parts along axis.
func (c *converter) splitEqual(n *Node, xn string, axis int64, k int) []string {
	outs := make([]string, k)
	for i := range outs {
		outs[i] = c.b.Fresh(fmt.Sprintf("%s_%d", n.Name, i))
	}
	attrs := []*canonical.Attribute{canonical.IntAttr("axis", axis)}
	if c.b.Opset >= 18 {
		attrs = append(attrs, canonical.IntAttr("num_outputs", int64(k)))
	}
	c.b.Node("Split", []string{xn}, outs, attrs...)
	return outs
}

func (c *converter) split(n *Node) error {
	av, err := c.in(n, 0)
	if err != nil {
		return err
	}
	a, err := constInts(av, "the axis")
	if err != nil {
		return err
	}
	x, xn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	k := c.attrInt(n, "num_split", 0)
	if k < 1 || k > 1<<16 || len(a) != 1 {
		return fmt.Errorf("num_split %d, axis %v", k, a)
	}
	for i, o := range c.splitEqual(n, xn, a[0], int(k)) {
		c.setNHWC(n, i, o, x.rank, x.dt)
	}
	return nil
}

// splitV maps SplitV as one Slice per part (a -1 size takes the rest).
func (c *converter) splitV(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	sv, err := c.in(n, 1)
	if err != nil {
		return err
	}
	sizes, err := constInts(sv, "size_splits")
	if err != nil {
		return err
	}
	av, err := c.in(n, 2)
	if err != nil {
		return err
	}
	a, err := constInts(av, "the axis")
	if err != nil {
		return err
	}
	if len(a) != 1 {
		return errors.New("the axis must be a scalar")
	}
	rest := -1
	for i, s := range sizes {
		if s == -1 {
			if rest >= 0 {
				return errors.New("two sizes are -1")
			}
			rest = i
		} else if s < 0 {
			return fmt.Errorf("size_splits %v", sizes)
		}
	}
	sum := func(l []int64) int64 {
		t := int64(0)
		for _, v := range l {
			t += v
		}
		return t
	}
	for i := range sizes {
		var st, en int64
		if rest < 0 || i < rest {
			st = sum(sizes[:i])
			en = st + sizes[i]
		} else {
			if i == rest {
				st = sum(sizes[:i])
			} else {
				st = -sum(sizes[i:])
			}
			en = -sum(sizes[i+1:])
			if en == 0 {
				en = i64max
			}
		}
		y := c.b.Op("Slice", fmt.Sprintf("%s_%d", n.Name, i), []string{xn, c.b.Ints("starts", st), c.b.Ints("ends", en), c.b.Ints("axes", a[0])})
		c.setNHWC(n, i, y, x.rank, x.dt)
	}
	return nil
}

func (c *converter) pack(n *Node) error {
	k := dataInputs(n)
	if k < 1 {
		return errors.New("Pack of no values")
	}
	vs, err := c.inputs(n, k)
	if err != nil {
		return err
	}
	axis := c.attrInt(n, "axis", 0)
	r := vs[0].rank
	if axis < 0 {
		if r < 0 {
			return errors.New("a negative axis needs a known rank")
		}
		axis += int64(r) + 1
	}
	ins := make([]string, k)
	for i, v := range vs {
		s, err := c.asNHWC(v)
		if err != nil {
			return err
		}
		ins[i] = c.b.Op("Unsqueeze", fmt.Sprintf("%s_in%d", n.Name, i), []string{s, c.b.Ints("axes", axis)})
	}
	rank := -1
	if r >= 0 {
		rank = r + 1
	}
	c.setNHWC(n, 0, c.b.Op("Concat", n.Name, ins, canonical.IntAttr("axis", axis)), rank, vs[0].dt)
	return nil
}

func (c *converter) unpack(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	num := c.attrInt(n, "num", 0)
	if num < 1 || num > 1<<16 {
		return fmt.Errorf("num %d", num)
	}
	axis := c.attrInt(n, "axis", 0)
	if axis < 0 {
		if x.rank < 0 {
			return errors.New("a negative axis needs a known rank")
		}
		axis += int64(x.rank)
	}
	rank := -1
	if x.rank > 0 {
		rank = x.rank - 1
	}
	for i, o := range c.splitEqual(n, xn, axis, int(num)) {
		y := c.b.Op("Squeeze", fmt.Sprintf("%s_%d", n.Name, i), []string{o, c.b.Ints("axes", axis)})
		c.setNHWC(n, i, y, rank, x.dt)
	}
	return nil
}

func (c *converter) tile(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	m, _, err := c.int64In(n, 1, "multiples")
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("Tile", n.Name, []string{xn, m}), x.rank, x.dt)
	return nil
}

func (c *converter) fill(n *Node) error {
	d, dv, err := c.int64In(n, 0, "dims")
	if err != nil {
		return err
	}
	v, vn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	rank := -1
	if dv.konst != nil {
		if dims, err := dv.konst.Int64s(); err == nil {
			rank = len(dims)
		}
	}
	c.setNHWC(n, 0, c.b.Op("Expand", n.Name, []string{vn, d}), rank, v.dt)
	return nil
}

func (c *converter) rangeOp(n *Node) error {
	vs, err := c.inputs(n, 3)
	if err != nil {
		return err
	}
	dt := vs[0].dt
	ins := make([]string, 3)
	for i, v := range vs {
		s, err := c.asNHWC(v)
		if err != nil {
			return err
		}
		if v.rank > 0 {
			s = c.b.Op("Reshape", fmt.Sprintf("%s_scalar%d", n.Name, i), []string{s, c.b.I64("scalar", []int64{0}, nil)})
		}
		if v.dt != dt {
			s = c.b.Op("Cast", fmt.Sprintf("%s_cast%d", n.Name, i), []string{s}, canonical.IntAttr("to", int64(dt)))
		}
		ins[i] = s
	}
	c.setNHWC(n, 0, c.b.Op("Range", n.Name, ins), 1, dt)
	return nil
}

func (c *converter) shapeOp(n *Node) error {
	_, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	dt := canonical.Int32
	if a, ok := n.Attrs["out_type"]; ok && a.Type != "" {
		d, ok := DataType(a.Type)
		if !ok {
			return fmt.Errorf("out_type %s", a.Type)
		}
		dt = d
	}
	y := c.b.Op("Shape", n.Name+"_i64", []string{xn})
	if dt != canonical.Int64 {
		y = c.b.Op("Cast", n.Name, []string{y}, canonical.IntAttr("to", int64(dt)))
	}
	c.setNHWC(n, 0, y, 1, dt)
	return nil
}

// resize maps ResizeBilinear and ResizeNearestNeighbor, run NCHW, with
// the coordinate rules of TF (and TF.js):
//
//	align_corners: src = dst·(in−1)/(out−1), nearest rounds half up;
//	half_pixel_centers: bilinear src = (dst+½)·in/out − ½, nearest
//	floor((dst+½)·in/out) = round-half-up of the half-pixel source;
//	neither: src = dst·in/out, nearest floors.
func (c *converter) resize(n *Node) error {
	x, err := c.in(n, 0)
	if err != nil {
		return err
	}
	switch x.rank {
	case 4:
	case -1:
		// Computed at import as rank -1 (a reshape to a computed
		// shape): TF's images are 4-D by the op's definition.
		x = &value{nhwc: x.nhwc, nchw: x.nchw, rank: 4, dt: x.dt, konst: x.konst}
	default:
		return fmt.Errorf("images of rank %d: want 4 (NHWC)", x.rank)
	}
	xn, err := c.asNCHW(x)
	if err != nil {
		return err
	}
	size, _, err := c.int64In(n, 1, "size")
	if err != nil {
		return err
	}
	ac, hp := c.attrBool(n, "align_corners"), c.attrBool(n, "half_pixel_centers")
	if ac && hp {
		return errors.New("align_corners and half_pixel_centers are both set")
	}
	nc := c.b.Op("Slice", n.Name+"_nc", []string{c.b.Op("Shape", n.Name+"_shape", []string{xn}), c.b.Ints("zero", 0), c.b.Ints("two", 2)})
	sizes := c.b.Op("Concat", n.Name+"_sizes", []string{nc, size}, canonical.IntAttr("axis", 0))
	var attrs []*canonical.Attribute
	if n.Op == "ResizeBilinear" {
		ctm := "asymmetric"
		if ac {
			ctm = "align_corners"
		} else if hp {
			ctm = "half_pixel"
		}
		attrs = append(attrs, canonical.StringAttr("mode", "linear"), canonical.StringAttr("coordinate_transformation_mode", ctm))
	} else {
		ctm, nm := "asymmetric", "floor"
		if ac {
			ctm, nm = "align_corners", "round_prefer_ceil"
		} else if hp {
			ctm, nm = "half_pixel", "round_prefer_ceil"
		}
		attrs = append(attrs, canonical.StringAttr("mode", "nearest"), canonical.StringAttr("coordinate_transformation_mode", ctm), canonical.StringAttr("nearest_mode", nm))
	}
	y := c.b.Op("Resize", n.Name, []string{xn, "", "", sizes}, attrs...)
	c.set(n, 0, &value{nchw: y, rank: 4, dt: x.dt})
	return nil
}

// nms maps NonMaxSuppressionV3/V4/V5 (boxes [n,4] as y1,x1,y2,x2, scores
// [n]) to ONNX NonMaxSuppression over one batch and one class: both keep
// boxes scoring above score_threshold, greedily by score, dropping those
// whose IoU with a kept box exceeds iou_threshold.
func (c *converter) nms(n *Node) error {
	_, boxes, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	sv, scores, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	maxOut, _, err := c.int64In(n, 2, "max_output_size")
	if err != nil {
		return err
	}
	floatIn := func(i int, what string) (string, error) {
		_, s, err := c.nhwcIn(n, i)
		if err != nil {
			return "", err
		}
		v, _ := c.in(n, i)
		if v.dt != canonical.Float {
			s = c.b.Op("Cast", n.Name+"_"+what, []string{s}, canonical.IntAttr("to", int64(canonical.Float)))
		}
		return s, nil
	}
	iou, err := floatIn(3, "iou_threshold")
	if err != nil {
		return err
	}
	var score string
	if n.Op == "NonMaxSuppressionV2" {
		score = c.b.Scalar(n.Name+"_no_score_threshold", float32(math.Inf(-1)))
	} else if score, err = floatIn(4, "score_threshold"); err != nil {
		return err
	}
	if n.Op == "NonMaxSuppressionV5" {
		sg, err := c.in(n, 5)
		if err != nil {
			return err
		}
		if sg.konst == nil {
			return errors.New("soft_nms_sigma must be a constant")
		}
		f, err := sg.konst.Float32s()
		if err != nil {
			return err
		}
		if len(f) != 1 || f[0] != 0 {
			return fmt.Errorf("soft_nms_sigma %v: soft NMS (sigma > 0) has no ONNX equivalent", f)
		}
	}
	b3 := c.b.Op("Unsqueeze", n.Name+"_boxes", []string{boxes, c.b.Ints("axes", 0)})
	s3 := c.b.Op("Unsqueeze", n.Name+"_scores", []string{scores, c.b.Ints("axes", 0, 1)})
	mo := c.b.Op("Reshape", n.Name+"_max", []string{maxOut, c.b.Ints("one", 1)})
	sel := c.b.Op("NonMaxSuppression", n.Name+"_selected", []string{b3, s3, mo, iou, score})
	idx64 := c.b.Op("Gather", n.Name+"_indices64", []string{sel, c.b.I64("col", nil, []int64{2})}, canonical.IntAttr("axis", 1))
	count := c.b.Op("Gather", n.Name+"_count64", []string{c.b.Op("Shape", n.Name+"_n", []string{idx64}), c.b.I64("first", nil, []int64{0})}, canonical.IntAttr("axis", 0))
	idx := idx64
	pad := n.Op == "NonMaxSuppressionV4" && c.attrBool(n, "pad_to_max_output_size")
	if pad {
		amount := c.b.Op("Sub", n.Name+"_pad_amount", []string{mo, c.b.Op("Reshape", n.Name+"_n1", []string{count, c.b.Ints("one", 1)})})
		idx = c.b.Op("Pad", n.Name+"_padded", []string{idx64, c.b.Op("Concat", n.Name+"_pads", []string{c.b.Ints("zero", 0), amount}, canonical.IntAttr("axis", 0))})
	}
	c.setNHWC(n, 0, c.b.Op("Cast", n.Name, []string{idx}, canonical.IntAttr("to", int64(canonical.Int32))), 1, canonical.Int32)
	validIdx := 1
	if n.Op == "NonMaxSuppressionV5" {
		c.setNHWC(n, 1, c.b.Op("Gather", n.Name+"_selected_scores", []string{scores, idx64}, canonical.IntAttr("axis", 0)), 1, sv.dt)
		validIdx = 2
	}
	if n.Op != "NonMaxSuppressionV3" {
		c.setNHWC(n, validIdx, c.b.Op("Cast", n.Name+"_valid_outputs", []string{count}, canonical.IntAttr("to", int64(canonical.Int32))), 0, canonical.Int32)
	}
	return nil
}

func (c *converter) topK(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	k, _, err := c.int64In(n, 1, "k")
	if err != nil {
		return err
	}
	k1 := c.b.Op("Reshape", n.Name+"_k", []string{k, c.b.Ints("one", 1)})
	vals, idx := c.b.Fresh(n.Name), c.b.Fresh(n.Name+"_indices64")
	c.b.Node("TopK", []string{xn, k1}, []string{vals, idx}, canonical.IntAttr("axis", -1), canonical.IntAttr("largest", 1), canonical.IntAttr("sorted", 1))
	c.setNHWC(n, 0, vals, x.rank, x.dt)
	c.setNHWC(n, 1, c.b.Op("Cast", n.Name+"_indices", []string{idx}, canonical.IntAttr("to", int64(canonical.Int32))), x.rank, canonical.Int32)
	return nil
}

// where maps one-input Where (the coordinates of the true or non-zero
// elements, [n, rank] int64, in row-major order); three-input Where is
// Select.
func (c *converter) where(n *Node) error {
	if dataInputs(n) == 3 {
		return c.selectOp(n)
	}
	_, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	nz := c.b.Op("NonZero", n.Name+"_nonzero", []string{xn})
	c.setNHWC(n, 0, c.b.Transpose(nz, []int64{1, 0}, n.Name), 2, canonical.Int64)
	return nil
}

func (c *converter) selectOp(n *Node) error {
	vs, err := c.inputs(n, 3)
	if err != nil {
		return err
	}
	ins := make([]string, 3)
	for i, v := range vs {
		if ins[i], err = c.asNHWC(v); err != nil {
			return err
		}
	}
	cond := ins[0]
	if n.Op == "Select" && vs[0].rank == 1 && vs[1].rank > 1 {
		// Select's vector condition picks whole rows.
		axes := make([]int64, vs[1].rank-1)
		for i := range axes {
			axes[i] = int64(i + 1)
		}
		cond = c.b.Op("Unsqueeze", n.Name+"_cond", []string{cond, c.b.Ints("axes", axes...)})
	}
	rank := max(vs[1].rank, vs[2].rank, vs[0].rank)
	c.setNHWC(n, 0, c.b.Op("Where", n.Name, []string{cond, ins[1], ins[2]}), rank, vs[1].dt)
	return nil
}

func (c *converter) einsum(n *Node) error {
	k := dataInputs(n)
	vs, err := c.inputs(n, k)
	if err != nil {
		return err
	}
	ins := make([]string, k)
	for i, v := range vs {
		if ins[i], err = c.asNHWC(v); err != nil {
			return err
		}
	}
	eq := c.str(n, "equation", "")
	if eq == "" {
		return errors.New("no equation")
	}
	rank := -1
	if i := indexOf(eq, "->"); i >= 0 && indexOf(eq, ".") < 0 {
		rank = len(eq) - i - 2
	}
	c.setNHWC(n, 0, c.b.Op("Einsum", n.Name, ins, canonical.StringAttr("equation", eq)), rank, vs[0].dt)
	return nil
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func (c *converter) compare(n *Node, op string, not bool) error {
	vs, err := c.inputs(n, 2)
	if err != nil {
		return err
	}
	nchw := layoutFor(vs)
	ins, err := c.operands(vs, nchw)
	if err != nil {
		return err
	}
	y := c.b.Op(op, n.Name, ins)
	if not {
		y = c.b.Op("Not", n.Name+"_not", []string{y})
	}
	rank := max(vs[0].rank, vs[1].rank)
	if vs[0].rank < 0 || vs[1].rank < 0 {
		rank = -1
	}
	out := &value{rank: rank, dt: canonical.Bool}
	if nchw {
		out.nchw = y
	} else {
		out.nhwc = y
	}
	c.set(n, 0, out)
	return nil
}

func (c *converter) logicalNot(n *Node) error {
	vs, err := c.inputs(n, 1)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string { return c.b.Op("Not", n.Name, ins) })
}

// mirrorSymmetric pads xn (rank r) by pads (ONNX order: begins then
// ends) reflecting with the edge included (TF's SYMMETRIC): per axis,
// reversed slices of the first and last elements are concatenated.
func (c *converter) mirrorSymmetric(name, xn string, pads []int64) string {
	r := len(pads) / 2
	y := xn
	for ax := 0; ax < r; ax++ {
		b, a := pads[ax], pads[r+ax]
		if b == 0 && a == 0 {
			continue
		}
		parts := []string{}
		axes := c.b.Ints("axis", int64(ax))
		neg := c.b.Ints("step_back", -1)
		if b > 0 {
			parts = append(parts, c.b.Op("Slice", fmt.Sprintf("%s_before%d", name, ax), []string{y, c.b.Ints("starts", b-1), c.b.Ints("ends", i64min), axes, neg}))
		}
		parts = append(parts, y)
		if a > 0 {
			parts = append(parts, c.b.Op("Slice", fmt.Sprintf("%s_after%d", name, ax), []string{y, c.b.Ints("starts", -1), c.b.Ints("ends", -a-1), axes, neg}))
		}
		y = c.b.Op("Concat", fmt.Sprintf("%s_axis%d", name, ax), parts, canonical.IntAttr("axis", int64(ax)))
	}
	return y
}

// gatherBatched maps GatherV2 with batch_dims b: ONNX GatherND with
// batch_dims b over indices with a last axis of 1, the gathered axis
// moved to position b first and the result's axes put back in TF's order
// params[:axis] + indices[b:] + params[axis+1:] (known ranks).
func (c *converter) gatherBatched(n *Node, x, iv *value, xn, in string, axis, bd int64) error {
	if x.rank < 0 || iv.rank < 0 {
		return errors.New("batch_dims needs inputs of known rank")
	}
	pr, ir := int64(x.rank), int64(iv.rank)
	if bd < 0 {
		bd += ir
	}
	if axis < 0 {
		axis += pr
	}
	if bd < 0 || bd > ir || bd > axis || axis >= pr {
		return fmt.Errorf("batch_dims %d and axis %d for params of rank %d and indices of rank %d", bd, axis, pr, ir)
	}
	data := xn
	if axis != bd {
		perm := make([]int64, 0, pr)
		for i := int64(0); i < bd; i++ {
			perm = append(perm, i)
		}
		perm = append(perm, axis)
		for i := bd; i < pr; i++ {
			if i != axis {
				perm = append(perm, i)
			}
		}
		data = c.b.Transpose(xn, perm, n.Name+"_axis_first")
	}
	idx := in
	if iv.dt != canonical.Int64 {
		idx = c.castTo(n.Name+"_idx64", in, canonical.Int64)
	}
	idx = c.b.Op("Unsqueeze", n.Name+"_idx", []string{idx, c.b.Ints("last", -1)})
	y := c.b.Op("GatherND", n.Name+"_gathered", []string{data, idx}, canonical.IntAttr("batch_dims", bd))
	// y: [B…, I…, params[bd:axis]…, params[axis+1:]…]; TF: [B…,
	// params[bd:axis]…, I…, params[axis+1:]…].
	outRank := pr - 1 + ir - bd
	if axis != bd {
		ni, nm := ir-bd, axis-bd
		perm := make([]int64, 0, outRank)
		for i := int64(0); i < bd; i++ {
			perm = append(perm, i)
		}
		for i := int64(0); i < nm; i++ {
			perm = append(perm, bd+ni+i)
		}
		for i := int64(0); i < ni; i++ {
			perm = append(perm, bd+i)
		}
		for i := bd + ni + nm; i < outRank; i++ {
			perm = append(perm, i)
		}
		y = c.b.Transpose(y, perm, n.Name+"_tf_order")
	}
	c.setNHWC(n, 0, c.b.Op("Identity", n.Name, []string{y}), int(outRank), x.dt)
	return nil
}
