package kernels

import (
	"encoding/binary"
	"unsafe"
)

// The fused row-block convolution, for convolutions whose im2col matrix
// has few rows (k = C/G·KH·KW ≤ blockK, one k-block) and whose packed
// weights are small: the first convolution of the mobile nets (3 input
// channels, 3×3 stride 2 on 224×224) and the like. convFlat runs such a
// layer as four passes over memory, each a parallel call: the phase
// planes (split by channel: 3 channels on 2 threads is 2 against 1), the
// bias fill of the whole output, the SGEMM, the copy of the grid to the
// output (and scalar strided copies build the planes). Here one
// parallel call cuts the output rows into chunks; each chunk runs, block
// of rows by block of rows (a few output rows: its planes stay in L2):
//
//   - tap planes: for each input channel c, row phase a (kh·DH mod SH)
//     and column offset off (kw·DW − PL), the rows i of the block (and
//     the rows below it the taps reach) as im2col rows,
//     plane[i·OW + q] = x[c][i·SH + a − PT][q·SW + off] (zero outside):
//     B row (c, kh, kw) for output pixel o·OW + q is the plane of (c, kh's
//     phase, kw's offset) at (o + kh·DH div SH)·OW + q — one contiguous
//     run for any panel of pixels, even across output rows. At stride 1
//     with OW = W each offset's plane is one shifted copy of the input
//     rows the block reads; the rows of a strided input are split into
//     their column phases once per row, and an offset's plane that is a
//     shifted column phase is one shifted copy of that phase's plane;
//   - per panel of nr output pixels: B read in place by the micro-kernel
//     with a table of row offsets (mk.offs; a last partial panel too,
//     its columns past the pixels reading the planes' slack), or packed
//     by nr-float copies, then the micro-kernel per mr output channels,
//     the bias added as it stores: a whole panel straight into Y, a
//     partial one into a tile whose real columns are copied to Y.
//
// Every output element is bias + (one chain of FMAs from zero in k
// order), as on the im2col path: bit-identical results whatever the
// chunks and the thread count.

// rowsMaxA bounds the packed weights of a convolution run by convRows
// (elements: 64 KiB, read for every panel of pixels: 64 outputs of a
// 7×7 convolution on 3 channels, ResNet's and GoogLeNet's first).
const rowsMaxA = 1 << 14

// rowsPlanes bounds the tap planes of one block of rows (elements,
// 128 KiB, in L2).
const rowsPlanes = 1 << 15

// rowsChanOuter: an output of at least this many bytes (per image and
// group) is computed channel panel by channel panel within each block
// of rows (mr output planes over all the block's pixels, then the next
// mr), not pixel panel by pixel panel over all the channels. In a model
// such an output (the stems: 64 planes of 111² or 112², 3 MiB) is a
// buffer last touched a run before, out of the caches; written a panel
// of nr pixels in each of 64 planes at a time, the stores go to 64
// pages at once, more streams than the L2 prefetcher follows, and each
// line's write-allocate waits on memory. mr planes at a time are mr
// long sequential streams. Measured in SqueezeNet 1.1 (one thread, least
// of 100 runs): its first convolution 660–720 µs → 480–500 without ONNX
// Runtime between runs, 1100–1130 → 650–660 with; GoogLeNet's 1770–2030
// → 1610–1660. Smaller outputs lose: the tap planes of a block are read
// again from L2 for each channel panel (SqueezeNet's 3×3 16 → 64 on 55²,
// 0.8 MiB: 500–525 µs → 565–572); the 0.8–1.6 MiB stems of the mobile
// nets are even.
const rowsChanOuter = 2 << 20

