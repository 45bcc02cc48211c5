package kernels

import "slices"

// Work splitting of one SGEMM over the Context's threads.
//
// C is cut into chunks of whole columns (when n ≥ m) or whole rows, with
// inner bounds on the micro-kernel's tile size; each chunk is the serial
// blocked SGEMM of its part of C, so every element of C is computed by
// the same chain of multiply-adds whatever the chunks are. The operand
// every chunk reads in full (A for column chunks, B for row chunks) is
// packed once, shared, by all threads together, instead of by each chunk
// (packing B of a convolution — its im2col — costs as much as the
// multiply when the output has few channels or few pixels).

// maxShared bounds an operand packed once for all chunks (elements,
// 32 MiB); a larger one is packed by each chunk.
const maxShared = 1 << 23

// packTask is one k-block and one range of rows (A) or columns (B) of a
// shared packing.
type packTask struct{ p0, kc, r0, nr int }

// Epilogue finishes a kernel's output in place: it is called once for
// each segment [off, off+n) of the output (offsets in the output tensor)
// as soon as the segment's values are final, on whichever thread computed
// them, so that an activation or a residual Add runs on values still in
// that thread's cache and in the kernel's own parallel call. Segments do
// not overlap and together cover the output; an Epilogue must only
// compute element by element (its results may not depend on how the
// output is cut into segments).
type Epilogue func(off, n int)

// finish is what a GEMM does around the computing of a part of C: C's
// rows start as bias (one value per row, added to each element's product
// as the micro-kernel stores it in the first k-block: the same addition
// as filling C with the bias and adding the product to it), relu clamps
// each element as the micro-kernel stores it in the last k-block (as a
// Relu epilogue would), and epi runs on each finished part. base is the
// offset of c[0] in epi's output.
type finish struct {
	bias []float32
	relu bool
	six  bool // with relu: ReLU6 (min(max(v, 0), 6), as Clip(0, 6))
	epi  Epilogue
	base int
}

// store is what the micro-kernel does to the tiles of one serial GEMM
// besides the product (see finish): bias holds the value of each row of
// its C (nil: none; C's contents are then ignored as with beta 0).
type store struct {
	bias []float32
	relu bool
	six  bool // with relu: ReLU6
}

// act is the micro-kernels' relu argument for st: 0 none, 1 ReLU, 2
// ReLU6.
func (st store) act() int {
	switch {
	case st.relu && st.six:
		return 2
	case st.relu:
		return 1
	}
	return 0
}

// run computes rows [i0, i1) × columns [j0, j1) of C (compute, with the
// beta and store it must use), then runs the epilogue on them.
func (f *finish) run(c []float32, ldc, i0, i1, j0, j1 int, beta float32, compute func(beta float32, st store)) {
	var st store
	if f != nil {
		if f.bias != nil {
			st.bias, beta = f.bias[i0:i1], 0
		}
		st.relu, st.six = f.relu, f.relu && f.six
	}
	compute(beta, st)
	if f == nil || f.epi == nil {
		return
	}
	if j0 == 0 && j1 == ldc {
		f.epi(f.base+i0*ldc, (i1-i0)*ldc)
		return
	}
	for r := i0; r < i1; r++ {
		f.epi(f.base+r*ldc+j0, j1-j0)
	}
}

