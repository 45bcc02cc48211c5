package tflite

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// MediaPipe's custom operators (mediapipe/util/tflite/operations), by
// their custom code. Their parameters are the raw C structs MediaPipe
// reads from custom_options.
func customHandlers() map[string]func(*converter, *operator) error {
	return map[string]func(*converter, *operator) error{
		"Convolution2DTransposeBias": (*converter).transposeConvBias,
		"MaxPoolingWithArgmax2D":     (*converter).maxPoolArgmax,
		"MaxUnpooling2D":             (*converter).maxUnpooling,
	}
}

// poolParams reads the TfLitePoolParams MediaPipe's pooling ops keep in
// custom_options: int32 padding (1 SAME, 2 VALID), stride_width,
// stride_height, filter_width, filter_height, activation.
type poolParams struct {
	padding        fb.Padding
	sW, sH, fW, fH int64
	act            fb.ActivationFunctionType
}

func readPoolParams(o *operator) (poolParams, error) {
	var p poolParams
	if o.raw == nil || len(o.raw.CustomOptionsBytes()) < 24 {
		return p, fmt.Errorf("custom_options: want a TfLitePoolParams (padding, stride_width, stride_height, filter_width, filter_height, activation: 24 bytes)")
	}
	b := o.raw.CustomOptionsBytes()
	v := func(i int) int32 { return int32(binary.LittleEndian.Uint32(b[4*i:])) }
	switch v(0) {
	case 1:
		p.padding = fb.PaddingSAME
	case 2:
		p.padding = fb.PaddingVALID
	default:
		return p, fmt.Errorf("padding %d: want 1 (SAME) or 2 (VALID)", v(0))
	}
	if err := positive("pool size/stride", v(1), v(2), v(3), v(4)); err != nil {
		return p, err
	}
	p.sW, p.sH, p.fW, p.fH = int64(v(1)), int64(v(2)), int64(v(3)), int64(v(4))
	// TfLiteFusedActivation: 0 none, 1 relu, 2 relu_n1_to_1, 3 relu6.
	switch v(5) {
	case 0:
		p.act = fb.ActivationFunctionTypeNONE
	case 1:
		p.act = fb.ActivationFunctionTypeRELU
	case 2:
		p.act = fb.ActivationFunctionTypeRELU_N1_TO_1
	case 3:
		p.act = fb.ActivationFunctionTypeRELU6
	default:
		return p, fmt.Errorf("activation %d is not supported", v(5))
	}
	return p, nil
}

// readers lists the operators of the subgraph reading tensor idx.
func (c *converter) readers(idx int32) []*operator {
	var out []*operator
	for _, op := range c.g.ops {
		if slices.Contains(op.inputs, idx) {
			out = append(out, op)
		}
	}
	return out
}