// useRows reports whether convRows runs a convolution whose weights pg
// packed (as A) for mk: one k-block, small packed weights, and not a
// plain 1×1 convolution (the SGEMM on the input itself).
func useRows(p *Conv2D, mk microKernel, pg *Packed) bool {
	if pg == nil || !pg.isA {
		return false
	}
	if p.KH == 1 && p.KW == 1 && p.SH == 1 && p.SW == 1 && p.PT == 0 && p.PL == 0 && p.PB == 0 && p.PR == 0 {
		return false
	}
	mg, kk := p.M/p.Groups, p.C/p.Groups*p.KH*p.KW
	if kk > blockK || roundUp(mg, mk.mr)*kk > rowsMaxA {
		return false
	}
	// The planes of the smallest block (4·maxRow rows and maxRow more,
	// see set) within maxCols elements, for peak memory on large images.
	_, ow := p.Out()
	maxRow := (p.KH - 1) * p.DH / p.SH
	return p.C/p.Groups*min(p.SH, p.KH)*p.KW*ow*(5*maxRow+1) <= maxCols
}

// rowsConv is one image and group of a convolution run by convRows.
type rowsConv struct {
	p      *Conv2D
	mk     microKernel
	pg     *Packed
	x      []float32 // cg input planes
	y      []float32 // mg output planes
	cg, mg int
	kk     int
	oh, ow int
	// bias is the bias (nil: none), padded with zeros to whole panels
	// of mr rows (in bpad) for a micro-kernel without edge kernels,
	// whose tiles compute all mr rows.
	bias, bpad []float32
	// relu makes the micro-kernel store max(·, 0) (1, ActRelu) or
	// min(max(·, 0), 6) (2, ActRelu6).
	relu int
	// tail (nil: none) runs on each block's rows of every output plane
	// once they are computed, at offset base+ in its output.
	tail Epilogue
	base int
	// chanOuter: each block runs channel panel by channel panel, each
	// over all the block's pixels (rowsChanOuter), instead of pixel
	// panel by pixel panel over all channels.
	chanOuter bool
	// phases lists the row phases the taps read; offs the column
	// offsets, cols how each offset's plane row is copied.
	phases, offs []int
	cols         []tapCol
	// whole[ph] is the offset (index) whose plane rows are stride-2
	// column phase ph, or −1; derived[oi] that offset oi's planes are
	// shifted copies of whole[its phase]'s, made once per plane.
	whole   [2]int
	derived []bool
	// flat1: stride 1 with OW = W, each offset's plane is one shifted
	// copy of the input's rows (shiftPlane).
	flat1 bool
	// split2: stride 2, every offset a whole column phase of OW
	// elements (rows split straight into them) or derived; cut2 (with
	// split2): the phases are longer than OW (setCut2).
	split2, cut2 bool
	// inPlace: every panel's B rows are read in place (mk has offset
	// kernels for every tile panel uses).
	inPlace bool
	// key is what the lists were made for (keyed: they were).
	key   rowsKey
	keyed bool
	// tapPlane[t] is tap t's (kh·KW+kw) plane within a channel's
	// planes (phase index·len(offs) + offset index); tapRow its row
	// shift (kh·DH div SH).
	tapPlane, tapRow []int
	maxRow           int // largest tapRow
	// phRows[ai] is the largest tapRow of phase ai's taps: its planes'
	// rows past block+phRows are never read for a pixel of the block.
	phRows []int
	// block is the output rows of one block of tap planes; align the
	// rows that make a whole number of panels (1 when that is over 4).
	block, align int
}

// rowOffKey is what convRows' table of B row offsets depends on: the
// geometry and the elements of one tap plane.
type rowOffKey struct {
	p     Conv2D
	plane int
}

// tapCol is one column offset off of the tap planes: columns [lo, hi)
// are inside the input; a strided row's are its column phase ph's
// elements from at on.
type tapCol struct{ off, lo, hi, ph, at int }

// rowsKey is what a rowsConv's lists depend on: the geometry and the
// micro-kernel (its name, and whether it reads every panel in place).
type rowsKey struct {
	p       Conv2D
	kernel  string
	inPlace bool
}

