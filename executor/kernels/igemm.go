package kernels

import (
	"fmt"
	"unsafe"
)

// Integer GEMM for ConvInteger, MatMulInteger, QLinearConv and
// QLinearMatMul: 8-bit operands with their zero points already
// subtracted (so every value lies in [−255, 255] and fits int16),
// products summed in int32. Both operands are packed as pairs of int16
// along k (A: mr rows per panel, B: nr columns per panel), so that one
// VPMADDWD gives a[i,2p]·b[2p,j] + a[i,2p+1]·b[2p+1,j] in int32 — exact,
// unlike VPMADDUBSW whose int16 sums saturate (ONNX Runtime's MLAS avoids
// it for the same reason). Every element of C is the exact int32 sum of
// its products (wrapping like ONNX Runtime's int32 accumulators), so the
// result is the same integer whatever the kernel or the thread count.

// iKernel computes an mr×nr int32 tile of C (row stride ldc) from kp
// steps of packed pairs of A (mr pairs a step) and B (nr pairs a step).
type iKernel struct {
	name   string
	mr, nr int
	fn     func(kp int, a, b *int16, c *int32, ldc int)
}

var genericIKernel = iKernel{name: "generic", mr: 6, nr: 16, fn: igemmGeneric}

// availableI lists the integer kernels this CPU runs, slowest first
// (the amd64 file appends the SIMD ones); read-only after init.
var availableI = []iKernel{genericIKernel}

// bestI is the integer kernel in use, chosen in init as best is (the
// same KernelEnv names force a slower one).
var bestI iKernel

// IGemmKernel names the integer GEMM kernel in use (generic, avx2 or
// avx512), for bench and reports.
func IGemmKernel() string { return bestI.name }

func igemmGeneric(kp int, a, b *int16, c *int32, ldc int) {
	const mr, nr = 6, 16
	pa := unsafe.Slice(a, 2*mr*kp)
	pb := unsafe.Slice(b, 2*nr*kp)
	pc := unsafe.Slice(c, (mr-1)*ldc+nr)
	var acc [mr][nr]int32
	for p := 0; p < kp; p++ {
		ap, bp := pa[2*mr*p:2*mr*(p+1)], pb[2*nr*p:2*nr*(p+1)]
		for i := 0; i < mr; i++ {
			a0, a1 := int32(ap[2*i]), int32(ap[2*i+1])
			for j := 0; j < nr; j++ {
				acc[i][j] += a0*int32(bp[2*j]) + a1*int32(bp[2*j+1])
			}
		}
	}
	for i := 0; i < mr; i++ {
		copy(pc[i*ldc:i*ldc+nr], acc[i][:])
	}
}

// IPacked is an m×k int16 matrix A packed for the integer kernel in use
// (panels of mr rows, k rounded up to pairs, missing rows and the pad
// zero).
type IPacked struct {
	mr, m, kp int
	data      []int16
}

// PackIA packs the m×k row-major int16 matrix a (row stride lda).
func PackIA(m, k int, a []int16, lda int) (*IPacked, error) { return packIA(bestI.mr, m, k, a, lda) }

func packIA(mr, m, k int, a []int16, lda int) (*IPacked, error) {
	if m < 0 || k < 0 || m > 0 && len(a) < (m-1)*lda+k {
		return nil, fmt.Errorf("integer GEMM: A of %d values for %d×%d (stride %d)", len(a), m, k, lda)
	}
	kp := (k + 1) / 2
	panels := (m + mr - 1) / mr
	p := &IPacked{mr: mr, m: m, kp: kp, data: make([]int16, panels*kp*mr*2)}
	for i := 0; i < m; i++ {
		base := (i/mr)*kp*mr*2 + (i%mr)*2
		row := a[i*lda : i*lda+k]
		for q, v := range row {
			p.data[base+(q/2)*mr*2+q%2] = v
		}
	}
	return p, nil
}

// IColumns fills dst (kp steps of nr pairs: dst[(p·nr+j)·2+k%2] is
// B[k, j0+j]) with the nr columns of B from column j0 (columns past the
// matrix zero); it is how an integer GEMM reads B — a matrix, or an
// image read as im2col columns without the columns being stored.
type IColumns func(dst []int16, j0, nr int)

// IMatrix returns the IColumns of the k×n row-major int16 matrix b.
func IMatrix(k, n int, b []int16) IColumns {
	return func(dst []int16, j0, nr int) {
		clear(dst)
		w := min(nr, n-j0)
		for q := 0; q < k; q++ {
			row := b[q*n+j0 : q*n+j0+w]
			o := (q/2)*nr*2 + q%2
			for j, v := range row {
				dst[o+2*j] = v
			}
		}
	}
}