// maxPoolArgmax maps MaxPoolingWithArgmax2D (mediapipe
// max_pool_argmax.cc): max pooling of [N, H, W, C] with TfLitePoolParams,
// and the position of each maximum. That position has no one form: MediaPipe's kernel
// writes the float y·filter_width + x + 0.1, XNNPACK (which runs it in
// LiteRT.js) uint32 bit patterns of x·filter_height + y. It is kept as
// ONNX MaxPool's Indices inside the graph, so the indices output may only
// be read by MaxUnpooling2D (which reads it back the same way in either
// kernel) and may not be a model output.
func (c *converter) maxPoolArgmax(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	if len(o.outputs) != 2 {
		return fmt.Errorf("%d outputs: want the pooled values and the argmax indices", len(o.outputs))
	}
	p, err := readPoolParams(o)
	if err != nil {
		return err
	}
	if err := c.need4D(o.inputs[0]); err != nil {
		return err
	}
	idx := c.tensor(o.outputs[1])
	if slices.Contains(c.g.outputs, o.outputs[1]) {
		return fmt.Errorf("its argmax indices %q are a model output: MediaPipe's kernel and XNNPACK write them in different forms, neither of which ONNX has; only MaxUnpooling2D may read them", idx.name)
	}
	for _, r := range c.readers(o.outputs[1]) {
		if r.custom != "MaxUnpooling2D" || slices.Index(r.inputs, o.outputs[1]) != 1 {
			return fmt.Errorf("its argmax indices %q are read by operator %d (%s): MediaPipe's kernel and XNNPACK write them in different forms, neither of which ONNX has; only MaxUnpooling2D may read them", idx.name, r.index, opName(r))
		}
	}
	xt := c.tensor(o.inputs[0])
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	attrs, err := padAttrs(p.padding, xt.shape[1], xt.shape[2], p.fH, p.fW, p.sH, p.sW, 1, 1)
	if err != nil {
		return err
	}
	attrs = append(attrs, canonical.IntsAttr("kernel_shape", p.fH, p.fW), canonical.IntsAttr("strides", p.sH, p.sW))
	indices := c.unique(idx.name + "_onnx_indices")
	if err := c.emit(o.outputs[0], nchw, p.act, func(y string) error {
		c.node("MaxPool", []string{x}, []string{y, indices}, attrs...)
		return nil
	}); err != nil {
		return err
	}
	return c.finishAs(o.outputs[1], nchw, indices, true)
}

// maxUnpooling maps MaxUnpooling2D (mediapipe max_unpooling.cc): each
// value of [N, H, W, C] is written at the position its argmax index
// names, zeros elsewhere, an output of the output tensor's shape. The
// indices must come from a MaxPoolingWithArgmax2D of the same window,
// strides and padding whose input has the output's shape: ONNX MaxUnpool
// then scatters at MaxPool's Indices.
func (c *converter) maxUnpooling(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	p, err := readPoolParams(o)
	if err != nil {
		return err
	}
	var pool *operator
	for _, op := range c.g.ops {
		if op.code == fb.BuiltinOperatorCUSTOM && op.custom == "MaxPoolingWithArgmax2D" && len(op.outputs) == 2 && op.outputs[1] == o.inputs[1] {
			pool = op
		}
	}
	if pool == nil {
		return fmt.Errorf("its indices %q are not the argmax output of a MaxPoolingWithArgmax2D (the only form this mapping reads)", c.tensor(o.inputs[1]).name)
	}
	pp, err := readPoolParams(pool)
	if err != nil {
		return fmt.Errorf("its MaxPoolingWithArgmax2D (operator %d): %w", pool.index, err)
	}
	if pp.padding != p.padding || pp.sW != p.sW || pp.sH != p.sH || pp.fW != p.fW || pp.fH != p.fH {
		return fmt.Errorf("its pooling parameters differ from those of the MaxPoolingWithArgmax2D (operator %d) whose indices it reads", pool.index)
	}
	out, err := c.staticShape(o.outputs[0], "output")
	if err != nil {
		return err
	}
	if in := c.tensor(pool.inputs[0]).shape; !slices.Equal(in, out) {
		return fmt.Errorf("output shape %v differs from the shape %v of the input its indices were taken from", out, in)
	}
	x, err := c.floatValue(o.inputs[0], nchw)
	if err != nil {
		return err
	}
	ind, err := c.rawValue(int(o.inputs[1]), nchw)
	if err != nil {
		return err
	}
	shape := c.constI64(c.firstOutName(o)+"_shape", []int64{out[0], out[3], out[1], out[2]})
	return c.emit(o.outputs[0], nchw, p.act, func(y string) error {
		c.node("MaxUnpool", []string{x, ind, shape}, []string{y}, canonical.IntsAttr("kernel_shape", p.fH, p.fW), canonical.IntsAttr("strides", p.sH, p.sW))
		return nil
	})
}

