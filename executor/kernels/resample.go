package kernels

// dup2Asm (nil: Go) sets y[2i] = y[2i+1] = x[i] for i < n, n a multiple
// of 8; set during package initialization when the CPU has AVX2 and
// never changed afterwards.
var dup2Asm func(n int, x, y *float32)

// Dup2 sets dst[2i] = dst[2i+1] = src[i] for i < len(src) (a row of a
// nearest 2× up-sampling); dst holds at least 2·len(src) values. Copies
// only: the bits are src's.
func Dup2(dst, src []float32) {
	dst = dst[:2*len(src)]
	h := 0
	if dup2Asm != nil {
		if h = len(src) &^ 7; h > 0 {
			dup2Asm(h, &src[0], &dst[0])
		}
	}
	for i := h; i < len(src); i++ {
		v := src[i]
		dst[2*i], dst[2*i+1] = v, v
	}
}

// lerpRowsAsm and lerp2xAsm (nil: Go) are lerpRowsF64AVX2 and
// lerp2xF64AVX2, set during package initialization when the CPU has AVX2
// and never changed afterwards.
var (
	lerpRowsAsm func(n int, w0, w1 float64, r0, r1 *float32, row *float64)
	lerp2xAsm   func(n int, w *[4]float64, row *float64, y *float32)
)

// LerpRows sets row[i] = w0·float64(r0[i]) + w1·float64(r1[i]) for i <
// len(row) (a linear Resize's rows in float64; each product and the sum
// rounded, as the Go expression computes them).
func LerpRows(row []float64, r0, r1 []float32, w0, w1 float64) {
	r0, r1 = r0[:len(row)], r1[:len(row)]
	h := 0
	if lerpRowsAsm != nil {
		if h = len(row) &^ 3; h > 0 {
			lerpRowsAsm(h, w0, w1, &r0[0], &r1[0], &row[0])
		}
	}
	for i := h; i < len(row); i++ {
		row[i] = w0*float64(r0[i]) + w1*float64(r1[i])
	}
}

// Lerp2x sets y[2j] = float32(w[0]·row[j] + w[1]·row[j+1]) and y[2j+1] =
// float32(w[2]·row[j+1] + w[3]·row[j+2]) for j < len(y)/2 (a linear 2×
// up-sampling's interior columns); row holds len(y)/2 + 2 values, y an
// even count.
func Lerp2x(y []float32, row []float64, w *[4]float64) {
	n := len(y) / 2
	row = row[:n+2]
	h := 0
	if lerp2xAsm != nil {
		if h = n &^ 3; h > 0 {
			lerp2xAsm(h, w, &row[0], &y[0])
		}
	}
	for j := h; j < n; j++ {
		y[2*j] = float32(w[0]*row[j] + w[1]*row[j+1])
		y[2*j+1] = float32(w[2]*row[j+1] + w[3]*row[j+2])
	}
}
