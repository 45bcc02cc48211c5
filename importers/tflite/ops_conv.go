package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	clayout "github.com/onnxconv/onnxconv/canonical/layout"
	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Convolution and pooling: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV,
// AVERAGE_POOL_2D / MAX_POOL_2D / L2_POOL_2D, with their padding and weight
// layout helpers.

// tflPadding is TFLite's padding for one spatial dimension
// (formats/tflite SamePads for SAME, none for VALID). ok is false when the
// input size is unknown.
func tflPadding(in, k, stride, dil int64, same bool) (before, after int64, ok bool) {
	if !same {
		return 0, 0, true
	}
	if in < 0 {
		return 0, 0, false
	}
	before, after = formats.SamePads(in, k, stride, dil)
	return before, after, true
}

// padAttrs gives the Conv/Pool padding attributes for TFLite padding.
func padAttrs(padding fb.Padding, inH, inW, kH, kW, sH, sW, dH, dW int64) ([]*canonical.Attribute, error) {
	same := padding == fb.PaddingSAME
	if padding != fb.PaddingSAME && padding != fb.PaddingVALID {
		return nil, fmt.Errorf("padding %d is not SAME or VALID", padding)
	}
	t, b, ok1 := tflPadding(inH, kH, sH, dH, same)
	l, r, ok2 := tflPadding(inW, kW, sW, dW, same)
	if !ok1 || !ok2 {
		return []*canonical.Attribute{canonical.StringAttr("auto_pad", "SAME_UPPER")}, nil
	}
	return []*canonical.Attribute{canonical.IntsAttr("pads", []int64{t, l, b, r}...)}, nil
}

func positive(name string, v ...int32) error {
	for _, x := range v {
		if x <= 0 {
			return fmt.Errorf("%s %d must be positive", name, x)
		}
	}
	return nil
}

// weightValue returns a constant (or computed) weight permuted by perm, in
// the float domain: a permuted initializer plus DequantizeLinear with the
// per-channel axis moved along.
func (c *converter) weightValue(idx int32, perm []int, suffix string) (string, error) {
	t := c.tensor(idx)
	if len(t.shape) != len(perm) {
		return "", fmt.Errorf("weight %q has shape %v, want rank %d", t.name, t.shape, len(perm))
	}
	if t.data == nil {
		v, err := c.floatValue(idx, native)
		if err != nil {
			return "", err
		}
		name := c.unique(c.base[idx] + suffix)
		c.node("Transpose", []string{v}, []string{name}, canonical.IntsAttr("perm", clayout.Int64s(perm)...))
		return name, nil
	}
	dt, err := onnxType(t.typ)
	if err != nil {
		return "", err
	}
	if t.typ == fb.TensorTypeINT4 {
		return "", fmt.Errorf("int4 weights are not supported")
	}
	data, dims, err := canonical.TransposeBytes(t.data, elemSize(t.typ), t.shape, perm)
	if err != nil {
		return "", fmt.Errorf("weight %q: %w", t.name, err)
	}
	name := c.addInit(c.base[idx]+suffix, dt, dims, data)
	if !isQuant(t) {
		return name, nil
	}
	scale, zp, err := c.qparams(t)
	if err != nil {
		return "", err
	}
	dq := c.unique(name + "_dq")
	var attrs []*canonical.Attribute
	if len(t.q.scale) > 1 {
		attrs = append(attrs, canonical.IntAttr("axis", int64(clayout.Axis(perm, int(t.q.dim)))))
	}
	c.node("DequantizeLinear", []string{name, scale, zp}, []string{dq}, attrs...)
	return dq, nil
}

func (c *converter) need4D(idx int32) error {
	if t := c.tensor(idx); len(t.shape) != 4 {
		return fmt.Errorf("tensor %q has shape %v, want 4-D", t.name, t.shape)
	}
	return nil
}

