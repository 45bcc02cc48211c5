package kernels

import "math"

// MatMulNBits with A quantized to int8 (accuracy_level 4). A node whose
// accuracy_level is 4 lets a runtime quantize A to int8 with the same
// blocks as B; ONNX Runtime then computes, block by block,
//
//	scale_a·scale_b·Σ q_a·(q_b − zero)
//
// with q_a = round-half-even(a·(127/amax)), scale_a = amax/127, amax the
// block's largest |a| in float32 (MLAS' QuantizeARow_CompInt8): on this
// machine its outputs lie within 4e-8·Σ|a·w| of that formula evaluated
// in float64, and 0.6–1.6e-3·Σ|a·w| from the float32 product
// (runtimes/ortnode TestMatMulNBitsShapesLikeORT). The integer sums are
// exact, so the path is both ONNX Runtime's numbers and a product of
// bytes: with AVX512-VNNI (VPDPBUSD: 64 products of an unsigned and a
// signed byte a operation) it reads B near the memory's speed
// (BenchmarkMatMulNBitsRoofline). A row of A holding a value that is not
// finite takes the float32 product instead, so that it reaches the
// outputs as it would there.
//
// The order of the float32 operations is fixed by the lanes of the
// kernel: for 4-bit B a chunk of 128 values of a column is 64 bytes, and
// lane j (of 16) sums the products of the chunk's values 8j … 8j+7 (the
// bytes 4j … 4j+3: their low nibbles meet the even values of A, their
// high nibbles the odd ones); for 8-bit B a chunk is 64 values, lane j
// the values (and bytes) 4j … 4j+3. Per chunk and lane,
//
//	t = float32(Σ q_a·q_b) − zero·float32(Σ q_a)   (exact: |·| < 2²⁴)
//	acc += t·(scale_b·scale_a)                       (each product rounded)
//
// and the 16 lanes are summed at the end as pairs 8 apart, then 4 apart,
// then (0+1) + (2+3). nbitsInt8Go computes the same operations in the
// same order: the same bits with or without the assembly kernel
// (TestMatMulNBitsInt8).

// nbitsInt8Kernel is nbits4Int8AVX512's signature (the generator's
// nbitsInt8): 4 columns, one row of A prepared by quantizeInt8Row.
type nbitsInt8Kernel func(chunks, cpb, bpc int, b *byte, ldb int, qa *int8, qs, sa *float32, sc, zc *float32, ld int, idx *int32, kmask int, out *float32)

// int8Kernels are the AVX512-VNNI kernels of the int8 path (nil:
// nbitsInt8Go) for one bit width: one row of A, and two at once
// (interleaved by pairInt8Rows: the bytes, nibbles, scales and zero
// points shared, each row's operations the one-row kernel's); and their
// forms for blocks of a chunk or more, which broadcast a column's scale
// and zero point (the same values in every lane, so the same bits).
type int8Kernels struct {
	one, two, oneB, twoB nbitsInt8Kernel
}

// nbitsInt8Asm holds the kernels for 4-bit ([0]) and 8-bit ([1]) B; set
// during package initialization and read-only afterwards.
var nbitsInt8Asm [2]int8Kernels

// int8Layout is how the int8 path takes a row of A for one bit width:
// chunks of chunk values (64 bytes of a column of B), lane j of 16
// summing the chunk's values lane·j … lane·j+lane−1 (the bytes 4j …
// 4j+3); for 4 bits (split) the chunk's qa is its 64 even values (the
// low nibbles' partners) then its 64 odd ones, for 8 and 2 bits the
// values in order.
type int8Layout struct {
	bits, chunk, lane int
	split             bool
}

func int8LayoutOf(bits int) int8Layout {
	return int8Layout{bits: bits, chunk: 512 / bits, lane: 32 / bits, split: bits == 4}
}

// int8Row is a row of A quantized for the int8 path: qa by chunks in the
// layout's order; per chunk and lane j, qs the sum of the lane's
// quantized values and sa its block's scale.
type int8Row struct {
	qa     []int8
	qs, sa []float32
}

