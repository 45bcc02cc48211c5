package tflite

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// ATAN2, RIGHT_SHIFT, BITWISE_XOR, BUCKETIZE, FAKE_QUANT and the
// elementwise StableHLO builtins (ADD, MULTIPLY, MAXIMUM, MINIMUM, AND,
// SHIFT_LEFT): the TFLite layout kept (native).

// nativeOp reads the first n inputs of o in the TFLite layout (constants
// as initializers) and writes output 0 with build.
func (c *converter) nativeOp(o *operator, n int, build func(ins []string, y string) error) error {
	if err := needInputs(o, n); err != nil {
		return err
	}
	ins := make([]string, n)
	for i := range ins {
		v, err := c.floatValue(o.inputs[i], native)
		if err != nil {
			return err
		}
		ins[i] = v
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error { return build(ins, y) })
}

// elemType is the ONNX element type of tensor idx.
func (c *converter) elemType(idx int32) (canonical.DataType, error) {
	return onnxType(c.tensor(idx).typ)
}

// atan2 is ATAN2 (std::atan2), as atan2To computes it.
func (c *converter) atan2(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	dt, err := c.elemType(o.inputs[0])
	if err != nil {
		return err
	}
	return c.nativeOp(o, 2, func(in []string, out string) error {
		c.atan2To(in[0], in[1], dt, out)
		return nil
	})
}

// atan2To writes atan2(y, x) of values of type dt into out (a name the
// caller holds) as fdlibm's atan2f computes it, which glibc's (and musl's,
// so LiteRT.js's) is: z = Atan(|y / x|), then z or -z where x's sign bit
// is clear, pi - (z - pi_lo) or (z - pi_lo) - pi where it is set (pi_lo
// the part of pi its float value misses), the sign y's sign bit (-0
// included, detected as 1/v < 0); ±pi/2 where x = ±0, y or ±pi where
// both are. On float32 values with glibc's atanf as Atan (ONNX Runtime's
// on one value) this is glibc's atan2f bit for bit but for infinite
// arguments; the double case uses fdlibm's double constants.
func (c *converter) atan2To(y, x string, dt canonical.DataType, out string) {
	k := func(base string, v float64) string { return c.b.Number(out+base, dt, nil, v) }
	pi, piLo := float64(float32(math.Pi)), float64(float32(-8.7422776573e-08))
	if dt == canonical.Double {
		pi, piLo = math.Pi, 1.2246467991473531772e-16
	}
	zero := k("_zero", 0)
	op := func(name, base string, in ...string) string { return c.b.Op(name, out+base, in) }
	signbit := func(v, tag string) string {
		return op("Or", tag+"_sign", op("Less", tag+"_neg", v, zero), op("Less", tag+"_negzero", op("Div", tag+"_inverse", k("_one", 1), v), zero))
	}
	sx, sy := signbit(x, "_x"), signbit(y, "_y")
	z := op("Atan", "_atan", op("Abs", "_abs", op("Div", "_ratio", y, x)))
	zl := op("Sub", "_zlo", z, k("_pi_lo", piLo))
	piK := k("_pi", pi)
	left := op("Where", "_left", sy, op("Sub", "_lower_left", zl, piK), op("Sub", "_upper_left", piK, zl))
	right := op("Where", "_right", sy, op("Neg", "_neg_atan", z), z)
	r := op("Where", "_quadrant", sx, left, right)
	xz, yz := op("Equal", "_x_zero", x, zero), op("Equal", "_y_zero", y, zero)
	halfPi := op("Where", "_half_pi", sy, k("_minus_half_pi", -float64(float32(math.Pi/2))), k("_plus_half_pi", float64(float32(math.Pi/2))))
	if dt == canonical.Double {
		halfPi = op("Where", "_half_pi", sy, k("_minus_half_pi", -math.Pi/2), k("_plus_half_pi", math.Pi/2))
	}
	r = op("Where", "_axis", xz, halfPi, r)
	both := op("Where", "_zeros", sx, op("Where", "_pi_signed", sy, k("_minus_pi", -pi), piK), y)
	c.node("Where", []string{op("And", "_both_zero", xz, yz), both, r}, []string{out})
}

