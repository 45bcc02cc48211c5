package executor

import (
	"fmt"
	"math"
	"sort"

	"github.com/onnxconv/onnxconv/canonical"
)

// Signal processing and detection (host): DFT, STFT, Hann/Hamming/
// Blackman windows, NonMaxSuppression.

func registerSignal(r registry) {
	r.host(hostDFT, "DFT")
	r.host(hostSTFT, "STFT")
	for _, w := range []string{"HannWindow", "HammingWindow", "BlackmanWindow"} {
		w := w
		r.host(func(c *lctx) error { return hostWindow(c, w) }, w)
	}
	r.host(hostNMS, "NonMaxSuppression")
	r.host(hostMelWeightMatrix, "MelWeightMatrix")
}

// dft1 transforms n complex samples (re, im) to m output bins.
func dft1(re, im []float64, n, m int, inverse bool) ([]float64, []float64) {
	or, oi := make([]float64, m), make([]float64, m)
	sign := -1.0
	if inverse {
		sign = 1
	}
	for k := 0; k < m; k++ {
		var sr, si float64
		for t := 0; t < n; t++ {
			a := sign * 2 * math.Pi * float64(k) * float64(t) / float64(n)
			cs, sn := math.Cos(a), math.Sin(a)
			sr += re[t]*cs - im[t]*sn
			si += re[t]*sn + im[t]*cs
		}
		if inverse {
			sr /= float64(n)
			si /= float64(n)
		}
		or[k], oi[k] = sr, si
	}
	return or, oi
}

func hostDFT(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	r := len(h.shape)
	inverse, onesided := c.AInt("inverse", 0) == 1, c.AInt("onesided", 0) == 1
	var ax int
	if c.ver < 20 {
		ax = int(c.AInt("axis", 1))
	} else {
		a := int64(-2)
		if c.Has(2) {
			v, err := c.Ints(2)
			if err != nil {
				return err
			}
			a = v[0]
		}
		if a < 0 {
			a += int64(r)
		}
		ax = int(a)
	}
	if ax < 0 || ax >= r-1 {
		return fmt.Errorf("DFT axis %d out of range", ax)
	}
	cplx := h.shape[r-1] == 2
	N := h.shape[ax]
	L := N
	if inverse && onesided {
		L = 2 * (N - 1)
	}
	if c.Has(1) {
		v, err := c.Ints(1)
		if err != nil {
			return err
		}
		L = int(v[0])
	}
	var M int
	switch {
	case onesided && !inverse:
		M = L/2 + 1
	default:
		M = L
	}
	outLast := 2
	if onesided && inverse {
		outLast = 1
	}
	out := append([]int{}, h.shape...)
	out[ax] = M
	out[r-1] = outLast
	v := h.f64()
	st := strides(h.shape)
	ost := strides(out)
	res := make([]float64, numel(out))
	outer := append([]int{}, h.shape[:r-1]...)
	outer[ax] = 1
	forEachIndex(outer, func(o []int) {
		base, obase := 0, 0
		for d, x := range o {
			base += x * st[d]
			obase += x * ost[d]
		}
		re, im := make([]float64, L), make([]float64, L)
		for t := 0; t < L; t++ {
			if onesided && inverse {
				// rebuild the full spectrum by conjugate symmetry
				k := t
				conj := false
				if k >= N {
					k, conj = L-t, true
				}
				if k < N {
					re[t] = v[base+k*st[ax]]
					im[t] = v[base+k*st[ax]+1]
					if conj {
						im[t] = -im[t]
					}
				}
				continue
			}
			if t < N {
				re[t] = v[base+t*st[ax]]
				if cplx {
					im[t] = v[base+t*st[ax]+1]
				}
			}
		}
		or, oi := dft1(re, im, L, M, inverse)
		for k := 0; k < M; k++ {
			res[obase+k*ost[ax]] = or[k]
			if outLast == 2 {
				res[obase+k*ost[ax]+1] = oi[k]
			}
		}
	})
	c.OutH(0, fromF64(h.dt, out, res))
	return nil
}

