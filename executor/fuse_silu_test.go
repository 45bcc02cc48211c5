package executor

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// TestSiLUPairBits: kernels.SiLU (out of place and in place, lengths
// across its 256-element blocks) gives the bits of the Mul kernel applied
// to x and the Sigmoid kernel's output, in either operand order, on the
// probes (NaNs, ±Inf, ±0, subnormals) and random bit patterns and normals.
func TestSiLUPairBits(t *testing.T) {
	x := hardSwishProbes()
	r := rand.New(rand.NewSource(63))
	for range 1 << 16 {
		x = append(x, math.Float32frombits(r.Uint32()))
	}
	for range 1<<14 + 77 {
		x = append(x, float32(r.NormFloat64()*8))
	}
	s := make([]float32, len(x))
	kernels.Sigmoid(x, s)
	xs, sx := make([]float32, len(x)), make([]float32, len(x))
	kernels.MulSuffix(x, s, xs)
	kernels.MulSuffix(s, x, sx)
	for _, n := range []int{0, 1, 7, 9, 255, 256, 257, 1000, len(x)} {
		fused := make([]float32, n)
		kernels.SiLU(x[:n], fused)
		inPlace := append([]float32(nil), x[:n]...)
		kernels.SiLU(inPlace, inPlace)
		for i := range fused {
			f := math.Float32bits(fused[i])
			if f != math.Float32bits(xs[i]) || f != math.Float32bits(sx[i]) || f != math.Float32bits(inPlace[i]) {
				t.Fatalf("n %d, x = %v (%#08x): SiLU %#08x (in place %#08x), Mul(x, Sigmoid(x)) %#08x, Mul(Sigmoid(x), x) %#08x",
					n, x[i], math.Float32bits(x[i]), f, math.Float32bits(inPlace[i]), math.Float32bits(xs[i]), math.Float32bits(sx[i]))
			}
		}
	}
}

// TestFuseSiLU builds y = Mul(x, Sigmoid(x)) after a Conv (and on the
// graph input holding the probes) as torch exports SiLU, in both Mul
// operand orders; x also a graph output (one Swish step, not chained to
// the Conv); and variants that must stay two steps (the Sigmoid's output
// also a graph output, the Mul's other operand not x). The fused plans
// run Conv+Swish as one chain or Swish as one step, and every plan's
// outputs over a build and two replays on 1 and 2 threads are
// bit-identical to the unfused plan's.
func TestFuseSiLU(t *testing.T) {
	cases := []struct {
		name     string
		conv     bool
		swap     bool // Mul(Sigmoid(x), x)
		exposeS  bool // Sigmoid's output is a graph output too
		exposeX  bool // x is a graph output too
		otherMul bool // Mul(Relu(x), Sigmoid(x))
		want     string
	}{
		{name: "conv", conv: true, want: "Conv+Swish"},
		{name: "conv_swapped", conv: true, swap: true, want: "Conv+Swish"},
		{name: "input_probes", want: "Swish"},
		{name: "conv_output_kept", conv: true, exposeX: true, want: "Swish"},
		{name: "sigmoid_output", conv: true, exposeS: true},
		{name: "other_operand", conv: true, otherMul: true},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(63))
			m, g := newModel(13)
			in := must(g.AddInput("in", nil))
			var feed *canonical.Tensor
			var x *canonical.Value
			node := nodeAdder(t, g)
			if cs.conv {
				feed, _ = f16Tensor(t, "in", canonical.Float, []int{1, 5, 23, 19}, r)
				wt, _ := f16Tensor(t, "w", canonical.Float, []int{7, 5, 3, 3}, r)
				bt, _ := f16Tensor(t, "b", canonical.Float, []int{7}, r)
				x = node("Conv", []*canonical.Value{in, must(g.AddInitializer(wt)), must(g.AddInitializer(bt))}, canonical.IntsAttr("pads", 1, 1, 1, 1))
			} else {
				p := hardSwishProbes()
				feed, x = f32Tensor("in", []int64{int64(len(p))}, p...), in
			}
			s := node("Sigmoid", []*canonical.Value{x})
			checkGatedMul(t, m, g, node, feed, x, s, gatedMul{
				swap: cs.swap, exposeS: cs.exposeS, exposeX: cs.exposeX, otherMul: cs.otherMul,
				want: cs.want, gate: "Sigmoid", fused: "Swish"})
		})
	}
}

// gatedMul is one case of a gate fusion test: y = Mul(x, gate(x)) (or
// with the operands swapped, gate's output or x also a graph output, or
// the Mul's other operand not x) and the plan it must give: want is the
// chain ("Conv+"+fused), a single fused step (fused) or "" (no fusion).
type gatedMul struct {
	swap, exposeS, exposeX, otherMul bool
	want, gate, fused                string
}

// checkGatedMul finishes g with the Mul of c on x and s = gate(x), runs
// it unfused and fused on 1 and 2 threads (a build and two replays
// each), checks each plan's steps against c.want and that every plan's
// outputs are bit-identical to the unfused plan's.
func checkGatedMul(t *testing.T, m *canonical.Model, g *canonical.Graph, node func(string, []*canonical.Value, ...*canonical.Attribute) *canonical.Value, feed *canonical.Tensor, x, s *canonical.Value, c gatedMul) {
	t.Helper()
	other := x
	if c.otherMul {
		other = node("Relu", []*canonical.Value{x})
	}
	ins := []*canonical.Value{other, s}
	if c.swap {
		ins[0], ins[1] = s, other
	}
	g.Outputs = []*canonical.Value{node("Mul", ins)}
	if c.exposeS {
		g.Outputs = append(g.Outputs, s)
	}
	if c.exposeX {
		g.Outputs = append(g.Outputs, x)
	}
	var got [3][]uint32
	for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}} {
		ex, outs := runPlan(t, m, opts, []*canonical.Tensor{feed}, 3)
		for _, o := range outs {
			for _, v := range o {
				got[k] = append(got[k], math.Float32bits(v))
			}
		}
		chains, single := planChains(ex)
		fused := single[c.fused] > 0
		for _, ch := range chains {
			fused = fused || strings.Contains(ch, c.fused)
		}
		switch {
		case k == 0 || c.want == "":
			if fused {
				t.Fatalf("%+v: %s in the plan (chains %v)", opts, c.fused, chains)
			}
		case c.want == c.fused:
			if single[c.fused] != 1 || single[c.gate]+single["Mul"] != 0 || len(chains) != 0 {
				t.Fatalf("%+v: kernel steps %v and chains %v, want one %s step", opts, single, chains, c.fused)
			}
		default:
			if len(chains) != 1 || chains[0] != c.want || single[c.gate]+single["Mul"] != 0 {
				t.Fatalf("%+v: chains %v and steps %v, want the chain %s", opts, chains, single, c.want)
			}
		}
		ex.Close()
	}
	for k := 1; k < 3; k++ {
		if len(got[k]) != len(got[0]) {
			t.Fatalf("%d output values fused (%d), %d unfused", len(got[k]), k, len(got[0]))
		}
		for i, v := range got[0] {
			if got[k][i] != v {
				t.Fatalf("value %d: fused (%d) %#08x, unfused %#08x", i, k, got[k][i], v)
			}
		}
	}
}
