package kernels

// The phase-plane implicit GEMM: a convolution's input is copied once,
// zero-padded, into SH·SW phase planes per channel (phase (a, b) holds the
// padded input's rows a, a+SH, … and columns b, b+SW, …; each plane is
// Hph × Wph). The convolution is then computed on a grid of OH × Wph
// output pixels (columns OW…Wph−1 are computed and thrown away): output
// pixel (o, c) reads, for tap (kh, kw), phase (kh·DH mod SH, kw·DW mod SW)
// at row o + kh·DH div SH and column c + kw·DW div SW — so every row of the
// implicit im2col matrix is one contiguous run of a phase plane: the
// micro-kernels with a table of row offsets (mk.offs) read B's panels in
// place, with no packing at all (operand.inPlace); a kernel without one
// packs a panel as one straight copy of nr floats per row, with no index
// arithmetic, bounds checks or padding tests per element (convB.pack
// spends more than the SGEMM itself on small channel counts).
//
// The values packed are the im2col matrix's (zeros in the padding), so
// every output element is the same chain of FMAs as on the im2col path:
// results are bit-identical to it.

// flatConv is the phase-plane form of one image and group's input.
type flatConv struct {
	buf    []float32 // phase planes, then slack
	rowOff []int     // start in buf of B row r (= (c·KH+kh)·KW+kw) for grid pixel 0
	wph    int       // grid width (phase plane width)
	ncols  int       // grid pixels: OH·Wph
	maxOff int       // the largest of rowOff
}

// flatGeom returns the phase planes' height and width.
func flatGeom(p *Conv2D) (hph, wph int) {
	hph = (p.H + p.PT + p.PB + p.SH - 1) / p.SH
	wph = (p.W + p.PL + p.PR + p.SW - 1) / p.SW
	return hph, wph
}

// useFlat reports whether the phase-plane GEMM is worth it: the wider grid
// (Wph ≥ OW columns per output row) adds SGEMM columns; on panels of nr
// columns that must not add more than half. The planes are a copy of one
// image and group's input: above maxCols elements (large images, where
// convB's row segments are long anyway) the implicit GEMM packs straight
// from the input instead, for peak memory.
func useFlat(p *Conv2D, nr int) bool {
	if flatSize(p, p.C/p.Groups, nr) > maxCols {
		return false
	}
	oh, ow := p.Out()
	_, wph := flatGeom(p)
	grid := (oh*wph + nr - 1) / nr
	real := (oh*ow + nr - 1) / nr
	return 2*grid <= 3*real
}

// flatSize is the length of the buffer newFlat needs for cg channels.
func flatSize(p *Conv2D, cg, nr int) int {
	hph, wph := flatGeom(p)
	// Slack: the thrown-away columns of the last rows read past the last
	// plane by at most a row plus the largest tap shift, and the last
	// panel reads up to nr more.
	return cg*p.SH*p.SW*hph*wph + wph + p.KW*p.DW + p.KH*p.DH*wph + nr
}

// newFlat fills buf (flatSize elements) with the phase planes of the cg
// channels of in and rowOff (cg·KH·KW entries) with each B row's start.
// The channels are copied on the Context's threads when there are enough
// of them (each channel's planes are its own: the same buffer whatever
// the split).
func (x *Context) newFlat(p *Conv2D, in []float32, cg int, buf []float32, rowOff []int) *flatConv {
	hph, wph := flatGeom(p)
	oh, _ := p.Out()
	plane := hph * wph
	x.rangeWork(cg, p.SH*p.SW*plane*elemWork, func(c0, c1 int) { flatChannels(p, in, c0, c1, buf) })
	clear(buf[cg*p.SH*p.SW*plane:])
	// Channel 0's taps, then every channel's: a channel's phase planes
	// follow the previous channel's.
	taps := p.KH * p.KW
	for kh := 0; kh < p.KH; kh++ {
		th := kh * p.DH
		for kw := 0; kw < p.KW; kw++ {
			tw := kw * p.DW
			pl := (th%p.SH)*p.SW + tw%p.SW
			rowOff[kh*p.KW+kw] = pl*plane + th/p.SH*wph + tw/p.SW
		}
	}
	step := p.SH * p.SW * plane
	for c := 1; c < cg; c++ {
		dst, src := rowOff[c*taps:(c+1)*taps], rowOff[:taps]
		for t, o := range src {
			dst[t] = o + c*step
		}
	}
	f := &flatConv{buf: buf, rowOff: rowOff, wph: wph, ncols: oh * wph}
	for _, o := range rowOff {
		f.maxOff = max(f.maxOff, o)
	}
	return f
}