// quantizeInt8Row quantizes a block by block as MLAS does into r, a
// last block that a does not fill padded with zeros; false when a holds
// a value that is not finite (r is then not set).
func quantizeInt8Row(a []float32, block int, lay int8Layout, r *int8Row) bool {
	k := len(a)
	q := make([]int8, k)
	scales := make([]float32, (k+block-1)/block)
	for b := 0; b < k; b += block {
		amax := float32(0)
		for _, v := range a[b:min(b+block, k)] {
			// |v| (the sign bit cleared); max keeps a NaN.
			amax = max(amax, math.Float32frombits(math.Float32bits(v)&^(1<<31)))
		}
		if amax != amax || amax > math.MaxFloat32 {
			return false
		}
		if amax == 0 {
			continue
		}
		scales[b/block] = amax / 127
		inv := 127 / amax
		for i, v := range a[b:min(b+block, k)] {
			// Rounded half to even as float32 adds round: |v·inv| ≤
			// 127.0001 ≪ 2²², so adding and taking away 1.5·2²³
			// leaves the nearest integer.
			const magic = 1.5 * (1 << 23)
			p := v * inv
			q[b+i] = int8((p + magic) - magic)
		}
	}
	// Whole blocks, then whole chunks: a last one that the blocks do not
	// fill is padded with zeros (its lanes past them have qs and sa 0).
	k = len(scales) * block
	chunks := (k + lay.chunk - 1) / lay.chunk
	r.qa = make([]int8, chunks*lay.chunk)
	r.qs = make([]float32, 16*chunks)
	r.sa = make([]float32, 16*chunks)
	q = append(q, make([]int8, chunks*lay.chunk-len(q))...)
	for ch := 0; ch < chunks; ch++ {
		c0 := ch * lay.chunk
		if lay.split {
			for i := 0; i < 64; i++ {
				r.qa[c0+i] = q[c0+2*i]
				r.qa[c0+64+i] = q[c0+2*i+1]
			}
		} else {
			copy(r.qa[c0:c0+lay.chunk], q[c0:])
		}
		for j := 0; j < 16 && c0+lay.lane*j < k; j++ {
			s := 0
			for _, v := range q[c0+lay.lane*j : c0+lay.lane*(j+1)] {
				s += int(v)
			}
			r.qs[16*ch+j] = float32(s)
			r.sa[16*ch+j] = scales[(c0+lay.lane*j)/block]
		}
	}
	return true
}

// int8Fits reports whether the int8 path takes p: 4- and 8-bit blocks
// of 16 to 256 values (and any larger multiple of 16), 2-bit ones of 32
// to 128 — those ONNX Runtime 1.30 quantizes A for (its 2-bit blocks of
// 16 and 256 keep the float32 product: runtimes/ortnode
// TestMatMulNBitsShapesLikeORT). A last block that K does not fill is
// taken with A padded by zeros (as MLAS pads it). Where the blocks'
// values are a multiple of the layout's chunk (128 values for 4 bits, 64
// for 8), the assembly kernels run; else (small K, 2 bits) nbitsInt8Go
// does, its last chunk partial.
func int8Fits(p *NBits) bool {
	if p.Bits == 2 {
		return p.Block >= 32 && p.Block <= 128 && p.Block%16 == 0
	}
	return (p.Bits == 4 || p.Bits == 8) && p.Block%16 == 0
}

// matMulNBitsInt8 is MatMulNBits with A quantized to int8 (see above);
// int8Fits(&p) holds. Threads take runs of 4 columns as matMulNBitsFast's
// do (the last run ends at column N). False (y not written) when A holds
// a value that is not finite.
func (x *Context) matMulNBitsInt8(p NBits, a []float32, m int, y []float32, blocks, rowBytes int) bool {
	lay := int8LayoutOf(p.Bits)
	k := blocks * p.Block // K, with a last block K does not fill padded
	rows := make([]int8Row, m)
	for r := range rows {
		if !quantizeInt8Row(a[r*p.K:(r+1)*p.K], p.Block, lay, &rows[r]) {
			return false
		}
	}
	chunks := (k + lay.chunk - 1) / lay.chunk
	// Per chunk: cpb chunks a block (Block ≥ chunk) or bpc blocks a
	// chunk; lane j's block is idx[j] blocks after the chunk's first.
	cpb, bpc := max(1, p.Block/lay.chunk), max(1, lay.chunk/p.Block)
	var idx [16]int32
	for j := range idx {
		idx[j] = int32(lay.lane * j / min(p.Block, lay.chunk) % bpc)
	}
	var one, two nbitsInt8Kernel
	if ks := nbitsInt8Asm[p.Bits/8]; p.Bits != 2 && k%lay.chunk == 0 {
		one, two = ks.one, ks.two
		if p.Block >= lay.chunk {
			one, two = ks.oneB, ks.twoB
		}
	}
	// Rows in pairs for the two-row kernel, interleaved by chunk.
	var pairs []int8Row
	if two != nil {
		pairs = make([]int8Row, m/2)
		for i := range pairs {
			pairs[i] = pairInt8Rows(&rows[2*i], &rows[2*i+1], lay.chunk)
		}
	}
	ldb := blocks * p.Block * p.Bits / 8
	x.rangeWork((p.N+3)/4, (m+1)*p.K*2, func(lo, hi int) {
		// The 4 columns' zero points as floats, block by block, column
		// by column, when the caller keeps none (NBits.ZeroF): the
		// default once when the model has none, else per run.
		var zc []float32
		perRun := p.ZeroF == nil && (p.ZeroPoints != nil || p.Zero != nil)
		if p.ZeroF == nil {
			zc = make([]float32, 4*blocks)
			for i := range zc {
				zc[i] = float32(int(1) << (p.Bits - 1))
			}
		}
		var out [8]float32
		for q := lo; q < hi; q++ {
			n0 := min(4*q, p.N-4)
			if p.N < 4 {
				n0 = 4 * q
			}
			cols := min(4, p.N-n0)
			zq := zc // the columns' zero points, blocks floats apart
			if p.ZeroF != nil {
				zq = p.ZeroF[n0*blocks:]
			}
			for c := 0; c < cols && perRun; c++ {
				for kb := 0; kb < blocks; kb++ {
					zc[c*blocks+kb] = p.zero(n0+c, kb, rowBytes)
				}
			}
			start := 4*q - n0 // the columns the run before wrote
			if p.N < 4 {
				start = 0
			}
			for r := 0; r < m; {
				n := 1
				switch row := &rows[r]; {
				case pairs != nil && cols == 4 && r+1 < m:
					n = 2
					pr := &pairs[r/2]
					two(chunks, cpb, bpc, &p.B[n0*ldb], ldb, &pr.qa[0], &pr.qs[0], &pr.sa[0], &p.Scales[n0*blocks], &zq[0], 4*blocks, &idx[0], 1<<bpc-1, &out[0])
				case one != nil && cols == 4:
					one(chunks, cpb, bpc, &p.B[n0*ldb], ldb, &row.qa[0], &row.qs[0], &row.sa[0], &p.Scales[n0*blocks], &zq[0], 4*blocks, &idx[0], 1<<bpc-1, &out[0])
				default:
					for c := 0; c < cols; c++ {
						out[c] = nbitsInt8Go(k, cpb, bpc, lay, p.B[(n0+c)*ldb:], row, p.Scales[(n0+c)*blocks:], zq[c*blocks:], &idx)
					}
				}
				for i := 0; i < n; i++ {
					copy(y[(r+i)*p.N+n0+start:(r+i)*p.N+n0+cols], out[4*i+start:4*i+cols])
				}
				r += n
			}
		}
	})
	return true
}

