package tflite

import (
	"fmt"
	"slices"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/recurrent"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// rnnCommon checks what LSTM and GRU share: forward direction, default
// activations, full-length sequences, zero initial state; it returns the
// hidden size, the X shape and the layout.
func (c *converter) rnnCommon(n *canonical.Node, gates int, defActs []string) (h int64, xs []int64, layout int64, err error) {
	if d := n.AttrString("direction", "forward"); d != "forward" {
		return 0, nil, 0, unsupported(n, "direction %s (forward only; TFLite's sequence ops are unidirectional)", d)
	}
	if acts := n.AttrStrings("activations", nil); acts != nil && !slices.Equal(acts, defActs) {
		return 0, nil, 0, unsupported(n, "activations %v (only the default %v)", acts, defActs)
	}
	w := n.Inputs[1]
	if w == nil || w.Const == nil || len(w.Const.Dims) != 3 || n.Inputs[2] == nil || n.Inputs[2].Const == nil {
		return 0, nil, 0, unsupported(n, "W and R must be constants")
	}
	h = n.AttrInt("hidden_size", w.Const.Dims[1]/int64(gates))
	if w.Const.Dims[1] != int64(gates)*h {
		return 0, nil, 0, unsupported(n, "W has %d rows, want %d x hidden_size %d", w.Const.Dims[1], gates, h)
	}
	if xs, err = c.shape(n.Inputs[0]); err != nil {
		return 0, nil, 0, err
	}
	if len(xs) != 3 {
		return 0, nil, 0, unsupported(n, "X of rank %d", len(xs))
	}
	layout = n.AttrInt("layout", 0)
	seqAxis := 0
	if layout != 0 {
		seqAxis = 1
	}
	if len(n.Inputs) > 4 && n.Inputs[4] != nil {
		sl, err := c.ints(n.Inputs[4])
		if err != nil {
			return 0, nil, 0, unsupported(n, "sequence_lens is not constant")
		}
		for _, v := range sl {
			if xs[seqAxis] < 0 || v != xs[seqAxis] {
				return 0, nil, 0, unsupported(n, "sequence_lens %v: only full-length sequences", sl)
			}
		}
	}
	for i := 5; i < len(n.Inputs) && i <= 6; i++ {
		if n.Inputs[i] == nil {
			continue
		}
		if n.Inputs[i].Const == nil {
			return 0, nil, 0, unsupported(n, "initial state %q is not constant (TFLite's state starts at zero)", n.Inputs[i].Name)
		}
		f, err := c.floats(n.Inputs[i])
		if err != nil {
			return 0, nil, 0, err
		}
		if slices.ContainsFunc(f, func(v float32) bool { return v != 0 }) {
			return 0, nil, 0, unsupported(n, "a non-zero initial state %q (TFLite's state starts at zero)", n.Inputs[i].Name)
		}
	}
	return h, xs, layout, nil
}

// rnnWeights returns the constant weights of an ONNX LSTM or GRU n of
// gates gates and hidden size h: the input size I (W's last dim), W and R
// as floats, and B (zeros, 2*gates*h of them, when n has none).
func (c *converter) rnnWeights(n *canonical.Node, gates int, h int64) (I int64, wf, rf, bias []float32, err error) {
	I = n.Inputs[1].Const.Dims[2]
	if wf, err = c.floats(n.Inputs[1]); err != nil {
		return 0, nil, nil, nil, err
	}
	if rf, err = c.floats(n.Inputs[2]); err != nil {
		return 0, nil, nil, nil, err
	}
	bias = make([]float32, 2*int64(gates)*h)
	if len(n.Inputs) > 3 && n.Inputs[3] != nil {
		if n.Inputs[3].Const == nil {
			return 0, nil, nil, nil, unsupported(n, "B is not constant")
		}
		if bias, err = c.floats(n.Inputs[3]); err != nil {
			return 0, nil, nil, nil, err
		}
	}
	return I, wf, rf, bias, nil
}

// rnnOutputs emits Y (the sequence output reshaped to ONNX's
// [seq, 1, batch, H] or [batch, seq, 1, H]) and Y_h (the last step) from
// seqOut, TFLite's [seq, batch, H] (layout 0) or [batch, seq, H].
func (c *converter) rnnOutputs(n *canonical.Node, seqOut int32, layout int64) error {
	if len(n.Outputs) > 0 && n.Outputs[0] != nil {
		ysh, err := c.shape(n.Outputs[0])
		if err != nil {
			return err
		}
		y, err := c.newOut(n.Outputs[0], nil)
		if err != nil {
			return err
		}
		shp := make([]int32, len(ysh))
		for i, d := range ysh {
			shp[i] = int32(d)
		}
		c.reshape(seqOut, y, shp)
	}
	if len(n.Outputs) > 1 && n.Outputs[1] != nil {
		ax := 0
		if layout != 0 {
			ax = 1
		}
		begin, end, stride := []int32{0, 0, 0}, []int32{0, 0, 0}, []int32{1, 1, 1}
		begin[ax] = -1
		mask := int32(7) &^ (1 << ax)
		em := int32(7)
		yh, err := c.newOut(n.Outputs[1], nil)
		if err != nil {
			return err
		}
		bt := c.constI32("begin", begin, []int64{3})
		et := c.constI32("end", end, []int64{3})
		st := c.constI32("strides", stride, []int64{3})
		c.t.addOp(fb.BuiltinOperatorSTRIDED_SLICE, []int32{seqOut, bt, et, st}, []int32{yh}, fb.BuiltinOptionsStridedSliceOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.StridedSliceOptionsStart(b)
			fb.StridedSliceOptionsAddBeginMask(b, mask)
			fb.StridedSliceOptionsAddEndMask(b, em)
			return fb.StridedSliceOptionsEnd(b)
		}, n.Name)
	}
	return nil
}

