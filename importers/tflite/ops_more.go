package tflite

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
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
	c.node("Cast", []string{x}, []string{y}, attrInt("to", int64(onnxpb.TensorProto_INT64)))
	return y, nil
}

// castOut writes int64 value v as output idx in its TFLite integer type.
func (c *converter) castOut(idx int32, v string) error {
	dt, err := onnxType(c.tensor(idx).typ)
	if err != nil {
		return err
	}
	y := c.output(idx, native)
	if dt == onnxpb.TensorProto_INT64 {
		c.node("Identity", []string{v}, []string{y})
	} else {
		c.node("Cast", []string{v}, []string{y}, attrInt("to", int64(dt)))
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
	c.node("TopK", []string{x, k1}, []string{vals, idx}, attrInt("axis", -1), attrInt("largest", 1), attrInt("sorted", 1))
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
		c.node("CumSum", []string{x, a}, []string{y}, attrInt("exclusive", b2i(opt.Exclusive())), attrInt("reverse", b2i(opt.Reverse())))
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
			c.node("Mod", ins, []string{y}, attrInt("fmod", 0))
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
		c.node("ReduceSum", []string{sq, c.constI64(y+"_axes", []int64{-1})}, []string{s}, attrInt("keepdims", 1))
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
		dt = onnxpb.TensorProto_FLOAT
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		z := c.unique(y + "_zeros")
		c.node("ConstantOfShape", []string{s}, []string{z}, constantValueAttr(dt, 0))
		c.node("ScatterND", []string{z, i, u}, []string{y}, attrString("reduction", "add"))
		return nil
	})
}

// whereOp is WHERE (one input): the coordinates of the true (non-zero)
// elements, [count, rank], as NonZero transposed.
func (c *converter) whereOp(o *operator) error {
	if len(o.inputs) != 1 {
		return fmt.Errorf("WHERE with %d inputs: only the one-input form (coordinates) is supported", len(o.inputs))
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	nz := c.unique(c.base[o.outputs[0]] + "_nonzero")
	c.node("NonZero", []string{x}, []string{nz})
	t := c.unique(c.base[o.outputs[0]] + "_coords")
	c.node("Transpose", []string{nz}, []string{t}, attrInts("perm", []int64{1, 0}))
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
func constantValueAttr(dt onnxpb.TensorProto_DataType, v float64) *onnxpb.AttributeProto {
	t := &onnxpb.TensorProto{Dims: []int64{1}, DataType: proto.Int32(int32(dt))}
	switch dt {
	case onnxpb.TensorProto_FLOAT:
		t.FloatData = []float32{float32(v)}
	case onnxpb.TensorProto_INT32, onnxpb.TensorProto_INT8, onnxpb.TensorProto_UINT8, onnxpb.TensorProto_INT16, onnxpb.TensorProto_BOOL:
		t.Int32Data = []int32{int32(v)}
	case onnxpb.TensorProto_INT64:
		t.Int64Data = []int64{int64(v)}
	}
	return &onnxpb.AttributeProto{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: t}
}