// gemm computes C = op(A)·op(B) + beta·C (alpha is applied while packing
// A) on the Context's threads, with fin (nil: none) around each part.
func (x *Context) gemm(mk microKernel, m, n, k int, alpha float32, oa, ob operand, beta float32, c []float32, ldc int, fin *finish) {
	if splitsK(m, n, k) {
		x.gemmSplitK(mk, m, n, k, alpha, oa, ob, beta, c, ldc, fin)
		return
	}
	byCols, nc := x.gemmSplit(mk, m, n, k, ob.streamRows(mk, k))
	if nc <= 1 {
		fin.run(c, ldc, 0, m, 0, n, beta, func(beta float32, st store) {
			x.serial(mk, m, n, k, alpha, oa, ob, beta, c, ldc, st)
		})
		return
	}
	s := x.get()
	defer x.put(s)
	if byCols {
		if oa.packed == nil {
			if pk := x.packShared(mk, true, m, k, alpha, oa, s); pk != nil {
				oa, alpha = operand{packed: pk}, 1
			} else {
				nc = min(nc, x.cut())
			}
		}
		parts := split(n, nc, mk.nr)
		x.parallel(len(parts)-1, func(i int) {
			j0, j1 := parts[i], parts[i+1]
			fin.run(c, ldc, 0, m, j0, j1, beta, func(beta float32, st store) {
				x.serial(mk, m, j1-j0, k, alpha, oa, ob.colsFrom(j0), beta, c[j0:], ldc, st)
			})
		})
		return
	}
	if ob.packed == nil && !ob.direct(k, (m+mk.mr-1)/mk.mr, mk.nr) && !ob.inPlace(mk) {
		if pk := x.packShared(mk, false, n, k, 1, ob, s); pk != nil {
			ob = operand{packed: pk}
		} else {
			nc = min(nc, x.cut())
		}
	}
	parts := split(m, nc, mk.mr)
	x.parallel(len(parts)-1, func(i int) {
		i0, i1 := parts[i], parts[i+1]
		fin.run(c, ldc, i0, i1, 0, n, beta, func(beta float32, st store) {
			x.serial(mk, i1-i0, n, k, alpha, oa.rowsFrom(i0), ob, beta, c[i0*ldc:], ldc, st)
		})
	})
}

// splitsK reports whether gemm computes an m×n×k product in two halves
// of k (gemmSplitK) rather than in row or column chunks: k spans more
// than one k-block and is at least three times C's shorter side (a
// projection, a bottleneck, a GEMV), and the product is large enough for
// two parallel calls. The test reads the shapes alone, symmetric in m and
// n, so a product and its transpose (a convolution's implicit and
// transposed forms) take the same plan on any thread count, and so the
// same bits.
//
// Why: the step before such a product usually wrote B (the larger
// operand) cut by channels, its rows: a depthwise convolution, a Concat,
// an element-wise step. Row and column chunks each read half of B from
// the other core's cache (about 5 GB/s here); a half of k is the half
// of B the same core wrote (the caller claims the first chunk of each
// call, the helper the last), and only C's halves cross in the fold.
// With m the shorter side, the halves move m·n elements between the
// cores against k·n/2: a gain from k > 2m. But where the step before was
// a product cut by columns (pixels), the column chunks move nothing and
// the halves lose; so they are taken from k ≥ 3m only, where the gain is
// large when B was cut by channels. DenseNet-121's bottlenecks (reading
// a BatchNorm+ReLU step's output) scaled 1.3–1.4 on two threads by rows
// or columns; with the halves the model runs 1.85–1.93× against
// 1.63–1.67 (docs/speed.md "Eighth wave, seventh session", "eighth
// session"). SqueezeNet 1.0's expand 3×3 convolutions (k = 2.25·m, their
// input written by the squeeze product by columns) lost with them: the
// model ran 1.66× on two threads with a margin of 2, 1.74× with 3
// (docs/speed.md "Eighth wave, ninth session").
func splitsK(m, n, k int) bool {
	return k > blockK && 3*min(m, n) <= k && m*n*k >= 4*minWork
}

