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
