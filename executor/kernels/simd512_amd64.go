package kernels

import (
	"os"

	"golang.org/x/sys/cpu"
)

// init installs the 16-lane kernels (depthwise rows, sigmoid, SiLU,
// MulBlocks; Softmax's rows with AVX-512DQ and VL) when the CPU has
// AVX-512F, unless ONNXCONV_SGEMM_KERNEL asks for AVX2 or the generic
// kernels (so that both paths can be tested on one machine).
// Each gives the bits of the AVX2 kernel it replaces.
func init() {
	if want := os.Getenv(KernelEnv); want == "avx2" || want == "generic" {
		return
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F {
		dwRows = dwRowsSIMD512
		sigmoidVec32 = func(x, y []float32) { sigmoidSIMD512(x, y, false) }
		siluVec = func(x, y []float32) { sigmoidSIMD512(x, y, true) }
		mulBlocks = mulBlocksSIMD512
		if cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL {
			softmaxRows = softmaxRowsAVX512
		}
		packA12Gather, packBT32Gather = packA12AVX512, packBT32AVX512
		tiles := []*dwTile{dwTileAVX512(3, 1), dwTileAVX512(3, 2), dwTileAVX512(5, 1), dwTileAVX512(5, 2)}
		dwTileFor = func(k, s int) *dwTile {
			for _, t := range tiles {
				if t.k == k && t.s == s {
					return t
				}
			}
			return nil
		}
		dwPix16 = func(x []float32, pix, offs []int, top int, w, bias []float32, lo, hi float32, y []float32) {
			dwPixSIMD(16, x, pix, offs, top, w, bias, lo, hi, y)
		}
	}
}

// mulBlocksSIMD512 runs MulBlocks' blocks in one mulBlocksAVX512 call
// after checking that x and y hold them all.
func mulBlocksSIMD512(x, b, y []float32, inner int) {
	if len(b) == 0 || inner <= 0 {
		return
	}
	_ = x[len(b)*inner-1]
	_ = y[len(b)*inner-1]
	mulBlocksAVX512(len(b), inner, &x[0], &b[0], &y[0])
}

// dwRowsSIMD512 runs dwRows with AVX-512F on the multiple-of-16 head of
// the columns and AVX2 on the 8 after it (n a multiple of 8; the same
// chains of FMAs in either, so the same bits), after checking that every
// read and write is inside x and y.
func dwRowsSIMD512(rows, n int, x []float32, ss int, offs []int, w []float32, bias, lo, hi float32, y []float32, ldy int) {
	if !dwRowsSIMDOK(rows, n, x, ss, offs, w, bias, lo, hi, y, ldy) {
		return
	}
	n16 := n &^ 15
	if n16 > 0 {
		dwRowsAVX512(rows, n16/16, &x[0], ss, &offs[0], &w[0], len(offs), bias, lo, hi, &y[0], ldy)
	}
	if n16 < n {
		dwRowsAVX2(rows, 1, &x[n16], ss, &offs[0], &w[0], len(offs), bias, lo, hi, &y[n16], ldy)
	}
}

// sigmoidSIMD512 is sigmoidSIMD with AVX-512F over the multiple-of-16
// head; the rest as sigmoidSIMD (AVX2 on 8 lanes, then a padded block).
func sigmoidSIMD512(x, y []float32, silu bool) {
	y = y[:len(x)]
	n := len(x) &^ 15
	if n > 0 {
		if silu {
			siluExpAVX512(n, &x[0], &y[0])
		} else {
			sigmoidExpAVX512(n, &x[0], &y[0])
		}
	}
	sigmoidSIMD(x[n:], y[n:], silu)
}

// dwTileAVX512 returns the AVX-512 tile kernel for k×k taps at stride s
// (dwTile<k>s<s>AVX512), or nil. Its run checks every read and write
// against x, w and y before the assembly.
func dwTileAVX512(k, s int) *dwTile {
	type tileAsm func(rowBlocks, colBlocks int, x *float32, pw int, w *float32, bias, lo, hi float32, y *float32, ldy int)
	var f tileAsm
	rows := 8
	switch {
	case k == 3 && s == 1:
		f = dwTile3s1AVX512
	case k == 3 && s == 2:
		f = dwTile3s2AVX512
	case k == 5 && s == 1:
		f, rows = dwTile5s1AVX512, 6
	case k == 5 && s == 2:
		f, rows = dwTile5s2AVX512, 6
	default:
		return nil
	}
	t := &dwTile{k: k, s: s, rows: rows}
	t.run = func(rowBlocks, colBlocks int, x []float32, pw int, w []float32, bias, lo, hi float32, y []float32, ldy int) {
		if rowBlocks <= 0 || colBlocks <= 0 {
			return
		}
		if pw <= 0 || ldy < 0 {
			panic("kernels: dwTile geometry")
		}
		// The last output row's last tap: padded row (o·s + k−1), phase
		// s−1, column (k−1)/s + 16·colBlocks − 1.
		o := rows*rowBlocks - 1
		_ = x[((o*s+k-1)*s+s-1)*pw+(k-1)/s+dwTileCols*colBlocks-1]
		_ = w[k*k-1]
		_ = y[o*ldy+dwTileCols*colBlocks-1]
		f(rowBlocks, colBlocks, &x[0], pw, &w[0], bias, lo, hi, &y[0], ldy)
	}
	return t
}
