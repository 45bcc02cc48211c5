package kernels

import "math"

// Depthwise convolutions on NHWC activations: each pixel's channels are
// contiguous, so one SIMD vector holds 16 channels of one pixel and a tap
// is one multiply-add of the pixel's input vector by the tap's weights.
// Taps that fall outside the input are left out of the sum (no padded
// copy of the input); each output row splits into the pixels whose taps
// are all inside (one kernel call with one tap table) and the few at its
// left and right edges (one call each). Work splits by output pixels as
// PointwiseNHWC's does, so a thread reads its own pixels' inputs and the
// halo rows around them.

// dwNHWCKernel is dwNHWCAVX512's signature (the generator's dwNHWC).
type dwNHWCKernel func(n, blocks int, x *float32, sx int, taps *int, ntaps int, w *float32, bias *float32, lo, hi float32, y *float32, sy int, mask int)

// dwNHWCAsm is the AVX-512 kernel (nil: the Go loop); set during package
// initialization and read-only afterwards.
var dwNHWCAsm dwNHWCKernel

// dwNHWCTapWork is the work estimate (see minWork) of one tap of one
// output element: 32–38 ps a tap on one thread (88 channels at 28², 3×3;
// 16 channels at 112², stride 2; BenchmarkDepthwiseLayouts), about three
// of the SGEMM's multiply-adds.
const dwNHWCTapWork = 3

// maxDwNHWCTaps bounds the taps of DepthwiseNHWC (a tap table lives on
// the stack).
const maxDwNHWCTaps = 64

// DepthwiseWeights are a depthwise convolution's weights packed for
// DepthwiseNHWC: tap t's weights for every channel at w[t·cpad:], cpad
// the channels rounded up to 16 (zeros past the last).
type DepthwiseWeights struct {
	c, cpad, kh, kw int
	w               []float32
	zero            []float32 // the bias when none is given
}

// PackDepthwise packs the weights of the depthwise convolution p (one
// input channel a group, one output channel a channel: Groups == C == M;
// w in ONNX's layout, C × 1 × KH × KW).
func PackDepthwise(p Conv2D, w []float32) (*DepthwiseWeights, error) {
	if err := p.checkWeights(w); err != nil {
		return nil, err
	}
	if p.Groups != p.C || p.M != p.C {
		return nil, shapeErr("depthwise: %d groups of %d → %d channels is not depthwise", p.Groups, p.C, p.M)
	}
	taps := p.KH * p.KW
	if taps > maxDwNHWCTaps {
		return nil, shapeErr("depthwise: %d×%d taps, at most %d", p.KH, p.KW, maxDwNHWCTaps)
	}
	cpad := (p.C + 15) / 16 * 16
	d := &DepthwiseWeights{c: p.C, cpad: cpad, kh: p.KH, kw: p.KW, w: make([]float32, taps*cpad), zero: make([]float32, cpad)}
	for c := 0; c < p.C; c++ {
		for t := 0; t < taps; t++ {
			d.w[t*cpad+c] = w[c*taps+t]
		}
	}
	return d, nil
}

// DepthwiseNHWC computes the depthwise convolution p of NHWC activations
// (in: N × H × W × C; y: N × OH × OW × C) with weights packed by
// PackDepthwise and bias nil for none:
//
//	y[o, q, c] = act(bias[c] + Σ_{kh, kw} w[c, kh, kw]·in[o·SH − PT + kh·DH, q·SW − PL + kw·DW, c])
//
// over the taps inside the input, each element one chain of multiply-adds
// in tap order (kh, then kw) whatever the thread count. act is ActNone,
// ActRelu or ActRelu6; epi (nil: none) then runs on each part of y as
// soon as it is final, on the thread that computed it.
func (x *Context) DepthwiseNHWC(p Conv2D, in []float32, pw *DepthwiseWeights, bias, y []float32, act Act, epi Epilogue) error {
	if err := p.check(in, nil, bias, y, true); err != nil {
		return err
	}
	if pw == nil || pw.c != p.C || pw.kh != p.KH || pw.kw != p.KW || p.Groups != p.C || p.M != p.C {
		return shapeErr("depthwise: packed weights do not fit %+v", p)
	}
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	switch act {
	case ActNone:
	case ActRelu:
		lo = 0
	case ActRelu6:
		lo, hi = 0, 6
	default:
		return shapeErr("depthwise: activation %d is not ActNone, ActRelu or ActRelu6", act)
	}
	if bias == nil {
		bias = pw.zero
	}
	oh, ow := p.Out()
	// Split by output pixels, in runs of 12 as PointwiseNHWC splits
	// its pixels: a chain of steps on the same pixels gives each thread
	// the same ones. Its chunks are row-independent, as Range's are
	// (minRangeWork), and at most one a thread, so that each thread
	// (the caller the first chunk, the helper the last) keeps its
	// pixels: on two threads mnasnet0_5, mobilenet_v2 and
	// shufflenet_v2 ran 1–7 % faster than with minWork and up to two
	// chunks a thread (docs/speed.md, "Eighth wave, seventeenth
	// session").
	pix := p.N * oh * ow
	const align = 12
	c, _ := x.chunksMin(pix*p.C*p.KH*p.KW*dwNHWCTapWork, (pix+align-1)/align, minRangeWork)
	c = min(c, x.cut())
	parts := split(pix, c, align)
	x.parallel(len(parts)-1, func(i int) {
		s := x.get()
		defer x.put(s)
		if len(s.taps) < 2*maxDwNHWCTaps {
			s.taps = make([]int, 2*maxDwNHWCTaps)
		}
		for q := parts[i]; q < parts[i+1]; {
			// The pixels of one output row from q on.
			r := q / ow
			n, o, q0 := r/oh, r%oh, q%ow
			q1 := min(ow, q0+parts[i+1]-q)
			dwNHWCRow(&p, o, q0, q1, in[n*p.H*p.W*p.C:(n+1)*p.H*p.W*p.C], pw, bias, lo, hi, y[r*ow*p.C:(r+1)*ow*p.C], s.taps)
			q += q1 - q0
		}
		if epi != nil {
			epi(parts[i]*p.C, (parts[i+1]-parts[i])*p.C)
		}
	})
	return nil
}

