package executor

import (
	"math"
	"math/rand/v2"

	"github.com/onnxconv/onnxconv/canonical"
)

// Random generators (host): RandomUniform, RandomNormal, their *Like
// forms, Bernoulli and Multinomial. Each node draws from a PCG generator
// seeded with its 'seed' attribute (0 when absent), so runs are
// deterministic; the numbers cannot match NumPy's generator, which the
// ONNX backend tests record.

func registerRandom(r registry) {
	for op, f := range map[string]func(*lctx) error{
		"RandomUniform": hostRandom, "RandomNormal": hostRandom,
		"RandomUniformLike": hostRandom, "RandomNormalLike": hostRandom,
		"Bernoulli": hostBernoulli, "Multinomial": hostMultinomial,
	} {
		im := r.impl("", op)
		im.host, im.random = f, true
	}
	// Dropout is lowered (identity) unless training with ratio > 0.
	r.impl("", "Dropout").host = hostDropoutTraining
}

func hostDropoutTraining(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ratio := 0.5
	if c.Has(1) {
		rh, err := c.H(1)
		if err != nil {
			return err
		}
		ratio = rh.f64()[0]
	}
	training := c.ver >= 12 && c.Has(2)
	if training {
		t, err := c.H(2)
		if err != nil {
			return err
		}
		training = t.i64()[0] != 0
	}
	mask := newH(canonical.Bool, h.shape)
	m := mask.data.([]bool)
	v := h.f64()
	if !training || ratio == 0 {
		for i := range m {
			m[i] = true
		}
	} else {
		g := rng(c)
		for i := range v {
			m[i] = g.Float64() >= ratio
			if m[i] {
				v[i] /= 1 - ratio
			} else {
				v[i] = 0
			}
		}
	}
	c.OutH(0, fromF64(h.dt, h.shape, v))
	c.OutH(1, mask)
	return nil
}

func rng(c *lctx) *rand.Rand {
	s := math.Float32bits(c.AFloat("seed", 0))
	return rand.New(rand.NewPCG(uint64(s), 0x9e3779b97f4a7c15))
}

func hostRandom(c *lctx) error {
	var shape []int
	dt := canonical.Float
	like := c.n.OpType == "RandomUniformLike" || c.n.OpType == "RandomNormalLike"
	if like {
		shape = c.Shape(0)
		dt = c.DT(0)
	} else {
		shape = toInts(c.AInts("shape", nil))
	}
	if a := c.n.Attr("dtype"); a != nil {
		dt = canonical.DataType(a.I)
	}
	if err := checkSize(shape); err != nil {
		return err
	}
	g := rng(c)
	v := make([]float64, numel(shape))
	normal := c.n.OpType == "RandomNormal" || c.n.OpType == "RandomNormalLike"
	lo, hi := float64(c.AFloat("low", 0)), float64(c.AFloat("high", 1))
	mean, sd := float64(c.AFloat("mean", 0)), float64(c.AFloat("scale", 1))
	for i := range v {
		if normal {
			v[i] = mean + sd*g.NormFloat64()
		} else {
			v[i] = lo + (hi-lo)*g.Float64()
		}
	}
	c.OutH(0, fromF64(dt, shape, v))
	return nil
}

func hostBernoulli(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	dt := h.dt
	if a := c.n.Attr("dtype"); a != nil {
		dt = canonical.DataType(a.I)
	}
	g := rng(c)
	p := h.f64()
	v := make([]float64, len(p))
	for i, x := range p {
		if g.Float64() < x {
			v[i] = 1
		}
	}
	c.OutH(0, fromF64(dt, h.shape, v))
	return nil
}

func hostMultinomial(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	n := int(c.AInt("sample_size", 1))
	dt := canonical.DataType(c.AInt("dtype", int64(canonical.Int32)))
	B, C := h.shape[0], h.shape[1]
	logits := h.f64()
	g := rng(c)
	out := make([]int64, B*n)
	for b := 0; b < B; b++ {
		row := logits[b*C : (b+1)*C]
		m := math.Inf(-1)
		for _, x := range row {
			m = math.Max(m, x)
		}
		cum := make([]float64, C)
		s := 0.0
		for k, x := range row {
			s += math.Exp(x - m)
			cum[k] = s
		}
		for j := 0; j < n; j++ {
			u := g.Float64() * s
			k := 0
			for k < C-1 && cum[k] <= u {
				k++
			}
			out[b*n+j] = int64(k)
		}
	}
	c.OutH(0, fromI64(dt, []int{B, n}, out))
	return nil
}