// set makes r one image and group of a convolution, reusing r's lists
// (as they are when r's last convolution had the same geometry: the
// groups of one layer).
func (r *rowsConv) set(p *Conv2D, mk microKernel, pg *Packed, xg []float32, cg, mg int, bg, yg []float32) {
	h := mk.half
	inPlace := mk.offs != nil && mk.edge != nil && len(mk.offsEdge) == mk.mr &&
		(h == nil || h.offs != nil && len(h.offsEdge) == mk.mr)
	key := rowsKey{p: *p, kernel: mk.name, inPlace: inPlace}
	if r.keyed && r.key == key {
		r.p, r.mk, r.pg, r.x, r.y, r.relu = p, mk, pg, xg, yg, 0
		r.setBias(bg)
		return
	}
	oh, ow := p.Out()
	*r = rowsConv{p: p, mk: mk, pg: pg, x: xg, y: yg, cg: cg, mg: mg, kk: cg * p.KH * p.KW, oh: oh, ow: ow,
		phases: r.phases[:0], offs: r.offs[:0], cols: r.cols[:0], tapPlane: r.tapPlane[:0], tapRow: r.tapRow[:0],
		bpad: r.bpad[:0], derived: r.derived[:0], phRows: r.phRows[:0], key: key, keyed: true, inPlace: inPlace}
	r.setBias(bg)
	index := func(list *[]int, v int) int {
		for i, u := range *list {
			if u == v {
				return i
			}
		}
		*list = append(*list, v)
		return len(*list) - 1
	}
	// tapPlane holds each tap's phase index until the offsets are known.
	for kh := 0; kh < p.KH; kh++ {
		for kw := 0; kw < p.KW; kw++ {
			r.tapPlane = append(r.tapPlane, index(&r.phases, kh*p.DH%p.SH))
			index(&r.offs, kw*p.DW-p.PL)
			r.tapRow = append(r.tapRow, kh*p.DH/p.SH)
			r.maxRow = max(r.maxRow, kh*p.DH/p.SH)
		}
	}
	for range r.phases {
		r.phRows = append(r.phRows, 0)
	}
	for t, ph := range r.tapPlane {
		r.phRows[ph] = max(r.phRows[ph], r.tapRow[t])
		r.tapPlane[t] = ph*len(r.offs) + index(&r.offs, t%p.KW*p.DW-p.PL)
	}
	for _, o := range r.offs {
		lo, hi := colRange(o, p.SW, p.W, ow)
		// src[q·SW + o] is column phase ph's element q + sh.
		ph := ((o % p.SW) + p.SW) % p.SW
		sh := (o - ph) / p.SW
		r.cols = append(r.cols, tapCol{off: o, lo: lo, hi: hi, ph: ph, at: lo + sh})
	}
	// Stride 2: an offset whose plane row is a whole column phase gets
	// the phase split straight into it (the others copy from it).
	r.whole = [2]int{-1, -1}
	if p.SW == 2 {
		for oi, t := range r.cols {
			if n := (p.W + 1 - t.ph) / 2; t.lo == 0 && t.at == 0 && t.hi == n && r.whole[t.ph] < 0 {
				r.whole[t.ph] = oi
			}
		}
	}
	for oi, t := range r.cols {
		w := -1
		if p.SW == 2 {
			w = r.whole[t.ph]
		}
		r.derived = append(r.derived, t.lo < t.hi && w >= 0 && w != oi)
	}
	r.flat1 = p.SH == 1 && p.SW == 1 && ow == p.W
	// Stride 2 whose column phases are both whole plane rows (OW each)
	// and whose other offsets derived from them (3×3, pads 1, even W).
	r.split2 = p.SW == 2 && r.whole[0] >= 0 && r.whole[1] >= 0 && (p.W+1)/2 == ow && p.W/2 == ow
	for oi := range r.cols {
		if !r.derived[oi] && oi != r.whole[0] && oi != r.whole[1] {
			r.split2 = false
		}
	}
	if p.SW == 2 && !r.split2 && p.W > 2*ow {
		r.setCut2()
	}
	// Blocks of output rows whose planes fit rowsPlanes, but at least
	// four times the rows the taps reach below (which each block copies
	// again), a whole number of panels when that is at most 4 rows.
	perRow := cg * len(r.phases) * len(r.offs) * ow
	r.align = rowsAlign(ow, mk.nr)
	if r.align > 4 {
		r.align = 1
	}
	r.block = max(1, rowsPlanes/perRow-r.maxRow, 4*r.maxRow)
	if r.block > r.align {
		r.block = r.block / r.align * r.align
	}
}