// flatChannels writes the phase planes of channels [c0, c1) of in into
// buf (laid out as newFlat's).
func flatChannels(p *Conv2D, in []float32, c0, c1 int, buf []float32) {
	hph, wph := flatGeom(p)
	plane := hph * wph
	hw := p.H * p.W
	for c := c0; c < c1; c++ {
		xc := in[c*hw : (c+1)*hw]
		for a := 0; a < p.SH; a++ {
			for b := 0; b < p.SW; b++ {
				pl := buf[((c*p.SH+a)*p.SW+b)*plane : ((c*p.SH+a)*p.SW+b+1)*plane]
				// Columns j of the phase with 0 ≤ j·SW + b − PL < W.
				lo, hi := colRange(b-p.PL, p.SW, p.W, wph)
				for i := 0; i < hph; i++ {
					d := pl[i*wph : (i+1)*wph]
					ih := i*p.SH + a - p.PT
					if ih < 0 || ih >= p.H || lo >= hi {
						clear(d)
						continue
					}
					src := xc[ih*p.W : (ih+1)*p.W]
					clear(d[:lo])
					off := b - p.PL
					if p.SW == 1 {
						copy(d[lo:hi], src[lo+off:hi+off])
					} else {
						for j := lo; j < hi; j++ {
							d[j] = src[j*p.SW+off]
						}
					}
					clear(d[hi:])
				}
			}
		}
	}
}

// pack packs rows [p0, p0+kc) and grid columns [j0, j0+nc) into panels
// of nr columns (columns past the grid hold whatever follows in buf;
// the SGEMM never stores them).
func (f *flatConv) pack(dst []float32, p0, kc, j0, nc, nr int) {
	f.panels(dst, p0, kc, j0, nc, nr)
}

// panels copies, for grid columns [c0, c0+n) in groups of w, the w
// columns of each of rows [p0, p0+kc) into consecutive panels of dst (a
// panel of w·kc elements per group): pack's panels of B, packA's of A.
func (f *flatConv) panels(dst []float32, p0, kc, c0, n, w int) {
	offs := f.rowOff[p0 : p0+kc]
	for jr := 0; jr < n; jr += w {
		panel := dst[jr*kc : jr*kc+w*kc]
		q0 := c0 + jr
		switch w {
		case 32, 16, 8:
			gatherRows(panel, f.buf[q0:], offs, w)
		case 12:
			for r, o := range offs {
				*(*[12]float32)(panel[r*12:]) = *(*[12]float32)(f.buf[o+q0:])
			}
		case 6:
			for r, o := range offs {
				*(*[6]float32)(panel[r*6:]) = *(*[6]float32)(f.buf[o+q0:])
			}
		default:
			for r, o := range offs {
				copy(panel[r*w:r*w+w], f.buf[o+q0:o+q0+w])
			}
		}
	}
}

