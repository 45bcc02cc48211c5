package tflite

import (
	"fmt"
	"slices"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// More ONNX ops as TFLite builtins: normalizations decomposed
// (InstanceNormalization, GroupNormalization), Split, TopK, Where, Expand,
// Tile, Cast, CumSum, Range, GatherND, ArgMax/ArgMin, Sum, Shape, Mod.

// norm2 emits (x - mean) * rsqrt(var + eps) of tensor x (shape sh) over
// axes, as MEAN, SUB, MUL, MEAN, ADD, RSQRT, MUL, and returns the result.
func (c *converter) normalized(n *canonical.Node, x int32, sh []int64, axes []int32, eps float32) int32 {
	red := slices.Clone(sh)
	for _, a := range axes {
		red[a] = 1
	}
	base := n.Outputs[0].Name
	f32 := fb.TensorTypeFLOAT32
	at := c.constI32("axes", axes, []int64{int64(len(axes))})
	mean := c.tmp(base+";mean", f32, red)
	c.t.addOp(fb.BuiltinOperatorMEAN, []int32{x, at}, []int32{mean}, fb.BuiltinOptionsReducerOptions, reducerOpts(true), n.Name)
	d := c.tmp(base+";centered", f32, sh)
	c.t.addOp(fb.BuiltinOperatorSUB, []int32{x, mean}, []int32{d}, fb.BuiltinOptionsSubOptions, emptyOpts(fb.SubOptionsStart, fb.SubOptionsEnd), n.Name)
	sq := c.tmp(base+";sq", f32, sh)
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{d, d}, []int32{sq}, fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	vr := c.tmp(base+";var", f32, red)
	c.t.addOp(fb.BuiltinOperatorMEAN, []int32{sq, at}, []int32{vr}, fb.BuiltinOptionsReducerOptions, reducerOpts(true), n.Name)
	ve := c.tmp(base+";var_eps", f32, red)
	e := c.constF32("epsilon", []float32{eps}, []int64{}, false)
	c.t.addOp(fb.BuiltinOperatorADD, []int32{vr, e}, []int32{ve}, fb.BuiltinOptionsAddOptions, emptyOpts(fb.AddOptionsStart, fb.AddOptionsEnd), n.Name)
	rs := c.tmp(base+";rstd", f32, red)
	c.t.addOp(fb.BuiltinOperatorRSQRT, []int32{ve}, []int32{rs}, 0, nil, n.Name)
	out := c.tmp(base+";normalized", f32, sh)
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{d, rs}, []int32{out}, fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	return out
}

// channelConst is a per-channel constant (ONNX shape [C]) laid out to
// broadcast over a rank-r tensor whose channel axis is at position p.
func (c *converter) channelConst(v *canonical.Value, rank, p int) (int32, error) {
	if v.Const == nil {
		return 0, fmt.Errorf("value %q: a per-channel scale or bias must be constant", v.Name)
	}
	f, err := c.floats(v)
	if err != nil {
		return 0, err
	}
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = 1
	}
	dims[p] = int64(len(f))
	return c.constF32(v.Name, f, dims, true), nil
}

// affine multiplies x by scale and adds bias (per-channel constants at
// channel position p) into out.
func (c *converter) affine(n *canonical.Node, x int32, sh []int64, p int, out int32) error {
	s, err := c.channelConst(n.Inputs[1], len(sh), p)
	if err != nil {
		return unsupported(n, "%v", err)
	}
	b, err := c.channelConst(n.Inputs[2], len(sh), p)
	if err != nil {
		return unsupported(n, "%v", err)
	}
	mid := c.tmp(n.Outputs[0].Name+";scaled", fb.TensorTypeFLOAT32, sh)
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{x, s}, []int32{mid}, fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	c.t.addOp(fb.BuiltinOperatorADD, []int32{mid, b}, []int32{out}, fb.BuiltinOptionsAddOptions, emptyOpts(fb.AddOptionsStart, fb.AddOptionsEnd), n.Name)
	return nil
}

