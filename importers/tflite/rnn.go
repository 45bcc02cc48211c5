package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN (float):
// h = act(x W' + h R' + b) from the zero state of the hidden-state
// variable; the sequence ops as ONNX RNN.

// rnnAct is the ONNX RNN activation of a TFLite RNN's activation (its
// kernel applies TANH too, unlike the fused activations of other ops).
func rnnAct(a fb.ActivationFunctionType) (string, error) {
	switch a {
	case fb.ActivationFunctionTypeTANH:
		return "Tanh", nil
	case fb.ActivationFunctionTypeRELU:
		return "Relu", nil
	}
	return "", fmt.Errorf("RNN activation %s is not supported (TANH, RELU)", a)
}

// rnnWeights returns W [1, H, I], R [1, H, H] and B [1, 2H] (the bias
// then zeros) of one direction from the TFLite inputs w, r, b.
func (c *converter) rnnWeights(w, r, b int32, y string) (ws, rs, bs string, err error) {
	for _, i := range []int32{w, r} {
		if t := c.tensor(i); len(t.shape) != 2 || t.typ != fb.TensorTypeFLOAT32 {
			return "", "", "", fmt.Errorf("weight %q is %s%v, want 2-D float32 (hybrid RNNs are not supported)", t.name, t.typ, t.shape)
		}
	}
	h := c.tensor(w).shape[0]
	one := c.constI64(y+"_axis0", []int64{0})
	var vals [3]string
	for k, i := range []int32{w, r, b} {
		v, err := c.floatValue(i, native)
		if err != nil {
			return "", "", "", err
		}
		vals[k] = v
	}
	bias := c.b.Op("Concat", y+"_bias_wr", []string{vals[2], c.constF32(c.unique(y+"_bias_r"), []int64{h}, make([]float32, h))}, canonical.IntAttr("axis", 0))
	return c.b.Op("Unsqueeze", y+"_w", []string{vals[0], one}), c.b.Op("Unsqueeze", y+"_r", []string{vals[1], one}), c.b.Op("Unsqueeze", y+"_b", []string{bias, one}), nil
}

// rnnCell is RNN: one step, its output the new hidden state.
func (c *converter) rnnCell(o *operator) error {
	if err := needInputs(o, 5); err != nil {
		return err
	}
	opt, err := options[fb.RNNOptions](o, fb.BuiltinOptionsRNNOptions)
	if err != nil {
		return err
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	y := c.unique(c.base[o.outputs[0]] + "_rnn")
	xs := c.b.Op("Unsqueeze", y+"_x", []string{x, c.constI64(y+"_axis0", []int64{0})})
	hs, _, err := c.rnnRun(xs, o.inputs[1:5], opt.FusedActivationFunction(), "forward", y)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(out string) error {
		c.node("Squeeze", []string{hs, c.constI64(out+"_axes", []int64{0})}, []string{out})
		return nil
	})
}

// rnnRun runs ONNX RNN over the time-major sequence xs with the TFLite
// inputs w (weights, recurrent weights, bias, hidden state) of one
// direction; it returns Y_h [1, B, H] and Y [T, B, H].
func (c *converter) rnnRun(xs string, w []int32, a fb.ActivationFunctionType, dir, y string) (yh, ys string, err error) {
	act, err := rnnAct(a)
	if err != nil {
		return "", "", err
	}
	ws, rs, bs, err := c.rnnWeights(w[0], w[1], w[2], y)
	if err != nil {
		return "", "", err
	}
	h, err := c.floatValue(w[3], native)
	if err != nil {
		return "", "", err
	}
	h0 := c.b.Op("Unsqueeze", y+"_h0", []string{h, c.constI64(y+"_h_axis", []int64{0})})
	outs := c.b.OpN("RNN", y, 2, []string{xs, ws, rs, bs, "", h0}, canonical.IntAttr("hidden_size", c.tensor(w[0]).shape[0]),
		canonical.StringsAttr("activations", act), canonical.StringAttr("direction", dir))
	seq := c.b.Op("Squeeze", y+"_seq", []string{outs[0], c.constI64(y+"_dir_axis", []int64{1})})
	return outs[1], seq, nil
}

