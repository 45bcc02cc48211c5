package tflite

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	fb "github.com/onnxconv/onnxconv/importers/tflite/tflitefb"
)

// unaryOp maps TFLite ops without options onto one ONNX op of the same
// semantics; they keep the layout of their input.
func unaryOp(code fb.BuiltinOperator) (string, bool) {
	op, ok := map[fb.BuiltinOperator]string{
		fb.BuiltinOperatorLOGISTIC:    "Sigmoid",
		fb.BuiltinOperatorTANH:        "Tanh",
		fb.BuiltinOperatorRELU:        "Relu",
		fb.BuiltinOperatorEXP:         "Exp",
		fb.BuiltinOperatorLOG:         "Log",
		fb.BuiltinOperatorSQRT:        "Sqrt",
		fb.BuiltinOperatorABS:         "Abs",
		fb.BuiltinOperatorNEG:         "Neg",
		fb.BuiltinOperatorFLOOR:       "Floor",
		fb.BuiltinOperatorCEIL:        "Ceil",
		fb.BuiltinOperatorSIN:         "Sin",
		fb.BuiltinOperatorCOS:         "Cos",
		fb.BuiltinOperatorELU:         "Elu",
		fb.BuiltinOperatorROUND:       "Round",
		fb.BuiltinOperatorSIGN:        "Sign",
		fb.BuiltinOperatorLOGICAL_NOT: "Not",
	}[code]
	return op, ok
}

// binaryOp maps broadcasting binary ops.
func binaryOp(code fb.BuiltinOperator) (string, bool) {
	op, ok := map[fb.BuiltinOperator]string{
		fb.BuiltinOperatorADD:           "Add",
		fb.BuiltinOperatorSUB:           "Sub",
		fb.BuiltinOperatorMUL:           "Mul",
		fb.BuiltinOperatorDIV:           "Div",
		fb.BuiltinOperatorMAXIMUM:       "Max",
		fb.BuiltinOperatorMINIMUM:       "Min",
		fb.BuiltinOperatorPOW:           "Pow",
		fb.BuiltinOperatorLESS:          "Less",
		fb.BuiltinOperatorLESS_EQUAL:    "LessOrEqual",
		fb.BuiltinOperatorGREATER:       "Greater",
		fb.BuiltinOperatorGREATER_EQUAL: "GreaterOrEqual",
		fb.BuiltinOperatorEQUAL:         "Equal",
		fb.BuiltinOperatorLOGICAL_AND:   "And",
		fb.BuiltinOperatorLOGICAL_OR:    "Or",
	}[code]
	return op, ok
}

