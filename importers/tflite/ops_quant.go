package tflite

import (
	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// QUANTIZE and DEQUANTIZE.

func (c *converter) quantize(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	xt, yt := c.tensor(o.inputs[0]), c.tensor(o.outputs[0])
	lay := c.prefers(o.inputs[0])
	if o.code == fb.BuiltinOperatorDEQUANTIZE && isQuant(xt) && !isQuant(yt) && xt.typ != fb.TensorTypeINT64 {
		// DequantizeLinear straight into the output tensor.
		x, err := c.rawValue(int(o.inputs[0]), lay)
		if err != nil {
			return err
		}
		scale, zp, err := c.qparams(xt)
		if err != nil {
			return err
		}
		var attrs []*canonical.Attribute
		if len(xt.q.scale) > 1 {
			axis, err := axisIn(int64(xt.q.dim), len(xt.shape), lay)
			if err != nil {
				return err
			}
			attrs = append(attrs, canonical.IntAttr("axis", axis))
		}
		return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
			c.node("DequantizeLinear", []string{x, scale, zp}, []string{y}, attrs...)
			return nil
		})
	}
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	if o.code == fb.BuiltinOperatorDEQUANTIZE && !isQuant(xt) && xt.typ != fb.TensorTypeFLOAT32 {
		// float16 weights: a Cast.
		return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
			c.node("Cast", []string{x}, []string{y}, canonical.IntAttr("to", int64(canonical.Float)))
			return nil
		})
	}
	if isQuant(yt) {
		// QUANTIZE or requantize: the float value goes straight into the
		// output's QuantizeLinear.
		return c.finish(o.outputs[0], lay, x)
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Identity", []string{x}, []string{y})
		return nil
	})
}
