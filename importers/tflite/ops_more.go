package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// TOPK_V2, BROADCAST_TO, CUMSUM, RANGE, GATHER_ND, ZEROS_LIKE,
// FILL, REVERSE_V2, FLOOR_MOD, L2_NORMALIZATION, SCATTER_ND, WHERE, RANK,
// BROADCAST_ARGS: the TFLite layout kept (native).

// int64Of returns tensor idx (int32 or int64) as an int64 ONNX value:
// constants converted now, computed values cast.
func (c *converter) int64Of(idx int32) (string, error) {
	t := c.tensor(idx)
	if t.data != nil {
		v, err := c.constInts(idx)
		if err != nil {
			return "", err
		}
		return c.constI64Dims(c.unique(c.base[idx]+"_i64"), t.shape, v), nil
	}
	x, err := c.rawValue(int(idx), native)
	if err != nil {
		return "", err
	}
	if t.typ == fb.TensorTypeINT64 {
		return x, nil
	}
	y := c.unique(c.base[idx] + "_i64")
	c.node("Cast", []string{x}, []string{y}, canonical.IntAttr("to", int64(canonical.Int64)))
	return y, nil
}

// castOut writes int64 value v as output idx in its TFLite integer type.
func (c *converter) castOut(idx int32, v string) error {
	dt, err := onnxType(c.tensor(idx).typ)
	if err != nil {
		return err
	}
	y := c.output(idx, native)
	if dt == canonical.Int64 {
		c.node("Identity", []string{v}, []string{y})
	} else {
		c.node("Cast", []string{v}, []string{y}, canonical.IntAttr("to", int64(dt)))
	}
	return c.finish(idx, native, y)
}

func (c *converter) topK(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	if len(o.outputs) != 2 {
		return fmt.Errorf("%d outputs, want 2", len(o.outputs))
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	k, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	k1 := c.unique(c.base[o.inputs[1]] + "_k")
	c.node("Reshape", []string{k, c.constI64(k1+"_shape", []int64{1})}, []string{k1})
	vals := c.output(o.outputs[0], native)
	idx := c.unique(c.base[o.outputs[1]] + "_i64")
	c.node("TopK", []string{x, k1}, []string{vals, idx}, canonical.IntAttr("axis", -1), canonical.IntAttr("largest", 1), canonical.IntAttr("sorted", 1))
	if err := c.finish(o.outputs[0], native, vals); err != nil {
		return err
	}
	return c.castOut(o.outputs[1], idx)
}

func (c *converter) broadcastTo(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	s, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Expand", []string{x, s}, []string{y})
		return nil
	})
}

func (c *converter) cumSum(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	opt, err := options[fb.CumsumOptions](o, fb.BuiltinOptionsCumsumOptions)
	if err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	a, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("CumSum", []string{x, a}, []string{y}, canonical.IntAttr("exclusive", b2i(opt.Exclusive())), canonical.IntAttr("reverse", b2i(opt.Reverse())))
		return nil
	})
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (c *converter) rangeOp(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	var ins []string
	for _, i := range o.inputs[:3] {
		v, err := c.floatValue(i, native)
		if err != nil {
			return err
		}
		ins = append(ins, v)
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Range", ins, []string{y})
		return nil
	})
}

func (c *converter) gatherND(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	i, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("GatherND", []string{x, i}, []string{y})
		return nil
	})
}

// likeOp is ZEROS_LIKE: zeros of the input's shape and type.
func (c *converter) likeOp(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	dt, err := onnxType(c.tensor(o.outputs[0]).typ)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		s := c.unique(y + "_shape")
		c.node("Shape", []string{x}, []string{s})
		c.node("ConstantOfShape", []string{s}, []string{y}, constantValueAttr(dt, 0))
		return nil
	})
}

func (c *converter) fill(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	s, err := c.int64Of(o.inputs[0])
	if err != nil {
		return err
	}
	v, err := c.floatValue(o.inputs[1], native)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Expand", []string{v, s}, []string{y})
		return nil
	})
}

