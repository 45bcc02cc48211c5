package kernels

import "math"

// gapPoolFloats is the size a gapped block's buffers aim at (floats
// each; three of them stay in L1 together).
const gapPoolFloats = 2048

// gapPool reports whether MaxPool2D pools p as gapped blocks of planes
// (maxPoolGapped): strides 1 or 2 (any dilation; at stride 2 only planes
// that fit a block, ≤ ~40×40: on larger ones the rows computed and
// dropped cost more than the row-by-row path's calls), pads under the
// window on every side. The 3×3/1 pools of an
// inception block and the 3×3/2 ones between its stages are the case:
// on 28×28 to 7×7 planes a pass per plane, or per row, cost more in
// calls than in maxima.
func gapPool(p *Pool2D) bool {
	if p.SH > 2 || p.SW > 2 || (p.SH == 2 || p.SW == 2) && (p.H+p.KH)*(p.W+p.KW) > gapPoolFloats {
		return false
	}
	pr, pb := gapPads(p)
	return p.PL < p.KW && pr < p.KW && p.PT < p.KH && pb < p.KH
}

// gapPads returns the right and bottom pads the output reaches (≤ 0
// when it stops inside the plane).
func gapPads(p *Pool2D) (pr, pb int) {
	return (p.OW-1)*p.SW + (p.KW-1)*p.DW - p.PL - (p.W - 1), (p.OH-1)*p.SH + (p.KH-1)*p.DH - p.PT - (p.H - 1)
}

// maxPoolGapped pools planes [lo, hi) of in into y, a block of planes at
// a time (strides 1 or 2). A block's planes are laid out in b one after the other, each
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
	// At column stride 2 the rows are split into their even and odd
	// elements: an even row width and left margin keep every row's
	// phases in step.
	gl := gc + gc%p.SW
	wg, hg := p.W+gc, p.H+gr
	wg += wg % p.SW
	ps := hg * wg
	base := gr*wg + gl
	nbuf := 3
	if p.SW == 2 {
		nbuf = 4
	}
	nb := max(1, min(hi-lo, gapPoolFloats/ps))
	size := base + nb*ps
	buf := make([]float32, nbuf*size)
	b, v, t := buf[:size], buf[size:2*size], buf[2*size:3*size]
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
		// every row up to the last plane's last output row (at row
		// stride 2 the rows between too), gaps included (the columns
		// pass reads them).
		last := (n-1)*hg + (p.OH-1)*p.SH // the last output row's row
		vlo, vhi := base-gl, base+(last+1)*wg
		for kh := 0; kh < p.KH; kh++ {
			off := (kh*p.DH - p.PT) * wg
			src := b[vlo+off : vhi+off]
			if kh == 0 {
				copy(v[vlo:vhi], src)
			} else {
				vmax(v[vlo:vhi], src)
			}
		}
		// Columns: t[j] = max over kw of v[j·SW + kw·DW − PL] (rows
		// relative), j from the first output to the last.
		if p.SW == 1 {
			tlo, thi := base, base+last*wg+p.OW
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
				copyStrided(p.OH, p.OW, t[base+k*ps:], p.SH*wg, y[(pl+k)*npix:], p.OW)
			}
			continue
		}
		// Column stride 2: v from vlo (even elements before the first
		// row's) split into its phases; window column kw of output
		// (R, q) is v[vlo + gl + R·wg + 2q + off], i.e. phase off mod 2
		// at gl/2 + R·wg/2 + q + ⌊off/2⌋; t[R·wg/2 + q].
		ph := buf[3*size : 4*size]
		nv := vhi - vlo
		ev, od := ph[:(nv+1)/2], ph[(nv+1)/2:nv]
		split2(v[vlo:vhi], ev, od)
		h := wg / 2
		tn := last*h + p.OW
		for kw := 0; kw < p.KW; kw++ {
			off := kw*p.DW - p.PL
			r := off & 1
			src := ev
			if r == 1 {
				src = od
			}
			k0 := gl/2 + (off-r)/2
			if kw == 0 {
				copy(t[:tn], src[k0:k0+tn])
			} else {
				vmax(t[:tn], src[k0:k0+tn])
			}
		}
		for k := 0; k < n; k++ {
			copyStrided(p.OH, p.OW, t[k*hg*h:], p.SH*h, y[(pl+k)*npix:], p.OW)
		}
	}
}
