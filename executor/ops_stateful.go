package executor

import (
	"fmt"
	"math"
)

// Stateful sequence ops of opset 27 (host): CausalConvWithState,
// LinearAttention.

func registerStateful(r registry) {
	r.host(hostCausalConv, "CausalConvWithState")
	r.host(hostLinearAttention, "LinearAttention")
}

func hostCausalConv(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	wh, err := c.H(1)
	if err != nil {
		return err
	}
	B, C, L := xh.shape[0], xh.shape[1], xh.shape[2]
	K := wh.shape[2]
	x, w := xh.f64(), wh.f64()
	var bias []float64
	if c.Has(2) {
		bh, err := c.H(2)
		if err != nil {
			return err
		}
		bias = bh.f64()
	}
	past := make([]float64, B*C*(K-1))
	if c.Has(3) {
		ph, err := c.H(3)
		if err != nil {
			return err
		}
		past = ph.f64()
	}
	act := c.AStr("activation", "none")
	out := make([]float64, B*C*L)
	state := make([]float64, B*C*(K-1))
	for b := 0; b < B; b++ {
		for ch := 0; ch < C; ch++ {
			// padded sequence: past (K-1) then input (L)
			seq := make([]float64, K-1+L)
			copy(seq, past[(b*C+ch)*(K-1):(b*C+ch+1)*(K-1)])
			copy(seq[K-1:], x[(b*C+ch)*L:(b*C+ch+1)*L])
			for t := 0; t < L; t++ {
				s := 0.0
				if bias != nil {
					s = bias[ch]
				}
				for k := 0; k < K; k++ {
					s += seq[t+k] * w[ch*K+k]
				}
				if act == "silu" || act == "swish" {
					s = s / (1 + math.Exp(-s))
				}
				out[(b*C+ch)*L+t] = s
			}
			copy(state[(b*C+ch)*(K-1):], seq[len(seq)-(K-1):])
		}
	}
	c.OutH(0, fromF64(xh.dt, xh.shape, out))
	c.OutH(1, fromF64(xh.dt, []int{B, C, K - 1}, state))
	return nil
}

func hostLinearAttention(c *lctx) error {
	qh, err := c.H(0)
	if err != nil {
		return err
	}
	kh, err := c.H(1)
	if err != nil {
		return err
	}
	vh, err := c.H(2)
	if err != nil {
		return err
	}
	Hq, Hk := int(c.AInt("q_num_heads", 0)), int(c.AInt("kv_num_heads", 0))
	if Hq <= 0 || Hk <= 0 || Hq%Hk != 0 {
		return fmt.Errorf("LinearAttention: q_num_heads %d must be a positive multiple of kv_num_heads %d", Hq, Hk)
	}
	B, T := qh.shape[0], qh.shape[1]
	dk := qh.shape[2] / Hq
	dv := vh.shape[2] / Hk
	q, k, v := qh.f64(), kh.f64(), vh.f64()
	scale := float64(c.AFloat("scale", 0))
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(dk))
	}
	rule := c.AStr("update_rule", "gated_delta")
	S := make([]float64, B*Hk*dk*dv)
	if c.Has(3) {
		sh, err := c.H(3)
		if err != nil {
			return err
		}
		S = sh.f64()
	}
	var g, beta []float64
	gw, bw := 0, 0
	if c.Has(4) {
		h, err := c.H(4)
		if err != nil {
			return err
		}
		g, gw = h.f64(), h.shape[2]
	}
	if c.Has(5) {
		h, err := c.H(5)
		if err != nil {
			return err
		}
		beta, bw = h.f64(), h.shape[2]
	}
	out := make([]float64, B*T*Hq*dv)
	rep := Hq / Hk
	u := make([]float64, dv)
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			for h := 0; h < Hk; h++ {
				st := S[(b*Hk+h)*dk*dv : (b*Hk+h+1)*dk*dv]
				kt := k[(b*T+t)*Hk*dk+h*dk : (b*T+t)*Hk*dk+(h+1)*dk]
				vt := v[(b*T+t)*Hk*dv+h*dv : (b*T+t)*Hk*dv+(h+1)*dv]
				if rule == "gated" || rule == "gated_delta" {
					for i := 0; i < dk; i++ {
						var gi float64
						if gw == Hk {
							gi = g[(b*T+t)*gw+h]
						} else {
							gi = g[(b*T+t)*gw+h*dk+i]
						}
						e := math.Exp(gi)
						for j := 0; j < dv; j++ {
							st[i*dv+j] *= e
						}
					}
				}
				switch rule {
				case "linear", "gated":
					for i := 0; i < dk; i++ {
						for j := 0; j < dv; j++ {
							st[i*dv+j] += kt[i] * vt[j]
						}
					}
				default: // delta, gated_delta
					bt := beta[(b*T+t)*bw]
					if bw == Hk {
						bt = beta[(b*T+t)*bw+h]
					}
					for j := 0; j < dv; j++ {
						s := 0.0
						for i := 0; i < dk; i++ {
							s += st[i*dv+j] * kt[i]
						}
						u[j] = vt[j] - s
					}
					for i := 0; i < dk; i++ {
						for j := 0; j < dv; j++ {
							st[i*dv+j] += bt * kt[i] * u[j]
						}
					}
				}
				for r := 0; r < rep; r++ {
					qhd := h*rep + r
					qt := q[(b*T+t)*Hq*dk+qhd*dk : (b*T+t)*Hq*dk+(qhd+1)*dk]
					for j := 0; j < dv; j++ {
						s := 0.0
						for i := 0; i < dk; i++ {
							s += qt[i] * st[i*dv+j]
						}
						out[(b*T+t)*Hq*dv+qhd*dv+j] = scale * s
					}
				}
			}
		}
	}
	c.OutH(0, fromF64(qh.dt, []int{B, T, Hq * dv}, out))
	c.OutH(1, fromF64(qh.dt, []int{B, Hk, dk, dv}, S))
	return nil
}
