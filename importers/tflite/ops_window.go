package tflite

import (
	"fmt"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// REDUCE_WINDOW and STABLEHLO_REDUCE_WINDOW: one strided Slice per window
// position, folded with the reduction's binary op from the init value.

// maxWindow bounds the window positions (Slices) of a reduce-window.
const maxWindow = 1024

// reduceWindowOp is the ONNX binary op of a ReduceWindowFunction, for
// values of type typ.
func reduceWindowOp(f fb.ReduceWindowFunction, typ fb.TensorType) (string, error) {
	switch f {
	case fb.ReduceWindowFunctionADD:
		return "Add", nil
	case fb.ReduceWindowFunctionMUL:
		return "Mul", nil
	case fb.ReduceWindowFunctionMINIMUM:
		return "Min", nil
	case fb.ReduceWindowFunctionMAXIMUM:
		return "Max", nil
	case fb.ReduceWindowFunctionALL, fb.ReduceWindowFunctionANY:
		if typ != fb.TensorTypeBOOL {
			return "", fmt.Errorf("reduce function %s on %s (bool only)", f, typ)
		}
		if f == fb.ReduceWindowFunctionALL {
			return "And", nil
		}
		return "Or", nil
	}
	return "", fmt.Errorf("reduce function %s is not supported", f)
}

// windowReduce folds x (static shape) over windows of size win, strides
// and dilations, starting from init, with op.
func (c *converter) windowReduce(x, init, op, y string, shape, win, strides, dil []int64) error {
	r := len(shape)
	if len(win) != r || len(strides) != r || len(dil) != r {
		return fmt.Errorf("window %v, strides %v and dilations %v do not fit rank %d", win, strides, dil, r)
	}
	count := int64(1)
	outs := make([]int64, r)
	for i := range shape {
		if win[i] < 1 || strides[i] < 1 || dil[i] < 1 {
			return fmt.Errorf("window %v, strides %v and dilations %v must be positive", win, strides, dil)
		}
		eff := (win[i]-1)*dil[i] + 1
		if shape[i] < eff {
			return fmt.Errorf("window %v (dilated) is larger than the input %v", win, shape)
		}
		outs[i] = (shape[i]-eff)/strides[i] + 1
		count *= win[i]
		if count > maxWindow {
			return fmt.Errorf("window %v has more than %d positions", win, maxWindow)
		}
	}
	axes := make([]int64, r)
	for i := range axes {
		axes[i] = int64(i)
	}
	acc := init
	at := make([]int64, r)
	for k := int64(0); k < count; k++ {
		starts, ends := make([]int64, r), make([]int64, r)
		for i := range at {
			starts[i] = at[i] * dil[i]
			ends[i] = starts[i] + (outs[i]-1)*strides[i] + 1
		}
		s := c.b.Op("Slice", y+"_window", []string{x, c.constI64(y+"_starts", starts), c.constI64(y+"_ends", ends), c.constI64(y+"_axes", axes), c.constI64(y+"_steps", strides)})
		if k == count-1 {
			c.node(op, []string{acc, s}, []string{y})
		} else {
			acc = c.b.Op(op, y+"_acc", []string{acc, s})
		}
		for i := r - 1; i >= 0; i-- {
			at[i]++
			if at[i] < win[i] {
				break
			}
			at[i] = 0
		}
	}
	return nil
}

// reduceWindow is REDUCE_WINDOW (inputs: input, init value, window shape,
// strides, dilations; no padding).
func (c *converter) reduceWindow(o *operator) error {
	if err := needInputs(o, 5); err != nil {
		return err
	}
	opt, err := options2[fb.ReduceWindowOptions](o, fb.BuiltinOptions2ReduceWindowOptions)
	if err != nil {
		return err
	}
	op, err := reduceWindowOp(opt.ReduceFunction(), c.tensor(o.inputs[0]).typ)
	if err != nil {
		return err
	}
	shape, err := c.staticDims(o.inputs[0])
	if err != nil {
		return err
	}
	var geom [3][]int64
	for i := range geom {
		if geom[i], err = c.constInts(o.inputs[2+i]); err != nil {
			return err
		}
	}
	return c.nativeOp(o, 2, func(in []string, y string) error {
		return c.windowReduce(in[0], in[1], op, y, shape, geom[0], geom[1], geom[2])
	})
}

// stablehloReduceWindow is STABLEHLO_REDUCE_WINDOW of one input whose body
// is one elementwise StableHLO op: base dilation and padding with the init
// value, then the windows.
func (c *converter) stablehloReduceWindow(o *operator) error {
	opt, err := options2[fb.StablehloReduceWindowOptions](o, fb.BuiltinOptions2StablehloReduceWindowOptions)
	if err != nil {
		return err
	}
	if len(o.inputs) != 2 || len(o.outputs) != 1 {
		return fmt.Errorf("%d inputs and %d outputs: only one operand and its init value are supported", len(o.inputs), len(o.outputs))
	}
	body := int(opt.BodySubgraphIndex())
	if body <= 0 || body >= len(c.m.subgraphs) || len(c.m.subgraphs[body].ops) != 1 {
		return fmt.Errorf("body subgraph %d is not one operator", body)
	}
	var op string
	switch c.m.subgraphs[body].ops[0].code {
	case fb.BuiltinOperatorSTABLEHLO_ADD:
		op = "Add"
	case fb.BuiltinOperatorSTABLEHLO_MULTIPLY:
		op = "Mul"
	case fb.BuiltinOperatorSTABLEHLO_MAXIMUM:
		op = "Max"
	case fb.BuiltinOperatorSTABLEHLO_MINIMUM:
		op = "Min"
	default:
		return fmt.Errorf("body operator %s is not supported (add, multiply, maximum, minimum)", opName(c.m.subgraphs[body].ops[0]))
	}
	shape, err := c.staticDims(o.inputs[0])
	if err != nil {
		return err
	}
	r := len(shape)
	read := func(n int, at func(int) int64, def int64) ([]int64, error) {
		v := make([]int64, r)
		if n == 0 {
			for i := range v {
				v[i] = def
			}
			return v, nil
		}
		if n != r {
			return nil, fmt.Errorf("%d values for rank %d", n, r)
		}
		for i := range v {
			v[i] = at(i)
		}
		return v, nil
	}
	win, err := read(opt.WindowDimensionsLength(), opt.WindowDimensions, 1)
	if err != nil {
		return fmt.Errorf("window dimensions: %w", err)
	}
	strides, err := read(opt.WindowStridesLength(), opt.WindowStrides, 1)
	if err != nil {
		return fmt.Errorf("window strides: %w", err)
	}
	base, err := read(opt.BaseDilationsLength(), opt.BaseDilations, 1)
	if err != nil {
		return fmt.Errorf("base dilations: %w", err)
	}
	dil, err := read(opt.WindowDilationsLength(), opt.WindowDilations, 1)
	if err != nil {
		return fmt.Errorf("window dilations: %w", err)
	}
	pads := make([]int64, 2*r)
	if n := opt.PaddingLength(); n != 0 && n != 2*r {
		return fmt.Errorf("padding of %d values for rank %d", n, r)
	} else if n != 0 {
		for i := 0; i < r; i++ {
			pads[i], pads[r+i] = opt.Padding(2*i), opt.Padding(2*i+1)
			if pads[i] < 0 || pads[r+i] < 0 {
				return fmt.Errorf("negative padding %v is not supported", pads)
			}
		}
	}
	gaps := make([]int64, r)
	for i, b := range base {
		if b < 1 {
			return fmt.Errorf("base dilation %d below 1", b)
		}
		gaps[i] = b - 1
	}
	return c.nativeOp(o, 2, func(in []string, y string) error {
		x, s := c.interleave(in[0], shape, gaps, in[1], y)
		x = c.b.Op("Pad", y+"_padded", []string{x, c.constI64(y+"_pads", pads), in[1]})
		for i := range s {
			s[i] += pads[i] + pads[r+i]
		}
		return c.windowReduce(x, in[1], op, y, s, win, strides, dil)
	})
}