// timeMajor returns input idx as [T, B, I] (transposed when batch-major).
func (c *converter) timeMajor(idx int32, major bool, y string) (string, error) {
	if len(c.tensor(idx).shape) != 3 {
		return "", fmt.Errorf("input %q has shape %v, want 3-D", c.tensor(idx).name, c.tensor(idx).shape)
	}
	x, err := c.floatValue(idx, native)
	if err != nil {
		return "", err
	}
	if major {
		return x, nil
	}
	return c.b.Op("Transpose", y+"_time_major", []string{x}, canonical.IntsAttr("perm", 1, 0, 2)), nil
}

// sequenceRNN is UNIDIRECTIONAL_SEQUENCE_RNN.
func (c *converter) sequenceRNN(o *operator) error {
	if err := needInputs(o, 5); err != nil {
		return err
	}
	opt, err := options[fb.SequenceRNNOptions](o, fb.BuiltinOptionsSequenceRNNOptions)
	if err != nil {
		return err
	}
	y := c.unique(c.base[o.outputs[0]] + "_rnn")
	xs, err := c.timeMajor(o.inputs[0], opt.TimeMajor(), y)
	if err != nil {
		return err
	}
	_, seq, err := c.rnnRun(xs, o.inputs[1:5], opt.FusedActivationFunction(), "forward", y)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(out string) error {
		if opt.TimeMajor() {
			c.node("Identity", []string{seq}, []string{out})
		} else {
			c.node("Transpose", []string{seq}, []string{out}, canonical.IntsAttr("perm", 1, 0, 2))
		}
		return nil
	})
}

// bidiRNN is BIDIRECTIONAL_SEQUENCE_RNN without auxiliary input: a
// forward and a reverse RNN, their outputs apart or concatenated on the
// last axis (merge_outputs).
func (c *converter) bidiRNN(o *operator) error {
	if err := needInputs(o, 9); err != nil {
		return err
	}
	if c.in(o, 9) >= 0 {
		return fmt.Errorf("an auxiliary input is not supported")
	}
	opt, err := options[fb.BidirectionalSequenceRNNOptions](o, fb.BuiltinOptionsBidirectionalSequenceRNNOptions)
	if err != nil {
		return err
	}
	y := c.unique(c.base[o.outputs[0]] + "_rnn")
	xs, err := c.timeMajor(o.inputs[0], opt.TimeMajor(), y)
	if err != nil {
		return err
	}
	_, fw, err := c.rnnRun(xs, o.inputs[1:5], opt.FusedActivationFunction(), "forward", y+"_fw")
	if err != nil {
		return err
	}
	_, bw, err := c.rnnRun(xs, o.inputs[5:9], opt.FusedActivationFunction(), "reverse", y+"_bw")
	if err != nil {
		return err
	}
	return c.emitBidi(o, fw, bw, opt.MergeOutputs(), opt.TimeMajor(), true, y)
}

