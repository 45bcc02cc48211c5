package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Elementwise ops: unary math and activations (with the fused-activation
// clips), broadcasting binary ops, ADD_N, SELECT_V2, CAST.

func (c *converter) unary(o *operator, op string, attrs ...*canonical.Attribute) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node(op, []string{x}, []string{y}, attrs...)
		return nil
	})
}

func (c *converter) unaryChain(o *operator, first, second string) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		mid := c.unique(y + "_" + first)
		c.node(first, []string{x}, []string{mid})
		c.node(second, []string{mid}, []string{y})
		return nil
	})
}

// hardSwish13 is x * HardSigmoid(x) (alpha 1/6, beta 1/2) for opsets
// before HardSwish.
func (c *converter) hardSwish13(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		hs := c.unique(y + "_hard_sigmoid")
		c.node("HardSigmoid", []string{x}, []string{hs}, canonical.FloatAttr("alpha", 1.0/6), canonical.FloatAttr("beta", 0.5))
		c.node("Mul", []string{x, hs}, []string{y})
		return nil
	})
}

func (c *converter) square(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Mul", []string{x, x}, []string{y})
		return nil
	})
}

func (c *converter) clip(o *operator, lo, hi float32) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Clip", []string{x, c.scalarF32(y+"_min", lo), c.scalarF32(y+"_max", hi)}, []string{y})
		return nil
	})
}

// fusedAct reads the fused activation of the elementwise ops that have one.
func fusedAct(o *operator) (fb.ActivationFunctionType, error) {
	switch o.code {
	case fb.BuiltinOperatorADD:
		opt, err := options[fb.AddOptions](o, fb.BuiltinOptionsAddOptions)
		if err != nil {
			return 0, err
		}
		return opt.FusedActivationFunction(), nil
	case fb.BuiltinOperatorSUB:
		opt, err := options[fb.SubOptions](o, fb.BuiltinOptionsSubOptions)
		if err != nil {
			return 0, err
		}
		return opt.FusedActivationFunction(), nil
	case fb.BuiltinOperatorMUL:
		opt, err := options[fb.MulOptions](o, fb.BuiltinOptionsMulOptions)
		if err != nil {
			return 0, err
		}
		return opt.FusedActivationFunction(), nil
	case fb.BuiltinOperatorDIV:
		opt, err := options[fb.DivOptions](o, fb.BuiltinOptionsDivOptions)
		if err != nil {
			return 0, err
		}
		return opt.FusedActivationFunction(), nil
	}
	return fb.ActivationFunctionTypeNONE, nil
}

// binary converts a broadcasting binary op; post is "", "square" (for
// SQUARED_DIFFERENCE) or "floor" (FLOOR_DIV).
func (c *converter) binary(o *operator, op string, post ...string) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	act, err := fusedAct(o)
	if err != nil {
		return err
	}
	out := c.tensor(o.outputs[0])
	lay := c.chooseLayout(o.inputs[:2], len(out.shape))
	if len(post) == 0 {
		// Quantized ADD/SUB: TFLite's integer kernel, exactly (exact8.go).
		if done, err := c.exactAddSub(o, act, lay); done || err != nil {
			return err
		}
	}
	var ins []string
	for _, i := range o.inputs[:2] {
		v, err := c.floatValue(i, lay)
		if err != nil {
			return err
		}
		ins = append(ins, v)
	}
	return c.emit(o.outputs[0], lay, act, func(y string) error {
		if len(post) == 0 {
			c.node(op, ins, []string{y})
			return nil
		}
		mid := c.unique(y + "_" + op)
		c.node(op, ins, []string{mid})
		switch post[0] {
		case "square":
			c.node("Mul", []string{mid, mid}, []string{y})
		case "floor":
			c.node("Floor", []string{mid}, []string{y})
		case "not":
			c.node("Not", []string{mid}, []string{y})
		}
		return nil
	})
}

func (c *converter) cast(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	yt := c.tensor(o.outputs[0])
	dt, err := onnxType(yt.typ)
	if err != nil {
		return err
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.rawValue(int(o.inputs[0]), lay)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Cast", []string{x}, []string{y}, canonical.IntAttr("to", int64(dt)))
		return nil
	})
}

// selectV2 is SELECT / SELECT_V2: Where(cond, x, y).
func (c *converter) selectV2(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	yt := c.tensor(o.outputs[0])
	lay := c.chooseLayout(o.inputs[:3], len(yt.shape))
	var ins []string
	for _, i := range o.inputs[:3] {
		if lay == nchw && c.tensor(i).data == nil && len(c.tensor(i).shape) != 4 {
			lay = native
		}
	}
	for _, i := range o.inputs[:3] {
		v, err := c.floatValue(i, lay)
		if err != nil {
			return err
		}
		ins = append(ins, v)
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Where", ins, []string{y})
		return nil
	})
}

func (c *converter) addN(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	yt := c.tensor(o.outputs[0])
	lay := c.chooseLayout(o.inputs, len(yt.shape))
	var ins []string
	for _, i := range o.inputs {
		if i < 0 {
			return fmt.Errorf("omitted input")
		}
		v, err := c.floatValue(i, lay)
		if err != nil {
			return err
		}
		ins = append(ins, v)
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Sum", ins, []string{y})
		return nil
	})
}
