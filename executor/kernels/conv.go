package kernels

import "math"

// Conv2D describes a 2-D convolution over NCHW float32 tensors (a 1-D one
// has H = KH = 1): X is [N, C, H, W], the weights [M, C/Groups, KH, KW],
// the output [N, M, OH, OW]. Pads are begin (PT, PL) and end (PB, PR).
type Conv2D struct {
	N, C, H, W     int
	M, KH, KW      int
	SH, SW, DH, DW int
	PT, PL, PB, PR int
	Groups         int
}

// Out returns the output height and width.
func (p *Conv2D) Out() (oh, ow int) {
	oh = (p.H+p.PT+p.PB-p.DH*(p.KH-1)-1)/p.SH + 1
	ow = (p.W+p.PL+p.PR-p.DW*(p.KW-1)-1)/p.SW + 1
	return oh, ow
}

func (p *Conv2D) checkWeights(w []float32) error {
	if p.C < 1 || p.M < 1 || p.KH < 1 || p.KW < 1 || p.Groups < 1 || p.C%p.Groups != 0 || p.M%p.Groups != 0 {
		return shapeErr("conv: invalid geometry %+v", *p)
	}
	if len(w) != p.M*p.C/p.Groups*p.KH*p.KW {
		return shapeErr("conv: W has %d elements, want %d", len(w), p.M*p.C/p.Groups*p.KH*p.KW)
	}
	return nil
}

// check validates the geometry and the lengths of x, w, bias and y; w's
// only when !wPacked (packed weights are checked by their own shape).
func (p *Conv2D) check(x, w, bias, y []float32, wPacked bool) error {
	if p.N < 0 || p.C < 1 || p.H < 1 || p.W < 1 || p.M < 1 || p.KH < 1 || p.KW < 1 ||
		p.SH < 1 || p.SW < 1 || p.DH < 1 || p.DW < 1 || p.PT < 0 || p.PL < 0 || p.PB < 0 || p.PR < 0 || p.Groups < 1 {
		return shapeErr("conv: invalid geometry %+v", *p)
	}
	if p.C%p.Groups != 0 || p.M%p.Groups != 0 {
		return shapeErr("conv: %d input and %d output channels do not split into %d groups", p.C, p.M, p.Groups)
	}
	oh, ow := p.Out()
	if oh < 1 || ow < 1 {
		return shapeErr("conv: empty output %d×%d", oh, ow)
	}
	switch {
	case len(x) != p.N*p.C*p.H*p.W:
		return shapeErr("conv: X has %d elements, want %d", len(x), p.N*p.C*p.H*p.W)
	case !wPacked && len(w) != p.M*p.C/p.Groups*p.KH*p.KW:
		return shapeErr("conv: W has %d elements, want %d", len(w), p.M*p.C/p.Groups*p.KH*p.KW)
	case bias != nil && len(bias) != p.M:
		return shapeErr("conv: B has %d elements, want %d", len(bias), p.M)
	case len(y) != p.N*p.M*oh*ow:
		return shapeErr("conv: Y has %d elements, want %d", len(y), p.N*p.M*oh*ow)
	}
	return nil
}

// Conv2D computes y = conv(x, w) + bias (bias may be nil). Convolutions
// with one input channel per group (depthwise) run a direct kernel; the
// others are one SGEMM per image and group, on the input itself for
// unpadded 1×1 stride-1 convolutions and on an im2col matrix otherwise.
func (x *Context) Conv2D(p Conv2D, in, w, bias, y []float32) error {
	return x.Conv2DPacked(p, in, w, nil, bias, y)
}

// PackConvWeights packs the weights of a convolution that Conv2D would
// run as SGEMMs (one packed matrix per group); nil for depthwise ones.
// Layers with few output pixels (convSwapped) get Wᵀ packed as the B
// operand, the others W as the A operand; Conv2DPacked runs either form
// on any geometry.
func PackConvWeights(p Conv2D, w []float32) ([]*Packed, error) {
	if err := p.checkWeights(w); err != nil {
		return nil, err
	}
	if p.C == p.Groups {
		return nil, nil
	}
	if q, ok := p.subsampled(); ok {
		p = q // packed for the direct convolution Conv2DPackedAct runs
	}
	mg, kk := p.M/p.Groups, p.C/p.Groups*p.KH*p.KW
	swapped := convSwapped(&p, best)
	res := make([]*Packed, p.Groups)
	for g := range res {
		var pk *Packed
		var err error
		if swapped {
			// Wᵀ as the B operand (k × mg).
			pk, err = PackB(true, kk, mg, w[g*mg*kk:(g+1)*mg*kk], kk)
		} else {
			pk, err = PackA(false, mg, kk, 1, w[g*mg*kk:(g+1)*mg*kk], kk)
		}
		if err != nil {
			return nil, err
		}
		res[g] = pk
	}
	return res, nil
}

