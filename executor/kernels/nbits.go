package kernels

import "fmt"

// NBits is the B operand of com.microsoft MatMulNBits: the weights W
// [K, N] stored transposed, N rows of ceil(K/Block) blocks of Block
// Bits-bit values (packed low bits first, 8/Bits per byte), a float32
// scale per row and block, and a zero point per row and block (Zero; nil:
// 2^(Bits−1)).
type NBits struct {
	K, N, Bits, Block int
	B                 []byte
	Scales            []float32
	Zero              func(n, kb int) float32
}

// nbitsCols is the width of the column chunks MatMulNBits dequantizes at
// a time (a multiple of AddVecMat's wide block).
const nbitsCols = 128

// MatMulNBits sets y [M, N] = a [M, K] · W with W dequantized as
// (q − zero)·scale in float32, a chunk of 128 columns at a time into a
// [K, 128] buffer that AddVecMat (the register-blocked GEMV) multiplies
// each row of a with: B is read once per call and no [K, N] float copy
// is made. Chunks are split over the threads.
func (x *Context) MatMulNBits(p NBits, a []float32, m int, y []float32) error {
	if p.K <= 0 || p.N <= 0 || p.Block <= 0 || (p.Bits != 2 && p.Bits != 4 && p.Bits != 8) {
		return fmt.Errorf("MatMulNBits: K %d, N %d, bits %d, block %d", p.K, p.N, p.Bits, p.Block)
	}
	blocks := (p.K + p.Block - 1) / p.Block
	blob := p.Block * p.Bits / 8
	if len(p.B) < p.N*blocks*blob || len(p.Scales) < p.N*blocks || len(a) < m*p.K || len(y) < m*p.N {
		return fmt.Errorf("MatMulNBits: %d bytes, %d scales, a %d, y %d for K %d, N %d, M %d", len(p.B), len(p.Scales), len(a), len(y), p.K, p.N, m)
	}
	if p.Bits == 4 && p.Block%32 == 0 && p.K%p.Block == 0 {
		x.matMulInt4(p, a, m, y, blocks, blob)
		return nil
	}
	chunks := (p.N + nbitsCols - 1) / nbitsCols
	x.rangeWork(chunks, (m+1)*p.K*nbitsCols*2, func(lo, hi int) {
		w := make([]float32, p.K*nbitsCols)
		for ch := lo; ch < hi; ch++ {
			n0 := ch * nbitsCols
			nb := min(nbitsCols, p.N-n0)
			dequantCols(&p, n0, nb, blocks, blob, w[:p.K*nb])
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
func dequantCols(p *NBits, n0, nb, blocks, blob int, w []float32) {
	perByte := 8 / p.Bits
	mask := (1 << p.Bits) - 1
	def := float32(int(1) << (p.Bits - 1))
	var sc, z [nbitsCols]float32
	var base [nbitsCols]int
	for kb := 0; kb < blocks; kb++ {
		for j := 0; j < nb; j++ {
			n := n0 + j
			sc[j], z[j], base[j] = p.Scales[n*blocks+kb], def, (n*blocks+kb)*blob
			if p.Zero != nil {
				z[j] = p.Zero(n, kb)
			}
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
// covering K exactly: per column, int4Dot sums q·a over each 32 values of
// B's row straight from the packed bytes (no dequantized copy), then
// y = Σ over blocks of scale·(Σ q·a − zero·Σ a).
func (x *Context) matMulInt4(p NBits, a []float32, m int, y []float32, blocks, blob int) {
	groups, per := p.K/32, p.Block/32
	arr := make([]float32, m*p.K)
	asum := make([]float32, m*blocks)
	for r := 0; r < m; r++ {
		ar := a[r*p.K : (r+1)*p.K]
		int4Arrange(ar, arr[r*p.K:(r+1)*p.K])
		for kb := 0; kb < blocks; kb++ {
			s := float32(0)
			for _, v := range ar[kb*p.Block : (kb+1)*p.Block] {
				s += v
			}
			asum[r*blocks+kb] = s
		}
	}
	def := float32(8)
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
					z := def
					if p.Zero != nil {
						z = p.Zero(n, kb)
					}
					acc += p.Scales[n*blocks+kb] * (s - z*asum[r*blocks+kb])
				}
				y[r*p.N+n] = acc
			}
		}
	})
}

// int4Arrange copies a (a multiple of 32 values) in int4Dot's order: in
// each group of 32, the even values of the first 16, their odd values,
// then the same for the second 16.
func int4Arrange(a, out []float32) {
	for g := 0; g+32 <= len(a); g += 32 {
		for h := 0; h < 32; h += 16 {
			for j := 0; j < 8; j++ {
				out[g+h+j] = a[g+h+2*j]
				out[g+h+8+j] = a[g+h+2*j+1]
			}
		}
	}
}

// int4Dot sets out[g] = Σ q·a over each group of 16 bytes of b (32 4-bit
// values, low nibble first) with a arranged by int4Arrange: a Go loop, or
// int4DotAVX2 set during package initialization (never changed
// afterwards).
var int4Dot = int4DotGeneric

func int4DotGeneric(groups int, b []byte, a, out []float32) {
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
