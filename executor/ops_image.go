package executor

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	_ "image/png"
	"strconv"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/jpeg2k"
	"github.com/onnxconv/onnxconv/internal/ljpeg"
)

// ImageDecoder (host): baseline and progressive JPEG (internal/ljpeg:
// libjpeg's islow inverse DCT; what it does not decode goes to Go's
// image/jpeg, which refuses lossless, hierarchical and arithmetic-coded
// JPEG as well), PNG (Go standard library),
// BMP, TIFF and WebP (golang.org/x/image), binary PNM and JPEG 2000 (JP2
// files and J2K codestreams: internal/jpeg2k, decoded as OpenJPEG, which
// PIL uses, decodes them). 4:2:0 JPEG and WebP chroma is interpolated and
// converted as libjpeg and libwebp do (ycbcr.go), so that JPEG and WebP
// pixels are libjpeg's and libwebp's.

func registerImage(r registry) {
	r.host(hostImageDecoder, "ImageDecoder")
}

func hostImageDecoder(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	data := h.data.([]uint8)
	var img image.Image
	format := "pnm"
	var unsupported *ljpeg.UnsupportedError
	switch {
	case len(data) > 2 && data[0] == 'P' && (data[1] == '5' || data[1] == '6'):
		img, err = decodePNM(data)
	case jpeg2k.IsJP2(data) || jpeg2k.IsCodestream(data):
		format = "jpeg2000"
		img, err = jpeg2k.Decode(data)
	case len(data) > 2 && data[0] == 0xFF && data[1] == 0xD8:
		format = "jpeg"
		img, err = ljpeg.Decode(data)
		if errors.As(err, &unsupported) {
			img, err = jpeg.Decode(bytes.NewReader(data))
		}
	default:
		img, format, err = image.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return fmt.Errorf("ImageDecoder: %w", err)
	}
	b := img.Bounds()
	H, W := b.Dy(), b.Dx()
	pixel := c.AStr("pixel_format", "RGB")
	ch := 3
	if pixel == "Grayscale" {
		ch = 1
	}
	var fancy []uint8
	switch yc := img.(type) {
	case *image.YCbCr:
		fancy, _ = fancyRGB(yc, format)
	case *image.NYCbCrA:
		fancy, _ = fancyRGB(&yc.YCbCr, format)
	}
	out := newH(canonical.Uint8, []int{H, W, ch})
	o := out.data.([]uint8)
	k := 0
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			r16, g16, b16, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			r, g, bb := uint8(r16>>8), uint8(g16>>8), uint8(b16>>8)
			if gray, ok := img.At(b.Min.X+x, b.Min.Y+y).(color.Gray); ok {
				r, g, bb = gray.Y, gray.Y, gray.Y
			}
			if fancy != nil {
				p := fancy[3*(y*W+x):]
				r, g, bb = p[0], p[1], p[2]
			}
			switch pixel {
			case "Grayscale":
				// ITU-R 601-2 luma, as PIL's convert("L") rounds it
				o[k] = uint8((uint32(r)*19595 + uint32(g)*38470 + uint32(bb)*7471 + 0x8000) >> 16)
				k++
			case "BGR":
				o[k], o[k+1], o[k+2] = bb, g, r
				k += 3
			default:
				o[k], o[k+1], o[k+2] = r, g, bb
				k += 3
			}
		}
	}
	c.OutH(0, out)
	return nil
}

// decodePNM decodes binary PGM (P5) and PPM (P6) images with maxval 255.
func decodePNM(data []byte) (image.Image, error) {
	pos := 2
	next := func() (int, error) {
		for pos < len(data) {
			switch {
			case data[pos] == '#':
				for pos < len(data) && data[pos] != '\n' {
					pos++
				}
			case data[pos] == ' ' || data[pos] == '\t' || data[pos] == '\n' || data[pos] == '\r':
				pos++
			default:
				start := pos
				for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
					pos++
				}
				return strconv.Atoi(string(data[start:pos]))
			}
		}
		return 0, fmt.Errorf("truncated PNM header")
	}
	w, err := next()
	if err != nil {
		return nil, err
	}
	h, err := next()
	if err != nil {
		return nil, err
	}
	maxv, err := next()
	if err != nil {
		return nil, err
	}
	if maxv != 255 || w <= 0 || h <= 0 {
		return nil, fmt.Errorf("unsupported PNM (maxval %d, %dx%d)", maxv, w, h)
	}
	pos++ // single whitespace after maxval
	ch := 3
	if data[1] == '5' {
		ch = 1
	}
	if len(data)-pos < w*h*ch {
		return nil, fmt.Errorf("truncated PNM data")
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < w*h; i++ {
		p := data[pos+i*ch : pos+i*ch+ch]
		if ch == 1 {
			img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2] = p[0], p[0], p[0]
		} else {
			img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2] = p[0], p[1], p[2]
		}
		img.Pix[4*i+3] = 255
	}
	return img, nil
}
