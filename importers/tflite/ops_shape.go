package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	clayout "github.com/onnxconv/onnxconv/canonical/layout"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Shape and layout ops: RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE,
// PAD / PADV2 / MIRROR_PAD, TILE, SHAPE, DEPTH_TO_SPACE / SPACE_TO_DEPTH.

// sameMemoryOrder reports whether a 4-D tensor of this (TFLite) shape holds
// its values in the same flat order in NCHW as in NHWC: the dims other than
// 1 keep their relative order under [0,3,1,2]. Unknown dims count as not 1.
func sameMemoryOrder(shape []int64) bool {
	if len(shape) != 4 {
		return false
	}
	last := -1
	for _, d := range clayout.ToFirst(4) {
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
		c.node("Cast", []string{s}, []string{shapeName}, canonical.IntAttr("to", int64(canonical.Int64)))
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
		return int64(clayout.Axis(clayout.ToFirst(4), int(axis))), nil
	}
	return axis, nil
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
		switch opt.Mode() {
		case fb.MirrorPadModeREFLECT:
			mode = "reflect"
		case fb.MirrorPadModeSYMMETRIC:
			return c.symmetricPad(o, p)
		default:
			return fmt.Errorf("mirror pad mode %s is not supported", opt.Mode())
		}
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
		c.node("Pad", ins, []string{y}, canonical.StringAttr("mode", mode))
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
		// The NCHW value v relates to the TFLite tensor as t = v.T(back).
		back := clayout.ToLast(4)
		q = make([]int64, r)
		for i, p := range perm {
			q[i] = int64(back[p])
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
			c.node("Transpose", []string{x}, []string{y}, canonical.IntsAttr("perm", q...))
		}
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
	attrs := []*canonical.Attribute{canonical.IntAttr("blocksize", int64(bs))}
	if op == "DepthToSpace" {
		attrs = append(attrs, canonical.StringAttr("mode", "DCR"))
	}
	return c.emitMove(o.outputs[0], nchw, raw, func(y string) error {
		c.node(op, []string{x}, []string{y}, attrs...)
		return nil
	})
}

func (c *converter) tile(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	m, err := c.constInts(o.inputs[1])
	if err != nil {
		return fmt.Errorf("multiples: %w", err)
	}
	xt := c.tensor(o.inputs[0])
	r := len(xt.shape)
	if len(m) != r {
		return fmt.Errorf("%d multiples for rank %d", len(m), r)
	}
	lay := c.prefers(o.inputs[0])
	reps := make([]int64, r)
	for i, v := range m {
		if v < 0 {
			return fmt.Errorf("negative multiple %d", v)
		}
		a, _ := axisIn(int64(i), r, lay)
		reps[a] = v
	}
	x, raw, err := c.moveInput(o.inputs[0], o.outputs[0], lay)
	if err != nil {
		return err
	}
	return c.emitMove(o.outputs[0], lay, raw, func(y string) error {
		c.node("Tile", []string{x, c.constI64(y+"_repeats", reps)}, []string{y})
		return nil
	})
}

func (c *converter) shape(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.ShapeOptions](o, fb.BuiltinOptionsShapeOptions)
	if err != nil {
		return err
	}
	lay := c.prefers(o.inputs[0])
	x, err := c.rawValue(int(o.inputs[0]), lay)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		s := c.unique(y + "_int64")
		c.node("Shape", []string{x}, []string{s})
		if lay == nchw {
			g := c.unique(y + "_nhwc")
			c.node("Gather", []string{s, c.constI64(y+"_perm", clayout.Int64s(clayout.ToLast(4)))}, []string{g}, canonical.IntAttr("axis", 0))
			s = g
		}
		if opt.OutType() == fb.TensorTypeINT64 {
			c.node("Identity", []string{s}, []string{y})
		} else {
			c.node("Cast", []string{s}, []string{y}, canonical.IntAttr("to", int64(canonical.Int32)))
		}
		return nil
	})
}

// symmetricPad is MIRROR_PAD in SYMMETRIC mode (the edge repeated), which
// ONNX Pad lacks: on each padded axis the first b and last e elements
// reversed (Slice with step -1) are concatenated before and after.
func (c *converter) symmetricPad(o *operator, p []int64) error {
	xt := c.tensor(o.inputs[0])
	r := len(xt.shape)
	for i := 0; i < r; i++ {
		if (p[2*i] > 0 || p[2*i+1] > 0) && (xt.shape[i] < 0 || p[2*i] > xt.shape[i] || p[2*i+1] > xt.shape[i] || p[2*i] < 0 || p[2*i+1] < 0) {
			return fmt.Errorf("symmetric padding %d, %d of axis %d (size %d) needs a known size at least as large", p[2*i], p[2*i+1], i, xt.shape[i])
		}
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		cur := x
		for i := 0; i < r; i++ {
			b, e := p[2*i], p[2*i+1]
			if b == 0 && e == 0 {
				continue
			}
			n := c.unique(y + "_sym")
			parts := []string{}
			ax := c.constI64(n+"_axis", []int64{int64(i)})
			step := c.constI64(n+"_step", []int64{-1})
			if b > 0 {
				l := c.unique(n + "_before")
				c.node("Slice", []string{cur, c.constI64(n+"_b_start", []int64{b - 1}), c.constI64(n+"_b_end", []int64{-1 << 62}), ax, step}, []string{l})
				parts = append(parts, l)
			}
			parts = append(parts, cur)
			if e > 0 {
				a := c.unique(n + "_after")
				c.node("Slice", []string{cur, c.constI64(n+"_a_start", []int64{-1}), c.constI64(n+"_a_end", []int64{-1 - e}), ax, step}, []string{a})
				parts = append(parts, a)
			}
			out := y
			if i < r-1 && hasPadAfter(p, i+1) {
				out = c.unique(n + "_padded")
			}
			c.node("Concat", parts, []string{out}, canonical.IntAttr("axis", int64(i)))
			cur = out
		}
		if cur == x {
			c.node("Identity", []string{x}, []string{y})
		}
		return nil
	})
}

// hasPadAfter reports whether an axis from i on is padded.
func hasPadAfter(p []int64, i int) bool {
	for j := 2 * i; j < len(p); j++ {
		if p[j] != 0 {
			return true
		}
	}
	return false
}