// Conv2DPacked is Conv2D with the weights also given packed by
// PackConvWeights (pw may be nil). With pw, w is not read and may be nil
// (the caller may have released the unpacked weights).
func (x *Context) Conv2DPacked(p Conv2D, in, w []float32, pw []*Packed, bias, y []float32) error {
	return x.Conv2DPackedEpilogue(p, in, w, pw, bias, y, nil)
}

// Conv2DPackedEpilogue is Conv2DPacked followed by epi (nil: none) on
// every element of y: run on each part of y by the thread that computed
// it, right after, for the depthwise and direct (1×1) convolutions (the
// most frequent steps of mobile nets), the implicit GEMM, the row-block
// path (convRows: the stems, after each block of output rows) and the
// phase-plane grid (as its rows are copied into y: most 3×3
// convolutions); as one more parallel pass after the other paths (im2col
// without packed weights, the transposed forms).
func (x *Context) Conv2DPackedEpilogue(p Conv2D, in, w []float32, pw []*Packed, bias, y []float32, epi Epilogue) error {
	return x.Conv2DPackedAct(p, in, w, pw, bias, y, ActNone, epi)
}

// Act is an activation a convolution applies to each output element
// before its Epilogue, with the same results as the activation's own
// kernel (Relu).
type Act int

const (
	ActNone Act = iota
	// ActRelu is max(v, 0), NaN and −0 kept (Relu). A direct (1×1) or
	// implicit-GEMM convolution applies it in the micro-kernel, on the
	// values in registers, instead of as one more pass over its output.
	ActRelu
	// ActRelu6 is min(max(v, 0), 6), NaN and −0 kept (Clip(0, 6), the
	// mobile nets' ReLU6): in the micro-kernel wherever ActRelu is, as
	// Clip's pass on the other paths.
	ActRelu6
)

// Conv2DPackedClip is Conv2DPackedEpilogue with every element of y
// clipped to [lo, hi] as Clip computes it (the same bits) before epi: in
// the row kernel of a depthwise convolution, on the values in registers,
// else as a pass before epi.
func (x *Context) Conv2DPackedClip(p Conv2D, in, w []float32, pw []*Packed, bias, y []float32, lo, hi float32, epi Epilogue) error {
	if p.C == p.Groups {
		if err := p.check(in, w, bias, y, false); err != nil {
			return err
		}
		if pw != nil && len(pw) != p.Groups {
			return shapeErr("conv: %d packed weight groups for %d groups", len(pw), p.Groups)
		}
		dp := p // depthwise keeps its pointer: a copy, so that p stays on the stack
		x.depthwise(&dp, in, w, bias, y, lo, hi, epi)
		return nil
	}
	full := func(off, n int) {
		s := y[off : off+n]
		Clip(s, s, lo, hi)
		if epi != nil {
			epi(off, n)
		}
	}
	return x.Conv2DPackedAct(p, in, w, pw, bias, y, ActNone, full)
}