func hostSTFT(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	stepv, err := c.Ints(1)
	if err != nil {
		return err
	}
	step := int(stepv[0])
	var win []float64
	if c.Has(2) {
		wh, err := c.H(2)
		if err != nil {
			return err
		}
		win = wh.f64()
	}
	fl := len(win)
	if c.Has(3) {
		v, err := c.Ints(3)
		if err != nil {
			return err
		}
		fl = int(v[0])
	}
	if win == nil {
		win = make([]float64, fl)
		for i := range win {
			win[i] = 1
		}
	}
	onesided := c.AInt("onesided", 1) == 1
	B, S := h.shape[0], h.shape[1]
	cplx := h.shape[2] == 2
	frames := 1 + (S-fl)/step
	bins := fl
	if onesided {
		bins = fl/2 + 1
	}
	v := h.f64()
	w := h.shape[2]
	res := make([]float64, B*frames*bins*2)
	for b := 0; b < B; b++ {
		for f := 0; f < frames; f++ {
			re, im := make([]float64, fl), make([]float64, fl)
			for t := 0; t < fl; t++ {
				p := (b*S + f*step + t) * w
				re[t] = v[p] * win[t]
				if cplx {
					im[t] = v[p+1] * win[t]
				}
			}
			or, oi := dft1(re, im, fl, bins, false)
			for k := 0; k < bins; k++ {
				res[((b*frames+f)*bins+k)*2] = or[k]
				res[((b*frames+f)*bins+k)*2+1] = oi[k]
			}
		}
	}
	c.OutH(0, fromF64(h.dt, []int{B, frames, bins, 2}, res))
	return nil
}

func hostWindow(c *lctx, kind string) error {
	nv, err := c.Ints(0)
	if err != nil {
		return err
	}
	n := int(nv[0])
	periodic := c.AInt("periodic", 1) == 1
	dt := canonical.DataType(c.AInt("output_datatype", int64(canonical.Float)))
	N := float64(n)
	if !periodic {
		N = float64(n - 1)
	}
	v := make([]float64, n)
	for i := range v {
		x := 2 * math.Pi * float64(i) / N
		switch kind {
		case "HannWindow":
			v[i] = 0.5 - 0.5*math.Cos(x)
		case "HammingWindow":
			a0 := 25.0 / 46
			v[i] = a0 - (1-a0)*math.Cos(x)
		default:
			v[i] = 0.42 - 0.5*math.Cos(x) + 0.08*math.Cos(2*x)
		}
	}
	c.OutH(0, fromF64(dt, []int{n}, v))
	return nil
}

