package tflite

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// The SVDF variants TFLite's kernel (lite/kernels/svdf.cc) chooses between.
const (
	svdfFloat   = iota
	svdfHybrid  // float input, state and output; int8 weights_feature
	svdfInteger // int8 input and output, int8 weights_feature, int16 weights_time and state, int32 bias
)

// svdfKind classifies an SVDF op by its tensor types, as TFLite's Prepare
// does, and refuses the combinations TFLite does not run.
func (c *converter) svdfKind(o *operator, opt *fb.SVDFOptions) (int, error) {
	xt, wft, wtt, st, yt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), c.tensor(o.inputs[2]), c.tensor(o.inputs[4]), c.tensor(o.outputs[0])
	var bt *tensor
	if b := c.in(o, 3); b >= 0 {
		bt = c.tensor(b)
	}
	perTensor := func(ts ...*tensor) error {
		for _, t := range ts {
			if !isQuant(t) || len(t.q.scale) != 1 {
				return fmt.Errorf("tensor %q (%s) must be quantized per tensor", t.name, t.typ)
			}
		}
		return nil
	}
	plainFloat := func(ts ...*tensor) error {
		for _, t := range ts {
			if t != nil && (t.typ != fb.TensorTypeFLOAT32 || isQuant(t)) {
				return fmt.Errorf("tensor %q is %s, want float32", t.name, t.typ)
			}
		}
		return nil
	}
	switch {
	case xt.typ == fb.TensorTypeFLOAT32 && wft.typ == fb.TensorTypeFLOAT32:
		if err := plainFloat(xt, wft, wtt, st, yt, bt); err != nil {
			return 0, fmt.Errorf("float SVDF: %w", err)
		}
		return svdfFloat, nil
	case xt.typ == fb.TensorTypeFLOAT32 && wft.typ == fb.TensorTypeINT8:
		if opt.AsymmetricQuantizeInputs() {
			return 0, fmt.Errorf("hybrid SVDF with asymmetric_quantize_inputs is not supported (only symmetric per-batch input quantization)")
		}
		if err := plainFloat(xt, st, yt, bt); err != nil {
			return 0, fmt.Errorf("hybrid SVDF: %w", err)
		}
		if err := perTensor(wft); err != nil {
			return 0, fmt.Errorf("hybrid SVDF: %w", err)
		}
		if wft.q.zp[0] != 0 || wft.data == nil {
			return 0, fmt.Errorf("hybrid SVDF: weights_feature %q must be a constant with zero point 0", wft.name)
		}
		switch {
		case wtt.typ == fb.TensorTypeFLOAT32 && !isQuant(wtt):
		case wtt.typ == fb.TensorTypeINT8 && wtt.data != nil && perTensor(wtt) == nil && wtt.q.zp[0] == 0:
		default:
			return 0, fmt.Errorf("hybrid SVDF: weights_time %q is %s; want float32 or a per-tensor int8 constant with zero point 0", wtt.name, wtt.typ)
		}
		return svdfHybrid, nil
	case xt.typ == fb.TensorTypeINT8:
		if wft.typ != fb.TensorTypeINT8 || wtt.typ != fb.TensorTypeINT16 || st.typ != fb.TensorTypeINT16 || yt.typ != fb.TensorTypeINT8 ||
			bt != nil && bt.typ != fb.TensorTypeINT32 {
			return 0, fmt.Errorf("integer SVDF: input %s, weights_feature %s, weights_time %s, state %s, output %s: want int8, int8, int16, int16, int8 (and an int32 bias)",
				xt.typ, wft.typ, wtt.typ, st.typ, yt.typ)
		}
		if err := perTensor(xt, wft, wtt, st, yt); err != nil {
			return 0, fmt.Errorf("integer SVDF: %w", err)
		}
		if wft.data == nil || wtt.data == nil || bt != nil && bt.data == nil {
			return 0, fmt.Errorf("integer SVDF: weights and bias must be constants")
		}
		if st.q.zp[0] != 0 {
			return 0, fmt.Errorf("integer SVDF: state %q has zero point %d, want 0", st.name, st.q.zp[0])
		}
		return svdfInteger, nil
	}
	return 0, fmt.Errorf("SVDF with input %s and weights_feature %s is not an SVDF TFLite runs (float, hybrid or integer)", xt.typ, wft.typ)
}