// instanceNorm is InstanceNormalization: per sample and channel over the
// spatial axes, in the input's layout (NHWC after a Conv: the scale and
// bias then broadcast on the last axis).
func (c *converter) instanceNorm(n *canonical.Node) error {
	if len(n.Inputs) != 3 {
		return unsupported(n, "%d inputs, want 3", len(n.Inputs))
	}
	rank := c.rank(n.Inputs[0])
	if rank < 3 {
		return unsupported(n, "input rank %d, want 3 or more", rank)
	}
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	perm := r.perm
	osh, err := c.shape(n.Inputs[0])
	if err != nil {
		return err
	}
	sh := layout.Apply(osh, perm)
	var axes []int32
	for a := 2; a < rank; a++ {
		axes = append(axes, int32(layout.Axis(perm, a)))
	}
	x := c.normalized(n, r.t, sh, axes, n.AttrFloat("epsilon", 1e-5))
	out, err := c.newOut(n.Outputs[0], perm)
	if err != nil {
		return err
	}
	if err := c.affine(n, x, sh, layout.Axis(perm, 1), out); err != nil {
		return err
	}
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("InstanceNormalization %q decomposed (MEAN, SUB, MUL, MEAN, ADD, RSQRT, MUL, MUL, ADD)", n.Name))
	return nil
}

// groupNorm is GroupNormalization (opset 18/21): x [N, C, ...] reshaped to
// [N, G, C/G * spatial], normalized over the last axis, reshaped back, then
// the per-channel scale and bias.
func (c *converter) groupNorm(n *canonical.Node) error {
	if len(n.Inputs) != 3 {
		return unsupported(n, "%d inputs, want 3", len(n.Inputs))
	}
	sh, err := c.shape(n.Inputs[0])
	if err != nil {
		return err
	}
	g := n.AttrInt("num_groups", 0)
	if len(sh) < 3 || g <= 0 || sh[1] <= 0 || sh[1]%g != 0 || sh[0] < 0 {
		return unsupported(n, "needs a static channel count divisible by num_groups %d and a static batch, shape %v", g, sh)
	}
	s, err := c.floats(n.Inputs[1])
	if n.Inputs[1].Const == nil || err != nil {
		return unsupported(n, "scale must be constant")
	}
	if int64(len(s)) != sh[1] {
		// Opset 18: scale and bias per group; expand them per channel.
		return unsupported(n, "per-group scale (opset 18 form) is not supported; per-channel scale of opset 21 is")
	}
	for _, d := range sh[2:] {
		if d < 0 {
			return unsupported(n, "dynamic spatial dims")
		}
	}
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	rest := int64(1)
	for _, d := range sh[1:] {
		rest *= d
	}
	gsh := []int64{sh[0], g, rest / g}
	xg := c.tmp(n.Outputs[0].Name+";grouped", fb.TensorTypeFLOAT32, gsh)
	c.reshape(x, xg, []int32{int32(gsh[0]), int32(gsh[1]), int32(gsh[2])})
	y := c.normalized(n, xg, gsh, []int32{2}, n.AttrFloat("epsilon", 1e-5))
	back := c.tmp(n.Outputs[0].Name+";ungrouped", fb.TensorTypeFLOAT32, sh)
	shp := make([]int32, len(sh))
	for i, d := range sh {
		shp[i] = int32(d)
	}
	c.reshape(y, back, shp)
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	return c.affine(n, back, sh, 1, out)
}

// split is Split as SPLIT_V, in the input's layout.
func (c *converter) split(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	if rank < 0 {
		return unsupported(n, "input rank unknown")
	}
	axis := normAxis(n.AttrInt("axis", 0), rank)
	sh, err := c.shape(n.Inputs[0])
	if err != nil {
		return err
	}
	var sizes []int64
	switch {
	case len(n.Inputs) > 1 && n.Inputs[1] != nil:
		if sizes, err = c.ints(n.Inputs[1]); err != nil {
			return unsupported(n, "split sizes must be constant")
		}
	case len(n.AttrInts("split", nil)) > 0:
		sizes = n.AttrInts("split", nil)
	default:
		k := int64(len(n.Outputs))
		if sh[axis] < 0 {
			return unsupported(n, "equal split of a dynamic axis")
		}
		each := (sh[axis] + k - 1) / k
		for i := int64(0); i < k; i++ {
			sizes = append(sizes, min(each, sh[axis]-i*each))
		}
	}
	if len(sizes) != len(n.Outputs) {
		return unsupported(n, "%d sizes for %d outputs", len(sizes), len(n.Outputs))
	}
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	sz := make([]int32, len(sizes))
	for i, s := range sizes {
		sz[i] = int32(s)
	}
	st := c.constI32("size_splits", sz, []int64{int64(len(sz))})
	at := c.constI32("axis", []int32{int32(layout.Axis(r.perm, axis))}, []int64{})
	var outs []int32
	for _, v := range n.Outputs {
		o, err := c.newOut(v, r.perm)
		if err != nil {
			return err
		}
		outs = append(outs, o)
	}
	num := int32(len(outs))
	c.t.addOp(fb.BuiltinOperatorSPLIT_V, []int32{r.t, st, at}, outs, fb.BuiltinOptionsSplitVOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SplitVOptionsStart(b)
		fb.SplitVOptionsAddNumSplits(b, num)
		return fb.SplitVOptionsEnd(b)
	}, n.Name)
	return nil
}