func (c *converter) convertOp(o *operator) error {
	if o.code == fb.BuiltinOperatorCUSTOM {
		return fmt.Errorf("custom operator %q is not supported", o.custom)
	}
	if op, ok := unaryOp(o.code); ok {
		return c.unary(o, op)
	}
	if op, ok := binaryOp(o.code); ok {
		return c.binary(o, op)
	}
	switch o.code {
	case fb.BuiltinOperatorCONV_2D:
		return c.conv2d(o)
	case fb.BuiltinOperatorDEPTHWISE_CONV_2D:
		return c.depthwise(o)
	case fb.BuiltinOperatorTRANSPOSE_CONV:
		return c.transposeConv(o)
	case fb.BuiltinOperatorFULLY_CONNECTED:
		return c.fullyConnected(o)
	case fb.BuiltinOperatorAVERAGE_POOL_2D, fb.BuiltinOperatorMAX_POOL_2D, fb.BuiltinOperatorL2_POOL_2D:
		return c.pool(o)
	case fb.BuiltinOperatorRELU6:
		return c.clip(o, 0, 6)
	case fb.BuiltinOperatorRELU_N1_TO_1:
		return c.clip(o, -1, 1)
	case fb.BuiltinOperatorRELU_0_TO_1:
		return c.clip(o, 0, 1)
	case fb.BuiltinOperatorLEAKY_RELU:
		opt, err := options[fb.LeakyReluOptions](o, fb.BuiltinOptionsLeakyReluOptions)
		if err != nil {
			return err
		}
		return c.unary(o, "LeakyRelu", attrFloat("alpha", opt.Alpha()))
	case fb.BuiltinOperatorHARD_SWISH:
		if c.opts.Opset < 14 {
			return c.hardSwish13(o)
		}
		return c.unary(o, "HardSwish")
	case fb.BuiltinOperatorGELU:
		opt, err := options[fb.GeluOptions](o, fb.BuiltinOptionsGeluOptions)
		if err != nil {
			return err
		}
		if c.opts.Opset < 20 {
			return fmt.Errorf("Gelu needs opset 20")
		}
		a := "none"
		if opt.Approximate() {
			a = "tanh"
		}
		return c.unary(o, "Gelu", attrString("approximate", a))
	case fb.BuiltinOperatorRSQRT:
		return c.unaryChain(o, "Sqrt", "Reciprocal")
	case fb.BuiltinOperatorSQUARE:
		return c.square(o)
	case fb.BuiltinOperatorSQUARED_DIFFERENCE:
		return c.binary(o, "Sub", "square")
	case fb.BuiltinOperatorFLOOR_DIV:
		if len(o.outputs) > 0 && c.tensor(o.outputs[0]).typ != fb.TensorTypeFLOAT32 {
			return fmt.Errorf("FLOOR_DIV on %s is not supported (float only)", c.tensor(o.outputs[0]).typ)
		}
		return c.binary(o, "Div", "floor")
	case fb.BuiltinOperatorNOT_EQUAL:
		return c.binary(o, "Equal", "not")
	case fb.BuiltinOperatorSOFTMAX, fb.BuiltinOperatorLOG_SOFTMAX:
		return c.softmax(o)
	case fb.BuiltinOperatorRESHAPE:
		return c.reshape(o)
	case fb.BuiltinOperatorSQUEEZE:
		return c.squeeze(o)
	case fb.BuiltinOperatorEXPAND_DIMS:
		return c.expandDims(o)
	case fb.BuiltinOperatorCONCATENATION:
		return c.concat(o)
	case fb.BuiltinOperatorPAD, fb.BuiltinOperatorPADV2, fb.BuiltinOperatorMIRROR_PAD:
		return c.pad(o)
	case fb.BuiltinOperatorMEAN, fb.BuiltinOperatorSUM, fb.BuiltinOperatorREDUCE_MAX,
		fb.BuiltinOperatorREDUCE_MIN, fb.BuiltinOperatorREDUCE_PROD:
		return c.reduce(o)
	case fb.BuiltinOperatorTRANSPOSE:
		return c.transpose(o)
	case fb.BuiltinOperatorSTRIDED_SLICE:
		return c.stridedSlice(o)
	case fb.BuiltinOperatorSLICE:
		return c.slice(o)
	case fb.BuiltinOperatorGATHER:
		return c.gather(o)
	case fb.BuiltinOperatorRESIZE_BILINEAR, fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR:
		return c.resize(o)
	case fb.BuiltinOperatorQUANTIZE, fb.BuiltinOperatorDEQUANTIZE:
		return c.quantize(o)
	case fb.BuiltinOperatorCAST:
		return c.cast(o)
	case fb.BuiltinOperatorDEPTH_TO_SPACE, fb.BuiltinOperatorSPACE_TO_DEPTH:
		return c.depthSpace(o)
	case fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM:
		return c.lstm(o)
	case fb.BuiltinOperatorSPLIT, fb.BuiltinOperatorSPLIT_V:
		return c.split(o)
	case fb.BuiltinOperatorPACK:
		return c.pack(o)
	case fb.BuiltinOperatorUNPACK:
		return c.unpack(o)
	case fb.BuiltinOperatorBATCH_MATMUL:
		return c.batchMatMul(o)
	case fb.BuiltinOperatorARG_MAX, fb.BuiltinOperatorARG_MIN:
		return c.argMinMax(o)
	case fb.BuiltinOperatorTILE:
		return c.tile(o)
	case fb.BuiltinOperatorSHAPE:
		return c.shape(o)
	case fb.BuiltinOperatorSELECT, fb.BuiltinOperatorSELECT_V2:
		return c.selectV2(o)
	case fb.BuiltinOperatorADD_N:
		return c.addN(o)
	case fb.BuiltinOperatorPRELU:
		return c.binary(o, "PRelu")
	}
	return fmt.Errorf("operator %s is not supported", opName(o))
}

// ---- elementwise -----------------------------------------------------------

