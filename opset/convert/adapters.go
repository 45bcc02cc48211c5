package convert

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// adapterKey names one version step: the newer version's since_version of
// op, taken up (older -> newer) or down (newer -> older).
type adapterKey struct {
	domain string
	op     string
	since  int
	up     bool
}

// adapter rewrites a node across one version step. It may change the node
// in place, rename its op type (the walk then goes on with the new op), or
// replace it (sc.replaced).
type adapter func(sc *stepCtx) error

// negAxisOps lost negative axes when going below version 11: their axis
// attributes must be made non-negative, which needs the rank.
var negAxisOps = map[string][]string{
	"ArgMax": {"axis"}, "ArgMin": {"axis"}, "Concat": {"axis"}, "Flatten": {"axis"},
	"Gather": {"axis"}, "Hardmax": {"axis"}, "LogSoftmax": {"axis"}, "Softmax": {"axis"},
	"OneHot": {"axis"}, "Split": {"axis"}, "Squeeze": {"axes"}, "Unsqueeze": {"axes"},
	"TopK": {"axis"}, "Compress": {"axis"}, "Scatter": {"axis"},
	"ReduceL1": {"axes"}, "ReduceL2": {"axes"}, "ReduceLogSum": {"axes"}, "ReduceLogSumExp": {"axes"},
	"ReduceMax": {"axes"}, "ReduceMean": {"axes"}, "ReduceMin": {"axes"}, "ReduceProd": {"axes"},
	"ReduceSum": {"axes"}, "ReduceSumSquare": {"axes"},
}

