package kernels

import "math"

// gapPoolFloats is the size a gapped block's buffers aim at (floats
// each; three of them stay in L1 together).
const gapPoolFloats = 2048

// gapStride2Floats bounds the planes (with a window's margin) pooled as
// gapped blocks at stride 2: larger ones (the 112×112 planes after a
// stem convolution, a U-Net's 128×128) run faster row by row, their
// gapped buffers no longer in L1 (64×112² 3×3/2: 254–500 µs row by row,
// 593–678 gapped; 128×55²: 250–374 → 141–151).
const gapStride2Floats = 3600

// gapPool reports whether MaxPool2D pools p as gapped blocks of planes
// (maxPoolGapped): strides 1 or 2 (any dilation; at stride 2 planes up
// to about 57×57, gapStride2Floats), pads under the window on every
// side. The 3×3/1 pools of an
// inception block and the 3×3/2 ones between its stages are the case:
// on 28×28 to 7×7 planes a pass per plane, or per row, cost more in
// calls than in maxima. (Where the CPU has AVX-512, MaxPool2D gives the
// 2×2/2, 3×3/2 and 3×3/1 pools to the whole-row kernels first:
// pools2.go.)
func gapPool(p *Pool2D) bool {
	if p.SH > 2 || p.SW > 2 || (p.SH == 2 || p.SW == 2) && (p.H+p.KH)*(p.W+p.KW) > gapStride2Floats {
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
// a time (strides 1 or 2). A block's planes are laid out one after the
// other as padded rows of wg: the input row followed by −Inf cells (at
// least the widest column pad: a gap is the right pad of one row and the
// left pad of the next), each plane after gr rows of −Inf (at least the
// widest row pad: the bottom pad of one plane and the top pad of the
// next). At row stride 2 the padded rows are kept as two arrays, the even
// rows and the odd ones, so that the rows an output row reads are, for
// each window row, one row of one array, and consecutive output rows read
// consecutive rows of it. Then both passes of the separable maximum are a
// few runs over the whole block: the maximum over the window rows (KH
// runs into v, each an array shifted by the window row's offset), over
// the window columns (KW runs of v shifted by the window column's
// offset, or at column stride 2 of v's even or odd elements, split once),
// into t; each plane's OH×OW outputs are one strided copy out of t. Every
// output takes its window in the order the row-by-row loop does (rows,
// then columns, each in kernel order, a padding cell as −Inf, which vmax
// gives back the other operand for), so the values are the same; like
// shortPool, NaN payloads and the sign of a ±0 tie may differ (vmax's
// SIMD head and Go tail).
func maxPoolGapped(p *Pool2D, in, y []float32, lo, hi int) {
	pr, pb := gapPads(p)
	gc, gr := max(p.PL, pr, 0), max(p.PT, pb, 0)
	sh, sw := p.SH, p.SW
	// Column stride 2: an even left margin and row width keep every
	// row's column phases in step; row stride 2: an even plane height
	// keeps the planes' row phases in step.
	gl := gc + gc%sw
	wg := p.W + gc
	wg += wg % sw
	hg := gr + p.H
	hg += hg % sh
	ps := hg * wg
	nb := max(1, min(hi-lo, gapPoolFloats/ps))
	// Phase arrays of nr/sh rows each, after a margin of gl cells: the
	// rows of nb planes and gr more (the last plane's bottom pad).
	nr := nb*hg + gr
	nr += nr % sh
	pa := gl + nr/sh*wg // one phase array
	size := sh * pa
	nbuf := 3
	if sw == 2 {
		nbuf = 4
	}
	buf := make([]float32, nbuf*size)
	b, v, t := buf[:size], buf[size:2*size], buf[2*size:3*size]
	// −Inf everywhere (the data cells are overwritten below): doubling
	// copies, at memmove's speed.
	b[0] = float32(math.Inf(-1))
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
	hw, npix := p.H*p.W, p.OH*p.OW
	for pl := lo; pl < hi; pl += nb {
		n := min(nb, hi-pl)
		for k := 0; k < n; k++ {
			// Input row ih is padded row R = k·hg + gr + ih: row R/sh of
			// phase array R mod sh.
			for q := 0; q < sh; q++ {
				ih0 := ((q-(k*hg+gr))%sh + sh) % sh
				if ih0 >= p.H {
					continue
				}
				rows := (p.H - ih0 + sh - 1) / sh
				r0 := (k*hg + gr + ih0) / sh
				copyStrided(rows, p.W, in[(pl+k)*hw+ih0*p.W:], sh*p.W, b[q*pa+gl+r0*wg:], wg)
			}
		}
		// Rows: output row o of plane k is row o' = k·hg/sh + o of v;
		// window row kh reads padded row sh·o' + s (s = gr − PT +
		// kh·DH): row o' + s/sh of phase array s mod sh. Every cell of
		// v up to the last output row's row, gaps and margin included
		// (the columns pass reads them).
		nv := (n-1)*hg/sh + p.OH // rows of v
		vhi := gl + nv*wg
		rowsrc := func(kh int) []float32 {
			s := gr - p.PT + kh*p.DH
			off := s%sh*pa + s/sh*wg
			return b[off : off+vhi]
		}
		windowMax(v[:vhi], p.KH, rowsrc)
		if sw == 1 {
			// Columns: t[j] = max over kw of v[j + kw·DW − PL], j from
			// the first output to the last.
			tlo, thi := gl, gl+(nv-1)*wg+p.OW
			windowMax(t[tlo:thi], p.KW, func(kw int) []float32 {
				off := kw*p.DW - p.PL
				return v[tlo+off : thi+off]
			})
			for k := 0; k < n; k++ {
				copyStrided(p.OH, p.OW, t[gl+k*hg/sh*wg:], wg, y[(pl+k)*npix:], p.OW)
			}
			continue
		}
		// Column stride 2: v split into its phases; window column kw of
		// output (o', q) is v[gl + o'·wg + 2q + off], i.e. phase off mod
		// 2 at gl/2 + o'·wg/2 + q + ⌊off/2⌋; t[o'·wg/2 + q].
		ph := buf[3*size : 4*size]
		ev, od := ph[:(vhi+1)/2], ph[(vhi+1)/2:vhi]
		split2(v[:vhi], ev, od)
		h := wg / 2
		tn := (nv-1)*h + p.OW
		windowMax(t[:tn], p.KW, func(kw int) []float32 {
			off := kw*p.DW - p.PL
			r := off & 1
			src := ev
			if r == 1 {
				src = od
			}
			k0 := gl/2 + (off-r)/2
			return src[k0 : k0+tn]
		})
		for k := 0; k < n; k++ {
			copyStrided(p.OH, p.OW, t[k*hg/sh*h:], h, y[(pl+k)*npix:], p.OW)
		}
	}
}

// windowMax sets d to the maximum of src(0), …, src(k−1) (each len(d)
// long) taken in that order: a copy of the first and vmax of the others,
// the first three in one pass (max3, the same bits).
func windowMax(d []float32, k int, src func(i int) []float32) {
	i := 0
	if k >= 3 {
		max3(d, src(0), src(1), src(2))
		i = 3
	} else {
		copy(d, src(0))
		i = 1
	}
	for ; i < k; i++ {
		vmax(d, src(i))
	}
}