// reverse is REVERSE_V2 as a Slice with step -1 on each axis.
func (c *converter) reverse(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	axes, err := c.constInts(o.inputs[1])
	if err != nil {
		return fmt.Errorf("axes: %w", err)
	}
	r := len(c.tensor(o.inputs[0]).shape)
	for i, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a >= int64(r) {
			return fmt.Errorf("axis %d out of range for rank %d", axes[i], r)
		}
		axes[i] = a
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	n := len(axes)
	starts, ends, steps := make([]int64, n), make([]int64, n), make([]int64, n)
	for i := range axes {
		starts[i], ends[i], steps[i] = -1, -1<<62, -1
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Slice", []string{x, c.constI64(y+"_starts", starts), c.constI64(y+"_ends", ends), c.constI64(y+"_axes", axes), c.constI64(y+"_steps", steps)}, []string{y})
		return nil
	})
}

// floorMod is FLOOR_MOD: Mod with the sign of the divisor (fmod 0) for
// integers; for floats x - floor(x / y) * y.
func (c *converter) floorMod(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	var ins []string
	for _, i := range o.inputs[:2] {
		v, err := c.floatValue(i, native)
		if err != nil {
			return err
		}
		ins = append(ins, v)
	}
	isFloat := c.tensor(o.outputs[0]).typ == fb.TensorTypeFLOAT32
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		if !isFloat {
			c.node("Mod", ins, []string{y}, canonical.IntAttr("fmod", 0))
			return nil
		}
		d := c.unique(y + "_div")
		c.node("Div", ins, []string{d})
		f := c.unique(y + "_floor")
		c.node("Floor", []string{d}, []string{f})
		m := c.unique(y + "_mul")
		c.node("Mul", []string{f, ins[1]}, []string{m})
		c.node("Sub", []string{ins[0], m}, []string{y})
		return nil
	})
}

// l2Norm is L2_NORMALIZATION on the last axis: x / sqrt(max(sum(x^2),
// 1e-6)) as TFLite's kernel computes it.
func (c *converter) l2Norm(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.L2NormOptions](o, fb.BuiltinOptionsL2NormOptions)
	if err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, opt.FusedActivationFunction(), func(y string) error {
		sq := c.unique(y + "_sq")
		c.node("Mul", []string{x, x}, []string{sq})
		s := c.unique(y + "_sum")
		c.node("ReduceSum", []string{sq, c.constI64(y+"_axes", []int64{-1})}, []string{s}, canonical.IntAttr("keepdims", 1))
		m := c.unique(y + "_clamped")
		c.node("Max", []string{s, c.scalarF32(y+"_eps", 1e-6)}, []string{m})
		r := c.unique(y + "_norm")
		c.node("Sqrt", []string{m}, []string{r})
		c.node("Div", []string{x, r}, []string{y})
		return nil
	})
}

// scatterND is SCATTER_ND(indices, updates, shape): updates summed into
// zeros of shape at indices (TFLite adds repeated indices).
func (c *converter) scatterND(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	i, err := c.int64Of(o.inputs[0])
	if err != nil {
		return err
	}
	u, err := c.floatValue(o.inputs[1], native)
	if err != nil {
		return err
	}
	s, err := c.int64Of(o.inputs[2])
	if err != nil {
		return err
	}
	dt, err := onnxType(c.tensor(o.outputs[0]).typ)
	if err != nil {
		return err
	}
	if isQuant(c.tensor(o.outputs[0])) {
		dt = canonical.Float
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		z := c.unique(y + "_zeros")
		c.node("ConstantOfShape", []string{s}, []string{z}, constantValueAttr(dt, 0))
		c.node("ScatterND", []string{z, i, u}, []string{y}, canonical.StringAttr("reduction", "add"))
		return nil
	})
}

// whereOp is WHERE (one input): the coordinates of the true (non-zero)
// elements, [count, rank], as NonZero transposed.
func (c *converter) whereOp(o *operator) error {
	if len(o.inputs) != 1 {
		return fmt.Errorf("WHERE with %d inputs: only the one-input form (coordinates) is supported", len(o.inputs))
	}
	if err := needInputs(o, 1); err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	nz := c.unique(c.base[o.outputs[0]] + "_nonzero")
	c.node("NonZero", []string{x}, []string{nz})
	t := c.unique(c.base[o.outputs[0]] + "_coords")
	c.node("Transpose", []string{nz}, []string{t}, canonical.IntsAttr("perm", []int64{1, 0}...))
	return c.castOut(o.outputs[0], t)
}