func hostNMS(c *lctx) error {
	bh, err := c.H(0)
	if err != nil {
		return err
	}
	sh, err := c.H(1)
	if err != nil {
		return err
	}
	maxOut := int64(0)
	if c.Has(2) {
		v, err := c.Ints(2)
		if err != nil {
			return err
		}
		if len(v) > 0 {
			maxOut = v[0]
		}
	}
	iouT, scoreT := 0.0, math.Inf(-1)
	if c.Has(3) {
		v, err := c.H(3)
		if err != nil {
			return err
		}
		if v.size() > 0 {
			iouT = v.f64()[0]
		}
	}
	hasScoreT := false
	if c.Has(4) {
		v, err := c.H(4)
		if err != nil {
			return err
		}
		if v.size() > 0 {
			scoreT, hasScoreT = v.f64()[0], true
		}
	}
	center := c.AInt("center_point_box", 0) == 1
	B, N := bh.shape[0], bh.shape[1]
	C := sh.shape[1]
	boxes, scores := bh.f64(), sh.f64()
	corner := func(b, i int) (y1, x1, y2, x2 float64) {
		p := boxes[(b*N+i)*4 : (b*N+i)*4+4]
		if center {
			xc, yc, w, h := p[0], p[1], p[2], p[3]
			return yc - h/2, xc - w/2, yc + h/2, xc + w/2
		}
		return math.Min(p[0], p[2]), math.Min(p[1], p[3]), math.Max(p[0], p[2]), math.Max(p[1], p[3])
	}
	iou := func(b, i, j int) float64 {
		ay1, ax1, ay2, ax2 := corner(b, i)
		by1, bx1, by2, bx2 := corner(b, j)
		ih := math.Max(0, math.Min(ay2, by2)-math.Max(ay1, by1))
		iw := math.Max(0, math.Min(ax2, bx2)-math.Max(ax1, bx1))
		inter := ih * iw
		union := (ay2-ay1)*(ax2-ax1) + (by2-by1)*(bx2-bx1) - inter
		if union <= 0 {
			return 0
		}
		return inter / union
	}
	var sel []int64
	for b := 0; b < B; b++ {
		for cl := 0; cl < C; cl++ {
			var cand []int
			for i := 0; i < N; i++ {
				s := scores[(b*C+cl)*N+i]
				if !hasScoreT || s > scoreT {
					cand = append(cand, i)
				}
			}
			sort.SliceStable(cand, func(x, y int) bool {
				return scores[(b*C+cl)*N+cand[x]] > scores[(b*C+cl)*N+cand[y]]
			})
			var kept []int
			for _, i := range cand {
				if int64(len(kept)) >= maxOut {
					break
				}
				ok := true
				for _, j := range kept {
					if iou(b, i, j) > iouT {
						ok = false
						break
					}
				}
				if ok {
					kept = append(kept, i)
					sel = append(sel, int64(b), int64(cl), int64(i))
				}
			}
		}
	}
	c.OutH(0, fromI64(canonical.Int64, []int{len(sel) / 3, 3}, sel))
	return nil
}

func hostMelWeightMatrix(c *lctx) error {
	geti := func(i int) (int64, error) {
		v, err := c.Ints(i)
		if err != nil {
			return 0, err
		}
		return v[0], nil
	}
	getf := func(i int) (float64, error) {
		h, err := c.H(i)
		if err != nil {
			return 0, err
		}
		return h.f64()[0], nil
	}
	nMel, err := geti(0)
	if err != nil {
		return err
	}
	dftLen, err := geti(1)
	if err != nil {
		return err
	}
	rate, err := geti(2)
	if err != nil {
		return err
	}
	lo, err := getf(3)
	if err != nil {
		return err
	}
	hi, err := getf(4)
	if err != nil {
		return err
	}
	nSpec := int(dftLen/2 + 1)
	M := int(nMel)
	lowMel := 2595 * math.Log10(1+lo/700)
	highMel := 2595 * math.Log10(1+hi/700)
	step := (highMel - lowMel) / float64(M+2)
	bins := make([]int, M+2)
	for i := range bins {
		f := float64(i)*step + lowMel
		f = 700 * (math.Pow(10, f/2595) - 1)
		bins[i] = int(math.Floor(float64(dftLen+1) * f / float64(rate)))
	}
	out := make([]float64, nSpec*M)
	for i := 0; i < M; i++ {
		l, ctr, h := bins[i], bins[i+1], bins[i+2]
		if ctr-l == 0 {
			if ctr >= 0 && ctr < nSpec {
				out[ctr*M+i] = 1
			}
		} else {
			for j := l; j <= ctr; j++ {
				if j >= 0 && j < nSpec {
					out[j*M+i] = float64(j-l) / float64(ctr-l)
				}
			}
		}
		if h-ctr > 0 {
			for j := ctr; j < h; j++ {
				if j >= 0 && j < nSpec {
					out[j*M+i] = float64(h-j) / float64(h-ctr)
				}
			}
		}
	}
	dt := canonical.DataType(c.AInt("output_datatype", int64(canonical.Float)))
	c.OutH(0, fromF64(dt, []int{nSpec, M}, out))
	return nil
}
