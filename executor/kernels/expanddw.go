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
// even (fuseBlocks). d.Feeds(p, in) must hold.
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
	bc := fuseBlocks(p.M, align, hw, x.cut())
	if bc == 0 {
		// Too few blocks to keep the threads even: each on its own.
		if err := x.Run(d); err != nil {
			return err
		}
		x.depthwise(&p, in, w, bias, y, clampLo, clampHi, epi)
		return nil
	}
	var q *dwSmall
	if small {
		// (A block of 8 within the image when blocks of 16 do not
		// fill a block.)
		q = newDwSmall(&p, g, bc%16 != 0)
	}
	units := (p.M + bc - 1) / bc
	// (Storing an element of C costs about 8 multiply-adds' time, as in
	// gemmSplit.)
	work := bc*hw*(k+8) + bc*npix*taps*tapWork
	oa := operand{s: d.w, ld: k}
	if d.pw != nil {
		oa.packed = d.pw[0]
	}
	ob := operand{s: d.in, ld: hw}
	fin := &finish{bias: d.bias, relu: d.act == ActRelu || d.act == ActRelu6, six: d.act == ActRelu6, epi: d.epi}
	x.rangeWork(units, work, func(lo, hi int) {
		s := x.get()
		defer x.put(s)
		var r *dwSmallRun
		var ch *dwChan
		if q != nil {
			r = q.start(s)
		} else {
			ch = newDwChan(&p, g, s)
		}
		for u := lo; u < hi; u++ {
			c0, c1 := u*bc, min((u+1)*bc, p.M)
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

// fuseBlocks returns the channels of Conv2DAfter's blocks for m
// channels of hw pixels on t threads: a multiple of align, as many as fit
// in fuseBlock (fewer, shorter products lose the micro-kernel's speed:
// each block reads B again and packs its tail panel of columns) in
// enough blocks for chunksPerThread chunks a thread that the threads
// finish within 1/8 of each other (blockSpan); 0 when blocks of align
// do not (36 channels on two threads in blocks of 24: 24 + 12). The bits
// do not depend on it.
func fuseBlocks(m, align, hw, t int) int {
	want := 1
	if t > 1 {
		want = chunksPerThread * t
	}
	for b := max(align, min(fuseBlock/4/hw, m)/align*align); b >= align; b -= align {
		if (m+b-1)/b < want && b > align {
			continue
		}
		if t > 1 && 8*blockSpan(m, b, t)*t > 9*m {
			continue
		}
		return b
	}
	return 0
}

// blockSpan is the channels the busiest of t threads computes when m
// channels in blocks of b are cut into chunks as rangeWork cuts them and
// each thread takes the next chunk as soon as it is free.
func blockSpan(m, b, t int) int {
	u := (m + b - 1) / b
	c, _ := balance(u, min(u, chunksPerThread*t), t)
	parts := split(u, c, 1)
	free := make([]int, t)
	for i := 0; i+1 < len(parts); i++ {
		j := 0
		for k := range free {
			if free[k] < free[j] {
				j = k
			}
		}
		free[j] += min(parts[i+1]*b, m) - parts[i]*b
	}
	return slices.Max(free)
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
