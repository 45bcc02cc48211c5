package kernels

// gapNHWC32 and gapNHWC8 (nil: none) are gapNHWC32AVX2 and gapNHWC8AVX2:
// the float64 sums of 32 and 8 channels over pixels stored channels last;
// set during package initialization and read-only afterwards.
var gapNHWC32, gapNHWC8 func(pix int, x *float32, ldx int, s *float64)

// GlobalAveragePoolNHWC sets y[i·c+k] to the mean of channel k of image i
// over its pix pixels, in stored channels last (n images of pix pixels of
// c channels). Each sum is made in float64, pixel by pixel in order, as
// GlobalAveragePoolRows makes it over an NCHW plane: the same bits. Work
// splits by blocks of 8 channels.
func (x *Context) GlobalAveragePoolNHWC(n, pix, c int, in, y []float32) error {
	if n < 0 || pix < 1 || c < 1 {
		return shapeErr("global average pool: %d images of %d pixels of %d channels", n, pix, c)
	}
	if len(in) < n*pix*c || len(y) < n*c {
		return shapeErr("global average pool: %d input and %d output values for %d images of %d pixels of %d channels", len(in), len(y), n, pix, c)
	}
	blocks := (c + 7) / 8
	x.Range(n*blocks, 8*pix, func(lo, hi int) {
		var s [32]float64
		for u := lo; u < hi; {
			img, b := u/blocks, u%blocks
			k0 := 8 * b
			nb := min(hi-u, blocks-b, 4) // blocks of this image in this call
			k1 := min(c, k0+8*nb)
			img0 := in[img*pix*c:]
			clear(s[:])
			k := k0
			switch {
			case gapNHWC32 != nil && k1-k0 == 32:
				gapNHWC32(pix, &img0[k], c, &s[0])
				k = k1
			case gapNHWC8 != nil:
				for ; k+8 <= k1; k += 8 {
					gapNHWC8(pix, &img0[k], c, &s[k-k0])
				}
			}
			if k < k1 {
				for p := range pix {
					row := img0[p*c+k : p*c+k1]
					for j, v := range row {
						s[k-k0+j] += float64(v)
					}
				}
			}
			for j := k0; j < k1; j++ {
				y[img*c+j] = float32(s[j-k0] / float64(pix))
			}
			u += nb
		}
	})
	return nil
}