// gemmSplitK computes C in two halves of k (whole k-blocks each, as
// serial would compute them): the first into C (with beta or the bias),
// the second into a scratch matrix T; then C = C + T, the ReLU and the
// epilogue by ranges of C (of its elements when its rows are contiguous,
// else of its columns: every element is folded alone, so any cut gives
// the same bits). The plan is the same for every thread count (one
// thread runs the halves in turn), so the bits are.
func (x *Context) gemmSplitK(mk microKernel, m, n, k int, alpha float32, oa, ob operand, beta float32, c []float32, ldc int, fin *finish) {
	kb := kBlock(k)
	nb := (k + kb - 1) / kb
	if nb == 2 && x.cut() == 1 {
		// The second half is one k-block, whose sums serial adds to C
		// as the fold would: the same bits without the scratch pass.
		fin.run(c, ldc, 0, m, 0, n, beta, func(beta float32, st store) {
			x.serial(mk, m, n, k, alpha, oa, ob, beta, c, ldc, st)
		})
		return
	}
	kh := (nb + 1) / 2 * kb
	s := x.get()
	defer x.put(s)
	s.kpart = grow(s.kpart, m*n)
	t := s.kpart
	var st store
	if fin != nil && fin.bias != nil {
		st.bias, beta = fin.bias, 0
	}
	// Each half in column chunks when more than two threads share it.
	cc := split(n, max(1, x.cut()/2), mk.nr)
	nc := len(cc) - 1
	x.parallel(2*nc, func(i int) {
		j0, j1 := cc[i%nc], cc[i%nc+1]
		if i < nc {
			x.serialK(mk, m, j1-j0, k, 0, kh, alpha, oa, ob.colsFrom(j0), beta, c[j0:], ldc, st)
			return
		}
		x.serialK(mk, m, j1-j0, k, kh, k, alpha, oa, ob.colsFrom(j0), 0, t[j0:], n, store{})
	})
	parts := max(1, min(x.cut(), m*n*elemWork/minWork))
	if ldc == n {
		// C is one run of m·n elements: the fold, ReLU and epilogue of
		// each range of it, cut at multiples of 16 floats. One call per
		// range, not per row of n (49 floats at 7×7), and each thread
		// folds whole rows (channels) of C but at the cuts.
		var st store
		if fin != nil {
			st.relu, st.six = fin.relu, fin.relu && fin.six
		}
		act := st.act()
		e := split(m*n, parts, 16)
		x.parallel(len(e)-1, func(q int) {
			seg := c[e[q]:e[q+1]]
			fold(seg, t[e[q]:e[q+1]], act)
			if fin != nil && fin.epi != nil {
				fin.epi(fin.base+e[q], len(seg))
			}
		})
		return
	}
	// C's rows are ldc apart: the fold, ReLU and epilogue of each column
	// range through fin.run (its store carries the activation; bias and
	// beta are in C).
	cols := split(n, parts, 16)
	x.parallel(len(cols)-1, func(q int) {
		j0, j1 := cols[q], cols[q+1]
		fin.run(c, ldc, 0, m, j0, j1, 0, func(_ float32, st store) {
			act := st.act()
			for r := 0; r < m; r++ {
				fold(c[r*ldc+j0:r*ldc+j1], t[r*n+j0:r*n+j1], act)
			}
		})
	})
}

// fold sets c = c + t (1·t is exact: one rounding), then applies the
// activation act (0 none, 1 ReLU, 2 ReLU6) to c.
func fold(c, t []float32, act int) {
	axpy(1, t, c)
	if act == 1 {
		relu(c, c)
	} else {
		actGeneric(c, act)
	}
}

// gemmSplit is how gemm cuts an m×n×k product whose row chunks each
// stream kb×n elements of B (streamRows): by columns (or rows) into nc
// chunks (1: not cut).
func (x *Context) gemmSplit(mk microKernel, m, n, k, kb int) (byCols bool, nc int) {
	// The micro-kernel computes whole tiles of nr columns, and of mr rows
	// unless it has edge kernels. A thin product (a GEMV) loads each
	// element of B for a few multiply-adds: it counts as at least 16 rows
	// (streaming B from L2 or L3 costs about 16 multiply-adds' time an
	// element), so that the 1×1 convolutions of an SE block on one pixel
	// (576×144 weights: 15 µs on one thread) are split.
	rows, cols := (m+mk.mr-1)/mk.mr, (n+mk.nr-1)/mk.nr
	mw := rows * mk.mr
	if mk.edge != nil {
		mw = max(m, 16)
	}
	// Storing an element of C costs about 8 multiply-adds' time: a
	// product with a short k (a 1×1 convolution of 16 channels on
	// 56×56) is bound by its output, not its multiply-adds.
	work := mw*cols*mk.nr*k + 8*m*n
	// Cut the axis whose chunks the threads finish soonest (the columns
	// when it is a tie and n ≥ m).
	nr, _ := x.chunks(work, rows)
	ncol, spanC := x.chunks(work, cols)
	byCols = n >= m
	if tr, tc := x.splitCosts(mk, m, n, k, kb, cols, nr, ncol, spanC); tr < tc {
		byCols = false
	} else if tc < tr {
		byCols = true
	}
	if byCols {
		return true, ncol
	}
	return false, nr
}

