package kernels

// Pointwise (1×1) convolutions on NHWC activations.
//
// In NHWC each pixel's channels are contiguous, so a 1×1 convolution is
// C = A·B with A the input (one row of c channels a pixel, read in place),
// B the weights (c×m, packed once by PackPointwise) and C the output (one
// row of m channels a pixel). Work splits by pixels: each thread reads
// and writes only its own pixels' rows, so a chain of such steps split
// the same way keeps each thread's data in its own core's cache, where
// NCHW's channel-mixing steps read planes the other core just wrote
// (docs/threads.md, "What is left").

// rowsKernel computes rows (1–12) rows and 16 or 32 columns of C from A's
// rows in place and a packed B panel 32 wide (see the generator's
// rowsKernel): the AVX-512 rowsAVX512R<rows>C<16·nv>.
type rowsKernel func(kc int, a *float32, lda int, b *float32, c *float32, ldc int, add int, bias *float32, relu int, mask int)

// rowsKernels[nv−1][r] is the rows kernel of r rows and 16·nv columns
// (all nil without AVX-512); set during package initialization and
// read-only afterwards.
var rowsKernels [2][13]rowsKernel

// pointwiseRowsFit reports whether PointwiseNHWC runs the rows kernels
// (AVX-512 and the SGEMM's panels of 32 columns), not the SGEMM.
func pointwiseRowsFit() bool { return rowsKernels[0][1] != nil && best.nr == 32 }

// PackPointwise packs the weights of a 1×1 convolution of c input and m
// output channels (w in ONNX's layout: m rows of c) for PointwiseNHWC.
func PackPointwise(c, m int, w []float32) (*Packed, error) {
	return PackB(true, c, m, w, c)
}

// PointwiseNHWC computes y[p·m + j] = act(bias[j] + Σ_i x[p·c + i]·w[j, i])
// for pixels p < pix and output channels j < m: a 1×1 convolution
// (stride 1, one group) of NHWC activations, with w packed by
// PackPointwise and bias nil for none. act is ActNone, ActRelu or
// ActRelu6; epi (nil: none) then runs on each part of y as soon as it is
// final, on the thread that computed it. Each element is the same chain
// of multiply-adds whatever the thread count (the pixels are split, never
// the channels' sums).
func (x *Context) PointwiseNHWC(n, pix, c, m int, in []float32, pw *Packed, bias, y []float32, act Act, epi Epilogue) error {
	return x.pointwise(n, pix, c, c, m, in, chanScale{}, pw, bias, y, act, epi)
}

// PointwiseNHWCStrided is PointwiseNHWC on a window of a wider tensor's
// channels: pixel p's c input channels start at in[p·lda] (lda ≥ c; a
// ShuffleNet unit's half of its input, read where it is instead of
// copied). The same bits as PointwiseNHWC on the window copied.
func (x *Context) PointwiseNHWCStrided(n, pix, c, lda, m int, in []float32, pw *Packed, bias, y []float32, act Act, epi Epilogue) error {
	return x.pointwise(n, pix, c, lda, m, in, chanScale{}, pw, bias, y, act, epi)
}

// PointwiseNHWCSubsampled is PointwiseNHWC for a 1×1 convolution p of
// strides above 1 (ResNet's and RegNet's downsampling shortcut): the
// pixels it reads are gathered once, then PointwiseNHWC runs on them, as
// Conv2DPackedAct runs the NCHW one on its gathered planes (the same
// bits). w is packed by PackPointwise(p.C, p.M, w).
func (x *Context) PointwiseNHWCSubsampled(p Conv2D, in []float32, pw *Packed, bias, y []float32, act Act, epi Epilogue) error {
	q, ok := p.subsampled()
	if !ok || p.Groups != 1 {
		return shapeErr("pointwise: %+v is not a subsampling 1×1 convolution", p)
	}
	if err := p.check(in, nil, bias, y, true); err != nil {
		return err
	}
	s := x.get()
	defer x.put(s)
	s.cols = grow(s.cols, q.N*q.H*q.W*p.C)
	sub := s.cols[:q.N*q.H*q.W*p.C]
	x.Range(q.N*q.H, q.W*p.C, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			n, o := r/q.H, r%q.H
			src := in[((n*p.H+o*p.SH)*p.W)*p.C:]
			dst := sub[r*q.W*p.C : (r+1)*q.W*p.C]
			for j := range q.W {
				copy(dst[j*p.C:(j+1)*p.C], src[j*p.SW*p.C:j*p.SW*p.C+p.C])
			}
		}
	})
	return x.pointwise(q.N, q.H*q.W, p.C, p.C, p.M, sub, chanScale{}, pw, bias, y, act, epi)
}

