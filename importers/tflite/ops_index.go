package tflite

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Indexing: STRIDED_SLICE, SLICE, GATHER.

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
		c.node("Gather", []string{x, idx}, []string{y}, canonical.IntAttr("axis", axis))
		return nil
	})
}