// adapters returns the table of hand-written version steps.
func adapters() map[adapterKey]adapter {
	t := map[adapterKey]adapter{}
	up := func(op string, since int, a adapter) { t[adapterKey{"", op, since, true}] = a }
	down := func(op string, since int, a adapter) { t[adapterKey{"", op, since, false}] = a }

	mlAdapters(t)
	for _, op := range []string{"Softmax", "LogSoftmax", "Hardmax"} {
		up(op, 13, softmaxUp13)
		down(op, 13, softmaxDown13)
	}
	for op, attrs := range negAxisOps {
		attrs := attrs
		down(op, 11, func(sc *stepCtx) error {
			if err := sc.normalizeAxes(attrs); err != nil {
				return err
			}
			return genericStep(sc, false)
		})
	}
	for _, op := range []string{"Max", "Min", "Sum", "Mean"} {
		down(op, 8, sameShapesDown)
	}
	// Celu-28 adds float16, double and bfloat16 to Celu-12's float: other
	// types go down as the function body (Elu, bfloat16 through float).
	down("Celu", 28, func(sc *stepCtx) error {
		if dt := elemType(sc.n.Input(0)); dt != canonical.Float && dt != canonical.Undefined {
			return expandCelu(sc, sc.c.to)
		}
		return genericStep(sc, false)
	})
	// Attention-24 adds nonpad_kv_seqlen, Attention-25 the sliding window:
	// set, they go down as the primitive-op expansion.
	down("Attention", 24, func(sc *stepCtx) error {
		if sc.n.Input(6) != nil {
			return expandAttention(sc, sc.c.to)
		}
		return genericStep(sc, false)
	})
	down("Attention", 25, func(sc *stepCtx) error {
		if sc.n.AttrInt("left_window_size", -1) != -1 || sc.n.AttrInt("right_window_size", -1) != -1 {
			return expandAttention(sc, sc.c.to)
		}
		return genericStep(sc, false)
	})
	up("Upsample", 10, func(sc *stepCtx) error { sc.n.OpType = "Resize"; return nil })
	up("Scatter", 11, func(sc *stepCtx) error { sc.n.OpType = "ScatterElements"; return nil })
	up("Resize", 11, resizeUp11)
	down("Resize", 11, resizeDown11)
	down("Resize", 13, resizeDown13)
	down("Resize", 19, func(sc *stepCtx) error {
		if sc.n.AttrString("coordinate_transformation_mode", "") == "half_pixel_symmetric" {
			return blocked("keep opset >= 19", "coordinate_transformation_mode half_pixel_symmetric is not available before version 19")
		}
		return genericStep(sc, false)
	})
	down("Gemm", 11, func(sc *stepCtx) error {
		if sc.n.Input(2) == nil {
			b := newBuilder(sc, sc.c.to)
			sc.n.SetInput(2, b.scalar(0))
			if b.Err() != nil {
				return b.Err()
			}
		}
		return genericStep(sc, false)
	})
	up("RoiAlign", 16, func(sc *stepCtx) error {
		// Version 10 behaves as "output_half_pixel"; 16's default differs.
		sc.n.SetAttr(canonical.StringAttr("coordinate_transformation_mode", "output_half_pixel"))
		return nil
	})
	down("RoiAlign", 16, func(sc *stepCtx) error {
		if sc.n.AttrString("coordinate_transformation_mode", "half_pixel") != "output_half_pixel" {
			return blocked("keep opset >= 16", "coordinate_transformation_mode half_pixel is not available before version 16")
		}
		sc.n.DeleteAttr("coordinate_transformation_mode")
		return genericStep(sc, false)
	})
	up("GridSample", 20, func(sc *stepCtx) error {
		switch sc.n.AttrString("mode", "bilinear") {
		case "bilinear":
			sc.n.SetAttr(canonical.StringAttr("mode", "linear"))
		case "bicubic":
			sc.n.SetAttr(canonical.StringAttr("mode", "cubic"))
		}
		return nil
	})
	down("GridSample", 20, func(sc *stepCtx) error {
		switch sc.n.AttrString("mode", "linear") {
		case "linear":
			sc.n.SetAttr(canonical.StringAttr("mode", "bilinear"))
		case "cubic":
			sc.n.SetAttr(canonical.StringAttr("mode", "bicubic"))
		}
		return genericStep(sc, false)
	})
	down("Split", 18, func(sc *stepCtx) error {
		if a := sc.n.Attr("num_outputs"); a != nil {
			if int(a.I) != len(sc.n.Outputs) {
				return blocked("keep opset >= 18", "num_outputs=%d differs from the %d outputs", a.I, len(sc.n.Outputs))
			}
			if x := sc.n.Input(0); x != nil {
				if dims, ok := shapeOf(x); ok {
					ax := sc.n.AttrInt("axis", 0)
					if ax < 0 {
						ax += int64(len(dims))
					}
					if ax >= 0 && int(ax) < len(dims) && dims[ax]%a.I != 0 {
						return blocked("keep opset >= 18", "axis of size %d does not split evenly into %d outputs", dims[ax], a.I)
					}
				}
			}
			sc.n.DeleteAttr("num_outputs")
		}
		return genericStep(sc, false)
	})
	down("Slice", 10, func(sc *stepCtx) error {
		if st := sc.n.Input(4); st != nil {
			t := constValue(st)
			ints, err := func() ([]int64, error) {
				if t == nil {
					return nil, fmt.Errorf("not constant")
				}
				return tensorInts(t)
			}()
			if err != nil {
				return blocked("keep opset >= 10", "steps input %q must be constant ones before version 10", st.Name)
			}
			for _, s := range ints {
				if s != 1 {
					return blocked("keep opset >= 10", "steps %v: only steps of 1 exist before version 10", ints)
				}
			}
			sc.n.SetInput(4, nil)
			sc.dropIfUnused(st)
		}
		return genericStep(sc, false)
	})
	down("Constant", 12, func(sc *stepCtx) error {
		for _, name := range []string{"value_float", "value_floats", "value_int", "value_ints"} {
			if sc.n.Attr(name) != nil {
				t := constValue(sc.n.Output(0))
				if t == nil {
					return blocked("", "Constant %s could not be read", name)
				}
				t.Name = sc.n.Output(0).Name
				sc.n.DeleteAttr(name)
				sc.n.SetAttr(canonical.TensorAttr("value", t))
			}
		}
		return genericStep(sc, false)
	})
	down("Constant", 9, func(sc *stepCtx) error {
		// Constant-1 holds only floating-point tensors; any tensor can be an
		// initializer instead.
		out := sc.n.Output(0)
		t := constValue(out)
		if t == nil || t.DataType == canonical.Float || t.DataType == canonical.Double || t.DataType == canonical.Float16 {
			return genericStep(sc, false)
		}
		return sc.constantToInitializer(t)
	})
	down("MaxPool", 10, maxPoolCeilDown)
	down("Shape", 15, shapeDown15)
	up("Scan", 9, func(sc *stepCtx) error {
		return noAdapter("rewrite the Scan-8 node without the batch axis", "no adapter from Scan-8 (batched) to Scan-9")
	})
	down("Scan", 9, func(sc *stepCtx) error {
		return noAdapter("keep opset >= 9", "no adapter from Scan-9 to Scan-8 (batched)")
	})
	for _, op := range []string{"QuantizeLinear", "DequantizeLinear"} {
		down(op, 13, func(sc *stepCtx) error {
			if r, ok := rankOf(sc.n.Input(1)); !ok || r != 0 {
				if !ok {
					return blocked("give the scale a known shape", "scale %q has an unknown rank; version 10 takes only a scalar scale", sc.n.Input(1).Name)
				}
				return blocked("keep opset >= 13", "per-axis quantization (scale of rank %d) is not available before version 13", r)
			}
			sc.n.DeleteAttr("axis")
			return genericStep(sc, false)
		})
	}
	return t
}

