package tflite

import (
	"encoding/binary"
	"fmt"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// MediaPipe's custom operators (mediapipe/util/tflite/operations), by
// their custom code. Their parameters are the raw C structs MediaPipe
// reads from custom_options.
func customHandlers() map[string]func(*converter, *operator) error {
	return map[string]func(*converter, *operator) error{
		"Convolution2DTransposeBias": (*converter).transposeConvBias,
	}
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
	case "MaxPoolingWithArgmax2D", "MaxUnpooling2D":
		return "MediaPipe's custom operator " + code + " is not mapped yet (LiteRT.js runs it in XNNPACK, whose argmax indices, " +
			"uint32 bit patterns counted column-major in the window, differ from MediaPipe's reference kernel's float y*filter_width+x+0.1)"
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
