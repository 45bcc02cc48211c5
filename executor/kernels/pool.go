package kernels

import "math"

// Pool2D describes a 2-D pooling window over NCHW float32 tensors (a 1-D
// one has H = KH = 1); OH and OW are given (ceil mode and auto_pad are
// the caller's). Window positions in the padding are ignored.
type Pool2D struct {
	N, C, H, W     int
	KH, KW         int
	SH, SW, DH, DW int
	PT, PL         int
	OH, OW         int
}

func (p *Pool2D) check(x, y []float32) error {
	if p.N < 0 || p.C < 0 || p.H < 1 || p.W < 1 || p.KH < 1 || p.KW < 1 || p.SH < 1 || p.SW < 1 ||
		p.DH < 1 || p.DW < 1 || p.PT < 0 || p.PL < 0 || p.OH < 0 || p.OW < 0 {
		return shapeErr("pool: invalid geometry %+v", *p)
	}
	if len(x) != p.N*p.C*p.H*p.W || len(y) != p.N*p.C*p.OH*p.OW {
		return shapeErr("pool: X has %d and Y %d elements for %+v", len(x), len(y), *p)
	}
	return nil
}

// MaxPool2D computes y = max over each window of x (−Inf for a window
// entirely in the padding, as ONNX Runtime does).
func (x *Context) MaxPool2D(p Pool2D, in, y []float32) error {
	if err := p.check(in, y); err != nil {
		return err
	}
	planes := p.N * p.C
	npix := p.OH * p.OW
	run := func(lo, hi int) {
		var phases []float32
		if p.SW > 1 && p.OW >= smallRow {
			phases = make([]float32, p.SW*((p.W+p.SW-1)/p.SW))
		}
		var vrow []float32
		if p.SW > 1 && p.OW < smallRow {
			vrow = make([]float32, p.W)
		}
		for pl := lo; pl < hi; pl++ {
			xc := in[pl*p.H*p.W : (pl+1)*p.H*p.W]
			yc := y[pl*npix : (pl+1)*npix]
			if vrow != nil {
				maxPoolSmall(&p, xc, yc, vrow)
				continue
			}
			for i := range yc {
				yc[i] = float32(math.Inf(-1))
			}
			if p.SW > 1 {
				maxPoolStrided(&p, xc, yc, phases)
				continue
			}
			for kh := 0; kh < p.KH; kh++ {
				for kw := 0; kw < p.KW; kw++ {
					off := kw*p.DW - p.PL
					lo, hi := colRange(off, p.SW, p.W, p.OW)
					if lo >= hi {
						continue
					}
					for o := 0; o < p.OH; o++ {
						ih := o*p.SH - p.PT + kh*p.DH
						if ih < 0 || ih >= p.H {
							continue
						}
						src := xc[ih*p.W : (ih+1)*p.W]
						d := yc[o*p.OW+lo : o*p.OW+hi]
						if p.SW == 1 {
							maxInto(d, src[lo+off:hi+off])
						} else {
							maxIntoStrided(d, src[lo*p.SW+off:], p.SW)
						}
					}
				}
			}
		}
	}
	x.rangeWork(planes, npix*p.KH*p.KW*tapWork, run)
	return nil
}

// vmax sets d[i] = max(d[i], s[i]), NaN winning (Go's max); the SIMD
// version is set during package initialization when the CPU has AVX2
// and never changes afterwards.
var vmax = maxGeneric

func maxGeneric(d, s []float32) {
	s = s[:len(d)]
	for i, v := range s {
		d[i] = max(d[i], v)
	}
}

// maxInto sets d[i] = max(d[i], s[i]) (vmax).
func maxInto(d, s []float32) { vmax(d, s) }

// maxIntoStrided sets d[i] = max(d[i], s[i·stride]).
func maxIntoStrided(d, s []float32, stride int) {
	if len(d) == 0 {
		return
	}
	s = s[:(len(d)-1)*stride+1]
	for i := range d {
		d[i] = max(d[i], s[i*stride])
	}
}

