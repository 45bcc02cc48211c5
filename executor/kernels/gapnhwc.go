package kernels

// gapNHWCAsm[j] (nil: none) is gapNHWC{8(j+1)}AVX2: the float64 sums of
// 8(j+1) channels over pixels stored channels last, in one pass; set
// during package initialization and read-only afterwards.
var gapNHWCAsm [4]func(pix int, x *float32, ldx int, s *float64)

// Large images pool in chunks of pixels: about gapChunkValues values a
// chunk, at most gapMaxChunks chunks an image. Images of gapPairValues
// values or more (and 24 pixels or more) pool in two halves at least:
// on two threads each half is mostly the pixels one thread wrote in the
// step before (an SE block's depthwise convolution, split by pixels), so
// a thread no longer reads what the other core wrote. mobilenet_v3_small's
// ten pools, step medians in all, two rounds: on two threads 112.5 and
// 108.5 → 79.9 and 78.0 µs, on one 71.3 and 67.8 → 80.8 and 81.0
// (docs/speed.md, "Eighth wave, twentieth session").
const (
	gapChunkValues = 1 << 15
	gapMaxChunks   = 8
	gapPairValues  = 1 << 13
)

// gapChunks is how many chunks of consecutive pixels the pools sum an
// image of pix pixels of c channels in (1: whole). It depends on the
// shape alone, so the bits do too.
func gapChunks(pix, c int) int {
	k := min(gapMaxChunks, pix*c/gapChunkValues, pix)
	if k < 2 && pix*c >= gapPairValues && pix >= 24 {
		k = 2
	}
	return max(1, k)
}

// GlobalAveragePoolNCHW sets y[i·c+k] to the mean of plane k of image i
// (n images of c planes of pix pixels, NCHW) with the sums
// GlobalAveragePoolNHWC makes: bit for bit its output on the same values
// stored channels last. Work splits by planes.
func (x *Context) GlobalAveragePoolNCHW(n, c, pix int, in, y []float32) error {
	if n < 0 || pix < 1 || c < 1 {
		return shapeErr("global average pool: %d images of %d channels of %d pixels", n, c, pix)
	}
	if len(in) < n*pix*c || len(y) < n*c {
		return shapeErr("global average pool: %d input and %d output values for %d images of %d channels of %d pixels", len(in), len(y), n, c, pix)
	}
	k := gapChunks(pix, c)
	if k == 1 {
		x.Range(n*c, pix, func(lo, hi int) { GlobalAveragePoolRows(in, y, pix, lo, hi) })
		return nil
	}
	x.Range(n*c, pix, func(lo, hi int) {
		var s, t [8]float64
		for ; lo < hi; lo += 8 {
			rows := min(8, hi-lo)
			for j := range k {
				p0, p1 := j*pix/k, (j+1)*pix/k
				s = [8]float64{}
				h := 0
				if rows == 8 && gapSum8 != nil {
					h = gapSum8(in[lo*pix+p0:], pix, p1-p0, &s)
				}
				for r := range rows {
					for _, v := range in[(lo+r)*pix+p0+h : (lo+r)*pix+p1] {
						s[r] += float64(v)
					}
					if j == 0 {
						t[r] = s[r]
					} else {
						t[r] += s[r]
					}
				}
			}
			for r := range rows {
				y[lo+r] = float32(t[r] / float64(pix))
			}
		}
	})
	return nil
}

// GlobalAveragePoolNHWC sets y[i·c+k] to the mean of channel k of image i
// over its pix pixels, in stored channels last (n images of pix pixels of
// c channels). Each sum is made in float64, pixel by pixel in order, as
// GlobalAveragePoolRows makes it over an NCHW plane, work split by
// groups of 16 channels; but a large image (pix·c at least
// 2·gapChunkValues) is summed in chunks of consecutive pixels, each
// chunk's sums made as above and added in chunk order: a thread reads
// only its own pixels (mostly the ones it wrote, when the step before
// split by pixels too). The bits depend on the shape alone, never on the
// thread count, and GlobalAveragePoolNCHW makes the same.
func (x *Context) GlobalAveragePoolNHWC(n, pix, c int, in, y []float32) error {
	if n < 0 || pix < 1 || c < 1 {
		return shapeErr("global average pool: %d images of %d pixels of %d channels", n, pix, c)
	}
	if len(in) < n*pix*c || len(y) < n*c {
		return shapeErr("global average pool: %d input and %d output values for %d images of %d pixels of %d channels", len(in), len(y), n, pix, c)
	}
	if k := gapChunks(pix, c); k >= 2 {
		x.gapPixelChunks(n, pix, c, k, in, y)
		return nil
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
			clear(s[:])
			gapSums(in[img*pix*c+k0:], pix, c, s[:k1-k0])
			for j := k0; j < k1; j++ {
				y[img*c+j] = float32(s[j-k0] / float64(pix))
			}
			u += ng
		}
	})
	return nil
}

// gapPixelChunks is GlobalAveragePoolNHWC over k chunks of pixels an
// image.
func (x *Context) gapPixelChunks(n, pix, c, k int, in, y []float32) {
	sc := x.get()
	defer x.put(sc)
	if cap(sc.sums) < n*k*c {
		sc.sums = make([]float64, n*k*c)
	}
	part := sc.sums[:n*k*c]
	x.Range(n*k, pix/k*c, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			img, j := u/k, u%k
			p0, p1 := j*pix/k, (j+1)*pix/k
			s := part[u*c : (u+1)*c]
			clear(s)
			img0 := in[(img*pix+p0)*c:]
			for k0 := 0; k0 < c; k0 += 32 {
				gapSums(img0[k0:], p1-p0, c, s[k0:min(c, k0+32)])
			}
		}
	})
	for img := range n {
		sums := part[img*k*c : (img+1)*k*c]
		for ch := range c {
			t := sums[ch]
			for j := 1; j < k; j++ {
				t += sums[j*c+ch]
			}
			y[img*c+ch] = float32(t / float64(pix))
		}
	}
}

// gapSums adds float64(x[p·ldx+l]) into s[l] for l < len(s) (at most 32)
// and p < pix, p in order: the multiple-of-8 head in one asm pass, the
// rest in Go.
func gapSums(x []float32, pix, ldx int, s []float64) {
	w, l := len(s), 0
	if nb := w / 8; nb > 0 && gapNHWCAsm[nb-1] != nil {
		_ = x[(pix-1)*ldx+w-1]
		gapNHWCAsm[nb-1](pix, &x[0], ldx, &s[0])
		l = 8 * nb
	}
	if l < w {
		for p := range pix {
			row := x[p*ldx+l : p*ldx+w]
			for j, v := range row {
				s[l+j] += float64(v)
			}
		}
	}
}