// dequantConst is an int8 per-tensor constant as float32 constants computed
// as TFLite computes them (w * scale in float).
func (c *converter) dequantConst(t *tensor) (string, error) {
	if t.typ != fb.TensorTypeINT8 || t.data == nil || len(t.q.scale) != 1 {
		return "", fmt.Errorf("tensor %q: want a per-tensor int8 constant", t.name)
	}
	v := make([]float32, len(t.data))
	for i, b := range t.data {
		v[i] = float32(int8(b)) * t.q.scale[0]
	}
	return c.constF32(c.base[t.index]+"_dequantized", t.shape, v), nil
}

// transposedInt8 is the int8 constant [rows, cols] as an int8 initializer
// [cols, rows].
func (c *converter) transposedInt8(t *tensor, suffix string) string {
	rows, cols := t.shape[0], t.shape[1]
	b := make([]byte, len(t.data))
	for r := int64(0); r < rows; r++ {
		for k := int64(0); k < cols; k++ {
			b[k*rows+r] = t.data[r*cols+k]
		}
	}
	return c.addInit(c.base[t.index]+suffix, canonical.Int8, []int64{cols, rows}, b)
}

// hybridFeature is the newest state column of a hybrid SVDF: TFLite
// quantizes each batch row of the float input symmetrically at run time
// (range = max |x|, q = round(x * (127 / range)) half away from zero,
// clamped to ±127; a zero row stays zero), multiplies with the int8
// weights in integers, and scales the int32 sums by (range / 127) *
// weights_scale in float. Built the same way: the integer products by
// MatMulInteger, so the sums are exact.
func (c *converter) hybridFeature(x string, wft *tensor, y0 string) (string, error) {
	n := c.unique(y0 + "_hybrid")
	abs := n + "_abs"
	c.node("Abs", []string{x}, []string{abs})
	rng := n + "_range"
	c.node("ReduceMax", []string{abs, c.constI64(rng+"_axes", []int64{1})}, []string{rng}, canonical.IntAttr("keepdims", 1))
	zero := n + "_range_is_zero"
	c.node("Equal", []string{rng, c.scalarF32(n+"_zero", 0)}, []string{zero})
	safe := n + "_range_safe"
	c.node("Where", []string{zero, c.scalarF32(n+"_one", 1), rng}, []string{safe})
	inv := n + "_inv_scale"
	c.node("Div", []string{c.scalarF32(n+"_127", 127), safe}, []string{inv})
	v := n + "_scaled"
	c.node("Mul", []string{x, inv}, []string{v})
	r := c.roundHalfAway(v, n)
	cl := n + "_clamped"
	c.node("Clip", []string{r, c.scalarF32(n+"_min", -127), c.scalarF32(n+"_max", 127)}, []string{cl})
	q := n + "_q"
	c.node("Cast", []string{cl}, []string{q}, canonical.IntAttr("to", int64(canonical.Int8)))
	dot := n + "_dot"
	c.node("MatMulInteger", []string{q, c.transposedInt8(wft, "_t")}, []string{dot})
	dotf := n + "_dot_f"
	c.node("Cast", []string{dot}, []string{dotf}, canonical.IntAttr("to", int64(canonical.Float)))
	sf := n + "_input_scale"
	c.node("Div", []string{safe, c.scalarF32(n+"_127b", 127)}, []string{sf})
	sfw := n + "_batch_scale"
	c.node("Mul", []string{sf, c.scalarF32(n+"_weights_scale", wft.q.scale[0])}, []string{sfw})
	feat := c.unique(y0 + "_feature")
	c.node("Mul", []string{dotf, sfw}, []string{feat})
	return feat, nil
}