// setCut2 makes r a split2 convolution whose input rows are longer than
// the two column phases' OW elements (no right pad: SqueezeNet's 3×3/2
// on 224 columns, 111 outputs), if it is one: for each phase an offset
// whose plane row is the phase's first OW elements (those of the row's
// first 2·OW columns, split straight into them), every other offset a
// shifted copy of one of those with its last columns (past the phase's
// first OW elements) taken from the input row (cut2Tail).
func (r *rowsConv) setCut2() {
	first := [2]int{-1, -1}
	for oi, t := range r.cols {
		if t.lo == 0 && t.at == 0 && t.hi == r.ow && first[t.ph] < 0 {
			first[t.ph] = oi
		}
	}
	if first[0] < 0 || first[1] < 0 {
		return
	}
	for oi, t := range r.cols {
		if oi != first[0] && oi != first[1] && t.lo >= t.hi {
			return
		}
	}
	r.whole, r.split2, r.cut2 = first, true, true
	for oi := range r.cols {
		r.derived[oi] = oi != first[0] && oi != first[1]
	}
}

// setBias sets r's bias to bg (nil: none), padded to whole panels of
// mr rows when r's micro-kernel has no edge kernels.
func (r *rowsConv) setBias(bg []float32) {
	r.bias = bg
	if bg != nil && r.mk.edge == nil && r.mg%r.mk.mr != 0 {
		r.bpad = grow(r.bpad, roundUp(r.mg, r.mk.mr))
		copy(r.bpad, bg)
		clear(r.bpad[r.mg:])
		r.bias = r.bpad
	}
}

// rowsAlign is the number of output rows of ow pixels that make a whole
// number of panels of nr.
func rowsAlign(ow, nr int) int {
	a, b := ow, nr
	for b != 0 {
		a, b = b, a%b
	}
	return nr / a
}

// convRows runs one image and group of a convolution (packed weights pg,
// input xg of cg channels, output yg of mg planes, bias bg or nil, the
// micro-kernel's relu: 0 none, 1 ReLU, 2 ReLU6) as fused blocks of
// output rows, split over the threads by rows. tail (nil: none) runs on
// each block's part of every output plane right after the block (in
// cache), yg[0] being at offset base of tail's output.
func (x *Context) convRows(p *Conv2D, mk microKernel, pg *Packed, xg []float32, cg, mg int, bg, yg []float32, relu int, tail Epilogue, base int) {
	s := x.get()
	defer x.put(s)
	if s.rows == nil {
		s.rows = &rowsConv{}
	}
	r := s.rows
	r.set(p, mk, pg, xg, cg, mg, bg, yg)
	r.relu, r.tail, r.base = relu, tail, base
	r.chanOuter = r.inPlace && mg*r.oh*r.ow*4 >= rowsChanOuter
	// Do not keep the tensors alive from the pool.
	defer func() { r.p, r.pg, r.x, r.y, r.bias, r.tail = nil, nil, nil, nil, nil, nil }()
	units := (r.oh + r.align - 1) / r.align
	work := roundUp(mg, mk.mr) * roundUp(r.oh*r.ow, mk.nr) * r.kk
	c, _ := x.chunks(work, units)
	if c <= 1 {
		x.rowsChunk(r, 0, r.oh)
		return
	}
	// Two chunks per thread: one more evens out a helper that starts
	// late, and a thread running its blocks in order finds the rows the
	// last one's taps reached below in cache (measured on the first
	// convolution of the mobile nets on 2 threads: 4 chunks ≈ 100 µs, 8
	// ≈ 120 µs, 16 ≈ 130 µs).
	align := min(r.align, r.block)
	n := min(c, 2*x.cut(), (r.oh+align-1)/align)
	x.parallel(n, func(i int) { x.rowsChunk(r, cutAt(r.oh, n, align, i), cutAt(r.oh, n, align, i+1)) })
}