// Conv2DPackedAct is Conv2DPackedEpilogue with act applied to every
// element of y before epi.
func (x *Context) Conv2DPackedAct(p Conv2D, in, w []float32, pw []*Packed, bias, y []float32, act Act, epi Epilogue) error {
	if err := p.check(in, w, bias, y, pw != nil && p.C != p.Groups); err != nil {
		return err
	}
	if pw != nil && len(pw) != p.Groups {
		return shapeErr("conv: %d packed weight groups for %d groups", len(pw), p.Groups)
	}
	if p.C == p.Groups {
		// The Relu or ReLU6 in the row kernel, on the values in registers.
		lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
		switch act {
		case ActRelu:
			lo = 0
		case ActRelu6:
			lo, hi = 0, 6
		}
		dp := p // depthwise keeps its pointer: a copy, so that p stays on the stack
		x.depthwise(&dp, in, w, bias, y, lo, hi, epi)
		return nil
	}
	if q, ok := p.subsampled(); ok {
		return x.convSubsampled(p, q, in, w, pw, bias, y, act, epi)
	}
	onePixel := p.H == 1 && p.W == 1 && p.KH == 1 && p.KW == 1 && p.PT == 0 && p.PL == 0 && p.PB == 0 && p.PR == 0
	if onePixel && p.Groups == 1 && pw != nil && !pw[0].isA && pointwiseRowsFit() {
		// One pixel an image (an SE block's 1×1 convolutions): NCHW
		// is NHWC, and Wᵀ packed as B is PointwiseNHWC's packing.
		// Its rows kernels take one row (the SGEMM's tiles twelve)
		// and the activation and the epilogue in their chunks: the
		// same chains of FMAs (pointwiseRows, with the SGEMM's halves
		// of k), so the same bits.
		return x.pointwise(p.N, 1, p.C, p.C, p.M, in, chanScale{}, pw[0], bias, y, act, epi)
	}
	return x.convGroups(p, in, w, pw, bias, y, act, epi)
}

// convSubsampled runs a strided 1×1 convolution p (ResNet's downsampling
// shortcut) as the direct one q on the pixels it reads: those are
// gathered once (a 1/(SH·SW) of the input) instead of run on the
// phase-plane grid or an implicit GEMM at a third of the direct SGEMM's
// speed.
func (x *Context) convSubsampled(p, q Conv2D, in, w []float32, pw []*Packed, bias, y []float32, act Act, epi Epilogue) error {
	s := x.get()
	defer x.put(s)
	s.cols = grow(s.cols, q.N*q.C*q.H*q.W)
	sub := s.cols[:q.N*q.C*q.H*q.W]
	x.rangeWork(p.N*p.C, q.H*q.W*elemWork, func(lo, hi int) { subsample(&p, &q, in, sub, lo, hi) })
	return x.Conv2DPackedAct(q, sub, w, pw, bias, y, act, epi)
}

