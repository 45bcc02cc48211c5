package kernels

import "fmt"

// NBits is the B operand of com.microsoft MatMulNBits: the weights W
// [K, N] stored transposed, N rows of ceil(K/Block) blocks of Block
// Bits-bit values (packed low bits first, 8/Bits per byte), a float32
// scale per row and block, and a zero point per row and block: ZeroPoints
// (packed as com.microsoft's uint8 zero_points: per row
// ceil(blocks·Bits/8) bytes, low bits first) if set, else Zero if set,
// else 2^(Bits−1).
type NBits struct {
	K, N, Bits, Block int
	B                 []byte
	Scales            []float32
	ZeroPoints        []byte
	Zero              func(n, kb int) float32
	// Int8A: A is quantized to int8 by B's blocks as ONNX Runtime does
	// for accuracy_level 4 (nbits_int8.go), where int8Fits takes the
	// shape (the bits and blocks ONNX Runtime quantizes A for) and A is
	// finite; else the float32 product.
	Int8A bool
	// ZeroF (nil: none) is the zero points as ZeroFloats makes them, kept
	// by the caller across calls: the int8 path reads them in place
	// instead of unpacking ZeroPoints (or calling Zero) on every call.
	ZeroF []float32
}

// ZeroFloats returns p's zero points as floats, one per column and block
// ([N, blocks]; 2^(Bits−1) where the model has none).
func (p *NBits) ZeroFloats() []float32 {
	blocks := (p.K + p.Block - 1) / p.Block
	perByte := 8 / p.Bits
	rowBytes := (blocks + perByte - 1) / perByte
	z := make([]float32, p.N*blocks)
	for n := 0; n < p.N; n++ {
		for kb := 0; kb < blocks; kb++ {
			z[n*blocks+kb] = p.zero(n, kb, rowBytes)
		}
	}
	return z
}

// zero is the zero point of row n, block kb (rowBytes: ZeroPoints' bytes
// per row).
func (p *NBits) zero(n, kb, rowBytes int) float32 {
	switch {
	case p.ZeroPoints != nil:
		per := 8 / p.Bits
		by := int(p.ZeroPoints[n*rowBytes+kb/per])
		return float32((by >> (p.Bits * (kb % per))) & (1<<p.Bits - 1))
	case p.Zero != nil:
		return p.Zero(n, kb)
	}
	return float32(int(1) << (p.Bits - 1))
}

// nbitsCols is the width of the column chunks MatMulNBits dequantizes at
// a time (a multiple of AddVecMat's wide block).
const nbitsCols = 128

// MatMulNBits sets y [M, N] = a [M, K] · W with W dequantized as
// (q − zero)·scale in float32. 4- and 8-bit blocks of a multiple of 32
// values that cover K exactly, N ≥ 4, take matMulNBitsFast (SIMD, 4
// columns per pass, straight from the packed bytes; without SIMD, 4-bit
// takes matMulInt4); the rest is dequantized a chunk of 128 columns at a
// time into a [K, 128] buffer that AddVecMat (the register-blocked GEMV)
// multiplies each row of a with. B is read once per call and no [K, N]
// float copy is made. Columns are split over the threads.
func (x *Context) MatMulNBits(p NBits, a []float32, m int, y []float32) error {
	if p.K <= 0 || p.N <= 0 || p.Block <= 0 || (p.Bits != 2 && p.Bits != 4 && p.Bits != 8) {
		return fmt.Errorf("MatMulNBits: K %d, N %d, bits %d, block %d", p.K, p.N, p.Bits, p.Block)
	}
	blocks := (p.K + p.Block - 1) / p.Block
	blob := p.Block * p.Bits / 8
	if len(p.B) < p.N*blocks*blob || len(p.Scales) < p.N*blocks || len(a) < m*p.K || len(y) < m*p.N {
		return fmt.Errorf("MatMulNBits: %d bytes, %d scales, a %d, y %d for K %d, N %d, M %d", len(p.B), len(p.Scales), len(a), len(y), p.K, p.N, m)
	}
	perByte := 8 / p.Bits
	rowBytes := (blocks + perByte - 1) / perByte
	if p.ZeroF != nil && len(p.ZeroF) < p.N*blocks {
		return fmt.Errorf("MatMulNBits: %d zero points for N %d, %d blocks", len(p.ZeroF), p.N, blocks)
	}
	if p.ZeroPoints != nil && len(p.ZeroPoints) < p.N*rowBytes {
		return fmt.Errorf("MatMulNBits: %d zero point bytes for N %d, %d blocks", len(p.ZeroPoints), p.N, blocks)
	}
	if p.Int8A && int8Fits(&p) && x.matMulNBitsInt8(p, a, m, y, blocks, rowBytes) {
		return nil
	}
	if nbitsFast.w > 0 && (p.Bits == 4 || p.Bits == 8) && p.Block%32 == 0 && p.K%p.Block == 0 && p.N >= 4 {
		x.matMulNBitsFast(p, a, m, y, blocks, blob, rowBytes)
		return nil
	}
	if p.Bits == 4 && p.Block%32 == 0 && p.K%p.Block == 0 {
		x.matMulInt4(p, a, m, y, blocks, blob, rowBytes)
		return nil
	}
	chunks := (p.N + nbitsCols - 1) / nbitsCols
	x.rangeWork(chunks, (m+1)*p.K*nbitsCols*2, func(lo, hi int) {
		w := make([]float32, p.K*nbitsCols)
		for ch := lo; ch < hi; ch++ {
			n0 := ch * nbitsCols
			nb := min(nbitsCols, p.N-n0)
			dequantCols(&p, n0, nb, blocks, blob, rowBytes, w[:p.K*nb])
			for r := 0; r < m; r++ {
				yr := y[r*p.N+n0 : r*p.N+n0+nb]
				clear(yr)
				AddVecMat(a[r*p.K:(r+1)*p.K], w[:p.K*nb], yr, p.K, nb)
			}
		}
	})
	return nil
}

