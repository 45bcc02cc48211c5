package executor

import "image"

// ImageDecoder's JPEG and WebP pixels as libjpeg(-turbo) and libwebp give
// them (PIL, and so the ONNX reference implementation, decodes with them):
// Go's decoders hand out the Y, Cb and Cr planes with chroma subsampled
// 4:2:0, and image.YCbCr.At repeats each chroma sample over its 2x2 pixels,
// while both libraries interpolate it ("fancy upsampling") and convert to
// RGB in fixed point of their own. On the backend tests' 32x32 noise images
// repeating the chroma made 2,970 of 3,072 WebP values and 2,771 JPEG values
// differ, by up to 64; interpolated as the libraries do, WebP matches
// exactly, and JPEG decoded by internal/ljpeg (libjpeg's islow inverse
// DCT) too; with Go's decoder 93 JPEG values differed by up to 2.

// fancyRGB returns the RGB pixels (3 bytes each, row-major) of a 4:2:0
// image decoded from format ("jpeg" or "webp"), with its chroma
// interpolated and converted as that format's reference library does, or
// of a 4:4:4 JPEG converted as libjpeg does; ok is false for another
// subsampling or format.
func fancyRGB(yc *image.YCbCr, format string) (rgb []uint8, ok bool) {
	full := yc.SubsampleRatio == image.YCbCrSubsampleRatio444 && format == "jpeg"
	if (yc.SubsampleRatio != image.YCbCrSubsampleRatio420 && !full) || (format != "jpeg" && format != "webp") {
		return nil, false
	}
	b := yc.Rect
	w, h := b.Dx(), b.Dy()
	if w == 0 || h == 0 {
		return []uint8{}, true
	}
	cw, ch := (b.Max.X+1)/2-b.Min.X/2, (b.Max.Y+1)/2-b.Min.Y/2
	if full {
		cw, ch = w, h
	}
	plane := func(p []uint8) chromaPlane {
		off := yc.COffset(b.Min.X, b.Min.Y)
		return chromaPlane{p: p[off:], stride: yc.CStride, w: cw, h: ch}
	}
	cb, cr := plane(yc.Cb), plane(yc.Cr)
	rgb = make([]uint8, 0, 3*w*h)
	for y := range h {
		for x := range w {
			yy := int32(yc.Y[yc.YOffset(b.Min.X+x, b.Min.Y+y)])
			var r, g, bl int32
			if format == "webp" {
				u, v := cb.webp(x, y), cr.webp(x, y)
				r, g, bl = webpRGB(yy, u, v)
			} else if full {
				r, g, bl = jpegRGB(yy, cb.at(y, x), cr.at(y, x))
			} else {
				u, v := cb.jpeg(x, y), cr.jpeg(x, y)
				r, g, bl = jpegRGB(yy, u, v)
			}
			rgb = append(rgb, clamp8(r), clamp8(g), clamp8(bl))
		}
	}
	return rgb, true
}

// chromaPlane is a subsampled chroma plane of w x h samples.
type chromaPlane struct {
	p      []uint8
	stride int
	w, h   int
}

func (c chromaPlane) at(row, col int) int32 {
	row = min(max(row, 0), c.h-1)
	col = min(max(col, 0), c.w-1)
	return int32(c.p[row*c.stride+col])
}

// neighbours are, for output coordinate o, the nearest chroma sample and
// the next nearest on the other side (o/2 - 1 for an even o, o/2 + 1 for
// an odd one).
func neighbours(o int) (near, far int) {
	near = o / 2
	if o%2 == 0 {
		return near, near - 1
	}
	return near, near + 1
}

// jpeg is the chroma at pixel (x, y) as libjpeg's h2v2 fancy upsampling
// gives it: 3/4 near and 1/4 far in each direction, the column sums
// rounded with a bias of 8 on even and 7 on odd columns.
func (c chromaPlane) jpeg(x, y int) int32 {
	nr, fr := neighbours(y)
	nc, fc := neighbours(x)
	sum := func(col int) int32 { return 3*c.at(nr, col) + c.at(fr, col) }
	switch {
	case x == 0:
		return (4*sum(0) + 8) >> 4
	case fc >= c.w:
		return (4*sum(nc) + 7) >> 4
	case x%2 == 0:
		return (3*sum(nc) + sum(fc) + 8) >> 4
	default:
		return (3*sum(nc) + sum(fc) + 7) >> 4
	}
}

// webp is the chroma at pixel (x, y) as libwebp's fancy upsampler gives
// it: 9/16, 3/16, 3/16, 1/16 of the near, the two side and the far sample,
// in two rounded steps; the first column, and the last of an even width,
// only vertically (3/4, 1/4).
func (c chromaPlane) webp(x, y int) int32 {
	nr, fr := neighbours(y)
	nc, fc := neighbours(x)
	a, cv := c.at(nr, nc), c.at(fr, nc)
	if x == 0 || fc >= c.w {
		return (3*a + cv + 2) >> 2
	}
	b, d := c.at(nr, fc), c.at(fr, fc)
	return (((a + 3*b + 3*cv + d + 8) >> 3) + a) >> 1
}

// jpegRGB is libjpeg's YCbCr to RGB (JFIF, full range) in 16-bit fixed
// point.
func jpegRGB(y, cb, cr int32) (r, g, b int32) {
	const half = 1 << 15
	cb, cr = cb-128, cr-128
	r = y + (91881*cr+half)>>16
	g = y + (-22554*cb-46802*cr+half)>>16
	b = y + (116130*cb+half)>>16
	return r, g, b
}

// webpRGB is libwebp's YUV to RGB (BT.601, limited range) in 14-bit fixed
// point.
func webpRGB(y, u, v int32) (r, g, b int32) {
	hi := func(a, k int32) int32 { return (a * k) >> 8 }
	yy := hi(y, 19077)
	return (yy + hi(v, 26149) - 14234) >> 6, (yy - hi(u, 6419) - hi(v, 13320) + 8708) >> 6, (yy + hi(u, 33050) - 17685) >> 6
}

func clamp8(v int32) uint8 { return uint8(min(max(v, 0), 255)) }