// quantizeMultiplier is TFLite's QuantizeMultiplier: real = q * 2^(shift-31)
// with q in [2^30, 2^31).
func quantizeMultiplier(real float64) (q int64, shift int) {
	if real == 0 {
		return 0, 0
	}
	fr, shift := math.Frexp(real)
	q = int64(math.Round(fr * (1 << 31)))
	if q == 1<<31 {
		q /= 2
		shift++
	}
	if shift < -31 {
		return 0, 0
	}
	return q, shift
}

// mulQuantized adds TFLite's MultiplyByQuantizedMultiplier (int32 version,
// double rounding: SaturatingRoundingDoublingHighMul then
// RoundingDivideByPOT) on the int64 value x, for the real multiplier real.
// ONNX's integer Div is used on non-negative values only, and floor
// division by 2^e as (v - Mod(v, 2^e)) / 2^e, so that no rounding
// convention of Div matters.
func (c *converter) mulQuantized(x, n string, real float64) (string, error) {
	m, shift := quantizeMultiplier(real)
	if m == 0 {
		return "", fmt.Errorf("requantization scale %g is out of range", real)
	}
	if shift > 30 || shift < -31 {
		return "", fmt.Errorf("requantization scale %g (shift %d) is out of range", real, shift)
	}
	i64 := func(name string, v int64) string { return c.constI64Dims(c.unique(n+"_"+name), nil, []int64{v}) }
	left, right := max(shift, 0), max(-shift, 0)
	if left > 0 {
		l := c.unique(n + "_left")
		c.node("Mul", []string{x, i64("two_pow_left", 1<<left)}, []string{l})
		x = l
	}
	// SaturatingRoundingDoublingHighMul(x, m): ab = x*m; (ab + nudge) / 2^31
	// truncated, nudge 2^30 (ab >= 0) or 1 - 2^30: sign(ab) * ((|ab| + 2^30 -
	// [ab < 0]) / 2^31).
	ab := c.unique(n + "_ab")
	c.node("Mul", []string{x, i64("multiplier", m)}, []string{ab})
	negB := c.unique(n + "_ab_negative")
	c.node("Less", []string{ab, i64("zero", 0)}, []string{negB})
	neg := c.unique(n + "_ab_negative_i64")
	c.node("Cast", []string{negB}, []string{neg}, canonical.IntAttr("to", int64(canonical.Int64)))
	abs := c.unique(n + "_ab_abs")
	c.node("Abs", []string{ab}, []string{abs})
	nudged := c.unique(n + "_ab_nudged")
	c.node("Add", []string{abs, i64("nudge", 1<<30)}, []string{nudged})
	nudged2 := c.unique(n + "_ab_nudged_sign")
	c.node("Sub", []string{nudged, neg}, []string{nudged2})
	hi := c.unique(n + "_high_abs")
	c.node("Div", []string{nudged2, i64("two_pow_31", 1<<31)}, []string{hi})
	sgn := c.unique(n + "_ab_sign")
	c.node("Sub", []string{i64("one", 1), c.mul2(neg, n)}, []string{sgn})
	high := c.unique(n + "_high")
	c.node("Mul", []string{hi, sgn}, []string{high})
	if right == 0 {
		return high, nil
	}
	// RoundingDivideByPOT(v, e): (v >> e) + (v & mask > (mask >> 1) + [v < 0]).
	d := i64("two_pow_right", 1<<right)
	rem := c.unique(n + "_remainder")
	c.node("Mod", []string{high, d}, []string{rem}, canonical.IntAttr("fmod", 0))
	ex := c.unique(n + "_exact_multiple")
	c.node("Sub", []string{high, rem}, []string{ex})
	fl := c.unique(n + "_floor")
	c.node("Div", []string{ex, d}, []string{fl})
	vnegB := c.unique(n + "_negative")
	c.node("Less", []string{high, i64("zero_b", 0)}, []string{vnegB})
	vneg := c.unique(n + "_negative_i64")
	c.node("Cast", []string{vnegB}, []string{vneg}, canonical.IntAttr("to", int64(canonical.Int64)))
	thr := c.unique(n + "_threshold")
	c.node("Add", []string{vneg, i64("half_mask", ((int64(1)<<right)-1)>>1)}, []string{thr})
	upB := c.unique(n + "_round_up")
	c.node("Greater", []string{rem, thr}, []string{upB})
	up := c.unique(n + "_round_up_i64")
	c.node("Cast", []string{upB}, []string{up}, canonical.IntAttr("to", int64(canonical.Int64)))
	out := c.unique(n + "_requantized")
	c.node("Add", []string{fl, up}, []string{out})
	return out, nil
}

