package tflite

import (
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Exact int8/int16 elementwise arithmetic. TFLite's reference kernels for
// quantized ADD and SUB work in integers (kernels/internal/reference/add.h,
// PrepareGeneralSubOp): each input has its zero point removed, is shifted
// left by 20 bits (15 for int16) and scaled by a fixed-point multiplier
// smaller than one (in / (2 * max input scale)); the sum is scaled by the
// output multiplier, the output zero point added and the result clamped to
// the fused activation's range. A float graph with QuantizeLinear rounds
// differently on a few per cent of the values (one step); this builds the
// integer computation, in int64:
//
//   - SaturatingRoundingDoublingHighMul(a, m) = trunc((a*m + nudge) / 2^31),
//     nudge 2^30 for a*m >= 0, 1 - 2^30 otherwise (truncation as
//     (v - Mod(v, d, fmod=1)) / d);
//   - RoundingDivideByPOT(x, e) = floor(x / 2^e) + (r > (2^e-1)/2 + [x<0]),
//     r = x mod 2^e (Mod with fmod=0 is floored).

// fixedMultiplier is TFLite's QuantizeMultiplier: real = m * 2^(shift-31),
// m in [2^30, 2^31).
func fixedMultiplier(real float64) (m int64, shift int) {
	if real == 0 {
		return 0, 0
	}
	fr, sh := math.Frexp(real)
	q := int64(math.Round(fr * (1 << 31)))
	if q == 1<<31 {
		q /= 2
		sh++
	}
	if sh < -31 {
		return 0, 0
	}
	return q, sh
}

// i64 returns a scalar int64 initializer.
func (c *converter) i64(name string, v int64) string {
	return c.constI64Dims(c.unique(name), nil, []int64{v})
}

// srdhm is SaturatingRoundingDoublingHighMul(x, m) on int64 values of int32
// range (the saturating case, both INT32_MIN, cannot occur: m > 0).
func (c *converter) srdhm(x string, m int64, n string) string {
	ab := c.unique(n + "_ab")
	c.node("Mul", []string{x, c.i64(n+"_m", m)}, []string{ab})
	neg := c.unique(n + "_neg")
	c.node("Less", []string{ab, c.i64(n+"_zero", 0)}, []string{neg})
	nudge := c.unique(n + "_nudge")
	c.node("Where", []string{neg, c.i64(n+"_nudge_neg", 1-(1<<30)), c.i64(n+"_nudge_pos", 1<<30)}, []string{nudge})
	s := c.unique(n + "_nudged")
	c.node("Add", []string{ab, nudge}, []string{s})
	d := c.i64(n+"_2p31", 1<<31)
	rem := c.unique(n + "_trem")
	c.node("Mod", []string{s, d}, []string{rem}, canonical.IntAttr("fmod", 1))
	ex := c.unique(n + "_texact")
	c.node("Sub", []string{s, rem}, []string{ex})
	q := c.unique(n + "_high")
	c.node("Div", []string{ex, d}, []string{q})
	return q
}

// rdbpot is RoundingDivideByPOT(x, e).
func (c *converter) rdbpot(x string, e int, n string) string {
	if e == 0 {
		return x
	}
	d := c.i64(n+"_pot", 1<<e)
	rem := c.unique(n + "_rem")
	c.node("Mod", []string{x, d}, []string{rem}, canonical.IntAttr("fmod", 0))
	ex := c.unique(n + "_exact")
	c.node("Sub", []string{x, rem}, []string{ex})
	fl := c.unique(n + "_floor")
	c.node("Div", []string{ex, d}, []string{fl})
	neg := c.unique(n + "_isneg")
	c.node("Less", []string{x, c.i64(n+"_zero", 0)}, []string{neg})
	negI := c.unique(n + "_isneg_i64")
	c.node("Cast", []string{neg}, []string{negI}, canonical.IntAttr("to", int64(canonical.Int64)))
	thr := c.unique(n + "_threshold")
	c.node("Add", []string{negI, c.i64(n+"_half_mask", ((1<<e)-1)>>1)}, []string{thr})
	up := c.unique(n + "_up")
	c.node("Greater", []string{rem, thr}, []string{up})
	upI := c.unique(n + "_up_i64")
	c.node("Cast", []string{up}, []string{upI}, canonical.IntAttr("to", int64(canonical.Int64)))
	r := c.unique(n + "_rounded")
	c.node("Add", []string{fl, upI}, []string{r})
	return r
}

// mulByQuantized is MultiplyByQuantizedMultiplier(x, m, shift).
func (c *converter) mulByQuantized(x string, m int64, shift int, n string) string {
	if shift > 0 {
		l := c.unique(n + "_lshift")
		c.node("Mul", []string{x, c.i64(n+"_lmul", 1<<shift)}, []string{l})
		x = l
	}
	return c.rdbpot(c.srdhm(x, m, n), max(-shift, 0), n)
}

// exactAddSub builds a quantized ADD or SUB (int8 or int16, one scale per
// tensor) as TFLite's reference kernel computes it; ok is false when the
// op is not such an op.
func (c *converter) exactAddSub(o *operator, act fb.ActivationFunctionType, lay layout) (bool, error) {
	if o.code != fb.BuiltinOperatorADD && o.code != fb.BuiltinOperatorSUB {
		return false, nil
	}
	at, bt, yt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), c.tensor(o.outputs[0])
	typ := yt.typ
	if typ != fb.TensorTypeINT8 && typ != fb.TensorTypeINT16 {
		return false, nil
	}
	for _, t := range []*tensor{at, bt, yt} {
		if t.typ != typ || !isQuant(t) || len(t.q.scale) != 1 {
			return false, nil
		}
		if typ == fb.TensorTypeINT16 && t.q.zp[0] != 0 {
			return false, nil
		}
	}
	lo, hi := int64(-128), int64(127)
	leftShift := 20
	if typ == fb.TensorTypeINT16 {
		lo, hi, leftShift = -32768, 32767, 15
	}
	switch act {
	case fb.ActivationFunctionTypeNONE:
	case fb.ActivationFunctionTypeRELU, fb.ActivationFunctionTypeRELU6, fb.ActivationFunctionTypeRELU_N1_TO_1:
		l, h := actRangeQ(act, yt.q.scale[0], yt.q.zp[0])
		lo, hi = max(lo, l), min(hi, h)
	default:
		return false, nil
	}
	if typ == fb.TensorTypeINT8 && c.opts.Int8Kernels == Int8XNNPACK {
		if ok, err := c.xnnpackAddSub(o, lay, lo, hi); ok || err != nil {
			return ok, err
		}
	}
	as, bs, ys := float64(at.q.scale[0]), float64(bt.q.scale[0]), float64(yt.q.scale[0])
	twice := 2 * max(as, bs)
	m1, s1 := fixedMultiplier(as / twice)
	m2, s2 := fixedMultiplier(bs / twice)
	mo, so := fixedMultiplier(twice / (float64(int64(1)<<leftShift) * ys))
	if m1 == 0 || m2 == 0 || mo == 0 || s1 > 0 || s2 > 0 || so > 0 {
		return false, nil
	}
	n := c.unique(c.base[o.outputs[0]] + "_exact")
	scaled := make([]string, 2)
	for k, in := range []struct {
		idx   int32
		zp    int64
		m     int64
		shift int
	}{{o.inputs[0], at.q.zp[0], m1, s1}, {o.inputs[1], bt.q.zp[0], m2, s2}} {
		x, err := c.rawValue(int(in.idx), lay)
		if err != nil {
			return false, err
		}
		xi := c.unique(n + "_in_i64")
		c.node("Cast", []string{x}, []string{xi}, canonical.IntAttr("to", int64(canonical.Int64)))
		sh := c.unique(n + "_in_shifted")
		// (x - zp) << leftShift
		off := c.unique(n + "_in_offset")
		c.node("Sub", []string{xi, c.i64(n+"_in_zp", in.zp)}, []string{off})
		c.node("Mul", []string{off, c.i64(n+"_in_lshift", 1<<leftShift)}, []string{sh})
		scaled[k] = c.mulByQuantized(sh, in.m, in.shift, n+"_in"+string(rune('0'+k)))
	}
	sum := c.unique(n + "_sum")
	op := "Add"
	if o.code == fb.BuiltinOperatorSUB {
		op = "Sub"
	}
	c.node(op, scaled, []string{sum})
	r := c.mulByQuantized(sum, mo, so, n+"_out")
	z := c.unique(n + "_zp")
	c.node("Add", []string{r, c.i64(n+"_out_zp", yt.q.zp[0])}, []string{z})
	return true, c.finishInt(o.outputs[0], lay, z, lo, hi, n)
}