// readA is the cost, in multiply-adds of the micro-kernel, of a column
// chunk reading one element of A beyond its thread's share of it: every
// column chunk streams all of A, and A is the weights, which come from
// L3 or memory in every run of a model. shufflenet_v2's last 1×1
// convolution (1024×49×464: 1.9 MB of A, 49 columns) cut into two column
// chunks of 32 and 17 columns took 760–780 µs of chunks against 650 µs on
// one thread; cut into four row chunks (B, 91 KB, packed once, shared),
// 590–610 µs (`onnxconv-bench --chunks 2`, docs/speed.md "two threads,
// where the chunks' time goes"). ≈ 0.3 ns an element. Row chunks read
// all of B the same way, but B is the activations, usually in cache:
// B's reads are counted only above cachedB.
const readA = 16

// cachedB bounds the B a row chunk streams (elements, 1 MiB: half a
// core's 2 MiB L2 here) that counts as free to read again. Above it, each
// row chunk streams B from L3, half of it from the other core's cache
// (the step before wrote it on both), and a thread with two row chunks
// streams it twice: its reads beyond the thread's share cost readA, as a
// column chunk's reads of A do. That moves DenseNet-121's 1×1
// bottlenecks at 28² (128×784×352…480) and MobileNet-v2's 24-channel
// projections at 56² (k = 96, 144), among others, from row to column
// chunks: two-thread speed-up densenet121 1.57 → 1.64, squeezenet1_0
// 1.65 → 1.70, mobilenet_v2 1.61 → 1.66 (docs/speed.md "Eighth wave,
// sixth session"). Counting every B (no bound) moved mobilenet_v3_small's
// and mnasnet0_5's expansions (B of 16–24 channels) to column chunks,
// with no gain or a loss in their chunks' time.
//
// Below the bound, B's reads count too when B has at least as many rows
// as C (m ≤ kb: a projection, a bottleneck, a 3×3 of as many channels).
// The step before wrote B on both cores, so each row chunk reads half of
// it from the other core (about 5 GB/s here), and such a product reads
// at least as much as it writes. DenseNet-121's 1×1 bottlenecks cut by
// rows scaled by 1.3–1.4 on two threads, by columns 1.8–2.0. An
// expansion (m > kb) keeps its row chunks: they write each channel on
// the core that computes it, where a depthwise step cut by channels
// reads it (docs/speed.md "Eighth wave, seventh session").
const cachedB = 1 << 18

// smallA bounds the A (elements, 256 KiB) whose reads by every column
// chunk count as free when B has at least as many rows as C (m ≤ kb).
// Such an A is weights no core wrote: each core reads it from the shared
// L3, while each row chunk reads the half of B the other core wrote.
// ShuffleNet-v2's 1×1 convolutions (58…232 channels in and out, 49–784
// pixels) moved from row to column chunks: the model's two-thread CPU
// time over one thread's fell 1.23–1.31 → 1.04–1.05 ms a run, and its
// two-thread speed-up rose 1.21 → 1.28 (docs/speed.md "Eighth wave,
// eleventh session"). Counting no small A's reads at all moved the
// expansions (m > kb) too, and lost as much on MobileNet-v2 and
// EfficientNet-B0 (their row chunks write the channels a depthwise step
// reads on the same core).
const smallA = 1 << 16

// splitCosts is the time, in multiply-adds, of the busiest thread of
// gemm's row split (nr chunks) and of its column split (ncol chunks, spanC
// column tiles on the busiest thread): the rows or columns it computes
// and its chunks' reads beyond its share — of A (m×k) for the column
// split unless A is below smallA and m ≤ kb, of B (kb×n streamed by each
// row chunk) for the row split when B exceeds cachedB or has at least
// as many rows as C (m ≤ kb).
func (x *Context) splitCosts(mk microKernel, m, n, k, kb, cols, nr, ncol, spanC int) (tr, tc int) {
	t := x.cut()
	tr = rowSpan(mk, m, nr, t) * cols * mk.nr * k
	if kb*n > cachedB || m <= kb {
		tr += max((nr+t-1)/t*kb*n-kb*n/t, 0) * readA
	}
	tc = spanC * mk.nr * rowCost(mk, m) * k
	if m*k >= smallA || m > kb {
		tc += max((ncol+t-1)/t*m*k-m*k/t, 0) * readA
	}
	return tr, tc
}

