// Package ljpeg decodes JPEG files to the samples libjpeg (and
// libjpeg-turbo, which PIL and so ONNX's reference implementation decode
// with) gives before color conversion: Huffman-coded baseline and
// progressive frames (progressive.go: DC and AC first and refinement
// scans, end-of-band runs) of 8-bit samples, any number of scans, restart
// intervals, one (grayscale) or three (YCbCr) components, each 8x8
// block's coefficients dequantized and run through libjpeg's "islow"
// inverse DCT — the integer Loeffler-Ligtenberg-Moschytz factorisation
// with 13-bit constants and 2 extra bits between the column and the row
// pass, descaled with rounding and range-limited through the same
// wrap-around table — so that every sample equals libjpeg's. Go's
// image/jpeg rounds its inverse DCT otherwise, by up to 2 in a pixel.
//
// Lossless, hierarchical and arithmetic-coded files, 12-bit samples and
// four-component (CMYK, YCCK) files are refused with an
// *UnsupportedError, which callers may answer with another decoder;
// malformed files with a *FormatError. Nothing is allocated beyond what
// the frame header's dimensions need, and those are bounded by MaxPixels
// and by what the file's length can code.
package ljpeg

import (
	"fmt"
	"image"
)

// MaxPixels bounds the frame size Decode accepts (width × height).
const MaxPixels = 1 << 28

// UnsupportedError is a well-formed JPEG feature this decoder does not
// implement.
type UnsupportedError struct{ Feature string }

func (e *UnsupportedError) Error() string { return "ljpeg: unsupported JPEG feature: " + e.Feature }

// FormatError is a malformed JPEG file.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string { return "ljpeg: invalid JPEG: " + e.Msg }

func formatErr(format string, args ...any) error {
	return &FormatError{Msg: fmt.Sprintf(format, args...)}
}

// component is one frame component and its decoded samples.
type component struct {
	id     uint8
	h, v   int // sampling factors
	tq     int // quantization table
	bw, bh int // blocks across and down (whole MCUs)
	pix    []uint8
	stride int
	coef   []int32 // progressive: 64 a block, bw×bh blocks
	dcPred int32
	td, ta int // Huffman tables of the current scan
}

type decoder struct {
	data      []byte
	pos       int
	q         [4]*[64]uint16 // natural order
	dc, ac    [4]*huffman
	comps     []*component
	w, h      int
	hmax      int
	vmax      int
	mcusX     int
	mcusY     int
	restart   int
	haveFrame bool
	// progressive frames keep every block's quantized coefficients
	// (natural order) until EOI; eobrun is an AC scan's end-of-band run.
	progressive bool
	eobrun      int
	bits        bitReader
}

// Decode decodes a baseline or progressive JPEG file: an *image.Gray for
// one component, an *image.YCbCr (Y, Cb and Cr as stored, chroma not
// upsampled) for three whose sampling image.YCbCr can hold.
func Decode(data []byte) (image.Image, error) {
	d := &decoder{data: data}
	if len(data) < 2 || data[0] != 0xFF || data[1] != 0xD8 {
		return nil, formatErr("missing SOI marker")
	}
	d.pos = 2
	for {
		m, err := d.marker()
		if err != nil {
			return nil, err
		}
		switch {
		case m == 0xD9: // EOI
			return d.image()
		case m == 0xC0 || m == 0xC1 || m == 0xC2:
			d.progressive = m == 0xC2
			if err := d.frame(); err != nil {
				return nil, err
			}
			continue
		case m == 0xC3 || m == 0xC7 || m == 0xCB || m == 0xCF:
			return nil, &UnsupportedError{"lossless"}
		case m == 0xC5 || m == 0xC6:
			return nil, &UnsupportedError{"hierarchical"}
		case m >= 0xC9 && m <= 0xCF && m != 0xCC:
			return nil, &UnsupportedError{"arithmetic coding"}
		case m >= 0xD0 && m <= 0xD7:
			continue // stray RST: libjpeg ignores it too
		}
		seg, err := d.segment()
		if err != nil {
			return nil, err
		}
		switch m {
		case 0xDB:
			err = d.quant(seg)
		case 0xC4:
			err = d.huff(seg)
		case 0xDD:
			if len(seg) != 2 {
				return nil, formatErr("DRI length %d", len(seg))
			}
			d.restart = int(seg[0])<<8 | int(seg[1])
		case 0xCC:
			return nil, &UnsupportedError{"arithmetic coding"}
		case 0xDA:
			err = d.scan(seg)
		}
		if err != nil {
			return nil, err
		}
	}
}

