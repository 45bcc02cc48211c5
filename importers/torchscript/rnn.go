package torchscript

import (
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/recurrent"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
)

// rnn maps aten::lstm and aten::gru (the dense-input overload: input, hx,
// params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first) to one ONNX LSTM or GRU per layer, the gates reordered
// from torch's (i f g o; r z n) to ONNX's (i o f c; z r h), GRU with
// linear_before_reset as torch computes it.
func (c *conv) rnn(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	if len(args) < 9 {
		return nil, nil
	}
	x, ok := args[0].(*tensor)
	if !ok {
		return nil, nil // the packed-sequence overload
	}
	var hx []*tensor
	switch h := args[1].(type) {
	case *list:
		for _, it := range h.items {
			t, ok := it.(*tensor)
			if !ok {
				return nil, c.errAt(p, "%s: hidden state %s", name, describe(it))
			}
			hx = append(hx, t)
		}
	case *tensor:
		hx = []*tensor{h}
	default:
		return nil, c.errAt(p, "%s: hidden state %s", name, describe(args[1]))
	}
	pl, ok := args[2].(*list)
	if !ok {
		return nil, c.errAt(p, "%s: weights %s", name, describe(args[2]))
	}
	var ws []*tensor
	for _, it := range pl.items {
		t, ok := it.(*tensor)
		if !ok {
			return nil, c.errAt(p, "%s: weight %s", name, describe(it))
		}
		ws = append(ws, t)
	}
	hasBias, _ := args[3].(bool)
	layers, _ := args[4].(int64)
	bidir, _ := args[7].(bool)
	batchFirst, _ := args[8].(bool)
	dirs := int64(1)
	if bidir {
		dirs = 2
	}
	per := 2
	if hasBias {
		per = 4
	}
	if layers <= 0 || int64(len(ws)) != layers*dirs*int64(per) || x.rank() != 3 {
		return nil, c.errAt(p, "%s: %d weights for %d layers (proj_size is not mapped)", name, len(ws), layers)
	}
	if (name == "lstm" && len(hx) != 2) || (name == "gru" && len(hx) != 1) {
		return nil, c.errAt(p, "%s: %d hidden states", name, len(hx))
	}
	op, order := "LSTM", recurrent.TorchLSTM
	if name == "gru" {
		op, order = "GRU", recurrent.TorchGRU
	}
	layout, err := recurrent.NewLayout(op, order)
	if err != nil {
		return nil, c.errAt(p, "%s: %v", name, err)
	}
	gates := int64(layout.Gates())
	hidden := ws[1].dims[1]
	seq := x
	if batchFirst {
		if seq, err = c.transpose(p, x, []int64{1, 0, 2}); err != nil {
			return nil, err
		}
	}
	T, B := seq.dims[0], seq.dims[1]
	reorder := func(w *tensor) string { return layout.GraphToONNX(c.b, w.name, w.dims[0]/gates) }
	cat := func(v []string, base string) string {
		if len(v) == 1 {
			return v[0]
		}
		return c.b.Op("Concat", base, v, canonical.IntAttr("axis", 0))
	}
	unsqueeze := func(v, base string) string { return c.b.Op("Unsqueeze", base, []string{v, c.b.Ints("axes", 0)}) }
	var hOut, cOut []string
	for l := int64(0); l < layers; l++ {
		var W, R, Bs []string
		for d := int64(0); d < dirs; d++ {
			k := int((l*dirs + d) * int64(per))
			W = append(W, unsqueeze(reorder(ws[k]), "W"))
			R = append(R, unsqueeze(reorder(ws[k+1]), "R"))
			if hasBias {
				Bs = append(Bs, unsqueeze(cat([]string{reorder(ws[k+2]), reorder(ws[k+3])}, "B"), "B"))
			}
		}
		sliceState := func(h *tensor) string {
			return c.b.Op("Slice", "h0", []string{h.name, c.b.Ints("s", l*dirs), c.b.Ints("e", (l+1)*dirs), c.b.Ints("a", 0)})
		}
		node := recurrent.Node{Op: op, Base: name, Hidden: hidden, X: seq.name, W: cat(W, "W"), R: cat(R, "R"),
			H0: sliceState(hx[0]), LinearBeforeReset: op == "GRU"}
		if hasBias {
			node.B = cat(Bs, "B")
		}
		if op == "LSTM" {
			node.C0 = sliceState(hx[1])
		}
		if bidir {
			node.Direction = "bidirectional"
		}
		out := node.Write(c.b)
		hOut = append(hOut, out.H)
		if op == "LSTM" {
			cOut = append(cOut, out.C)
		}
		seq = &tensor{name: recurrent.Sequence(c.b, out.Y, dirs, false, name+"_seq"), dt: x.dt, dims: []int64{T, B, dirs * hidden}}
	}
	out := seq
	if batchFirst {
		if out, err = c.transpose(p, seq, []int64{1, 0, 2}); err != nil {
			return nil, err
		}
	}
	catState := func(v []string) *tensor {
		n := v[0]
		if len(v) > 1 {
			n = c.b.Op("Concat", "state", v, canonical.IntAttr("axis", 0))
		}
		return &tensor{name: n, dt: x.dt, dims: []int64{layers * dirs, B, hidden}}
	}
	if op == "GRU" {
		return &tuple{items: []value{out, catState(hOut)}}, nil
	}
	return &tuple{items: []value{out, catState(hOut), catState(cOut)}}, nil
}

