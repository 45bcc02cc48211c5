package kernels

// ConvT2D describes a 2-D transposed convolution over NCHW float32
// tensors (a 1-D one has H = KH = 1): X is [N, C, H, W], the weights
// [C, M/Groups, KH, KW], the output [N, M, OH, OW] with OH and OW given
// (output_padding and output_shape are the caller's); PT and PL are the
// begin pads cropped from the full output.
type ConvT2D struct {
	N, C, H, W     int
	M, KH, KW      int
	SH, SW, DH, DW int
	PT, PL         int
	OH, OW         int
	Groups         int
}

func (p *ConvT2D) check(x, w, bias, y []float32) error {
	if p.N < 0 || p.C < 1 || p.H < 1 || p.W < 1 || p.M < 1 || p.KH < 1 || p.KW < 1 || p.SH < 1 || p.SW < 1 ||
		p.DH < 1 || p.DW < 1 || p.OH < 1 || p.OW < 1 || p.Groups < 1 || p.C%p.Groups != 0 || p.M%p.Groups != 0 {
		return shapeErr("conv transpose: invalid geometry %+v", *p)
	}
	switch {
	case len(x) != p.N*p.C*p.H*p.W:
		return shapeErr("conv transpose: X has %d elements, want %d", len(x), p.N*p.C*p.H*p.W)
	case len(w) != p.C*p.M/p.Groups*p.KH*p.KW:
		return shapeErr("conv transpose: W has %d elements, want %d", len(w), p.C*p.M/p.Groups*p.KH*p.KW)
	case bias != nil && len(bias) != p.M:
		return shapeErr("conv transpose: B has %d elements, want %d", len(bias), p.M)
	case len(y) != p.N*p.M*p.OH*p.OW:
		return shapeErr("conv transpose: Y has %d elements, want %d", len(y), p.N*p.M*p.OH*p.OW)
	}
	return nil
}

// ConvTranspose2D computes y = conv_transpose(x, w) + bias (bias may be
// nil): per image and group one SGEMM, cols = Wᵀ·X ([M/G·KH·KW, H·W]),
// then col2im adds every column into the output positions it reaches.
func (x *Context) ConvTranspose2D(p ConvT2D, in, w, bias, y []float32) error {
	if err := p.check(in, w, bias, y); err != nil {
		return err
	}
	cg, mg := p.C/p.Groups, p.M/p.Groups
	kk, hw, ohw := p.KH*p.KW, p.H*p.W, p.OH*p.OW
	s := x.get()
	defer x.put(s)
	s.cols = grow(s.cols, mg*kk*hw)
	cols := s.cols
	for n := 0; n < p.N; n++ {
		for g := 0; g < p.Groups; g++ {
			a := w[g*cg*mg*kk : (g+1)*cg*mg*kk]
			b := in[(n*p.C+g*cg)*hw : (n*p.C+(g+1)*cg)*hw]
			if err := x.Sgemm(true, false, mg*kk, hw, cg, 1, a, mg*kk, b, hw, 0, cols, hw); err != nil {
				return err
			}
			// Each output plane is its own: split over the threads.
			x.Range(mg, ohw, func(lo, hi int) {
				for oc := lo; oc < hi; oc++ {
					co := g*mg + oc
					yp := y[(n*p.M+co)*ohw : (n*p.M+co+1)*ohw]
					v := float32(0)
					if bias != nil {
						v = bias[co]
					}
					if up2(&p) {
						col2im2x2(&p, cols, oc, yp, v)
					} else {
						col2im(&p, cols, oc, yp, v)
					}
				}
			})
		}
	}
	return nil
}

// col2im sets output plane yp of output channel oc (of its group) to v
// plus every column of cols (rows (oc·KH+kh)·KW+kw, H·W columns) added
// into the output positions it reaches, tap by tap.
func col2im(p *ConvT2D, cols []float32, oc int, yp []float32, v float32) {
	hw := p.H * p.W
	for i := range yp {
		yp[i] = v
	}
	for kh := 0; kh < p.KH; kh++ {
		for kw := 0; kw < p.KW; kw++ {
			row := cols[((oc*p.KH+kh)*p.KW+kw)*hw:][:hw]
			off := kw*p.DW - p.PL
			// iw in [lo, hi) lands inside: 0 ≤ iw·SW + off < OW.
			lo := 0
			if off < 0 {
				lo = (-off + p.SW - 1) / p.SW
			}
			hi := p.W
			if lim := (p.OW - 1 - off) / p.SW; p.OW-1-off < 0 {
				hi = 0
			} else if lim+1 < hi {
				hi = lim + 1
			}
			if lo >= hi {
				continue
			}
			for ih := 0; ih < p.H; ih++ {
				oh := ih*p.SH + kh*p.DH - p.PT
				if oh < 0 || oh >= p.OH {
					continue
				}
				src := row[ih*p.W+lo : ih*p.W+hi]
				dst := yp[oh*p.OW:][:p.OW]
				if p.SW == 1 {
					axpy(1, src, dst[lo+off:hi+off])
					continue
				}
				for i, sv := range src {
					dst[(lo+i)*p.SW+off] += sv
				}
			}
		}
	}
}

// up2 reports whether a transposed convolution is the U-Nets' 2×2
// stride-2 up-sampling: every output element is reached by exactly one
// tap (no padding, dilation or output padding).
func up2(p *ConvT2D) bool {
	return p.KH == 2 && p.KW == 2 && p.SH == 2 && p.SW == 2 && p.DH == 1 && p.DW == 1 &&
		p.PT == 0 && p.PL == 0 && p.OH == 2*p.H && p.OW == 2*p.W
}

// col2im2x2 is col2im for up2 geometries: output row 2·ih + kh
// interleaves rows (kh, 0) and (kh, 1) of the columns, each element v plus
// its one value, written once (col2im's fill and strided additions
// compute the same v + value).
func col2im2x2(p *ConvT2D, cols []float32, oc int, yp []float32, v float32) {
	w, hw := p.W, p.H*p.W
	for ih := 0; ih < p.H; ih++ {
		for kh := 0; kh < 2; kh++ {
			r0 := cols[((oc*2+kh)*2)*hw+ih*w:][:w]
			r1 := cols[((oc*2+kh)*2+1)*hw+ih*w:][:w]
			dst := yp[(2*ih+kh)*p.OW:][:2*w]
			for iw, a := range r0 {
				d := dst[2*iw : 2*iw+2 : 2*iw+2]
				d[0] = v + a
				d[1] = v + r1[iw]
			}
		}
	}
}