func (c *converter) unary(o *operator, op string, attrs ...*onnxpb.AttributeProto) error {
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
		c.node("HardSigmoid", []string{x}, []string{hs}, attrFloat("alpha", 1.0/6), attrFloat("beta", 0.5))
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

// ---- convolution and pooling ----------------------------------------------

// tflPadding computes TFLite's padding for one spatial dimension: SAME puts
// the odd pixel after. ok is false when the input size is unknown.
func tflPadding(in, k, stride, dil int64, same bool) (before, after int64, ok bool) {
	if !same {
		return 0, 0, true
	}
	if in < 0 {
		return 0, 0, false
	}
	eff := (k-1)*dil + 1
	out := (in + stride - 1) / stride
	total := (out-1)*stride + eff - in
	if total < 0 {
		total = 0
	}
	return total / 2, total - total/2, true
}

// padAttrs gives the Conv/Pool padding attributes for TFLite padding.
func padAttrs(padding fb.Padding, inH, inW, kH, kW, sH, sW, dH, dW int64) ([]*onnxpb.AttributeProto, error) {
	same := padding == fb.PaddingSAME
	if padding != fb.PaddingSAME && padding != fb.PaddingVALID {
		return nil, fmt.Errorf("padding %d is not SAME or VALID", padding)
	}
	t, b, ok1 := tflPadding(inH, kH, sH, dH, same)
	l, r, ok2 := tflPadding(inW, kW, sW, dW, same)
	if !ok1 || !ok2 {
		return []*onnxpb.AttributeProto{attrString("auto_pad", "SAME_UPPER")}, nil
	}
	return []*onnxpb.AttributeProto{attrInts("pads", []int64{t, l, b, r})}, nil
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
		c.node("Transpose", []string{v}, []string{name}, attrInts("perm", ints64(perm)))
		return name, nil
	}
	dt, err := onnxType(t.typ)
	if err != nil {
		return "", err
	}
	if t.typ == fb.TensorTypeINT4 {
		return "", fmt.Errorf("int4 weights are not supported")
	}
	data, dims, err := permuteBytes(t.data, elemSize(t.typ), t.shape, perm)
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
	var attrs []*onnxpb.AttributeProto
	if len(t.q.scale) > 1 {
		attrs = append(attrs, attrInt("axis", int64(indexOf(perm, int(t.q.dim)))))
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
	return c.emitConv(o, []int{0, 3, 1, 2}, "_oihw", group, convGeom{opt.Padding(),
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
		attrInts("kernel_shape", []int64{wt.shape[1], wt.shape[2]}),
		attrInts("strides", []int64{g.sh, g.sw}),
		attrInts("dilations", []int64{g.dh, g.dw}),
		attrInt("group", group))
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
	return c.emitConv(o, []int{3, 0, 1, 2}, "_m1hw", cin, convGeom{opt.Padding(),
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
	if err := c.need4D(o.inputs[1]); err != nil {
		return err
	}
	if err := c.need4D(o.inputs[2]); err != nil {
		return err
	}
	if err := positive("stride", opt.StrideH(), opt.StrideW()); err != nil {
		return err
	}
	wt, xt, yt := c.tensor(o.inputs[1]), c.tensor(o.inputs[2]), c.tensor(o.outputs[0])
	outShape := yt.shape
	if s, err := c.constInts(o.inputs[0]); err == nil {
		outShape = s
	}
	if len(outShape) != 4 || outShape[1] <= 0 || outShape[2] <= 0 || xt.shape[1] <= 0 || xt.shape[2] <= 0 {
		return fmt.Errorf("output shape %v or input shape %v is not static 4-D", outShape, xt.shape)
	}
	x, err := c.floatValue(o.inputs[2], nchw)
	if err != nil {
		return err
	}
	// [O, H, W, I] -> [I, O, H, W]
	w, err := c.weightValue(o.inputs[1], []int{3, 0, 1, 2}, "_iohw")
	if err != nil {
		return err
	}
	ins := []string{x, w}
	if b := c.in(o, 3); b >= 0 {
		bv, err := c.floatValue(b, native)
		if err != nil {
			return err
		}
		ins = append(ins, bv)
	}
	same := opt.Padding() == fb.PaddingSAME
	sH, sW := int64(opt.StrideH()), int64(opt.StrideW())
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
	attrs := []*onnxpb.AttributeProto{
		attrInts("kernel_shape", []int64{kH, kW}),
		attrInts("strides", []int64{sH, sW}),
		attrInts("pads", []int64{t, l, b, r}),
	}
	if opH > 0 || opW > 0 {
		attrs = append(attrs, attrInts("output_padding", []int64{opH, opW}))
	}
	return c.emit(o.outputs[0], nchw, opt.FusedActivationFunction(), func(y string) error {
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
		attrInts("kernel_shape", []int64{kH, kW}),
		attrInts("strides", []int64{int64(opt.StrideH()), int64(opt.StrideW())}))
	op := "MaxPool"
	switch o.code {
	case fb.BuiltinOperatorAVERAGE_POOL_2D:
		op = "AveragePool"
		attrs = append(attrs, attrInt("count_include_pad", 0))
	case fb.BuiltinOperatorL2_POOL_2D:
		// TFLite: sqrt(mean of squares over the valid window), which is not
		// LpPool (no mean): Sqrt(AveragePool(x*x)).
		attrs = append(attrs, attrInt("count_include_pad", 0))
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

// ---- fully connected -------------------------------------------------------

func (c *converter) fullyConnected(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	opt, err := options[fb.FullyConnectedOptions](o, fb.BuiltinOptionsFullyConnectedOptions)
	if err != nil {
		return err
	}
	if opt.WeightsFormat() != fb.FullyConnectedOptionsWeightsFormatDEFAULT {
		return fmt.Errorf("weights format %s is not supported", opt.WeightsFormat())
	}
	xt, wt, yt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), c.tensor(o.outputs[0])
	if len(wt.shape) != 2 || wt.shape[1] <= 0 || wt.shape[0] <= 0 {
		return fmt.Errorf("weights %q have shape %v, want static [units, depth]", wt.name, wt.shape)
	}
	units, depth := wt.shape[0], wt.shape[1]
	var x, w string
	// An NCHW 4-D input flattened as a whole: permute the weight columns
	// instead of transposing the activation back to NHWC.
	if c.prefers(o.inputs[0]) == nchw && wt.data != nil && xt.shape[1] > 0 && xt.shape[2] > 0 && xt.shape[3] > 0 &&
		xt.shape[1]*xt.shape[2]*xt.shape[3] == depth {
		h, wd, ch := xt.shape[1], xt.shape[2], xt.shape[3]
		if x, err = c.floatValue(o.inputs[0], nchw); err != nil {
			return err
		}
		// W[u, h, w, c] -> W[u, c, h, w]
		tmp := *wt
		tmp.shape = []int64{units, h, wd, ch}
		data, _, err := permuteBytes(wt.data, elemSize(wt.typ), tmp.shape, []int{0, 3, 1, 2})
		if err != nil {
			return err
		}
		tmp.data = data
		tmp.shape = []int64{units, depth}
		if w, err = c.weightFromTensor(&tmp, "_chw"); err != nil {
			return err
		}
	} else {
		if x, err = c.floatValue(o.inputs[0], native); err != nil {
			return err
		}
		if w, err = c.floatValue(o.inputs[1], native); err != nil {
			return err
		}
	}
	ins := []string{x, w}
	if b := c.in(o, 2); b >= 0 {
		bv, err := c.floatValue(b, native)
		if err != nil {
			return err
		}
		ins = append(ins, bv)
	}
	needFlat := !(len(xt.shape) == 2 && xt.shape[1] == depth)
	outShape := yt.shape
	if len(outShape) == 0 {
		return fmt.Errorf("output %q is a scalar", yt.name)
	}
	if needFlat && isQuant(xt) && len(xt.q.scale) == 1 {
		// Flatten the quantized tensor and dequantize after: the Reshape
		// stays outside the QDQ unit, as ONNX Runtime's QDQ passes expect.
		lay := native
		if c.flt[layoutKey{int(o.inputs[0]), nchw}] == ins[0] {
			lay = nchw
		}
		src, err := c.rawValue(int(o.inputs[0]), lay)
		if err != nil {
			return err
		}
		flat := c.unique(c.base[o.inputs[0]] + "_flat")
		c.node("Reshape", []string{src, c.constI64(flat+"_shape", []int64{-1, depth})}, []string{flat})
		scale, zp, err := c.qparams(xt)
		if err != nil {
			return err
		}
		dq := c.unique(flat + "_dq")
		c.node("DequantizeLinear", []string{flat, scale, zp}, []string{dq})
		ins[0] = dq
		needFlat = false
	}
	return c.emit(o.outputs[0], native, opt.FusedActivationFunction(), func(y string) error {
		gemmOut := y
		if needFlat {
			flat := c.unique(y + "_flat_input")
			c.node("Reshape", []string{ins[0], c.constI64(flat+"_shape", []int64{-1, depth})}, []string{flat})
			ins[0] = flat
		}
		reshapeOut := len(outShape) != 2
		if reshapeOut {
			gemmOut = c.unique(y + "_2d")
		}
		c.node("Gemm", ins, []string{gemmOut}, attrInt("transB", 1))
		if reshapeOut {
			shape := append([]int64(nil), outShape...)
			for i := range shape {
				if shape[i] < 0 {
					shape[i] = 0
				}
			}
			shape[len(shape)-1] = units
			c.node("Reshape", []string{gemmOut, c.constI64(y+"_shape", shape)}, []string{y})
		}
		return nil
	})
}

// weightFromTensor makes an initializer (plus DequantizeLinear) from a
// modified copy of a constant tensor.
func (c *converter) weightFromTensor(t *tensor, suffix string) (string, error) {
	dt, err := onnxType(t.typ)
	if err != nil {
		return "", err
	}
	name := c.addInit(c.base[t.index]+suffix, dt, t.shape, t.data)
	if !isQuant(t) {
		return name, nil
	}
	if t.typ == fb.TensorTypeINT64 {
		return "", fmt.Errorf("int64 weights are not supported")
	}
	scale, zp, err := c.qparams(t)
	if err != nil {
		return "", err
	}
	dq := c.unique(name + "_dq")
	var attrs []*onnxpb.AttributeProto
	if len(t.q.scale) > 1 {
		attrs = append(attrs, attrInt("axis", int64(t.q.dim)))
	}
	c.node("DequantizeLinear", []string{name, scale, zp}, []string{dq}, attrs...)
	return dq, nil
}

// ---- softmax ---------------------------------------------------------------

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
		c.node(op, []string{in}, []string{y}, attrInt("axis", axis))
		return nil
	})
}

// ---- shape ops -------------------------------------------------------------

// sameMemoryOrder reports whether a 4-D tensor of this (TFLite) shape holds
// its values in the same flat order in NCHW as in NHWC: the dims other than
// 1 keep their relative order under [0,3,1,2]. Unknown dims count as not 1.
func sameMemoryOrder(shape []int64) bool {
	if len(shape) != 4 {
		return false
	}
	last := -1
	for _, d := range toNCHW() {
		if shape[d] == 1 {
			continue
		}
		if d < last {
			return false
		}
		last = d
	}
	return true
}

func staticShape(s []int64) bool {
	for _, d := range s {
		if d < 0 {
			return false
		}
	}
	return true
}

func (c *converter) reshape(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	yt := c.tensor(o.outputs[0])
	lay := native
	if c.prefers(o.inputs[0]) == nchw && sameMemoryOrder(c.tensor(o.inputs[0]).shape) &&
		staticShape(yt.shape) && (yt.sig == nil || staticShape(yt.sig)) && numel(yt.shape) > 0 {
		lay = nchw // e.g. [N,1,1,C]: NCHW holds the values in NHWC order
	}
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], lay)
	if err != nil {
		return err
	}
	var shapeName string
	switch {
	case staticShape(yt.shape) && (yt.sig == nil || staticShape(yt.sig)):
		shapeName = ""
	case c.in(o, 1) >= 0 && c.tensor(c.in(o, 1)).data == nil:
		// A computed shape: cast it to int64.
		s, err := c.rawValue(int(o.inputs[1]), native)
		if err != nil {
			return err
		}
		shapeName = c.unique(c.base[o.inputs[1]] + "_i64")
		c.node("Cast", []string{s}, []string{shapeName}, attrInt("to", int64(onnxpb.TensorProto_INT64)))
	}
	var shape []int64
	if shapeName == "" {
		if staticShape(yt.shape) && (yt.sig == nil || staticShape(yt.sig)) {
			shape = yt.shape
		} else if s, err := c.constInts(c.in(o, 1)); err == nil {
			shape = s
		} else {
			opt, err := options[fb.ReshapeOptions](o, fb.BuiltinOptionsReshapeOptions)
			if err != nil {
				return err
			}
			n := opt.NewShapeLength()
			if n > maxRank {
				return fmt.Errorf("new_shape of rank %d", n)
			}
			for i := 0; i < n; i++ {
				shape = append(shape, int64(opt.NewShape(i)))
			}
			if n == 0 {
				shape = yt.shape
			}
		}
	}
	return c.emitMove(o.outputs[0], native, raw, func(y string) error {
		if shapeName == "" {
			shapeName = c.constI64(y+"_shape", shape)
		}
		c.node("Reshape", []string{x, shapeName}, []string{y})
		return nil
	})
}

func (c *converter) squeeze(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.SqueezeOptions](o, fb.BuiltinOptionsSqueezeOptions)
	if err != nil {
		return err
	}
	xt := c.tensor(o.inputs[0])
	n := opt.SqueezeDimsLength()
	if n > maxRank {
		return fmt.Errorf("%d squeeze dims", n)
	}
	var axes []int64
	for i := 0; i < n; i++ {
		a := int64(opt.SqueezeDims(i))
		if a < 0 {
			a += int64(len(xt.shape))
		}
		if a < 0 || a >= int64(len(xt.shape)) {
			return fmt.Errorf("squeeze dim %d out of range for rank %d", opt.SqueezeDims(i), len(xt.shape))
		}
		axes = append(axes, a)
	}
	if len(axes) == 0 {
		for i, d := range xt.shape {
			if d == 1 {
				axes = append(axes, int64(i))
			}
		}
	}
	lay := native
	if c.prefers(o.inputs[0]) == nchw && sameMemoryOrder(xt.shape) {
		lay = nchw
		for i, a := range axes {
			axes[i], _ = axisIn(a, len(xt.shape), nchw)
		}
	}
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], lay)
	if err != nil {
		return err
	}
	return c.emitMove(o.outputs[0], native, raw, func(y string) error {
		c.node("Squeeze", []string{x, c.constI64(y+"_axes", axes)}, []string{y})
		return nil
	})
}