// topK is TopK (largest, sorted, on the last axis) as TOPK_V2; the int32
// indices are cast to the int64 ONNX gives.
func (c *converter) topK(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	if normAxis(n.AttrInt("axis", -1), rank) != rank-1 {
		return unsupported(n, "TOPK_V2 takes the last axis, this node axis %d", n.AttrInt("axis", -1))
	}
	if n.AttrInt("largest", 1) != 1 {
		return unsupported(n, "largest=0 (TOPK_V2 gives the largest)")
	}
	var k []int64
	var err error
	if len(n.Inputs) > 1 {
		k, err = c.ints(n.Inputs[1])
	} else {
		k = []int64{n.AttrInt("k", 0)}
	}
	if err != nil || len(k) != 1 {
		return unsupported(n, "k must be a constant")
	}
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	kt := c.constI32("k", []int32{int32(k[0])}, []int64{})
	vals, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	ish, err := c.shape(n.Outputs[1])
	if err != nil {
		return err
	}
	idx32 := c.tmp(n.Outputs[1].Name+";int32", fb.TensorTypeINT32, ish)
	c.t.addOp(fb.BuiltinOperatorTOPK_V2, []int32{x, kt}, []int32{vals, idx32}, fb.BuiltinOptionsTopKV2Options, emptyOpts(fb.TopKV2OptionsStart, fb.TopKV2OptionsEnd), n.Name)
	return c.castTo(n, idx32, fb.TensorTypeINT32, n.Outputs[1])
}

// castTo casts tensor x of type from into the tensor of value v.
func (c *converter) castTo(n *canonical.Node, x int32, from fb.TensorType, v *canonical.Value) error {
	to, err := c.elemType(v)
	if err != nil {
		return err
	}
	out, err := c.newOut(v, nil)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorCAST, []int32{x}, []int32{out}, fb.BuiltinOptionsCastOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.CastOptionsStart(b)
		fb.CastOptionsAddInDataType(b, from)
		fb.CastOptionsAddOutDataType(b, to)
		return fb.CastOptionsEnd(b)
	}, n.Name)
	return nil
}

// where is Where as SELECT_V2 (broadcasting).
func (c *converter) where(n *canonical.Node) error {
	rank := c.rank(n.Outputs[0])
	perm, err := c.layoutFor(n.Inputs, rank)
	if err != nil {
		return err
	}
	var ins []int32
	for _, v := range n.Inputs {
		t, err := c.operand(v, perm, rank)
		if err != nil {
			return err
		}
		ins = append(ins, t)
	}
	out, err := c.newOut(n.Outputs[0], perm)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorSELECT_V2, ins, []int32{out}, fb.BuiltinOptionsSelectV2Options, emptyOpts(fb.SelectV2OptionsStart, fb.SelectV2OptionsEnd), n.Name)
	return nil
}

// shapeInput is a constant shape-like input as an int32 tensor, or the
// computed one cast to int32.
func (c *converter) int32Input(n *canonical.Node, v *canonical.Value) (int32, error) {
	if v.Const != nil {
		x, err := c.ints(v)
		if err != nil {
			return 0, err
		}
		y := make([]int32, len(x))
		for i, e := range x {
			y[i] = int32(e)
		}
		return c.constI32(v.Name, y, v.Const.Dims), nil
	}
	t, err := c.get(v, nil)
	if err != nil {
		return 0, err
	}
	tt, err := c.elemType(v)
	if err != nil {
		return 0, err
	}
	if tt == fb.TensorTypeINT32 {
		return t, nil
	}
	sh, err := c.shape(v)
	if err != nil {
		return 0, err
	}
	o := c.tmp(v.Name+";int32", fb.TensorTypeINT32, sh)
	c.t.addOp(fb.BuiltinOperatorCAST, []int32{t}, []int32{o}, fb.BuiltinOptionsCastOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.CastOptionsStart(b)
		fb.CastOptionsAddInDataType(b, tt)
		fb.CastOptionsAddOutDataType(b, fb.TensorTypeINT32)
		return fb.CastOptionsEnd(b)
	}, n.Name)
	return o, nil
}

