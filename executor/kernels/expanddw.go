package kernels

import "slices"

// An expansion and the depthwise convolution after it in one parallel
// call. A mobile net's inverted-residual block is a 1×1 convolution that
// widens the channels (the expansion), then a depthwise convolution on
// each of them, then a 1×1 projection. The expansion's row chunks are
// its output channels, which are the depthwise convolution's channels:
// the block of channels a thread expands is the block it then convolves.
// Run as two steps, the threads meet at the end of the expansion (a
// fork-join and the imbalance of its chunks) and the expanded tensor, up
// to 4.8 MB, goes to memory and back between the steps. Run here, each
// chunk expands a block of channels and convolves it at once, while the
// block is in its thread's cache, and the threads meet once.
//
// Every element is computed by the same chain of operations as in the
// two steps: a row block of the expansion is the serial SGEMM of those
// rows (the same k-blocks, bias and activation, the edge kernels' chains
// equal to the full tile's), and a depthwise block is one of the
// depthwise kernels' own units (a plane, or a block of L channels of
// depthwiseSmall, aligned as there). So the bits are those of the two
// steps, for any thread count (TestExpandDepthwise).

// fuseBlock is the bytes of the expanded tensor a block of Conv2DAfter
// holds at most (in L2 with the block's input and output) unless a
// block of its smallest size is larger.
const fuseBlock = 256 << 10

// Pending is a direct (1×1) convolution whose computing is left to the
// depthwise convolution that reads its output (Conv2DAfter).
type Pending struct {
	p       Conv2D
	in, w   []float32
	pw      []*Packed
	bias, y []float32
	act     Act
	epi     Epilogue
	set     bool
}

// Defer returns the convolution Conv2DPackedAct(p, in, w, pw, bias, y,
// act, epi) as a Pending when Conv2DAfter can run it inside a depthwise
// convolution's chunks: a direct 1×1 convolution of one image and one
// group that at least doubles the channels (an expansion, whose output
// is the larger tensor that the blocks keep in cache; ShuffleNet's
// 1×1 convolutions of as many channels as they read, cut by columns
// when on their own, were not faster in blocks) and whose SGEMM is not
// cut in halves of k; false when it must run now.
func (x *Context) Defer(p Conv2D, in, w []float32, pw []*Packed, bias, y []float32, act Act, epi Epilogue) (Pending, bool) {
	direct := p.KH == 1 && p.KW == 1 && p.SH == 1 && p.SW == 1 && p.PT == 0 && p.PL == 0 && p.PB == 0 && p.PR == 0
	if !direct || p.N != 1 || p.Groups != 1 || p.C < 1 || p.M < 2*p.C || p.check(in, w, bias, y, pw != nil) != nil {
		return Pending{}, false
	}
	if pw != nil && (len(pw) != 1 || !pw[0].isA || pw[0].fits(best, true, p.M, p.C) != nil) {
		return Pending{}, false
	}
	if splitsK(p.M, p.H*p.W, p.C) {
		return Pending{}, false
	}
	return Pending{p: p, in: in, w: w, pw: pw, bias: bias, y: y, act: act, epi: epi, set: true}, true
}

// Set reports whether d holds a convolution.
func (d *Pending) Set() bool { return d.set }

// Run computes the pending convolution on its own.
func (x *Context) Run(d *Pending) error {
	return x.Conv2DPackedAct(d.p, d.in, d.w, d.pw, d.bias, d.y, d.act, d.epi)
}

// Feeds reports whether Conv2DAfter runs d inside p, a convolution of
// input in: p is a depthwise convolution (one output channel per input
// channel) of d's whole output.
func (d *Pending) Feeds(p Conv2D, in []float32) bool {
	e := &d.p
	return d.set && p.N == 1 && p.C == e.M && p.H == e.H && p.W == e.W && p.Groups == p.C && p.M == p.C &&
		len(in) == len(d.y) && len(in) > 0 && &in[0] == &d.y[0]
}