// marker reads the next marker, skipping fill bytes.
func (d *decoder) marker() (byte, error) {
	if d.pos+1 >= len(d.data) {
		// A file cut after its last scan decodes as libjpeg does with a
		// warning: as far as it goes.
		if d.haveFrame {
			return 0xD9, nil
		}
		return 0, formatErr("truncated before a frame header")
	}
	if d.data[d.pos] != 0xFF {
		return 0, formatErr("expected a marker at byte %d, found 0x%02X", d.pos, d.data[d.pos])
	}
	for d.pos < len(d.data) && d.data[d.pos] == 0xFF {
		d.pos++
	}
	if d.pos >= len(d.data) {
		return 0, formatErr("truncated marker")
	}
	m := d.data[d.pos]
	d.pos++
	return m, nil
}

// segment returns the body of the marker segment at d.pos.
func (d *decoder) segment() ([]byte, error) {
	if d.pos+2 > len(d.data) {
		return nil, formatErr("truncated segment length at byte %d", d.pos)
	}
	n := int(d.data[d.pos])<<8 | int(d.data[d.pos+1])
	if n < 2 || d.pos+n > len(d.data) {
		return nil, formatErr("segment length %d at byte %d runs past the end (%d bytes)", n, d.pos, len(d.data))
	}
	seg := d.data[d.pos+2 : d.pos+n]
	d.pos += n
	return seg, nil
}

func (d *decoder) quant(seg []byte) error {
	for len(seg) > 0 {
		pq, tq := seg[0]>>4, int(seg[0]&15)
		if tq > 3 || pq > 1 {
			return formatErr("DQT table %d precision %d", tq, pq)
		}
		n := 64 << pq
		if len(seg) < 1+n {
			return formatErr("DQT table %d truncated", tq)
		}
		t := new([64]uint16)
		for i := range 64 {
			if pq == 0 {
				t[zigzag[i]] = uint16(seg[1+i])
			} else {
				t[zigzag[i]] = uint16(seg[1+2*i])<<8 | uint16(seg[2+2*i])
			}
		}
		d.q[tq] = t
		seg = seg[1+n:]
	}
	return nil
}

func (d *decoder) frame() error {
	if d.haveFrame {
		return formatErr("a second frame header")
	}
	seg, err := d.segment()
	if err != nil {
		return err
	}
	if len(seg) < 6 {
		return formatErr("SOF length %d", len(seg))
	}
	if seg[0] != 8 {
		return &UnsupportedError{fmt.Sprintf("%d-bit samples", seg[0])}
	}
	d.h = int(seg[1])<<8 | int(seg[2])
	d.w = int(seg[3])<<8 | int(seg[4])
	nc := int(seg[5])
	if d.h == 0 {
		return &UnsupportedError{"height set by a DNL marker"}
	}
	if d.w == 0 || d.w*d.h > MaxPixels {
		return formatErr("frame %dx%d", d.w, d.h)
	}
	// The shortest block is two bits (a DC code and an end of block, of
	// one bit each): 64 samples for a quarter of a byte. A frame that
	// claims many more pixels than its file can code is corrupt; it is
	// refused before its planes are allocated.
	if d.w*d.h > 512*len(d.data) {
		return formatErr("frame %dx%d cannot be coded in a file of %d bytes", d.w, d.h, len(d.data))
	}
	if nc != 1 && nc != 3 {
		return &UnsupportedError{fmt.Sprintf("%d components", nc)}
	}
	if len(seg) != 6+3*nc {
		return formatErr("SOF length %d for %d components", len(seg), nc)
	}
	d.hmax, d.vmax = 1, 1
	for i := range nc {
		c := &component{id: seg[6+3*i], h: int(seg[7+3*i] >> 4), v: int(seg[7+3*i] & 15), tq: int(seg[8+3*i])}
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3 {
			return formatErr("component %d: sampling %dx%d, table %d", c.id, c.h, c.v, c.tq)
		}
		d.hmax, d.vmax = max(d.hmax, c.h), max(d.vmax, c.v)
		d.comps = append(d.comps, c)
	}
	if nc == 1 {
		// A single component is not interleaved: its MCU is one block.
		d.comps[0].h, d.comps[0].v, d.hmax, d.vmax = 1, 1, 1, 1
	}
	d.mcusX = (d.w + 8*d.hmax - 1) / (8 * d.hmax)
	d.mcusY = (d.h + 8*d.vmax - 1) / (8 * d.vmax)
	for _, c := range d.comps {
		c.bw, c.bh = d.mcusX*c.h, d.mcusY*c.v
		c.stride = 8 * c.bw
		c.pix = make([]uint8, c.stride*8*c.bh)
		if d.progressive {
			c.coef = make([]int32, 64*c.bw*c.bh)
		}
	}
	d.haveFrame = true
	return nil
}

