package tflite

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// MULTINOMIAL and STABLEHLO_RNG_BIT_GENERATOR, reproduced as the
// interpreter computes them on its first run (see ops_random.go for the
// RANDOM_* ops and their Philox).
//
// MULTINOMIAL (TFLite's random kernels, after TensorFlow's) draws from
// Philox-4x32-10 seeded by (seed, seed2), two 32-bit values per sample
// taken in order across the batches, each pair made a double in [0, 1)
// (Uint64ToDouble: 52 mantissa bits). For each row it sums, in double,
// Exp(logit - max) over the finite logits, and answers the count of
// cumulative sums not above total * uniform (upper_bound). The importer
// computes the first run's uniforms as a double constant; the graph does
// the rest in double (CumSum accumulates in order). Seeds (0, 0) draw
// nondeterministic values: refused.
//
// STABLEHLO_RNG_BIT_GENERATOR fills its output from Philox-4x32-10 or
// Threefry-2x32-20 on the state's key and counter. With a constant
// initial state both outputs are constants, which the importer writes;
// a state computed by the graph is refused.

// uint64ToDouble is TensorFlow's Uint64ToDouble: the low 20 bits of x0
// and x1 as the mantissa of a double in [1, 2), minus 1.
func uint64ToDouble(x0, x1 uint32) float64 {
	man := uint64(x0&0xfffff)<<32 | uint64(x1)
	return math.Float64frombits(1023<<52|man) - 1
}

func (c *converter) multinomial(o *operator) error {
	seed, seed2, err := randomSeeds(o, 2)
	if err != nil {
		return err
	}
	logits := c.tensor(o.inputs[0])
	if logits.typ != fb.TensorTypeFLOAT32 {
		return fmt.Errorf("logits %q are %s (float32 only)", logits.name, logits.typ)
	}
	if len(logits.shape) != 2 || logits.shape[0] < 0 || logits.shape[1] < 1 {
		return fmt.Errorf("logits %q have shape %v, want a static [batch, categories]", logits.name, logits.shape)
	}
	batch := logits.shape[0]
	ns, err := c.constInts(o.inputs[1])
	if err != nil {
		return fmt.Errorf("num_samples: %w", err)
	}
	if len(ns) != 1 || ns[0] < 0 || batch*ns[0] > maxRandomElements {
		return fmt.Errorf("num_samples %v for %d batches (at most %d samples in all)", ns, batch, maxRandomElements)
	}
	n := ns[0]
	out := c.tensor(o.outputs[0])
	odt, err := onnxType(out.typ)
	if err != nil || (odt != canonical.Int32 && odt != canonical.Int64) {
		return fmt.Errorf("output %q is %s, want INT32 or INT64", out.name, out.typ)
	}
	p := newPhilox(seed, seed2)
	u := make([]float64, 0, batch*n+1)
	for int64(len(u)) < batch*n {
		w := p.next()
		u = append(u, uint64ToDouble(w[0], w[1]), uint64ToDouble(w[2], w[3]))
	}
	u = u[:batch*n]
	x, err := c.rawValue(int(o.inputs[0]), native)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		axis := func(a int64) string { return c.constI64(c.unique(y+"_axis"), []int64{a}) }
		finite := c.b.Op("Not", y+"_finite", []string{c.b.Op("Or", y+"_nonfinite", []string{
			c.b.Op("IsInf", y+"_inf", []string{x}), c.b.Op("IsNaN", y+"_nan", []string{x})})})
		lowest := c.constF32(c.unique(y+"_lowest"), nil, []float32{-math.MaxFloat32})
		m := c.b.Op("ReduceMax", y+"_max", []string{c.b.Op("Where", y+"_finite_logits", []string{finite, x, lowest})},
			canonical.IntsAttr("axes", 1), canonical.IntAttr("keepdims", 1))
		toD := func(v string) string {
			return c.b.Op("Cast", v+"_d", []string{v}, canonical.IntAttr("to", int64(canonical.Double)))
		}
		e := c.b.Op("Exp", y+"_odds", []string{c.b.Op("Sub", y+"_centred", []string{toD(x), toD(m)})})
		e = c.b.Op("Where", y+"_finite_odds", []string{finite, e, c.b.Number(y+"_zero", canonical.Double, nil, 0)})
		cdf := c.b.Op("CumSum", y+"_cdf", []string{e, c.b.Number(y+"_cum_axis", canonical.Int64, nil, 1)})
		total := c.b.Op("Slice", y+"_total", []string{cdf, axis(-1), axis(math.MaxInt64), axis(1)})
		draws := c.b.Number(y+"_uniforms", canonical.Double, []int64{batch, n}, u...)
		sample := c.b.Op("Mul", y+"_samples", []string{total, draws})
		// upper_bound: the count of cumulative sums not above the sample.
		above := c.b.Op("Greater", y+"_above", []string{
			c.b.Op("Unsqueeze", y+"_cdf_b", []string{cdf, axis(1)}),
			c.b.Op("Unsqueeze", y+"_samples_b", []string{sample, axis(2)})})
		cnt := c.b.Op("Cast", y+"_not_above", []string{c.b.Op("Not", y+"_within", []string{above})}, canonical.IntAttr("to", int64(odt)))
		c.node("ReduceSum", []string{cnt, axis(2)}, []string{y}, canonical.IntAttr("keepdims", 0))
		return nil
	})
}