// finishInt clamps the int64 value z to [lo, hi], casts it to the output
// tensor's type and stores it as the tensor's (quantized) value.
func (c *converter) finishInt(out int32, lay layout, z string, lo, hi int64, n string) error {
	cl := c.unique(n + "_clamped")
	c.node("Clip", []string{z, c.i64(n+"_lo", lo), c.i64(n+"_hi", hi)}, []string{cl})
	y := c.layoutName(int(out), lay)
	dt := canonical.Int8
	if c.tensor(out).typ == fb.TensorTypeINT16 {
		dt = canonical.Int16
	}
	c.node("Cast", []string{cl}, []string{y}, canonical.IntAttr("to", int64(dt)))
	return c.finishAs(out, lay, y, true)
}

// xnnpackAddSub builds an int8 ADD or SUB as XNNPACK's QS8 add/subtract
// computes it (xnn_init_qs8_add_minmax_scalar_params and the vadd
// kernels), which TFLite's default CPU delegate runs: with the float32
// ratios r = in_scale / out_scale (negated for SUB's second input), the
// largest one's binary exponent e, shift = 20 - e, each multiplier
// m = lrintf(r * 2^shift), the bias 2^(shift-1) - m_a*zp_a - m_b*zp_b:
// y = clamp(floor((bias + a*m_a + b*m_b) / 2^shift) + zp_y). ok is false
// where XNNPACK refuses the op (a ratio outside [2^-10, 2^8)); the
// reference kernel runs then.
func (c *converter) xnnpackAddSub(o *operator, lay layout, lo, hi int64) (bool, error) {
	at, bt, yt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), c.tensor(o.outputs[0])
	ra := at.q.scale[0] / yt.q.scale[0]
	rb := bt.q.scale[0] / yt.q.scale[0]
	for _, r := range []float32{ra, rb} {
		if r < 1.0/1024 || r >= 256 {
			return false, nil
		}
	}
	if o.code == fb.BuiltinOperatorSUB {
		rb = -rb
	}
	mx := max(float32(math.Abs(float64(ra))), float32(math.Abs(float64(rb))))
	exp := int32(math.Float32bits(mx)>>23) - 127
	shift := uint32(20 - exp)
	mult := func(r float32) int64 {
		abs := float32(math.Abs(float64(r)))
		m := int64(math.RoundToEven(float64(math.Float32frombits(math.Float32bits(abs) + shift<<23))))
		if r < 0 {
			m = -m
		}
		return m
	}
	ma, mb := mult(ra), mult(rb)
	bias := int64(1)<<(shift-1) - ma*at.q.zp[0] - mb*bt.q.zp[0]
	n := c.unique(c.base[o.outputs[0]] + "_xnnpack")
	terms := make([]string, 2)
	for k, in := range []struct {
		idx int32
		m   int64
	}{{o.inputs[0], ma}, {o.inputs[1], mb}} {
		x, err := c.rawValue(int(in.idx), lay)
		if err != nil {
			return false, err
		}
		xi := c.unique(n + "_in_i64")
		c.node("Cast", []string{x}, []string{xi}, canonical.IntAttr("to", int64(canonical.Int64)))
		terms[k] = c.unique(n + "_term")
		c.node("Mul", []string{xi, c.i64(n+"_multiplier", in.m)}, []string{terms[k]})
	}
	sum := c.unique(n + "_sum")
	c.node("Add", terms, []string{sum})
	acc := c.unique(n + "_acc")
	c.node("Add", []string{sum, c.i64(n+"_bias", bias)}, []string{acc})
	d := c.i64(n+"_pot", int64(1)<<shift)
	rem := c.unique(n + "_rem")
	c.node("Mod", []string{acc, d}, []string{rem}, canonical.IntAttr("fmod", 0))
	ex := c.unique(n + "_exact")
	c.node("Sub", []string{acc, rem}, []string{ex})
	fl := c.unique(n + "_shifted")
	c.node("Div", []string{ex, d}, []string{fl})
	z := c.unique(n + "_zp")
	c.node("Add", []string{fl, c.i64(n+"_out_zp", yt.q.zp[0])}, []string{z})
	return true, c.finishInt(o.outputs[0], lay, z, lo, hi, n)
}