// cutAt is split(n, t, align)[i], for t ≤ ⌈n/align⌉, without the list.
func cutAt(n, t, align, i int) int {
	if i >= t {
		return n
	}
	return (n + align - 1) / align * i / t * align
}

// rowsChunk runs output rows [o0, o1) block by block.
func (x *Context) rowsChunk(r *rowsConv, o0, o1 int) {
	s := x.get()
	defer x.put(s)
	mk := r.mk
	align := min(r.align, r.block)
	nb := min((o1-o0+r.block-1)/r.block, (o1-o0+align-1)/align)
	for b := 0; b < nb; b++ {
		b0, b1 := o0+cutAt(o1-o0, nb, align, b), o0+cutAt(o1-o0, nb, align, b+1)
		r.planes(s, b0, b1)
		// B row (c, t) of pixel q (from b0·OW on) is at rowOff + q
		// (the same for every block of as many rows, in every group).
		lrows := b1 - b0 + r.maxRow
		plane := lrows * r.ow
		if k := (rowOffKey{p: r.key.p, plane: plane}); !s.rowsOffSet || s.rowsOffKey != k {
			if cap(s.rowsOff) < r.kk {
				s.rowsOff = make([]int, r.kk)
			}
			rowOff := s.rowsOff[:r.kk]
			taps := len(r.tapPlane)
			for c := 0; c < r.cg; c++ {
				for t, pl := range r.tapPlane {
					rowOff[c*taps+t] = ((c*len(r.phases)*len(r.offs))+pl)*plane + r.tapRow[t]*r.ow
				}
			}
			s.rowsOffKey, s.rowsOffSet = k, true
		}
		rowOff := s.rowsOff[:r.kk]
		q0, q1 := b0*r.ow, b1*r.ow
		s.b = grow(s.b, r.kk*mk.nr)
		s.tile = grow(s.tile, mk.mr*mk.nr)
		if r.chanOuter {
			// The same calls, mr output planes at a time: mr streams of
			// stores along the block's rows (see rowsChanOuter).
			for i0 := 0; i0 < r.mg; i0 += mk.mr {
				for q := q0; q < q1; q += mk.nr {
					r.panel(s, q, min(mk.nr, q1-q), rowOff, &s.cols[q-q0], i0, min(i0+mk.mr, r.mg))
				}
			}
		} else {
			for q := q0; q < q1; q += mk.nr {
				nn := min(mk.nr, q1-q)
				if r.inPlace {
					// Its rows read in place: a whole panel's last
					// pixel's rows end inside the planes, a partial
					// panel's inside their slack (the columns past nn
					// are not stored).
					r.panel(s, q, nn, rowOff, &s.cols[q-q0], 0, r.mg)
					continue
				}
				r.packPanel(s.b, s.cols, rowOff, q-q0, nn)
				r.panel(s, q, nn, nil, &s.b[0], 0, r.mg)
			}
		}
		if r.tail != nil {
			// The block's rows of each plane, still in cache.
			npix := r.oh * r.ow
			for m := 0; m < r.mg; m++ {
				r.tail(r.base+m*npix+q0, q1-q0)
			}
		}
	}
}

