package keraslayers

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// rnnActivation maps a Keras activation to an ONNX RNN activation name
// with its alpha and beta.
func (x *layerCtx) rnnActivation(name string) (string, float32, float32, error) {
	switch name {
	case "tanh":
		return "Tanh", 0, 0, nil
	case "sigmoid":
		return "Sigmoid", 0, 0, nil
	case "relu":
		return "Relu", 0, 0, nil
	case "hard_sigmoid":
		if x.c.keras3 {
			return "HardSigmoid", 1.0 / 6, 0.5, nil
		}
		return "HardSigmoid", 0.2, 0.5, nil
	case "linear":
		return "Affine", 1, 0, nil
	}
	return "", 0, 0, fmt.Errorf("recurrent activation %q is not supported", name)
}

// rnn maps SimpleRNN, GRU and LSTM (batch-major input [batch, time,
// features]) to the ONNX RNN, GRU and LSTM ops.
func (x *layerCtx) rnn(ins []*kval) ([]*kval, error) {
	if len(ins) < 1 {
		return nil, fmt.Errorf("takes one input, is given %d", len(ins))
	}
	nstate := 1
	if x.l.class == "LSTM" {
		nstate = 2
	}
	if len(ins) > 1 && len(ins) != 1+nstate {
		return nil, fmt.Errorf("%d inputs: the sequence and %d initial state(s) were expected", len(ins), nstate)
	}
	v := ins[0]
	if v.rank != 3 {
		return nil, fmt.Errorf("input of rank %d: want [batch, time, features]", v.rank)
	}
	if x.boolean("stateful", false) {
		return nil, fmt.Errorf("stateful=true is not supported (state across calls)")
	}
	if x.boolean("time_major", false) {
		return nil, fmt.Errorf("time_major=true is not supported")
	}
	units := int64(x.num("units", 0))
	if units <= 0 || units > 1<<20 {
		return nil, fmt.Errorf("units %v", x.l.cfg["units"])
	}
	gates := map[string]int64{"SimpleRNN": 1, "GRU": 3, "LSTM": 4}[x.l.class]
	k, kd, err := x.floats("kernel")
	if err != nil {
		return nil, err
	}
	rk, rd, err := x.floats("recurrent_kernel")
	if err != nil {
		return nil, err
	}
	if len(kd) != 2 || kd[1] != gates*units || len(rd) != 2 || rd[0] != units || rd[1] != gates*units {
		return nil, fmt.Errorf("kernel %v and recurrent_kernel %v do not fit %d units", kd, rd, units)
	}
	in := kd[0]
	var bias []float32
	resetAfter := x.l.class == "GRU" && x.boolean("reset_after", false)
	if x.boolean("use_bias", true) {
		var bd []int64
		if bias, bd, err = x.floats("bias"); err != nil {
			return nil, err
		}
		want := gates * units
		if resetAfter {
			want *= 2
		}
		if int64(len(bias)) != want {
			return nil, fmt.Errorf("bias of shape %v: want %d values", bd, want)
		}
	}
	// Keras stacks the gates of an LSTM as i, f, c, o, a GRU's as z, r, h.
	op := map[string]string{"SimpleRNN": "RNN", "GRU": "GRU", "LSTM": "LSTM"}[x.l.class]
	order, err := onnxspec.GateOrder(op, map[string]string{"RNN": "h", "GRU": "zrh", "LSTM": "ifco"}[op])
	if err != nil {
		return nil, err
	}
	reorder := func(m []float32, rows int64) []float32 { // m is [gates*units, rows] row-major
		out := make([]float32, 0, len(m))
		for _, g := range order {
			out = append(out, m[int64(g)*units*rows:int64(g+1)*units*rows]...)
		}
		return out
	}
	kt, err := transpose2D(k, kd)
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	rkt, err := transpose2D(rk, rd)
	if err != nil {
		return nil, fmt.Errorf("recurrent_kernel: %w", err)
	}
	W := reorder(kt, in)
	R := reorder(rkt, units)
	B := make([]float32, 2*gates*units)
	if bias != nil {
		wb := bias[:gates*units]
		copy(B, reorder(wb, 1))
		if resetAfter {
			copy(B[gates*units:], reorder(bias[gates*units:], 1))
		}
	}
	act := activationName(x.l.cfg["activation"])
	if x.l.cfg["activation"] == nil {
		act = "tanh"
	}
	ract := activationName(x.l.cfg["recurrent_activation"])
	if x.l.cfg["recurrent_activation"] == nil {
		ract = "sigmoid"
		if x.l.class != "SimpleRNN" && !x.c.keras3 {
			ract = "hard_sigmoid" // Keras 2 / TF.js default
		}
	}
	var names []string
	var alphas, betas []float32
	needAB := false
	addAct := func(a string) error {
		n, al, be, err := x.rnnActivation(a)
		if err != nil {
			return err
		}
		names = append(names, n)
		alphas = append(alphas, al)
		betas = append(betas, be)
		needAB = needAB || n == "HardSigmoid" || n == "Affine"
		return nil
	}
	switch x.l.class {
	case "SimpleRNN":
		err = addAct(act)
	case "GRU":
		if err = addAct(ract); err == nil {
			err = addAct(act)
		}
	case "LSTM":
		if err = addAct(ract); err == nil {
			if err = addAct(act); err == nil {
				err = addAct(act)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	b := x.c.b
	xin, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	seq := b.Transpose(xin, []int64{1, 0, 2}, x.name("time_major"))
	attrs := []*canonical.Attribute{canonical.IntAttr("hidden_size", units), canonical.StringsAttr("activations", names...)}
	if needAB {
		attrs = append(attrs, canonical.FloatsAttr("activation_alpha", alphas...), canonical.FloatsAttr("activation_beta", betas...))
	}
	back := x.boolean("go_backwards", false)
	if back {
		attrs = append(attrs, canonical.StringAttr("direction", "reverse"))
	}
	if resetAfter {
		attrs = append(attrs, canonical.IntAttr("linear_before_reset", 1))
	}
	wn := x.init("W", []int64{1, gates * units, in}, W)
	rn := x.init("R", []int64{1, gates * units, units}, R)
	bn := x.init("B", []int64{1, 2 * gates * units}, B)
	y := b.Fresh(x.name("Y"))
	yh := b.Fresh(x.name("Y_h"))
	outs := []string{y, yh}
	var yc string
	if op == "LSTM" {
		yc = b.Fresh(x.name("Y_c"))
		outs = append(outs, yc)
	}
	rin := []string{seq, wn, rn, bn}
	if len(ins) > 1 {
		// Initial states [batch, units] -> [1, batch, units].
		rin = append(rin, "")
		for i, st := range ins[1:] {
			sn, err := x.c.cl(st)
			if err != nil {
				return nil, err
			}
			rin = append(rin, b.Op("Unsqueeze", x.name(fmt.Sprintf("initial_state%d", i)), []string{sn, b.Ints("axes", 0)}))
		}
	}
	b.Node(op, rin, outs, attrs...)
	squeeze0 := func(s, base string) string {
		return b.Op("Squeeze", x.name(base), []string{s, b.Ints("axes", 0)})
	}
	var res []*kval
	if x.boolean("return_sequences", false) {
		ys := b.Op("Squeeze", x.name("Y_squeezed"), []string{y, b.Ints("axes", 1)})
		if back {
			ys = b.Op("Slice", x.name("Y_processing_order"), []string{ys, b.Ints("starts", -1), b.Ints("ends", math.MinInt64),
				b.Ints("axes", 0), b.Ints("steps", -1)})
		}
		res = append(res, &kval{cl: b.Transpose(ys, []int64{1, 0, 2}, x.name("")), rank: 3, dt: v.dt})
	} else {
		res = append(res, &kval{cl: squeeze0(yh, ""), rank: 2, dt: v.dt})
	}
	if x.boolean("return_state", false) {
		res = append(res, &kval{cl: squeeze0(yh, "state_h"), rank: 2, dt: v.dt})
		if op == "LSTM" {
			res = append(res, &kval{cl: squeeze0(yc, "state_c"), rank: 2, dt: v.dt})
		}
	}
	return res, nil
}

// transpose2D returns the [c, r] transpose of the [r, c] matrix m.
func transpose2D(m []float32, dims []int64) ([]float32, error) {
	t, err := canonical.Float32Tensor("", dims, m).Transpose([]int{1, 0})
	if err != nil {
		return nil, err
	}
	return t.Float32s()
}