// actRangeQ is CalculateActivationRangeQuantized for a fused activation:
// the quantized bounds of RELU, RELU6, RELU_N1_TO_1 (before the type's own
// range is applied).
func actRangeQ(act fb.ActivationFunctionType, scale float32, zp int64) (lo, hi int64) {
	q := func(f float32) int64 { return zp + int64(math.Round(float64(f/scale))) }
	lo, hi = math.MinInt64, math.MaxInt64
	switch act {
	case fb.ActivationFunctionTypeRELU:
		lo = q(0)
	case fb.ActivationFunctionTypeRELU6:
		lo, hi = q(0), q(6)
	case fb.ActivationFunctionTypeRELU_N1_TO_1:
		lo, hi = q(-1), q(1)
	}
	return lo, hi
}

// exactAvgPool builds a quantized AVERAGE_POOL_2D (int8 or int16, input
// and output quantized alike, static shape) as TFLite's integer kernel
// computes it (reference_integer_ops::AveragePool): the sum of the raw
// values in the window's valid part, divided by their count rounding half
// away from zero ((acc ± count/2) / count, truncated), clamped to the
// fused activation's range. The sum is AveragePool with the padding
// counted times the window size, exact in float32; the counts are
// constants.
func (c *converter) exactAvgPool(o *operator, opt *fb.Pool2DOptions, attrs []*canonical.Attribute) (bool, error) {
	xt, yt := c.tensor(o.inputs[0]), c.tensor(o.outputs[0])
	if (xt.typ != fb.TensorTypeINT8 && xt.typ != fb.TensorTypeINT16) || yt.typ != xt.typ || !isQuant(xt) || !isQuant(yt) ||
		len(xt.q.scale) != 1 || len(yt.q.scale) != 1 || xt.q.scale[0] != yt.q.scale[0] || xt.q.zp[0] != yt.q.zp[0] ||
		!staticShape(xt.shape) || !staticShape(yt.shape) || len(yt.shape) != 4 {
		return false, nil
	}
	act := opt.FusedActivationFunction()
	lo, hi := int64(-128), int64(127)
	if xt.typ == fb.TensorTypeINT16 {
		lo, hi = -32768, 32767
	}
	switch act {
	case fb.ActivationFunctionTypeNONE:
	case fb.ActivationFunctionTypeRELU, fb.ActivationFunctionTypeRELU6, fb.ActivationFunctionTypeRELU_N1_TO_1:
		l, h := actRangeQ(act, yt.q.scale[0], yt.q.zp[0])
		lo, hi = max(lo, l), min(hi, h)
	default:
		return false, nil
	}
	kH, kW := int64(opt.FilterHeight()), int64(opt.FilterWidth())
	sH, sW := int64(opt.StrideH()), int64(opt.StrideW())
	inH, inW := xt.shape[1], xt.shape[2]
	outH, outW := yt.shape[1], yt.shape[2]
	var padT, padL int64
	if opt.Padding() == fb.PaddingSAME {
		padT, _ = tflPaddingMust(inH, kH, sH)
		padL, _ = tflPaddingMust(inW, kW, sW)
	}
	counts := make([]int64, outH*outW)
	for oy := int64(0); oy < outH; oy++ {
		y0 := oy*sH - padT
		ys := max(0, -y0)
		ye := min(kH, inH-y0)
		for ox := int64(0); ox < outW; ox++ {
			x0 := ox*sW - padL
			xs := max(0, -x0)
			xe := min(kW, inW-x0)
			n := max(ye-ys, 0) * max(xe-xs, 0)
			if n == 0 {
				return false, nil
			}
			counts[oy*outW+ox] = n
		}
	}
	x, err := c.rawValue(int(o.inputs[0]), nchw)
	if err != nil {
		return false, err
	}
	n := c.unique(c.base[o.outputs[0]] + "_exact")
	xf := c.unique(n + "_x_f32")
	c.node("Cast", []string{x}, []string{xf}, canonical.IntAttr("to", int64(canonical.Float)))
	pa := append(slices.Clone(attrs), canonical.IntAttr("count_include_pad", 1))
	avg := c.unique(n + "_mean_padded")
	c.node("AveragePool", []string{xf}, []string{avg}, pa...)
	sumF := c.unique(n + "_sum_f32")
	c.node("Mul", []string{avg, c.constF32(n+"_window", nil, []float32{float32(kH * kW)})}, []string{sumF})
	sumR := c.unique(n + "_sum_rounded")
	c.node("Round", []string{sumF}, []string{sumR})
	acc := c.unique(n + "_acc")
	c.node("Cast", []string{sumR}, []string{acc}, canonical.IntAttr("to", int64(canonical.Int64)))
	cnt := c.constI64Dims(c.unique(n+"_counts"), []int64{1, 1, outH, outW}, counts)
	half := make([]int64, len(counts))
	for i, v := range counts {
		half[i] = v / 2
	}
	h := c.constI64Dims(c.unique(n+"_half_counts"), []int64{1, 1, outH, outW}, half)
	floorDiv := func(v, tag string) string {
		rem := c.unique(n + "_" + tag + "_rem")
		c.node("Mod", []string{v, cnt}, []string{rem}, canonical.IntAttr("fmod", 0))
		ex := c.unique(n + "_" + tag + "_exact")
		c.node("Sub", []string{v, rem}, []string{ex})
		q := c.unique(n + "_" + tag + "_quotient")
		c.node("Div", []string{ex, cnt}, []string{q})
		return q
	}
	up := c.unique(n + "_acc_plus_half")
	c.node("Add", []string{acc, h}, []string{up})
	pos := floorDiv(up, "pos")
	down := c.unique(n + "_half_minus_acc")
	c.node("Sub", []string{h, acc}, []string{down})
	negQ := floorDiv(down, "neg")
	neg := c.unique(n + "_neg")
	c.node("Neg", []string{negQ}, []string{neg})
	isPos := c.unique(n + "_acc_positive")
	c.node("Greater", []string{acc, c.i64(n+"_zero", 0)}, []string{isPos})
	q := c.unique(n + "_mean")
	c.node("Where", []string{isPos, pos, neg}, []string{q})
	return true, c.finishInt(o.outputs[0], nchw, q, lo, hi, n)
}

