// Package recurrent is the one place that knows how ONNX's recurrent ops
// (LSTM, GRU, RNN) stack their gates and lay out their weights, for every
// importer that writes one and every exporter that reads one: a
// framework's gate order against ONNX's (Layout), the op's node with its
// initial states and its sequence output in either major order (Node,
// Sequence), and one LSTM step written out in plain ops, for what the op
// cannot express (Step).
package recurrent

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// The gate orders of the frameworks, as onnxspec.GateOrder takes them:
// Keras, TFLite and PyTorch stack an LSTM's gates as input, forget, cell,
// output (PyTorch's g is ONNX's c); Keras stacks a GRU's as update, reset,
// hidden, PyTorch as reset, update, new (ONNX's h).
const (
	KerasLSTM  = "ifco"
	KerasGRU   = "zrh"
	KerasRNN   = "h"
	TorchLSTM  = "ifco"
	TorchGRU   = "rzh"
	TFLiteLSTM = "ifco"
)

// A Layout is a framework's gate order for one ONNX recurrent op.
type Layout struct {
	op    string
	order string
	// perm[j] is the framework's position of ONNX gate j.
	perm []int
}

// NewLayout returns the layout of op ("LSTM", "GRU", "RNN") whose gates a
// framework stacks in order (one of the constants, or the letters of
// onnxspec.GateOrder).
func NewLayout(op, order string) (Layout, error) {
	perm, err := onnxspec.GateOrder(op, order)
	if err != nil {
		return Layout{}, fmt.Errorf("recurrent: %w", err)
	}
	return Layout{op: op, order: order, perm: perm}, nil
}

// Op is the ONNX op of the layout.
func (l Layout) Op() string { return l.op }

// Gates is how many gates the op has.
func (l Layout) Gates() int { return len(l.perm) }

// Letter is the framework's letter of its gate k ("i", "f", "c", "o" for
// an LSTM in Keras's order).
func (l Layout) Letter(k int) string { return l.order[k : k+1] }

// ONNXGate is the ONNX position of the framework's gate k.
func (l Layout) ONNXGate(k int) int {
	for j, p := range l.perm {
		if p == k {
			return j
		}
	}
	return -1
}

// ToONNX returns the items of the framework's gate order (one a gate) in
// ONNX's order.
func ToONNX[T any](l Layout, items []T) ([]T, error) {
	if len(items) != len(l.perm) {
		return nil, fmt.Errorf("recurrent: %d items for the %d gates of %s", len(items), len(l.perm), l.op)
	}
	out := make([]T, len(items))
	for j, k := range l.perm {
		out[j] = items[k]
	}
	return out, nil
}

// Blocks cuts data, the values of every gate one block after another, into
// its gates' blocks.
func (l Layout) Blocks(data []float32) ([][]float32, error) {
	g := len(l.perm)
	if len(data)%g != 0 {
		return nil, fmt.Errorf("recurrent: %d values do not split into the %d gates of %s", len(data), g, l.op)
	}
	n := len(data) / g
	out := make([][]float32, g)
	for k := range out {
		out[k] = data[k*n : (k+1)*n]
	}
	return out, nil
}

// DataToONNX reorders data, the values of every gate one block after
// another in the framework's order (a [gates*units, cols] weight row-major,
// or a bias), into ONNX's order.
func (l Layout) DataToONNX(data []float32) ([]float32, error) {
	blocks, err := l.Blocks(data)
	if err != nil {
		return nil, err
	}
	onnx, err := ToONNX(l, blocks)
	if err != nil {
		return nil, err
	}
	out := make([]float32, 0, len(data))
	for _, b := range onnx {
		out = append(out, b...)
	}
	return out, nil
}

// GraphToONNX reorders the gates of w, a graph value that stacks them on
// axis 0 in the framework's order, each rows long, into ONNX's order.
func (l Layout) GraphToONNX(b *build.Builder, w string, rows int64) string {
	sizes := make([]int64, len(l.perm))
	for i := range sizes {
		sizes[i] = rows
	}
	parts := b.OpN("Split", "gate", len(l.perm), []string{w, b.Ints("split", sizes...)}, canonical.IntAttr("axis", 0))
	onnx, _ := ToONNX(l, parts) // one part a gate
	return b.Op("Concat", "w_onnx", onnx, canonical.IntAttr("axis", 0))
}

