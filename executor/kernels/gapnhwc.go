package kernels

// gapNHWCAsm[j] (nil: none) is gapNHWC{8(j+1)}AVX2: the float64 sums of
// 8(j+1) channels over pixels stored channels last, in one pass; set
// during package initialization and read-only afterwards.
var gapNHWCAsm [4]func(pix int, x *float32, ldx int, s *float64)

// GlobalAveragePoolNHWC sets y[i·c+k] to the mean of channel k of image i
// over its pix pixels, in stored channels last (n images of pix pixels of
// c channels). Each sum is made in float64, pixel by pixel in order, as
// GlobalAveragePoolRows makes it over an NCHW plane: the same bits. Work
// splits by groups of 16 channels.
func (x *Context) GlobalAveragePoolNHWC(n, pix, c int, in, y []float32) error {
	if n < 0 || pix < 1 || c < 1 {
		return shapeErr("global average pool: %d images of %d pixels of %d channels", n, pix, c)
	}
	if len(in) < n*pix*c || len(y) < n*c {
		return shapeErr("global average pool: %d input and %d output values for %d images of %d pixels of %d channels", len(in), len(y), n, pix, c)
	}
	// Work splits by groups of 16 channels (whole cache lines of a pixel
	// when c is a multiple of 16), a call summing up to two groups in
	// one pass over the image.
	groups := (c + 15) / 16
	x.Range(n*groups, 16*pix, func(lo, hi int) {
		var s [32]float64
		for u := lo; u < hi; {
			img, g := u/groups, u%groups
			k0 := 16 * g
			ng := min(hi-u, groups-g, 2) // groups of this image in this call
			k1 := min(c, k0+16*ng)
			img0 := in[img*pix*c:]
			clear(s[:])
			k := k0
			if nb := (k1 - k0) / 8; nb > 0 && gapNHWCAsm[nb-1] != nil {
				gapNHWCAsm[nb-1](pix, &img0[k], c, &s[0])
				k += 8 * nb
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
			u += ng
		}
	})
	return nil
}