// maxPoolStrided pools one plane with SW > 1: each input row a window
// row reads is split into its SW phases once, so that every window
// column is a contiguous SIMD max over one phase.
func maxPoolStrided(p *Pool2D, xc, yc, phases []float32) {
	pw := (p.W + p.SW - 1) / p.SW
	for o := 0; o < p.OH; o++ {
		yr := yc[o*p.OW : (o+1)*p.OW]
		for kh := 0; kh < p.KH; kh++ {
			ih := o*p.SH - p.PT + kh*p.DH
			if ih < 0 || ih >= p.H {
				continue
			}
			splitPhases(xc[ih*p.W:(ih+1)*p.W], p.SW, pw, phases)
			for kw := 0; kw < p.KW; kw++ {
				off := kw*p.DW - p.PL
				lo, hi := colRange(off, p.SW, p.W, p.OW)
				if lo >= hi {
					continue
				}
				// x[(lo+i)·SW + off] is phase q at lo + i + b (off = b·SW + q).
				q := ((off % p.SW) + p.SW) % p.SW
				b := (off - q) / p.SW
				vmax(yr[lo:hi], phases[q*pw+lo+b:q*pw+hi+b])
			}
		}
	}
}

// splitPhases writes phase q of src (src[q], src[q+s], …) to
// ph[q·pw:], for q < s.
func splitPhases(src []float32, s, pw int, ph []float32) {
	for q := 0; q < s; q++ {
		d := ph[q*pw : (q+1)*pw]
		k := 0
		for j := q; j < len(src); j += s {
			d[k] = src[j]
			k++
		}
	}
}

// maxPoolSmall pools one plane whose output rows are short (a call per
// window column would cost more than the row): per output row, the
// maximum over the window's rows first, with SIMD over whole input rows
// into v (W elements), then per output element the maximum over the
// window's columns of v in registers (Go's max: NaN wins, and the
// maximum of a set does not depend on the order).
func maxPoolSmall(p *Pool2D, xc, yc, v []float32) {
	ninf := float32(math.Inf(-1))
	// Output columns whose window columns are all inside [0, W).
	qlo, qhi := colRange(-p.PL, p.SW, p.W, p.OW)
	if _, h := colRange((p.KW-1)*p.DW-p.PL, p.SW, p.W, p.OW); h < qhi {
		qhi = h
	}
	if l, _ := colRange((p.KW-1)*p.DW-p.PL, p.SW, p.W, p.OW); l > qlo {
		qlo = l
	}
	qhi = max(qhi, qlo)
	for o := 0; o < p.OH; o++ {
		yr := yc[o*p.OW : (o+1)*p.OW]
		first := true
		for kh := 0; kh < p.KH; kh++ {
			ih := o*p.SH - p.PT + kh*p.DH
			if ih < 0 || ih >= p.H {
				continue
			}
			src := xc[ih*p.W : (ih+1)*p.W]
			if first {
				copy(v, src)
				first = false
			} else {
				vmax(v, src)
			}
		}
		if first { // every window row in the padding
			for q := range yr {
				yr[q] = ninf
			}
			continue
		}
		edge := func(q int) {
			m := ninf
			iw := q*p.SW - p.PL
			for kw := 0; kw < p.KW; kw, iw = kw+1, iw+p.DW {
				if uint(iw) < uint(len(v)) {
					m = max(m, v[iw])
				}
			}
			yr[q] = m
		}
		for q := 0; q < qlo; q++ {
			edge(q)
		}
		if p.KW == 3 && p.DW == 1 {
			for q := qlo; q < qhi; q++ {
				r := v[q*p.SW-p.PL:][:3]
				yr[q] = max(r[0], r[1], r[2])
			}
		} else {
			for q := qlo; q < qhi; q++ {
				r := v[q*p.SW-p.PL:]
				m := r[0]
				for kw := 1; kw < p.KW; kw++ {
					m = max(m, r[kw*p.DW])
				}
				yr[q] = m
			}
		}
		for q := qhi; q < p.OW; q++ {
			edge(q)
		}
	}
}