// dwNHWCRow computes the pixels [q0, q1) of output row o (into y, the
// row) of one image x: those left of the interior, the interior run,
// those right of it, each run with the table of its taps inside the
// input.
func dwNHWCRow(p *Conv2D, o, q0, q1 int, x []float32, pw *DepthwiseWeights, bias []float32, lo, hi float32, y []float32, tt []int) {
	ilo, ihi := convInterior(p, q0, q1)
	for q := q0; q < ilo; q++ {
		dwNHWCRun(p, o, q, 1, x, pw, bias, lo, hi, y, tt)
	}
	if ihi > ilo {
		dwNHWCRun(p, o, ilo, ihi-ilo, x, pw, bias, lo, hi, y, tt)
	}
	for q := max(ihi, ilo); q < q1; q++ {
		dwNHWCRun(p, o, q, 1, x, pw, bias, lo, hi, y, tt)
	}
}

// convInterior returns the output columns [ilo, ihi) of [q0, q1) whose taps
// are all inside the input's columns (q·SW − PL ≥ 0 and q·SW − PL +
// (KW−1)·DW ≤ W − 1); the columns left of ilo and right of ihi are the
// edges.
func convInterior(p *Conv2D, q0, q1 int) (ilo, ihi int) {
	ilo = (p.PL + p.SW - 1) / p.SW
	ihi = ilo
	if last := p.W - 1 - (p.KW-1)*p.DW + p.PL; last >= 0 {
		ihi = max(last/p.SW+1, ilo)
	}
	return min(max(ilo, q0), q1), min(max(ihi, q0), q1)
}

// dwNHWCRun computes the n pixels of output row o from column q0 on,
// whose taps inside the input are the same (those of pixel q0): its tap
// table holds, in tap order, each such tap's input offset for pixel q0
// and its weights' offset (tt: room for maxDwNHWCTaps taps).
func dwNHWCRun(p *Conv2D, o, q0, n int, x []float32, pw *DepthwiseWeights, bias []float32, lo, hi float32, y []float32, tt []int) {
	nt := 0
	for kh := 0; kh < p.KH; kh++ {
		ih := o*p.SH - p.PT + kh*p.DH
		if ih < 0 || ih >= p.H {
			continue
		}
		for kw := 0; kw < p.KW; kw++ {
			iw := q0*p.SW - p.PL + kw*p.DW
			if iw < 0 || iw >= p.W {
				continue
			}
			tt[2*nt], tt[2*nt+1] = (ih*p.W+iw)*p.C, (kh*p.KW+kw)*pw.cpad
			nt++
		}
	}
	sx, sy := p.SW*p.C, p.C
	yr := y[q0*sy : (q0+n)*sy]
	if nt == 0 {
		// No tap inside (padding wider than the kernel): the bias.
		for j := 0; j < n; j++ {
			for c := 0; c < p.C; c++ {
				yr[j*sy+c] = min(max(bias[c], lo), hi)
			}
		}
		return
	}
	if dwNHWCAsm != nil {
		// Every read lies in x: the last pixel's last tap's last channel.
		_ = x[(n-1)*sx+tt[2*(nt-1)]+p.C-1]
		blocks := (p.C + 15) / 16
		mask := 1<<(p.C-16*(blocks-1)) - 1
		dwNHWCAsm(n, blocks, &x[0], sx, &tt[0], nt, &pw.w[0], &bias[0], lo, hi, &yr[0], sy, mask)
		return
	}
	for j := 0; j < n; j++ {
		for c := 0; c < p.C; c++ {
			acc := bias[c]
			for t := 0; t < nt; t++ {
				acc += pw.w[tt[2*t+1]+c] * x[j*sx+tt[2*t]+c]
			}
			yr[j*sy+c] = min(max(acc, lo), hi)
		}
	}
}