// tflPaddingMust is TFLite's SAME padding of a known dimension.
func tflPaddingMust(in, k, s int64) (before, after int64) {
	b, a, _ := tflPadding(in, k, s, 1, true)
	return b, a
}

// exactMean builds an int8 MEAN (one scale per tensor, the reduced dims
// static) as XNNPACK's QS8 mean computes it, which TFLite's CPU delegate
// runs: the integer sum of the raw values less count x input zero point,
// converted to float32, times the float32 scale in_scale / (out_scale *
// count), rounded half to even, plus the output zero point, clamped. It
// matched the interpreter on all 192 values of three int8 global average
// pools (4x4, 7x7, 13x13) where a float ReduceMean with QuantizeLinear is
// one step off on some. ok is false when the op is not such a MEAN.
func (c *converter) exactMean(o *operator, lay, outLay layout, axes []int64, keep bool, reduced []bool) (bool, error) {
	xt, yt := c.tensor(o.inputs[0]), c.tensor(o.outputs[0])
	if xt.typ != fb.TensorTypeINT8 || yt.typ != fb.TensorTypeINT8 || !isQuant(xt) || !isQuant(yt) ||
		len(xt.q.scale) != 1 || len(yt.q.scale) != 1 {
		return false, nil
	}
	count := int64(1)
	for i, r := range reduced {
		if r {
			if xt.shape[i] <= 0 {
				return false, nil
			}
			count *= xt.shape[i]
		}
	}
	if count >= 1<<23 {
		return false, nil // the sum may round in float32 (XNNPACK's sum is int32)
	}
	x, err := c.rawValue(int(o.inputs[0]), lay)
	if err != nil {
		return false, err
	}
	keepI := int64(0)
	if keep {
		keepI = 1
	}
	n := c.unique(c.base[o.outputs[0]] + "_exact")
	xi := c.unique(n + "_x_i64")
	c.node("Cast", []string{x}, []string{xi}, canonical.IntAttr("to", int64(canonical.Int64)))
	sum := c.unique(n + "_sum")
	c.node("ReduceSum", []string{xi, c.constI64(n+"_axes", axes)}, []string{sum}, canonical.IntAttr("keepdims", keepI))
	off := c.unique(n + "_sum_offset")
	c.node("Sub", []string{sum, c.i64(n+"_zp_sum", count*xt.q.zp[0])}, []string{off})
	f := c.unique(n + "_sum_f32")
	c.node("Cast", []string{off}, []string{f}, canonical.IntAttr("to", int64(canonical.Float)))
	scaled := c.unique(n + "_scaled")
	scale := xt.q.scale[0] / (yt.q.scale[0] * float32(count))
	c.node("Mul", []string{f, c.constF32(n+"_scale", nil, []float32{scale})}, []string{scaled})
	r := c.unique(n + "_rounded")
	c.node("Round", []string{scaled}, []string{r})
	ri := c.unique(n + "_rounded_i64")
	c.node("Cast", []string{r}, []string{ri}, canonical.IntAttr("to", int64(canonical.Int64)))
	z := c.unique(n + "_zp")
	c.node("Add", []string{ri, c.i64(n+"_out_zp", yt.q.zp[0])}, []string{z})
	return true, c.finishInt(o.outputs[0], outLay, z, -128, 127, n)
}