func ones(n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// threefry2x32 is Threefry-2x32 with 20 rounds, as TFLite's rng_util.
func threefry2x32(k0, k1 uint32, ctr [2]uint32) [2]uint32 {
	rot := [2][4]int{{13, 15, 26, 6}, {17, 29, 16, 24}}
	k2 := k0 ^ k1 ^ 0x1BD11BDA
	ctr[0] += k0
	ctr[1] += k1
	round := func(r int, ks0, ks1, b uint32) {
		for _, s := range rot[r] {
			ctr[0] += ctr[1]
			ctr[1] = bits.RotateLeft32(ctr[1], s)
			ctr[1] ^= ctr[0]
		}
		ctr[0] += ks0
		ctr[1] += ks1 + b
	}
	round(0, k1, k2, 1)
	round(1, k2, k0, 2)
	round(0, k0, k1, 3)
	round(1, k1, k2, 4)
	round(0, k2, k0, 5)
	return ctr
}

// rngBits returns the words STABLEHLO_RNG_BIT_GENERATOR writes: n output
// words and the new state's words.
func rngBits(alg fb.RngAlgorithm, state []uint32, n int) (out, newState []uint32, err error) {
	newState = append([]uint32(nil), state...)
	out = make([]uint32, 0, n+4)
	switch alg {
	case fb.RngAlgorithmTHREEFRY:
		if len(state) != 4 {
			return nil, nil, fmt.Errorf("THREEFRY takes a state of 2 uint64, got %d", len(state)/2)
		}
		k0, k1 := state[0], state[1]
		ctr := [2]uint32{state[2], state[3]}
		for len(out) < n {
			v := threefry2x32(k0, k1, ctr)
			out = append(out, v[:]...)
			if ctr[0]++; ctr[0] == 0 {
				ctr[1]++
			}
		}
		copy(newState, []uint32{k0, k1, ctr[0], ctr[1]})
	case fb.RngAlgorithmPHILOX, fb.RngAlgorithmDEFAULT:
		if len(state) != 4 && len(state) != 6 {
			return nil, nil, fmt.Errorf("PHILOX takes a state of 2 or 3 uint64, got %d", len(state)/2)
		}
		key := [2]uint32{state[0], state[1]}
		ctr := [4]uint32{state[2], state[3], state[0], state[1]}
		if len(state) == 6 {
			ctr[2], ctr[3] = state[4], state[5]
		}
		for len(out) < n {
			v := philox4x32(key, ctr)
			out = append(out, v[:]...)
			if ctr[0]++; ctr[0] == 0 {
				ctr[1]++
			}
		}
		copy(newState, []uint32{key[0], key[1], ctr[0], ctr[1]})
	default:
		return nil, nil, fmt.Errorf("algorithm %s", alg)
	}
	return out[:n], newState, nil
}

func (c *converter) rngBitGenerator(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	if len(o.outputs) != 2 {
		return fmt.Errorf("%d outputs, want 2 (new state, bits)", len(o.outputs))
	}
	opt, err := options2[fb.StablehloRngBitGeneratorOptions](o, fb.BuiltinOptions2StablehloRngBitGeneratorOptions)
	if err != nil {
		return err
	}
	st := c.tensor(o.inputs[0])
	if st.typ != fb.TensorTypeUINT64 || len(st.shape) != 1 {
		return fmt.Errorf("initial state %q is %s %v, want a uint64 vector", st.name, st.typ, st.shape)
	}
	if st.data == nil {
		return fmt.Errorf("initial state %q must be a constant (the importer writes the generated bits as constants)", st.name)
	}
	state := make([]uint32, len(st.data)/4)
	for i := range state {
		state[i] = binary.LittleEndian.Uint32(st.data[4*i:])
	}
	keyOut, bitsOut := c.tensor(o.outputs[0]), c.tensor(o.outputs[1])
	odt, err := onnxType(bitsOut.typ)
	if err != nil {
		return err
	}
	words := 1
	switch bitsOut.typ {
	case fb.TensorTypeINT32, fb.TensorTypeUINT32:
	case fb.TensorTypeINT64, fb.TensorTypeUINT64:
		words = 2
	default:
		return fmt.Errorf("output %q is %s, want a 32- or 64-bit integer", bitsOut.name, bitsOut.typ)
	}
	for _, d := range bitsOut.shape {
		if d < 0 {
			return fmt.Errorf("output %q has a dynamic shape %v", bitsOut.name, bitsOut.shape)
		}
	}
	n := numel(bitsOut.shape)
	if n > maxRandomElements {
		return fmt.Errorf("output %q has %d elements, more than %d", bitsOut.name, n, maxRandomElements)
	}
	out, newState, err := rngBits(opt.Algorithm(), state, int(n)*words)
	if err != nil {
		return fmt.Errorf("initial state %q: %w", st.name, err)
	}
	emitWords := func(idx int32, dt canonical.DataType, dims []int64, w []uint32) error {
		return c.emit(idx, native, fb.ActivationFunctionTypeNONE, func(y string) error {
			raw := make([]byte, 4*len(w))
			for i, v := range w {
				binary.LittleEndian.PutUint32(raw[4*i:], v)
			}
			c.node("Identity", []string{c.addInit(c.unique(y+"_value"), dt, dims, raw)}, []string{y})
			return nil
		})
	}
	if err := emitWords(o.outputs[0], canonical.Uint64, keyOut.shape, newState); err != nil {
		return err
	}
	return emitWords(o.outputs[1], odt, bitsOut.shape, out)
}
