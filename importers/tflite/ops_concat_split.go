package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	clayout "github.com/onnxconv/onnxconv/canonical/layout"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Joining and splitting: CONCATENATION, SPLIT / SPLIT_V, PACK, UNPACK, and
// emitMulti for ops with several outputs.

func (c *converter) concat(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.ConcatenationOptions](o, fb.BuiltinOptionsConcatenationOptions)
	if err != nil {
		return err
	}
	yt := c.tensor(o.outputs[0])
	lay := c.chooseLayout(o.inputs, len(yt.shape))
	for _, i := range o.inputs {
		if i < 0 || len(c.tensor(i).shape) != len(yt.shape) {
			lay = native
		}
	}
	axis, err := axisIn(int64(opt.Axis()), len(yt.shape), lay)
	if err != nil {
		return err
	}
	raw := opt.FusedActivationFunction() == fb.ActivationFunctionTypeNONE
	for _, i := range o.inputs {
		if i < 0 {
			return fmt.Errorf("omitted input")
		}
		raw = raw && sameQuant(c.tensor(i), yt)
	}
	var ins []string
	for _, i := range o.inputs {
		var v string
		var err error
		if raw {
			v, err = c.rawValue(int(i), lay)
		} else {
			v, err = c.floatValue(i, lay)
		}
		if err != nil {
			return err
		}
		ins = append(ins, v)
	}
	build := func(y string) error {
		c.node("Concat", ins, []string{y}, canonical.IntAttr("axis", axis))
		return nil
	}
	if raw {
		return c.emitMove(o.outputs[0], lay, true, build)
	}
	return c.emit(o.outputs[0], lay, opt.FusedActivationFunction(), build)
}

// emitMulti is emit for ops with several outputs: build gets the value
// names to write, one per output tensor, all in layout lay.
func (c *converter) emitMulti(outs []int32, lay layout, raw bool, build func(ys []string) error) error {
	ys := make([]string, len(outs))
	for i, o := range outs {
		if raw {
			ys[i] = c.layoutName(int(o), lay)
		} else {
			ys[i] = c.output(o, lay)
		}
	}
	if err := build(ys); err != nil {
		return err
	}
	for i, o := range outs {
		if err := c.finishAs(o, lay, ys[i], raw); err != nil {
			return err
		}
	}
	return nil
}

// keepsOrder reports whether removing the reduced dims of a rank-4 NCHW
// value leaves the remaining dims in their TFLite order.
func keepsOrder(reduced []bool) bool {
	last := -1
	for _, d := range clayout.ToFirst(4) {
		if reduced[d] {
			continue
		}
		if d < last {
			return false
		}
		last = d
	}
	return true
}

func (c *converter) split(o *operator) error {
	var in int32
	var axisT int32
	var sizes []int64
	switch o.code {
	case fb.BuiltinOperatorSPLIT:
		if err := needInputs(o, 2); err != nil {
			return err
		}
		axisT, in = o.inputs[0], o.inputs[1]
	default: // SPLIT_V
		if err := needInputs(o, 3); err != nil {
			return err
		}
		in, axisT = o.inputs[0], o.inputs[2]
		s, err := c.constInts(o.inputs[1])
		if err != nil {
			return fmt.Errorf("size_splits: %w", err)
		}
		sizes = s
	}
	a, err := c.constInts(axisT)
	if err != nil || len(a) != 1 {
		return fmt.Errorf("axis must be a constant scalar")
	}
	xt := c.tensor(in)
	r := len(xt.shape)
	axis, err := axisIn(a[0], r, native)
	if err != nil {
		return err
	}
	dim := xt.shape[axis]
	n := int64(len(o.outputs))
	if dim <= 0 || n == 0 {
		return fmt.Errorf("split of unknown dimension %d into %d", dim, n)
	}
	if sizes == nil {
		if dim%n != 0 {
			return fmt.Errorf("dimension %d does not split into %d", dim, n)
		}
		sizes = repeat(dim/n, int(n))
	}
	if int64(len(sizes)) != n {
		return fmt.Errorf("%d split sizes for %d outputs", len(sizes), n)
	}
	sum, unknown := int64(0), -1
	for i, s := range sizes {
		if s == -1 && unknown < 0 {
			unknown = i
			continue
		}
		if s < 0 {
			return fmt.Errorf("split size %d", s)
		}
		sum += s
	}
	if unknown >= 0 {
		sizes = append([]int64(nil), sizes...)
		sizes[unknown] = dim - sum
		sum = dim
	}
	if sum != dim || sizes[max(unknown, 0)] < 0 {
		return fmt.Errorf("split sizes %v do not add up to %d", sizes, dim)
	}
	lay := c.prefers(in)
	raw := true
	for _, out := range o.outputs {
		raw = raw && sameQuant(xt, c.tensor(out))
	}
	var x string
	if raw {
		x, err = c.rawValue(int(in), lay)
	} else {
		x, err = c.floatValue(in, lay)
	}
	if err != nil {
		return err
	}
	onnxAxis, _ := axisIn(axis, r, lay)
	return c.emitMulti(o.outputs, lay, raw, func(ys []string) error {
		c.node("Split", []string{x, c.constI64(ys[0]+"_split", sizes)}, ys, canonical.IntAttr("axis", onnxAxis))
		return nil
	})
}

func (c *converter) pack(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.PackOptions](o, fb.BuiltinOptionsPackOptions)
	if err != nil {
		return err
	}
	yt := c.tensor(o.outputs[0])
	axis, err := axisIn(int64(opt.Axis()), len(yt.shape), native)
	if err != nil {
		return err
	}
	var ins []string
	for _, i := range o.inputs {
		if i < 0 {
			return fmt.Errorf("omitted input")
		}
		v, err := c.floatValue(i, native)
		if err != nil {
			return err
		}
		ins = append(ins, v)
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		ax := c.constI64(y+"_axis", []int64{axis})
		var us []string
		for i, v := range ins {
			u := c.unique(fmt.Sprintf("%s_item%d", y, i))
			c.node("Unsqueeze", []string{v, ax}, []string{u})
			us = append(us, u)
		}
		c.node("Concat", us, []string{y}, canonical.IntAttr("axis", axis))
		return nil
	})
}

func (c *converter) unpack(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.UnpackOptions](o, fb.BuiltinOptionsUnpackOptions)
	if err != nil {
		return err
	}
	xt := c.tensor(o.inputs[0])
	axis, err := axisIn(int64(opt.Axis()), len(xt.shape), native)
	if err != nil {
		return err
	}
	if xt.shape[axis] != int64(len(o.outputs)) {
		return fmt.Errorf("unpacking dimension %d into %d outputs", xt.shape[axis], len(o.outputs))
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	return c.emitMulti(o.outputs, native, false, func(ys []string) error {
		parts := make([]string, len(ys))
		for i, y := range ys {
			parts[i] = c.unique(y + "_unsqueezed")
		}
		c.node("Split", []string{x, c.constI64(ys[0]+"_split", repeat(1, len(ys)))}, parts, canonical.IntAttr("axis", axis))
		ax := c.constI64(ys[0]+"_axis", []int64{axis})
		for i, y := range ys {
			c.node("Squeeze", []string{parts[i], ax}, []string{y})
		}
		return nil
	})
}