// convGroups is Conv2DPackedAct's SGEMM paths, image by image and group
// by group (p checked; its own function so that the paths above do not
// move p to the heap, as the closures below do).
func (x *Context) convGroups(p Conv2D, in, w []float32, pw []*Packed, bias, y []float32, act Act, epi Epilogue) error {
	oh, ow := p.Out()
	cg, mg := p.C/p.Groups, p.M/p.Groups
	kk := cg * p.KH * p.KW
	npix := oh * ow
	direct := p.KH == 1 && p.KW == 1 && p.SH == 1 && p.SW == 1 && p.PT == 0 && p.PL == 0 && p.PB == 0 && p.PR == 0
	// full is act then epi, for the paths that run the tail over their
	// output (all but the direct SGEMM's micro-kernel).
	full := epi
	switch act {
	case ActRelu:
		full = func(off, n int) {
			s := y[off : off+n]
			relu(s, s)
			if epi != nil {
				epi(off, n)
			}
		}
	case ActRelu6:
		full = func(off, n int) {
			s := y[off : off+n]
			Clip(s, s, 0, 6)
			if epi != nil {
				epi(off, n)
			}
		}
	}
	// The im2col matrix covers at most maxCols elements: taller outputs
	// run in chunks of output rows (each element of Y is the same chain
	// of FMAs whatever the chunk, as for a split between threads).
	rows := oh
	if kk*npix > maxCols {
		rows = max(1, maxCols/(kk*ow))
	}
	// group computes image n's group g (s: scratch of the im2col path,
	// nil on the others). Its kernels split their work over the threads
	// unless the caller runs groups in parallel (then their parallel
	// calls, nested, run on the chunk's goroutine).
	group := func(n, g int, s *scratch) error {
		xg := in[(n*p.C+g*cg)*p.H*p.W : (n*p.C+(g+1)*cg)*p.H*p.W]
		yg := y[(n*p.M+g*mg)*npix : (n*p.M+(g+1)*mg)*npix]
		var wg []float32
		if pw == nil {
			wg = w[g*mg*kk : (g+1)*mg*kk]
		}
		var pg *Packed
		if pw != nil {
			pg = pw[g]
		}
		var bg []float32
		if bias != nil {
			bg = bias[g*mg : (g+1)*mg]
		}
		base := (n*p.M + g*mg) * npix
		// A 1×1 convolution run as one SGEMM takes the bias fill and
		// the epilogue inside its chunks: one parallel call for the
		// whole step.
		rowsPath := useRows(&p, best, pg)
		directFin := direct && (pg == nil || pg.isA) && !rowsPath
		flatPath := pg != nil && pg.isA && !direct && !rowsPath && useFlat(&p, best.nr)
		// The implicit GEMM (packed weights as A, B packed straight
		// from the input) takes the activation and the epilogue in its
		// chunks, as the direct one does.
		implicit := pg != nil && pg.isA && !direct && !rowsPath && !flatPath
		// convRows and the phase-plane grid apply a Relu or ReLU6 in
		// the micro-kernel (its relu 1 or 2: the same bits as relu and
		// Clip(0, 6)); their tail is the epilogue alone.
		var actIn int
		if rowsPath || flatPath {
			switch act {
			case ActRelu:
				actIn = 1
			case ActRelu6:
				actIn = 2
			}
		}
		tail := full
		if actIn != 0 {
			tail = epi
		}
		// The paths that do not run the tail in their own chunks (im2col
		// without packed weights, the transposed forms): one more pass,
		// once every group is computed (deferred; on an error y is not
		// used).
		if ownTail := directFin || rowsPath || flatPath || implicit; tail != nil && !ownTail {
			defer x.Range(len(yg), 1, func(lo, hi int) { tail(base+lo, hi-lo) })
		}
		switch {
		case pg != nil && !pg.isA && direct && npix == 1:
			// One pixel (an SE block's 1×1 convolutions, where
			// Conv2DPackedAct has no rows kernels for them: no AVX-512,
			// or groups): y = x·Wᵀ + bias, a GEMV on the packed
			// weights, without convFlatT's grid, bias rows and output
			// copy.
			beta := float32(0)
			if bg != nil {
				copy(yg, bg)
				beta = 1
			}
			if err := x.sgemmFinish(best, false, false, 1, mg, cg, 1, xg, cg, nil, nil, 0, pg, beta, yg, mg, nil); err != nil {
				return err
			}
			return nil
		case pg != nil && !pg.isA:
			if err := x.convFlatT(&p, best, pg, xg, cg, mg, bg, yg); err != nil {
				return err
			}
			return nil
		case rowsPath:
			if err := pg.fits(best, true, mg, kk); err != nil {
				return err
			}
			x.convRows(&p, best, pg, xg, cg, mg, bg, yg, actIn, tail, base)
			return nil
		case flatPath:
			if err := x.convFlat(&p, best, pg, xg, cg, mg, bg, yg, actIn, tail, base); err != nil {
				return err
			}
			return nil
		case directFin:
			fin := &finish{bias: bg, relu: act == ActRelu || act == ActRelu6, six: act == ActRelu6, epi: epi, base: base}
			if err := x.sgemmFinish(best, false, false, mg, npix, kk, 1, wg, kk, pg, xg, npix, nil, 0, yg, npix, fin); err != nil {
				return err
			}
			return nil
		}
		if implicit {
			// Implicit GEMM: B packed straight from the input, the
			// bias and the activation applied by the micro-kernel as
			// it stores C, the epilogue on each part of C right after.
			fin := &finish{bias: bg, relu: act == ActRelu || act == ActRelu6, six: act == ActRelu6, epi: epi, base: base}
			cb := &convB{p: &p, x: xg, oh: oh, ow: ow}
			if err := x.sgemmConv(best, mg, npix, kk, pg, cb, 0, yg, npix, fin); err != nil {
				return err
			}
			return nil
		}
		beta := float32(0)
		if bg != nil {
			x.Range(mg, npix, func(lo, hi int) {
				for m := lo; m < hi; m++ {
					row := yg[m*npix : (m+1)*npix]
					fill(row, bg[m])
				}
			})
			beta = 1
		}
		for o0 := 0; o0 < oh; o0 += rows {
			o1 := min(o0+rows, oh)
			nc := (o1 - o0) * ow
			im2col(&p, xg, cg, o0, o1, ow, s.cols)
			if err := x.SgemmPacked(false, false, mg, nc, kk, 1, wg, kk, pg, s.cols[:kk*nc], nc, nil, beta, yg[o0*ow:], npix); err != nil {
				return err
			}
		}
		return nil
	}
	getS := func() *scratch {
		if direct || pw != nil {
			return nil
		}
		s := x.get()
		s.cols = grow(s.cols, kk*rows*ow)
		return s
	}
	units := p.N * p.Groups
	if c := x.groupChunks(units, convGroupWork(&p, best)); c > 1 {
		// Whole groups per chunk, each group computed exactly as on its
		// own: the same bits as group by group.
		errs := make([]error, c)
		x.parallel(c, func(i int) {
			s := getS()
			if s != nil {
				defer x.put(s)
			}
			for u := units * i / c; u < units*(i+1)/c; u++ {
				if err := group(u/p.Groups, u%p.Groups, s); err != nil {
					errs[i] = err
					return
				}
			}
		})
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	s := getS()
	if s != nil {
		defer x.put(s)
	}
	for n := 0; n < p.N; n++ {
		for g := 0; g < p.Groups; g++ {
			if err := group(n, g, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// subsampled returns the unpadded stride-1 1×1 convolution over the
// pixels that p, an unpadded strided 1×1 convolution, reads (input rows
// and columns 0, S, 2S, …); false for any other p.
func (p *Conv2D) subsampled() (Conv2D, bool) {
	if p.KH != 1 || p.KW != 1 || p.SH == 1 && p.SW == 1 || p.PT != 0 || p.PL != 0 || p.PB != 0 || p.PR != 0 || p.C == p.Groups {
		return Conv2D{}, false
	}
	oh, ow := p.Out()
	if oh < 1 || ow < 1 {
		return Conv2D{}, false
	}
	q := *p
	q.H, q.W, q.SH, q.SW, q.DH, q.DW = oh, ow, 1, 1, 1, 1
	return q, true
}

// subsample copies planes [lo, hi) (image·C + channel) of x (geometry p)
// at p's strides into sub (geometry q, p.subsampled()).
func subsample(p, q *Conv2D, x, sub []float32, lo, hi int) {
	for pl := lo; pl < hi; pl++ {
		src := x[pl*p.H*p.W : (pl+1)*p.H*p.W]
		dst := sub[pl*q.H*q.W : (pl+1)*q.H*q.W]
		for o := 0; o < q.H; o++ {
			row, d := src[o*p.SH*p.W:], dst[o*q.W:(o+1)*q.W]
			if p.SW == 1 {
				copy(d, row)
				continue
			}
			for c := range d {
				d[c] = row[c*p.SW]
			}
		}
	}
}

// convGroupWork is the work estimate (see minWork) of one image and
// group of a grouped convolution, as the SGEMM counts it.
func convGroupWork(p *Conv2D, mk microKernel) int {
	oh, ow := p.Out()
	mg, kk := p.M/p.Groups, p.C/p.Groups*p.KH*p.KW
	return roundUp(mg, mk.mr)*roundUp(oh*ow, mk.nr)*kk + 8*mg*oh*ow
}

// groupChunks is the number of chunks of whole groups to split units
// independent groups of work each into: more than one when there are
// enough groups to keep every thread busy (chunksPerThread each) or when
// a group is too small for its kernels to split it (then the groups
// would run one after the other on the caller alone). Else 1: each
// group's kernels split it.
func (x *Context) groupChunks(units, work int) int {
	t := x.cut()
	if t <= 1 || units < 2 {
		return 1
	}
	if units < chunksPerThread*t && work >= 2*minWork {
		return 1
	}
	c, _ := x.chunks(units*work, units)
	return c
}

// im2col writes cols[(c·KH+kh)·KW+kw][oh·OW+ow] = x[c][oh·SH−PT+kh·DH][ow·SW−PL+kw·DW]
// (zero outside the input).
//
// Only output rows [o0, o1) are written (cols then has (o1−o0)·OW columns).
func im2col(p *Conv2D, x []float32, cg, o0, o1, ow int, cols []float32) {
	npix := (o1 - o0) * ow
	for c := 0; c < cg; c++ {
		xc := x[c*p.H*p.W : (c+1)*p.H*p.W]
		for kh := 0; kh < p.KH; kh++ {
			for kw := 0; kw < p.KW; kw++ {
				row := cols[((c*p.KH+kh)*p.KW+kw)*npix : ((c*p.KH+kh)*p.KW+kw+1)*npix]
				// Output columns whose input column is inside [0, W).
				off := kw*p.DW - p.PL
				lo, hi := colRange(off, p.SW, p.W, ow)
				for o := o0; o < o1; o++ {
					ih := o*p.SH - p.PT + kh*p.DH
					d := row[(o-o0)*ow : (o-o0+1)*ow]
					if ih < 0 || ih >= p.H || lo >= hi {
						clear(d)
						continue
					}
					src := xc[ih*p.W : (ih+1)*p.W]
					clear(d[:lo])
					if p.SW == 1 {
						copy(d[lo:hi], src[lo+off:hi+off])
					} else {
						for q := lo; q < hi; q++ {
							d[q] = src[q*p.SW+off]
						}
					}
					clear(d[hi:])
				}
			}
		}
	}
}

// colRange returns the output columns [lo, hi) with 0 ≤ q·s+off < w.
func colRange(off, s, w, ow int) (lo, hi int) {
	lo = 0
	if off < 0 {
		lo = (-off + s - 1) / s
	}
	hi = 0
	if w-off > 0 {
		hi = (w - off + s - 1) / s
	}
	lo, hi = min(lo, ow), min(hi, ow)
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// maxCols bounds the im2col matrix of a convolution (elements, 4 MiB).
const maxCols = 1 << 20

// smallRow: pool rows shorter than this run plane-wide (a call per row
// costs more than the row's arithmetic).
const smallRow = 32

// convB is the im2col matrix of one image and group of a convolution
// (rows (c·KH+kh)·KW+kw, columns the output pixels oh·OW+ow), never
// formed: pack writes its panels straight from the input.
type convB struct {
	p      *Conv2D
	x      []float32
	oh, ow int
	// flat: B is the phase-plane grid (convflat.go) from column col0 on;
	// for convFlatT, pix (when set) lists the grid columns of A's rows.
	flat *flatConv
	col0 int
	pix  []int
}

// pack packs rows [p0, p0+kc) and columns [j0, j0+nc) into panels of nr
// columns, as packB does for a formed matrix (same values, same layout).
func (cb *convB) pack(dst []float32, p0, kc, j0, nc, nr int) {
	if cb.flat != nil {
		cb.flat.pack(dst, p0, kc, cb.col0+j0, nc, nr)
		return
	}
	p := cb.p
	hw := p.H * p.W
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : jr*kc+nr*kc]
		nn := min(nr, nc-jr)
		q0 := j0 + jr // first output pixel of the panel
		for r := 0; r < kc; r++ {
			row := p0 + r
			kw := row % p.KW
			kh := (row / p.KW) % p.KH
			ch := row / (p.KW * p.KH)
			xc := cb.x[ch*hw : (ch+1)*hw]
			d := panel[r*nr : r*nr+nr]
			clear(d[nn:])
			off := kw*p.DW - p.PL
			// The panel's pixels, one output row segment at a time.
			for i := 0; i < nn; {
				q := q0 + i
				o, c0 := q/cb.ow, q%cb.ow
				seg := min(nn-i, cb.ow-c0)
				ds := d[i : i+seg]
				ih := o*p.SH - p.PT + kh*p.DH
				if ih < 0 || ih >= p.H {
					clear(ds)
					i += seg
					continue
				}
				src := xc[ih*p.W : (ih+1)*p.W]
				lo, hi := colRange(off, p.SW, p.W, cb.ow)
				// Columns c0..c0+seg of the output row; inside: [lo, hi).
				a, b := max(lo, c0), min(hi, c0+seg)
				if a >= b {
					clear(ds)
					i += seg
					continue
				}
				clear(ds[:a-c0])
				if p.SW == 1 {
					copy(ds[a-c0:b-c0], src[a+off:b+off])
				} else {
					for c := a; c < b; c++ {
						ds[c-c0] = src[c*p.SW+off]
					}
				}
				clear(ds[b-c0:])
				i += seg
			}
		}
	}
}

// sgemmConv computes C = A·B + beta·C with A packed and B the implicit
// im2col matrix cb (k×n), split over the threads by columns or rows as
// sgemm does (the same result for every thread count), finished by fin
// (nil: none).
func (x *Context) sgemmConv(mk microKernel, m, n, k int, pa *Packed, cb *convB, beta float32, c []float32, ldc int, fin *finish) error {
	if err := pa.fits(mk, true, m, k); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	x.gemm(mk, m, n, k, 1, operand{packed: pa}, operand{conv: cb}, beta, c, ldc, fin)
	return nil
}