// mul2 is 2*v (int64).
func (c *converter) mul2(v, n string) string {
	out := c.unique(n + "_twice")
	c.node("Add", []string{v, v}, []string{out})
	return out
}

// svdfInteger is TFLite's EvalIntegerSVDF, in int64 ONNX ops, exactly:
//
//	feature = MultiplyByQuantizedMultiplier(sum (x - x_zp) * wf, s1), clamped to int16,
//	  s1 = x_scale * wf_scale / state_scale (in float, as TFLite computes it);
//	the int16 state moves one step left and takes feature as its newest column;
//	per filter sum over memory state * wt, summed over rank groups, + bias;
//	output = MultiplyByQuantizedMultiplier(that, s2) + y_zp clamped to int8,
//	  s2 = state_scale * wt_scale / y_scale.
//
// TFLite applies no fused activation in its integer SVDF (only the int8
// clamp), and neither does this. The integer sums are int32 in TFLite and
// int64 here: they agree while TFLite's do not overflow.
func (c *converter) svdfInteger(o *operator, filters, memory, rank int64) error {
	xt, wft, wtt, st, yt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), c.tensor(o.inputs[2]), c.tensor(o.inputs[4]), c.tensor(o.outputs[0])
	units := filters / rank
	x, err := c.rawValue(int(o.inputs[0]), native)
	if err != nil {
		return err
	}
	state, err := c.rawValue(int(o.inputs[4]), native)
	if err != nil {
		return err
	}
	y0 := c.base[o.outputs[0]]
	n := c.unique(y0 + "_int")
	zp := c.addInit(n+"_x_zero_point", canonical.Int8, nil, []byte{byte(int8(xt.q.zp[0]))})
	dot := n + "_dot"
	c.node("MatMulInteger", []string{x, c.transposedInt8(wft, "_t"), zp}, []string{dot})
	dot64 := n + "_dot_i64"
	c.node("Cast", []string{dot}, []string{dot64}, canonical.IntAttr("to", int64(canonical.Int64)))
	s1 := float64(xt.q.scale[0] * wft.q.scale[0] / st.q.scale[0])
	feat, err := c.mulQuantized(dot64, n+"_feature", s1)
	if err != nil {
		return fmt.Errorf("integer SVDF feature scale: %w", err)
	}
	featC := n + "_feature_int16"
	c.node("Clip", []string{feat, c.constI64Dims(n+"_i16_min", nil, []int64{-32768}), c.constI64Dims(n+"_i16_max", nil, []int64{32767})}, []string{featC})
	feat3 := n + "_feature_3d"
	c.node("Unsqueeze", []string{featC, c.constI64(feat3+"_axes", []int64{2})}, []string{feat3})

	s64 := n + "_state_i64"
	c.node("Cast", []string{state}, []string{s64}, canonical.IntAttr("to", int64(canonical.Int64)))
	s3 := n + "_state_3d"
	c.node("Reshape", []string{s64, c.constI64(s3+"_shape", []int64{-1, filters, memory})}, []string{s3})
	old := n + "_state_older"
	c.node("Slice", []string{s3, c.constI64(old+"_starts", []int64{1}), c.constI64(old+"_ends", []int64{memory}), c.constI64(old+"_axes", []int64{2})}, []string{old})
	next := n + "_state_next_3d"
	c.node("Concat", []string{old, feat3}, []string{next}, canonical.IntAttr("axis", 2))

	wt := make([]int64, filters*memory)
	for i := range wt {
		wt[i] = int64(int16(binary.LittleEndian.Uint16(wtt.data[2*i:])))
	}
	weighted := n + "_time_weighted"
	c.node("Mul", []string{next, c.constI64Dims(n+"_weights_time", []int64{filters, memory}, wt)}, []string{weighted})
	perFilter := n + "_per_filter"
	c.node("ReduceSum", []string{weighted, c.constI64(perFilter+"_axes", []int64{2})}, []string{perFilter}, canonical.IntAttr("keepdims", 0))
	grouped := n + "_grouped"
	c.node("Reshape", []string{perFilter, c.constI64(grouped+"_shape", []int64{-1, units, rank})}, []string{grouped})
	acc := n + "_units"
	c.node("ReduceSum", []string{grouped, c.constI64(acc+"_axes", []int64{2})}, []string{acc}, canonical.IntAttr("keepdims", 0))
	if b := c.in(o, 3); b >= 0 {
		bt := c.tensor(b)
		if numel(bt.shape) != units || len(bt.data) != 4*int(units) {
			return fmt.Errorf("bias %q %v, want [%d]", bt.name, bt.shape, units)
		}
		bias := make([]int64, units)
		for i := range bias {
			bias[i] = int64(int32(binary.LittleEndian.Uint32(bt.data[4*i:])))
		}
		withBias := n + "_units_bias"
		c.node("Add", []string{acc, c.constI64Dims(n+"_bias", []int64{units}, bias)}, []string{withBias})
		acc = withBias
	}
	s2 := float64(st.q.scale[0] * wtt.q.scale[0] / yt.q.scale[0])
	scaled, err := c.mulQuantized(acc, n+"_output", s2)
	if err != nil {
		return fmt.Errorf("integer SVDF output scale: %w", err)
	}
	shifted := n + "_output_zp"
	c.node("Add", []string{scaled, c.constI64Dims(n+"_y_zero_point", nil, []int64{yt.q.zp[0]})}, []string{shifted})
	clamped := n + "_output_clamped"
	c.node("Clip", []string{shifted, c.constI64Dims(n+"_i8_min", nil, []int64{-128}), c.constI64Dims(n+"_i8_max", nil, []int64{127})}, []string{clamped})
	y := c.layoutName(int(o.outputs[0]), native)
	c.node("Cast", []string{clamped}, []string{y}, canonical.IntAttr("to", int64(canonical.Int8)))

	// The new state: the tensor's value from here on.
	nextState := c.unique(c.base[o.inputs[4]] + "_next")
	flat := n + "_state_next_i64"
	c.node("Reshape", []string{next, c.constI64(flat+"_shape", []int64{-1, filters * memory})}, []string{flat})
	c.node("Cast", []string{flat}, []string{nextState}, canonical.IntAttr("to", int64(canonical.Int16)))
	c.raw[layoutKey{int(o.inputs[4]), native}] = nextState
	delete(c.raw, layoutKey{int(o.inputs[4]), nchw})
	delete(c.flt, layoutKey{int(o.inputs[4]), native})
	return c.finishAs(o.outputs[0], native, y, true)
}

// roundHalfAway rounds float value v half away from zero (C's round,
// TfLiteRound), exactly: floor(|v|) + (frac >= 0.5), signed.
func (c *converter) roundHalfAway(v, n string) string {
	av := c.unique(n + "_abs")
	c.node("Abs", []string{v}, []string{av})
	fl := c.unique(n + "_floor")
	c.node("Floor", []string{av}, []string{fl})
	frac := c.unique(n + "_frac")
	c.node("Sub", []string{av, fl}, []string{frac})
	up := c.unique(n + "_round_up")
	c.node("GreaterOrEqual", []string{frac, c.scalarF32(c.unique(n+"_half"), 0.5)}, []string{up})
	upf := c.unique(n + "_round_up_f")
	c.node("Cast", []string{up}, []string{upf}, canonical.IntAttr("to", int64(canonical.Float)))
	mag := c.unique(n + "_rounded_abs")
	c.node("Add", []string{fl, upf}, []string{mag})
	sgn := c.unique(n + "_sign")
	c.node("Sign", []string{v}, []string{sgn})
	r := c.unique(n + "_rounded")
	c.node("Mul", []string{mag, sgn}, []string{r})
	return r
}
