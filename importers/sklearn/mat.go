package sklearn

import (
	"math"
)

// mat is a row-major float64 matrix.
type mat struct {
	r, c int
	d    []float64
}

func newMat(r, c int) *mat { return &mat{r: r, c: c, d: make([]float64, r*c)} }

func (m *mat) at(i, j int) float64 { return m.d[i*m.c+j] }

func (m *mat) row(i int) []float64 { return m.d[i*m.c : (i+1)*m.c] }

// transpose returns m'.
func (m *mat) transpose() *mat {
	t := newMat(m.c, m.r)
	for i := 0; i < m.r; i++ {
		for j := 0; j < m.c; j++ {
			t.d[j*m.r+i] = m.d[i*m.c+j]
		}
	}
	return t
}

// mul returns x w (x [N,K], w [K,M]).
func mul(x, w *mat) *mat {
	out := newMat(x.r, w.c)
	for i := 0; i < x.r; i++ {
		xr, or := x.row(i), out.row(i)
		for k, xv := range xr {
			wr := w.row(k)
			for j := range or {
				or[j] += xv * wr[j]
			}
		}
	}
	return out
}

// addRow adds b to every row.
func (m *mat) addRow(b []float64) {
	for i := 0; i < m.r; i++ {
		r := m.row(i)
		for j := range r {
			r[j] += b[j]
		}
	}
}

func (m *mat) apply(f func(float64) float64) {
	for i, v := range m.d {
		m.d[i] = f(v)
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// softmaxRows is numpy's softmax: subtract the row max, exp, divide by
// the sum.
func softmaxRows(m *mat) {
	for i := 0; i < m.r; i++ {
		r := m.row(i)
		mx := math.Inf(-1)
		for _, v := range r {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for j := range r {
			r[j] = math.Exp(r[j] - mx)
			s += r[j]
		}
		for j := range r {
			r[j] /= s
		}
	}
}

// argmaxRows is the first index of each row's maximum.
func argmaxRows(m *mat) []int {
	out := make([]int, m.r)
	for i := 0; i < m.r; i++ {
		r := m.row(i)
		best := 0
		for j, v := range r {
			if v > r[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}