// pairInt8Rows interleaves two prepared rows by chunk (of chunk values)
// for the two-row kernel: per chunk, a's quantized values then b's, and
// a's 16 lanes' qs and sa then b's.
func pairInt8Rows(a, b *int8Row, chunk int) int8Row {
	chunks := len(a.qs) / 16
	p := int8Row{qa: make([]int8, 2*len(a.qa)), qs: make([]float32, 2*len(a.qs)), sa: make([]float32, 2*len(a.sa))}
	for ch := 0; ch < chunks; ch++ {
		copy(p.qa[ch*2*chunk:], a.qa[ch*chunk:(ch+1)*chunk])
		copy(p.qa[ch*2*chunk+chunk:], b.qa[ch*chunk:(ch+1)*chunk])
		copy(p.qs[ch*32:], a.qs[ch*16:(ch+1)*16])
		copy(p.qs[ch*32+16:], b.qs[ch*16:(ch+1)*16])
		copy(p.sa[ch*32:], a.sa[ch*16:(ch+1)*16])
		copy(p.sa[ch*32+16:], b.sa[ch*16:(ch+1)*16])
	}
	return p
}

// nbitsInt8Go is one column of the int8 path in Go over K values: the
// kernel's lanes, operations and order (see above); in a last chunk
// that K does not fill, only the lanes within K.
func nbitsInt8Go(k, cpb, bpc int, lay int8Layout, b []byte, row *int8Row, sc, zc []float32, idx *[16]int32) float32 {
	var acc [16]float32
	blk := 0
	per, mask := 8/lay.bits, byte(1<<lay.bits-1) // values a byte
	for ch := 0; ch*lay.chunk < k; ch++ {
		cb := b[ch*64 : ch*64+min(64, (k-ch*lay.chunk)*64/lay.chunk)]
		qa := row.qa[ch*lay.chunk : (ch+1)*lay.chunk]
		for j := 0; j < 16 && 4*j < len(cb); j++ {
			s := int32(0)
			for t := 0; t < 4; t++ {
				v := cb[4*j+t]
				if lay.split {
					s += int32(v&15)*int32(qa[4*j+t]) + int32(v>>4)*int32(qa[64+4*j+t])
					continue
				}
				for u := 0; u < per; u++ {
					s += int32(v>>(lay.bits*u)&mask) * int32(qa[(4*j+t)*per+u])
				}
			}
			kb := blk + int(idx[j])
			// (Each product converted: rounded on its own, never
			// fused with the sum, as the kernel's VMULPS and VADDPS.)
			tv := float32(s) - float32(zc[kb]*row.qs[16*ch+j])
			sv := float32(sc[kb] * row.sa[16*ch+j])
			acc[j] += float32(tv * sv)
		}
		if (ch+1)%cpb == 0 {
			blk += bpc
		}
	}
	var h [8]float32
	for i := range h {
		h[i] = acc[i+8] + acc[i]
	}
	var g [4]float32
	for i := range g {
		g[i] = h[i+4] + h[i]
	}
	return (g[0] + g[1]) + (g[2] + g[3])
}