// Conv2DAfter computes d and then the depthwise convolution p of its
// output in, as Conv2DPackedClip(p, in, w, nil, bias, y, clampLo,
// clampHi, epi) would, in one parallel call over blocks of channels (see
// above); one after the other when the blocks cannot keep the threads
// even (fuseParts). d.Feeds(p, in) must hold.
func (x *Context) Conv2DAfter(d *Pending, p Conv2D, in, w, bias, y []float32, clampLo, clampHi float32, epi Epilogue) error {
	if !d.Feeds(p, in) {
		return shapeErr("conv: the depthwise convolution does not read the pending convolution's output")
	}
	if err := p.check(in, w, bias, y, false); err != nil {
		return err
	}
	e := &d.p
	k, hw := e.C, e.H*e.W
	g := newDwGeom(&p)
	npix := g.oh * g.ow
	taps := p.KH * p.KW
	mk := best
	// Blocks of whole tiles of the expansion's micro-kernel (mr rows:
	// the packed weights' panels), and for depthwiseSmall of whole
	// vectors of 8 channels (its blocks of 16, then one of 8: any
	// channels compute the same bits, see dwSmallRun.channels).
	align := mk.mr
	small := dwSmallOK(&p, g)
	if small {
		align = lcm(mk.mr, 8)
	}
	// (Storing an element of C costs about 8 multiply-adds' time, as in
	// gemmSplit.)
	chWork := hw*(k+8) + npix*taps*tapWork
	pen := 0
	if small && dwPix16 != nil {
		// A block of 8 channels runs at half the lanes of the blocks of
		// 16: as 8 channels' depthwise work more.
		pen = 8 * npix * taps * tapWork
	}
	parts := fuseParts(p.M, align, x.cut(), chWork, pen)
	if parts == nil {
		// Too few blocks to keep the threads even: each on its own.
		if err := x.Run(d); err != nil {
			return err
		}
		x.depthwise(&p, in, w, bias, y, clampLo, clampHi, epi)
		return nil
	}
	sub := fuseSub(p.M, align, hw, small && dwPix16 != nil)
	var q *dwSmall
	if small {
		// (A block of 8 within the image when a piece is not whole
		// blocks of 16.)
		q = x.newDwSmall(&p, g, fuseEights(parts, sub))
	}
	oa := operand{s: d.w, ld: k}
	if d.pw != nil {
		oa.packed = d.pw[0]
	}
	ob := operand{s: d.in, ld: hw}
	fin := &finish{bias: d.bias, relu: d.act == ActRelu || d.act == ActRelu6, six: d.act == ActRelu6, epi: d.epi}
	x.parallel(len(parts)-1, func(i int) {
		s := x.get()
		defer x.put(s)
		var r *dwSmallRun
		var ch *dwChan
		if q != nil {
			r = q.start(s)
		} else {
			ch = newDwChan(&p, g, s)
		}
		for c0 := parts[i]; c0 < parts[i+1]; c0 += sub {
			c1 := min(c0+sub, parts[i+1])
			fin.run(d.y, hw, c0, c1, 0, hw, 0, func(beta float32, st store) {
				x.serial(mk, c1-c0, hw, k, 1, oa.rowsFrom(c0), ob, beta, d.y[c0*hw:], hw, st)
			})
			if q != nil {
				r.channels(0, c0, c1, in, w, bias, y, clampLo, clampHi)
				if epi != nil {
					epi(c0*npix, (c1-c0)*npix)
				}
				continue
			}
			for m := c0; m < c1; m++ {
				ch.plane(in, w, bias, y, m, clampLo, clampHi)
				if epi != nil {
					epi(m*npix, npix)
				}
			}
		}
	})
	return nil
}

// fuseParts returns the channel ranges of Conv2DAfter's chunks for m
// channels on t threads (boundaries, multiples of align but the last):
// one range on one thread or when the work (chWork a channel) is too
// small to split (as chunksMin); else, of the counts from chunksPerThread
// chunks a thread down to one, the one whose chunks the threads finish
// soonest taking them in turn (the largest within 1/16), a chunk that is
// not whole blocks of 16 channels counting pen more (fuseSpan); nil when
// even that leaves a thread 1/8 over an even share (36 channels on two
// threads in blocks of 24: 24 + 12). The bits do not depend on it.
func fuseParts(m, align, t, chWork, pen int) []int {
	units := (m + align - 1) / align
	total := m * chWork
	if t <= 1 || units < 2 || total < 2*minRangeWork {
		return []int{0, m}
	}
	var best []int
	bestSpan := 0
	for c := min(units, chunksPerThread*t, total/minRangeWork); c >= min(t, units); c-- {
		parts := split(m, c, align)
		span := fuseSpan(parts, t, chWork, pen)
		if best == nil || span < bestSpan-bestSpan/16 {
			best, bestSpan = parts, span
		}
	}
	if best == nil || 8*bestSpan*t > 9*total {
		return nil
	}
	return best
}

// fuseSpan is the work of the busiest of t threads taking the chunks of
// parts in turn, each as soon as it is free: a chunk's channels' chWork,
// and pen more unless it is whole blocks of 16 channels.
func fuseSpan(parts []int, t, chWork, pen int) int {
	free := make([]int, t)
	for i := 0; i+1 < len(parts); i++ {
		j := 0
		for q := range free {
			if free[q] < free[j] {
				j = q
			}
		}
		n := parts[i+1] - parts[i]
		free[j] += n * chWork
		if n%16 != 0 {
			free[j] += pen
		}
	}
	return slices.Max(free)
}

// fuseSub is the channels a chunk of Conv2DAfter expands and convolves at
// a time: as many as fit in fuseBlock (in L2 with their input and
// output; fewer, shorter products lose the micro-kernel's speed: each
// reads B again and packs its tail panel of columns), at least align;
// with whole16, in whole blocks of 16 channels where that fits.
func fuseSub(m, align, hw int, whole16 bool) int {
	fit := min(fuseBlock/4/hw, m)
	if a := lcm(align, 16); whole16 && fit >= a {
		return fit / a * a
	}
	return max(align, fit/align*align)
}

// fuseEights reports whether a piece of the chunks in parts (pieces of
// at most sub channels) is not whole blocks of 16 channels.
func fuseEights(parts []int, sub int) bool {
	for i := 0; i+1 < len(parts); i++ {
		for c0 := parts[i]; c0 < parts[i+1]; c0 += sub {
			if (min(c0+sub, parts[i+1])-c0)%16 != 0 {
				return true
			}
		}
	}
	return false
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