// image wraps the decoded planes.
func (d *decoder) image() (image.Image, error) {
	if !d.haveFrame {
		return nil, formatErr("no frame")
	}
	if d.progressive {
		d.progressiveIDCT()
	}
	r := image.Rect(0, 0, d.w, d.h)
	if len(d.comps) == 1 {
		c := d.comps[0]
		return &image.Gray{Pix: c.pix, Stride: c.stride, Rect: r}, nil
	}
	y, cb, cr := d.comps[0], d.comps[1], d.comps[2]
	if y.h != d.hmax || y.v != d.vmax || cb.h != cr.h || cb.v != cr.v {
		return nil, &UnsupportedError{fmt.Sprintf("sampling Y %dx%d, Cb %dx%d, Cr %dx%d", y.h, y.v, cb.h, cb.v, cr.h, cr.v)}
	}
	ratio, ok := subsampling[[2]int{y.h / cb.h, y.v / cb.v}]
	if !ok || y.h%cb.h != 0 || y.v%cb.v != 0 {
		return nil, &UnsupportedError{fmt.Sprintf("sampling Y %dx%d, chroma %dx%d", y.h, y.v, cb.h, cb.v)}
	}
	return &image.YCbCr{Y: y.pix, Cb: cb.pix, Cr: cr.pix, YStride: y.stride, CStride: cb.stride, SubsampleRatio: ratio, Rect: r}, nil
}

// subsampling is image.YCbCr's ratio for the luma sampling factors over
// the chroma's (horizontal, vertical).
var subsampling = map[[2]int]image.YCbCrSubsampleRatio{
	{1, 1}: image.YCbCrSubsampleRatio444,
	{2, 1}: image.YCbCrSubsampleRatio422,
	{2, 2}: image.YCbCrSubsampleRatio420,
	{1, 2}: image.YCbCrSubsampleRatio440,
	{4, 1}: image.YCbCrSubsampleRatio411,
	{4, 2}: image.YCbCrSubsampleRatio410,
}

// scan decodes one Huffman-coded sequential scan.
func (d *decoder) scan(seg []byte) error {
	if !d.haveFrame {
		return formatErr("scan before the frame header")
	}
	if len(seg) < 1 {
		return formatErr("empty SOS")
	}
	ns := int(seg[0])
	if ns < 1 || ns > len(d.comps) || len(seg) != 4+2*ns {
		return formatErr("SOS of %d components, length %d", ns, len(seg))
	}
	comps := make([]*component, 0, ns)
	for i := range ns {
		id, t := seg[1+2*i], seg[2+2*i]
		var c *component
		for _, fc := range d.comps {
			if fc.id == id {
				c = fc
			}
		}
		if c == nil {
			return formatErr("scan names component %d, not in the frame", id)
		}
		c.td, c.ta = int(t>>4), int(t&15)
		if c.td > 3 || c.ta > 3 {
			return formatErr("component %d: Huffman tables DC %d AC %d", id, c.td, c.ta)
		}
		if d.q[c.tq] == nil {
			return formatErr("component %d: quantization table %d not defined", id, c.tq)
		}
		c.dcPred = 0
		comps = append(comps, c)
	}
	ss, se, ah, al := int(seg[1+2*ns]), int(seg[2+2*ns]), int(seg[3+2*ns]>>4), int(seg[3+2*ns]&15)
	d.bits = bitReader{data: d.data, pos: d.pos}
	var err error
	if d.progressive {
		err = d.progressiveScan(comps, ss, se, ah, al)
	} else {
		err = d.sequentialScan(comps, ss, se, ah<<4|al)
	}
	if err != nil {
		return err
	}
	d.pos = d.bits.end()
	return nil
}