// lstmCell maps aten::lstm_cell(input [B,I], [h, c], w_ih, w_hh, b_ih,
// b_hh) to its equations: gates = x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh split
// in torch's order i f g o, one recurrent.Step.
func (c *conv) lstmCell(p fts.Pos, args []value) (value, error) {
	if len(args) < 4 {
		return nil, nil
	}
	x, ok := args[0].(*tensor)
	hc, ok2 := args[1].(*list)
	wih, ok3 := args[2].(*tensor)
	whh, ok4 := args[3].(*tensor)
	if !ok || !ok2 || !ok3 || !ok4 || len(hc.items) != 2 || x.rank() != 2 {
		return nil, c.errAt(p, "lstm_cell of %s", describe(&tuple{items: args}))
	}
	h, ok := hc.items[0].(*tensor)
	cs, ok2 := hc.items[1].(*tensor)
	if !ok || !ok2 {
		return nil, c.errAt(p, "lstm_cell state %s", describe(hc))
	}
	B, H := x.dims[0], whh.dims[1]
	lin := func(in, w *tensor, b value) *tensor {
		wt := c.out("Transpose", "wt", []string{w.name}, w.dt, []int64{w.dims[1], w.dims[0]}, canonical.IntsAttr("perm", []int64{1, 0}...))
		y := c.out("MatMul", "mm", []string{in.name, wt.name}, x.dt, []int64{B, 4 * H})
		if bt, ok := b.(*tensor); ok {
			y = c.out("Add", "bias", []string{y.name, bt.name}, x.dt, y.dims)
		}
		return y
	}
	var bih, bhh value
	if len(args) > 4 {
		bih = args[4]
	}
	if len(args) > 5 {
		bhh = args[5]
	}
	g := c.out("Add", "gates", []string{lin(x, wih, bih).name, lin(h, whh, bhh).name}, x.dt, []int64{B, 4 * H})
	part := func(k int64) string {
		return c.b.Op("Slice", "gate", []string{g.name, c.b.Ints("s", k*H), c.b.Ints("e", (k+1)*H), c.b.Ints("a", 1)})
	}
	h2, c2, err := recurrent.Step{Base: "lstm_cell", I: part(0), F: part(1), G: part(2), O: part(3), Cell: cs.name}.Write(c.b)
	if err != nil {
		return nil, c.errAt(p, "lstm_cell: %v", err)
	}
	state := func(n string) *tensor { return &tensor{name: n, dt: x.dt, dims: []int64{B, H}} }
	return &tuple{items: []value{state(h2), state(c2)}}, nil
}

// atan2 is atan(y/x) moved to the quadrant of (x, y): +π when x < 0 and
// y ≥ 0, −π when x < 0 and y < 0, ±π/2 when x = 0.
func (c *conv) atan2(y, x *tensor) *tensor {
	dims, _ := broadcast(y.dims, x.dims)
	zero, _ := c.constOf(0.0, x.dt)
	pi, _ := c.constOf(3.141592653589793, x.dt)
	halfPi, _ := c.constOf(1.5707963267948966, x.dt)
	q := c.out("Div", "yx", []string{y.name, x.name}, x.dt, dims)
	a := c.out("Atan", "atan", []string{q.name}, x.dt, dims)
	xneg := c.out("Less", "xneg", []string{x.name, zero.name}, canonical.Bool, x.dims)
	yneg := c.out("Less", "yneg", []string{y.name, zero.name}, canonical.Bool, y.dims)
	xzero := c.out("Equal", "xzero", []string{x.name, zero.name}, canonical.Bool, x.dims)
	negPi := c.out("Neg", "negpi", []string{pi.name}, x.dt, nil)
	shift := c.out("Where", "shift", []string{yneg.name, negPi.name, pi.name}, x.dt, y.dims)
	moved := c.out("Add", "moved", []string{a.name, shift.name}, x.dt, dims)
	r := c.out("Where", "q", []string{xneg.name, moved.name, a.name}, x.dt, dims)
	negHalf := c.out("Neg", "neghalf", []string{halfPi.name}, x.dt, nil)
	axis := c.out("Where", "axis", []string{yneg.name, negHalf.name, halfPi.name}, x.dt, y.dims)
	return c.out("Where", "atan2", []string{xzero.name, axis.name, r.name}, x.dt, dims)
}