// lstm emits ONNX LSTM (forward) as UNIDIRECTIONAL_SEQUENCE_LSTM: gates
// reordered from ONNX's i, o, f, c to TFLite's i, f, c, o; the two bias
// halves added; peepholes as cell_to_* weights; the states as zero-initialized variable tensors.
func (c *converter) lstm(n *canonical.Node) error {
	h, xs, layout, err := c.rnnCommon(n, 4, []string{"Sigmoid", "Tanh", "Tanh"})
	if err != nil {
		return err
	}
	if n.Attr("clip") != nil {
		// ONNX clips the gates' pre-activations, TFLite's cell_clip the
		// cell state: not the same function.
		return unsupported(n, "clip (ONNX clips the gate inputs; TFLite's cell_clip clips the cell state)")
	}
	if n.AttrInt("input_forget", 0) != 0 {
		return unsupported(n, "input_forget (coupled gates)")
	}
	if len(n.Outputs) > 2 && n.Outputs[2] != nil && (len(n.Outputs[2].Uses()) > 0 || slices.Contains(c.m.Graph.Outputs, n.Outputs[2])) {
		return unsupported(n, "the Y_c output is used (TFLite keeps the cell state inside the op)")
	}
	I, wf, rf, bias, err := c.rnnWeights(n, 4, h)
	if err != nil {
		return err
	}
	var peep []float32
	if len(n.Inputs) > 7 && n.Inputs[7] != nil {
		if n.Inputs[7].Const == nil {
			return unsupported(n, "P is not constant")
		}
		if peep, err = c.floats(n.Inputs[7]); err != nil {
			return err
		}
	}
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	batch := xs[1]
	if layout != 0 {
		batch = xs[0]
	}
	ins := make([]int32, 24)
	for i := range ins {
		ins[i] = -1
	}
	ins[0] = x
	// TFLite's gate k (i, f, c, o) is ONNX's gate order.ONNXGate(k) (i, o, f, c).
	order, err := recurrent.NewLayout("LSTM", recurrent.TFLiteLSTM)
	if err != nil {
		return err
	}
	wb, err := order.Blocks(wf)
	if err != nil {
		return unsupported(n, "W: %v", err)
	}
	rb, err := order.Blocks(rf)
	if err != nil {
		return unsupported(n, "R: %v", err)
	}
	wbias, err := order.Blocks(bias[:4*h])
	if err != nil {
		return unsupported(n, "B: %v", err)
	}
	rbias, err := order.Blocks(bias[4*h:])
	if err != nil {
		return unsupported(n, "B: %v", err)
	}
	for k := range order.Gates() {
		g, l := order.ONNXGate(k), order.Letter(k)
		ins[1+k] = c.constF32(fmt.Sprintf("%s/input_to_%s", n.Name, l), wb[g], []int64{h, I}, true)
		ins[5+k] = c.constF32(fmt.Sprintf("%s/recurrent_to_%s", n.Name, l), rb[g], []int64{h, h}, true)
		b := make([]float32, h)
		for j := range b {
			b[j] = wbias[g][j] + rbias[g][j]
		}
		ins[12+k] = c.constF32(fmt.Sprintf("%s/bias_%s", n.Name, l), b, []int64{h}, true)
	}
	if peep != nil {
		// ONNX P: i, o, f; TFLite cell_to_input, cell_to_forget, cell_to_output.
		for k, g := range []int{0, 2, 1} {
			ins[9+k] = c.constF32(fmt.Sprintf("%s/cell_to_%s", n.Name, "ifo"[k:k+1]), peep[int64(g)*h:int64(g+1)*h], []int64{h}, true)
		}
	}
	for k, name := range []string{"output_state", "cell_state"} {
		st := c.tmp(n.Name+"/"+name, fb.TensorTypeFLOAT32, []int64{batch, h})
		c.t.tensors[st].variable = true
		ins[18+k] = st
	}
	seqShape := []int64{xs[0], xs[1], h}
	seqOut := c.tmp(n.Name+"/sequence", fb.TensorTypeFLOAT32, seqShape)
	timeMajor := layout == 0
	c.t.addOp(fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM, ins, []int32{seqOut}, fb.BuiltinOptionsUnidirectionalSequenceLSTMOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.UnidirectionalSequenceLSTMOptionsStart(b)
		fb.UnidirectionalSequenceLSTMOptionsAddFusedActivationFunction(b, fb.ActivationFunctionTypeTANH)
		fb.UnidirectionalSequenceLSTMOptionsAddTimeMajor(b, timeMajor)
		return fb.UnidirectionalSequenceLSTMOptionsEnd(b)
	}, n.Name)
	return c.rnnOutputs(n, seqOut, layout)
}

