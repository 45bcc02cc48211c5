package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// ONNX Runtime's contrib operators (domain com.microsoft) that LLM exports
// carry, computed on the host in float64 as ONNX Runtime's CPU kernels
// define them.

func registerContrib(r registry) {
	registerContribNorm(r)
	registerContribAttention(r)
	registerContribQuant(r)
	r.impl("com.microsoft", "MatMulNBits").host = hostMatMulNBits
}

// hostMatMulNBits is Y = A · dequant(B)ᵀ (+ bias): B holds the weights
// transposed, [N, blocks, blob] bytes of `bits`-bit values packed low bits
// first, blocks of block_size along K; scales [N·blocks] (or [N, blocks]);
// zero_points packed the same way per row (or in the scales' type), else
// 2^(bits-1).
func hostMatMulNBits(c *lctx) error {
	K, N := int(c.AInt("K", 0)), int(c.AInt("N", 0))
	bits, block := int(c.AInt("bits", 4)), int(c.AInt("block_size", 0))
	if K <= 0 || N <= 0 || block <= 0 || (bits != 4 && bits != 8 && bits != 2) {
		return fmt.Errorf("MatMulNBits: K %d, N %d, bits %d, block_size %d: want K, N, block_size > 0 and bits 2, 4 or 8", K, N, bits, block)
	}
	ah, err := c.H(0)
	if err != nil {
		return err
	}
	bh, err := c.H(1)
	if err != nil {
		return err
	}
	sh, err := c.H(2)
	if err != nil {
		return err
	}
	if len(ah.shape) < 1 || ah.shape[len(ah.shape)-1] != K {
		return fmt.Errorf("MatMulNBits: A has shape %v, K is %d", ah.shape, K)
	}
	blocks := (K + block - 1) / block
	blob := block * bits / 8
	if bh.size() != N*blocks*blob || sh.size() != N*blocks {
		return fmt.Errorf("MatMulNBits: B has %d bytes and scales %d values; K %d, N %d, %d-bit blocks of %d need %d and %d",
			bh.size(), sh.size(), K, N, bits, block, N*blocks*blob, N*blocks)
	}
	if c.Has(4) {
		return fmt.Errorf("MatMulNBits: g_idx (input 4) is not supported")
	}
	perByte := 8 / bits
	mask := (1 << bits) - 1
	zp := func(n, kb int) float64 { return float64(int(1) << (bits - 1)) }
	if c.Has(3) {
		zh, err := c.H(3)
		if err != nil {
			return err
		}
		if zh.dt == canonical.Uint8 {
			// the bytes as they are (no float64 copy per run: the kernel
			// path reads them packed)
			zb, ok := zh.data.([]uint8)
			if !ok {
				z := zh.f64()
				zb = make([]uint8, len(z))
				for i, v := range z {
					zb[i] = uint8(v)
				}
			}
			rowBytes := (blocks + perByte - 1) / perByte
			if len(zb) != N*rowBytes {
				return fmt.Errorf("MatMulNBits: zero_points has %d bytes, want %d", len(zb), N*rowBytes)
			}
			zp = func(n, kb int) float64 {
				by := int(zb[n*rowBytes+kb/perByte])
				return float64((by >> (bits * (kb % perByte))) & mask)
			}
		} else {
			z := zh.f64()
			if len(z) != N*blocks {
				return fmt.Errorf("MatMulNBits: zero_points has %d values, want %d", len(z), N*blocks)
			}
			zp = func(n, kb int) float64 { return z[n*blocks+kb] }
		}
	}
	if done, err := matMulNBitsF32(c, ah, bh, sh, K, N, bits, block, zp); done || err != nil {
		return err
	}
	b, s := bh.f64(), sh.f64()
	// W [K, N], dequantized.
	w := make([]float64, K*N)
	for n := 0; n < N; n++ {
		for kb := 0; kb < blocks; kb++ {
			sc, z := s[n*blocks+kb], zp(n, kb)
			base := (n*blocks + kb) * blob
			for i := 0; i < block && kb*block+i < K; i++ {
				by := int(b[base+i/perByte])
				q := (by >> (bits * (i % perByte))) & mask
				w[(kb*block+i)*N+n] = (float64(q) - z) * sc
			}
		}
	}
	y, ys, err := matmulF(ah.f64(), ah.shape, w, []int{K, N})
	if err != nil {
		return fmt.Errorf("MatMulNBits: %w", err)
	}
	if c.Has(5) {
		biasH, err := c.H(5)
		if err != nil {
			return err
		}
		bias := biasH.f64()
		if len(bias) != N {
			return fmt.Errorf("MatMulNBits: bias has %d values, N is %d", len(bias), N)
		}
		for i := range y {
			y[i] += bias[i%N]
		}
	}
	c.OutH(0, castF64(y, ys, ah.dt, false, "nearest"))
	return nil
}