func (c *converter) expandDims(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	a, err := c.constInts(o.inputs[1])
	if err != nil || len(a) != 1 {
		return fmt.Errorf("axis must be a constant scalar: %v", err)
	}
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], native)
	if err != nil {
		return err
	}
	axis := a[0]
	r := int64(len(c.tensor(o.inputs[0]).shape))
	if axis < -r-1 || axis > r {
		return fmt.Errorf("axis %d out of range for rank %d", axis, r)
	}
	return c.emitMove(o.outputs[0], native, raw, func(y string) error {
		c.node("Unsqueeze", []string{x, c.constI64(y+"_axes", []int64{axis})}, []string{y})
		return nil
	})
}

// axisIn maps a TFLite axis of a rank-r tensor to the ONNX axis in a layout.
func axisIn(axis int64, r int, lay layout) (int64, error) {
	if axis < 0 {
		axis += int64(r)
	}
	if axis < 0 || axis >= int64(r) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, r)
	}
	if lay == nchw {
		return int64(indexOf(toNCHW(), int(axis))), nil
	}
	return axis, nil
}

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
		c.node("Concat", ins, []string{y}, attrInt("axis", axis))
		return nil
	}
	if raw {
		return c.emitMove(o.outputs[0], lay, true, build)
	}
	return c.emit(o.outputs[0], lay, opt.FusedActivationFunction(), build)
}