// Exact int8 convolutions (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED). TFLite's CPU
// delegate (XNNPACK, QC8 kernels) sums (x - input zero point) * w in
// int32, adds the int32 bias, converts to float32, multiplies by the
// channel's float32 scale input_scale * weight_scale / output_scale,
// rounds half to even (lrintf), adds the output zero point and clamps. A
// QDQ graph (a float Conv on dequantized values, QuantizeLinear) sums in
// float and rounds differently on a few values, which grow through a
// network; this builds the integer sum exactly (intConvAcc: the raw input
// in 4-bit pieces, convolved in float with the integer weights) and the
// requantization in float32 as XNNPACK does.

// exact8Plan is what the requantization of one int8 conv needs.
type exact8Plan struct {
	scale  []float32 // per output channel
	bias   []int64   // nil without bias
	zx, zy int64
	lo, hi int64
}

// planExact8 reports whether the op is an int8 conv the integer graph
// computes exactly, and its constants. taps is the number of products
// summed per output value.
func (c *converter) planExact8(o *operator, xIdx, wIdx, bIdx int32, outChannels, taps int64, act fb.ActivationFunctionType) (*exact8Plan, bool) {
	xt, wt, yt := c.tensor(xIdx), c.tensor(wIdx), c.tensor(o.outputs[0])
	if xt.typ != fb.TensorTypeINT8 || wt.typ != fb.TensorTypeINT8 || yt.typ != fb.TensorTypeINT8 ||
		!isQuant(xt) || !isQuant(wt) || !isQuant(yt) || wt.data == nil || len(xt.q.scale) != 1 || len(yt.q.scale) != 1 {
		return nil, false
	}
	if taps <= 0 || taps*15*128 >= 1<<24 || outChannels <= 0 || len(yt.shape) < 2 || !staticShape(yt.shape[1:]) || yt.shape[len(yt.shape)-1] != outChannels {
		return nil, false
	}
	wscale, bias, ok := c.intConvParams(wt, bIdx, outChannels)
	if !ok {
		return nil, false
	}
	p := &exact8Plan{zx: xt.q.zp[0], zy: yt.q.zp[0], lo: -128, hi: 127, bias: bias}
	for _, ws := range wscale {
		p.scale = append(p.scale, xt.q.scale[0]*ws/yt.q.scale[0])
	}
	switch act {
	case fb.ActivationFunctionTypeNONE:
	case fb.ActivationFunctionTypeRELU, fb.ActivationFunctionTypeRELU6, fb.ActivationFunctionTypeRELU_N1_TO_1:
		l, h := actRangeQ(act, yt.q.scale[0], yt.q.zp[0])
		p.lo, p.hi = max(p.lo, l), min(p.hi, h)
	default:
		return nil, false
	}
	return p, true
}

