package executor

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// hardSwishProbes are float32 values at which HardSwish and
// Mul(x, HardSigmoid(x)) could part: NaNs (quiet, signalling, negative,
// with payloads), ±Inf, ±0, subnormals, the extremes, and the values
// around the clamps at ±3 and around 0.
func hardSwishProbes() []float32 {
	var v []float32
	for _, b := range []uint32{
		0x7fc00000, 0xffc00000, 0x7fc12345, 0xffd54321, 0x7f800001, 0xff812345, 0x7fbfffff, // NaNs
		0x7f800000, 0xff800000, 0x00000000, 0x80000000, // ±Inf, ±0
		0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x80800000, // subnormals, smallest normals
		0x7f7fffff, 0xff7fffff, // ±max
	} {
		v = append(v, math.Float32frombits(b))
	}
	for _, c := range []float32{-3, 3, 0, -6, 6, 1, -1, 0.5, -0.5} {
		lo, hi := c, c
		for range 2048 {
			lo, hi = math.Nextafter32(lo, float32(math.Inf(-1))), math.Nextafter32(hi, float32(math.Inf(1)))
			v = append(v, lo, hi)
		}
	}
	return v
}

// naiveHardSwishPair is Mul(x, HardSigmoid(x; alpha=float32(1/6),
// beta=0.5)) by the ONNX definitions, each float32 operation made in
// float64 and rounded to float32 (exact products; a float32 sum rounded
// through float64 is correctly rounded), comparisons as written.
func naiveHardSwishPair(x float32) float32 {
	h := float32(float64(x) * float64(float32(1.0/6)))
	h = float32(float64(h) + 0.5)
	if h < 0 {
		h = 0
	}
	if h > 1 {
		h = 1
	}
	return float32(float64(x) * float64(h))
}

// TestHardSwishPairBits: kernels.HardSwish is, bit for bit, the Mul
// kernel applied to x and the HardSigmoid kernel's output (either
// operand order, NaN payloads included) on the probes and on random bit
// patterns, and those equal the naive reference (NaN where it is NaN).
func TestHardSwishPairBits(t *testing.T) {
	x := hardSwishProbes()
	r := rand.New(rand.NewSource(62))
	for range 1 << 18 {
		x = append(x, math.Float32frombits(r.Uint32()))
	}
	for range 1 << 16 {
		x = append(x, float32(r.NormFloat64()*4))
	}
	s := make([]float32, len(x))
	kernels.HardSigmoid(x, s, float32(1.0/6), 0.5)
	xs, sx, fused := make([]float32, len(x)), make([]float32, len(x)), make([]float32, len(x))
	kernels.MulSuffix(x, s, xs)
	kernels.MulSuffix(s, x, sx)
	kernels.HardSwish(x, fused)
	for i, v := range x {
		want := naiveHardSwishPair(v)
		f := math.Float32bits(fused[i])
		if f != math.Float32bits(xs[i]) || f != math.Float32bits(sx[i]) {
			t.Fatalf("x = %v (%#08x): HardSwish %#08x, Mul(x, HardSigmoid(x)) %#08x, Mul(HardSigmoid(x), x) %#08x",
				v, math.Float32bits(v), f, math.Float32bits(xs[i]), math.Float32bits(sx[i]))
		}
		if math.IsNaN(float64(want)) != math.IsNaN(float64(fused[i])) || !math.IsNaN(float64(want)) && f != math.Float32bits(want) {
			t.Fatalf("x = %v (%#08x): HardSwish %v (%#08x), reference %v (%#08x)", v, math.Float32bits(v), fused[i], f, want, math.Float32bits(want))
		}
	}
}

// planChains lists the plans' steps that run more than one node as their
// op types joined by "+" (fused chains), and the ops of the single
// kernel steps.
func planChains(e *Executor) (chains []string, single map[string]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	single = map[string]int{}
	for _, p := range e.plans {
		for _, st := range p.steps {
			switch st := st.(type) {
			case *fusedStep:
				var ops []string
				for _, h := range st.steps {
					ops = append(ops, h.n.OpType)
				}
				chains = append(chains, strings.Join(ops, "+"))
			case *hostStep:
				single[st.n.OpType]++
			}
		}
	}
	return chains, single
}