func (c *converter) pad(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	xt := c.tensor(o.inputs[0])
	r := len(xt.shape)
	p, err := c.constInts(o.inputs[1])
	if err != nil {
		return fmt.Errorf("paddings: %w", err)
	}
	if len(p) != 2*r {
		return fmt.Errorf("paddings have %d values for rank %d", len(p), r)
	}
	mode := "constant"
	if o.code == fb.BuiltinOperatorMIRROR_PAD {
		opt, err := options[fb.MirrorPadOptions](o, fb.BuiltinOptionsMirrorPadOptions)
		if err != nil {
			return err
		}
		if opt.Mode() != fb.MirrorPadModeREFLECT {
			return fmt.Errorf("mirror pad mode %s has no ONNX equivalent", opt.Mode())
		}
		mode = "reflect"
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], lay)
	if err != nil {
		return err
	}
	pads := make([]int64, 2*r)
	for i := 0; i < r; i++ {
		a, _ := axisIn(int64(i), r, lay)
		pads[a] = p[2*i]
		pads[int(a)+r] = p[2*i+1]
	}
	ins := []string{x, ""}
	if o.code == fb.BuiltinOperatorPADV2 {
		if v := c.in(o, 2); v >= 0 {
			cv, err := c.floatValue(v, native)
			if err != nil {
				return err
			}
			if len(c.tensor(v).shape) != 0 {
				sq := c.unique(cv + "_scalar")
				c.node("Reshape", []string{cv, c.constI64(sq+"_shape", []int64{})}, []string{sq})
				cv = sq
			}
			ins = append(ins, cv)
		}
	}
	return c.emit(o.outputs[0], lay, fb.ActivationFunctionTypeNONE, func(y string) error {
		ins[1] = c.constI64(y+"_pads", pads)
		c.node("Pad", ins, []string{y}, attrString("mode", mode))
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
		for _, d := range toNCHW() {
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
			c.node(op, []string{x, c.constI64(y+"_axes", onnxAxes)}, []string{y}, attrInt("keepdims", keepI))
		} else {
			c.node(op, []string{x}, []string{y}, attrInts("axes", onnxAxes), attrInt("keepdims", keepI))
		}
		return nil
	})
}