// axisValue normalises a possibly negative axis for a tensor of rank r.
func axisValue(ax int64, r int) int64 {
	if ax < 0 {
		return ax + int64(r)
	}
	return ax
}

// normalizeAxes makes the node's axis attributes non-negative, for
// versions before 11.
func (sc *stepCtx) normalizeAxes(attrs []string) error {
	for _, name := range attrs {
		a := sc.n.Attr(name)
		if a == nil {
			continue
		}
		neg := a.I < 0
		for _, x := range a.Ints {
			neg = neg || x < 0
		}
		if !neg {
			continue
		}
		r, ok := rankOf(sc.n.Input(0))
		if !ok {
			return needShapes("the input's rank is known",
				"attribute %s has negative values, which versions before 11 reject, and the input's rank is unknown", name)
		}
		switch sc.n.OpType {
		case "Unsqueeze":
			r += len(a.Ints) // axes index the output
		case "OneHot":
			r++ // axis indexes the output, one rank higher
		}
		if a.Type == canonical.AttrInt {
			a.I = axisValue(a.I, r)
		} else {
			ints := make([]int64, len(a.Ints))
			for i, x := range a.Ints {
				ints[i] = axisValue(x, r)
			}
			a.Ints = ints
		}
	}
	return nil
}

// softmaxUp13: before 13 the input is coerced to 2-D at axis (default 1)
// and normalised over the second dim; from 13 on, over one axis (default
// -1). Both agree when the axis is the last one.
func softmaxUp13(sc *stepCtx) error {
	n := sc.n
	ax := n.AttrInt("axis", 1)
	r, known := rankOf(n.Input(0))
	if ax == -1 || (known && axisValue(ax, r) == int64(r-1)) {
		n.SetAttr(canonical.IntAttr("axis", -1))
		return nil
	}
	if !known {
		return needShapes("the input's rank is known",
			"%s axis %d: the pre-13 coerce-to-2D semantics can only be rewritten when the input's rank is known", n.OpType, ax)
	}
	// Flatten at axis, normalise the last dim, reshape back.
	b := newBuilder(sc, sc.c.to)
	x := n.Input(0)
	flat := b.op("Flatten", []*canonical.Value{x}, canonical.IntAttr("axis", axisValue(ax, r)))
	sm := b.op(n.OpType, []*canonical.Value{flat}, canonical.IntAttr("axis", -1))
	shp := b.op("Shape", []*canonical.Value{x})
	out := b.op("Reshape", []*canonical.Value{sm, shp})
	return b.finish(out)
}

