package tflite

import (
	"fmt"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/recurrent"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// UNIDIRECTIONAL_SEQUENCE_LSTM input slots.
const (
	lstmInput = iota
	lstmWi
	lstmWf
	lstmWc
	lstmWo
	lstmRi
	lstmRf
	lstmRc
	lstmRo
	lstmPi
	lstmPf
	lstmPo
	lstmBi
	lstmBf
	lstmBc
	lstmBo
	lstmProjW
	lstmProjB
	lstmH0
	lstmC0
	lstmLNi
	lstmLNf
	lstmLNc
	lstmLNo
)

func lstmActivation(a fb.ActivationFunctionType) (string, error) {
	switch a {
	case fb.ActivationFunctionTypeTANH:
		return "Tanh", nil
	case fb.ActivationFunctionTypeRELU:
		return "Relu", nil
	case fb.ActivationFunctionTypeNONE:
		return "", fmt.Errorf("LSTM without cell activation is not supported")
	}
	return "", fmt.Errorf("LSTM activation %s is not supported", a)
}

func (c *converter) lstm(o *operator) error {
	if len(o.inputs) < 20 {
		return fmt.Errorf("has %d inputs, want 20 or 24", len(o.inputs))
	}
	if len(o.outputs) < 1 {
		return fmt.Errorf("has no outputs")
	}
	for _, i := range []int{lstmInput, lstmWf, lstmWc, lstmWo, lstmRf, lstmRc, lstmRo, lstmBf, lstmBc, lstmBo, lstmH0, lstmC0} {
		if o.inputs[i] < 0 {
			return fmt.Errorf("required input %d is omitted", i)
		}
	}
	for i := lstmLNi; i < len(o.inputs) && i <= lstmLNo; i++ {
		if o.inputs[i] >= 0 {
			return fmt.Errorf("layer-normalized LSTM is not supported")
		}
	}
	// LSTM is one step ([batch, input]) of the sequence op's cell.
	step := o.code == fb.BuiltinOperatorLSTM
	var opt *fb.UnidirectionalSequenceLSTMOptions
	var a fb.ActivationFunctionType
	var cellClip, projClip float32
	timeMajor := true
	if step {
		lo, err := options[fb.LSTMOptions](o, fb.BuiltinOptionsLSTMOptions)
		if err != nil {
			return err
		}
		if lo.KernelType() != fb.LSTMKernelTypeFULL {
			return fmt.Errorf("LSTM kernel type %s is not supported (FULL)", lo.KernelType())
		}
		a, cellClip, projClip = lo.FusedActivationFunction(), lo.CellClip(), lo.ProjClip()
	} else {
		var err error
		if opt, err = options[fb.UnidirectionalSequenceLSTMOptions](o, fb.BuiltinOptionsUnidirectionalSequenceLSTMOptions); err != nil {
			return err
		}
		if opt.DiagonalRecurrentTensors() {
			return fmt.Errorf("diagonal recurrent tensors are not supported")
		}
		a, cellClip, projClip, timeMajor = opt.FusedActivationFunction(), opt.CellClip(), opt.ProjClip(), opt.TimeMajor()
	}
	act, err := lstmActivation(a)
	if err != nil {
		return err
	}
	xt := c.tensor(o.inputs[lstmInput])
	wf := c.tensor(o.inputs[lstmWf])
	rf := c.tensor(o.inputs[lstmRf])
	xr := 3
	if step {
		xr = 2
	}
	if len(xt.shape) != xr || len(wf.shape) != 2 || len(rf.shape) != 2 {
		return fmt.Errorf("input %v, weights %v, recurrent weights %v: want %d-D, 2-D, 2-D", xt.shape, wf.shape, rf.shape, xr)
	}
	hidden := wf.shape[0]
	cifg := o.inputs[lstmWi] < 0
	peep := o.inputs[lstmPf] >= 0
	proj := o.inputs[lstmProjW] >= 0
	if !cifg && (o.inputs[lstmRi] < 0 || o.inputs[lstmBi] < 0) {
		return fmt.Errorf("input gate weights without recurrent weights or bias")
	}
	if peep && (o.inputs[lstmPo] < 0 || !cifg && o.inputs[lstmPi] < 0) {
		return fmt.Errorf("incomplete peephole weights")
	}
	f := func(i int) (string, error) {
		v, err := c.floatValue(o.inputs[i], native)
		if err != nil || !step || i != lstmInput {
			return v, err
		}
		n := c.unique(v + "_step")
		c.node("Unsqueeze", []string{v, c.constI64(n+"_axis", []int64{0})}, []string{n})
		return n, nil
	}
	quantized := isQuant(c.tensor(o.outputs[0]))
	if !cifg && !proj && !quantized && cellClip == 0 && projClip == 0 {
		return c.lstmONNX(o, timeMajor, act, hidden, peep, f)
	}
	if step {
		return fmt.Errorf("LSTM with CIFG, projection, clipping or quantized tensors is not supported")
	}
	return c.lstmUnrolled(o, opt, act, hidden, cifg, peep, proj, f)
}

// lstmONNX maps the op onto one ONNX LSTM, its per-gate tensors stacked
// in ONNX's gate order.
func (c *converter) lstmONNX(o *operator, timeMajor bool, act string, hidden int64, peep bool, f func(int) (string, error)) error {
	x, err := f(lstmInput)
	if err != nil {
		return err
	}
	// ONNX Runtime implements only layout=0 (time-major): batch-major
	// TFLite sequences are transposed in and out.
	y0 := c.base[o.outputs[0]]
	if !timeMajor {
		t := c.unique(y0 + "_time_major_input")
		c.node("Transpose", []string{x}, []string{t}, canonical.IntsAttr("perm", []int64{1, 0, 2}...))
		x = t
	}
	seq, err := c.lstmSeq(x, y0, "forward", act, hidden, peep, f)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		switch {
		case o.code == fb.BuiltinOperatorLSTM: // one step: no time axis
			c.node("Squeeze", []string{seq, c.constI64(y+"_time_axis", []int64{0})}, []string{y})
		case !timeMajor:
			c.node("Transpose", []string{seq}, []string{y}, canonical.IntsAttr("perm", []int64{1, 0, 2}...))
		default:
			c.node("Identity", []string{seq}, []string{y})
		}
		return nil
	})
}