// convOperands checks what CONV_2D and DEPTHWISE_CONV_2D share: input and
// filter present and 4-D, strides and dilations positive; it returns the
// input and filter tensors.
func (c *converter) convOperands(o *operator, sh, sw, dh, dw int32) (*tensor, *tensor, error) {
	if err := needInputs(o, 2); err != nil {
		return nil, nil, err
	}
	if err := c.need4D(o.inputs[0]); err != nil {
		return nil, nil, err
	}
	if err := c.need4D(o.inputs[1]); err != nil {
		return nil, nil, err
	}
	if err := positive("stride", sh, sw, dh, dw); err != nil {
		return nil, nil, err
	}
	return c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), nil
}

func (c *converter) conv2d(o *operator) error {
	opt, err := options[fb.Conv2DOptions](o, fb.BuiltinOptionsConv2DOptions)
	if err != nil {
		return err
	}
	xt, wt, err := c.convOperands(o, opt.StrideH(), opt.StrideW(), opt.DilationHFactor(), opt.DilationWFactor())
	if err != nil {
		return err
	}
	group := int64(1)
	if xt.shape[3] > 0 && wt.shape[3] > 0 && xt.shape[3] != wt.shape[3] {
		if xt.shape[3]%wt.shape[3] != 0 {
			return fmt.Errorf("input channels %d not a multiple of filter channels %d", xt.shape[3], wt.shape[3])
		}
		group = xt.shape[3] / wt.shape[3]
	}
	// [O, H, W, I] -> [O, I, H, W]
	return c.emitConv(o, clayout.ToFirst(4), "_oihw", group, convGeom{opt.Padding(),
		int64(opt.StrideH()), int64(opt.StrideW()), int64(opt.DilationHFactor()), int64(opt.DilationWFactor())},
		opt.FusedActivationFunction())
}

// convGeom is a TFLite convolution's padding, strides and dilations.
type convGeom struct {
	padding        fb.Padding
	sh, sw, dh, dw int64
}

// emitConv emits the ONNX Conv of a CONV_2D or DEPTHWISE_CONV_2D: the input
// in NCHW, the filter permuted by perm at conversion time, the optional
// bias, TFLite's padding made explicit, then the fused activation.
func (c *converter) emitConv(o *operator, perm []int, suffix string, group int64, g convGeom, act fb.ActivationFunctionType) error {
	xt, wt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1])
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	w, err := c.weightValue(o.inputs[1], perm, suffix)
	if err != nil {
		return err
	}
	ins := []string{x, w}
	if b := c.in(o, 2); b >= 0 {
		bv, err := c.floatValue(b, native)
		if err != nil {
			return err
		}
		ins = append(ins, bv)
	}
	attrs, err := padAttrs(g.padding, xt.shape[1], xt.shape[2], wt.shape[1], wt.shape[2], g.sh, g.sw, g.dh, g.dw)
	if err != nil {
		return err
	}
	attrs = append(attrs,
		canonical.IntsAttr("kernel_shape", []int64{wt.shape[1], wt.shape[2]}...),
		canonical.IntsAttr("strides", []int64{g.sh, g.sw}...),
		canonical.IntsAttr("dilations", []int64{g.dh, g.dw}...),
		canonical.IntAttr("group", group))
	// int16x8: TFLite's integer requantization, exactly (exact16.go).
	outCh := wt.shape[perm[0]]
	if wt.shape[0] > 0 && wt.shape[1] > 0 && wt.shape[2] > 0 && wt.shape[3] > 0 {
		taps := wt.shape[0] * wt.shape[1] * wt.shape[2] * wt.shape[3] / outCh
		// int8: XNNPACK's integer sum and float32 requantization, exactly (exact8.go).
		p16, ok16 := c.planExact16(o, o.inputs[0], o.inputs[1], c.in(o, 2), outCh, taps, act)
		p8, ok8 := c.planExact8(o, o.inputs[0], o.inputs[1], c.in(o, 2), outCh, taps, act)
		if ok16 || ok8 && staticShape(xt.shape[1:]) {
			xr, err := c.rawValue(int(o.inputs[0]), nchw)
			if err != nil {
				return err
			}
			wf, err := c.int8Floats(wt, perm, suffix+"_int")
			if err != nil {
				return err
			}
			conv := func(in, y string) { c.node("Conv", []string{in, wf}, []string{y}, attrs...) }
			if ok16 {
				return c.emitExact16(o.outputs[0], xr, p16, conv)
			}
			return c.emitExact8(o.outputs[0], xr, xt.shape, p8, conv)
		}
	}
	return c.emit(o.outputs[0], nchw, act, func(y string) error {
		c.node("Conv", ins, []string{y}, attrs...)
		return nil
	})
}

