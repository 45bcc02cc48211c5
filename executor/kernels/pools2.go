package kernels

// poolRowsFunc is the signature of the whole-row max pool kernels
// (maxPoolS2K3AVX512, maxPoolS2K2AVX512, maxPoolS1K3AVX512): planes·rows
// output rows of n outputs, each from the window rows x, x + d1 (and x +
// d2) of w floats, columns shifted by lpad (outside [0, w) −Inf), x
// advanced by rowstep a row and xgap more a plane, y by n a row and ygap
// more a plane; k0 the lane mask of the first 16 columns.
type poolRowsFunc func(planes, rows, n int, x *float32, d1, d2, rowstep, xgap, w int, y *float32, ygap, lpad, k0 int)

// poolRowsKernels is a whole-row kernel and its variant for rows of at
// most 16 outputs (one step a row, the lane masks given: packed in its
// last argument, V0's, V1's, V2's and the store's, 16 bits each).
type poolRowsKernels struct{ long, short poolRowsFunc }

// maxPoolS2K3, maxPoolS2K2 and maxPoolS1K3 (long nil: none) are the
// 3×3/2, 2×2/2 and 3×3/1 whole-row kernels, set during package
// initialization when the CPU has AVX-512F and BMI2 and never changed
// afterwards.
var maxPoolS2K3, maxPoolS2K2, maxPoolS1K3 poolRowsKernels

// poolRowsKernel returns the whole-row kernels that pool p (long nil:
// none): k×k windows at stride 2 (k = 2 or 3) or 3×3 at stride 1, no
// dilation, pads under the window.
func poolRowsKernel(p *Pool2D) poolRowsKernels {
	if p.SH != p.SW || p.DH != 1 || p.DW != 1 || p.KH != p.KW || p.PT >= p.KH || p.PL >= p.KW {
		return poolRowsKernels{}
	}
	if _, pb := gapPads(p); pb >= p.KH {
		return poolRowsKernels{}
	}
	switch {
	case p.SH == 2 && p.KH == 3:
		return maxPoolS2K3
	case p.SH == 2 && p.KH == 2:
		return maxPoolS2K2
	case p.SH == 1 && p.KH == 3:
		return maxPoolS1K3
	}
	return poolRowsKernels{}
}

// maxPoolWholeRows pools planes [lo, hi) with the whole-row kernel fn:
// one call for the output rows whose window rows are all inside the plane
// and one for each other output row (a top pad's first row, a ceil mode's
// or bottom pad's last), each over all the planes; every column (the
// pads and a ceil mode's last column included: the kernel masks the
// columns outside the row). A row whose window reaches into the padding
// gets its rows inside the plane, the last repeated (maxNaN of a value
// and itself, or of a maximum and one of its operands, is that value, so
// the bits are those of the rows inside alone). The kernel takes the
// maxima in the row path's maxNaN order (rows, then columns), so the
// values are the row path's SIMD head's bits; where the row path took
// Go's max (its tails and edges) a ±0 tie may give the other zero.
func maxPoolWholeRows(p *Pool2D, ks poolRowsKernels, in, y []float32, lo, hi int) {
	if hi <= lo || p.OH == 0 || p.OW == 0 {
		return
	}
	s, k := p.SH, p.KH
	hw, npix := p.H*p.W, p.OH*p.OW
	planes := hi - lo
	// Columns the row reads from column −PL on: (OW−1)·s + KW.
	fn := ks.long
	lim := min(16, s*(p.OW-1)+p.KW, p.W+p.PL)
	k0 := (1<<lim - 1) &^ (1<<p.PL - 1)
	if p.OW <= 16 {
		// The short rows' kernel: the masks of columns [PL, lim) in
		// the first 48 and of the outputs.
		fn = ks.short
		lim = min(s*(p.OW-1)+p.KW, p.W+p.PL)
		k0 = (1<<lim-1)&^(1<<p.PL-1) | (1<<p.OW-1)<<48
	}
	// The last input row and output element the calls reach, checked
	// before the kernel reads or writes them.
	_ = in[hi*hw-1]
	_ = y[hi*npix-1]
	o0, o1 := (p.PT+s-1)/s, 0
	if d := p.H - k + p.PT; d >= 0 {
		o1 = min(p.OH, d/s+1)
	}
	if o1 > o0 {
		rows := o1 - o0
		fn(planes, rows, p.OW, &in[lo*hw+(o0*s-p.PT)*p.W], p.W, 2*p.W, s*p.W, hw-rows*s*p.W, p.W,
			&y[lo*npix+o0*p.OW], npix-rows*p.OW, p.PL, k0)
	} else {
		o1 = o0
	}
	for o := 0; o < p.OH; o++ {
		if o == o0 {
			o = o1
			if o == p.OH {
				break
			}
		}
		// The window rows inside the plane, [a, b].
		a, b := max(0, o*s-p.PT), min(p.H-1, o*s-p.PT+k-1)
		d1, d2 := min(1, b-a)*p.W, (b-a)*p.W
		if k == 2 {
			d1 = d2
		}
		fn(planes, 1, p.OW, &in[lo*hw+a*p.W], d1, d2, 0, hw, p.W, &y[lo*npix+o*p.OW], npix-p.OW, p.PL, k0)
	}
}