// A Node is one ONNX LSTM, GRU or RNN to write.
type Node struct {
	// Op is "LSTM", "GRU" or "RNN"; Base names the node's outputs.
	Op, Base string
	// Hidden is hidden_size.
	Hidden int64
	// Direction is "forward" (or ""), "reverse" or "bidirectional".
	Direction string
	// Activations, with their alphas and betas when any is given, are the
	// op's activations; none, ONNX's defaults.
	Activations   []string
	Alphas, Betas []float32
	// LinearBeforeReset is a GRU's linear_before_reset = 1 (PyTorch's, and
	// Keras's reset_after).
	LinearBeforeReset bool
	// X is the sequence, [time, batch, input], or [batch, time, input] when
	// BatchMajor (transposed in: ONNX Runtime implements layout 0 only).
	X          string
	BatchMajor bool
	// W, R, B, P are the op's weights, in ONNX's layout and gate order
	// (Layout); B and P may be "".
	W, R, B, P string
	// H0 and C0 are the initial states, [dirs, batch, hidden], or "".
	H0, C0 string
}

// Out are the outputs of a written Node: Y [time, dirs, batch, hidden],
// Y_h [dirs, batch, hidden] and, of an LSTM, Y_c.
type Out struct{ Y, H, C string }

// Dirs is how many directions n runs.
func (n Node) Dirs() int64 {
	if n.Direction == "bidirectional" {
		return 2
	}
	return 1
}

// Write writes n with b.
func (n Node) Write(b *build.Builder) Out {
	x := n.X
	if n.BatchMajor {
		x = b.Transpose(x, []int64{1, 0, 2}, n.Base+"_time_major")
	}
	in := []string{x, n.W, n.R, n.B, "", n.H0}
	if n.Op == "LSTM" {
		in = append(in, n.C0, n.P)
	}
	for len(in) > 3 && in[len(in)-1] == "" {
		in = in[:len(in)-1]
	}
	attrs := []*canonical.Attribute{canonical.IntAttr("hidden_size", n.Hidden)}
	if n.Direction != "" && n.Direction != "forward" {
		attrs = append(attrs, canonical.StringAttr("direction", n.Direction))
	}
	if len(n.Activations) > 0 {
		attrs = append(attrs, canonical.StringsAttr("activations", n.Activations...))
	}
	if len(n.Alphas) > 0 {
		attrs = append(attrs, canonical.FloatsAttr("activation_alpha", n.Alphas...), canonical.FloatsAttr("activation_beta", n.Betas...))
	}
	if n.LinearBeforeReset {
		attrs = append(attrs, canonical.IntAttr("linear_before_reset", 1))
	}
	out := Out{Y: b.Fresh(n.Base + "_Y"), H: b.Fresh(n.Base + "_Y_h")}
	outs := []string{out.Y, out.H}
	if n.Op == "LSTM" {
		out.C = b.Fresh(n.Base + "_Y_c")
		outs = append(outs, out.C)
	}
	b.Node(n.Op, in, outs, attrs...)
	return out
}

// State is a framework's initial state s, [batch, hidden], as the op
// takes it: [1, batch, hidden].
func State(b *build.Builder, s, base string) string {
	return b.Op("Unsqueeze", base, []string{s, b.Ints("axes", 0)})
}

// Sequence is Y, the op's [time, dirs, batch, hidden] output, as a
// framework's sequence, named base: [time, batch, dirs*hidden] (the
// directions' states side by side), or [batch, time, dirs*hidden] when
// batchMajor.
func Sequence(b *build.Builder, y string, dirs int64, batchMajor bool, base string) string {
	return sequence(b, y, dirs, batchMajor, base, func(op string, in []string, attrs ...*canonical.Attribute) string {
		return b.Op(op, base, in, attrs...)
	})
}

