package tflite

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Exact int16x8 convolutions. TFLite computes a CONV_2D, DEPTHWISE_CONV_2D
// or TRANSPOSE_CONV with int16 activations and int8 weights in integers: an
// int64 accumulator, the bias added, then MultiplyByQuantizedMultiplier for
// int64 inputs (the multiplier reduced to 15 bits, ((m + 2^15) >> 16), plus
// 2^(s-1), arithmetic shift right by s = 15 - shift), the zero point, and a
// clamp. A QDQ graph (float Conv, real-valued scale) is one step off on a
// few per cent of the values; this builds the integer computation instead:
//
//   - the int16 input split into four 4-bit pieces, x = p0 + 16 p1 + 256 p2
//     + 4096 p3 (p0..p2 in [0, 15], p3 in [-8, 7]), with Mod and Div on the
//     non-negative x + 32768 (ONNX's BitShift is unsigned only);
//   - the pieces stacked on the batch axis and convolved in float with the
//     integer weights: every product is at most 15*128 and every partial sum
//     below 2^24 while K*1920 < 2^24 (K = taps per output), so each result
//     is the exact integer, whatever the summation order;
//   - the four results cast to int64, weighted by 16^i and summed: the int64
//     accumulator;
//   - in int64: + bias, * reduced multiplier, + 2^(s-1), floor division by
//     2^s as (v - Mod(v, 2^s)) / 2^s (Mod with fmod=0 is floored), Clip to
//     the activation range, Cast to int16.
//
// ConvInteger is not used: it takes 8-bit inputs only.

// exact16Plan is what the integer requantization of one conv needs.
type exact16Plan struct {
	mult, round, div []int64 // per output channel
	lo, hi           int64
	bias             []int64 // nil without bias
}

// planExact16 reports whether the op is an int16x8 conv that the integer
// graph computes exactly, and its per-channel constants. taps is the number
// of products summed per output value.
func (c *converter) planExact16(o *operator, xIdx, wIdx, bIdx int32, outChannels, taps int64, act fb.ActivationFunctionType) (*exact16Plan, bool) {
	xt, wt, yt := c.tensor(xIdx), c.tensor(wIdx), c.tensor(o.outputs[0])
	if xt.typ != fb.TensorTypeINT16 || wt.typ != fb.TensorTypeINT8 || yt.typ != fb.TensorTypeINT16 ||
		!isQuant(xt) || !isQuant(wt) || !isQuant(yt) || wt.data == nil ||
		len(xt.q.scale) != 1 || len(yt.q.scale) != 1 || xt.q.zp[0] != 0 || yt.q.zp[0] != 0 {
		return nil, false
	}
	if taps <= 0 || taps*15*128 >= 1<<24 || outChannels <= 0 || len(yt.shape) != 4 || !staticShape(yt.shape[1:]) || yt.shape[3] != outChannels {
		return nil, false
	}
	p := &exact16Plan{}
	wscale, bias, ok := c.intConvParams(wt, bIdx, outChannels)
	if !ok {
		return nil, false
	}
	p.bias = bias
	for _, ws := range wscale {
		// PopulateConvolutionQuantizationParams and QuantizeMultiplier.
		q, shift := fixedMultiplier(float64(xt.q.scale[0]) * float64(ws) / float64(yt.q.scale[0]))
		reduced := int64(0x7FFF)
		if q < 0x7FFF0000 {
			reduced = (q + 1<<15) >> 16
		}
		total := 15 - shift
		if total < 1 || total > 62 {
			return nil, false
		}
		p.mult = append(p.mult, reduced)
		p.round = append(p.round, int64(1)<<(total-1))
		p.div = append(p.div, int64(1)<<total)
	}
	// CalculateActivationRangeQuantized.
	quantize := func(f float32) int64 {
		return yt.q.zp[0] + int64(math.Round(float64(f/yt.q.scale[0])))
	}
	p.lo, p.hi = -32768, 32767
	switch act {
	case fb.ActivationFunctionTypeNONE, fb.ActivationFunctionTypeTANH, fb.ActivationFunctionTypeSIGN_BIT:
	case fb.ActivationFunctionTypeRELU:
		p.lo = max(p.lo, quantize(0))
	case fb.ActivationFunctionTypeRELU6:
		p.lo, p.hi = max(p.lo, quantize(0)), min(p.hi, quantize(6))
	case fb.ActivationFunctionTypeRELU_N1_TO_1:
		p.lo, p.hi = max(p.lo, quantize(-1)), min(p.hi, quantize(1))
	default:
		return nil, false
	}
	return p, true
}

