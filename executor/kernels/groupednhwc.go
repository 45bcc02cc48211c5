package kernels

// Grouped convolutions on NHWC activations (RegNet's 3×3 convolutions of
// groups of 8 to 32 channels). Output pixel q's group g is a row of
// C = A·B: A's row the im2col row of q's group (its channels' taps,
// channel by channel, as the NCHW paths order k), B the group's weights
// (k × the group's output channels, one panel 32 wide). Each chunk of
// output pixels copies the input rows it reads once, zero-padded left
// and right and above and below (a slab), so that every pixel reads all
// its taps at the same offsets from its own start: the rows kernels
// with a table (rowsTab) read A's elements in the slab through k's
// table of offsets, tiles of up to 12 pixels of an output row at once,
// with no im2col copy. Every element is the NCHW SGEMM's chain: the sum
// from zero of all of k in its order (the padding's 0·w included) in one
// k-block (k ≤ blockK), then the bias, then the ReLU: the same bits.
// Work splits by output pixels as DepthwiseNHWC's does, so a thread
// reads its own pixels and the halo rows around them.

// rowsTabKernel is rowsTabAVX512R<rows>C<16·nv>'s signature (the
// generator's rowsKernel with a table).
type rowsTabKernel func(kc int, a *float32, lda int, tab *int, b *float32, c *float32, ldc int, add int, bias *float32, relu int, mask int)

// rowsTabKernels[nv−1][r] is the table rows kernel of r rows and 16·nv
// columns (all nil without AVX-512); set during package initialization
// and read-only afterwards.
var rowsTabKernels [2][13]rowsTabKernel

// GroupedWeights are a grouped convolution's weights packed for
// GroupedNHWC: group g's k × 32 panel at w[g·k·32:], k = C/Groups·KH·KW
// in im2col's order, zeros past the group's output channels.
type GroupedWeights struct {
	c, m, groups, kh, kw int
	w                    []float32
}

// GroupedNHWCFits reports whether GroupedNHWC runs the grouped
// convolution p: the table rows kernels are there (AVX-512, the SGEMM's
// panels of 32), p has more than one input channel a group, 8 to 32
// output channels a group and at most blockK products an output (one
// k-block, as the NCHW SGEMM's).
func GroupedNHWCFits(p Conv2D) bool {
	if rowsTabKernels[0][1] == nil || !pointwiseRowsFit() || p.Groups < 2 || p.C%p.Groups != 0 || p.M%p.Groups != 0 {
		return false
	}
	cg, mg := p.C/p.Groups, p.M/p.Groups
	return cg >= 2 && mg >= 8 && mg <= 32 && p.KH >= 1 && p.KW >= 1 && cg*p.KH*p.KW <= blockK
}

// PackGrouped packs the weights of the grouped convolution p (w in
// ONNX's layout, M × C/Groups × KH × KW) for GroupedNHWC.
func PackGrouped(p Conv2D, w []float32) (*GroupedWeights, error) {
	if err := p.checkWeights(w); err != nil {
		return nil, err
	}
	if !GroupedNHWCFits(p) {
		return nil, shapeErr("grouped: %d groups of %d → %d channels, %d×%d, do not fit GroupedNHWC", p.Groups, p.C, p.M, p.KH, p.KW)
	}
	mg, k := p.M/p.Groups, p.C/p.Groups*p.KH*p.KW
	gw := &GroupedWeights{c: p.C, m: p.M, groups: p.Groups, kh: p.KH, kw: p.KW, w: make([]float32, p.Groups*k*32)}
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

// GroupedNHWC computes the grouped convolution p of NHWC activations
// (in: N × H × W × C; y: N × OH × OW × M) with weights packed by
// PackGrouped and bias nil for none, each element the NCHW SGEMM's chain
// of multiply-adds (see above) whatever the thread count. act is
// ActNone, ActRelu or ActRelu6; epi (nil: none) then runs on each part
// of y as soon as it is final, on the thread that computed it.
func (x *Context) GroupedNHWC(p Conv2D, in []float32, pw *GroupedWeights, bias, y []float32, act Act, epi Epilogue) error {
	if err := p.check(in, nil, bias, y, true); err != nil {
		return err
	}
	if pw == nil || pw.c != p.C || pw.m != p.M || pw.groups != p.Groups || pw.kh != p.KH || pw.kw != p.KW || !GroupedNHWCFits(p) {
		return shapeErr("grouped: packed weights do not fit %+v", p)
	}
	relu := 0
	switch act {
	case ActNone:
	case ActRelu:
		relu = 1
	case ActRelu6:
		relu = 2
	default:
		return shapeErr("grouped: activation %d is not ActNone, ActRelu or ActRelu6", act)
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
		x.groupedChunk(&p, parts[i], parts[i+1], in, pw, bias, relu, y, s)
		if epi != nil {
			epi(parts[i]*p.M, (parts[i+1]-parts[i])*p.M)
		}
	})
	return nil
}

// groupedChunk computes GroupedNHWC's output pixels [lo, hi) image by
// image: the slab of the input rows they read, then each output row's
// pixels in tiles of at most 12.
func (x *Context) groupedChunk(p *Conv2D, lo, hi int, in []float32, pw *GroupedWeights, bias []float32, relu int, y []float32, s *scratch) {
	oh, ow := p.Out()
	cg, mg := p.C/p.Groups, p.M/p.Groups
	k := cg * p.KH * p.KW
	wp := p.W + p.PL + p.PR // slab row width in pixels
	// k's table: (channel, tap)'s byte offset in the slab from its
	// pixel's first tap and its B row's byte offset in the group panel.
	if len(s.taps) < 2*k {
		s.taps = make([]int, max(2*k, 2*maxDwNHWCTaps))
	}
	tt := s.taps
	for ci := range cg {
		for kh := range p.KH {
			for kw := range p.KW {
				kk := (ci*p.KH+kh)*p.KW + kw
				tt[2*kk], tt[2*kk+1] = 4*((kh*p.DH*wp+kw*p.DW)*p.C+ci), 4*32*kk
			}
		}
	}
	nv := (mg + 15) / 16
	mask := 1<<(mg-16*(nv-1)) - 1
	sx := p.SW * p.C
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
		for r := range nr {
			row := slab[r*wp*p.C : (r+1)*wp*p.C]
			ih := r0 + r
			if ih < 0 || ih >= p.H {
				clear(row)
				continue
			}
			clear(row[:p.PL*p.C])
			copy(row[p.PL*p.C:], src[ih*p.W*p.C:(ih+1)*p.W*p.C])
			clear(row[(p.PL+p.W)*p.C:])
		}
		for q < e {
			o, q0 := (q%(oh*ow))/ow, q%ow
			q1 := min(ow, q0+e-q)
			yr := y[(img*oh+o)*ow*p.M:]
			base := (o - o0) * p.SH * wp * p.C
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
					a := slab[base+a0*sx+g*cg:]
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