// SequenceTo is Sequence written into the value out, a name the caller
// holds already.
func SequenceTo(b *build.Builder, y string, dirs int64, batchMajor bool, out string) {
	sequence(b, y, dirs, batchMajor, out, func(op string, in []string, attrs ...*canonical.Attribute) string {
		return b.OpTo(op, out, in, attrs...)
	})
}

// sequence writes Sequence, its last op with last.
func sequence(b *build.Builder, y string, dirs int64, batchMajor bool, base string, last func(op string, in []string, attrs ...*canonical.Attribute) string) string {
	var seq string
	switch {
	case dirs == 1 && !batchMajor:
		return last("Squeeze", []string{y, b.Ints("axes", 1)})
	case dirs == 1:
		seq = b.Op("Squeeze", base+"_squeezed", []string{y, b.Ints("axes", 1)})
	default:
		t := b.Transpose(y, []int64{0, 2, 1, 3}, base+"_directions_last")
		shape := []string{t, b.Ints("shape", 0, 0, -1)}
		if !batchMajor {
			return last("Reshape", shape)
		}
		seq = b.Op("Reshape", base+"_directions_joined", shape)
	}
	return last("Transpose", []string{seq}, canonical.IntsAttr("perm", 1, 0, 2))
}

// A Step is one LSTM step written out in plain ops, for what the op
// cannot express (a state kept quantized between steps, a cell clip, a
// projection, coupled gates) or a framework's single cell:
// c' = σ(f)·c + σ(i)·act(g); h' = σ(o)·act(c'), peepholes added to the
// gates' inputs (i and f see c, o sees c'). The constants it adds (CIFG's
// 1, the clip bounds) are float32: a step of another element type uses
// neither.
type Step struct {
	// Base names the step's values.
	Base string
	// I, F, G, O are the gates' pre-activations (x·Wᵀ + h·Rᵀ and the
	// biases); I is "" for coupled input and forget gates (i = 1 − f).
	I, F, G, O string
	// Cell is the previous cell state.
	Cell string
	// Act is the cell's activation, an ONNX op ("" is Tanh).
	Act string
	// PI, PF, PO are the peephole weights, or "".
	PI, PF, PO string
	// Clip, when positive, clips the new cell state to [−Clip, Clip]
	// (TFLite's cell_clip).
	Clip float32
	// Keep, when set, is applied to the new cell state before anything
	// uses it (a quantized LSTM rounds its state).
	Keep func(c string) (string, error)
}

// Write writes the step with b and returns the new hidden and cell states.
func (s Step) Write(b *build.Builder) (h, c string, err error) {
	act := s.Act
	if act == "" {
		act = "Tanh"
	}
	name := func(n string) string { return s.Base + "_" + n }
	peep := func(z, p, cell, n string) string {
		if p == "" {
			return z
		}
		return b.Op("Add", name(n+"_with_peep"), []string{z, b.Op("Mul", name(n+"_peep"), []string{p, cell})})
	}
	sig := func(v, n string) string { return b.Op("Sigmoid", name(n), []string{v}) }
	f := sig(peep(s.F, s.PF, s.Cell, "f"), "forget")
	var i string
	if s.I == "" {
		i = b.Op("Sub", name("input"), []string{b.Scalar(name("one"), 1), f})
	} else {
		i = sig(peep(s.I, s.PI, s.Cell, "i"), "input")
	}
	g := b.Op(act, name("cell_input"), []string{s.G})
	fc := b.Op("Mul", name("fc"), []string{f, s.Cell})
	ig := b.Op("Mul", name("ig"), []string{i, g})
	c = b.Op("Add", name("c"), []string{fc, ig})
	if s.Clip > 0 {
		c = b.Op("Clip", name("c_clipped"), []string{c, b.Scalar(name("c_min"), -s.Clip), b.Scalar(name("c_max"), s.Clip)})
	}
	if s.Keep != nil {
		if c, err = s.Keep(c); err != nil {
			return "", "", err
		}
	}
	o := sig(peep(s.O, s.PO, c, "o"), "output")
	h = b.Op("Mul", name("h"), []string{o, b.Op(act, name("c_act"), []string{c})})
	return h, c, nil
}
