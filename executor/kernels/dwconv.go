package kernels

import "unsafe"

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
	tile           *dwTile // the tile kernel for this layer, or nil
	// band: with the tile kernel on large planes, the output rows
	// computed from one band of the phase plane (bandPlane elements),
	// filled just before (bands); 0 for the whole plane at once.
	band, bandPlane int
}

// dwBandMin is the phase plane (elements) from which a stride-2 layer
// with the tile kernel fills and computes the plane in bands of rows
// that stay in the L1 cache: 112² inputs (BenchmarkDepthwiseLarge
// 96×112² 3×3/2 445 → 283 µs; in mobilenet_v2 and efficientnet_b0,
// `--layers`, 580–620 → 500–570 µs). At stride 1 the bands were faster
// alone (32×112² 3×3 178 → 151 µs) but slower in the models (the same
// layer 335–485 → 365–545 µs): left out.
const dwBandMin = 8 << 10

// dwTile is a kernel computing a depthwise plane in tiles of rows output
// rows by 16 columns from the phase plane (dwTileFor); run sets
// y[o·ldy + j] for o < rows·rowBlocks, j < 16·colBlocks, each output the
// chain of dwRows (bias, the taps' FMAs in order, the clamp): the same
// bits.
type dwTile struct {
	k, s, rows int
	run        func(rowBlocks, colBlocks int, x []float32, pw int, w []float32, bias, lo, hi float32, y []float32, ldy int)
}

// dwTileFor returns the tile kernel for k×k taps at stride s, or nil;
// simd512_amd64.go installs the AVX-512 ones (3×3 and 5×5, strides 1
// and 2).
var dwTileFor = func(k, s int) *dwTile { return nil }

// dwRowsS1Min is the input plane (pixels) from which 3×3 stride-1
// layers keep the row kernel (dwRows) instead of the tiles: alone the
// tiles are faster there too (BenchmarkDepthwiseLarge 32×112² 178 vs
// 214–226 µs, 144×56² 202 vs 231 µs; with the input or output out of
// cache as well), but in the models (`--layers`, mobilenet_v2,
// efficientnet_b0, mnasnet0_5: two sets of three alternating rounds)
// the 112² and 56² layers took 4–5 % longer in sum with the tiles, the
// 28² ones 15–20 % less.
const dwRowsS1Min = 56 * 56

// dwTileCols is the columns of a tile.
const dwTileCols = 16

func newDwGeom(p *Conv2D) *dwGeom {
	g := &dwGeom{}
	g.oh, g.ow = p.Out()
	hp := p.H + p.PT + p.PB
	g.wp = p.W + p.PL + p.PR
	g.pw = (g.wp + p.SW - 1) / p.SW
	g.ss = p.SH * p.SW * g.pw
	g.flat = p.SH == 1 && p.SW == 1 && g.ow < dwFlatRow
	if p.KH == p.KW && p.SH == p.SW && p.DH == 1 && p.DW == 1 {
		rows := p.KH == 3 && p.SH == 1 && p.H*p.W >= dwRowsS1Min
		if t := dwTileFor(p.KH, p.SH); t != nil && g.oh >= t.rows && !rows {
			g.tile, g.flat = t, false
		}
	}
	// Slack: the last vector of a row or of the flat run reads up to 8
	// elements past the plane, a tile of outputs narrower than 16 up to
	// 16.
	g.plane = hp*p.SW*g.pw + 16
	if t := g.tile; t != nil && p.SH == 2 && g.ow >= dwTileCols && p.M == p.C && g.plane >= dwBandMin {
		g.band = t.rows
		if g.oh >= 2*t.rows {
			g.band = 2 * t.rows
		}
		g.bandPlane = ((g.band-1)*p.SH+p.KH)*p.SW*g.pw + 16
	}
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
	g.fillRows(p, xc, pp, 0, p.H, 0)
}