// emitExact8 builds the integer graph of an int8 conv for the NCHW int8
// input x (inShape its NHWC shape), with conv(in, y) adding the float
// convolution of its input, and stores the int8 result as output tensor
// out (NCHW). The input zero point is taken out as zx times the sum of the
// weights over the taps inside the input (the conv of a tensor of ones),
// as TFLite pads with the zero point.
func (c *converter) emitExact8(out int32, x string, inShape []int64, p *exact8Plan, conv func(in, y string)) error {
	y := c.layoutName(int(out), nchw)
	n := c.unique(y + "_exact")
	ys := c.tensor(out).shape
	acc := c.intConvAcc(n, x, 8, []int64{ys[3], ys[1], ys[2]}, conv)
	och := []int64{int64(len(p.scale)), 1, 1}
	if p.zx != 0 {
		ones := c.unique(n + "_ones")
		c.node("Expand", []string{c.constF32(n+"_one", nil, []float32{1}), c.constI64(n+"_ones_shape", []int64{1, inShape[3], inShape[1], inShape[2]})}, []string{ones})
		wsum := c.unique(n + "_weight_sums_f32")
		conv(ones, wsum)
		wi := c.unique(n + "_weight_sums")
		c.node("Cast", []string{wsum}, []string{wi}, canonical.IntAttr("to", int64(canonical.Int64)))
		zw := c.unique(n + "_zero_point_terms")
		c.node("Mul", []string{wi, c.i64(n+"_zx", p.zx)}, []string{zw})
		a := c.unique(n + "_acc_centered")
		c.node("Sub", []string{acc, zw}, []string{a})
		acc = a
	}
	return c.finishInt(out, nchw, c.requant8(n, acc, p, och), p.lo, p.hi, n)
}

