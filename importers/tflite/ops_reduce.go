package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	clayout "github.com/onnxconv/onnxconv/canonical/layout"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Reductions: MEAN, SUM, REDUCE_MAX/MIN/PROD, SOFTMAX / LOG_SOFTMAX,
// ARG_MAX / ARG_MIN.

func (c *converter) softmax(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	beta := float32(1)
	if o.code == fb.BuiltinOperatorSOFTMAX {
		opt, err := options[fb.SoftmaxOptions](o, fb.BuiltinOptionsSoftmaxOptions)
		if err != nil {
			return err
		}
		beta = opt.Beta()
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	axis := int64(-1)
	if lay == nchw {
		axis = 1
	}
	op := "Softmax"
	if o.code == fb.BuiltinOperatorLOG_SOFTMAX {
		op = "LogSoftmax"
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		in := x
		if beta != 1 {
			in = c.unique(y + "_scaled")
			c.node("Mul", []string{x, c.scalarF32(y+"_beta", beta)}, []string{in})
		}
		c.node(op, []string{in}, []string{y}, canonical.IntAttr("axis", axis))
		return nil
	})
}

func (c *converter) reduce(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	opt, err := options[fb.ReducerOptions](o, fb.BuiltinOptionsReducerOptions)
	if err != nil {
		return err
	}
	xt := c.tensor(o.inputs[0])
	r := len(xt.shape)
	axes, err := c.constInts(o.inputs[1])
	if err != nil {
		return fmt.Errorf("axes: %w", err)
	}
	keep := opt.KeepDims()
	reduced := make([]bool, r)
	for _, a := range axes {
		n, err := axisIn(a, r, native)
		if err != nil {
			return err
		}
		reduced[n] = true
	}
	lay := c.prefers(o.inputs[0])
	if lay == nchw && !keep {
		// The remaining dims must keep their TFLite order in NCHW.
		last := -1
		for _, d := range clayout.ToFirst(4) {
			if reduced[d] {
				continue
			}
			if d < last {
				lay = native
				break
			}
			last = d
		}
	}
	outLay := lay
	if !keep && lay == nchw {
		outLay = native // lower rank, same order
	}
	var onnxAxes []int64
	for i := 0; i < r; i++ {
		if reduced[i] {
			a, _ := axisIn(int64(i), r, lay)
			onnxAxes = append(onnxAxes, a)
		}
	}
	if o.code == fb.BuiltinOperatorMEAN && len(onnxAxes) > 0 {
		// int8: XNNPACK's integer sum and float32 rescale, exactly (exact8.go).
		if done, err := c.exactMean(o, lay, outLay, onnxAxes, keep, reduced); done || err != nil {
			return err
		}
	}
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	op := map[fb.BuiltinOperator]string{
		fb.BuiltinOperatorMEAN: "ReduceMean", fb.BuiltinOperatorSUM: "ReduceSum",
		fb.BuiltinOperatorREDUCE_MAX: "ReduceMax", fb.BuiltinOperatorREDUCE_MIN: "ReduceMin",
		fb.BuiltinOperatorREDUCE_PROD: "ReduceProd",
	}[o.code]
	keepI := int64(0)
	if keep {
		keepI = 1
	}
	if keep && len(c.tensor(o.outputs[0]).shape) != r || !keep && len(c.tensor(o.outputs[0]).shape) != r-len(onnxAxes) {
		if len(axes) > 0 {
			return fmt.Errorf("output rank %d does not match reducing %v of rank %d", len(c.tensor(o.outputs[0]).shape), axes, r)
		}
	}
	return c.emit(o.outputs[0], outLay, fb.ActivationFunctionTypeNONE, func(y string) error {
		if len(onnxAxes) == 0 {
			c.node("Identity", []string{x}, []string{y})
			return nil
		}
		if c.opts.Opset >= 18 || op == "ReduceSum" {
			c.node(op, []string{x, c.constI64(y+"_axes", onnxAxes)}, []string{y}, canonical.IntAttr("keepdims", keepI))
		} else {
			c.node(op, []string{x}, []string{y}, canonical.IntsAttr("axes", onnxAxes...), canonical.IntAttr("keepdims", keepI))
		}
		return nil
	})
}

func (c *converter) argMinMax(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	var outType fb.TensorType
	op := "ArgMax"
	if o.code == fb.BuiltinOperatorARG_MAX {
		opt, err := options[fb.ArgMaxOptions](o, fb.BuiltinOptionsArgMaxOptions)
		if err != nil {
			return err
		}
		outType = opt.OutputType()
	} else {
		opt, err := options[fb.ArgMinOptions](o, fb.BuiltinOptionsArgMinOptions)
		if err != nil {
			return err
		}
		outType = opt.OutputType()
		op = "ArgMin"
	}
	a, err := c.constInts(o.inputs[1])
	if err != nil || len(a) != 1 {
		return fmt.Errorf("axis must be a constant scalar")
	}
	xt := c.tensor(o.inputs[0])
	r := len(xt.shape)
	axis, err := axisIn(a[0], r, native)
	if err != nil {
		return err
	}
	lay := c.prefers(o.inputs[0])
	if lay == nchw {
		reduced := make([]bool, r)
		reduced[axis] = true
		if !keepsOrder(reduced) {
			lay = native
		}
	}
	onnxAxis, _ := axisIn(axis, r, lay)
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		if outType == fb.TensorTypeINT64 {
			c.node(op, []string{x}, []string{y}, canonical.IntAttr("axis", onnxAxis), canonical.IntAttr("keepdims", 0))
			return nil
		}
		i64 := c.unique(y + "_int64")
		c.node(op, []string{x}, []string{i64}, canonical.IntAttr("axis", onnxAxis), canonical.IntAttr("keepdims", 0))
		c.node("Cast", []string{i64}, []string{y}, canonical.IntAttr("to", int64(canonical.Int32)))
		return nil
	})
}