// expand is Expand as BROADCAST_TO. ONNX broadcasts the shape with the
// input's (a 1 in the shape keeps the input's dim); the output's static
// shape, when known, is what BROADCAST_TO is given.
func (c *converter) expand(n *canonical.Node) error {
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	osh, err := c.shape(n.Outputs[0])
	if err != nil {
		return err
	}
	var st int32
	if !slices.Contains(osh, -1) {
		y := make([]int32, len(osh))
		for i, d := range osh {
			y[i] = int32(d)
		}
		st = c.constI32("shape", y, []int64{int64(len(y))})
	} else if st, err = c.int32Input(n, n.Inputs[1]); err != nil {
		return err
	}
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorBROADCAST_TO, []int32{x, st}, []int32{out}, fb.BuiltinOptionsBroadcastToOptions, emptyOpts(fb.BroadcastToOptionsStart, fb.BroadcastToOptionsEnd), n.Name)
	return nil
}

// tile is Tile as TILE.
func (c *converter) tile(n *canonical.Node) error {
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	reps, err := c.ints(n.Inputs[1])
	if err != nil {
		return unsupported(n, "repeats must be constant")
	}
	reps = layout.Apply(reps, r.perm)
	y := make([]int32, len(reps))
	for i, e := range reps {
		y[i] = int32(e)
	}
	rt := c.constI32("multiples", y, []int64{int64(len(y))})
	out, err := c.newOut(n.Outputs[0], r.perm)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorTILE, []int32{r.t, rt}, []int32{out}, fb.BuiltinOptionsTileOptions, emptyOpts(fb.TileOptionsStart, fb.TileOptionsEnd), n.Name)
	return nil
}

// cast is Cast as CAST, in the input's layout.
func (c *converter) cast(n *canonical.Node) error {
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	from, err := c.elemType(n.Inputs[0])
	if err != nil {
		return unsupported(n, "%v", err)
	}
	to, err := c.elemType(n.Outputs[0])
	if err != nil {
		return unsupported(n, "%v", err)
	}
	if n.Inputs[0].Const != nil {
		from = c.t.tensors[r.t].typ
	}
	out, err := c.newOut(n.Outputs[0], r.perm)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorCAST, []int32{r.t}, []int32{out}, fb.BuiltinOptionsCastOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.CastOptionsStart(b)
		fb.CastOptionsAddInDataType(b, from)
		fb.CastOptionsAddOutDataType(b, to)
		return fb.CastOptionsEnd(b)
	}, n.Name)
	return nil
}

// cumSum is CumSum as CUMSUM (exclusive and reverse as options).
func (c *converter) cumSum(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	ax, err := c.ints(n.Inputs[1])
	if err != nil || len(ax) != 1 {
		return unsupported(n, "axis must be a constant")
	}
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	at := c.constI32("axis", []int32{int32(layout.Axis(r.perm, normAxis(ax[0], rank)))}, []int64{})
	out, err := c.newOut(n.Outputs[0], r.perm)
	if err != nil {
		return err
	}
	excl, rev := n.AttrInt("exclusive", 0) != 0, n.AttrInt("reverse", 0) != 0
	c.t.addOp(fb.BuiltinOperatorCUMSUM, []int32{r.t, at}, []int32{out}, fb.BuiltinOptionsCumsumOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.CumsumOptionsStart(b)
		fb.CumsumOptionsAddExclusive(b, excl)
		fb.CumsumOptionsAddReverse(b, rev)
		return fb.CumsumOptionsEnd(b)
	}, n.Name)
	return nil
}

// rangeOp is Range as RANGE.
func (c *converter) rangeOp(n *canonical.Node) error {
	var ins []int32
	for _, v := range n.Inputs {
		t, err := c.get(v, nil)
		if err != nil {
			return err
		}
		ins = append(ins, t)
	}
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorRANGE, ins, []int32{out}, fb.BuiltinOptionsRangeOptions, emptyOpts(fb.RangeOptionsStart, fb.RangeOptionsEnd), n.Name)
	return nil
}

// gatherND is GatherND (batch_dims 0) as GATHER_ND.
func (c *converter) gatherND(n *canonical.Node) error {
	if n.AttrInt("batch_dims", 0) != 0 {
		return unsupported(n, "batch_dims %d (GATHER_ND has none)", n.AttrInt("batch_dims", 0))
	}
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	idx, err := c.int32Input(n, n.Inputs[1])
	if err != nil {
		return err
	}
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorGATHER_ND, []int32{x, idx}, []int32{out}, fb.BuiltinOptionsGatherNdOptions, emptyOpts(fb.GatherNdOptionsStart, fb.GatherNdOptionsEnd), n.Name)
	return nil
}

