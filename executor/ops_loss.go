package executor

import (
	"fmt"
	"math"
)

// Loss functions (host): NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.

func registerLoss(r registry) {
	r.host(func(c *lctx) error { return hostNLL(c, false) }, "NegativeLogLikelihoodLoss")
	r.host(func(c *lctx) error { return hostNLL(c, true) }, "SoftmaxCrossEntropyLoss")
}

func hostNLL(c *lctx, softmax bool) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	th, err := c.H(1)
	if err != nil {
		return err
	}
	var w []float64
	if c.Has(2) {
		wh, err := c.H(2)
		if err != nil {
			return err
		}
		w = wh.f64()
	}
	sh := xh.shape
	if len(sh) < 2 {
		return fmt.Errorf("input must have rank >= 2")
	}
	N, C := sh[0], sh[1]
	D := numel(sh[2:])
	x := xh.f64()
	if softmax {
		// log-softmax over the class axis
		for n := 0; n < N; n++ {
			for d := 0; d < D; d++ {
				m := math.Inf(-1)
				for k := 0; k < C; k++ {
					m = math.Max(m, x[(n*C+k)*D+d])
				}
				s := 0.0
				for k := 0; k < C; k++ {
					s += math.Exp(x[(n*C+k)*D+d] - m)
				}
				ls := math.Log(s) + m
				for k := 0; k < C; k++ {
					x[(n*C+k)*D+d] -= ls
				}
			}
		}
	}
	t := th.i64()
	ignore, hasIgnore := c.AInt("ignore_index", 0), c.HasAttr("ignore_index")
	red := c.AStr("reduction", "mean")
	loss := make([]float64, N*D)
	wsum, lsum := 0.0, 0.0
	for n := 0; n < N; n++ {
		for d := 0; d < D; d++ {
			k := t[n*D+d]
			if hasIgnore && k == ignore {
				continue
			}
			if k < 0 || k >= int64(C) {
				return fmt.Errorf("target %d out of range [0,%d)", k, C)
			}
			wt := 1.0
			if w != nil {
				wt = w[k]
			}
			l := -x[(n*C+int(k))*D+d] * wt
			loss[n*D+d] = l
			lsum += l
			wsum += wt
		}
	}
	outShape := append([]int{N}, sh[2:]...)
	switch red {
	case "none":
		c.OutH(0, fromF64(xh.dt, outShape, loss))
	case "sum":
		c.OutH(0, fromF64(xh.dt, nil, []float64{lsum}))
	default:
		v := lsum / wsum
		if wsum == 0 {
			v = math.NaN()
			if !softmax || true {
				v = 0
			}
		}
		c.OutH(0, fromF64(xh.dt, nil, []float64{v}))
	}
	if softmax && c.HasOut(1) {
		c.OutH(1, fromF64(xh.dt, sh, x))
	}
	return nil
}