// lstmSeq runs one ONNX LSTM in direction dir over the time-major x with
// the weights, biases, peepholes and states f reads by input slot; it
// returns Y without its direction axis, [T, B, H].
func (c *converter) lstmSeq(x, y0, dir, act string, hidden int64, peep bool, f func(int) (string, error)) (string, error) {
	layout, err := recurrent.NewLayout("LSTM", recurrent.TFLiteLSTM)
	if err != nil {
		return "", err
	}
	// stack stacks the per-gate tensors of slots (TFLite's gate order) on
	// a new direction axis.
	stack := func(name string, slots []int, extra ...string) (string, error) {
		var parts []string
		for _, i := range slots {
			v, err := f(i)
			if err != nil {
				return "", err
			}
			parts = append(parts, v)
		}
		if len(parts) == layout.Gates() {
			var err error
			if parts, err = recurrent.ToONNX(layout, parts); err != nil {
				return "", err
			}
		}
		cat := c.b.Op("Concat", name+"_concat", append(parts, extra...), canonical.IntAttr("axis", 0))
		return recurrent.State(c.b, cat, name), nil
	}
	node := recurrent.Node{Op: "LSTM", Base: y0, Hidden: hidden, Activations: []string{"Sigmoid", act, act}, X: x, Direction: dir}
	if node.W, err = stack(y0+"_W", []int{lstmWi, lstmWf, lstmWc, lstmWo}); err != nil {
		return "", err
	}
	if node.R, err = stack(y0+"_R", []int{lstmRi, lstmRf, lstmRc, lstmRo}); err != nil {
		return "", err
	}
	// TFLite has one bias a gate; ONNX's recurrent half is zero.
	zb := c.constF32(c.unique(y0+"_Rb"), []int64{4 * hidden}, make([]float32, 4*hidden))
	if node.B, err = stack(y0+"_B", []int{lstmBi, lstmBf, lstmBc, lstmBo}, zb); err != nil {
		return "", err
	}
	if peep {
		// ONNX's P stacks i, o, f.
		if node.P, err = stack(y0+"_P", []int{lstmPi, lstmPo, lstmPf}); err != nil {
			return "", err
		}
	}
	for _, st := range []struct {
		slot int
		to   *string
		name string
	}{{lstmH0, &node.H0, "_initial_h"}, {lstmC0, &node.C0, "_initial_c"}} {
		v, err := f(st.slot)
		if err != nil {
			return "", err
		}
		*st.to = recurrent.State(c.b, v, y0+st.name)
	}
	out := node.Write(c.b)
	// Y is [seq, 1, batch, hidden].
	return c.b.Op("Squeeze", y0+"_seq", []string{out.Y, c.constI64(y0+"_dir_axis", []int64{1})}), nil
}

