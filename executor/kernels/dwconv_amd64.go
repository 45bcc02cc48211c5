package kernels

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd asmgen && go run ./dwgen -pkg kernels -out ../dwconv_amd64.s -stubs ../dwconv_stub_amd64.go"

var _ = func() bool {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		dwRows = dwRowsSIMD
		split2Head = split2SIMD
		gatherRows = gatherRowsSIMD
		dwFillRows = dwFillRowsSIMD
		gapSum8 = gapSum8SIMD
		dwPack8 = dwPack8SIMD
		dwUnpack8 = dwUnpack8SIMD
		dwPix8 = dwPix8SIMD
	}
	return true
}()

// dwRowsSIMD runs dwRows with AVX2+FMA (n a multiple of 8), after
// checking that every read and write is inside x and y.
func dwRowsSIMD(rows, n int, x []float32, ss int, offs []int, w []float32, bias, lo, hi float32, y []float32, ldy int) {
	if !dwRowsSIMDOK(rows, n, x, ss, offs, w, bias, lo, hi, y, ldy) {
		return
	}
	dwRowsAVX2(rows, n/8, &x[0], ss, &offs[0], &w[0], len(offs), bias, lo, hi, &y[0], ldy)
}

// dwRowsSIMDOK reports whether the SIMD row kernels may run on these
// rows: false for no rows, and, after running them with dwRowsGo, for n
// not a multiple of 8; otherwise it checks that every read and write is
// inside x, w and y (a panic here, not a stray access in assembly).
func dwRowsSIMDOK(rows, n int, x []float32, ss int, offs []int, w []float32, bias, lo, hi float32, y []float32, ldy int) bool {
	if rows <= 0 || n <= 0 || len(offs) == 0 {
		return false
	}
	if n%8 != 0 {
		dwRowsGo(rows, n, x, ss, offs, w, bias, lo, hi, y, ldy)
		return false
	}
	_ = x[(rows-1)*ss+n-1+maxOffset(offs)]
	_ = y[(rows-1)*ldy+n-1]
	_ = w[len(offs)-1]
	return true
}

// split2SIMD splits the multiple-of-8 head of src's pairs with AVX2 and
// returns the pairs done.
func split2SIMD(src, first, second []float32) int {
	n := min(len(src)/2, len(first), len(second)) &^ 7
	if n > 0 {
		split2AVX2(n, &src[0], &first[0], &second[0])
	}
	return n
}

// gatherRowsSIMD runs gatherRows with AVX2 when w is a multiple of 8,
// after checking that every read and write is inside src and dst.
func gatherRowsSIMD(dst, src []float32, offs []int, w int) {
	if w%8 != 0 || len(offs) == 0 || w == 0 {
		gatherRowsGo(dst, src, offs, w)
		return
	}
	_ = src[maxOffset(offs)+w-1]
	_ = dst[len(offs)*w-1]
	gatherRowsAVX2(len(offs), &offs[0], &src[0], w/8, &dst[0])
}

// maxOffset is the largest of offs (not empty), which must all be ≥ 0:
// with it the callers check every read of the assembly.
func maxOffset(offs []int) int {
	hi := 0
	for _, o := range offs {
		if o < 0 {
			panic("kernels: negative offset")
		}
		hi = max(hi, o)
	}
	return hi
}

// dwFillRowsSIMD is dwFillRows with AVX2 (one call per plane), after
// checking that every read and write is inside src and pp.
func dwFillRowsSIMD(sw, h, w int, src, pp []float32, o0, o1, pitch int) bool {
	if h <= 0 || w <= 0 || o0 < 0 || o1 < 0 || pitch < 0 {
		return false
	}
	_ = src[h*w-1]
	switch sw {
	case 1:
		if pitch < w {
			return false
		}
		_ = pp[o0+(h-1)*pitch+w-1]
		copyRowsAVX2(h, w, &src[0], &pp[o0], pitch)
		return true
	case 2:
		ne, no := (w+1)/2, w/2
		if pitch < ne {
			return false
		}
		_ = pp[o0+(h-1)*pitch+ne-1]
		if no > 0 {
			_ = pp[o1+(h-1)*pitch+no-1]
		}
		// With w = 1 no odd column is written: o1 may be the end of pp.
		od := o0
		if no > 0 {
			od = o1
		}
		split2RowsAVX2(h, w, &src[0], &pp[o0], &pp[od], pitch)
		return true
	}
	return false
}

// gapSum8SIMD runs gapSum8AVX2 over the multiple-of-4 head of the n
// elements of each row, after checking that x holds the 8 rows.
func gapSum8SIMD(x []float32, stride, n int, s *[8]float64) int {
	k := n &^ 3
	if k == 0 {
		return 0
	}
	_ = x[7*stride+n-1]
	gapSum8AVX2(k/4, &x[0], stride, &s[0])
	return k
}

// dwPack8SIMD is dwPack8 with AVX2 (the last len(idx) mod 8 as a block
// of 8 again, the same values), after checking every read and write
// (top: the largest of idx, dwLayout's).
func dwPack8SIMD(src []float32, cs int, idx []int, top int, dst []float32) {
	n := len(idx)
	if n < 8 || cs < n {
		panic("kernels: dwPack8 geometry")
	}
	_ = src[7*cs+n-1]
	_ = dst[top+7]
	dwPackAVX2(n/8, &src[0], cs, &idx[0], &dst[0])
	if n%8 != 0 {
		dwPackAVX2(1, &src[n-8], cs, &idx[n-8], &dst[0])
	}
}

// dwUnpack8SIMD is dwUnpack8 with AVX2 (the last n mod 8 as a block of
// 8 again), after checking every read and write.
func dwUnpack8SIMD(src, dst []float32, cs, sp, n int) {
	if n < 8 || cs < n || sp < 8 {
		panic("kernels: dwUnpack8 geometry")
	}
	_ = src[sp*(n-1)+7]
	_ = dst[7*cs+n-1]
	dwUnpackAVX2(n/8, &src[0], &dst[0], cs, sp)
	if n%8 != 0 {
		dwUnpackAVX2(1, &src[sp*(n-8)], &dst[n-8], cs, sp)
	}
}

// dwPix8SIMD is dwPix8 with AVX2+FMA.
func dwPix8SIMD(x []float32, pix, offs []int, top int, w, bias []float32, lo, hi float32, y []float32) {
	dwPixSIMD(8, x, pix, offs, top, w, bias, lo, hi, y)
}

// dwPixSIMD runs dwPixAVX2 (lanes 8) or dwPixAVX512 (16) on groups of
// dwPixAcc pixels (the last len(pix) mod dwPixAcc as a group again: the
// same values), after checking every read and write (top: the largest
// pix[p] + offs[t], dwLayout's).
func dwPixSIMD(lanes int, x []float32, pix, offs []int, top int, w, bias []float32, lo, hi float32, y []float32) {
	const g = 8 // dwPixAcc of the generator
	n := len(pix)
	if n < g || len(offs) == 0 {
		panic("kernels: dwPix geometry")
	}
	_ = x[top+lanes-1]
	_ = w[lanes*len(offs)-1]
	_ = bias[lanes-1]
	_ = y[lanes*n-1]
	k := dwPixAVX2
	if lanes == 16 {
		k = dwPixAVX512
	}
	k(n/g, &x[0], &pix[0], &offs[0], &w[0], len(offs), &bias[0], lo, hi, &y[0])
	if n%g != 0 {
		k(1, &x[0], &pix[n-g], &offs[0], &w[0], len(offs), &bias[0], lo, hi, &y[lanes*(n-g)])
	}
}