// PointwiseNHWCScaled is PointwiseNHWC of the input multiplied by
// channel: x[p·c + i]·scale[k·c + i] for pixel p of image k (scale one
// row of c for every image when len(scale) == c). A
// squeeze-and-excitation's Mul and the projection after it in one pass
// over the input: each product is rounded to float32 before the
// multiply-adds read it, as the Mul's own kernel rounds it (the same
// bits), made a block of pixels at a time into a buffer of the thread's
// that is in cache when the multiply-adds read it.
func (x *Context) PointwiseNHWCScaled(n, pix, c, m int, in, scale []float32, pw *Packed, bias, y []float32, act Act, epi Epilogue) error {
	if len(scale) != c && len(scale) != n*c {
		return shapeErr("pointwise: %d scale values for %d images of %d channels", len(scale), n, c)
	}
	return x.pointwise(n, pix, c, c, m, in, chanScale{s: scale, pix: pix}, pw, bias, y, act, epi)
}

// chanScale is PointwiseNHWCScaled's scale (s nil: none).
type chanScale struct {
	s   []float32
	pix int // pixels an image
}

// apply sets buf's rows to in's rows of pixels [lo, hi) scaled
// (kernels.MulSuffix: one float32 product an element).
func (sc chanScale) apply(in []float32, lo, hi, c int, buf []float32) {
	for p := lo; p < hi; {
		img := p / sc.pix
		e := min(hi, (img+1)*sc.pix)
		row := sc.s[:c]
		if len(sc.s) > c {
			row = sc.s[img*c : (img+1)*c]
		}
		MulSuffix(in[p*c:e*c], row, buf[(p-lo)*c:(e-lo)*c])
		p = e
	}
}

// minPointwiseWork is minWork for PointwiseNHWC's chunks of pixels: a
// quarter of the SGEMM's, as for the row-independent kernels
// (minRangeWork). Its chunks share only the packed weights, and in an
// NHWC region each thread mostly reads the pixels it wrote in the step
// before, where the SGEMM's minWork assumes a chunk's operands come from
// the other core. (mobilenet_v3_small at 2 threads, `--scaling 1,2
// --inline --steps 100`: its 56² 16→16 projection, 802 Ki multiply-adds,
// 53 → 26 µs; the 14² 96→40 one 21 → 13 µs.)
const minPointwiseWork = minWork / 4

// scaledBlock is how many input values a block of scaled pixels holds
// at most (at least one tile of 12 pixels): 256 KB, in the L2 cache.
const scaledBlock = 1 << 16