// lstmUnrolled writes the recurrence out step by step, for what ONNX LSTM
// cannot express: TFLite's cell clip (on the cell state), projection clip,
// projection and CIFG (coupled input and forget gates).
func (c *converter) lstmUnrolled(o *operator, opt *fb.UnidirectionalSequenceLSTMOptions, act string, hidden int64, cifg, peep, proj bool, f func(int) (string, error)) error {
	xt := c.tensor(o.inputs[lstmInput])
	timeAxis := int64(1)
	if opt.TimeMajor() {
		timeAxis = 0
	}
	steps := xt.shape[timeAxis]
	if steps <= 0 || steps > maxUnroll {
		return fmt.Errorf("unrolling needs a static sequence length, have %d", steps)
	}
	y0 := c.base[o.outputs[0]]
	x, err := f(lstmInput)
	if err != nil {
		return err
	}
	gates := []int{lstmWf, lstmWc, lstmWo}
	rgates := []int{lstmRf, lstmRc, lstmRo}
	bgates := []int{lstmBf, lstmBc, lstmBo}
	if !cifg {
		gates = append([]int{lstmWi}, gates...)
		rgates = append([]int{lstmRi}, rgates...)
		bgates = append([]int{lstmBi}, bgates...)
	}
	ng := int64(len(gates))
	cat := func(name string, idx []int, axis int64) (string, error) {
		var parts []string
		for _, i := range idx {
			v, err := f(i)
			if err != nil {
				return "", err
			}
			parts = append(parts, v)
		}
		out := c.unique(name)
		c.node("Concat", parts, []string{out}, canonical.IntAttr("axis", axis))
		return out, nil
	}
	W, err := cat(y0+"_W", gates, 0) // [G*H, I]
	if err != nil {
		return err
	}
	R, err := cat(y0+"_R", rgates, 0) // [G*H, out]
	if err != nil {
		return err
	}
	B, err := cat(y0+"_B", bgates, 0) // [G*H]
	if err != nil {
		return err
	}
	var pi, pf, po, pw, pb string
	if peep {
		if !cifg {
			if pi, err = f(lstmPi); err != nil {
				return err
			}
		}
		if pf, err = f(lstmPf); err != nil {
			return err
		}
		if po, err = f(lstmPo); err != nil {
			return err
		}
	}
	if proj {
		w, err := f(lstmProjW)
		if err != nil {
			return err
		}
		pw = w
		if o.inputs[lstmProjB] >= 0 {
			if pb, err = f(lstmProjB); err != nil {
				return err
			}
		}
	}
	h, err := f(lstmH0)
	if err != nil {
		return err
	}
	cs, err := f(lstmC0)
	if err != nil {
		return err
	}
	split := c.constI64(y0+"_split", repeat(hidden, int(ng)))
	clip := func(v string, lim float32, name string) string {
		if lim <= 0 {
			return v
		}
		out := c.unique(name)
		c.node("Clip", []string{v, c.scalarF32(name+"_min", -lim), c.scalarF32(name+"_max", lim)}, []string{out})
		return out
	}
	var hs []string
	tAxis := c.constI64(y0+"_time_axis", []int64{timeAxis})
	rawOut := !proj && sameQuant(c.tensor(o.outputs[0]), c.tensor(o.inputs[lstmH0])) && c.canQDQ(c.tensor(o.outputs[0]))
	for t := int64(0); t < steps; t++ {
		p := y0 + "_t" + strconv.FormatInt(t, 10)
		n := func(s string) string { return c.unique(p + "_" + s) }
		xg := n("x")
		c.node("Gather", []string{x, c.constI64(p+"_index", []int64{t})}, []string{xg}, canonical.IntAttr("axis", timeAxis))
		xs := n("x_step")
		c.node("Squeeze", []string{xg, tAxis}, []string{xs})
		xw := n("xw")
		c.node("Gemm", []string{xs, W, B}, []string{xw}, canonical.IntAttr("transB", 1))
		z := n("z")
		c.node("Gemm", []string{h, R, xw}, []string{z}, canonical.IntAttr("transB", 1))
		parts := make([]string, ng)
		for i := range parts {
			parts[i] = n("gate" + strconv.Itoa(i))
		}
		c.node("Split", []string{z, split}, parts, canonical.IntAttr("axis", 1))
		k := 0
		var zi string
		if !cifg {
			zi = parts[0]
			k = 1
		}
		step := recurrent.Step{Base: p, I: zi, F: parts[k], G: parts[k+1], O: parts[k+2], Cell: cs, Act: act,
			PI: pi, PF: pf, PO: po, Clip: opt.CellClip(),
			Keep: func(cn string) (string, error) {
				v, _, err := c.requantize(cn, o.inputs[lstmC0], p+"_c")
				return v, err
			}}
		var hn string
		if hn, cs, err = step.Write(c.b); err != nil {
			return err
		}
		if proj {
			hp := n("h_proj")
			in := []string{hn, pw}
			if pb != "" {
				in = append(in, pb)
			}
			c.node("Gemm", in, []string{hp}, canonical.IntAttr("transB", 1))
			hn = clip(hp, opt.ProjClip(), p+"_h_clipped")
		}
		// A quantized LSTM keeps its states quantized between steps.
		var hq string
		if h, hq, err = c.requantize(hn, o.inputs[lstmH0], p+"_h"); err != nil {
			return err
		}
		hu := n("h_step")
		if rawOut {
			// Stack the quantized states: no DequantizeLinear/QuantizeLinear
			// around the Unsqueeze and Concat.
			c.node("Unsqueeze", []string{hq, tAxis}, []string{hu})
		} else {
			c.node("Unsqueeze", []string{h, tAxis}, []string{hu})
		}
		hs = append(hs, hu)
	}
	return c.emitMove(o.outputs[0], native, rawOut, func(y string) error {
		c.node("Concat", hs, []string{y}, canonical.IntAttr("axis", timeAxis))
		return nil
	})
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// requantize rounds a float value to the quantization of tensor idx
// (QuantizeLinear then DequantizeLinear) when that tensor is quantized per
// tensor and the opset allows its type; otherwise it returns v unchanged
// (and no quantized value).
func (c *converter) requantize(v string, idx int32, name string) (dq, q string, err error) {
	t := c.tensor(idx)
	if !isQuant(t) || len(t.q.scale) != 1 || !c.canQDQ(t) {
		return v, "", nil
	}
	scale, zp, err := c.qparams(t)
	if err != nil {
		return "", "", err
	}
	q = c.unique(name + "_q")
	c.node("QuantizeLinear", []string{v, scale, zp}, []string{q})
	dq = c.unique(name + "_dq")
	c.node("DequantizeLinear", []string{q, scale, zp}, []string{dq})
	return dq, q, nil
}

// canQDQ reports whether QuantizeLinear can produce t's type at the opset.
func (c *converter) canQDQ(t *tensor) bool {
	switch t.typ {
	case fb.TensorTypeINT8, fb.TensorTypeUINT8:
		return true
	case fb.TensorTypeINT16, fb.TensorTypeUINT16:
		return c.opts.Opset >= 21
	}
	return false
}
