package kernels

// interleave2Blocks (nil: none) is interleave2AVX2: blocks of 8 floats of
// a and of b stored alternately into y, 16 at a time; set during package
// initialization and read-only afterwards.
var interleave2Blocks func(blocks int, a, b, y *float32)

// Interleave2 sets y[2i] = a[i] and y[2i+1] = b[i] for i < len(a): a
// channel shuffle of two groups of equal width stored channels last (the
// groups' pixels one after another, so the whole run interleaves). Moves
// only: the same bits.
func Interleave2(a, b, y []float32) error {
	n := len(a)
	if len(b) < n || len(y) < 2*n {
		return shapeErr("interleave: %d and %d values into %d, want %d", n, len(b), len(y), 2*n)
	}
	k := 0
	if interleave2Blocks != nil && n >= 8 {
		interleave2Blocks(n/8, &a[0], &b[0], &y[0])
		k = n / 8 * 8
	}
	for ; k < n; k++ {
		y[2*k], y[2*k+1] = a[k], b[k]
	}
	return nil
}