// rowCost is the rows of C the micro-kernel computes for r rows: r with
// edge kernels (the last rows run an edge kernel of as many rows), else
// whole tiles of mr.
func rowCost(mk microKernel, r int) int {
	if mk.edge != nil {
		return r
	}
	return (r + mk.mr - 1) / mk.mr * mk.mr
}

// rowSpan is the time, in rows computed (rowCost), that t threads taking
// chunks in turn take for the nc row chunks of m rows that gemm cuts
// (split aligned to mr). The last chunk may be short: 16 rows in two
// chunks are 12 + 4, three quarters of the work on one thread, where
// counting whole tiles (one each) made them look even.
func rowSpan(mk microKernel, m, nc, t int) int {
	parts := split(m, nc, mk.mr)
	free := make([]int, max(t, 1))
	for i := 0; i+1 < len(parts); i++ {
		j := 0
		for q := range free {
			if free[q] < free[j] {
				j = q
			}
		}
		free[j] += rowCost(mk, parts[i+1]-parts[i])
	}
	return slices.Max(free)
}

// streamRows is the rows of B (k×n as op(B)) whose columns a row chunk
// streams from memory: k, but a convolution's input read in place on the
// phase-plane grid (inPlace) is its input channels, each read once for
// every tap (k / (KH·KW)).
func (o operand) streamRows(mk microKernel, k int) int {
	if o.inPlace(mk) {
		return k / (o.conv.p.KH * o.conv.p.KW)
	}
	return k
}

// rowsFrom returns A from row i0 on.
func (o operand) rowsFrom(i0 int) operand {
	switch {
	case o.packed != nil, o.conv != nil:
		o.off += i0
	case o.trans:
		o.s = o.s[i0:]
	default:
		o.s = o.s[i0*o.ld:]
	}
	return o
}

// colsFrom returns B from column j0 on.
func (o operand) colsFrom(j0 int) operand {
	switch {
	case o.packed != nil, o.conv != nil:
		o.off += j0
	case o.trans:
		o.s = o.s[j0*o.ld:]
	default:
		o.s = o.s[j0:]
	}
	return o
}

// packShared packs all of op(A) (isA: rows = m, alpha applied) or op(B)
// (rows = n) into s.shared, in parallel by k-blocks and row ranges, as
// packAll would; nil when it is larger than maxShared.
func (x *Context) packShared(mk microKernel, isA bool, rows, k int, alpha float32, o operand, s *scratch) *Packed {
	w := mk.nr
	if isA {
		w = mk.mr
	}
	pad := (rows + w - 1) / w * w
	if pad*k > maxShared || isA && o.conv != nil {
		// (A as a convolution's implicit matrix is packed by each
		// chunk, as serial packs it.)
		return nil
	}
	s.shared = grow(s.shared, pad*k)
	p := &Packed{kernel: mk.name, isA: isA, rows: rows, k: k, pad: pad, data: s.shared}
	// Tasks of about 3–5 µs: packing B moves whole runs of nr values,
	// A one value at a time into panels of mr (≈ 0.6 ns a value: 40 µs
	// for 256×256 on one thread), so A's tasks hold fewer values. Each
	// k-block's rows are cut evenly (into tasks of a fixed size and a
	// short rest, 256 rows of A were a task of 252 and one of 4: a
	// serial packing).
	per := minWork / 16
	if isA {
		per = minWork / 64
	}
	var tasks []packTask
	kb := kBlock(k)
	for p0 := 0; p0 < k; p0 += kb {
		kc := min(kb, k-p0)
		n := max(1, min(pad/w, kc*rows/per))
		parts := split(rows, n, w)
		for i := 0; i+1 < len(parts); i++ {
			tasks = append(tasks, packTask{p0, kc, parts[i], parts[i+1] - parts[i]})
		}
	}
	x.parallel(len(tasks), func(i int) {
		t := tasks[i]
		dst := p.data[t.p0*pad+t.r0*t.kc : t.p0*pad+t.kc*pad]
		switch {
		case isA:
			packA(dst, o.trans, o.s, o.ld, t.r0, t.nr, t.p0, t.kc, w, alpha)
		case o.conv != nil:
			o.conv.pack(dst, t.p0, t.kc, o.off+t.r0, t.nr, w)
		default:
			packB(dst, o.trans, o.s, o.ld, t.p0, t.kc, t.r0, t.nr, w)
		}
	})
	return p
}
