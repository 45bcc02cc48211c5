package torchscript

import (
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/importers/tfops/onnxb"
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
	gates := int64(4)
	order := []int{0, 3, 1, 2} // torch i f g o -> onnx i o f c
	op := "LSTM"
	if name == "gru" {
		gates, order, op = 3, []int{1, 0, 2}, "GRU"
	}
	hidden := ws[1].dims[1]
	seq := x
	if batchFirst {
		var err error
		if seq, err = c.transpose(p, x, []int64{1, 0, 2}); err != nil {
			return nil, err
		}
	}
	T, B := seq.dims[0], seq.dims[1]
	reorder := func(w *tensor) string {
		var parts []string
		rows := w.dims[0] / gates
		for g := int64(0); g < gates; g++ {
			parts = append(parts, c.b.Fresh("gate"))
		}
		sizes := make([]int64, gates)
		for i := range sizes {
			sizes[i] = rows
		}
		c.b.Node("Split", []string{w.name, c.b.Ints("split", sizes...)}, parts, onnxb.Int("axis", 0))
		var in []string
		for _, o := range order {
			in = append(in, parts[o])
		}
		return c.b.Op("Concat", "w_onnx", in, onnxb.Int("axis", 0))
	}
	var hOut, cOut []string
	for l := int64(0); l < layers; l++ {
		var W, R, Bs []string
		for d := int64(0); d < dirs; d++ {
			k := int((l*dirs + d) * int64(per))
			W = append(W, c.b.Op("Unsqueeze", "W", []string{reorder(ws[k]), c.b.Ints("axes", 0)}))
			R = append(R, c.b.Op("Unsqueeze", "R", []string{reorder(ws[k+1]), c.b.Ints("axes", 0)}))
			if hasBias {
				b := c.b.Op("Concat", "B", []string{reorder(ws[k+2]), reorder(ws[k+3])}, onnxb.Int("axis", 0))
				Bs = append(Bs, c.b.Op("Unsqueeze", "B", []string{b, c.b.Ints("axes", 0)}))
			}
		}
		cat := func(v []string, base string) string {
			if len(v) == 1 {
				return v[0]
			}
			return c.b.Op("Concat", base, v, onnxb.Int("axis", 0))
		}
		sliceState := func(h *tensor) string {
			return c.b.Op("Slice", "h0", []string{h.name, c.b.Ints("s", l*dirs), c.b.Ints("e", (l+1)*dirs), c.b.Ints("a", 0)})
		}
		bias := ""
		if hasBias {
			bias = cat(Bs, "B")
		}
		in := []string{seq.name, cat(W, "W"), cat(R, "R"), bias, "", sliceState(hx[0])}
		if op == "LSTM" {
			in = append(in, sliceState(hx[1]))
		}
		y, yh := c.b.Fresh(name+"_y"), c.b.Fresh(name+"_h")
		outs := []string{y, yh}
		attrs := []*onnxpbAttr{onnxb.Int("hidden_size", hidden)}
		if bidir {
			attrs = append(attrs, onnxb.String("direction", "bidirectional"))
		}
		if op == "GRU" {
			attrs = append(attrs, onnxb.Int("linear_before_reset", 1))
		} else {
			yc := c.b.Fresh(name + "_c")
			outs = append(outs, yc)
			cOut = append(cOut, yc)
		}
		c.b.Node(op, in, outs, attrs...)
		hOut = append(hOut, yh)
		// Y [T, dirs, B, H] -> [T, B, dirs*H]
		yt := &tensor{name: y, dt: x.dt, dims: []int64{T, dirs, B, hidden}}
		if dirs == 2 {
			var err error
			if yt, err = c.transpose(p, yt, []int64{0, 2, 1, 3}); err != nil {
				return nil, err
			}
		}
		seq = c.reshape(yt, []int64{T, B, dirs * hidden})
	}
	out := seq
	if batchFirst {
		var err error
		if out, err = c.transpose(p, seq, []int64{1, 0, 2}); err != nil {
			return nil, err
		}
	}
	catState := func(v []string) *tensor {
		n := v[0]
		if len(v) > 1 {
			n = c.b.Op("Concat", "state", v, onnxb.Int("axis", 0))
		}
		return &tensor{name: n, dt: x.dt, dims: []int64{layers * dirs, B, hidden}}
	}
	if op == "GRU" {
		return &tuple{items: []value{out, catState(hOut)}}, nil
	}
	return &tuple{items: []value{out, catState(hOut), catState(cOut)}}, nil
}