// unsignedOf is the unsigned type of an integer type's width.
func unsignedOf(dt canonical.DataType) (canonical.DataType, bool) {
	switch dt {
	case canonical.Int8, canonical.Uint8:
		return canonical.Uint8, true
	case canonical.Int16, canonical.Uint16:
		return canonical.Uint16, true
	case canonical.Int32, canonical.Uint32:
		return canonical.Uint32, true
	case canonical.Int64, canonical.Uint64:
		return canonical.Uint64, true
	}
	return 0, false
}

// bitsOf is the width in bits of an integer type.
func bitsOf(dt canonical.DataType) int {
	switch dt {
	case canonical.Int8, canonical.Uint8:
		return 8
	case canonical.Int16, canonical.Uint16:
		return 16
	case canonical.Int64, canonical.Uint64:
		return 64
	}
	return 32
}

// shift is RIGHT_SHIFT (arithmetic for signed types: floor(x / 2^s)) and
// STABLEHLO_SHIFT_LEFT (x << s, wrapping): BitShift on the unsigned type of
// the same width, the shift clamped to the width - 1.
func (c *converter) shift(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	dt, err := c.elemType(o.inputs[0])
	if err != nil {
		return err
	}
	ut, ok := unsignedOf(dt)
	if !ok {
		return fmt.Errorf("%s on %s is not supported (integers only)", opName(o), dt)
	}
	left := o.code == fb.BuiltinOperatorSTABLEHLO_SHIFT_LEFT
	return c.nativeOp(o, 2, func(in []string, out string) error {
		bits := float64(bitsOf(dt))
		s := c.b.Op("Clip", out+"_shift", []string{in[1], c.b.Number(out+"_shift_min", dt, nil, 0), c.b.Number(out+"_shift_max", dt, nil, bits-1)})
		su := c.b.Op("Cast", out+"_shift_u", []string{s}, canonical.IntAttr("to", int64(ut)))
		if left || dt == ut {
			dir := "RIGHT"
			if left {
				dir = "LEFT"
			}
			xu := in[0]
			if dt != ut {
				xu = c.b.Op("Cast", out+"_x_u", []string{in[0]}, canonical.IntAttr("to", int64(ut)))
			}
			r := c.b.Op("BitShift", out+"_shifted", []string{xu, su}, canonical.StringAttr("direction", dir))
			c.node("Cast", []string{r}, []string{out}, canonical.IntAttr("to", int64(dt)))
			return nil
		}
		// Signed right shift: floor(x / 2^s) in double (exact for every
		// integer of 32 bits or fewer).
		if bits > 32 {
			return fmt.Errorf("RIGHT_SHIFT on %s is not supported", dt)
		}
		xd := c.b.Op("Cast", out+"_x_d", []string{in[0]}, canonical.IntAttr("to", int64(canonical.Double)))
		sd := c.b.Op("Cast", out+"_shift_d", []string{s}, canonical.IntAttr("to", int64(canonical.Double)))
		p := c.b.Op("Pow", out+"_pow", []string{c.b.Number(out+"_two", canonical.Double, nil, 2), sd})
		f := c.b.Op("Floor", out+"_floor", []string{c.b.Op("Div", out+"_quot", []string{xd, p})})
		c.node("Cast", []string{f}, []string{out}, canonical.IntAttr("to", int64(dt)))
		return nil
	})
}

// bitwise is a binary op on booleans (logical) or integers (bitwise).
func (c *converter) bitwise(o *operator, logical, bitwise string) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	if c.tensor(o.inputs[0]).typ == fb.TensorTypeBOOL {
		return c.binary(o, logical)
	}
	if c.opts.Opset < 18 {
		return fmt.Errorf("%s needs opset 18", bitwise)
	}
	return c.binary(o, bitwise)
}

