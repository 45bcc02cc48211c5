package kernels

import "math"

// gapPoolFloats is the size a gapped block's buffers aim at (floats
// each; three of them stay in L1 together).
const gapPoolFloats = 2048

// gapPool reports whether MaxPool2D pools p as gapped blocks of planes
// (maxPoolGapped): strides 1 (any dilation), pads under the window on
// every side. The 3×3/1 pools of an inception block are the case: on
// 14×14 and 7×7 planes a pass per plane, or per row, cost more in calls
// than in maxima.
func gapPool(p *Pool2D) bool {
	if p.SH != 1 || p.SW != 1 {
		return false
	}
	pr, pb := gapPads(p)
	return p.PL < p.KW && pr < p.KW && p.PT < p.KH && pb < p.KH
}

// gapPads returns the right and bottom pads the output reaches (≤ 0
// when it stops inside the plane).
func gapPads(p *Pool2D) (pr, pb int) {
	return p.OW - 1 + (p.KW-1)*p.DW - p.PL - (p.W - 1), p.OH - 1 + (p.KH-1)*p.DH - p.PT - (p.H - 1)
}

// maxPoolGapped pools planes [lo, hi) of in into y, a block of planes at
// a time. A block's planes are laid out in b one after the other, each
// row followed by gc cells of −Inf and each plane by gr rows of them
// (gc, gr: the widest column and row pads; a gap is the right pad of
// one row and the left pad of the next, the bottom pad of one plane
// and the top pad of the next), so that both passes of the separable
// maximum are a few runs over the whole block: the maximum over the
// window rows (KH runs into v, each b shifted by a window row's
// offset), then over the window columns (KW runs of v shifted by a
// window column's offset, into t), then each plane's OH×OW outputs
// copied out of t. Every output takes its window in the order the
// row-by-row loop does (rows, then columns, each in kernel order, a
// padding cell as −Inf, which vmax gives back the other operand for),
// so the values are the same; like shortPool, NaN payloads and the
// sign of a ±0 tie may differ (vmax's SIMD head and Go tail).
func maxPoolGapped(p *Pool2D, in, y []float32, lo, hi int) {
	pr, pb := gapPads(p)
	gc, gr := max(p.PL, pr, 0), max(p.PT, pb, 0)
	wg, hg := p.W+gc, p.H+gr
	ps := hg * wg
	base := gr*wg + gc
	nb := max(1, min(hi-lo, gapPoolFloats/ps))
	size := base + nb*ps
	buf := make([]float32, 3*size)
	b, v, t := buf[:size], buf[size:2*size], buf[2*size:]
	ninf := float32(math.Inf(-1))
	for i := range b {
		b[i] = ninf
	}
	hw, npix := p.H*p.W, p.OH*p.OW
	for pl := lo; pl < hi; pl += nb {
		n := min(nb, hi-pl)
		for k := 0; k < n; k++ {
			copyStrided(p.H, p.W, in[(pl+k)*hw:], p.W, b[base+k*ps:], wg)
		}
		// Rows: v[j] = max over kh of b[j + (kh·DH − PT)·wg], j over
		// every row up to the last plane's last output row, gaps
		// included (the columns pass reads them).
		vlo, vhi := base-gc, base+((n-1)*hg+p.OH)*wg
		for kh := 0; kh < p.KH; kh++ {
			off := (kh*p.DH - p.PT) * wg
			src := b[vlo+off : vhi+off]
			if kh == 0 {
				copy(v[vlo:vhi], src)
			} else {
				vmax(v[vlo:vhi], src)
			}
		}
		// Columns: t[j] = max over kw of v[j + kw·DW − PL], j from the
		// first output to the last.
		tlo, thi := base, base+((n-1)*hg+p.OH-1)*wg+p.OW
		for kw := 0; kw < p.KW; kw++ {
			off := kw*p.DW - p.PL
			src := v[tlo+off : thi+off]
			if kw == 0 {
				copy(t[tlo:thi], src)
			} else {
				vmax(t[tlo:thi], src)
			}
		}
		for k := 0; k < n; k++ {
			copyStrided(p.OH, p.OW, t[base+k*ps:], wg, y[(pl+k)*npix:], p.OW)
		}
	}
}
