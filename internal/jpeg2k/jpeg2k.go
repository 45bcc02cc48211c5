// Package jpeg2k decodes JPEG 2000 images (ITU-T T.800) as OpenJPEG — the
// library PIL, and so ONNX's reference ImageDecoder, decodes them with —
// does, to 8-bit samples: JP2 files (box format) and raw J2K codestreams;
// one or more tiles and tile-parts; precinct partitions; every
// progression order; reversible 5/3 and irreversible 9/7 wavelets (the
// 9/7 in float32 in OpenJPEG's order of operations and constants, so
// pixels equal OpenJPEG's); the RCT and ICT component transforms; no,
// scalar derived and scalar expounded quantization; tier-2 packet headers
// with tag trees, SOP and EPH markers; tier-1 EBCOT bit-plane decoding
// with the MQ arithmetic decoder; DC level shift.
//
// Code-block coding styles other than the default, progression order
// changes (POC), packed packet headers (PPM, PPT), regions of interest,
// subsampled, signed or not-8-bit components, more than 4 components,
// palettes and sYCC are refused with an *UnsupportedError; malformed
// files with a *FormatError. Sizes are checked before anything is
// allocated: the image is bounded by Options.MaxPixels, precincts average
// at least 4 samples, and the rest is a small multiple of the image.
package jpeg2k

import (
	"encoding/binary"
	"fmt"
	"image"
)

// MaxPixels is the default bound on width × height × components.
const MaxPixels = 1 << 26

// UnsupportedError is a well-formed JPEG 2000 feature this decoder does
// not implement.
type UnsupportedError struct{ Feature string }

func (e *UnsupportedError) Error() string {
	return "jpeg2k: unsupported JPEG 2000 feature: " + e.Feature
}

// FormatError is a malformed JPEG 2000 file.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string { return "jpeg2k: invalid JPEG 2000 file: " + e.Msg }

func formatErr(format string, args ...any) error {
	return &FormatError{Msg: fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) error {
	return &UnsupportedError{Feature: fmt.Sprintf(format, args...)}
}

// Options bound what Decode accepts.
type Options struct {
	// MaxPixels bounds width × height × components (MaxPixels if 0).
	MaxPixels int
}

// Decode decodes a JP2 file or J2K codestream to an *image.Gray (one or
// two components) or an *image.RGBA (three or more; a fourth component
// is dropped, as PIL's convert("RGB") drops alpha).
func Decode(data []byte) (image.Image, error) { return DecodeOptions(data, Options{}) }

// DecodeOptions is Decode with explicit bounds.
func DecodeOptions(data []byte, opt Options) (image.Image, error) {
	if opt.MaxPixels <= 0 {
		opt.MaxPixels = MaxPixels
	}
	cs := data
	if IsJP2(data) {
		var err error
		if cs, err = codestreamBox(data); err != nil {
			return nil, err
		}
	}
	if len(cs) < 4 || cs[0] != 0xFF || cs[1] != 0x4F {
		return nil, formatErr("no SOC marker at the start of the codestream")
	}
	d := &decoder{data: cs, pos: 2, opt: opt}
	if err := d.mainHeader(); err != nil {
		return nil, err
	}
	if err := d.tileParts(); err != nil {
		return nil, err
	}
	return d.finish()
}

var jp2Signature = []byte{0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A}

// IsJP2 reports whether data starts with the JP2 signature box.
func IsJP2(data []byte) bool {
	return len(data) >= len(jp2Signature) && string(data[:len(jp2Signature)]) == string(jp2Signature)
}

// IsCodestream reports whether data starts with SOC and SIZ markers.
func IsCodestream(data []byte) bool {
	return len(data) >= 4 && data[0] == 0xFF && data[1] == 0x4F && data[2] == 0xFF && data[3] == 0x51
}

// codestreamBox walks the JP2 boxes and returns the contiguous
// codestream box's payload; palettes and colour spaces PIL would not
// decode to plain RGB or grayscale are refused.
func codestreamBox(data []byte) ([]byte, error) {
	pos := 0
	for pos < len(data) {
		typ, payload, next, err := box(data, pos)
		if err != nil {
			return nil, err
		}
		switch typ {
		case "jp2h":
			if err := checkHeaderBox(payload); err != nil {
				return nil, err
			}
		case "jp2c":
			return payload, nil
		}
		pos = next
	}
	return nil, formatErr("JP2 file has no contiguous codestream (jp2c) box")
}

// box reads the box at pos: its type, payload and the offset after it.
func box(data []byte, pos int) (typ string, payload []byte, next int, err error) {
	if len(data)-pos < 8 {
		return "", nil, 0, formatErr("truncated JP2 box header at offset %d", pos)
	}
	size := uint64(binary.BigEndian.Uint32(data[pos:]))
	typ = string(data[pos+4 : pos+8])
	hdr := uint64(8)
	switch size {
	case 0:
		size = uint64(len(data) - pos)
	case 1:
		if len(data)-pos < 16 {
			return "", nil, 0, formatErr("truncated JP2 box %q extended length", typ)
		}
		size = binary.BigEndian.Uint64(data[pos+8:])
		hdr = 16
	}
	if size < hdr || size > uint64(len(data)-pos) {
		return "", nil, 0, formatErr("JP2 box %q at offset %d has length %d beyond the file (%d bytes)", typ, pos, size, len(data))
	}
	return typ, data[pos+int(hdr) : pos+int(size)], pos + int(size), nil
}

func checkHeaderBox(h []byte) error {
	pos := 0
	for pos < len(h) {
		typ, payload, next, err := box(h, pos)
		if err != nil {
			return err
		}
		switch typ {
		case "pclr":
			return unsupported("palette (pclr box)")
		case "colr":
			if len(payload) >= 7 && payload[0] == 1 {
				switch cs := binary.BigEndian.Uint32(payload[3:]); cs {
				case 16, 17: // sRGB, greyscale
				case 18:
					return unsupported("sYCC colour space (colr enumerated 18)")
				default:
					return unsupported("colour space %d (colr box)", cs)
				}
			}
		}
		pos = next
	}
	return nil
}

// finish decodes every tile and assembles the image.
func (d *decoder) finish() (image.Image, error) {
	W, H := d.w-d.x0, d.h-d.y0
	d.out = make([][]uint8, len(d.comps))
	for c := range d.out {
		d.out[c] = make([]uint8, W*H)
	}
	for i, t := range d.tiles {
		if t == nil {
			return nil, formatErr("tile %d has no tile-part", i)
		}
		if err := d.decodeTile(i, t); err != nil {
			return nil, err
		}
		d.tiles[i] = nil
	}
	r := image.Rect(0, 0, W, H)
	if len(d.comps) < 3 {
		return &image.Gray{Pix: d.out[0], Stride: W, Rect: r}, nil
	}
	img := image.NewRGBA(r)
	for i := 0; i < W*H; i++ {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = d.out[0][i], d.out[1][i], d.out[2][i], 255
	}
	return img, nil
}
