package executor

import (
	"math"
)

// ai.onnx.preview.training optimizers (host): Adagrad, Momentum, Adam.

const trainingDomain = "ai.onnx.preview.training"

func registerTraining(r registry) {
	for op, f := range map[string]func(*lctx) error{"Adagrad": hostAdagrad, "Momentum": hostMomentum, "Adam": hostAdam} {
		r.impl(trainingDomain, op).host = f
	}
}

// optimizerArgs returns R, T and the groups of tensors that follow.
func optimizerArgs(c *lctx, groups int) (float64, int64, [][]*htensor, error) {
	rh, err := c.H(0)
	if err != nil {
		return 0, 0, nil, err
	}
	th, err := c.H(1)
	if err != nil {
		return 0, 0, nil, err
	}
	n := (c.NIn() - 2) / groups
	gs := make([][]*htensor, groups)
	for g := 0; g < groups; g++ {
		for i := 0; i < n; i++ {
			h, err := c.H(2 + g*n + i)
			if err != nil {
				return 0, 0, nil, err
			}
			gs[g] = append(gs[g], h)
		}
	}
	return rh.f64()[0], th.i64()[0], gs, nil
}

func hostAdagrad(c *lctx) error {
	R, T, gs, err := optimizerArgs(c, 3)
	if err != nil {
		return err
	}
	decay, eps, norm := float64(c.AFloat("decay_factor", 0)), float64(c.AFloat("epsilon", 0)), float64(c.AFloat("norm_coefficient", 0))
	r := R / (1 + float64(T)*decay)
	n := len(gs[0])
	for i := 0; i < n; i++ {
		x, g, h := gs[0][i].f64(), gs[1][i].f64(), gs[2][i].f64()
		for k := range x {
			gr := norm*x[k] + g[k]
			h[k] += gr * gr
			x[k] -= r * gr / (math.Sqrt(h[k]) + eps)
		}
		c.OutH(i, fromF64(gs[0][i].dt, gs[0][i].shape, x))
		c.OutH(n+i, fromF64(gs[2][i].dt, gs[2][i].shape, h))
	}
	return nil
}

func hostMomentum(c *lctx) error {
	R, T, gs, err := optimizerArgs(c, 3)
	if err != nil {
		return err
	}
	alpha, beta, norm := float64(c.AFloat("alpha", 0)), float64(c.AFloat("beta", 0)), float64(c.AFloat("norm_coefficient", 0))
	nesterov := c.AStr("mode", "standard") == "nesterov"
	if T == 0 {
		beta = 1
	}
	n := len(gs[0])
	for i := 0; i < n; i++ {
		x, g, v := gs[0][i].f64(), gs[1][i].f64(), gs[2][i].f64()
		for k := range x {
			gr := norm*x[k] + g[k]
			v[k] = alpha*v[k] + beta*gr
			if nesterov {
				x[k] -= R * (gr + alpha*v[k])
			} else {
				x[k] -= R * v[k]
			}
		}
		c.OutH(i, fromF64(gs[0][i].dt, gs[0][i].shape, x))
		c.OutH(n+i, fromF64(gs[2][i].dt, gs[2][i].shape, v))
	}
	return nil
}

func hostAdam(c *lctx) error {
	R, T, gs, err := optimizerArgs(c, 4)
	if err != nil {
		return err
	}
	alpha, beta := float64(c.AFloat("alpha", 0.9)), float64(c.AFloat("beta", 0.999))
	eps := float64(c.AFloat("epsilon", 1e-6))
	norm, post := float64(c.AFloat("norm_coefficient", 0)), float64(c.AFloat("norm_coefficient_post", 0))
	ra := R
	if T > 0 {
		ra = R * math.Sqrt(1-math.Pow(beta, float64(T))) / (1 - math.Pow(alpha, float64(T)))
	}
	n := len(gs[0])
	for i := 0; i < n; i++ {
		x, g, v, h := gs[0][i].f64(), gs[1][i].f64(), gs[2][i].f64(), gs[3][i].f64()
		for k := range x {
			gr := norm*x[k] + g[k]
			v[k] = alpha*v[k] + (1-alpha)*gr
			h[k] = beta*h[k] + (1-beta)*gr*gr
			x[k] = (1 - post) * (x[k] - ra*v[k]/(math.Sqrt(h[k])+eps))
		}
		c.OutH(i, fromF64(gs[0][i].dt, gs[0][i].shape, x))
		c.OutH(n+i, fromF64(gs[2][i].dt, gs[2][i].shape, v))
		c.OutH(2*n+i, fromF64(gs[3][i].dt, gs[3][i].shape, h))
	}
	return nil
}