// requant8 is XNNPACK's QC8 requantization of the int64 accumulator acc
// (without the bias; och the shape of the per-channel constants): + bias,
// to float32, times the channel's scale, rounded half to even, + the
// output zero point; the caller clamps.
func (c *converter) requant8(n, acc string, p *exact8Plan, och []int64) string {
	if p.bias != nil {
		b := c.unique(n + "_acc_bias")
		c.node("Add", []string{acc, c.constI64Dims(n+"_bias", och, p.bias)}, []string{b})
		acc = b
	}
	f := c.unique(n + "_acc_f32")
	c.node("Cast", []string{acc}, []string{f}, canonical.IntAttr("to", int64(canonical.Float)))
	scaled := c.unique(n + "_scaled")
	c.node("Mul", []string{f, c.constF32(n+"_scale", och, p.scale)}, []string{scaled})
	r := c.unique(n + "_rounded")
	c.node("Round", []string{scaled}, []string{r})
	ri := c.unique(n + "_rounded_i64")
	c.node("Cast", []string{r}, []string{ri}, canonical.IntAttr("to", int64(canonical.Int64)))
	z := c.unique(n + "_zp")
	c.node("Add", []string{ri, c.i64(n+"_out_zp", p.zy)}, []string{z})
	return z
}

// exactFC builds an int8 FULLY_CONNECTED of a 2-D input [N, depth] into a
// 2-D output as XNNPACK's QC8 fully connected computes it (the integer
// sum of (x - input zero point) * w, exactly: the input's 4-bit pieces
// times the integer weights in float, then requant8); ok is false when it
// is not such an op.
func (c *converter) exactFC(o *operator, act fb.ActivationFunctionType) (bool, error) {
	xt, wt, yt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), c.tensor(o.outputs[0])
	if len(xt.shape) != 2 || len(yt.shape) != 2 || len(wt.shape) != 2 || xt.shape[1] != wt.shape[1] {
		return false, nil
	}
	units, depth := wt.shape[0], wt.shape[1]
	p, ok := c.planExact8(o, o.inputs[0], o.inputs[1], c.in(o, 2), units, depth, act)
	if !ok {
		return false, nil
	}
	x, err := c.rawValue(int(o.inputs[0]), native)
	if err != nil {
		return false, err
	}
	wf, err := c.int8Floats(wt, []int{0, 1}, "_int")
	if err != nil {
		return false, err
	}
	n := c.unique(c.base[o.outputs[0]] + "_exact")
	acc := c.intConvAcc(n, x, 8, []int64{units}, func(in, y string) {
		c.node("Gemm", []string{in, wf}, []string{y}, canonical.IntAttr("transB", 1))
	})
	if p.zx != 0 {
		// zx times each unit's weight sum: a constant
		zw := make([]int64, units)
		for u := range units {
			for k := range depth {
				zw[u] += p.zx * int64(int8(wt.data[u*depth+k]))
			}
		}
		a := c.unique(n + "_acc_centered")
		c.node("Sub", []string{acc, c.constI64Dims(n+"_zero_point_terms", []int64{units}, zw)}, []string{a})
		acc = a
	}
	return true, c.finishInt(o.outputs[0], native, c.requant8(n, acc, p, []int64{units}), p.lo, p.hi, n)
}