// planes fills s.cols with the tap planes of output rows [b0, b1): for
// each channel, phase and offset, rows b0 … b1+maxRow−1 of OW elements
// (then mk.nr elements of slack: a last partial panel of pixels is read
// in place, its columns past the planes discarded).
func (r *rowsConv) planes(s *scratch, b0, b1 int) {
	p := r.p
	ow := r.ow
	lrows := b1 - b0 + r.maxRow
	plane := lrows * ow
	s.cols = grow(s.cols, r.cg*len(r.phases)*len(r.offs)*plane+r.mk.nr)
	if r.flat1 {
		// Stride 1, OW = W (one phase): the input rows [ih0, ih1)
		// the block reads are one run; each offset's plane is that
		// run shifted, its columns outside the input zeroed.
		i0 := min(max(p.PT-b0, 0), lrows)
		i1 := min(max(p.H+p.PT-b0, i0), lrows)
		// The rows outside the input: those ending a plane and those
		// starting the next are one run.
		n := r.cg * len(r.offs) * plane
		clear(s.cols[:i0*ow])
		for c := 0; c < r.cg; c++ {
			xc := r.x[c*p.H*p.W : (c+1)*p.H*p.W]
			for oi, t := range r.cols {
				j := (c*len(r.offs) + oi) * plane
				shiftPlane(s.cols[j+i0*ow:j+i1*ow], xc, (b0+i0-p.PT)*p.W+t.at-t.lo, ow, t.lo, t.hi)
				clear(s.cols[j+i1*ow : min(j+plane+i0*ow, n)])
			}
		}
		return
	}
	// The column phases of one input row.
	pw := (p.W + p.SW - 1) / p.SW
	if p.SW > 1 {
		s.a = grow(s.a, p.SW*pw)
	}
	for c := 0; c < r.cg; c++ {
		xc := r.x[c*p.H*p.W : (c+1)*p.H*p.W]
		for ai, a := range r.phases {
			base := (c*len(r.phases) + ai) * len(r.offs) * plane
			// The rows the phase's taps read (the planes' last rows
			// past them, never read but by the discarded columns of a
			// partial panel, are left as they are).
			nrows := b1 - b0 + r.phRows[ai]
			if r.split2 {
				// Each row split straight into the two whole phases'.
				w0, w1 := base+r.whole[0]*plane, base+r.whole[1]*plane
				for i := 0; i < nrows; i++ {
					d0, d1 := s.cols[w0+i*ow:w0+(i+1)*ow], s.cols[w1+i*ow:w1+(i+1)*ow]
					if ih := (b0+i)*p.SH + a - p.PT; ih >= 0 && ih < p.H {
						src := xc[ih*p.W : (ih+1)*p.W]
						if r.cut2 {
							src = src[:2*ow]
						}
						split2(src, d0, d1)
					} else {
						clear(d0)
						clear(d1)
					}
				}
			}
			for i := 0; i < nrows && !r.split2; i++ {
				ih := (b0+i)*p.SH + a - p.PT
				if ih < 0 || ih >= p.H {
					for oi := range r.offs {
						if !r.derived[oi] {
							clear(s.cols[base+oi*plane+i*ow : base+oi*plane+(i+1)*ow])
						}
					}
					continue
				}
				src := xc[ih*p.W : (ih+1)*p.W]
				row := func(oi int) []float32 { return s.cols[base+oi*plane+i*ow : base+oi*plane+(i+1)*ow] }
				// The column phases: the rows of the offsets that are a
				// whole phase, or s.a.
				var ph [2][]float32
				switch p.SW {
				case 1:
				case 2:
					ph[0], ph[1] = s.a[:pw], s.a[pw:2*pw]
					for q, oi := range r.whole {
						if oi >= 0 {
							ph[q] = row(oi)
						}
					}
					split2(src, ph[0], ph[1])
				default:
					splitPhases(src, p.SW, pw, s.a)
				}
				for oi, t := range r.cols {
					if r.derived[oi] {
						continue
					}
					d := row(oi)
					if t.lo >= t.hi {
						// A tap column wholly in the padding (a whole
						// phase then has no elements: split2 wrote none).
						clear(d)
						continue
					}
					switch {
					case p.SW == 1:
						copy(d[t.lo:t.hi], src[t.lo+t.off:t.hi+t.off])
					case p.SW == 2:
						if r.whole[t.ph] != oi {
							copy(d[t.lo:t.hi], ph[t.ph][t.at:t.at+t.hi-t.lo])
						}
					default:
						copy(d[t.lo:t.hi], s.a[t.ph*pw+t.at:t.ph*pw+t.at+t.hi-t.lo])
					}
					clear(d[:t.lo])
					clear(d[t.hi:])
				}
			}
			// Stride 2: the other offsets of a whole phase, one shifted
			// copy of its plane each (its rows outside the input are
			// zero, its columns past the phase's too).
			for oi, t := range r.cols {
				if r.derived[oi] {
					w := base + r.whole[t.ph]*plane
					d := s.cols[base+oi*plane : base+oi*plane+nrows*ow]
					shiftPlane(d, s.cols[w:w+nrows*ow], t.at-t.lo, ow, t.lo, t.hi)
					if r.cut2 {
						r.cut2Tail(d, xc, t, (b0*p.SH)+a-p.PT, nrows)
					}
				}
			}
		}
	}
}