// rankOp is RANK: the input's rank as an int32 scalar.
func (c *converter) rankOp(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	s := c.unique(c.base[o.outputs[0]] + "_shape")
	c.node("Shape", []string{x}, []string{s})
	r := c.unique(c.base[o.outputs[0]] + "_rank")
	c.node("Size", []string{s}, []string{r})
	return c.castOut(o.outputs[0], r)
}

// constantValueAttr is ConstantOfShape's value attribute: one element of
// type dt equal to v.
func constantValueAttr(dt canonical.DataType, v float64) *canonical.Attribute {
	return canonical.TensorAttr("value", canonical.NumberTensor("", dt, []int64{1}, []float64{v}))
}

// localResponseNorm is LOCAL_RESPONSE_NORMALIZATION on the last (channel)
// axis of a 4-D tensor: ONNX LRN on NCHW, whose alpha is divided by the
// window size (TFLite's is not).
func (c *converter) localResponseNorm(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	if err := c.need4D(o.inputs[0]); err != nil {
		return err
	}
	opt, err := options[fb.LocalResponseNormalizationOptions](o, fb.BuiltinOptionsLocalResponseNormalizationOptions)
	if err != nil {
		return err
	}
	size := int64(2*opt.Radius() + 1)
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], nchw, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("LRN", []string{x}, []string{y}, canonical.IntAttr("size", size), canonical.FloatAttr("alpha", opt.Alpha()*float32(size)),
			canonical.FloatAttr("beta", opt.Beta()), canonical.FloatAttr("bias", opt.Bias()))
		return nil
	})
}

// oneHot is ONE_HOT(indices, depth, on, off) as OneHot(indices, depth,
// [off, on]).
func (c *converter) oneHot(o *operator) error {
	if err := needInputs(o, 4); err != nil {
		return err
	}
	opt, err := options[fb.OneHotOptions](o, fb.BuiltinOptionsOneHotOptions)
	if err != nil {
		return err
	}
	idx, err := c.int64Of(o.inputs[0])
	if err != nil {
		return err
	}
	depth, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	on, err := c.floatValue(o.inputs[2], native)
	if err != nil {
		return err
	}
	off, err := c.floatValue(o.inputs[3], native)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		vals := c.unique(y + "_values")
		var parts []string
		for k, v := range []string{off, on} {
			r := c.unique(y + "_value" + string(rune('0'+k)))
			c.node("Reshape", []string{v, c.constI64(r+"_shape", []int64{1})}, []string{r})
			parts = append(parts, r)
		}
		c.node("Concat", parts, []string{vals}, canonical.IntAttr("axis", 0))
		c.node("OneHot", []string{idx, depth, vals}, []string{y}, canonical.IntAttr("axis", int64(opt.Axis())))
		return nil
	})
}

// embeddingLookup is EMBEDDING_LOOKUP(ids, table): Gather on axis 0.
func (c *converter) embeddingLookup(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	ids, err := c.int64Of(o.inputs[0])
	if err != nil {
		return err
	}
	tbl, err := c.floatValue(o.inputs[1], native)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Gather", []string{tbl, ids}, []string{y}, canonical.IntAttr("axis", 0))
		return nil
	})
}

// reduceAnyAll is REDUCE_ANY / REDUCE_ALL on bool: ReduceMax / ReduceMin
// of the values cast to int32, cast back.
func (c *converter) reduceAnyAll(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	opt, err := options[fb.ReducerOptions](o, fb.BuiltinOptionsReducerOptions)
	if err != nil {
		return err
	}
	axes, err := c.constInts(o.inputs[1])
	if err != nil {
		return fmt.Errorf("axes: %w", err)
	}
	x, err := c.rawValue(int(o.inputs[0]), native)
	if err != nil {
		return err
	}
	op := "ReduceMax"
	if o.code == fb.BuiltinOperatorREDUCE_ALL {
		op = "ReduceMin"
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		xi := c.unique(y + "_i32")
		c.node("Cast", []string{x}, []string{xi}, canonical.IntAttr("to", int64(canonical.Int32)))
		r := c.unique(y + "_reduced")
		c.node(op, []string{xi, c.constI64(y+"_axes", axes)}, []string{r}, canonical.IntAttr("keepdims", b2i(opt.KeepDims())))
		c.node("Cast", []string{r}, []string{y}, canonical.IntAttr("to", int64(canonical.Bool)))
		return nil
	})
}