func (c *converter) depthwise(o *operator) error {
	opt, err := options[fb.DepthwiseConv2DOptions](o, fb.BuiltinOptionsDepthwiseConv2DOptions)
	if err != nil {
		return err
	}
	xt, wt, err := c.convOperands(o, opt.StrideH(), opt.StrideW(), opt.DilationHFactor(), opt.DilationWFactor())
	if err != nil {
		return err
	}
	cin := xt.shape[3]
	if cin <= 0 || wt.shape[0] != 1 || wt.shape[3]%cin != 0 {
		return fmt.Errorf("depthwise filter %v does not fit input %v", wt.shape, xt.shape)
	}
	// [1, H, W, C*M] -> [C*M, 1, H, W]
	return c.emitConv(o, clayout.FromIHWO(4), "_m1hw", cin, convGeom{opt.Padding(),
		int64(opt.StrideH()), int64(opt.StrideW()), int64(opt.DilationHFactor()), int64(opt.DilationWFactor())},
		opt.FusedActivationFunction())
}

func (c *converter) transposeConv(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	opt, err := options[fb.TransposeConvOptions](o, fb.BuiltinOptionsTransposeConvOptions)
	if err != nil {
		return err
	}
	outShape := c.tensor(o.outputs[0]).shape
	if s, err := c.constInts(o.inputs[0]); err == nil {
		outShape = s
	} else if c == c.root && c.isIn[int(o.inputs[0])] {
		// output_shape is a graph input: the converted graph computes
		// the declared shape, which the interpreter computes when fed
		// it (verification generates that value).
		c.st.inputValues[c.base[o.inputs[0]]] = outShape
	}
	return c.emitTransposeConv(o, o.inputs[2], o.inputs[1], c.in(o, 3), outShape, opt.Padding() == fb.PaddingSAME,
		int64(opt.StrideH()), int64(opt.StrideW()), opt.FusedActivationFunction())
}

// emitTransposeConv maps a transposed convolution of input xi by filter
// wi ([O, H, W, I]) plus bias bi (-1 none) to ONNX ConvTranspose, with
// the padding TFLite computes from the output size (outShape) as if it
// were the input of a forward convolution (TRANSPOSE_CONV, MediaPipe's
// Convolution2DTransposeBias).
func (c *converter) emitTransposeConv(o *operator, xi, wi, bi int32, outShape []int64, same bool, sH, sW int64, act fb.ActivationFunctionType) error {
	if sH <= 0 || sW <= 0 || sH > 1<<16 || sW > 1<<16 {
		return fmt.Errorf("strides %d, %d", sH, sW)
	}
	if err := c.need4D(xi); err != nil {
		return err
	}
	if err := c.need4D(wi); err != nil {
		return err
	}
	wt, xt := c.tensor(wi), c.tensor(xi)
	if len(outShape) != 4 || outShape[1] <= 0 || outShape[2] <= 0 || xt.shape[1] <= 0 || xt.shape[2] <= 0 {
		return fmt.Errorf("output shape %v or input shape %v is not static 4-D", outShape, xt.shape)
	}
	x, err := c.floatValue(xi, nchw)
	if err != nil {
		return err
	}
	// [O, H, W, I] -> [I, O, H, W]
	w, err := c.weightValue(wi, clayout.FromIHWO(4), "_iohw")
	if err != nil {
		return err
	}
	ins := []string{x, w}
	if bi >= 0 {
		bv, err := c.floatValue(bi, native)
		if err != nil {
			return err
		}
		ins = append(ins, bv)
	}
	kH, kW := wt.shape[1], wt.shape[2]
	// TFLite computes the padding from the output size as if it were the
	// input of a forward convolution.
	t, b, _ := tflPadding(outShape[1], kH, sH, 1, same)
	l, r, _ := tflPadding(outShape[2], kW, sW, 1, same)
	opH := outShape[1] - ((xt.shape[1]-1)*sH + kH - t - b)
	opW := outShape[2] - ((xt.shape[2]-1)*sW + kW - l - r)
	if opH < 0 || opW < 0 || opH >= sH && opH > 0 || opW >= sW && opW > 0 {
		return fmt.Errorf("output shape %v does not follow from input %v, filter %v and strides %d,%d", outShape, xt.shape, wt.shape, sH, sW)
	}
	attrs := []*canonical.Attribute{
		canonical.IntsAttr("kernel_shape", []int64{kH, kW}...),
		canonical.IntsAttr("strides", []int64{sH, sW}...),
		canonical.IntsAttr("pads", []int64{t, l, b, r}...),
	}
	if opH > 0 || opW > 0 {
		attrs = append(attrs, canonical.IntsAttr("output_padding", []int64{opH, opW}...))
	}
	// int16x8: TFLite's integer requantization, exactly (exact16.go). Each
	// output sums at most ceil(kH/sH)*ceil(kW/sW)*I products.
	if wt.shape[0] > 0 && wt.shape[3] > 0 {
		taps := ((kH + sH - 1) / sH) * ((kW + sW - 1) / sW) * wt.shape[3]
		if p, ok := c.planExact16(o, xi, wi, bi, wt.shape[0], taps, act); ok {
			xr, err := c.rawValue(int(xi), nchw)
			if err != nil {
				return err
			}
			wf, err := c.int8Floats(wt, clayout.FromIHWO(4), "_iohw_int")
			if err != nil {
				return err
			}
			return c.emitExact16(o.outputs[0], xr, p, func(in, y string) {
				c.node("ConvTranspose", []string{in, wf}, []string{y}, attrs...)
			})
		}
	}
	return c.emit(o.outputs[0], nchw, act, func(y string) error {
		c.node("ConvTranspose", ins, []string{y}, attrs...)
		return nil
	})
}