// cut2Tail sets the columns of tap plane d (nrows rows of OW, the first
// from input row ih0, the next SH rows down each) that its shifted copy
// took from the next row (column q+sh past the phase's first OW
// elements) to the input's column 2q+off (zero on a row outside the
// input).
func (r *rowsConv) cut2Tail(d, xc []float32, t tapCol, ih0, nrows int) {
	p, ow := r.p, r.ow
	sh := t.at - t.lo
	q0 := max(t.lo, ow-sh)
	if sh <= 0 || q0 >= t.hi {
		return
	}
	for i := 0; i < nrows; i++ {
		row := d[i*ow : (i+1)*ow]
		ih := ih0 + i*p.SH
		if ih < 0 || ih >= p.H {
			clear(row[q0:t.hi])
			continue
		}
		src := xc[ih*p.W : (ih+1)*p.W]
		for q := q0; q < t.hi; q++ {
			row[q] = src[2*q+t.off]
		}
	}
}

// shiftPlane sets d (whole rows of ow) to d[k] = src[at+k] (zero where
// at+k is outside src), then zeroes each row's columns outside [lo, hi).
// For the tap planes: src's rows of ow elements (or of W = OW, the
// input's) hold columns q+at−lo of d's at columns q in [lo, hi), whole
// planes copied at once instead of row by row.
func shiftPlane(d, src []float32, at, ow, lo, hi int) {
	if lo >= hi {
		clear(d)
		return
	}
	k0, k1 := min(max(0, -at), len(d)), max(min(len(d), len(src)-at), 0)
	if k0 < k1 {
		copy(d[k0:k1], src[at+k0:at+k1])
	} else {
		k1 = k0
	}
	clear(d[:k0])
	clear(d[k1:])
	if lo == 0 && hi == ow {
		return
	}
	switch {
	case lo == 1 && hi == ow:
		// (The 3-tap pads: one column each side.)
		for i := 0; i < len(d); i += ow {
			d[i] = 0
		}
	case lo == 0 && hi == ow-1:
		for i := ow - 1; i < len(d); i += ow {
			d[i] = 0
		}
	default:
		for i := 0; i+ow <= len(d); i += ow {
			row := d[i : i+ow]
			clear(row[:lo])
			clear(row[hi:])
		}
	}
}

// split2 splits src into its even and odd elements (ev holds
// ⌈len(src)/2⌉, od ⌊len(src)/2⌋).
func split2(src, ev, od []float32) {
	ev, od = ev[:(len(src)+1)/2], od[:len(src)/2]
	if len(src) == 0 {
		return
	}
	if uintptr(unsafe.Pointer(&src[0]))%8 != 0 {
		// src[0] alone, then pairs of an odd and an even element.
		ev[0] = src[0]
		splitPairs(src[1:], od, ev[1:])
		return
	}
	splitPairs(src, ev, od)
}