// argMinMax is ArgMax/ArgMin (keepdims, select_last_index 0) as
// ARG_MAX/ARG_MIN with int64 output, reshaped when keepdims is set.
func (c *converter) argMinMax(n *canonical.Node) error {
	if n.AttrInt("select_last_index", 0) != 0 {
		return unsupported(n, "select_last_index=1")
	}
	rank := c.rank(n.Inputs[0])
	axis := normAxis(n.AttrInt("axis", 0), rank)
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	at := c.constI32("axis", []int32{int32(axis)}, []int64{1})
	osh, err := c.shape(n.Outputs[0])
	if err != nil {
		return err
	}
	keep := n.AttrInt("keepdims", 1) != 0
	code, ot := fb.BuiltinOperatorARG_MAX, fb.BuiltinOptionsArgMaxOptions
	opts := func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ArgMaxOptionsStart(b)
		fb.ArgMaxOptionsAddOutputType(b, int64Type)
		return fb.ArgMaxOptionsEnd(b)
	}
	if n.OpType == "ArgMin" {
		code, ot = fb.BuiltinOperatorARG_MIN, fb.BuiltinOptionsArgMinOptions
		opts = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.ArgMinOptionsStart(b)
			fb.ArgMinOptionsAddOutputType(b, int64Type)
			return fb.ArgMinOptionsEnd(b)
		}
	}
	if !keep {
		out, err := c.newOut(n.Outputs[0], nil)
		if err != nil {
			return err
		}
		c.t.addOp(code, []int32{x, at}, []int32{out}, ot, opts, n.Name)
		return nil
	}
	if slices.Contains(osh, -1) {
		return unsupported(n, "keepdims with a dynamic shape")
	}
	red := slices.Delete(slices.Clone(osh), axis, axis+1)
	mid := c.tmp(n.Outputs[0].Name+";reduced", int64Type, red)
	c.t.addOp(code, []int32{x, at}, []int32{mid}, ot, opts, n.Name)
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	shp := make([]int32, len(osh))
	for i, d := range osh {
		shp[i] = int32(d)
	}
	c.reshape(mid, out, shp)
	return nil
}

// sum is Sum (two or more inputs, broadcasting) as ADD_N when the shapes
// agree, else a chain of ADD.
func (c *converter) sum(n *canonical.Node) error {
	rank := c.rank(n.Outputs[0])
	perm, err := c.layoutFor(n.Inputs, rank)
	if err != nil {
		return err
	}
	osh, err := c.shape(n.Outputs[0])
	if err != nil {
		return err
	}
	var ins []int32
	for _, v := range n.Inputs {
		t, err := c.operand(v, perm, rank)
		if err != nil {
			return err
		}
		ins = append(ins, t)
	}
	if len(ins) == 1 {
		c.aliases[n.Outputs[0]] = alias{src: n.Inputs[0]}
		return nil
	}
	cur := ins[0]
	tt, err := c.elemType(n.Outputs[0])
	if err != nil {
		return err
	}
	for i, t := range ins[1:] {
		var o int32
		if i == len(ins)-2 {
			if o, err = c.newOut(n.Outputs[0], perm); err != nil {
				return err
			}
		} else {
			o = c.tmp(n.Outputs[0].Name+";partial", tt, layout.Apply(osh, perm))
		}
		c.t.addOp(fb.BuiltinOperatorADD, []int32{cur, t}, []int32{o}, fb.BuiltinOptionsAddOptions, emptyOpts(fb.AddOptionsStart, fb.AddOptionsEnd), n.Name)
		cur = o
	}
	return nil
}

// shapeOp is Shape (start/end 0 and rank) as SHAPE with int64 output.
func (c *converter) shapeOp(n *canonical.Node) error {
	if n.AttrInt("start", 0) != 0 || n.Attr("end") != nil {
		return unsupported(n, "start/end attributes")
	}
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorSHAPE, []int32{x}, []int32{out}, fb.BuiltinOptionsShapeOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ShapeOptionsStart(b)
		fb.ShapeOptionsAddOutType(b, int64Type)
		return fb.ShapeOptionsEnd(b)
	}, n.Name)
	return nil
}