// staticShape is tensor idx's shape, refused when a dimension is dynamic.
func (c *converter) staticShape(idx int32, what string) ([]int64, error) {
	t := c.tensor(idx)
	for _, d := range t.shape {
		if d < 0 {
			return nil, fmt.Errorf("the %s %q has a dynamic shape %v", what, t.name, t.shape)
		}
	}
	return t.shape, nil
}

// mediapipeUnmapped says why a custom operator of MediaPipe's that
// customHandlers does not map is not mapped ("" for other codes).
// Checked on one-op models of each (mediapipe_test.go): LiteRT.js 2.5.3
// loads the first three and runs them without an error but never writes
// their outputs (no kernel: they hold zeros or leftover memory),
// tfjs-tflite refuses them as
// unresolved custom ops, so no runtime here computes them to check a
// mapping against. XNNPACK (in LiteRT.js) runs the max-pooling pair.
func mediapipeUnmapped(code string) string {
	switch code {
	case "TransformLandmarks", "TransformTensorBilinear", "Landmarks2TransformMatrix":
		return "MediaPipe's custom operator " + code + " is not mapped: no TFLite runtime here computes it to check a mapping against " +
			"(LiteRT.js runs it without writing its output, tfjs-tflite refuses it as an unresolved custom op)"
	}
	return ""
}

// transposeConvBias maps Convolution2DTransposeBias: inputs (input
// [N,H,W,I], filter [O,H,W,I], bias [O]), custom_options a
// TfLiteTransposeConvParams (int32 padding: 1 SAME, 2 VALID; int32
// stride_width; int32 stride_height); the output size is the output
// tensor's. It computes TRANSPOSE_CONV with that padding and strides
// plus the bias, which emitTransposeConv maps.
func (c *converter) transposeConvBias(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	if o.raw == nil {
		return fmt.Errorf("operator %d has no custom_options", o.index)
	}
	opts := o.raw.CustomOptionsBytes()
	if len(opts) < 12 {
		return fmt.Errorf("custom_options of %d bytes: want a TfLiteTransposeConvParams (padding, stride_width, stride_height: 12 bytes)", len(opts))
	}
	pad := int32(binary.LittleEndian.Uint32(opts[0:]))
	sW := int64(int32(binary.LittleEndian.Uint32(opts[4:])))
	sH := int64(int32(binary.LittleEndian.Uint32(opts[8:])))
	if pad != 1 && pad != 2 {
		return fmt.Errorf("padding %d: want 1 (SAME) or 2 (VALID)", pad)
	}
	return c.emitTransposeConv(o, o.inputs[0], o.inputs[1], o.inputs[2], c.tensor(o.outputs[0]).shape, pad == 1, sH, sW, fb.ActivationFunctionTypeNONE)
}

// userCustomOp maps a custom operator the user defines (Options.Custom):
// a call of the function named by its custom code on the operator's
// inputs, in TFLite's layout (quantized ones dequantized), writing its
// outputs.
func (c *converter) userCustomOp(o *operator) error {
	f := c.st.custom.Lookup(o.custom)
	if len(f.Body.Inputs) != len(o.inputs) || len(f.Body.Outputs) != len(o.outputs) {
		return fmt.Errorf("the custom function %s.%s takes %d inputs and gives %d outputs; the operator has %d and %d",
			f.Domain, f.Name, len(f.Body.Inputs), len(f.Body.Outputs), len(o.inputs), len(o.outputs))
	}
	call, err := c.st.custom.Call(o.custom, nil)
	if err != nil {
		return err
	}
	ins := make([]string, len(o.inputs))
	for i, idx := range o.inputs {
		if ins[i], err = c.floatValue(idx, native); err != nil {
			return err
		}
	}
	outs := make([]string, len(o.outputs))
	for i, idx := range o.outputs {
		outs[i] = c.unique(c.output(idx, native) + "_custom")
	}
	c.b.NodeIn(call.Domain, call.Name, outs[0], ins, outs)
	for i, idx := range o.outputs {
		if err := c.finish(idx, native, outs[i]); err != nil {
			return err
		}
	}
	return nil
}
