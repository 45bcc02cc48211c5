package keraslayers

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/recurrent"
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
	op := map[string]string{"SimpleRNN": "RNN", "GRU": "GRU", "LSTM": "LSTM"}[x.l.class]
	layout, err := recurrent.NewLayout(op, map[string]string{"RNN": recurrent.KerasRNN, "GRU": recurrent.KerasGRU, "LSTM": recurrent.KerasLSTM}[op])
	if err != nil {
		return nil, err
	}
	kt, err := transpose2D(k, kd)
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	rkt, err := transpose2D(rk, rd)
	if err != nil {
		return nil, fmt.Errorf("recurrent_kernel: %w", err)
	}
	W, err := layout.DataToONNX(kt)
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	R, err := layout.DataToONNX(rkt)
	if err != nil {
		return nil, fmt.Errorf("recurrent_kernel: %w", err)
	}
	B := make([]float32, 0, 2*gates*units)
	if bias == nil {
		bias = make([]float32, gates*units)
	}
	for half := 0; half < 2; half++ {
		hb := make([]float32, gates*units)
		if half == 0 || resetAfter {
			hb = bias[int64(half)*gates*units : int64(half+1)*gates*units]
		}
		ob, err := layout.DataToONNX(hb)
		if err != nil {
			return nil, fmt.Errorf("bias: %w", err)
		}
		B = append(B, ob...)
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
	back := x.boolean("go_backwards", false)
	node := recurrent.Node{Op: op, Base: x.name(""), Hidden: units, Activations: names, LinearBeforeReset: resetAfter,
		X: xin, BatchMajor: true,
		W: x.init("W", []int64{1, gates * units, in}, W),
		R: x.init("R", []int64{1, gates * units, units}, R),
		B: x.init("B", []int64{1, 2 * gates * units}, B)}
	if needAB {
		node.Alphas, node.Betas = alphas, betas
	}
	if back {
		node.Direction = "reverse"
	}
	if len(ins) > 1 {
		states := make([]string, len(ins)-1)
		for i, st := range ins[1:] {
			sn, err := x.c.cl(st)
			if err != nil {
				return nil, err
			}
			states[i] = recurrent.State(b, sn, x.name(fmt.Sprintf("initial_state%d", i)))
		}
		node.H0 = states[0]
		if len(states) > 1 {
			node.C0 = states[1]
		}
	}
	out := node.Write(b)
	squeeze0 := func(s, base string) string {
		return b.Op("Squeeze", x.name(base), []string{s, b.Ints("axes", 0)})
	}
	var res []*kval
	if x.boolean("return_sequences", false) {
		base := x.name("")
		if back {
			base = x.name("Y_time_order")
		}
		ys := recurrent.Sequence(b, out.Y, 1, true, base)
		if back {
			// Keras returns the sequence in the order it processed it.
			ys = b.Op("Slice", x.name(""), []string{ys, b.Ints("starts", -1), b.Ints("ends", math.MinInt64),
				b.Ints("axes", 1), b.Ints("steps", -1)})
		}
		res = append(res, &kval{cl: ys, rank: 3, dt: v.dt})
	} else {
		res = append(res, &kval{cl: squeeze0(out.H, ""), rank: 2, dt: v.dt})
	}
	if x.boolean("return_state", false) {
		res = append(res, &kval{cl: squeeze0(out.H, "state_h"), rank: 2, dt: v.dt})
		if op == "LSTM" {
			res = append(res, &kval{cl: squeeze0(out.C, "state_c"), rank: 2, dt: v.dt})
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
