package kernels

import "unsafe"

// Blocking: a kc×nc block of op(B) and an mc×kc block of op(A) are packed
// into panels the micro-kernel reads sequentially (A block ≈ L2, B panel ≈
// L1). mc and nc are multiples of every kernel's mr and nr.
const (
	blockK = 256
	blockM = 192
	blockN = 2048
	// unalignedPanels and unalignedK: a B whose rows are not 64-byte
	// aligned is packed when at least this many panels of A read each of
	// its panels and its k-blocks have at least this many rows
	// (operand.direct).
	unalignedPanels = 20
	unalignedK      = 192
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices: op(A) is m×k (A is m×k with row stride lda, or k×m when
// transA), op(B) is k×n (B is k×n with row stride ldb, or n×k when
// transB), C is m×n with row stride ldc. beta == 0 ignores C's contents.
// Work is split over the Context's threads by rows or columns of C
// (gemm); the result is the same for every thread count.
func (x *Context) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return x.sgemm(best, transA, transB, m, n, k, alpha, a, lda, nil, b, ldb, nil, beta, c, ldc)
}

// SgemmPacked is Sgemm with op(A) or op(B) (or both) packed beforehand by
// PackA / PackB (alpha is then already applied to a packed A; pass 1). A
// nil packed operand is read from the slice as in Sgemm.
func (x *Context) SgemmPacked(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, pa *Packed, b []float32, ldb int, pb *Packed, beta float32, c []float32, ldc int) error {
	return x.sgemm(best, transA, transB, m, n, k, alpha, a, lda, pa, b, ldb, pb, beta, c, ldc)
}

func (x *Context) sgemm(mk microKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, pa *Packed, b []float32, ldb int, pb *Packed, beta float32, c []float32, ldc int) error {
	return x.sgemmFinish(mk, transA, transB, m, n, k, alpha, a, lda, pa, b, ldb, pb, beta, c, ldc, nil)
}

// sgemmFinish is sgemm with fin (nil: none) around each part of C.
func (x *Context) sgemmFinish(mk microKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, pa *Packed, b []float32, ldb int, pb *Packed, beta float32, c []float32, ldc int, fin *finish) error {
	if m < 0 || n < 0 || k < 0 {
		return shapeErr("sgemm: negative size %d×%d×%d", m, n, k)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if pa != nil {
		if err := pa.fits(mk, true, m, k); err != nil {
			return err
		}
	} else if err := checkMat("A", a, transA, m, k, lda); err != nil {
		return err
	}
	if pb != nil {
		if err := pb.fits(mk, false, n, k); err != nil {
			return err
		}
	} else if err := checkMat("B", b, transB, k, n, ldb); err != nil {
		return err
	}
	if ldc < n || len(c) < (m-1)*ldc+n {
		return shapeErr("sgemm: C of %d elements (ldc %d) is too small for %d×%d", len(c), ldc, m, n)
	}
	if fin != nil && fin.bias != nil && len(fin.bias) < m {
		return shapeErr("sgemm: %d bias values for %d rows", len(fin.bias), m)
	}
	if k == 0 || alpha == 0 {
		fin.run(c, ldc, 0, m, 0, n, beta, func(beta float32, st store) {
			scaleC(m, n, beta, c, ldc)
			for i := 0; i < m; i++ {
				row := c[i*ldc : i*ldc+n]
				if st.bias != nil {
					fill(row, st.bias[i])
				}
				if st.relu {
					actGeneric(row, st.act())
				}
			}
		})
		return nil
	}
	x.gemm(mk, m, n, k, alpha, operand{packed: pa, trans: transA, s: a, ld: lda}, operand{packed: pb, trans: transB, s: b, ld: ldb}, beta, c, ldc, fin)
	return nil
}

// operand is A or B of one serial SGEMM: a packed matrix from row (A) or
// column (B) off on, or a slice to pack block by block.
type operand struct {
	packed *Packed
	off    int
	trans  bool
	s      []float32
	ld     int
	// conv: B is the im2col matrix of a convolution input, packed
	// straight from the input (columns from off on); or A is its
	// transpose on the phase-plane grid (rows from off on).
	conv *convB
}

// direct reports whether the micro-kernel reads B's whole panels in
// place (rows ld apart) instead of from a packed copy, for a product of
// k rows: B is a plain row-major matrix whose rows of one k-block do not
// crowd a few cache sets. A row stride of a multiple of 64 floats (256
// bytes) puts the rows on 64/gcd(ld/16, 64) positions of L1's 64 sets of
// 64-byte lines (one position when ld is a multiple of 1024 floats); up
// to 4 rows a position are read in place (a 1×1 convolution of up to 64
// channels on 56×56 pixels, stride 3136: 16 positions), more would evict
// each other from L1. Reading in place computes the same values; it
// saves the packing, which costs as much as the product when B has few
// rows or columns (the 1×1 convolutions of a mobile net). Whatever the
// stride, B is read in place when at most 2 panels of A (panels: C's
// rows in tiles of mr) use each of its panels: a packed copy is read
// as many times as that and costs a pass over B besides (a mobile net's
// projections to 16 or 24 channels on 112×112 or 56×56 pixels: 25–30 %
// faster unpacked).
//
// Except when the panels are 32 floats wide (nr; the AVX-512 kernel),
// the rows are not 64-byte aligned (a stride that is not a multiple of
// 16 floats: 13×13, 14×14 or 7×7 pixels), B's panel is read
// by many panels of A (unalignedPanels) and its k-block is long
// (unalignedK): a row of an unaligned panel (32 floats, 128 bytes)
// spans 3 cache lines instead of 2, so the panel of a whole k-block
// (48 KiB at 256 rows) fills L1 and evicts itself and A's panel between
// the panels of A that read it; a packed copy (32 KiB) stays. Packing
// is a pass over B, repaid by 20 panels of A or more: SqueezeNet's last
// 1×1 convolution (512 → 1000 channels on 13×13 pixels) 1182 → 1136 µs,
// 512 → 1024 on 14×14 1398 → 1311 µs, 1024 → 1024 on 7×7 726 → 699 µs
// (best of 150 calls, one thread, AVX-512); with few panels of A or
// short k-blocks it costs more than it saves (64 outputs of 384
// channels on 13×13 60 → 64 µs, 32 of 128 on 27×27 39 → 46 µs). The
// AVX2 kernel's panels (16 floats, 2 lines against 1) gain on the
// largest (SqueezeNet's 1768 → 1692 µs) but lose on others of 20 panels
// (128 outputs of 256 channels on 13×13 107 → 111 µs): read in place as
// before.
func (o operand) direct(k, panels, nr int) bool {
	if o.packed != nil || o.conv != nil || o.trans {
		return false
	}
	if nr >= 32 && o.ld%16 != 0 && panels >= unalignedPanels && min(k, blockK) >= unalignedK {
		return false
	}
	if o.ld%64 != 0 || panels <= 2 {
		return true
	}
	a, b := (o.ld/16)%64, 64
	for a != 0 {
		a, b = b%a, a
	}
	return min(k, blockK) <= 4*(64/b)
}

// inPlace reports whether serial reads B's panels in place, through the
// micro-kernel's table of row offsets (mk.offs), instead of packing
// them: B is a convolution's phase-plane grid (each im2col row a run of
// the grid's buffer from a row offset on). The micro-kernel reads the
// same values a packed panel would hold, in the same order: the results
// are bit-identical; the packing (a copy of every panel, as much as a
// sixth of a U-Net's time) is gone.
func (o operand) inPlace(mk microKernel) bool {
	return o.conv != nil && o.conv.flat != nil && o.conv.pix == nil && mk.offs != nil
}

// Packed is op(A) or op(B) packed once for the micro-kernel in use, for
// operands used by many products (weights). It is read-only and may be
// shared by concurrent calls.
type Packed struct {
	kernel string
	isA    bool
	// rows × k: rows is m for A, n for B; pad is rows rounded up to the
	// panel width.
	rows, k, pad int
	data         []float32
}

func (p *Packed) fits(mk microKernel, isA bool, rows, k int) error {
	if p.kernel != mk.name || p.isA != isA || p.rows != rows || p.k != k {
		return shapeErr("sgemm: packed operand (%s, A %v, %d×%d) does not fit a %d×%d operand for %s", p.kernel, p.isA, p.rows, p.k, rows, k, mk.name)
	}
	return nil
}

// panel returns the packed panel of rows [r, r+panel width) in the k-block
// starting at p0.
func (p *Packed) panel(p0, kc, r int) *float32 { return &p.data[p0*p.pad+r*kc] }

// PackA packs alpha·op(A) (m×k; A is k×m when trans) for SgemmPacked.
func PackA(trans bool, m, k int, alpha float32, a []float32, lda int) (*Packed, error) {
	return packAll(best, true, trans, m, k, alpha, a, lda)
}

// PackB packs op(B) (k×n; B is n×k when trans) for SgemmPacked.
func PackB(trans bool, k, n int, b []float32, ldb int) (*Packed, error) {
	return packAll(best, false, trans, n, k, 1, b, ldb)
}

func packAll(mk microKernel, isA, trans bool, rows, k int, alpha float32, s []float32, ld int) (*Packed, error) {
	w := mk.nr
	if isA {
		w = mk.mr
	}
	if rows < 1 || k < 1 {
		return nil, shapeErr("pack: empty operand %d×%d", rows, k)
	}
	if isA {
		if err := checkMat("A", s, trans, rows, k, ld); err != nil {
			return nil, err
		}
	} else if err := checkMat("B", s, trans, k, rows, ld); err != nil {
		return nil, err
	}
	pad := (rows + w - 1) / w * w
	p := &Packed{kernel: mk.name, isA: isA, rows: rows, k: k, pad: pad, data: make([]float32, pad*k)}
	kb := kBlock(k)
	for p0 := 0; p0 < k; p0 += kb {
		kc := min(kb, k-p0)
		dst := p.data[p0*pad : p0*pad+kc*pad]
		if isA {
			packA(dst, trans, s, ld, 0, rows, p0, kc, w, alpha)
		} else {
			packB(dst, trans, s, ld, p0, kc, 0, rows, w)
		}
	}
	return p, nil
}

func checkMat(name string, s []float32, trans bool, rows, cols, ld int) error {
	if trans {
		rows, cols = cols, rows
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	if ld < cols || len(s) < (rows-1)*ld+cols {
		return shapeErr("sgemm: %s of %d elements (ld %d) is too small for %d×%d", name, len(s), ld, rows, cols)
	}
	return nil
}

// split cuts [0, n) into at most t ranges whose inner bounds are multiples
// of align.
func split(n, t, align int) []int {
	units := (n + align - 1) / align
	t = min(t, units)
	parts := []int{0}
	for i := 1; i < t; i++ {
		parts = append(parts, units*i/t*align)
	}
	return append(parts, n)
}

func scaleC(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// serial is the blocked SGEMM on one goroutine, with st's bias and ReLU
// applied by the micro-kernel as it stores C's tiles.
func (x *Context) serial(mk microKernel, m, n, k int, alpha float32, oa, ob operand, beta float32, c []float32, ldc int, st store) {
	x.serialK(mk, m, n, k, 0, k, alpha, oa, ob, beta, c, ldc, st)
}

// kBlock is the k-block of a product of k rows (the same for every
// thread count and chunk: the sums of a k-block are added to C in block
// order, so it fixes the bits): k itself up to blockK; two blocks of
// about k/2 (rounded up to 8) up to 4·blockK; beyond, an even count of
// near-equal blocks of at most blockK. Even counts split evenly into
// gemmSplitK's halves, and with two blocks its second half is one block,
// whose sums serial adds to C as gemmSplitK's fold does: one thread
// needs no scratch pass (a 1×1 convolution of 1024 channels at 14²: 695
// µs with four blocks and the pass, 642 with two, 638 serial as before;
// docs/speed.md "Eighth wave, eighth session").
func kBlock(k int) int {
	if k <= blockK {
		return max(k, 1)
	}
	if k <= 4*blockK {
		return ((k+1)/2 + 7) / 8 * 8
	}
	nb := 2 * ((k + 2*blockK - 1) / (2 * blockK))
	return ((k+nb-1)/nb + 7) / 8 * 8
}

// serialK is serial over the k-blocks from kLo (a block's start) to kHi
// (a block's end or k) only: its first block starts C as serial's first
// block would (beta or bias), the later ones add to it, and the ReLU
// applies in k's last block.
func (x *Context) serialK(mk microKernel, m, n, k, kLo, kHi int, alpha float32, oa, ob operand, beta float32, c []float32, ldc int, st store) {
	s := x.get()
	defer x.put(s)
	mr, nr := mk.mr, mk.nr
	first := beta == 0 || st.bias != nil
	if !first {
		scaleC(m, n, beta, c, ldc)
	}
	relu := st.act()
	s.tile = grow(s.tile, mr*nr)
	s.biasTile = grow(s.biasTile, mr)
	direct := ob.direct(k, (m+mr-1)/mr, nr)
	inPlace := ob.inPlace(mk)
	kb := kBlock(k)
	for j0 := 0; j0 < n; j0 += blockN {
		nc := min(blockN, n-j0)
		ncp := (nc + nr - 1) / nr * nr
		// full: the columns of the block in whole panels of nr (read in
		// place when direct; the rest is packed).
		full := nc / nr * nr
		for p0 := kLo; p0 < kHi; p0 += kb {
			kc := min(kb, kHi-p0)
			add := 1
			if first && p0 == kLo {
				add = 0
			}
			// The block's bias (in the first k-block) and ReLU (in the
			// last).
			var bias []float32
			if add == 0 && st.bias != nil {
				bias = st.bias
			}
			last := 0
			if p0+kc == k {
				last = relu
			}
			var grid []float32 // in place: the grid from the block's column j0 on
			switch {
			case ob.packed != nil:
			case inPlace:
				f := ob.conv.flat
				// Every read of the micro-kernel lies in the buffer.
				q := ob.conv.col0 + ob.off + j0
				_ = f.buf[q+ncp+f.maxOff-1]
				grid = f.buf[q:]
			case direct:
				if full < nc {
					s.b = grow(s.b, kc*nr)
					packB(s.b, false, ob.s, ob.ld, p0, kc, j0+full, nc-full, nr)
				}
			default:
				s.b = grow(s.b, kc*ncp)
				if ob.conv != nil {
					ob.conv.pack(s.b, p0, kc, ob.off+j0, nc, nr)
				} else {
					packB(s.b, ob.trans, ob.s, ob.ld, p0, kc, j0, nc, nr)
				}
			}
			for i0 := 0; i0 < m; i0 += blockM {
				mc := min(blockM, m-i0)
				mcp := (mc + mr - 1) / mr * mr
				if oa.packed == nil {
					s.a = grow(s.a, kc*mcp)
					if oa.conv != nil {
						oa.conv.packA(s.a, p0, kc, oa.off+i0, mc, mr)
					} else {
						packA(s.a, oa.trans, oa.s, oa.ld, i0, mc, p0, kc, mr, alpha)
					}
				}
				for jr := 0; jr < nc; jr += nr {
					nn := min(nr, nc-jr)
					// The panel's last cols columns run on the column
					// kernels (a half tile before them, or none), its
					// first kn on the tile kernels.
					cols := 0
					if mk.col != nil && !inPlace && nn < nr {
						panels := (mc + mr - 1) / mr
						if nn > nr/2 && nn-nr/2 <= maxColTail && colsPay(nn-nr/2, panels, true) {
							cols = nn - nr/2
						} else if nn <= maxColTail && colsPay(nn, panels, false) {
							cols = nn
						}
					}
					kn := nn - cols
					var pb *float32
					ldb := nr
					switch {
					case inPlace:
						pb = &grid[jr]
					case ob.packed != nil:
						pb = ob.packed.panel(p0, kc, ob.off+j0+jr)
					case direct && jr < full:
						pb, ldb = &ob.s[p0*ob.ld+j0+jr], ob.ld
					case direct:
						pb = &s.b[0]
					default:
						pb = &s.b[jr*kc]
					}
					for ir := 0; kn > 0 && ir < mc; ir += mr {
						mm := min(mr, mc-ir)
						var pa *float32
						if oa.packed != nil {
							pa = oa.packed.panel(p0, kc, oa.off+i0+ir)
						} else {
							pa = &s.a[ir*kc]
						}
						ci := (i0+ir)*ldc + j0 + jr
						// A last panel of at most nr/2 columns: the
						// half-width kernels (width columns computed).
						fn, ofn, edge, oedge, width := mk.fn, mk.offs, mk.edge, mk.offsEdge, nr
						if kn <= nr/2 && mk.half != nil {
							fn, ofn, edge, oedge, width = mk.half.fn, mk.half.offs, mk.half.edge, mk.half.offsEdge, nr/2
						}
						rows := mr
						if mm < mr && edge != nil {
							// The tile's real rows only (a GEMV's one row
							// costs one row, not mr).
							fn, rows = edge[mm], mm
							if inPlace {
								ofn = oedge[mm]
							}
						}
						var pbias *float32
						if bias != nil {
							pbias = &bias[i0+ir]
							if rows > mm {
								// A whole tile for fewer rows: a bias
								// for each of its rows.
								clear(s.biasTile[copy(s.biasTile, bias[i0+ir:i0+ir+mm]):])
								pbias = &s.biasTile[0]
							}
						}
						if rows == mm && kn == width {
							if inPlace {
								ofn(kc, pa, &ob.conv.flat.rowOff[p0], pb, &c[ci], ldc, add, pbias, last)
							} else {
								fn(kc, pa, pb, ldb, &c[ci], ldc, add, pbias, last)
							}
							continue
						}
						// Through a tile: the kernel's ReLU only when the
						// tile is C's final value.
						tileRelu := 0
						if add == 0 {
							tileRelu = last
						}
						if inPlace {
							ofn(kc, pa, &ob.conv.flat.rowOff[p0], pb, &s.tile[0], nr, 0, pbias, tileRelu)
						} else {
							fn(kc, pa, pb, ldb, &s.tile[0], nr, 0, pbias, tileRelu)
						}
						for i := 0; i < mm; i++ {
							row := c[ci+i*ldc : ci+i*ldc+kn]
							t := s.tile[i*nr : i*nr+kn]
							if add != 0 {
								for j := range row {
									row[j] += t[j]
								}
								actGeneric(row, last)
							} else {
								copy(row, t)
							}
						}
					}
					if cols > 0 {
						colTail(mk, s, kc, oa, p0, i0, mc, (*float32)(unsafe.Add(unsafe.Pointer(pb), 4*kn)), ldb, cols, c, ldc, j0+jr+kn, add, bias, last)
					}
				}
			}
		}
	}
}

// colsPay reports whether cols columns on the column kernels (after a
// half tile when half) take less time than one tile (a half tile when
// !half) over panels panels of 12 rows. Cycles per k-step: a tile 12
// (24 FMAs), a half tile 6; a column kernel call 4 (latency of its
// chains) whether it has 1, 2 or 4 panels.
func colsPay(cols, panels int, half bool) bool {
	calls := panels/4 + panels%4/2 + panels%2
	col := cols * 4 * calls
	if half {
		return 6*panels+col < 12*panels
	}
	return col < 6*panels
}

// colTail computes columns [jc, jc+cols) of C's rows [i0, i0+mc) for
// the k-block at p0 with the column kernels: B's column j at b + j
// (kc rows ldb apart), A's panels as serial reads them. Each element is
// the sum the tile kernels would compute, added to C (add != 0) or to
// the bias (not nil), then ReLU (relu 1) or ReLU6 (relu 2), as serial's
// tile path does.
func colTail(mk microKernel, s *scratch, kc int, oa operand, p0, i0, mc int, b *float32, ldb, cols int, c []float32, ldc, jc, add int, bias []float32, relu int) {
	const mr = 12
	s.tile = grow(s.tile, 4*mr)
	out := s.tile[:4*mr]
	for j := 0; j < cols; j++ {
		bj := (*float32)(unsafe.Add(unsafe.Pointer(b), 4*j))
		for ir := 0; ir < mc; {
			var pa *float32
			if oa.packed != nil {
				pa = oa.packed.panel(p0, kc, oa.off+i0+ir)
			} else {
				pa = &s.a[ir*kc]
			}
			np := 1
			switch rem := (mc - ir + mr - 1) / mr; {
			case rem >= 4:
				np = 4
				mk.col.x4(kc, pa, bj, ldb, &out[0])
			case rem >= 2:
				np = 2
				mk.col.x2(kc, pa, bj, ldb, &out[0])
			default:
				mk.col.x1(kc, pa, bj, ldb, &out[0])
			}
			for i, v := range out[:min(np*mr, mc-ir)] {
				ci := (i0+ir+i)*ldc + jc + j
				switch {
				case add != 0:
					v = c[ci] + v
				case bias != nil:
					v += bias[i0+ir+i]
				}
				if relu != 0 && v < 0 {
					v = 0 // NaN and −0 kept, as reluGeneric and the kernels
				}
				if relu == 2 && v > 6 {
					v = 6 // as clipGeneric
				}
				c[ci] = v
			}
			ir += np * mr
		}
	}
}

// packA packs rows [i0, i0+mc) and columns [p0, p0+kc) of alpha·op(A)
// into panels of mr rows: panel r holds, for each p, mr values (zero past
// the last row).
func packA(dst []float32, trans bool, a []float32, lda, i0, mc, p0, kc, mr int, alpha float32) {
	for ir := 0; ir < mc; ir += mr {
		panel := dst[ir*kc : ir*kc+mr*kc]
		mm := min(mr, mc-ir)
		if !trans && mr == 12 && packA12Gather != nil && kc >= 4 && 11*lda+kc < 1<<31 {
			// Bounds checked here: rows i0+ir … i0+ir+mm−1, steps p0 … p0+kc−1.
			at := (i0+ir)*lda + p0
			_ = a[at+(mm-1)*lda+kc-1]
			kq := kc / 4
			packA12Gather(kq, &a[at], lda, &panel[0], alpha, mm)
			for p := 4 * kq; p < kc; p++ {
				d := panel[p*12 : p*12+12]
				for r := range d {
					if r < mm {
						d[r] = a[at+r*lda+p] * alpha
					} else {
						d[r] = 0
					}
				}
			}
			continue
		}
		if !trans && mm == mr && mr == 12 {
			packA12(panel, a, lda, (i0+ir)*lda+p0, kc, alpha)
			continue
		}
		for r := 0; r < mm; r++ {
			i := i0 + ir + r
			if !trans {
				src := a[i*lda+p0 : i*lda+p0+kc]
				for p, v := range src {
					panel[p*mr+r] = v * alpha
				}
			} else {
				for p := 0; p < kc; p++ {
					panel[p*mr+r] = a[(p0+p)*lda+i] * alpha
				}
			}
		}
		for r := mm; r < mr; r++ {
			for p := 0; p < kc; p++ {
				panel[p*mr+r] = 0
			}
		}
	}
}

// packA12 packs a whole panel of 12 rows of a row-major A (row r's kc
// values from at + r·lda on) step by step: each step's 12 values are
// written together, from 12 rows read in parallel (writing row by row,
// into every 12th value, was 31 µs for 256×256; the 12 stores unrolled
// by hand 23 µs, a loop over them 32 µs).
func packA12(panel, a []float32, lda, at, kc int, alpha float32) {
	var rows [12][]float32
	for r := range rows {
		rows[r] = a[at+r*lda : at+r*lda+kc]
	}
	for p := 0; p < kc; p++ {
		d := (*[12]float32)(panel[p*12 : p*12+12])
		d[0] = rows[0][p] * alpha
		d[1] = rows[1][p] * alpha
		d[2] = rows[2][p] * alpha
		d[3] = rows[3][p] * alpha
		d[4] = rows[4][p] * alpha
		d[5] = rows[5][p] * alpha
		d[6] = rows[6][p] * alpha
		d[7] = rows[7][p] * alpha
		d[8] = rows[8][p] * alpha
		d[9] = rows[9][p] * alpha
		d[10] = rows[10][p] * alpha
		d[11] = rows[11][p] * alpha
	}
}

// packA12Gather and packBT32Gather, when not nil, pack a panel of 12 rows
// of a row-major A (4·kq steps) and of 32 columns of a transposed B with
// AVX-512 gathers (packA12AVX512, packBT32AVX512): the same values as
// packA's and packB's loops (copies, A times alpha as a float32
// product). Set during package initialization, never changed afterwards.
var (
	packA12Gather  func(kq int, a *float32, lda int, dst *float32, alpha float32, rows int)
	packBT32Gather func(kc int, b *float32, ldb int, dst *float32, nn int)
)

// packRowsFor returns the SIMD row copy for panels nr wide (nil: none).
func packRowsFor(nr int) func(kc int, src *float32, ldb int, dst *float32) {
	switch nr {
	case 16:
		return packRows16
	case 32:
		return packRows32
	}
	return nil
}

// packB packs rows [p0, p0+kc) and columns [j0, j0+nc) of op(B) into
// panels of nr columns: panel j holds, for each p, nr values (zero past
// the last column).
func packB(dst []float32, trans bool, b []float32, ldb, p0, kc, j0, nc, nr int) {
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : jr*kc+nr*kc]
		nn := min(nr, nc-jr)
		if !trans {
			if fast := packRowsFor(nr); fast != nil && nn == nr && kc > 0 {
				// Bounds checked here: the kernel reads rows p0..p0+kc−1.
				at := p0*ldb + j0 + jr
				_ = b[at+(kc-1)*ldb+nr-1]
				fast(kc, &b[at], ldb, &panel[0])
				continue
			}
			for p := 0; p < kc; p++ {
				row := b[(p0+p)*ldb+j0+jr:]
				d := panel[p*nr : p*nr+nr]
				copy(d[:nn], row[:nn])
				clear(d[nn:])
			}
			continue
		}
		if nr == 32 && packBT32Gather != nil && kc > 0 && 31*ldb+kc < 1<<31 {
			// Bounds checked here: rows j0+jr … j0+jr+nn−1, steps p0 … p0+kc−1.
			at := (j0+jr)*ldb + p0
			_ = b[at+(nn-1)*ldb+kc-1]
			packBT32Gather(kc, &b[at], ldb, &panel[0], nn)
			continue
		}
		for j := 0; j < nn; j++ {
			src := b[(j0+jr+j)*ldb+p0 : (j0+jr+j)*ldb+p0+kc]
			for p, v := range src {
				panel[p*nr+j] = v
			}
		}
		for j := nn; j < nr; j++ {
			for p := 0; p < kc; p++ {
				panel[p*nr+j] = 0
			}
		}
	}
}
