package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// RFFT2D, REAL, IMAG, COMPLEX_ABS and HASHTABLE_LOOKUP. A COMPLEX64
// tensor inside the graph is carried as float32 with a last dim of 2 (real,
// imaginary), the form of ONNX DFT; it cannot be a graph input or output.

// complexValue returns complex tensor idx in its [..., 2] float form.
func (c *converter) complexValue(idx int32) (string, error) {
	if t := c.tensor(idx); t.typ != fb.TensorTypeCOMPLEX64 {
		return "", fmt.Errorf("input %q is %s, want COMPLEX64", t.name, t.typ)
	}
	return c.rawValue(int(idx), native)
}

// rfft2d is RFFT2D: the input cropped or zero-padded to the FFT lengths
// on its last two dims, a one-sided DFT along the last, a full DFT along
// the one before.
func (c *converter) rfft2d(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	if c.opts.Opset < 17 {
		return fmt.Errorf("DFT needs opset 17")
	}
	out := o.outputs[0]
	if c.isOut[int(out)] || c.tensor(out).typ != fb.TensorTypeCOMPLEX64 {
		return fmt.Errorf("output %q must be an inner COMPLEX64 tensor (ONNX has no complex graph outputs)", c.tensor(out).name)
	}
	shape, err := c.staticDims(o.inputs[0])
	if err != nil {
		return err
	}
	n, err := c.constInts(o.inputs[1])
	if err != nil {
		return err
	}
	r := len(shape)
	if len(n) != 2 || r < 2 || n[0] < 1 || n[1] < 1 {
		return fmt.Errorf("fft_length %v for an input of shape %v", n, shape)
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	y := c.layoutName(int(out), native)
	// Crop, then pad, the last two dims to the FFT lengths.
	ends := []int64{min(shape[r-2], n[0]), min(shape[r-1], n[1])}
	x = c.b.Op("Slice", y+"_cropped", []string{x, c.constI64(y+"_starts", []int64{0, 0}), c.constI64(y+"_ends", ends), c.constI64(y+"_axes", []int64{int64(r - 2), int64(r - 1)})})
	pads := make([]int64, 2*r)
	pads[2*r-2], pads[2*r-1] = n[0]-ends[0], n[1]-ends[1]
	x = c.b.Op("Pad", y+"_padded", []string{x, c.constI64(y+"_pads", pads)})
	x = c.b.Op("Unsqueeze", y+"_real", []string{x, c.constI64(y+"_complex_axis", []int64{int64(r)})})
	dft := func(in string, axis int, onesided int64, name string) string {
		if c.opts.Opset >= 20 {
			return c.b.Op("DFT", name, []string{in, "", c.i64(name+"_axis", int64(axis))}, canonical.IntAttr("onesided", onesided))
		}
		return c.b.Op("DFT", name, []string{in}, canonical.IntAttr("axis", int64(axis)), canonical.IntAttr("onesided", onesided))
	}
	w := dft(x, r-1, 1, y+"_dft_w")
	c.node("Identity", []string{dft(w, r-2, 0, y+"_dft_h")}, []string{y})
	return c.finishAs(out, native, y, true)
}

// complexPart is REAL, IMAG and COMPLEX_ABS of a complex tensor.
func (c *converter) complexPart(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	x, err := c.complexValue(o.inputs[0])
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		switch o.code {
		case fb.BuiltinOperatorREAL, fb.BuiltinOperatorIMAG:
			part := int64(0)
			if o.code == fb.BuiltinOperatorIMAG {
				part = 1
			}
			c.node("Gather", []string{x, c.i64(y+"_part", part)}, []string{y}, canonical.IntAttr("axis", -1))
		default:
			sq := c.b.Op("Mul", y+"_squares", []string{x, x})
			sum := c.b.Op("ReduceSum", y+"_norm2", []string{sq, c.constI64(y+"_axes", []int64{-1})}, canonical.IntAttr("keepdims", 0))
			c.node("Sqrt", []string{sum}, []string{y})
		}
		return nil
	})
}

// hashtableLookup is HASHTABLE_LOOKUP: for each lookup key, the value row
// of the equal key (zeros when none) and whether there was one.
func (c *converter) hashtableLookup(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	if len(o.outputs) != 2 {
		return fmt.Errorf("%d outputs, want 2", len(o.outputs))
	}
	look, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	keys, err := c.floatValue(o.inputs[1], native)
	if err != nil {
		return err
	}
	vals, err := c.floatValue(o.inputs[2], native)
	if err != nil {
		return err
	}
	vr := len(c.tensor(o.inputs[2]).shape)
	if vr < 1 {
		return fmt.Errorf("values of rank 0")
	}
	vt, err := c.elemType(o.inputs[2])
	if err != nil {
		return err
	}
	n := c.unique(c.base[o.outputs[0]] + "_lookup")
	eq := c.b.Op("Equal", n+"_eq", []string{c.b.Op("Unsqueeze", n+"_col", []string{look, c.constI64(n+"_axis1", []int64{1})}), keys})
	eqi := c.b.Op("Cast", n+"_eq_i32", []string{eq}, canonical.IntAttr("to", int64(canonical.Int32)))
	hit := c.b.Op("ReduceMax", n+"_hit", []string{eqi, c.constI64(n+"_axes", []int64{1})}, canonical.IntAttr("keepdims", 0))
	pos := c.b.Op("ArgMax", n+"_pos", []string{eqi}, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0))
	if err := c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		g := c.b.Op("Gather", y+"_row", []string{vals, pos}, canonical.IntAttr("axis", 0))
		shape := make([]int64, vr)
		for i := range shape {
			shape[i] = 1
		}
		shape[0] = -1
		hb := c.b.Op("Reshape", y+"_hit_b", []string{c.b.Op("Cast", y+"_hit_bool", []string{hit}, canonical.IntAttr("to", int64(canonical.Bool))), c.constI64(y+"_hit_shape", shape)})
		c.node("Where", []string{hb, g, c.b.Number(y+"_zero", vt, nil, 0)}, []string{y})
		return nil
	}); err != nil {
		return err
	}
	return c.emit(o.outputs[1], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		dt, err := c.elemType(o.outputs[1])
		if err != nil {
			return err
		}
		c.node("Cast", []string{hit}, []string{y}, canonical.IntAttr("to", int64(dt)))
		return nil
	})
}