// bucketize is BUCKETIZE: the number of boundaries <= x (upper bound).
func (c *converter) bucketize(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.BucketizeOptions](o, fb.BuiltinOptionsBucketizeOptions)
	if err != nil {
		return err
	}
	dt, err := c.elemType(o.inputs[0])
	if err != nil {
		return err
	}
	bounds := make([]float64, opt.BoundariesLength())
	for i := range bounds {
		bounds[i] = float64(opt.Boundaries(i))
	}
	if err := needInputs(o, 1); err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	y := c.unique(c.base[o.outputs[0]] + "_i64")
	if len(bounds) == 0 {
		s := c.b.Op("Shape", y+"_shape", []string{x})
		c.node("ConstantOfShape", []string{s}, []string{y}, constantValueAttr(canonical.Int64, 0))
		return c.castOut(o.outputs[0], y)
	}
	xu := c.b.Op("Unsqueeze", y+"_x", []string{x, c.constI64(y+"_axis", []int64{-1})})
	ge := c.b.Op("GreaterOrEqual", y+"_ge", []string{xu, c.b.Number(y+"_bounds", dt, []int64{int64(len(bounds))}, bounds...)})
	gi := c.b.Op("Cast", y+"_ge_i64", []string{ge}, canonical.IntAttr("to", int64(canonical.Int64)))
	c.node("ReduceSum", []string{gi, c.constI64(y+"_axes", []int64{-1})}, []string{y}, canonical.IntAttr("keepdims", 0))
	return c.castOut(o.outputs[0], y)
}

// fakeQuant is FAKE_QUANT as TFLite computes it: the range nudged so that
// zero is a step, the input clamped to it, rounded half away from zero to
// a step, in float32 as the kernel does.
func (c *converter) fakeQuant(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	opt, err := options[fb.FakeQuantOptions](o, fb.BuiltinOptionsFakeQuantOptions)
	if err != nil {
		return err
	}
	if c.tensor(o.inputs[0]).typ != fb.TensorTypeFLOAT32 {
		return fmt.Errorf("FAKE_QUANT on %s is not supported (float32 only)", c.tensor(o.inputs[0]).typ)
	}
	bits := opt.NumBits()
	if bits < 2 || bits > 16 {
		return fmt.Errorf("FAKE_QUANT num_bits %d is out of range (2 to 16)", bits)
	}
	lo, hi := opt.Min(), opt.Max()
	if !(hi > lo) {
		return fmt.Errorf("FAKE_QUANT range [%v, %v] is empty", lo, hi)
	}
	if opt.NarrowRange() {
		// TFLite's kernel refuses it (both interpreters leave the output
		// unwritten).
		return fmt.Errorf("FAKE_QUANT with narrow_range is not supported (TFLite does not compute it)")
	}
	qmin := float32(0)
	qmax := float32(int32(1)<<bits - 1)
	scale := (hi - lo) / (qmax - qmin)
	zpFromMin := qmin - lo/scale
	var zp float32
	switch {
	case zpFromMin < qmin:
		zp = qmin
	case zpFromMin > qmax:
		zp = qmax
	default:
		zp = float32(math.Round(float64(zpFromMin)))
	}
	nmin, nmax := (qmin-zp)*scale, (qmax-zp)*scale
	inv := 1 / scale
	return c.nativeOp(o, 1, func(in []string, out string) error {
		cl := c.b.Op("Clip", out+"_clamped", []string{in[0], c.scalarF32(c.unique(out+"_min"), nmin), c.scalarF32(c.unique(out+"_max"), nmax)})
		sh := c.b.Op("Sub", out+"_shifted", []string{cl, c.scalarF32(c.unique(out+"_nudged_min"), nmin)})
		st := c.b.Op("Mul", out+"_steps", []string{sh, c.scalarF32(c.unique(out+"_inv_scale"), inv)})
		r := c.roundHalfAway(st, out+"_steps")
		m := c.b.Op("Mul", out+"_scaled", []string{r, c.scalarF32(c.unique(out+"_scale"), scale)})
		c.node("Add", []string{m, c.scalarF32(c.unique(out+"_offset"), nmin)}, []string{out})
		return nil
	})
}
