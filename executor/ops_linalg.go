package executor

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Linear algebra (host): Einsum, Det.

func registerLinalg(r registry) {
	r.host(hostEinsum, "Einsum")
	r.host(hostDet, "Det")
}

func hostEinsum(c *lctx) error {
	eq := strings.ReplaceAll(c.AStr("equation", ""), " ", "")
	var ins []*htensor
	for i := 0; i < c.NIn(); i++ {
		h, err := c.H(i)
		if err != nil {
			return err
		}
		ins = append(ins, h)
	}
	lhs, rhs, hasArrow := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(ins) {
		return fmt.Errorf("equation %q has %d operands, got %d", eq, len(terms), len(ins))
	}
	dims := map[byte]int{}
	// expand ellipsis
	ell := 0
	for i, t := range terms {
		if strings.Contains(t, "...") {
			k := len(ins[i].shape) - (len(t) - 3)
			if k > ell {
				ell = k
			}
		}
	}
	ellLetters := ""
	for i := 0; i < ell; i++ {
		ellLetters += string(rune('A' + i))
	}
	for i, t := range terms {
		if strings.Contains(t, "...") {
			k := len(ins[i].shape) - (len(t) - 3)
			terms[i] = strings.Replace(t, "...", ellLetters[ell-k:], 1)
		}
		if len(terms[i]) != len(ins[i].shape) {
			return fmt.Errorf("term %q for shape %v", terms[i], ins[i].shape)
		}
		for j := 0; j < len(terms[i]); j++ {
			d := ins[i].shape[j]
			if old, ok := dims[terms[i][j]]; ok && old != d && old != 1 && d != 1 {
				return fmt.Errorf("dimension %c mismatch", terms[i][j])
			}
			if d > dims[terms[i][j]] || dims[terms[i][j]] == 0 {
				dims[terms[i][j]] = d
			}
		}
	}
	if !hasArrow {
		counts := map[byte]int{}
		for _, t := range terms {
			for j := 0; j < len(t); j++ {
				counts[t[j]]++
			}
		}
		var ls []byte
		for l, n := range counts {
			if n == 1 && !(l >= 'A' && l <= 'Z') {
				ls = append(ls, l)
			}
		}
		sort.Slice(ls, func(a, b int) bool { return ls[a] < ls[b] })
		rhs = ellLetters + string(ls)
	} else {
		rhs = strings.Replace(rhs, "...", ellLetters, 1)
	}
	var all []byte
	seen := map[byte]bool{}
	for j := 0; j < len(rhs); j++ {
		all = append(all, rhs[j])
		seen[rhs[j]] = true
	}
	for _, t := range terms {
		for j := 0; j < len(t); j++ {
			if !seen[t[j]] {
				seen[t[j]] = true
				all = append(all, t[j])
			}
		}
	}
	pos := map[byte]int{}
	full := make([]int, len(all))
	for i, l := range all {
		pos[l] = i
		full[i] = dims[l]
	}
	outShape := full[:len(rhs)]
	res := make([]float64, numel(outShape))
	vals := make([][]float64, len(ins))
	sts := make([][]int, len(ins))
	for i, h := range ins {
		vals[i] = h.f64()
		sts[i] = strides(h.shape)
	}
	ost := strides(outShape)
	forEachIndex(full, func(o []int) {
		p := 1.0
		for i, t := range terms {
			f := 0
			for j := 0; j < len(t); j++ {
				x := o[pos[t[j]]]
				if ins[i].shape[j] == 1 {
					x = 0
				}
				f += x * sts[i][j]
			}
			p *= vals[i][f]
		}
		f := 0
		for j := range outShape {
			f += o[j] * ost[j]
		}
		res[f] += p
	})
	c.OutH(0, fromF64(ins[0].dt, outShape, res))
	return nil
}

func hostDet(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	r := len(h.shape)
	n := h.shape[r-1]
	v := h.f64()
	batch := numel(h.shape[:r-2])
	out := make([]float64, batch)
	for b := 0; b < batch; b++ {
		m := append([]float64{}, v[b*n*n:(b+1)*n*n]...)
		det := 1.0
		for i := 0; i < n; i++ {
			p := i
			for j := i + 1; j < n; j++ {
				if math.Abs(m[j*n+i]) > math.Abs(m[p*n+i]) {
					p = j
				}
			}
			if m[p*n+i] == 0 {
				det = 0
				break
			}
			if p != i {
				for k := 0; k < n; k++ {
					m[i*n+k], m[p*n+k] = m[p*n+k], m[i*n+k]
				}
				det = -det
			}
			det *= m[i*n+i]
			for j := i + 1; j < n; j++ {
				f := m[j*n+i] / m[i*n+i]
				for k := i; k < n; k++ {
					m[j*n+k] -= f * m[i*n+k]
				}
			}
		}
		out[b] = det
	}
	c.OutH(0, fromF64(h.dt, h.shape[:r-2], out))
	return nil
}