func (c *converter) pool(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.Pool2DOptions](o, fb.BuiltinOptionsPool2DOptions)
	if err != nil {
		return err
	}
	if err := c.need4D(o.inputs[0]); err != nil {
		return err
	}
	if err := positive("pool size/stride", opt.StrideH(), opt.StrideW(), opt.FilterHeight(), opt.FilterWidth()); err != nil {
		return err
	}
	xt := c.tensor(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	kH, kW := int64(opt.FilterHeight()), int64(opt.FilterWidth())
	attrs, err := padAttrs(opt.Padding(), xt.shape[1], xt.shape[2], kH, kW, int64(opt.StrideH()), int64(opt.StrideW()), 1, 1)
	if err != nil {
		return err
	}
	attrs = append(attrs,
		canonical.IntsAttr("kernel_shape", []int64{kH, kW}...),
		canonical.IntsAttr("strides", []int64{int64(opt.StrideH()), int64(opt.StrideW())}...))
	op := "MaxPool"
	switch o.code {
	case fb.BuiltinOperatorAVERAGE_POOL_2D:
		// Quantized: TFLite's integer kernel, exactly (exact8.go).
		if done, err := c.exactAvgPool(o, opt, attrs); done || err != nil {
			return err
		}
		op = "AveragePool"
		attrs = append(attrs, canonical.IntAttr("count_include_pad", 0))
	case fb.BuiltinOperatorL2_POOL_2D:
		// TFLite: sqrt(mean of squares over the valid window), which is not
		// LpPool (no mean): Sqrt(AveragePool(x*x)).
		attrs = append(attrs, canonical.IntAttr("count_include_pad", 0))
		return c.emit(o.outputs[0], nchw, opt.FusedActivationFunction(), func(y string) error {
			sq := c.unique(y + "_square")
			c.node("Mul", []string{x, x}, []string{sq})
			avg := c.unique(y + "_mean_square")
			c.node("AveragePool", []string{sq}, []string{avg}, attrs...)
			c.node("Sqrt", []string{avg}, []string{y})
			return nil
		})
	}
	return c.emit(o.outputs[0], nchw, opt.FusedActivationFunction(), func(y string) error {
		c.node(op, []string{x}, []string{y}, attrs...)
		return nil
	})
}