func (d *decoder) sequentialScan(comps []*component, ss, se, a int) error {
	if ss != 0 || se != 63 || a != 0 {
		return &UnsupportedError{fmt.Sprintf("spectral selection %d..%d, approximation %d in a sequential scan", ss, se, a)}
	}
	for _, c := range comps {
		if d.dc[c.td] == nil || d.ac[c.ta] == nil {
			return formatErr("component %d: Huffman tables DC %d AC %d not defined", c.id, c.td, c.ta)
		}
	}
	var blk [64]int32
	return d.walk(comps, func(c *component, bx, by int) error {
		if err := d.block(c, &blk); err != nil {
			return err
		}
		idctIslow(&blk, d.q[c.tq], c.pix[8*by*c.stride+8*bx:], c.stride)
		return nil
	})
}

// walk visits the blocks of a scan in order, reading restart markers
// (and resetting the DC predictions and the end-of-band run) between
// intervals. A single-component scan walks the component's own blocks
// (only those covering its samples); an interleaved scan walks MCUs.
func (d *decoder) walk(comps []*component, each func(c *component, bx, by int) error) error {
	mcusX, mcusY := d.mcusX, d.mcusY
	ns := len(comps)
	if ns == 1 {
		c := comps[0]
		mcusX = (((d.w*c.h + d.hmax - 1) / d.hmax) + 7) / 8
		mcusY = (((d.h*c.v + d.vmax - 1) / d.vmax) + 7) / 8
	}
	d.eobrun = 0
	n := 0
	for my := range mcusY {
		for mx := range mcusX {
			if d.restart > 0 && n > 0 && n%d.restart == 0 {
				if err := d.bits.restartMarker(); err != nil {
					return err
				}
				for _, c := range comps {
					c.dcPred = 0
				}
				d.eobrun = 0
			}
			n++
			if ns == 1 {
				if err := each(comps[0], mx, my); err != nil {
					return err
				}
				continue
			}
			for _, c := range comps {
				for v := range c.v {
					for h := range c.h {
						if err := each(c, mx*c.h+h, my*c.v+v); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// dcDiff decodes one block's DC difference and adds it to c's predictor.
func (d *decoder) dcDiff(c *component) error {
	t, err := d.bits.decode(d.dc[c.td])
	if err != nil {
		return err
	}
	if t > 11 {
		return formatErr("DC difference of %d bits", t)
	}
	diff, err := d.bits.receiveExtend(int(t))
	if err != nil {
		return err
	}
	c.dcPred += diff
	return nil
}

// block decodes one block's quantized coefficients into blk (natural
// order).
func (d *decoder) block(c *component, blk *[64]int32) error {
	*blk = [64]int32{}
	if err := d.dcDiff(c); err != nil {
		return err
	}
	blk[0] = c.dcPred
	for k := 1; k < 64; {
		rs, err := d.bits.decode(d.ac[c.ta])
		if err != nil {
			return err
		}
		r, s := int(rs>>4), int(rs&15)
		if s == 0 {
			if r != 15 {
				break // EOB
			}
			k += 16
			continue
		}
		k += r
		if k > 63 {
			return formatErr("AC coefficient index %d past the block", k)
		}
		v, err := d.bits.receiveExtend(s)
		if err != nil {
			return err
		}
		blk[zigzag[k]] = v
		k++
	}
	return nil
}

// zigzag maps the zig-zag index of a coefficient to its natural
// (row-major) index.
var zigzag = [64]int{
	0, 1, 8, 16, 9, 2, 3, 10,
	17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34,
	27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36,
	29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46,
	53, 60, 61, 54, 47, 55, 62, 63,
}
