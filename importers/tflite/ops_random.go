package tflite

import (
	"fmt"
	"math"
	"math/bits"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL with fixed seeds: TFLite draws
// them from Philox-4x32-10 seeded by (seed, seed2), a fresh generator per
// interpreter whose state advances with every run. The importer computes
// the first run's values (the generator as TFLite seeds it) and writes them
// as a constant: the ONNX model gives what a freshly loaded interpreter
// gives on its first run, every time. TFLite reads each seed as a C int
// (its low 32 bits, sign-extended; checked against the interpreter with
// seeds beyond 32 bits and negative ones). Seeds (0, 0) ask TFLite for
// nondeterministic values, which have no reproducible form: refused.

// maxRandomElements bounds the constant a random op becomes.
const maxRandomElements = 1 << 20

// philox is TensorFlow's PhiloxRandom: a 128-bit counter and a 64-bit key.
type philox struct {
	counter [4]uint32
	key     [2]uint32
}

func newPhilox(seed, seed2 uint64) *philox {
	return &philox{key: [2]uint32{uint32(seed), uint32(seed >> 32)}, counter: [4]uint32{0, 0, uint32(seed2), uint32(seed2 >> 32)}}
}

// next returns four 32-bit values (ten rounds) and advances the counter.
func (p *philox) next() [4]uint32 {
	ctr := philox4x32(p.key, p.counter)
	for i := range p.counter {
		if p.counter[i]++; p.counter[i] != 0 {
			break
		}
	}
	return ctr
}

// philox4x32 is ten Philox rounds of counter ctr under key.
func philox4x32(key [2]uint32, ctr [4]uint32) [4]uint32 {
	const (
		mulA, mulB = 0xD2511F53, 0xCD9E8D57
		keyA, keyB = 0x9E3779B9, 0xBB67AE85
	)
	for round := 0; round < 10; round++ {
		hi0, lo0 := bits.Mul32(mulA, ctr[0])
		hi1, lo1 := bits.Mul32(mulB, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
		key[0] += keyA
		key[1] += keyB
	}
	return ctr
}

// uint32ToFloat is TensorFlow's Uint32ToFloat: 23 random mantissa bits,
// a float in [0, 1).
func uint32ToFloat(x uint32) float32 {
	return math.Float32frombits(x&0x7fffff|0x3f800000) - 1
}

// randomValues draws n values the way TFLite's kernels do: uniform, one
// per 32-bit value; standard normal by Box-Muller on pairs of them.
func randomValues(normal bool, seed, seed2 uint64, n int) []float32 {
	p := newPhilox(seed, seed2)
	out := make([]float32, 0, n+3)
	for len(out) < n {
		s := p.next()
		if !normal {
			for _, x := range s {
				out = append(out, uint32ToFloat(x))
			}
			continue
		}
		for i := 0; i < 4; i += 2 {
			u1 := uint32ToFloat(s[i])
			if u1 < 1e-7 {
				u1 = 1e-7
			}
			v1 := float32(2*math.Pi) * uint32ToFloat(s[i+1])
			u2 := float32(math.Sqrt(float64(-2 * float32(math.Log(float64(u1))))))
			out = append(out, float32(math.Sin(float64(v1)))*u2, float32(math.Cos(float64(v1)))*u2)
		}
	}
	return out[:n]
}

// randomSeeds checks that o has its first n inputs and reads its seeds
// as TFLite does (each one's low 32 bits, sign-extended); seeds (0, 0)
// are refused.
func randomSeeds(o *operator, n int) (seed, seed2 uint64, err error) {
	if err := needInputs(o, n); err != nil {
		return 0, 0, err
	}
	opt, err := options[fb.RandomOptions](o, fb.BuiltinOptionsRandomOptions)
	if err != nil {
		return 0, 0, err
	}
	if opt.Seed() == 0 && opt.Seed2() == 0 {
		return 0, 0, fmt.Errorf("seeds (0, 0): TFLite draws nondeterministic values, which have no ONNX form")
	}
	return uint64(int32(opt.Seed())), uint64(int32(opt.Seed2())), nil
}

func (c *converter) randomOp(o *operator) error {
	seed, seed2, err := randomSeeds(o, 1)
	if err != nil {
		return err
	}
	if t := c.tensor(o.outputs[0]); t.typ != fb.TensorTypeFLOAT32 {
		return fmt.Errorf("output %q is %s (float32 only)", t.name, t.typ)
	}
	shape, err := c.constInts(o.inputs[0])
	if err != nil {
		return fmt.Errorf("the shape: %w", err)
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 || d > maxRandomElements {
			return fmt.Errorf("shape %v", shape)
		}
		if n *= d; n > maxRandomElements {
			return fmt.Errorf("shape %v has more than %d elements", shape, maxRandomElements)
		}
	}
	v := randomValues(o.code == fb.BuiltinOperatorRANDOM_STANDARD_NORMAL, seed, seed2, int(n))
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("Identity", []string{c.constF32(c.unique(y+"_values"), shape, v)}, []string{y})
		return nil
	})
}