// gru emits ONNX GRU (forward) unrolled over its static sequence length:
// one FULLY_CONNECTED of X for all steps and gates, then per step a
// FULLY_CONNECTED of the state, LOGISTIC/TANH gates and the update
// h = n + z*(h_prev - n); PACK gathers the steps.
func (c *converter) gru(n *canonical.Node) error {
	h, xs, layout, err := c.rnnCommon(n, 3, []string{"Sigmoid", "Tanh"})
	if err != nil {
		return err
	}
	if layout != 0 {
		return unsupported(n, "layout 1 (batch-major) GRU (not implemented)")
	}
	seq, batch := xs[0], xs[1]
	if seq < 0 || batch < 0 {
		return unsupported(n, "dynamic sequence length or batch (the GRU is unrolled over a static length)")
	}
	lbr := n.AttrInt("linear_before_reset", 0) != 0
	I, wf, rf, bias, err := c.rnnWeights(n, 3, h)
	if err != nil {
		return err
	}
	f32 := fb.TensorTypeFLOAT32
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	// X W^T for all steps; the bias holds Wb (all gates) + Rb (z, r).
	xb := make([]float32, 3*h)
	for j := range xb {
		xb[j] = bias[j]
		if int64(j) < 2*h {
			xb[j] += bias[3*h+int64(j)]
		}
	}
	xw := c.tmp(n.Name+"/xw", f32, []int64{seq, batch, 3 * h})
	c.t.addOp(fb.BuiltinOperatorFULLY_CONNECTED, []int32{x, c.constF32(n.Name+"/W", wf, []int64{3 * h, I}, true), c.constF32(n.Name+"/Wb", xb, []int64{3 * h}, true)},
		[]int32{xw}, fb.BuiltinOptionsFullyConnectedOptions, fcOpts(fb.ActivationFunctionTypeNONE, true), n.Name)
	steps := make([]int32, seq)
	for t := range steps {
		steps[t] = c.tmp(fmt.Sprintf("%s/xw%d", n.Name, t), f32, []int64{batch, 3 * h})
	}
	c.t.addOp(fb.BuiltinOperatorUNPACK, []int32{xw}, steps, fb.BuiltinOptionsUnpackOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.UnpackOptionsStart(b)
		fb.UnpackOptionsAddNum(b, int32(seq))
		fb.UnpackOptionsAddAxis(b, 0)
		return fb.UnpackOptionsEnd(b)
	}, n.Name)
	// The state's weights: R (all gates, bias Rb_h on h) with
	// linear_before_reset, else R_zr here and R_h after the reset.
	rb := make([]float32, 3*h)
	copy(rb[2*h:], bias[5*h:6*h])
	var rAll, rZR, rH, rbH, zero2 int32
	if lbr {
		rAll = c.constF32(n.Name+"/R", rf, []int64{3 * h, h}, true)
		rbH = c.constF32(n.Name+"/Rb", rb, []int64{3 * h}, true)
	} else {
		rZR = c.constF32(n.Name+"/R_zr", rf[:2*h*h], []int64{2 * h, h}, true)
		zero2 = c.constF32(n.Name+"/R_zr_bias", make([]float32, 2*h), []int64{2 * h}, true)
		rH = c.constF32(n.Name+"/R_h", rf[2*h*h:], []int64{h, h}, true)
		rbH = c.constF32(n.Name+"/Rb_h", bias[5*h:6*h], []int64{h}, true)
	}
	axis1 := c.constI32("axis", []int32{1}, []int64{})
	bh := []int64{batch, h}
	op := func(code fb.BuiltinOperator, ot fb.BuiltinOptions, opts optFn, name string, ins ...int32) int32 {
		out := c.tmp(name, f32, bh)
		c.t.addOp(code, ins, []int32{out}, ot, opts, n.Name)
		return out
	}
	add := func(name string, a, b int32) int32 {
		return op(fb.BuiltinOperatorADD, fb.BuiltinOptionsAddOptions, emptyOpts(fb.AddOptionsStart, fb.AddOptionsEnd), name, a, b)
	}
	mul := func(name string, a, b int32) int32 {
		return op(fb.BuiltinOperatorMUL, fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), name, a, b)
	}
	split := func(name string, in int32, k int) []int32 {
		outs := make([]int32, k)
		for i := range outs {
			outs[i] = c.tmp(fmt.Sprintf("%s%d", name, i), f32, bh)
		}
		c.t.addOp(fb.BuiltinOperatorSPLIT, []int32{axis1, in}, outs, fb.BuiltinOptionsSplitOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.SplitOptionsStart(b)
			fb.SplitOptionsAddNumSplits(b, int32(k))
			return fb.SplitOptionsEnd(b)
		}, n.Name)
		return outs
	}
	fc := func(name string, in, w, b int32, rows int64) int32 {
		out := c.tmp(name, f32, []int64{batch, rows})
		c.t.addOp(fb.BuiltinOperatorFULLY_CONNECTED, []int32{in, w, b}, []int32{out}, fb.BuiltinOptionsFullyConnectedOptions, fcOpts(fb.ActivationFunctionTypeNONE, false), n.Name)
		return out
	}
	hPrev := c.constF32(n.Name+"/h0", make([]float32, batch*h), bh, false)
	hs := make([]int32, seq)
	for t := range steps {
		p := fmt.Sprintf("%s/t%d/", n.Name, t)
		xg := split(p+"x", steps[t], 3)
		var hg []int32
		if lbr {
			hg = split(p+"h", fc(p+"hR", hPrev, rAll, rbH, 3*h), 3)
		} else {
			hg = split(p+"h", fc(p+"hR", hPrev, rZR, zero2, 2*h), 2)
		}
		z := op(fb.BuiltinOperatorLOGISTIC, 0, nil, p+"z", add(p+"z_in", xg[0], hg[0]))
		r := op(fb.BuiltinOperatorLOGISTIC, 0, nil, p+"r", add(p+"r_in", xg[1], hg[1]))
		var hh int32
		if lbr {
			hh = mul(p+"r_hh", r, hg[2])
		} else {
			hh = fc(p+"hh", mul(p+"r_h", r, hPrev), rH, rbH, h)
		}
		cand := op(fb.BuiltinOperatorTANH, 0, nil, p+"n", add(p+"n_in", xg[2], hh))
		diff := op(fb.BuiltinOperatorSUB, fb.BuiltinOptionsSubOptions, emptyOpts(fb.SubOptionsStart, fb.SubOptionsEnd), p+"h_minus_n", hPrev, cand)
		hPrev = add(p+"h", cand, mul(p+"z_diff", z, diff))
		hs[t] = hPrev
	}
	seqOut := c.tmp(n.Name+"/sequence", f32, []int64{seq, batch, h})
	c.t.addOp(fb.BuiltinOperatorPACK, hs, []int32{seqOut}, fb.BuiltinOptionsPackOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.PackOptionsStart(b)
		fb.PackOptionsAddValuesCount(b, int32(seq))
		fb.PackOptionsAddAxis(b, 0)
		return fb.PackOptionsEnd(b)
	}, n.Name)
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("GRU %q unrolled over %d steps", n.Name, seq))
	return c.rnnOutputs(n, seqOut, 0)
}
