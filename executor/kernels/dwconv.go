package kernels

// The depthwise convolution (one input channel per group). Each input
// channel is copied once into a zero-padded plane split into its column
// phases: padded row r, phase q (columns q, q+SW, …) at (r·SW+q)·pw, pw =
// ⌈(W+PL+PR)/SW⌉. Output row o of tap (kh, kw) then reads one contiguous
// run: padded row o·SH + kh·DH, phase kw·DW mod SW, from kw·DW div SW on —
// the same offset from row to row (o·SH·SW·pw). dwRows computes every
// output element as the bias plus all KH·KW taps in registers (one store
// per element instead of one load and store per tap), eight outputs per
// SIMD vector, four vectors per step.
//
// Every output element is bias + (one chain of multiply-adds in tap
// order), whatever the chunks: bit-identical for any thread count.

// dwRows sets y[r·ldy+j] = clamp(bias + Σ_t w[t]·x[r·ss+j+offs[t]]) for
// r < rows, j < n (n a multiple of 8 on the SIMD path), clamp(v) as
// Clip's loop computes it: lo where v < lo, then hi where v > hi (NaN
// kept; with lo = −Inf and hi = +Inf every v is itself, bits included;
// lo = 0, hi = +Inf is Relu's max(v, 0), −0 kept); dwconv_amd64.go
// installs the AVX2 kernel.
var dwRows = dwRowsGo

// dwRowsGo is dwRows in Go (the same sums in the same order; without
// fused multiply-adds).
func dwRowsGo(rows, n int, x []float32, ss int, offs []int, w []float32, bias, lo, hi float32, y []float32, ldy int) {
	for r := 0; r < rows; r++ {
		yr := y[r*ldy : r*ldy+n]
		for j := range yr {
			acc := bias
			for t, o := range offs {
				acc += w[t] * x[r*ss+j+o]
			}
			if acc < lo {
				acc = lo
			}
			if acc > hi {
				acc = hi
			}
			yr[j] = acc
		}
	}
}

// split2Head splits the head of src as splitPairs does and returns the
// pairs done (none here; dwconv_amd64.go installs an AVX2 one).
var split2Head = func(src, first, second []float32) int { return 0 }

// gatherRows sets dst[i·w + j] = src[o + j] for the i-th o of offs and j
// < w: the packing of a convolution's B panels, each im2col row one run
// of w floats (flatConv.panels, rowsConv.packPanel). dwconv_amd64.go
// installs an AVX2 one for w a multiple of 8.
var gatherRows = gatherRowsGo

func gatherRowsGo(dst, src []float32, offs []int, w int) {
	for i, o := range offs {
		copy(dst[i*w:(i+1)*w], src[o:o+w])
	}
}

// dwFlatRow: stride-1 outputs narrower than this run as one run over the
// whole padded plane (rows of W+PL+PR, the extra columns discarded) so
// that the kernel gets long runs instead of a few vectors per row.
const dwFlatRow = 32

// dwGeom is the plane layout and tap offsets of one depthwise layer.
type dwGeom struct {
	oh, ow, wp, pw int
	plane          int   // elements of the phase plane (with slack)
	offs           []int // per tap (kh, kw): offset from the output row's start
	ss             int   // offset between output rows
	flat           bool
}

func newDwGeom(p *Conv2D) *dwGeom {
	g := &dwGeom{}
	g.oh, g.ow = p.Out()
	hp := p.H + p.PT + p.PB
	g.wp = p.W + p.PL + p.PR
	g.pw = (g.wp + p.SW - 1) / p.SW
	g.ss = p.SH * p.SW * g.pw
	g.flat = p.SH == 1 && p.SW == 1 && g.ow < dwFlatRow
	// Slack: the last vector of a row or of the flat run reads up to 8
	// elements past the plane.
	g.plane = hp*p.SW*g.pw + 8
	g.offs = make([]int, 0, p.KH*p.KW)
	for kh := 0; kh < p.KH; kh++ {
		for kw := 0; kw < p.KW; kw++ {
			c := kw * p.DW
			g.offs = append(g.offs, (kh*p.DH*p.SW+c%p.SW)*g.pw+c/p.SW)
		}
	}
	return g
}

// dwFillRows copies the h×w plane src into pp at rows of pitch elements
// in one call: for sw 1, row r to pp[o0 + r·pitch:]; for sw 2, its even
// columns to pp[o0 + r·pitch:] and its odd ones to pp[o1 + r·pitch:]. It
// reports false when it cannot (then fill copies row by row);
// dwconv_amd64.go installs an AVX2 one.
var dwFillRows = func(sw, h, w int, src, pp []float32, o0, o1, pitch int) bool { return false }