// convFlat runs one image and group of a convolution (packed weights pg,
// input xg of cg channels, output yg of mg planes, bias bg or nil, then
// the micro-kernel's relu: 0 none, 1 ReLU, 2 ReLU6) on the phase-plane
// grid, in chunks of output rows whose grid stays within maxCols
// elements of scratch. tail (nil: none) runs on each part of yg as the
// grid's rows are copied into it, at offset base+ in its output.
func (x *Context) convFlat(p *Conv2D, mk microKernel, pg *Packed, xg []float32, cg, mg int, bg []float32, yg []float32, relu int, tail Epilogue, base int) error {
	oh, ow := p.Out()
	npix := oh * ow
	kk := cg * p.KH * p.KW
	s := x.get()
	defer x.put(s)
	s.phase = grow(s.phase, flatSize(p, cg, mk.nr))
	if cap(s.rowOff) < kk {
		s.rowOff = make([]int, kk)
	}
	f := x.newFlat(p, xg, cg, s.phase, s.rowOff[:kk])
	rows := oh
	if mg*oh*f.wph > maxCols {
		rows = max(1, maxCols/(mg*f.wph))
	}
	// The grid's product C has its rows (ld floats) padded to whole
	// tiles (tilePad), so that the last column panel's tiles are
	// stored by the micro-kernel itself like the others, not through a
	// tile buffer and a Go loop adding it to C (12×31 of the 12×32 tile
	// in every k-block of a 512-channel 3×3 convolution on 7×7, whose
	// grid is 63 columns wide: a tenth of its time). The padding's
	// columns are grid columns past the chunk's, read in place from the
	// buffer's slack as the last tile did already, and thrown away; every
	// stored element is the same chain of FMAs (bit-identical).
	pad := tilePad(mk)
	s.cols = grow(s.cols, mg*roundUp(rows*f.wph, pad))
	for o0 := 0; o0 < oh; o0 += rows {
		o1 := min(o0+rows, oh)
		n := (o1 - o0) * f.wph
		ld := roundUp(n, pad)
		c := s.cols[:mg*ld]
		// The bias is added by the micro-kernel to the first k-block's
		// tiles (the same additions as C filled with it, beta 1), a
		// Relu or ReLU6 applied to the last's.
		var fin *finish
		if bg != nil || relu != 0 {
			fin = &finish{bias: bg, relu: relu != 0, six: relu == 2}
		}
		cb := &convB{p: p, x: xg, oh: oh, ow: ow, flat: f, col0: o0 * f.wph}
		if err := x.sgemmConv(mk, mg, ld, kk, pg, cb, 0, c, ld, fin); err != nil {
			return err
		}
		// The grid's rows (Wph apart) into the output planes (OW apart),
		// then the tail on them: with every output row in one chunk and
		// no padding, the channels' rows follow one another in both, so
		// that a thread's channels are one call.
		x.Range(mg, (o1-o0)*ow, func(lo, hi int) {
			if o0 == 0 && o1 == oh && ld == n {
				copyStrided((hi-lo)*oh, ow, c[lo*n:], f.wph, yg[lo*npix:], ow)
				if tail != nil {
					tail(base+lo*npix, (hi-lo)*npix)
				}
				return
			}
			for m := lo; m < hi; m++ {
				copyStrided(o1-o0, ow, c[m*ld:], f.wph, yg[m*npix+o0*ow:], ow)
				if tail != nil {
					tail(base+m*npix+o0*ow, (o1-o0)*ow)
				}
			}
		})
	}
	return nil
}

// tilePad is the multiple convFlat rounds its grid's columns up to: the
// width of the micro-kernel's tiles, or of its half-width tiles when it
// has those (serial runs a last panel of at most nr/2 columns on them).
func tilePad(mk microKernel) int {
	if mk.half != nil && mk.half.offs != nil {
		return mk.nr / 2
	}
	return mk.nr
}

// packA packs the rows [i0, i0+mc) of the transposed im2col matrix (grid
// pixels from col0 on, or the pixels listed in pix) for rows [p0, p0+kc)
// of B into panels of mr.
func (cb *convB) packA(dst []float32, p0, kc, i0, mc, mr int) {
	if cb.pix == nil {
		cb.flat.packA(dst, p0, kc, cb.col0+i0, mc, mr)
		return
	}
	offs := cb.flat.rowOff[p0 : p0+kc]
	buf := cb.flat.buf
	for ir := 0; ir < mc; ir += mr {
		panel := dst[ir*kc : ir*kc+mr*kc]
		pix := cb.pix[i0+ir : i0+ir+mr]
		for r, o := range offs {
			d := panel[r*mr : r*mr+mr]
			for i, g := range pix {
				d[i] = buf[o+g]
			}
		}
	}
}

// packA packs grid pixels [i0, i0+mc) (the rows of the transposed im2col
// matrix) and rows [p0, p0+kc) of B into panels of mr pixels, as packA
// does for a formed matrix; pixels past the grid hold whatever follows in
// buf (the SGEMM never stores their rows).
func (f *flatConv) packA(dst []float32, p0, kc, i0, mc, mr int) {
	f.panels(dst, p0, kc, i0, mc, mr)
}

// convSwapped reports whether a convolution of this geometry runs
// transposed, Yᵀ = im2colᵀ·Wᵀ with the output pixels as the SGEMM's rows
// (mr at a time) and the output channels as its columns (nr at a time):
// when there are few output pixels (deep, small layers) this wastes far
// less of the micro-kernel's tiles than Y = W·im2col, whose pixels are
// padded to nr columns. Chosen when it needs a fifth fewer tile elements
// and costs less counting the packing of its rows too (flatConv.panels:
// each of the rows' kk values gathered, about as long as three quarters
// of a panel's multiply-adds). (A 32-channel 3×3 convolution of an 8×8
// map: 29 µs transposed, 19–23 µs not; of 128 channels on 2×2: 31 µs
// against 45.)
func convSwapped(p *Conv2D, mk microKernel) bool {
	if p.C == p.Groups || flatSize(p, p.C/p.Groups, max(mk.nr, mk.mr)) > maxCols {
		return false
	}
	oh, ow := p.Out()
	_, wph := flatGeom(p)
	n, mg := oh*wph, p.M/p.Groups
	normal := roundUp(mg, mk.mr) * roundUp(n, mk.nr)
	rows := roundUp(n, mk.mr)
	if realPixels(p, mk) {
		rows = roundUp(oh*ow, mk.mr)
	}
	tiles := rows * roundUp(mg, mk.nr)
	return 5*tiles < 4*normal && tiles+rows*3*mk.nr/4 < normal
}