// fillRows is fill for input rows ih0 ≤ ih < ih1 into the phase plane
// pp of padded rows from r0 on (padded row r at pp's row r − r0).
func (g *dwGeom) fillRows(p *Conv2D, xc, pp []float32, ih0, ih1, r0 int) {
	if ih0 >= ih1 {
		return
	}
	switch p.SW {
	case 1:
		if dwFillRows(1, ih1-ih0, p.W, xc[ih0*p.W:], pp, (ih0+p.PT-r0)*g.pw+p.PL, 0, g.pw) {
			return
		}
	case 2:
		q0, q1 := p.PL%2, (p.PL+1)%2
		r := ih0 + p.PT - r0
		if dwFillRows(2, ih1-ih0, p.W, xc[ih0*p.W:], pp, (r*2+q0)*g.pw+p.PL/2, (r*2+q1)*g.pw+(p.PL+1)/2, 2*g.pw) {
			return
		}
	}
	for ih := ih0; ih < ih1; ih++ {
		src := xc[ih*p.W : (ih+1)*p.W]
		r := ih + p.PT - r0
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
	case g.tile != nil:
		g.tiles(pp, wc, bias, lo, hi, yc, tmp)
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

// tiles is plane1 with the tile kernel: whole tiles, then the last
// columns and the last rows as tiles again ending at the plane's edge
// (the same values where they overlap); outputs narrower than a tile
// computed 16 wide into tmp and copied out.
func (g *dwGeom) tiles(pp, wc []float32, bias, lo, hi float32, yc, tmp []float32) {
	t := g.tile
	oh, ow := g.oh, g.ow
	y, ldy := yc, ow
	if ow < dwTileCols {
		y, ldy = tmp[:oh*dwTileCols], dwTileCols
	}
	cols := max(ow, dwTileCols)
	nc, nr := cols/dwTileCols, oh/t.rows
	ss := t.s * t.s * g.pw // input offset between output rows
	tail := cols - dwTileCols
	t.run(nr, nc, pp, g.pw, wc, bias, lo, hi, y, ldy)
	if cols%dwTileCols != 0 {
		t.run(nr, 1, pp[tail:], g.pw, wc, bias, lo, hi, y[tail:], ldy)
	}
	if oh%t.rows != 0 {
		r0 := oh - t.rows
		t.run(1, nc, pp[r0*ss:], g.pw, wc, bias, lo, hi, y[r0*ldy:], ldy)
		if cols%dwTileCols != 0 {
			t.run(1, 1, pp[r0*ss+tail:], g.pw, wc, bias, lo, hi, y[r0*ldy+tail:], ldy)
		}
	}
	if ow < dwTileCols {
		copyStrided(oh, ow, y, ldy, yc, ow)
	}
}

// bands computes output plane yc from input plane xc band by band:
// the padded rows of g.band output rows filled into pp (g.bandPlane
// elements, its pad columns zero), then those rows computed with the
// tile kernel (tiles), so that the band stays in the L1 cache between
// the fill and the kernel; the last band ends at the last row (the same
// values where it overlaps the one before). Padded rows outside the
// input are cleared in each band (they held input rows of the band
// before).
func (g *dwGeom) bands(p *Conv2D, xc, pp, wc []float32, bias, lo, hi float32, yc []float32) {
	unit := p.SW * g.pw
	prow := (g.band-1)*p.SH + p.KH // padded rows of a band
	sub := *g
	sub.oh = g.band
	for o0 := 0; o0 < g.oh; o0 += g.band {
		o0 = min(o0, g.oh-g.band)
		r0 := o0 * p.SH // first padded row
		ih0 := max(r0-p.PT, 0)
		ih1 := min(r0+prow-p.PT, p.H)
		if ih0 >= ih1 {
			clear(pp[:prow*unit])
		} else {
			clear(pp[:(ih0+p.PT-r0)*unit])
			clear(pp[(ih1+p.PT-r0)*unit : prow*unit])
			g.fillRows(p, xc, pp, ih0, ih1, r0)
		}
		sub.tiles(pp, wc, bias, lo, hi, yc[o0*g.ow:(o0+g.band)*g.ow], nil)
	}
}

// tmpLen is the scratch plane1 needs.
func (g *dwGeom) tmpLen() int {
	if g.tile != nil {
		return g.oh * dwTileCols
	}
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
// Small planes (newDwSmall) run 8 channels in a vector (depthwiseSmall).
func (x *Context) depthwise(p *Conv2D, in, w, bias, y []float32, clampLo, clampHi float32, epi Epilogue) {
	g := newDwGeom(p)
	if dwSmallOK(p, g) {
		x.depthwiseSmall(p, g, in, w, bias, y, clampLo, clampHi, epi)
		return
	}
	npix := g.oh * g.ow
	taps := p.KH * p.KW
	run := func(lo, hi int) {
		s := x.get()
		defer x.put(s)
		c := newDwChan(p, g, s)
		for nm := lo; nm < hi; nm++ {
			c.plane(in, w, bias, y, nm, clampLo, clampHi)
			if epi != nil {
				// While the plane is in cache.
				epi(nm*npix, npix)
			}
		}
	}
	x.rangeWork(p.N*p.M, npix*taps*tapWork, run)
}

// dwChan computes one output plane at a time (plane1) in a thread's
// scratch.
type dwChan struct {
	p     *Conv2D
	g     *dwGeom
	s     *scratch
	split int // the input channel (n·C + c) in s.a
}

func newDwChan(p *Conv2D, g *dwGeom, s *scratch) *dwChan {
	s.a = grow(s.a, max(g.plane, g.bandPlane))
	s.b = grow(s.b, g.tmpLen())
	clear(s.a[:max(g.plane, g.bandPlane)]) // the pads, once (fill)
	return &dwChan{p: p, g: g, s: s, split: -1}
}

// plane computes output plane nm (n·M + m) into y.
func (c *dwChan) plane(in, w, bias, y []float32, nm int, clampLo, clampHi float32) {
	p, g, s := c.p, c.g, c.s
	mult := p.M / p.C
	npix := g.oh * g.ow
	taps := p.KH * p.KW
	n, m := nm/p.M, nm%p.M
	ic := n*p.C + m/mult
	if g.band > 0 {
		bv := float32(0)
		if bias != nil {
			bv = bias[m]
		}
		g.bands(p, in[ic*p.H*p.W:(ic+1)*p.H*p.W], s.a[:g.bandPlane], w[m*taps:(m+1)*taps], bv, clampLo, clampHi, y[nm*npix:(nm+1)*npix])
		return
	}
	if ic != c.split {
		g.fill(p, in[ic*p.H*p.W:(ic+1)*p.H*p.W], s.a[:g.plane])
		c.split = ic
	}
	bv := float32(0)
	if bias != nil {
		bv = bias[m]
	}
	g.plane1(s.a[:g.plane], w[m*taps:(m+1)*taps], bv, clampLo, clampHi, y[nm*npix:(nm+1)*npix], s.b)
}

// dwSmallMax is the largest input and output plane (pixels) that runs
// channels in vectors (depthwiseSmall): BenchmarkDepthwise (cpu-ns/op,
// one thread, AVX-512) 7×7 3×3 9.2k → 5.1k, 7×7 5×5 16k → 7.4k, 14×14
// 5×5/2 13.3k → 7.1k, 14×14 3×3 11.4k → 11.4k, 28×28 5×5/2 16.3k →
// 22.5k (left out).
const dwSmallMax = 14 * 14

// The depthwise convolution on small planes, channels in vectors: a
// block of L = 8 or 16 channels' input planes transposed into one
// channel-interleaved zero-padded plane (hp×wp pixels of L channels),
// each output pixel's L channels one vector: bias, then per tap (in
// plane1's order) an FMA of the tap's L weights with the input pixel's L
// channels, then the clamp — each lane the same chain as dwRows', the
// same bits — and the block transposed back into its L output planes.
// dwconv_amd64.go installs the kernels (AVX2, L = 8),
// simd512_amd64.go the 16-lane dwPix16 (AVX-512F).
var (
	// dwPack8 sets dst[idx[j]+c] = src[c·cs+j] for j < len(idx) (≥ 8), c
	// < 8; top is the largest of idx (dwLayout's: checked once there).
	dwPack8 func(src []float32, cs int, idx []int, top int, dst []float32)
	// dwUnpack8 sets dst[c·cs+j] = src[sp·j+c] for j < n (≥ 8), c < 8.
	dwUnpack8 func(src, dst []float32, cs, sp, n int)
	// dwPix8 sets y[8p+c] = clamp(bias[c] + Σ_t w[8t+c]·x[pix[p]+offs[t]+c])
	// for p < len(pix) (≥ 8), c < 8, top the largest pix[p] + offs[t];
	// dwPix16 the same with 16 lanes.
	dwPix8, dwPix16 dwPixFunc
)

type dwPixFunc func(x []float32, pix, offs []int, top int, w, bias []float32, lo, hi float32, y []float32)

var ()

// dwLayout is the interleaved layout of a depthwise layer on small
// planes for blocks of L channels.
type dwLayout struct {
	lanes int
	plane int   // scratch plane (elements)
	in    []int // per input pixel, its element in the scratch plane
	pix   []int // per output pixel, its window's first element
	offs  []int // per tap (kh, kw), its element from the window's first
	widx  []int // L·t: the interleaved weights
	// The largest of in, widx and pix[p] + offs[t] (maxOffset, here
	// once instead of in every kernel call).
	topIn, topW, topPix int
}

// maxDwLayouts bounds a Context's cache of dwLayouts (a model of
// dynamic image sizes must not grow it without end): a geometry beyond
// it builds its tables on every call.
const maxDwLayouts = 256

// dwLayoutKey is what a dwLayout depends on: the planes' geometry and
// the lanes (not the images or channels).
type dwLayoutKey struct {
	p     Conv2D
	lanes int
}

// dwLayout returns p's tables for lanes, built once per geometry and
// Context (they are read only: a model's run rebuilt them for every
// depthwise call, 4–8 % of a 14² layer's time).
func (x *Context) dwLayout(p *Conv2D, g *dwGeom, lanes int) *dwLayout {
	if x == nil {
		return newDwLayout(p, g, lanes)
	}
	k := dwLayoutKey{p: *p, lanes: lanes}
	k.p.N, k.p.C, k.p.M, k.p.Groups = 0, 0, 0, 0
	if d, ok := x.layouts.Load(k); ok {
		return d.(*dwLayout)
	}
	d := newDwLayout(p, g, lanes)
	if x.nLayouts.Add(1) > maxDwLayouts {
		x.nLayouts.Add(-1)
		return d
	}
	if old, loaded := x.layouts.LoadOrStore(k, d); loaded {
		x.nLayouts.Add(-1)
		return old.(*dwLayout)
	}
	return d
}

func newDwLayout(p *Conv2D, g *dwGeom, lanes int) *dwLayout {
	d := &dwLayout{lanes: lanes}
	hp := p.H + p.PT + p.PB
	d.plane = hp * g.wp * lanes
	hw, npix, taps := p.H*p.W, g.oh*g.ow, p.KH*p.KW
	all := make([]int, hw+npix+2*taps)
	d.in, all = all[:hw:hw], all[hw:]
	d.pix, all = all[:npix:npix], all[npix:]
	d.offs, d.widx = all[:taps:taps], all[taps:]
	i := 0
	for ih := 0; ih < p.H; ih++ {
		r := ((ih+p.PT)*g.wp + p.PL) * lanes
		for iw := 0; iw < p.W; iw++ {
			d.in[i] = r + iw*lanes
			i++
		}
	}
	i = 0
	for oh := 0; oh < g.oh; oh++ {
		r := oh * p.SH * g.wp * lanes
		for ow := 0; ow < g.ow; ow++ {
			d.pix[i] = r + ow*p.SW*lanes
			i++
		}
	}
	i = 0
	for kh := 0; kh < p.KH; kh++ {
		for kw := 0; kw < p.KW; kw++ {
			d.widx[i] = lanes * i
			d.offs[i] = (kh*p.DH*g.wp + kw*p.DW) * lanes
			i++
		}
	}
	// Each table increases (offs: kw·DW < wp, dwSmallOK's windows inside
	// the plane): the largest is the last.
	d.topIn, d.topW = d.in[hw-1], d.widx[taps-1]
	d.topPix = d.pix[npix-1] + d.offs[taps-1]
	return d
}

// dwSmallOK reports whether p runs channels in vectors: kernels, no
// channel multiplier, input and output planes of at most dwSmallMax
// pixels (a 28×28 input at stride 2 runs slower: its interleaved plane
// outgrows the L1 cache), at least 8 taps, output and input pixels and
// channels.
func dwSmallOK(p *Conv2D, g *dwGeom) bool {
	npix := g.oh * g.ow
	// (And windows inside the padded plane.)
	inside := (p.KH-1)*p.DH < p.H+p.PT+p.PB && (p.KW-1)*p.DW < g.wp
	return dwPix8 != nil && p.M == p.C && inside && npix <= dwSmallMax && p.H*p.W <= dwSmallMax && npix >= 8 && p.KH*p.KW >= 8 && p.H*p.W >= 8 && p.M >= 8
}

// dwBlock is one thread's scratch for blocks of L channels.
type dwBlock struct {
	d          *dwLayout
	pix        dwPixFunc
	xs, ys, ws []float32
	zb         []float32 // L zeros: the bias when there is none
}

func newDwBlock(d *dwLayout, pix dwPixFunc, buf []float32) *dwBlock {
	L := d.lanes
	npix, taps := len(d.pix), len(d.offs)
	b := &dwBlock{d: d, pix: pix}
	// Each part on a cache line of its own (no vector split across two).
	part := func(n int) []float32 {
		buf = buf[align64(buf):]
		v := buf[:n]
		buf = buf[min(roundUp(n, 16), len(buf)):]
		return v
	}
	b.xs = part(d.plane)
	b.ys = part(L * npix)
	b.ws = part(L * taps)
	b.zb = part(L)
	clear(b.xs) // the pads, once
	clear(b.zb)
	return b
}

// dwBlockLen is the scratch of newDwBlock.
func dwBlockLen(d *dwLayout) int {
	L := d.lanes
	return roundUp(d.plane, 16) + roundUp(L*len(d.pix), 16) + roundUp(L*len(d.offs), 16) + roundUp(L, 16) + 4*15
}

// align64 is the count of elements before the first of buf on a 64-byte
// boundary (buf's elements are 4-byte aligned).
func align64(buf []float32) int {
	if len(buf) == 0 {
		return 0
	}
	return int((64-uintptr(unsafe.Pointer(&buf[0]))%64)%64) / 4
}

// run computes output planes nm … nm+L−1 (channels m0 … m0+L−1 of an
// image) into y.
func (b *dwBlock) run(p *Conv2D, in, w, bias, y []float32, nm, m0 int, lo, hi float32) {
	d, L := b.d, b.d.lanes
	hw, npix, taps := p.H*p.W, len(d.pix), len(d.offs)
	for h := 0; h < L; h += 8 {
		dwPack8(in[(nm+h)*hw:(nm+h+8)*hw], hw, d.in, d.topIn, b.xs[h:])
		dwPack8(w[(m0+h)*taps:(m0+h+8)*taps], taps, d.widx, d.topW, b.ws[h:])
	}
	bv := b.zb
	if bias != nil {
		bv = bias[m0 : m0+L]
	}
	b.pix(b.xs, d.pix, d.offs, d.topPix, b.ws, bv, lo, hi, b.ys)
	for h := 0; h < L; h += 8 {
		dwUnpack8(b.ys[h:], y[(nm+h)*npix:(nm+h+8)*npix], npix, L, npix)
	}
}

// depthwiseSmall is depthwise with blocks of 16 (dwPix16) or 8 channels
// in vectors, the last M mod 16 channels of each image as a block of 8
// and plane1 planes, the blocks split over threads, epi on each block's
// planes right after them.
func (x *Context) depthwiseSmall(p *Conv2D, g *dwGeom, in, w, bias, y []float32, clampLo, clampHi float32, epi Epilogue) {
	q := x.newDwSmall(p, g, false)
	npix := g.oh * g.ow
	run := func(lo, hi int) {
		s := x.get()
		defer x.put(s)
		r := q.start(s)
		for u := lo; u < hi; u++ {
			r.block(u, in, w, bias, y, clampLo, clampHi, epi)
		}
	}
	x.rangeWork(p.N*q.mb, q.L*npix*p.KH*p.KW*tapWork, run)
}

// dwSmall is depthwiseSmall's plan: blocks of L channels (mb of them an
// image), the last of an image of fewer.
type dwSmall struct {
	p *Conv2D
	g *dwGeom
	// d8 is the 8-lane layout for blocks of 8: all of them, or the one
	// after the blocks of 16 when M mod 16 ≥ 8; d16 the 16-lane one.
	d8, d16    *dwLayout
	L, mb      int
	n8, need   int // the scratch of d8's block, and of both
	npix, taps int
}

// newDwSmall plans p's blocks; eights: with the 8-lane layout for
// blocks of 8 after blocks of 16 anywhere (dwSmallRun.channels of any
// range), not only at the end of an image.
func (x *Context) newDwSmall(p *Conv2D, g *dwGeom, eights bool) *dwSmall {
	q := &dwSmall{p: p, g: g, L: 8, npix: g.oh * g.ow, taps: p.KH * p.KW}
	if dwPix16 != nil {
		q.L = 16
	}
	if q.L == 8 || p.M%16 >= 8 || eights {
		q.d8 = x.dwLayout(p, g, 8)
		q.need += dwBlockLen(q.d8)
	}
	q.n8 = q.need
	if q.L == 16 {
		q.d16 = x.dwLayout(p, g, 16)
		q.need += dwBlockLen(q.d16)
	}
	q.mb = (p.M + q.L - 1) / q.L
	return q
}

// dwSmallRun is one thread's scratch for dwSmall's blocks.
type dwSmallRun struct {
	q     *dwSmall
	s     *scratch
	b, b8 *dwBlock
	ch    *dwChan // the planes after the last block of 8, made when needed
}

// start readies s for q's blocks.
func (q *dwSmall) start(s *scratch) *dwSmallRun {
	r := &dwSmallRun{q: q, s: s}
	s.tile = grow(s.tile, q.need)
	if q.d8 != nil {
		r.b8 = newDwBlock(q.d8, dwPix8, s.tile[:q.n8])
		r.b = r.b8
	}
	if q.L == 16 {
		r.b = newDwBlock(q.d16, dwPix16, s.tile[q.n8:q.need])
	}
	return r
}

// block computes block u (image u / mb, channels from u mod mb · L on)
// and runs epi on its planes.
func (r *dwSmallRun) block(u int, in, w, bias, y []float32, clampLo, clampHi float32, epi Epilogue) {
	q, p := r.q, r.q.p
	n, m0 := u/q.mb, u%q.mb*q.L
	m1 := min(m0+q.L, p.M)
	r.channels(n, m0, m1, in, w, bias, y, clampLo, clampHi)
	if epi != nil {
		epi((n*p.M+m0)*q.npix, (m1-m0)*q.npix)
	}
}

// channels computes the output planes of channels m0 … m1−1 of image n:
// blocks of L channels from m0 on, then one of 8, then planes one by one
// (plane1). Each computes an element as the others do
// (TestDepthwiseSmallBits), so the bits do not depend on m0 and m1; a
// block of 8 after blocks of 16 needs the 8-lane layout (newDwSmall's
// eights).
func (r *dwSmallRun) channels(n, m0, m1 int, in, w, bias, y []float32, clampLo, clampHi float32) {
	q, p := r.q, r.q.p
	m := m0
	for ; m+q.L <= m1; m += q.L {
		r.b.run(p, in, w, bias, y, n*p.M+m, m, clampLo, clampHi)
	}
	if m+8 <= m1 {
		r.b8.run(p, in, w, bias, y, n*p.M+m, m, clampLo, clampHi)
		m += 8
	}
	if m < m1 && r.ch == nil {
		r.ch = newDwChan(p, q.g, r.s)
	}
	for ; m < m1; m++ {
		r.ch.plane(in, w, bias, y, n*p.M+m, clampLo, clampHi)
	}
}