// intConvParams reads what an integer conv takes from its symmetric int8
// weights wt (zero points 0, one scale or one per output channel) and its
// constant int32 or int64 bias bIdx (-1: none): the weight scale of each
// output channel and the bias; ok is false for any other weights or bias.
func (c *converter) intConvParams(wt *tensor, bIdx int32, outChannels int64) (wscale []float32, bias []int64, ok bool) {
	if slices.ContainsFunc(wt.q.zp, func(z int64) bool { return z != 0 }) || len(wt.q.scale) != 1 && int64(len(wt.q.scale)) != outChannels {
		return nil, nil, false
	}
	for ch := range outChannels {
		wscale = append(wscale, wt.q.scale[min(ch, int64(len(wt.q.scale))-1)])
	}
	if bIdx < 0 {
		return wscale, nil, true
	}
	bt := c.tensor(bIdx)
	if bt.data == nil || numel(bt.shape) != outChannels {
		return nil, nil, false
	}
	switch bt.typ {
	case fb.TensorTypeINT64:
		for i := int64(0); i < outChannels; i++ {
			bias = append(bias, int64(binary.LittleEndian.Uint64(bt.data[8*i:])))
		}
	case fb.TensorTypeINT32:
		for i := int64(0); i < outChannels; i++ {
			bias = append(bias, int64(int32(binary.LittleEndian.Uint32(bt.data[4*i:]))))
		}
	default:
		return nil, nil, false
	}
	return wscale, bias, true
}

// int8Floats permutes an int8 constant and returns it as float32 integers.
func (c *converter) int8Floats(t *tensor, perm []int, suffix string) (string, error) {
	data, dims, err := canonical.TransposeBytes(t.data, 1, t.shape, perm)
	if err != nil {
		return "", err
	}
	v := make([]float32, len(data))
	for i, b := range data {
		v[i] = float32(int8(b))
	}
	return c.constF32(c.base[t.index]+suffix, dims, v), nil
}

func (c *converter) constI64Dims(name string, dims []int64, v []int64) string {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return c.addInit(name, canonical.Int64, dims, b)
}

// emitExact16 builds the integer graph for the NCHW int16 input x, with
// conv(pieces, y) adding the float convolution (op, weights, attributes) of
// its input, and stores the int16 result as output tensor out (NCHW).
func (c *converter) emitExact16(out int32, x string, p *exact16Plan, conv func(in, y string)) error {
	y := c.layoutName(int(out), nchw)
	n := c.unique(y + "_exact")
	ys := c.tensor(out).shape
	acc := c.intConvAcc(n, x, 16, []int64{ys[3], ys[1], ys[2]}, conv)
	och := []int64{int64(len(p.mult)), 1, 1}
	if p.bias != nil {
		b := c.unique(n + "_acc_bias")
		c.node("Add", []string{acc, c.constI64Dims(n+"_bias", och, p.bias)}, []string{b})
		acc = b
	}
	m := c.unique(n + "_scaled")
	c.node("Mul", []string{acc, c.constI64Dims(n+"_multiplier", och, p.mult)}, []string{m})
	r := c.unique(n + "_rounded")
	c.node("Add", []string{m, c.constI64Dims(n+"_rounding", och, p.round)}, []string{r})
	d := c.constI64Dims(n+"_divisor", och, p.div)
	rem := c.unique(n + "_remainder")
	c.node("Mod", []string{r, d}, []string{rem}, canonical.IntAttr("fmod", 0))
	ex := c.unique(n + "_exact_multiple")
	c.node("Sub", []string{r, rem}, []string{ex})
	q := c.unique(n + "_shifted")
	c.node("Div", []string{ex, d}, []string{q})
	cl := c.unique(n + "_clamped")
	c.node("Clip", []string{q, c.constI64Dims(n+"_min", nil, []int64{p.lo}), c.constI64Dims(n+"_max", nil, []int64{p.hi})}, []string{cl})
	c.node("Cast", []string{cl}, []string{y}, canonical.IntAttr("to", int64(canonical.Int16)))
	return c.finishAs(out, nchw, y, true)
}