// dequantCols writes columns [n0, n0+nb) of W into w ([K, nb] row-major),
// row by row of w (the scales and zero points of the chunk's columns for
// one block at a time), so that the writes are sequential and the bytes
// of a block (read for each of its rows) stay in L1.
func dequantCols(p *NBits, n0, nb, blocks, blob, rowBytes int, w []float32) {
	perByte := 8 / p.Bits
	mask := (1 << p.Bits) - 1
	var sc, z [nbitsCols]float32
	var base [nbitsCols]int
	for kb := 0; kb < blocks; kb++ {
		for j := 0; j < nb; j++ {
			n := n0 + j
			sc[j], z[j], base[j] = p.Scales[n*blocks+kb], p.zero(n, kb, rowBytes), (n*blocks+kb)*blob
		}
		k0 := kb * p.Block
		for i := 0; i < p.Block && k0+i < p.K; i++ {
			row := w[(k0+i)*nb : (k0+i+1)*nb]
			off, shift := i/perByte, p.Bits*(i%perByte)
			for j := range row {
				q := (int(p.B[base[j]+off]) >> shift) & mask
				row[j] = (float32(q) - z[j]) * sc[j]
			}
		}
	}
}

// matMulInt4 is MatMulNBits for 4-bit blocks of a multiple of 32 values
// covering K exactly where matMulNBitsFast does not run (no SIMD kernels,
// or N < 4): per column, int4Dot sums q·a over each 32 values of B's row
// straight from the packed bytes (no dequantized copy), then y = Σ over
// blocks of scale·(Σ q·a − zero·Σ a).
func (x *Context) matMulInt4(p NBits, a []float32, m int, y []float32, blocks, blob, rowBytes int) {
	groups, per := p.K/32, p.Block/32
	arr := make([]float32, m*p.K)
	asum := make([]float32, m*blocks)
	for r := 0; r < m; r++ {
		ar := a[r*p.K : (r+1)*p.K]
		nbitsArrange(ar, arr[r*p.K:(r+1)*p.K], 8)
		for kb := 0; kb < blocks; kb++ {
			s := float32(0)
			for _, v := range ar[kb*p.Block : (kb+1)*p.Block] {
				s += v
			}
			asum[r*blocks+kb] = s
		}
	}
	x.rangeWork(p.N, (m+1)*p.K, func(lo, hi int) {
		gs := make([]float32, groups)
		for n := lo; n < hi; n++ {
			row := p.B[n*blocks*blob : (n+1)*blocks*blob]
			for r := 0; r < m; r++ {
				int4Dot(groups, row, arr[r*p.K:(r+1)*p.K], gs)
				acc := float32(0)
				for kb := 0; kb < blocks; kb++ {
					s := float32(0)
					for _, v := range gs[kb*per : (kb+1)*per] {
						s += v
					}
					acc += p.Scales[n*blocks+kb] * (s - p.zero(n, kb, rowBytes)*asum[r*blocks+kb])
				}
				y[r*p.N+n] = acc
			}
		}
	})
}

// nbitsArrange copies a (a multiple of 32 values) in the order the 4-bit
// kernels read it, for vectors of w values (8 or 16): in each run of 2w
// values, the w even ones (the low nibbles of w bytes), then the w odd
// ones (their high nibbles).
func nbitsArrange(a, out []float32, w int) {
	for g := 0; g+2*w <= len(a); g += 2 * w {
		for j := 0; j < w; j++ {
			out[g+j] = a[g+2*j]
			out[g+w+j] = a[g+2*j+1]
		}
	}
}

// nbitsKernel is a 4-column MatMulNBits kernel (nbitsGemv in asmgen).
type nbitsKernel func(blocks, gpb int, b *byte, ldb int, a *float32, lda int, asum *float32, ldas int, sc *float32, ldsc int, zs, out *float32)

