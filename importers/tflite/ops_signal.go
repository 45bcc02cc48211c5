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

// nms is NON_MAX_SUPPRESSION_V4 and _V5 (hard NMS: a soft_nms_sigma of
// 0): ONNX NonMaxSuppression over one batch and class, the selected
// indices (and V5's scores) padded with zeros to max_output_size, and the
// count of valid ones.
func (c *converter) nms(o *operator) error {
	v5 := o.code == fb.BuiltinOperatorNON_MAX_SUPPRESSION_V5
	nIn, nOut := 5, 2
	if v5 {
		nIn, nOut = 6, 3
	}
	if err := needInputs(o, nIn); err != nil {
		return err
	}
	if len(o.outputs) != nOut {
		return fmt.Errorf("%d outputs, want %d", len(o.outputs), nOut)
	}
	if v5 {
		sigma, err := c.constFloats(o.inputs[5])
		if err != nil || len(sigma) != 1 || sigma[0] != 0 {
			return fmt.Errorf("soft_nms_sigma must be a constant 0 (soft NMS has no ONNX form): %v", sigma)
		}
	}
	maxOut, err := c.constInts(o.inputs[2])
	if err != nil || len(maxOut) != 1 || maxOut[0] < 0 {
		return fmt.Errorf("max_output_size must be a constant scalar of 0 or more: %v", maxOut)
	}
	var in [5]string
	for i := range in {
		if i == 2 {
			continue
		}
		if in[i], err = c.floatValue(o.inputs[i], native); err != nil {
			return err
		}
	}
	n := c.unique(c.base[o.outputs[0]] + "_nms")
	one := c.constI64(n+"_one", []int64{1})
	boxes := c.b.Op("Unsqueeze", n+"_boxes", []string{in[0], c.constI64(n+"_axis0", []int64{0})})
	scores := c.b.Op("Reshape", n+"_scores", []string{in[1], c.constI64(n+"_scores_shape", []int64{1, 1, -1})})
	iou := c.b.Op("Reshape", n+"_iou", []string{in[3], one})
	thr := c.b.Op("Reshape", n+"_score_threshold", []string{in[4], one})
	sel := c.b.Op("NonMaxSuppression", n+"_selected", []string{boxes, scores, c.constI64(n+"_max", maxOut), iou, thr})
	idx := c.b.Op("Gather", n+"_indices", []string{sel, c.i64(n+"_col", 2)}, canonical.IntAttr("axis", 1))
	count := c.b.Op("Shape", n+"_count", []string{idx})
	pads := c.b.Op("Concat", n+"_pads", []string{c.constI64(n+"_zero", []int64{0}), c.b.Op("Sub", n+"_pad", []string{c.constI64(n+"_max_out", maxOut), count})}, canonical.IntAttr("axis", 0))
	if err := c.castOut(o.outputs[0], c.b.Op("Pad", n+"_indices_padded", []string{idx, pads})); err != nil {
		return err
	}
	if v5 {
		err := c.emit(o.outputs[1], native, fb.ActivationFunctionTypeNONE, func(y string) error {
			s := c.b.Op("Gather", y+"_selected", []string{in[1], idx}, canonical.IntAttr("axis", 0))
			c.node("Pad", []string{s, pads}, []string{y})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return c.castOut(o.outputs[nOut-1], c.b.Op("Reshape", n+"_valid", []string{count, c.constI64(n+"_scalar", nil)}))
}
