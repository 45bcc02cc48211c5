package kernels

// Convolutions of up to 32 output channels a group on NHWC activations:
// RegNet's grouped 3×3 convolutions (groups of 8 to 32 channels) and the
// mobile nets' stems (3 input channels, 16 to 32 output ones, stride 2).
// Output pixel q's group g is a row of C = A·B: A's row the im2col row
// of q's group (its channels' taps, channel by channel, as the NCHW
// paths order k), B the group's weights (k × the group's output
// channels, one panel 32 wide). Each chunk of output pixels copies the
// input rows it reads once, zero-padded left and right and above and
// below (a slab), so that every pixel reads all its taps at the same
// offsets from its own start: the rows kernels with a table (rowsTab)
// read A's elements in the slab through k's table of offsets, tiles of
// up to 12 pixels of an output row at once, with no im2col copy. The
// input may be NHWC or NCHW (planar: a stem reading the graph's input,
// whose slab keeps the planes): only the slab's strides differ. Every
// element is the NCHW SGEMM's chain: the sum from zero of all of k in its
// order (the padding's 0·w included) in one k-block (k ≤ blockK), then
// the bias, then the ReLU: the same bits. Work splits by output pixels
// as DepthwiseNHWC's does, so a thread reads its own pixels and the
// halo rows around them.

// rowsTabKernel is rowsTabAVX512R<rows>C<16·nv>'s signature (the
// generator's rowsKernel with a table).
type rowsTabKernel func(kc int, a *float32, lda int, tab *int, b *float32, c *float32, ldc int, add int, bias *float32, relu int, mask int)

// rowsTabKernels[nv−1][r] is the table rows kernel of r rows and 16·nv
// columns (all nil without AVX-512); set during package initialization
// and read-only afterwards.
var rowsTabKernels [2][13]rowsTabKernel

// ConvNHWCWeights are a convolution's weights packed for ConvNHWC:
// group g's k × 32 panel at w[g·k·32:], k = C/Groups·KH·KW in im2col's
// order, zeros past the group's output channels.
type ConvNHWCWeights struct {
	c, m, groups, kh, kw int
	w                    []float32
}

// ConvNHWCFits reports whether ConvNHWC runs the convolution p: the
// table rows kernels are there (AVX-512, the SGEMM's panels of 32), p
// has more than one input channel a group (depthwise ones are
// DepthwiseNHWC's), 8 to 32 output channels a group and at most blockK
// products an output (one k-block, as the NCHW SGEMM's).
func ConvNHWCFits(p Conv2D) bool {
	if rowsTabKernels[0][1] == nil || !pointwiseRowsFit() || p.Groups < 1 || p.C%p.Groups != 0 || p.M%p.Groups != 0 {
		return false
	}
	cg, mg := p.C/p.Groups, p.M/p.Groups
	return cg >= 2 && mg >= 8 && mg <= 32 && p.KH >= 1 && p.KW >= 1 && cg*p.KH*p.KW <= blockK
}

// PackConvNHWC packs the weights of the convolution p (w in ONNX's
// layout, M × C/Groups × KH × KW) for ConvNHWC.
func PackConvNHWC(p Conv2D, w []float32) (*ConvNHWCWeights, error) {
	if err := p.checkWeights(w); err != nil {
		return nil, err
	}
	if !ConvNHWCFits(p) {
		return nil, shapeErr("conv: %d groups of %d → %d channels, %d×%d, do not fit ConvNHWC", p.Groups, p.C, p.M, p.KH, p.KW)
	}
	mg, k := p.M/p.Groups, p.C/p.Groups*p.KH*p.KW
	gw := &ConvNHWCWeights{c: p.C, m: p.M, groups: p.Groups, kh: p.KH, kw: p.KW, w: make([]float32, p.Groups*k*32)}
	for g := range p.Groups {
		panel := gw.w[g*k*32 : (g+1)*k*32]
		for j := range mg {
			row := w[(g*mg+j)*k : (g*mg+j+1)*k]
			for kk, v := range row {
				panel[kk*32+j] = v
			}
		}
	}
	return gw, nil
}