func (c *converter) transpose(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	xt := c.tensor(o.inputs[0])
	perm, err := c.constInts(o.inputs[1])
	if err != nil {
		return fmt.Errorf("perm: %w", err)
	}
	r := len(xt.shape)
	if len(perm) != r {
		return fmt.Errorf("perm %v does not fit rank %d", perm, r)
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= int64(r) || seen[p] {
			return fmt.Errorf("perm %v is not a permutation", perm)
		}
		seen[p] = true
	}
	lay := c.prefers(o.inputs[0])
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], lay)
	if err != nil {
		return err
	}
	q := perm
	if lay == nchw {
		// The NCHW value v relates to the TFLite tensor as t = v.T(toNHWC()).
		q = make([]int64, r)
		for i, p := range perm {
			q[i] = int64(toNHWC()[p])
		}
	}
	identity := true
	for i, p := range q {
		if p != int64(i) {
			identity = false
		}
	}
	return c.emitMove(o.outputs[0], native, raw, func(y string) error {
		if identity {
			c.node("Identity", []string{x}, []string{y})
		} else {
			c.node("Transpose", []string{x}, []string{y}, attrInts("perm", q))
		}
		return nil
	})
}

func (c *converter) stridedSlice(o *operator) error {
	if err := needInputs(o, 4); err != nil {
		return err
	}
	opt, err := options[fb.StridedSliceOptions](o, fb.BuiltinOptionsStridedSliceOptions)
	if err != nil {
		return err
	}
	if opt.EllipsisMask() != 0 || opt.NewAxisMask() != 0 {
		return fmt.Errorf("ellipsis_mask and new_axis_mask are not supported")
	}
	xt := c.tensor(o.inputs[0])
	r := len(xt.shape)
	begin, err1 := c.constInts(o.inputs[1])
	end, err2 := c.constInts(o.inputs[2])
	strides, err3 := c.constInts(o.inputs[3])
	if err1 != nil || err2 != nil || err3 != nil {
		return fmt.Errorf("begin, end and strides must be constants")
	}
	n := len(begin)
	if len(end) != n || len(strides) != n || n > r {
		return fmt.Errorf("begin/end/strides lengths %d/%d/%d for rank %d", len(begin), len(end), len(strides), r)
	}
	shrink := opt.ShrinkAxisMask()
	lay := c.prefers(o.inputs[0])
	if shrink != 0 {
		lay = native
	}
	var starts, ends, axes, steps, squeeze []int64
	for i := 0; i < n; i++ {
		s, b, e := strides[i], begin[i], end[i]
		if s == 0 {
			return fmt.Errorf("stride 0 on axis %d", i)
		}
		if opt.Offset() {
			e = b + e
		}
		if opt.BeginMask()&(1<<i) != 0 {
			if s > 0 {
				b = 0
			} else {
				b = math.MaxInt64
			}
		}
		if opt.EndMask()&(1<<i) != 0 {
			if s > 0 {
				e = math.MaxInt64
			} else {
				e = math.MinInt64
			}
		}
		if shrink&(1<<i) != 0 {
			if b == -1 {
				e = math.MaxInt64
			} else {
				e = b + 1
			}
			s = 1
			squeeze = append(squeeze, int64(i))
		}
		a, _ := axisIn(int64(i), r, lay)
		starts, ends, axes, steps = append(starts, b), append(ends, e), append(axes, a), append(steps, s)
	}
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], lay)
	if err != nil {
		return err
	}
	return c.emitMove(o.outputs[0], lay, raw, func(y string) error {
		out := y
		if len(squeeze) > 0 {
			out = c.unique(y + "_unsqueezed")
		}
		c.node("Slice", []string{x, c.constI64(y+"_starts", starts), c.constI64(y+"_ends", ends),
			c.constI64(y+"_axes", axes), c.constI64(y+"_steps", steps)}, []string{out})
		if len(squeeze) > 0 {
			c.node("Squeeze", []string{out, c.constI64(y+"_squeeze_axes", squeeze)}, []string{y})
		}
		return nil
	})
}