// pointwise is PointwiseNHWC, PointwiseNHWCStrided (lda > c; sc.s nil)
// and PointwiseNHWCScaled (lda = c).
func (x *Context) pointwise(n, imgPix, c, lda, m int, in []float32, sc chanScale, pw *Packed, bias, y []float32, act Act, epi Epilogue) error {
	if n < 0 || imgPix < 0 || c < 1 || m < 1 || lda < c || sc.s != nil && lda != c {
		return shapeErr("pointwise: %d images of %d pixels, %d → %d channels, %d apart", n, imgPix, c, m, lda)
	}
	pix := n * imgPix
	if pw == nil {
		return shapeErr("pointwise: no packed weights")
	}
	if err := pw.fits(best, false, m, c); err != nil {
		return err
	}
	if pix > 0 && len(in) < (pix-1)*lda+c || len(y) < pix*m {
		return shapeErr("pointwise: %d input and %d output values for %d pixels of %d channels (%d apart) → %d", len(in), len(y), pix, c, lda, m)
	}
	if bias != nil && len(bias) < m {
		return shapeErr("pointwise: %d bias values for %d channels", len(bias), m)
	}
	relu, err := rowsAct(act, "pointwise")
	if err != nil {
		return err
	}
	if pix == 0 {
		return nil
	}
	if !pointwiseRowsFit() {
		if sc.s != nil {
			s := x.get()
			defer x.put(s)
			s.scaled = grow(s.scaled, pix*c)
			x.Range(pix, c, func(lo, hi int) { sc.apply(in, lo, hi, c, s.scaled[lo*c:]) })
			in = s.scaled
		}
		for i := range n {
			// Image by image: the SGEMM's plan (its halves of k) is
			// the NCHW convolution's.
			if err := x.pointwiseSgemm(imgPix, c, lda, m, in[i*imgPix*lda:], pw, bias, y[i*imgPix*m:], relu); err != nil {
				return err
			}
		}
		if epi != nil {
			epi(0, pix*m)
		}
		return nil
	}
	const mr = 12
	var kh int // the second half of k from there (0: none)
	if splitsK(m, imgPix, c) {
		kb := kBlock(c)
		kh = ((c+kb-1)/kb + 1) / 2 * kb
	}
	units := (pix + mr - 1) / mr
	if units == 1 && kh == 0 && sc.s == nil {
		// One tile of pixels (an SE block's 1×1 convolutions on one
		// pixel): a GEMV streaming B, split by B's panels of 32
		// columns instead. Each column is the same chain of
		// multiply-adds in any panel range, so the bits are the same.
		// It counts as 16 rows, as gemmSplit counts a thin product.
		if nc, _ := x.chunksMin(16*c*m, (m+31)/32, minPointwiseWork); nc > 1 {
			x.pointwiseCols(pix, c, lda, m, nc, in, pw, bias, y, relu, epi)
			return nil
		}
	}
	nc, _ := x.chunksMin(pix*c*m, units, minPointwiseWork)
	if nc <= 1 {
		x.pointwiseRange(0, pix, c, lda, m, kh, in, sc, pw, bias, y, relu)
		if epi != nil {
			epi(0, pix*m)
		}
		return nil
	}
	parts := split(pix, nc, mr)
	x.parallel(len(parts)-1, func(i int) {
		x.pointwiseRange(parts[i], parts[i+1], c, lda, m, kh, in, sc, pw, bias, y, relu)
		if epi != nil {
			epi(parts[i]*m, (parts[i+1]-parts[i])*m)
		}
	})
	return nil
}

// rowsAct is the rows kernels' relu argument for act (0 none, 1 ReLU,
// 2 ReLU6); an error naming op for any other activation.
func rowsAct(act Act, op string) (int, error) {
	switch act {
	case ActNone:
		return 0, nil
	case ActRelu:
		return 1, nil
	case ActRelu6:
		return 2, nil
	}
	return 0, shapeErr("%s: activation %d is not ActNone, ActRelu or ActRelu6", op, act)
}

// pointwiseRange computes pixels [lo, hi) of PointwiseNHWC (sc.s nil)
// or PointwiseNHWCScaled: the scaled rows made by blocks of pixels, each
// block's multiply-adds as pointwiseRows makes them.
func (x *Context) pointwiseRange(lo, hi, c, lda, m, kh int, in []float32, sc chanScale, pw *Packed, bias, y []float32, relu int) {
	if sc.s == nil && kh == 0 {
		pointwiseRows(lo, hi, c, lda, m, 0, m, kh, in, pw, bias, y, relu, nil)
		return
	}
	s := x.get()
	defer x.put(s)
	if sc.s == nil {
		pointwiseRows(lo, hi, c, lda, m, 0, m, kh, in, pw, bias, y, relu, s)
		return
	}
	pb := max(12, scaledBlock/c/12*12)
	s.scaled = grow(s.scaled, min(pb, hi-lo)*c)
	for b0 := lo; b0 < hi; b0 += pb {
		b1 := min(hi, b0+pb)
		sc.apply(in, b0, b1, c, s.scaled)
		pointwiseRows(0, b1-b0, c, c, m, 0, m, kh, s.scaled, pw, bias, y[b0*m:], relu, s)
	}
}

