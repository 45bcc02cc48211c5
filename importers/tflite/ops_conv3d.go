package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// CONV_3D and CONV_3D_TRANSPOSE: NDHWC activations transposed to NCDHW
// around an ONNX Conv or ConvTranspose, filters permuted once.

var (
	toNCDHW = []int64{0, 4, 1, 2, 3}
	toNDHWC = []int64{0, 2, 3, 4, 1}
)

// conv3dGeom checks that o has n inputs and reads its Conv3DOptions with
// the strides and dilations (D, H, W).
func conv3dGeom(o *operator, n int) (opt *fb.Conv3DOptions, s, d []int64, err error) {
	if err := needInputs(o, n); err != nil {
		return nil, nil, nil, err
	}
	if opt, err = options[fb.Conv3DOptions](o, fb.BuiltinOptionsConv3DOptions); err != nil {
		return nil, nil, nil, err
	}
	s = []int64{int64(opt.StrideD()), int64(opt.StrideH()), int64(opt.StrideW())}
	d = []int64{int64(opt.DilationDFactor()), int64(opt.DilationHFactor()), int64(opt.DilationWFactor())}
	for _, v := range append(append([]int64{}, s...), d...) {
		if v <= 0 || v > 1<<16 {
			return nil, nil, nil, fmt.Errorf("strides %v and dilations %v must be positive", s, d)
		}
	}
	if p := opt.Padding(); p != fb.PaddingSAME && p != fb.PaddingVALID {
		return nil, nil, nil, fmt.Errorf("padding %d is not SAME or VALID", p)
	}
	return opt, s, d, nil
}

// conv3dInputs returns the NCDHW input, the filter permuted by perm and
// the bias (if any) of a 3-D convolution whose input is xi, filter wi
// ([D, H, W, ., .]) and bias bi.
func (c *converter) conv3dInputs(xi, wi, bi int32, perm []int, y string) ([]string, error) {
	for _, i := range []int32{xi, wi} {
		if t := c.tensor(i); len(t.shape) != 5 {
			return nil, fmt.Errorf("tensor %q has shape %v, want 5-D", t.name, t.shape)
		}
	}
	x, err := c.floatValue(xi, native)
	if err != nil {
		return nil, err
	}
	w, err := c.weightValue(wi, perm, "_oidhw")
	if err != nil {
		return nil, err
	}
	ins := []string{c.b.Op("Transpose", y+"_ncdhw", []string{x}, canonical.IntsAttr("perm", toNCDHW...)), w}
	if bi >= 0 {
		b, err := c.floatValue(bi, native)
		if err != nil {
			return nil, err
		}
		ins = append(ins, b)
	}
	return ins, nil
}

func (c *converter) conv3d(o *operator) error {
	opt, s, d, err := conv3dGeom(o, 2)
	if err != nil {
		return err
	}
	xt, wt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1])
	if len(xt.shape) != 5 || len(wt.shape) != 5 {
		return fmt.Errorf("input %v and filter %v must be 5-D", xt.shape, wt.shape)
	}
	pads := make([]int64, 6)
	for i := 0; i < 3; i++ {
		b, a, ok := tflPadding(xt.shape[1+i], wt.shape[i], s[i], d[i], opt.Padding() == fb.PaddingSAME)
		if !ok {
			return fmt.Errorf("input %q has no static spatial shape (%v)", xt.name, xt.shape)
		}
		pads[i], pads[3+i] = b, a
	}
	y := c.unique(c.base[o.outputs[0]])
	// [D, H, W, I, O] -> [O, I, D, H, W]
	ins, err := c.conv3dInputs(o.inputs[0], o.inputs[1], c.in(o, 2), []int{4, 3, 0, 1, 2}, y)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, opt.FusedActivationFunction(), func(out string) error {
		conv := c.b.Op("Conv", y+"_conv", ins, canonical.IntsAttr("kernel_shape", wt.shape[:3]...),
			canonical.IntsAttr("strides", s...), canonical.IntsAttr("dilations", d...), canonical.IntsAttr("pads", pads...))
		c.node("Transpose", []string{conv}, []string{out}, canonical.IntsAttr("perm", toNDHWC...))
		return nil
	})
}

// conv3dTranspose is CONV_3D_TRANSPOSE (inputs: output shape, filter
// [D, H, W, O, I], input, bias): the padding TFLite computes from the
// output size as if it were the input of a forward convolution.
func (c *converter) conv3dTranspose(o *operator) error {
	opt, s, d, err := conv3dGeom(o, 3)
	if err != nil {
		return err
	}
	outShape := c.tensor(o.outputs[0]).shape
	if v, err := c.constInts(o.inputs[0]); err == nil {
		outShape = v
	}
	xt, wt := c.tensor(o.inputs[2]), c.tensor(o.inputs[1])
	if len(xt.shape) != 5 || len(wt.shape) != 5 || len(outShape) != 5 || !staticShape(outShape) || !staticShape(xt.shape) {
		return fmt.Errorf("input %v, filter %v and output shape %v must be static 5-D", xt.shape, wt.shape, outShape)
	}
	pads := make([]int64, 6)
	opad := make([]int64, 3)
	extra := false
	for i := 0; i < 3; i++ {
		eff := (wt.shape[i]-1)*d[i] + 1
		total := 0
		if opt.Padding() == fb.PaddingSAME {
			total = int(max((xt.shape[1+i]-1)*s[i]+eff-outShape[1+i], 0))
		}
		pads[i], pads[3+i] = int64(total/2), int64(total-total/2)
		opad[i] = outShape[1+i] - ((xt.shape[1+i]-1)*s[i] + eff - int64(total))
		if opad[i] < 0 || opad[i] > 0 && opad[i] >= max(s[i], d[i]) {
			return fmt.Errorf("output shape %v does not follow from input %v, filter %v and strides %v", outShape, xt.shape, wt.shape, s)
		}
		extra = extra || opad[i] > 0
	}
	y := c.unique(c.base[o.outputs[0]])
	// [D, H, W, O, I] -> [I, O, D, H, W]
	ins, err := c.conv3dInputs(o.inputs[2], o.inputs[1], c.in(o, 3), []int{4, 3, 0, 1, 2}, y)
	if err != nil {
		return err
	}
	attrs := []*canonical.Attribute{canonical.IntsAttr("kernel_shape", wt.shape[:3]...), canonical.IntsAttr("strides", s...),
		canonical.IntsAttr("dilations", d...), canonical.IntsAttr("pads", pads...)}
	if extra {
		attrs = append(attrs, canonical.IntsAttr("output_padding", opad...))
	}
	return c.emit(o.outputs[0], native, opt.FusedActivationFunction(), func(out string) error {
		conv := c.b.Op("ConvTranspose", y+"_conv", ins, attrs...)
		c.node("Transpose", []string{conv}, []string{out}, canonical.IntsAttr("perm", toNDHWC...))
		return nil
	})
}