func (c *converter) slice(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	xt := c.tensor(o.inputs[0])
	r := len(xt.shape)
	begin, err1 := c.constInts(o.inputs[1])
	size, err2 := c.constInts(o.inputs[2])
	if err1 != nil || err2 != nil || len(begin) != r || len(size) != r {
		return fmt.Errorf("begin and size must be constants of length %d", r)
	}
	lay := c.prefers(o.inputs[0])
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], lay)
	if err != nil {
		return err
	}
	var starts, ends, axes []int64
	for i := 0; i < r; i++ {
		e := begin[i] + size[i]
		if size[i] < 0 {
			e = math.MaxInt64
		}
		a, _ := axisIn(int64(i), r, lay)
		starts, ends, axes = append(starts, begin[i]), append(ends, e), append(axes, a)
	}
	return c.emitMove(o.outputs[0], lay, raw, func(y string) error {
		c.node("Slice", []string{x, c.constI64(y+"_starts", starts), c.constI64(y+"_ends", ends), c.constI64(y+"_axes", axes)}, []string{y})
		return nil
	})
}

func (c *converter) gather(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	opt, err := options[fb.GatherOptions](o, fb.BuiltinOptionsGatherOptions)
	if err != nil {
		return err
	}
	if opt.BatchDims() != 0 {
		return fmt.Errorf("batch_dims %d is not supported", opt.BatchDims())
	}
	xt, it := c.tensor(o.inputs[0]), c.tensor(o.inputs[1])
	lay := c.prefers(o.inputs[0])
	if len(it.shape) != 1 {
		lay = native
	}
	axis, err := axisIn(int64(opt.Axis()), len(xt.shape), lay)
	if err != nil {
		return err
	}
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], lay)
	if err != nil {
		return err
	}
	idx, err := c.rawValue(int(o.inputs[1]), native)
	if err != nil {
		return err
	}
	return c.emitMove(o.outputs[0], lay, raw, func(y string) error {
		c.node("Gather", []string{x, idx}, []string{y}, attrInt("axis", axis))
		return nil
	})
}