// pointwiseCols is pointwise on one tile of pixels (pix ≤ 12, no halves
// of k, no scale) in nc chunks of whole panels of columns, epi on each
// pixel's part of a chunk.
func (x *Context) pointwiseCols(pix, c, lda, m, nc int, in []float32, pw *Packed, bias, y []float32, relu int, epi Epilogue) {
	parts := split(m, nc, 32)
	x.parallel(len(parts)-1, func(i int) {
		j0, j1 := parts[i], parts[i+1]
		pointwiseRows(0, pix, c, lda, m, j0, j1, 0, in, pw, bias, y, relu, nil)
		if epi != nil {
			for p := range pix {
				epi(p*m+j0, j1-j0)
			}
		}
	})
}

// pointwiseRows computes PointwiseNHWC's pixels [lo, hi) and output
// channels [j0, j1) (j0 a multiple of 32; j1 too, or m) with the rows
// kernels: by k-blocks (kBlock, as the SGEMM: the first starts from the
// bias, the later ones add, the last applies relu), then by B's panels
// of 32 columns (kept in L1 while the pixels' rows stream by), then by
// tiles of 12 pixels. From kh on (0: never; s may then be nil) the
// k-blocks sum into a scratch matrix of s instead, added to y at the end with the activation
// after it: the two halves of k of the NCHW convolution's SGEMM
// (gemmSplitK), so the same bits.
func pointwiseRows(lo, hi, c, lda, m, j0, j1, kh int, in []float32, pw *Packed, bias, y []float32, relu int, s *scratch) {
	const mr, nr = 12, 32
	kb := kBlock(c)
	var t []float32
	if kh > 0 {
		s.kpart = grow(s.kpart, (hi-lo)*m)
		t = s.kpart
	}
	for p0 := 0; p0 < c; p0 += kb {
		kc := min(kb, c-p0)
		add, last := 1, 0
		if p0 == 0 || p0 == kh {
			add = 0
		}
		if p0+kc == c && kh == 0 {
			last = relu
		}
		out, base := y, 0
		if kh > 0 && p0 >= kh {
			out, base = t, lo
		}
		for jr := j0; jr < j1; jr += nr {
			nn := min(nr, j1-jr)
			nv := (nn + 15) / 16
			mask := 1<<(nn-16*(nv-1)) - 1
			panel := pw.panel(p0, kc, jr)
			var pb *float32
			if p0 == 0 && bias != nil {
				pb = &bias[jr]
			}
			for i := lo; i < hi; i += mr {
				r := min(mr, hi-i)
				rowsKernels[nv-1][r](kc, &in[i*lda+p0], lda, panel, &out[(i-base)*m+jr], m, add, pb, last, mask)
			}
		}
	}
	if kh > 0 {
		fold(y[lo*m:hi*m], t[:(hi-lo)*m], relu)
	}
}

// pointwiseSgemm is PointwiseNHWC without the rows kernels: y's rows
// set to the bias, the SGEMM (A packed per call) adding to them, as the
// NCHW convolution's SGEMM starts from its bias (the same bits), then the
// activation per pixel.
func (x *Context) pointwiseSgemm(pix, c, lda, m int, in []float32, pw *Packed, bias, y []float32, relu int) error {
	beta := float32(0)
	if bias != nil {
		for p := range pix {
			copy(y[p*m:p*m+m], bias[:m])
		}
		beta = 1
	}
	if err := x.SgemmPacked(false, false, pix, m, c, 1, in, lda, nil, nil, 0, pw, beta, y, m); err != nil {
		return err
	}
	if relu != 0 {
		x.Range(pix, m, func(lo, hi int) { actGeneric(y[lo*m:hi*m], relu) })
	}
	return nil
}
