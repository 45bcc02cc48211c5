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
	// The short-row path needs each window to reach a column of the row:
	// column pads as wide as the window (ONNX Runtime refuses them, a
	// model can still hold them) take the general path.
	pr := (p.OW-1)*p.SW + (p.KW-1)*p.DW + 1 - p.W - p.PL
	short := p.SW == 1 && p.PL < p.KW && pr < p.KW && interiorCols(&p) < smallRow
	gapped := gapPool(&p)
	rowsFn := poolRowsKernel(&p)
	run := func(lo, hi int) {
		if rowsFn.long != nil {
			maxPoolWholeRows(&p, rowsFn, in, y, lo, hi)
			return
		}
		if gapped {
			maxPoolGapped(&p, in, y, lo, hi)
			return
		}
		if short {
			sp := newShortPool(&p)
			for pl := lo; pl < hi; pl++ {
				sp.plane(in[pl*p.H*p.W:(pl+1)*p.H*p.W], y[pl*npix:(pl+1)*npix])
			}
			return
		}
		// One value past the row: maxWin3S2's blocks read it (and do
		// not use it).
		v := make([]float32, p.W+1)
		var ph []float32
		if p.SW > 1 {
			ph = make([]float32, p.SW*((p.W+p.SW-1)/p.SW))
		}
		for pl := lo; pl < hi; pl++ {
			maxPoolPlane(&p, in[pl*p.H*p.W:(pl+1)*p.H*p.W], y[pl*npix:(pl+1)*npix], v, ph)
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

// maxWin3S2 sets y[i] = max(x[2i], x[2i+1], x[2i+2]) for i < len(y)
// (NaN wins); x holds at least 2·len(y)+1 values (one more lets the SIMD
// version run every output in registers). The SIMD version is
// set during package initialization when the CPU has AVX2 and never
// changes afterwards.
var maxWin3S2 = maxWin3S2Generic

func maxWin3S2Generic(x, y []float32) {
	x = x[:2*len(y)+1]
	for i := range y {
		y[i] = max(x[2*i], x[2*i+1], x[2*i+2])
	}
}

// max3Asm (nil: Go) is max3AVX2, set during package initialization when
// the CPU has AVX2 and never changed afterwards.
var max3Asm func(n int, a, b, c, y *float32)

// max3 sets y[i] = max(max(a[i], b[i]), c[i]) for i < len(y): the bits of
// copy(y, a), vmax(y, b), vmax(y, c) in one pass (the same SIMD head and
// Go tail). y may be a, b or c only where it is the same slice.
func max3(y, a, b, c []float32) {
	a, b, c = a[:len(y)], b[:len(y)], c[:len(y)]
	h := 0
	if max3Asm != nil {
		if h = len(y) &^ 7; h > 0 {
			max3Asm(h, &a[0], &b[0], &c[0], &y[0])
		}
	}
	for i := h; i < len(y); i++ {
		y[i] = max(max(a[i], b[i]), c[i])
	}
}

// maxInto sets d[i] = max(d[i], s[i]) (vmax).
func maxInto(d, s []float32) { vmax(d, s) }

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

// maxPoolPlane pools one plane, output row by output row, separably:
// the maximum over the window's rows first, with SIMD over whole input
// rows into v (W elements), then the maximum over the window's columns:
// for the output columns whose window is inside the row, SIMD over
// shifted runs of v (stride 1) or of its phases (stride SW: v split into
// its SW phases ph once per output row); the few edge columns one by
// one. The maximum of a set does not depend on the order it is taken in
// (NaN wins, as Go's max), so the values are those of the window-by-
// window loop.
func maxPoolPlane(p *Pool2D, xc, yc, vx, ph []float32) {
	ninf := float32(math.Inf(-1))
	v := vx[:p.W] // vx: one value more for maxColumns
	qlo, qhi := interior(p)
	n := qhi - qlo
	pw := (p.W + p.SW - 1) / p.SW
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
		for q := 0; q < qlo; q++ {
			yr[q] = maxEdge(p, v, q)
		}
		for q := qhi; q < p.OW; q++ {
			yr[q] = maxEdge(p, v, q)
		}
		if n == 0 {
			continue
		}
		if n < 8 || p.SW > 1 && n < smallRow || p.SW == 2 && p.KW == 3 && p.DW == 1 {
			// Short rows: a call per window column (after splitting
			// the row into its phases) would cost more than the row;
			// the columns' maximum in registers.
			maxColumns(p, vx, yr, qlo, qhi)
			continue
		}
		d := yr[qlo:qhi]
		switch p.SW {
		case 1:
		case 2:
			split2(v, ph[:pw], ph[pw:2*pw])
		default:
			splitPhases(v, p.SW, pw, ph)
		}
		for kw := 0; kw < p.KW; kw++ {
			// Window column kw of output column q is v[q·SW + off].
			off := kw*p.DW - p.PL
			var run []float32
			if p.SW == 1 {
				run = v[qlo+off : qlo+off+n]
			} else {
				// v[(qlo+i)·SW + off] is phase r at qlo + i + b
				// (off = b·SW + r).
				r := ((off % p.SW) + p.SW) % p.SW
				b := (off - r) / p.SW
				run = ph[r*pw+qlo+b : r*pw+qlo+b+n]
			}
			if kw == 0 {
				copy(d, run)
			} else {
				vmax(d, run)
			}
		}
	}
}

// interior returns the output columns [qlo, qhi) whose window columns
// are all inside [0, W).
func interior(p *Pool2D) (qlo, qhi int) {
	qlo, qhi = colRange(-p.PL, p.SW, p.W, p.OW)
	l, h := colRange((p.KW-1)*p.DW-p.PL, p.SW, p.W, p.OW)
	qlo, qhi = max(qlo, l), min(qhi, h)
	return qlo, max(qhi, qlo)
}

// interiorCols is the number of interior output columns (interior).
func interiorCols(p *Pool2D) int {
	lo, hi := interior(p)
	return hi - lo
}

// shortPool pools planes of stride 1 whose output rows are short (the
// 3×3/1 pools of an inception block on 14×14 and 7×7) plane-wide instead
// of row by row, so that the maxima over the window columns are a few
// SIMD runs over the whole plane rather than a short run per row: the
// window rows' maximum of every output row into v (OH rows of W), then
// for each window column one run over all of v shifted by its offset,
// into t (column q of row o at o·W + q; the run crosses into the next
// row only at columns outside the interior, which are not read back).
// The interior columns are copied into the output rows and the edge
// columns computed one by one from v. (At stride 2 the rows' phase
// split made it slower than the per-column loop: 46 against 40 µs on
// SqueezeNet's 64×31² pool.)
type shortPool struct {
	p        *Pool2D
	qlo, qhi int
	v, t     []float32
	empty    []bool // output rows whose window rows are all padding
}

func newShortPool(p *Pool2D) *shortPool {
	sp := &shortPool{p: p, v: make([]float32, p.OH*p.W), t: make([]float32, p.OH*p.W), empty: make([]bool, p.OH)}
	sp.qlo, sp.qhi = interior(p)
	return sp
}

// plane pools one plane xc into yc.
func (sp *shortPool) plane(xc, yc []float32) {
	p := sp.p
	ninf := float32(math.Inf(-1))
	w, n := p.W, sp.qhi-sp.qlo
	if p.SH == 1 {
		sp.rowsMax(xc)
	}
	for o := 0; p.SH != 1 && o < p.OH; o++ {
		v := sp.v[o*w : (o+1)*w]
		first := true
		for kh := 0; kh < p.KH; kh++ {
			ih := o*p.SH - p.PT + kh*p.DH
			if ih < 0 || ih >= p.H {
				continue
			}
			src := xc[ih*w : (ih+1)*w]
			if first {
				copy(v, src)
				first = false
			} else {
				vmax(v, src)
			}
		}
		sp.empty[o] = first
	}
	if n > 0 && p.OH > 0 {
		// Column q of row o is t[o·W + q], q in [qlo, qhi): one run of
		// (OH−1)·W + n values from t[qlo] on; window column kw reads
		// v[q + off].
		run := (p.OH-1)*w + n
		d := sp.t[sp.qlo : sp.qlo+run]
		for kw := 0; kw < p.KW; kw++ {
			off := kw*p.DW - p.PL
			src := sp.v[sp.qlo+off : sp.qlo+off+run]
			if kw == 0 {
				copy(d, src)
			} else {
				vmax(d, src)
			}
		}
	}
	if n > 0 {
		// The interior columns of every row in one call (the empty
		// rows' are overwritten below).
		copyStrided(p.OH, n, sp.t[sp.qlo:], w, yc[sp.qlo:], p.OW)
	}
	for o := 0; o < p.OH; o++ {
		yr := yc[o*p.OW : (o+1)*p.OW]
		if sp.empty[o] { // every window row in the padding
			for q := range yr {
				yr[q] = ninf
			}
			continue
		}
		v := sp.v[o*w : (o+1)*w]
		for q := 0; q < sp.qlo; q++ {
			yr[q] = maxEdge(p, v, q)
		}
		for q := sp.qhi; q < p.OW; q++ {
			yr[q] = maxEdge(p, v, q)
		}
	}
}

// rowsMax sets sp.v's rows to the maximum over the window rows (stride
// 1) plane-wide: window row kh of the output rows [lo, hi) whose input
// row is inside the plane is one run of input rows, so each window row
// is one copy or vmax over a run of rows instead of one per output row.
// The first window row (in kh order) with any rows is copied, the rows
// it does not cover start at −Inf (vmax(−Inf, x) is x, bits included:
// NaN payloads and −0 too), the others are taken in kh order as the
// row-by-row loop takes them, so that every row sees the same sequence
// of vmax operands (whose ±0 result depends on their order) and gets
// the same bits. The empty flags mark the rows no window row covers.
func (sp *shortPool) rowsMax(xc []float32) {
	p := sp.p
	w := p.W
	ninf := float32(math.Inf(-1))
	for o := range sp.empty {
		sp.empty[o] = true
	}
	first := true
	for kh := 0; kh < p.KH; kh++ {
		d := kh*p.DH - p.PT // input row of output row o: o + d
		lo, hi := max(0, -d), min(p.OH, p.H-d)
		if lo >= hi {
			continue
		}
		dst, src := sp.v[lo*w:hi*w], xc[(lo+d)*w:(hi+d)*w]
		if first {
			copy(dst, src)
			for i := range sp.v[:lo*w] {
				sp.v[i] = ninf
			}
			rest := sp.v[hi*w:]
			for i := range rest {
				rest[i] = ninf
			}
			first = false
		} else {
			vmax(dst, src)
		}
		for o := lo; o < hi; o++ {
			sp.empty[o] = false
		}
	}
}

// maxColumns sets yr[q], qlo ≤ q < qhi, to the maximum over the window
// columns of output column q, all inside the row (v holds the row and
// one value more).
func maxColumns(p *Pool2D, v, yr []float32, qlo, qhi int) {
	if p.KW == 3 && p.DW == 1 && p.SW == 2 {
		maxWin3S2(v[qlo*2-p.PL:], yr[qlo:qhi])
		return
	}
	if p.KW == 3 && p.DW == 1 {
		for q := qlo; q < qhi; q++ {
			r := v[q*p.SW-p.PL:][:3]
			yr[q] = max(r[0], r[1], r[2])
		}
		return
	}
	for q := qlo; q < qhi; q++ {
		r := v[q*p.SW-p.PL:]
		m := r[0]
		for kw := 1; kw < p.KW; kw++ {
			m = max(m, r[kw*p.DW])
		}
		yr[q] = m
	}
}

// maxEdge is the maximum over the window columns of output column q
// that are inside v (−Inf when none is).
func maxEdge(p *Pool2D, v []float32, q int) float32 {
	m := float32(math.Inf(-1))
	iw := q*p.SW - p.PL
	for kw := 0; kw < p.KW; kw, iw = kw+1, iw+p.DW {
		if uint(iw) < uint(len(v)) {
			m = max(m, v[iw])
		}
	}
	return m
}