func (c *converter) resize(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	if err := c.need4D(o.inputs[0]); err != nil {
		return err
	}
	size, err := c.constInts(o.inputs[1])
	if err != nil || len(size) != 2 || size[0] <= 0 || size[1] <= 0 {
		return fmt.Errorf("size must be a constant of two positive values")
	}
	var align, half bool
	if o.code == fb.BuiltinOperatorRESIZE_BILINEAR {
		opt, err := options[fb.ResizeBilinearOptions](o, fb.BuiltinOptionsResizeBilinearOptions)
		if err != nil {
			return err
		}
		align, half = opt.AlignCorners(), opt.HalfPixelCenters()
	} else {
		opt, err := options[fb.ResizeNearestNeighborOptions](o, fb.BuiltinOptionsResizeNearestNeighborOptions)
		if err != nil {
			return err
		}
		align, half = opt.AlignCorners(), opt.HalfPixelCenters()
	}
	if align && half {
		return fmt.Errorf("align_corners together with half_pixel_centers is not supported")
	}
	attrs := []*onnxpb.AttributeProto{}
	coord := "asymmetric"
	if align {
		coord = "align_corners"
	} else if half {
		coord = "half_pixel"
	}
	if o.code == fb.BuiltinOperatorRESIZE_BILINEAR {
		attrs = append(attrs, attrString("mode", "linear"))
	} else {
		attrs = append(attrs, attrString("mode", "nearest"))
		// TFLite: floor(x*scale) plain, round(x*scale) with align_corners,
		// floor((x+0.5)*scale) with half pixel centers, which is ONNX's
		// half_pixel rounded half up.
		nm := "floor"
		if align || half {
			nm = "round_prefer_ceil"
		}
		attrs = append(attrs, attrString("nearest_mode", nm))
	}
	attrs = append(attrs, attrString("coordinate_transformation_mode", coord))
	xt := c.tensor(o.inputs[0])
	var sizes []int64
	if c.opts.Opset >= 18 {
		sizes = []int64{size[0], size[1]}
		attrs = append(attrs, attrInts("axes", []int64{2, 3}))
	} else {
		if xt.shape[0] <= 0 || xt.shape[3] <= 0 {
			return fmt.Errorf("resize of an input with unknown batch or channels needs opset 18")
		}
		sizes = []int64{xt.shape[0], xt.shape[3], size[0], size[1]}
	}
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], nchw, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Resize", []string{x, "", "", c.constI64(y+"_sizes", sizes)}, []string{y}, attrs...)
		return nil
	})
}

func (c *converter) depthSpace(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	if err := c.need4D(o.inputs[0]); err != nil {
		return err
	}
	var bs int32
	op := "DepthToSpace"
	if o.code == fb.BuiltinOperatorDEPTH_TO_SPACE {
		opt, err := options[fb.DepthToSpaceOptions](o, fb.BuiltinOptionsDepthToSpaceOptions)
		if err != nil {
			return err
		}
		bs = opt.BlockSize()
	} else {
		opt, err := options[fb.SpaceToDepthOptions](o, fb.BuiltinOptionsSpaceToDepthOptions)
		if err != nil {
			return err
		}
		bs = opt.BlockSize()
		op = "SpaceToDepth"
	}
	if err := positive("block size", bs); err != nil {
		return err
	}
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], nchw)
	if err != nil {
		return err
	}
	attrs := []*onnxpb.AttributeProto{attrInt("blocksize", int64(bs))}
	if op == "DepthToSpace" {
		attrs = append(attrs, attrString("mode", "DCR"))
	}
	return c.emitMove(o.outputs[0], nchw, raw, func(y string) error {
		c.node(op, []string{x}, []string{y}, attrs...)
		return nil
	})
}

// ---- types -----------------------------------------------------------------

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
		var attrs []*onnxpb.AttributeProto
		if len(xt.q.scale) > 1 {
			axis, err := axisIn(int64(xt.q.dim), len(xt.shape), lay)
			if err != nil {
				return err
			}
			attrs = append(attrs, attrInt("axis", axis))
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
			c.node("Cast", []string{x}, []string{y}, attrInt("to", int64(onnxpb.TensorProto_FLOAT)))
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
		c.node("Cast", []string{x}, []string{y}, attrInt("to", int64(dt)))
		return nil
	})
}