// intConvAcc builds the int64 accumulator sum(x * w) of a convolution of
// the NCHW integer input x (bits 8 or 16, zero padding) whose output has
// the dims tail after the batch (O, H, W for a conv): x split into 4-bit pieces, x = p0 + 16 p1 + ...
// with the last piece signed (Mod and Div on the non-negative x + 2^(bits-1):
// ONNX's BitShift is unsigned only), the pieces stacked on the batch axis
// and convolved in float by conv (each partial sum an exact integer while
// taps * 15 * 128 < 2^24), the results cast to int64, weighted by 16^i and
// summed.
func (c *converter) intConvAcc(n, x string, bits int, tail []int64, conv func(in, y string)) string {
	np := bits / 4
	x32 := n + "_x_i32"
	c.node("Cast", []string{x}, []string{x32}, canonical.IntAttr("to", int64(canonical.Int32)))
	u := n + "_u"
	c.node("Add", []string{x32, c.constI32(n+"_offset", int32(1)<<(bits-1))}, []string{u})
	sixteen := c.constI32(n+"_16", 16)
	pieces := make([]string, np)
	weights := make([]int64, np)
	rest := u
	for i := 0; i < np-1; i++ {
		pieces[i] = c.unique(n + "_nibble" + string(rune('0'+i)))
		c.node("Mod", []string{rest, sixteen}, []string{pieces[i]})
		next := c.unique(n + "_rest" + string(rune('0'+i)))
		c.node("Div", []string{rest, sixteen}, []string{next})
		rest = next
		weights[i] = int64(1) << (4 * i)
	}
	pieces[np-1] = c.unique(n + "_nibble" + string(rune('0'+np-1)))
	c.node("Sub", []string{rest, c.constI32(n+"_8", 8)}, []string{pieces[np-1]})
	weights[np-1] = int64(1) << (4 * (np - 1))
	stacked := c.unique(n + "_pieces")
	c.node("Concat", pieces, []string{stacked}, canonical.IntAttr("axis", 0))
	pf := c.unique(n + "_pieces_f32")
	c.node("Cast", []string{stacked}, []string{pf}, canonical.IntAttr("to", int64(canonical.Float)))
	cf := c.unique(n + "_conv_f32")
	conv(pf, cf)
	ci := c.unique(n + "_conv_i64")
	c.node("Cast", []string{cf}, []string{ci}, canonical.IntAttr("to", int64(canonical.Int64)))
	// [P*N, tail...] -> [P, N, tail...], weighted by 16^i, summed.
	c5 := c.unique(n + "_conv_5d")
	c.node("Reshape", []string{ci, c.constI64(c5+"_shape", append([]int64{int64(np), -1}, tail...))}, []string{c5})
	wdims := make([]int64, len(tail)+2)
	for i := range wdims {
		wdims[i] = 1
	}
	wdims[0] = int64(np)
	w5 := c.unique(n + "_weighted")
	c.node("Mul", []string{c5, c.constI64Dims(n+"_nibble_weights", wdims, weights)}, []string{w5})
	acc := c.unique(n + "_acc")
	c.node("ReduceSum", []string{w5, c.constI64(acc+"_axes", []int64{0})}, []string{acc}, canonical.IntAttr("keepdims", 0))
	return acc
}

func (c *converter) constI32(name string, v int32) string {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, uint32(v))
	return c.addInit(name, canonical.Int32, nil, b)
}
