package ljpeg

// huffman is one Huffman table as the JPEG standard's decoding procedure
// (ITU-T T.81 F.2.2.3) reads it: per code length, the largest code and
// where its values start.
type huffman struct {
	maxcode [17]int32 // -1: no code of that length
	valptr  [17]int32
	mincode [17]int32
	vals    []uint8
}

func (d *decoder) huff(seg []byte) error {
	for len(seg) > 0 {
		if len(seg) < 17 {
			return formatErr("DHT truncated")
		}
		tc, th := seg[0]>>4, int(seg[0]&15)
		if tc > 1 || th > 3 {
			return formatErr("DHT class %d table %d", tc, th)
		}
		t := &huffman{}
		total := 0
		for l := 1; l <= 16; l++ {
			total += int(seg[l])
		}
		if total > 256 || len(seg) < 17+total {
			return formatErr("DHT table %d/%d: %d values", tc, th, total)
		}
		t.vals = append([]uint8(nil), seg[17:17+total]...)
		code, k := int32(0), int32(0)
		for l := 1; l <= 16; l++ {
			n := int32(seg[l])
			if n == 0 {
				t.maxcode[l] = -1
			} else {
				t.valptr[l], t.mincode[l] = k, code
				code += n
				k += n
				t.maxcode[l] = code - 1
				if code > 1<<l {
					return formatErr("DHT table %d/%d: too many codes of length %d", tc, th, l)
				}
			}
			code <<= 1
		}
		if tc == 0 {
			d.dc[th] = t
		} else {
			d.ac[th] = t
		}
		seg = seg[17+total:]
	}
	return nil
}

// bitReader reads entropy-coded data: 0xFF 0x00 is a 0xFF byte; at a
// marker it gives zero bits, as libjpeg does for a truncated scan.
type bitReader struct {
	data   []byte
	pos    int
	acc    uint32
	n      int // bits in acc
	marker bool
}

func (b *bitReader) fill() {
	for b.n <= 24 {
		var c byte
		if !b.marker && b.pos < len(b.data) {
			c = b.data[b.pos]
			if c == 0xFF {
				if b.pos+1 < len(b.data) && b.data[b.pos+1] == 0x00 {
					b.pos += 2
				} else {
					b.marker = true
					c = 0
				}
			} else {
				b.pos++
			}
		}
		b.acc |= uint32(c) << (24 - b.n)
		b.n += 8
	}
}

func (b *bitReader) bit() int32 {
	if b.n == 0 {
		b.fill()
	}
	v := int32(b.acc >> 31)
	b.acc <<= 1
	b.n--
	return v
}

func (b *bitReader) decode(t *huffman) (uint8, error) {
	code := int32(0)
	for l := 1; l <= 16; l++ {
		code = code<<1 | b.bit()
		if t.maxcode[l] >= 0 && code <= t.maxcode[l] {
			return t.vals[t.valptr[l]+code-t.mincode[l]], nil
		}
	}
	return 0, formatErr("bad Huffman code at byte %d", b.pos)
}

// receiveExtend reads s bits and extends them to a signed value (T.81
// F.2.2.1).
func (b *bitReader) receiveExtend(s int) (int32, error) {
	if s == 0 {
		return 0, nil
	}
	if s > 16 {
		return 0, formatErr("coefficient of %d bits", s)
	}
	v := int32(0)
	for range s {
		v = v<<1 | b.bit()
	}
	if v < 1<<(s-1) {
		v += -1<<s + 1
	}
	return v, nil
}

// restartMarker drops the bits left in the current byte and reads an RST
// marker.
func (b *bitReader) restartMarker() error {
	b.acc, b.n = 0, 0
	if b.marker {
		b.marker = false
	}
	p := b.pos
	for p < len(b.data) && b.data[p] == 0xFF {
		p++
	}
	if p >= len(b.data) || p == b.pos || b.data[p] < 0xD0 || b.data[p] > 0xD7 {
		return formatErr("expected a restart marker at byte %d", b.pos)
	}
	b.pos = p + 1
	return nil
}

// end is the offset of the first byte after the scan's entropy-coded
// data: the next marker.
func (b *bitReader) end() int {
	p := b.pos
	for p+1 < len(b.data) && (b.data[p] != 0xFF || b.data[p+1] == 0x00 || (b.data[p+1] >= 0xD0 && b.data[p+1] <= 0xD7)) {
		p++
	}
	return p
}