// IGemm sets the m×n int32 matrix C (row stride ldc) to A·B, A packed by
// PackIA (m×k) and B's columns given by cols. Column panels are split
// over the Context's threads.
func (x *Context) IGemm(n int, pa *IPacked, cols IColumns, c []int32, ldc int) error {
	return x.igemm(bestI, n, pa, cols, c, ldc)
}

func (x *Context) igemm(mk iKernel, n int, pa *IPacked, cols IColumns, c []int32, ldc int) error {
	if pa.mr != mk.mr {
		return fmt.Errorf("integer GEMM: A packed for %d-row panels, the kernel takes %d", pa.mr, mk.mr)
	}
	m, kp, nr, mr := pa.m, pa.kp, mk.nr, mk.mr
	if m == 0 || n == 0 {
		return nil
	}
	if len(c) < (m-1)*ldc+n {
		return fmt.Errorf("integer GEMM: C of %d values for %d×%d (stride %d)", len(c), m, n, ldc)
	}
	if kp == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return nil
	}
	panels := (n + nr - 1) / nr
	chunks, _ := x.chunks(m*n*max(kp, 1)*2, panels)
	parts := split(panels, chunks, 1)
	run := func(lo, hi int) {
		bp := make([]int16, kp*nr*2)
		var tile []int32
		for q := lo; q < hi; q++ {
			j0 := q * nr
			cols(bp, j0, nr)
			w := min(nr, n-j0)
			for i0 := 0; i0 < m; i0 += mr {
				a, b := &pa.data[(i0/mr)*kp*mr*2], &bp[0]
				if w == nr && i0+mr <= m {
					mk.fn(kp, a, b, &c[i0*ldc+j0], ldc)
					continue
				}
				if tile == nil {
					tile = make([]int32, mr*nr)
				}
				mk.fn(kp, a, b, &tile[0], nr)
				for i := i0; i < min(i0+mr, m); i++ {
					copy(c[i*ldc+j0:i*ldc+j0+w], tile[(i-i0)*nr:(i-i0)*nr+w])
				}
			}
		}
	}
	if len(parts) <= 2 {
		run(0, panels)
		return nil
	}
	x.parallel(len(parts)-1, func(i int) { run(parts[i], parts[i+1]) })
	return nil
}

// IConv describes the im2col matrix of one image for an integer
// convolution: C channels of H×W int16 values (zero point subtracted, so
// padding is 0), a KH×KW kernel with strides, dilations and top/left
// pads, OH×OW outputs. Row (c·KH + ky)·KW + kx, column oy·OW + ox.
type IConv struct {
	C, H, W, KH, KW, SH, SW, DH, DW, PadT, PadL, OH, OW int
}

// Columns returns the IColumns of the im2col matrix of x (C·H·W values),
// filled straight from the image panel by panel (never stored whole).
func (g IConv) Columns(x []int16) IColumns {
	n := g.OH * g.OW
	return func(dst []int16, j0, nr int) {
		clear(dst)
		w := min(nr, n-j0)
		oy0, ox0 := j0/g.OW, j0%g.OW
		oneRow := ox0+w <= g.OW
		var iy0, ix0 []int
		if !oneRow {
			iy0, ix0 = make([]int, w), make([]int, w)
			for j := range w {
				oy, ox := (j0+j)/g.OW, (j0+j)%g.OW
				iy0[j], ix0[j] = oy*g.SH-g.PadT, ox*g.SW-g.PadL
			}
		}
		q := 0
		for c := 0; c < g.C; c++ {
			plane := x[c*g.H*g.W : (c+1)*g.H*g.W]
			for ky := 0; ky < g.KH; ky++ {
				for kx := 0; kx < g.KW; kx++ {
					d := dst[(q/2)*nr*2+q%2:]
					q++
					if !oneRow {
						for j := range w {
							iy, ix := iy0[j]+ky*g.DH, ix0[j]+kx*g.DW
							if iy >= 0 && iy < g.H && ix >= 0 && ix < g.W {
								d[2*j] = plane[iy*g.W+ix]
							}
						}
						continue
					}
					iy := oy0*g.SH - g.PadT + ky*g.DH
					if iy < 0 || iy >= g.H {
						continue
					}
					row := plane[iy*g.W : (iy+1)*g.W]
					ix := ox0*g.SW - g.PadL + kx*g.DW
					if ix >= 0 && ix+(w-1)*g.SW < g.W {
						if g.SW == 1 {
							for j, v := range row[ix : ix+w] {
								d[2*j] = v
							}
						} else {
							for j := range w {
								d[2*j] = row[ix+j*g.SW]
							}
						}
						continue
					}
					for j := range w {
						if p := ix + j*g.SW; p >= 0 && p < g.W {
							d[2*j] = row[p]
						}
					}
				}
			}
		}
	}
}