// emitBidi writes the time-major forward and backward sequences fw and bw
// of a bidirectional op as its outputs: apart, or concatenated on the
// last axis (merge), batch-major unless timeMajor. rnnQuirk: a separate
// time-major backward output is sized batch-major (TFLite's RNN kernel).
func (c *converter) emitBidi(o *operator, fw, bw string, merge, timeMajor, rnnQuirk bool, y string) error {
	if want := map[bool]int{true: 1, false: 2}[merge]; len(o.outputs) != want {
		return fmt.Errorf("%d outputs, want %d (merge_outputs %v)", len(o.outputs), want, merge)
	}
	seqs := []string{fw, bw}
	if merge {
		seqs = []string{c.b.Op("Concat", y+"_merged", seqs, canonical.IntAttr("axis", -1))}
	}
	for i, s := range seqs {
		err := c.emit(o.outputs[i], native, fb.ActivationFunctionTypeNONE, func(out string) error {
			if timeMajor && i == 1 && rnnQuirk {
				// TFLite's RNN sizes a separate backward output [batch, time,
				// units] while it writes it time-major: the same values,
				// reshaped (checked against the interpreter).
				shp := c.b.Op("Shape", out+"_time_major_shape", []string{s})
				bt := c.b.Op("Gather", out+"_batch_time", []string{shp, c.constI64(out+"_swap", []int64{1, 0, 2})}, canonical.IntAttr("axis", 0))
				c.node("Reshape", []string{s, bt}, []string{out})
			} else if timeMajor {
				c.node("Identity", []string{s}, []string{out})
			} else {
				c.node("Transpose", []string{s}, []string{out}, canonical.IntsAttr("perm", 1, 0, 2))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// BIDIRECTIONAL_SEQUENCE_LSTM input slots beyond the forward cell's
// (lstmWi ... lstmProjB): the backward cell's follow at bwLSTMOffset, then
// the four states.
const (
	bwLSTMOffset = 17
	bidiFwH0     = 35
	bidiFwC0     = 36
	bidiBwH0     = 37
	bidiBwC0     = 38
	bidiAux      = 39
)

// bidiLSTM is BIDIRECTIONAL_SEQUENCE_LSTM (float, without auxiliary
// input, CIFG, projection or clipping): a forward and a reverse ONNX LSTM.
func (c *converter) bidiLSTM(o *operator) error {
	if len(o.inputs) < bidiAux {
		return fmt.Errorf("has %d inputs, want 48", len(o.inputs))
	}
	if c.in(o, bidiAux) >= 0 {
		return fmt.Errorf("an auxiliary input is not supported")
	}
	opt, err := options[fb.BidirectionalSequenceLSTMOptions](o, fb.BuiltinOptionsBidirectionalSequenceLSTMOptions)
	if err != nil {
		return err
	}
	if opt.CellClip() != 0 || opt.ProjClip() != 0 {
		return fmt.Errorf("cell or projection clipping is not supported")
	}
	act, err := lstmActivation(opt.FusedActivationFunction())
	if err != nil {
		return err
	}
	slot := func(dir, i int) int32 {
		switch {
		case i == lstmInput:
			return o.inputs[0]
		case i == lstmH0:
			return o.inputs[bidiFwH0+2*dir]
		case i == lstmC0:
			return o.inputs[bidiFwC0+2*dir]
		}
		return o.inputs[i+dir*bwLSTMOffset]
	}
	for dir := range 2 {
		for _, i := range []int{lstmWi, lstmWf, lstmWc, lstmWo, lstmRi, lstmRf, lstmRc, lstmRo, lstmBi, lstmBf, lstmBc, lstmBo, lstmH0, lstmC0} {
			if slot(dir, i) < 0 {
				return fmt.Errorf("input %d of the %s cell is omitted (CIFG is not supported)", i, []string{"forward", "backward"}[dir])
			}
		}
		if slot(dir, lstmProjW) >= 0 {
			return fmt.Errorf("projection is not supported")
		}
	}
	wt := c.tensor(slot(0, lstmWf))
	if len(wt.shape) != 2 {
		return fmt.Errorf("forget weights %v, want 2-D", wt.shape)
	}
	peep := slot(0, lstmPf) >= 0
	y := c.unique(c.base[o.outputs[0]] + "_lstm")
	x, err := c.timeMajor(o.inputs[0], opt.TimeMajor(), y)
	if err != nil {
		return err
	}
	var seqs [2]string
	for dir, name := range []string{"forward", "reverse"} {
		f := func(i int) (string, error) { return c.floatValue(slot(dir, i), native) }
		if seqs[dir], err = c.lstmSeq(x, y+"_"+name, name, act, wt.shape[0], peep, f); err != nil {
			return err
		}
	}
	return c.emitBidi(o, seqs[0], seqs[1], opt.MergeOutputs(), opt.TimeMajor(), false, y)
}