// TestFuseHardSwish builds y = Mul(x, HardSigmoid(x; 1/6, 0.5)) after a
// Conv (and after a Gemm, and on the graph input holding the probes) as
// torch exports HardSwish before opset 14, in both Mul operand orders;
// x also a graph output (one HardSwish step, not chained to the Conv,
// which would overwrite x); and variants that must stay two steps
// (another alpha or beta, the HardSigmoid's output also a graph output,
// the Mul's other operand not x). The fused plans run Conv+HardSwish
// (Gemm+HardSwish) as one chain or HardSwish as one step, and every
// plan's outputs over a build and two replays on 1 and 2 threads are
// bit-identical to the unfused plan's.
func TestFuseHardSwish(t *testing.T) {
	third := float32(1.0 / 6)
	cases := []struct {
		name        string
		head        string // "Conv", "Gemm" or "" (the graph input)
		alpha, beta float32
		noBeta      bool
		swap        bool // Mul(HardSigmoid(x), x)
		exposeS     bool // HardSigmoid's output is a graph output too
		exposeX     bool // x is a graph output too (the Conv cannot take the HardSwish)
		otherMul    bool // Mul(y2, HardSigmoid(x)) with y2 ≠ x
		want        string
	}{
		{name: "conv", head: "Conv", alpha: third, beta: 0.5, want: "Conv+HardSwish"},
		{name: "conv_swapped", head: "Conv", alpha: third, beta: 0.5, swap: true, want: "Conv+HardSwish"},
		{name: "conv_default_beta", head: "Conv", alpha: third, noBeta: true, want: "Conv+HardSwish"},
		{name: "gemm", head: "Gemm", alpha: third, beta: 0.5, swap: true, want: "Gemm+HardSwish"},
		{name: "input_probes", alpha: third, beta: 0.5, want: "HardSwish"},
		{name: "input_probes_swapped", alpha: third, beta: 0.5, swap: true, want: "HardSwish"},
		{name: "conv_output_kept", head: "Conv", alpha: third, beta: 0.5, exposeX: true, want: "HardSwish"},
		{name: "alpha_off", head: "Conv", alpha: math.Nextafter32(third, 1), beta: 0.5},
		{name: "beta_off", head: "Conv", alpha: third, beta: 0.25},
		{name: "sigmoid_output", head: "Conv", alpha: third, beta: 0.5, exposeS: true},
		{name: "other_operand", head: "Conv", alpha: third, beta: 0.5, otherMul: true},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(62))
			m, g := newModel(13)
			in := must(g.AddInput("in", nil))
			var feed *canonical.Tensor
			var x *canonical.Value
			node := nodeAdder(t, g)
			switch cs.head {
			case "Conv":
				// Values spread over the clamps at ±3.
				feed, _ = f16Tensor(t, "in", canonical.Float, []int{1, 5, 23, 19}, r)
				wt, _ := f16Tensor(t, "w", canonical.Float, []int{7, 5, 3, 3}, r)
				bt, _ := f16Tensor(t, "b", canonical.Float, []int{7}, r)
				x = node("Conv", []*canonical.Value{in, must(g.AddInitializer(wt)), must(g.AddInitializer(bt))}, canonical.IntsAttr("pads", 1, 1, 1, 1))
			case "Gemm":
				feed, _ = f16Tensor(t, "in", canonical.Float, []int{3, 40}, r)
				wt, _ := f16Tensor(t, "w", canonical.Float, []int{40, 33}, r)
				x = node("Gemm", []*canonical.Value{in, must(g.AddInitializer(wt))}, canonical.FloatAttr("alpha", 4))
			default:
				p := hardSwishProbes()
				feed, x = f32Tensor("in", []int64{int64(len(p))}, p...), in
			}
			attrs := []*canonical.Attribute{canonical.FloatAttr("alpha", cs.alpha)}
			if !cs.noBeta {
				attrs = append(attrs, canonical.FloatAttr("beta", cs.beta))
			}
			s := node("HardSigmoid", []*canonical.Value{x}, attrs...)
			checkGatedMul(t, m, g, node, feed, x, s, gatedMul{
				swap: cs.swap, exposeS: cs.exposeS, exposeX: cs.exposeX, otherMul: cs.otherMul,
				want: cs.want, gate: "HardSigmoid", fused: "HardSwish"})
		})
	}
}