// softmaxDown13 turns the single-axis form into the coerce-to-2D form: the
// same when the axis is last; otherwise the axis is moved last and back.
func softmaxDown13(sc *stepCtx) error {
	n := sc.n
	ax := n.AttrInt("axis", -1)
	r, known := rankOf(n.Input(0))
	to := sc.old.SinceVersion
	if ax == -1 && to >= 11 {
		n.SetAttr(canonical.IntAttr("axis", -1))
		return nil
	}
	if !known {
		return needShapes("the input's rank is known",
			"%s axis %d: the rank of the input is needed to express it before version 13", n.OpType, ax)
	}
	a := axisValue(ax, r)
	if a == int64(r-1) {
		n.SetAttr(canonical.IntAttr("axis", a))
		return nil
	}
	perm := make([]int64, r)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[a], perm[r-1] = perm[r-1], perm[a]
	b := newBuilder(sc, sc.c.to)
	t1 := b.op("Transpose", []*canonical.Value{n.Input(0)}, canonical.IntsAttr("perm", perm...))
	sm := b.op(n.OpType, []*canonical.Value{t1}, canonical.IntAttr("axis", int64(r-1)))
	out := b.op("Transpose", []*canonical.Value{sm}, canonical.IntsAttr("perm", perm...))
	return b.finish(out)
}

// sameShapesDown: before 8, Max/Min/Sum/Mean did not broadcast.
func sameShapesDown(sc *stepCtx) error {
	var first []int64
	for i, in := range sc.n.Inputs {
		s, ok := shapeOf(in)
		if !ok {
			return needShapes("the input shapes are known",
				"%s before version 8 does not broadcast; the shape of input %d is unknown", sc.n.OpType, i)
		}
		if i == 0 {
			first = s
			continue
		}
		if fmt.Sprint(s) != fmt.Sprint(first) {
			return blocked("keep opset >= 8", "%s before version 8 does not broadcast: shapes %v and %v differ", sc.n.OpType, first, s)
		}
	}
	return genericStep(sc, false)
}

// resizeUp11: Resize-10 (X, scales) computes asymmetric coordinates with
// floor rounding for nearest; 11 adds roi and sizes and other defaults.
func resizeUp11(sc *stepCtx) error {
	n := sc.n
	scales := n.Input(1)
	b := newBuilder(sc, 11)
	roi := b.constF([]int64{0})
	if b.Err() != nil {
		return b.Err()
	}
	n.SetInput(1, roi)
	n.SetInput(2, scales)
	n.SetAttr(canonical.StringAttr("coordinate_transformation_mode", "asymmetric"))
	if n.AttrString("mode", "nearest") == "nearest" {
		n.SetAttr(canonical.StringAttr("nearest_mode", "floor"))
	}
	return nil
}

func resizeDown11(sc *stepCtx) error {
	n := sc.n
	mode := n.AttrString("mode", "nearest")
	if mode != "nearest" && mode != "linear" {
		return blocked("keep opset >= 11", "mode %q is not available before version 11", mode)
	}
	if ct := n.AttrString("coordinate_transformation_mode", "half_pixel"); ct != "asymmetric" {
		return blocked("keep opset >= 11", "coordinate_transformation_mode %q cannot be expressed before version 11 (only asymmetric)", ct)
	}
	if mode == "nearest" && n.AttrString("nearest_mode", "round_prefer_floor") != "floor" {
		return blocked("keep opset >= 11", "nearest_mode %q cannot be expressed before version 11 (only floor)", n.AttrString("nearest_mode", "round_prefer_floor"))
	}
	if n.Input(3) != nil {
		return blocked("keep opset >= 11, or give scales instead of sizes", "the sizes input is not available before version 11")
	}
	if n.AttrInt("exclude_outside", 0) != 0 {
		return blocked("keep opset >= 11", "exclude_outside=1 is not available before version 11")
	}
	roi, scales := n.Input(1), n.Input(2)
	n.SetInput(1, scales)
	n.SetInput(2, nil)
	n.TrimInputs()
	sc.dropIfUnused(roi)
	for _, a := range []string{"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value"} {
		n.DeleteAttr(a)
	}
	return nil
}

// resizeDown13: roi and scales are required inputs (maybe empty) in 11.
func resizeDown13(sc *stepCtx) error {
	n := sc.n
	b := newBuilder(sc, 11)
	if n.Input(1) == nil {
		n.SetInput(1, b.constF([]int64{0}))
	}
	if n.Input(2) == nil {
		n.SetInput(2, b.constF([]int64{0}))
	}
	if b.Err() != nil {
		return b.Err()
	}
	if ct := n.AttrString("coordinate_transformation_mode", "half_pixel"); ct == "tf_half_pixel_for_nn" {
		return nil
	}
	return genericStep(sc, false)
}