func roundUp(v, a int) int { return (v + a - 1) / a * a }

// realPixels reports whether convFlatT takes the output pixels themselves
// as its rows rather than the grid's: when that saves a third of the
// tiles of mr rows (the grid's thrown-away columns weigh most on tiny
// outputs: 3×3 with padding 1 is a 3×5 grid), which pays for gathering
// the rows instead of copying runs.
func realPixels(p *Conv2D, mk microKernel) bool {
	oh, ow := p.Out()
	_, wph := flatGeom(p)
	return 3*roundUp(oh*ow, mk.mr) <= 2*roundUp(oh*wph, mk.mr)
}

// convFlatT is convFlat transposed (convSwapped): pg holds Wᵀ packed as
// B; the grid's pixels are the SGEMM's rows. Every output element is the
// same chain of FMAs as on the other paths (bit-identical results).
func (x *Context) convFlatT(p *Conv2D, mk microKernel, pg *Packed, xg []float32, cg, mg int, bg []float32, yg []float32) error {
	oh, ow := p.Out()
	npix := oh * ow
	kk := cg * p.KH * p.KW
	s := x.get()
	defer x.put(s)
	s.phase = grow(s.phase, flatSize(p, cg, max(mk.nr, mk.mr)))
	if cap(s.rowOff) < kk {
		s.rowOff = make([]int, kk)
	}
	f := x.newFlat(p, xg, cg, s.phase, s.rowOff[:kk])
	rows := oh
	if mg*oh*f.wph > maxCols {
		rows = max(1, maxCols/(mg*f.wph))
	}
	s.cols = grow(s.cols, mg*rows*f.wph)
	real := realPixels(p, mk)
	for o0 := 0; o0 < oh; o0 += rows {
		o1 := min(o0+rows, oh)
		n := (o1 - o0) * f.wph
		cb := &convB{p: p, x: xg, oh: oh, ow: ow, flat: f, col0: o0 * f.wph}
		if real {
			// Row i is output pixel o0·OW + i, at grid column
			// (o0 + i/OW)·Wph + i%OW; past the last, grid column 0 (rows
			// the SGEMM computes and never stores).
			n = (o1 - o0) * ow
			if cap(s.pix) < n+mk.mr {
				s.pix = make([]int, n+mk.mr)
			}
			cb.pix = s.pix[:n+mk.mr]
			for i := range cb.pix {
				cb.pix[i] = 0
				if i < n {
					cb.pix[i] = (o0+i/ow)*f.wph + i%ow
				}
			}
		}
		c := s.cols[:n*mg]
		beta := float32(0)
		if bg != nil {
			beta = 1
			x.Range(n, mg, func(lo, hi int) {
				for q := lo; q < hi; q++ {
					copy(c[q*mg:(q+1)*mg], bg)
				}
			})
		}
		if err := x.sgemmConvT(mk, n, mg, kk, cb, pg, beta, c, mg); err != nil {
			return err
		}
		// The output channels [lo, hi) of C's rows into their planes.
		if real {
			base := o0 * ow
			x.Range(mg, n, func(lo, hi int) {
				for q := 0; q < n; q++ {
					for m, v := range c[q*mg+lo : q*mg+hi] {
						yg[(lo+m)*npix+base+q] = v
					}
				}
			})
			continue
		}
		x.Range(mg, (o1-o0)*ow, func(lo, hi int) {
			for o := o0; o < o1; o++ {
				for q := 0; q < ow; q++ {
					src := c[((o-o0)*f.wph+q)*mg:][lo:hi]
					for m, v := range src {
						yg[(lo+m)*npix+o*ow+q] = v
					}
				}
			}
		})
	}
	return nil
}

// sgemmConvT computes C = A·B + beta·C with A the transposed implicit
// im2col matrix cb (m pixels × k) and B packed (k × n), split over the
// threads by rows or columns as sgemm does (the same result for every
// thread count).
func (x *Context) sgemmConvT(mk microKernel, m, n, k int, cb *convB, pb *Packed, beta float32, c []float32, ldc int) error {
	if err := pb.fits(mk, false, n, k); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	x.gemm(mk, m, n, k, 1, operand{conv: cb}, operand{packed: pb}, beta, c, ldc, nil)
	return nil
}
