package kernels

// poolS2Func is the signature of the whole-row stride-2 max pool kernels
// (maxPoolS2K3AVX512, maxPoolS2K2AVX512): planes·rows output rows of n
// outputs, each from k input rows of w floats whose columns are shifted
// by lpad (columns outside [0, w) count as −Inf), k0 the lane mask of the
// first 16 columns.
type poolS2Func func(planes, rows, n int, x *float32, w, xplane int, y *float32, yplane, lpad, k0 int)

// maxPoolS2K3 and maxPoolS2K2 (nil: none) are the 3×3/2 and 2×2/2
// whole-row kernels, set during package initialization when the CPU has
// AVX-512F and BMI2 and never changed afterwards.
var maxPoolS2K3, maxPoolS2K2 poolS2Func

// poolS2Kernel returns the whole-row kernel that pools p (nil: none):
// k×k windows at stride 2 (k = 2 or 3), no dilation, pads under the
// window.
func poolS2Kernel(p *Pool2D) poolS2Func {
	if p.SH != 2 || p.SW != 2 || p.DH != 1 || p.DW != 1 || p.KH != p.KW || p.PT >= p.KH || p.PL >= p.KW {
		return nil
	}
	switch p.KH {
	case 3:
		return maxPoolS2K3
	case 2:
		return maxPoolS2K2
	}
	return nil
}

// maxPoolS2 pools planes [lo, hi) with the whole-row kernel fn: one call
// for the output rows whose k window rows are all inside the plane (every
// column, the pads and a ceil mode's last column included: the kernel
// masks the columns outside the row), the row path (maxPoolRows) for the
// others (a top pad's first row, a ceil mode's or bottom pad's last).
// The kernel takes the maxima in the row path's maxNaN order (rows, then
// columns), so the values are the row path's SIMD head's bits; where the
// row path took Go's max (its tails and edges) a ±0 tie may give the
// other zero.
func maxPoolS2(p *Pool2D, fn poolS2Func, in, y []float32, lo, hi int) {
	if hi <= lo {
		return
	}
	hw, npix := p.H*p.W, p.OH*p.OW
	o0, o1 := (p.PT+1)/2, 0
	if d := p.H - p.KH + p.PT; d >= 0 {
		o1 = min(p.OH, d/2+1)
	}
	if o1 > o0 {
		// Columns the row reads from column −PL on: (OW−1)·2 + KW.
		lim := min(16, 2*(p.OW-1)+p.KW, p.W+p.PL)
		k0 := (1<<lim - 1) &^ (1<<p.PL - 1)
		row := 2*o0 - p.PT
		// The last row read, checked before the kernel reads it.
		_ = in[(hi-1)*hw+(row+2*(o1-o0-1)+p.KH-1)*p.W+p.W-1]
		_ = y[(hi-1)*npix+o1*p.OW-1]
		fn(hi-lo, o1-o0, p.OW, &in[lo*hw+row*p.W], p.W, hw, &y[lo*npix+o0*p.OW], npix, p.PL, k0)
	} else {
		o1 = o0
	}
	if o0 == 0 && o1 == p.OH {
		return
	}
	v := make([]float32, p.W+1)
	ph := make([]float32, 2*((p.W+1)/2))
	for pl := lo; pl < hi; pl++ {
		xc, yc := in[pl*hw:(pl+1)*hw], y[pl*npix:(pl+1)*npix]
		maxPoolRows(p, xc, yc, v, ph, 0, o0)
		maxPoolRows(p, xc, yc, v, ph, o1, p.OH)
	}
}