// fill copies input plane xc into the phase plane pp, whose pads must be
// zero: it writes the positions of the input's elements only, the same
// ones for every channel, so the caller clears pp once for all the
// channels it fills into it.
func (g *dwGeom) fill(p *Conv2D, xc, pp []float32) {
	switch p.SW {
	case 1:
		if dwFillRows(1, p.H, p.W, xc, pp, p.PT*g.pw+p.PL, 0, g.pw) {
			return
		}
	case 2:
		q0, q1 := p.PL%2, (p.PL+1)%2
		r := p.PT
		if dwFillRows(2, p.H, p.W, xc, pp, (r*2+q0)*g.pw+p.PL/2, (r*2+q1)*g.pw+(p.PL+1)/2, 2*g.pw) {
			return
		}
	}
	for ih := 0; ih < p.H; ih++ {
		src := xc[ih*p.W : (ih+1)*p.W]
		r := ih + p.PT
		if p.SW == 1 {
			copy(pp[r*g.pw+p.PL:], src)
			continue
		}
		if p.SW == 2 {
			// Input columns 0, 2, … to the phase of padded column PL,
			// 1, 3, … to the other.
			q0, q1 := p.PL%2, (p.PL+1)%2
			split2(src, pp[(r*2+q0)*g.pw+p.PL/2:], pp[(r*2+q1)*g.pw+(p.PL+1)/2:])
			continue
		}
		// Phase q holds padded columns j = q + SW·k, input column j − PL.
		for q := 0; q < p.SW; q++ {
			k := 0
			if q < p.PL {
				k = (p.PL - q + p.SW - 1) / p.SW
			}
			d := pp[(r*p.SW+q)*g.pw : (r*p.SW+q+1)*g.pw]
			for iw := q + p.SW*k - p.PL; iw < p.W; iw += p.SW {
				d[k] = src[iw]
				k++
			}
		}
	}
}

// plane1 computes output plane yc (oh×ow) from the phase plane pp,
// clamped to [lo, hi] (dwRows); tmp holds at least g.tmpLen() elements.
func (g *dwGeom) plane1(pp, wc []float32, bias, lo, hi float32, yc, tmp []float32) {
	oh, ow := g.oh, g.ow
	switch {
	case g.flat:
		// One run of (oh−1)·wp + ow outputs at pitch wp, rounded up to
		// whole vectors, then the rows copied out.
		n := roundUp((oh-1)*g.wp+ow, 8)
		dwRows(1, n, pp, 0, g.offs, wc, bias, lo, hi, tmp[:n], n)
		copyStrided(oh, ow, tmp, g.wp, yc, ow)
	case ow >= 8:
		n := ow &^ 7
		dwRows(oh, n, pp, g.ss, g.offs, wc, bias, lo, hi, yc, ow)
		if n < ow {
			// The last 8 columns again: the same values for the overlap.
			dwRows(oh, 8, pp[ow-8:], g.ss, g.offs, wc, bias, lo, hi, yc[ow-8:], ow)
		}
	default:
		dwRows(oh, 8, pp, g.ss, g.offs, wc, bias, lo, hi, tmp[:oh*8], 8)
		copyStrided(oh, ow, tmp, 8, yc, ow)
	}
}

// tmpLen is the scratch plane1 needs.
func (g *dwGeom) tmpLen() int {
	if g.flat {
		return roundUp((g.oh-1)*g.wp+g.ow, 8)
	}
	return g.oh * 8
}

// depthwise is the direct convolution for one input channel per group
// (M = C·multiplier): output channel m reads input channel m/multiplier.
// Output channels are split over threads; every output is clamped to
// [clampLo, clampHi] in the row kernel (dwRows: ±Inf for none, 0 and +Inf for a
// fused Relu), and epi runs on each plane right after it is computed.
func (x *Context) depthwise(p *Conv2D, in, w, bias, y []float32, clampLo, clampHi float32, epi Epilogue) {
	g := newDwGeom(p)
	mult := p.M / p.C
	npix := g.oh * g.ow
	taps := p.KH * p.KW
	run := func(lo, hi int) {
		s := x.get()
		defer x.put(s)
		s.a = grow(s.a, g.plane)
		s.b = grow(s.b, g.tmpLen())
		clear(s.a[:g.plane]) // the pads, once (fill)
		split := -1          // the input channel (n·C + c) in s.a
		for nm := lo; nm < hi; nm++ {
			n, m := nm/p.M, nm%p.M
			ic := n*p.C + m/mult
			if ic != split {
				g.fill(p, in[ic*p.H*p.W:(ic+1)*p.H*p.W], s.a[:g.plane])
				split = ic
			}
			bv := float32(0)
			if bias != nil {
				bv = bias[m]
			}
			g.plane1(s.a[:g.plane], w[m*taps:(m+1)*taps], bv, clampLo, clampHi, y[nm*npix:(nm+1)*npix], s.b)
			if epi != nil {
				// While the plane is in cache.
				epi(nm*npix, npix)
			}
		}
	}
	x.rangeWork(p.N*p.M, npix*taps*tapWork, run)
}
