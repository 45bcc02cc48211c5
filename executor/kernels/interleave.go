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

// Interleave2Rows is Interleave2 row by row: for each of rows rows, y's
// row of 2·w (rows 2·w apart) interleaves a's row of w (rows lda apart)
// with b's (ldb apart). A channel shuffle of two groups of width w whose
// parts are windows of wider tensors' channels (a Slice's view). Moves
// only: the same bits.
func Interleave2Rows(rows, w int, a []float32, lda int, b []float32, ldb int, y []float32) error {
	if rows < 0 || w < 0 || lda < w || ldb < w {
		return shapeErr("interleave: %d rows of %d values, %d and %d apart", rows, w, lda, ldb)
	}
	if rows == 0 || w == 0 {
		return nil
	}
	if len(a) < (rows-1)*lda+w || len(b) < (rows-1)*ldb+w || len(y) < 2*rows*w {
		return shapeErr("interleave: %d and %d values (%d and %d apart) into %d, want %d rows of %d", len(a), len(b), lda, ldb, len(y), rows, w)
	}
	blocks := 0
	if interleave2Blocks != nil {
		blocks = w / 8
	}
	for r := range rows {
		ar, br, yr := a[r*lda:r*lda+w], b[r*ldb:r*ldb+w], y[2*r*w:2*(r+1)*w]
		if blocks > 0 {
			interleave2Blocks(blocks, &ar[0], &br[0], &yr[0])
		}
		for k := 8 * blocks; k < w; k++ {
			yr[2*k], yr[2*k+1] = ar[k], br[k]
		}
	}
	return nil
}