// nbitsKernels are the 4-column MatMulNBits kernels of one vector width
// w (0: none) for 4- and 8-bit values, for one row of A and (when not
// nil) two, set during package initialization (never changed
// afterwards).
type nbitsKernels struct {
	w             int
	four, eight   nbitsKernel
	four2, eight2 nbitsKernel
}

var nbitsFast nbitsKernels

// matMulNBitsFast is MatMulNBits for 4- and 8-bit blocks of a multiple of
// 32 values covering K exactly and N ≥ 4, on nbitsFast: 4 columns per
// kernel call, straight from the packed bytes, each row of a (arranged
// for 4 bits, with its lane sums per block), or each pair of rows where
// a 2-row kernel exists (the bytes widened once for both), against the 4
// columns' bytes (read from memory for the first rows, from cache for
// the next). Threads
// take runs of 4 columns; the last run ends at column N (overlapping the
// one before) and writes only its new columns, so every output is the
// same chain of operations for any thread count.
func (x *Context) matMulNBitsFast(p NBits, a []float32, m int, y []float32, blocks, blob, rowBytes int) {
	w := nbitsFast.w
	fn, fn2 := nbitsFast.four, nbitsFast.four2
	if p.Bits == 8 {
		fn, fn2 = nbitsFast.eight, nbitsFast.eight2
	}
	arr := make([]float32, m*p.K)
	asum := make([]float32, m*blocks*w)
	for r := 0; r < m; r++ {
		ar, dst := a[r*p.K:(r+1)*p.K], arr[r*p.K:(r+1)*p.K]
		if p.Bits == 4 {
			nbitsArrange(ar, dst, w)
		} else {
			copy(dst, ar)
		}
		for kb := 0; kb < blocks; kb++ {
			s := asum[(r*blocks+kb)*w : (r*blocks+kb+1)*w]
			for i := kb * p.Block; i < (kb+1)*p.Block; i += w {
				for j, v := range dst[i : i+w] {
					s[j] += v
				}
			}
		}
	}
	ldb := blocks * blob
	x.rangeWork((p.N+3)/4, (m+1)*p.K*4, func(lo, hi int) {
		zs := make([]float32, 4*blocks) // the 4 columns' zero points per block
		def := float32(int(1) << (p.Bits - 1))
		for i := range zs {
			zs[i] = def
		}
		var out [8]float32
		for q := lo; q < hi; q++ {
			n0 := min(4*q, p.N-4)
			for c := 0; c < 4; c++ {
				switch zr := p.ZeroPoints; {
				case zr != nil && p.Bits == 8:
					for kb, v := range zr[(n0+c)*rowBytes : (n0+c)*rowBytes+blocks] {
						zs[4*kb+c] = float32(v)
					}
				case zr != nil:
					// two blocks a byte, low nibble first
					zr = zr[(n0+c)*rowBytes : (n0+c)*rowBytes+blocks/2]
					zc := zs[c:]
					for i, v := range zr {
						zc[8*i] = float32(v & 15)
						zc[8*i+4] = float32(v >> 4)
					}
					if blocks%2 == 1 {
						zs[4*(blocks-1)+c] = float32(p.ZeroPoints[(n0+c)*rowBytes+blocks/2] & 15)
					}
				case p.Zero != nil:
					for kb := 0; kb < blocks; kb++ {
						zs[4*kb+c] = p.Zero(n0+c, kb)
					}
				}
			}
			for r := 0; r < m; {
				rows := 1
				if fn2 != nil && r+1 < m {
					rows = 2
					fn2(blocks, p.Block/32, &p.B[n0*ldb], ldb, &arr[r*p.K], 4*p.K, &asum[r*blocks*w], 4*blocks*w, &p.Scales[n0*blocks], 4*blocks, &zs[0], &out[0])
				} else {
					fn(blocks, p.Block/32, &p.B[n0*ldb], ldb, &arr[r*p.K], 4*p.K, &asum[r*blocks*w], 4*blocks*w, &p.Scales[n0*blocks], 4*blocks, &zs[0], &out[0])
				}
				for i := 0; i < rows; i++ {
					copy(y[(r+i)*p.N+4*q:(r+i)*p.N+n0+4], out[4*i+4*q-n0:4*i+4])
				}
				r += rows
			}
		}
	})
}

// int4Dot sets out[g] = Σ q·a over each group of 16 bytes of b (32 4-bit
// values, low nibble first) with a arranged by nbitsArrange for w = 8
// (the path where nbitsFast is not set).
func int4Dot(groups int, b []byte, a, out []float32) {
	for g := 0; g < groups; g++ {
		bg, ag := b[16*g:16*g+16], a[32*g:32*g+32]
		s := float32(0)
		for h := 0; h < 2; h++ {
			for j := 0; j < 8; j++ {
				v := bg[8*h+j]
				s += float32(v&15)*ag[16*h+j] + float32(v>>4)*ag[16*h+8+j]
			}
		}
		out[g] = s
	}
}