// ConvNHWC computes the convolution p into NHWC activations (y: N × OH
// × OW × M) from NHWC ones (in: N × H × W × C) or, planar, NCHW ones,
// with weights packed by PackConvNHWC and bias nil for none, each
// element the NCHW SGEMM's chain of multiply-adds (see above) whatever
// the thread count. act is ActNone, ActRelu or ActRelu6; epi (nil: none)
// then runs on each part of y as soon as it is final, on the thread that
// computed it.
func (x *Context) ConvNHWC(p Conv2D, in []float32, planar bool, pw *ConvNHWCWeights, bias, y []float32, act Act, epi Epilogue) error {
	if err := p.check(in, nil, bias, y, true); err != nil {
		return err
	}
	if pw == nil || pw.c != p.C || pw.m != p.M || pw.groups != p.Groups || pw.kh != p.KH || pw.kw != p.KW || !ConvNHWCFits(p) {
		return shapeErr("conv: packed weights do not fit %+v", p)
	}
	relu, err := rowsAct(act, "conv")
	if err != nil {
		return err
	}
	oh, ow := p.Out()
	k := p.C / p.Groups * p.KH * p.KW
	pix := p.N * oh * ow
	const align = 12
	c, _ := x.chunksMin(pix*p.M*k, (pix+align-1)/align, minPointwiseWork)
	c = min(c, x.cut())
	parts := split(pix, c, align)
	x.parallel(len(parts)-1, func(i int) {
		s := x.get()
		defer x.put(s)
		x.convNHWCChunk(&p, parts[i], parts[i+1], in, planar, pw, bias, relu, y, s)
		if epi != nil {
			epi(parts[i]*p.M, (parts[i+1]-parts[i])*p.M)
		}
	})
	return nil
}

// convNHWCChunk computes ConvNHWC's output pixels [lo, hi) image by
// image: the slab of the input rows they read, then each output row's
// pixels in tiles of at most 12.
func (x *Context) convNHWCChunk(p *Conv2D, lo, hi int, in []float32, planar bool, pw *ConvNHWCWeights, bias []float32, relu int, y []float32, s *scratch) {
	oh, ow := p.Out()
	cg, mg := p.C/p.Groups, p.M/p.Groups
	k := cg * p.KH * p.KW
	wp := p.W + p.PL + p.PR // slab row width in pixels
	if len(s.taps) < 2*k {
		s.taps = make([]int, max(2*k, 2*maxDwNHWCTaps))
	}
	tt := s.taps
	nv := (mg + 15) / 16
	mask := 1<<(mg-16*(nv-1)) - 1
	for q := lo; q < hi; {
		img := q / (oh * ow)
		e := min(hi, (img+1)*oh*ow)
		// Output rows o0 … o1 of this image; slab rows from input row
		// r0 (the first one's first tap) to the last one's last tap.
		o0, o1 := (q%(oh*ow))/ow, ((e-1)%(oh*ow))/ow
		r0 := o0*p.SH - p.PT
		nr := (o1-o0)*p.SH + (p.KH-1)*p.DH + 1
		s.slab = grow(s.slab, nr*wp*p.C)
		slab := s.slab
		src := in[img*p.H*p.W*p.C : (img+1)*p.H*p.W*p.C]
		// The slab's strides (in elements) between channels, pixels and
		// rows: channels last, or planes of nr rows.
		cs, ps, rs := 1, p.C, wp*p.C
		if planar {
			cs, ps, rs = nr*wp, 1, wp
		}
		// One plane of all the channels, or one a channel: its rows
		// of the input (rowLen elements each) padded into the slab's.
		planes, rowLen := 1, p.W*p.C
		if planar {
			planes, rowLen = p.C, p.W
		}
		for pl := range planes {
			for r := range nr {
				d := slab[pl*cs+r*rs : pl*cs+r*rs+wp*ps]
				ih := r0 + r
				if ih < 0 || ih >= p.H {
					clear(d)
					continue
				}
				clear(d[:p.PL*ps])
				copy(d[p.PL*ps:], src[(pl*p.H+ih)*rowLen:][:rowLen])
				clear(d[p.PL*ps+rowLen:])
			}
		}
		// k's table: (channel, tap)'s offset in the slab from its
		// pixel's first tap and its B row's in the group panel, in bytes.
		for ci := range cg {
			for kh := range p.KH {
				for kw := range p.KW {
					kk := (ci*p.KH+kh)*p.KW + kw
					tt[2*kk], tt[2*kk+1] = 4*(ci*cs+kh*p.DH*rs+kw*p.DW*ps), 4*32*kk
				}
			}
		}
		sx := p.SW * ps
		for q < e {
			o, q0 := (q%(oh*ow))/ow, q%ow
			q1 := min(ow, q0+e-q)
			yr := y[(img*oh+o)*ow*p.M:]
			base := (o - o0) * p.SH * rs
			// Tiles of at most 12 pixels, as even as they go.
			n := q1 - q0
			t := (n + 11) / 12
			for j := range t {
				a0, a1 := q0+n*j/t, q0+n*(j+1)/t
				r := a1 - a0
				for g := range p.Groups {
					yt := yr[a0*p.M+g*mg:]
					var pb *float32
					if bias != nil {
						pb = &bias[g*mg]
					}
					a := slab[base+a0*sx+g*cg*cs:]
					// Every read lies in the slab: the last pixel's
					// last (channel, tap); every write in y.
					_ = a[(r-1)*sx+tt[2*(k-1)]/4]
					_ = yt[(r-1)*p.M+mg-1]
					rowsTabKernels[nv-1][r](k, &a[0], sx, &tt[0], &pw.w[g*k*32], &yt[0], p.M, 0, pb, relu, mask)
				}
			}
			q += q1 - q0
		}
	}
}