// shapeDown15: start/end become a Slice of the full shape.
func shapeDown15(sc *stepCtx) error {
	n := sc.n
	start, end := n.Attr("start"), n.Attr("end")
	if start == nil && end == nil {
		return genericStep(sc, false)
	}
	s := int64(0)
	if start != nil {
		s = start.I
	}
	e := int64(1 << 62)
	if end != nil {
		e = end.I
	}
	b := newBuilder(sc, sc.c.to)
	b.dt = canonical.Int64
	shp := b.op("Shape", []*canonical.Value{n.Input(0)})
	var out *canonical.Value
	if sc.c.to >= 10 {
		out = b.op("Slice", []*canonical.Value{shp, b.constI([]int64{1}, s), b.constI([]int64{1}, e), b.constI([]int64{1}, 0)})
	} else {
		out = b.op("Slice", []*canonical.Value{shp}, canonical.IntsAttr("starts", s), canonical.IntsAttr("ends", e), canonical.IntsAttr("axes", 0))
	}
	return b.finish(out)
}

// constantToInitializer replaces the Constant node by an initializer of
// the same name holding t.
func (sc *stepCtx) constantToInitializer(t *canonical.Tensor) error {
	out := sc.n.Output(0)
	name := out.Name
	uses := append([]canonical.Use(nil), out.Uses()...)
	wasOutput := isGraphOutput(sc.g, out)
	sc.g.RemoveNode(sc.n)
	cp := *t
	cp.Name = name
	init, err := sc.g.AddInitializer(&cp)
	if err != nil {
		return fmt.Errorf("turning Constant %q into an initializer: %w", name, err)
	}
	init.Type = out.Type
	for _, u := range uses {
		u.Node.SetInput(u.Index, init)
	}
	if wasOutput {
		sc.g.ReplaceAllUsesWith(out, init)
	}
	sc.replaced = []*canonical.Node{}
	return nil
}

// maxPoolCeilDown: ceil_mode (10) can be expressed before 10 by padding the
// end of each spatial axis so floor mode gives the same windows; padded
// elements never win a max. The input's spatial dims must be known.
func maxPoolCeilDown(sc *stepCtx) error {
	n := sc.n
	if n.AttrInt("ceil_mode", 0) == 0 {
		return genericStep(sc, false)
	}
	if ap := n.AttrString("auto_pad", "NOTSET"); ap != "NOTSET" {
		return blocked("keep opset >= 10", "ceil_mode with auto_pad %s has no equivalent before version 10", ap)
	}
	for _, d := range n.AttrInts("dilations", nil) {
		if d != 1 {
			return blocked("keep opset >= 10", "dilations are not available before version 10")
		}
	}
	dims, ok := shapeOf(n.Input(0))
	kernel := n.AttrInts("kernel_shape", nil)
	if !ok || len(dims) != len(kernel)+2 {
		return needShapes("the input's shape is known",
			"ceil_mode=1 can only be rewritten as padding when the input's spatial dims are known")
	}
	sp := len(kernel)
	strides := n.AttrInts("strides", nil)
	pads := append([]int64(nil), n.AttrInts("pads", make([]int64, 2*sp))...)
	if len(pads) != 2*sp {
		return blocked("", "pads has %d values, want %d", len(pads), 2*sp)
	}
	for i := 0; i < sp; i++ {
		s := int64(1)
		if i < len(strides) {
			s = strides[i]
		}
		in, k := dims[2+i], kernel[i]
		span := in + pads[i] + pads[sp+i] - k
		out := (span+s-1)/s + 1 // ceil
		if (out-1)*s >= in+pads[i] {
			out-- // the last window would start in the end padding
		}
		if extra := (out-1)*s + k - (in + pads[i] + pads[sp+i]); extra > 0 {
			pads[sp+i] += extra
		}
	}
	n.SetAttr(canonical.IntsAttr("pads", pads...))
	n.DeleteAttr("ceil_mode")
	return genericStep(sc, false)
}