// splitPairs sets first[j] = src[2j] and second[j] = src[2j+1]; src
// starts at a multiple of 8 bytes. Each pair is one 64-bit load and two
// 32-bit stores: a third faster than two loads and two stores.
func splitPairs(src, first, second []float32) {
	h := split2Head(src, first, second)
	src, first, second = src[2*h:], first[h:], second[h:]
	n := len(src) / 2
	if n > 0 {
		pairs := unsafe.Slice((*uint64)(unsafe.Pointer(&src[0])), n)
		f := unsafe.Slice((*uint32)(unsafe.Pointer(&first[0])), n)
		s := unsafe.Slice((*uint32)(unsafe.Pointer(&second[0])), n)
		lo, hi := 0, 32 // the bits of src[2j] and src[2j+1]
		if !littleEndian {
			lo, hi = 32, 0
		}
		for j, v := range pairs {
			f[j] = uint32(v >> lo)
			s[j] = uint32(v >> hi)
		}
	}
	if len(src)%2 == 1 {
		first[n] = src[2*n]
	}
}

// littleEndian: the first of two float32 in memory is the low half of
// the uint64 at their address.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// packPanel packs B's rows for the nn pixels from q (counted from the
// block's first pixel) into one panel of nr (zero past nn).
func (r *rowsConv) packPanel(dst, planes []float32, rowOff []int, q, nn int) {
	nr := r.mk.nr
	if nn == nr {
		gatherRows(dst, planes[q:], rowOff, nr)
		return
	}
	for i, o := range rowOff {
		d := dst[i*nr : (i+1)*nr]
		copy(d[:nn], planes[o+q:o+q+nn])
		clear(d[nn:])
	}
}

// panel computes the output pixels [q, q+nn) of output channels
// [c0, c1) (c0 a multiple of mr) from the packed panel pb, or (offs not
// nil) from B's rows at pb + offs[i] read in place by mk.offs (the same
// bits; a partial panel reads nr columns, those past nn discarded).
func (r *rowsConv) panel(s *scratch, q, nn int, offs []int, pb *float32, c0, c1 int) {
	mk := r.mk
	mr, nr := mk.mr, mk.nr
	npix := r.oh * r.ow
	kk := r.kk
	for i0 := c0; i0 < c1; i0 += mr {
		mm := min(mr, c1-i0)
		pa := r.pg.panel(0, kk, i0)
		// The bias added in the micro-kernel (one k-block: acc +
		// bias[row], the same addition as a tile holding the bias).
		var pbias *float32
		if r.bias != nil {
			pbias = &r.bias[i0]
		}
		if nn == nr && (mm == mr || mk.edge != nil) {
			// Straight into Y; an edge kernel for the last mm < mr
			// channels.
			fn, ofn := mk.fn, mk.offs
			if mm < mr {
				fn, ofn = mk.edge[mm], nil
				if offs != nil {
					ofn = mk.offsEdge[mm]
				}
			}
			if offs != nil {
				ofn(kk, pa, &offs[0], pb, &r.y[i0*npix+q], npix, 0, pbias, r.relu)
			} else {
				fn(kk, pa, pb, nr, &r.y[i0*npix+q], npix, 0, pbias, r.relu)
			}
			continue
		}
		// Through a tile (nr wide): the kernel for the real rows only
		// (without edge kernels all mr rows, the bias padded), and for
		// a last panel of at most nr/2 pixels the half-width one (each
		// element the same chain of FMAs as mk.fn's).
		fn, edge, ofn, oedge := mk.fn, mk.edge, mk.offs, mk.offsEdge
		if nn <= nr/2 && mk.half != nil {
			h := mk.half
			fn, edge, ofn, oedge = h.fn, h.edge, h.offs, h.offsEdge
		}
		if mm < mr && edge != nil {
			fn, ofn = edge[mm], nil
			if oedge != nil {
				ofn = oedge[mm]
			}
		}
		t := s.tile[:mr*nr]
		if offs != nil {
			ofn(kk, pa, &offs[0], pb, &t[0], nr, 0, pbias, r.relu)
		} else {
			fn(kk, pa, pb, nr, &t[0], nr, 0, pbias, r.relu)
		}
		for i := 0; i < mm; i++ {
			copy(r.y[(i0+i)*npix+q:(i0+i)*npix+q+nn], t[i*nr:i*nr+nn])
		}
	}
}
