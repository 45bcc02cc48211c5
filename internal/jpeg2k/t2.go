package jpeg2k

// Tier 2 (T.800 Annex B): packet headers with tag trees and bit
// stuffing, packet bodies, in the tile's progression order.

type tagNode struct {
	value, low int
}

// tagTree is a quad tree of per-code-block values (B.10.2).
type tagTree struct {
	levels [][]tagNode
	widths []int
}

const tagUnknown = 1 << 30

func newTagTree(w, h int) *tagTree {
	t := &tagTree{}
	for {
		lv := make([]tagNode, w*h)
		for i := range lv {
			lv[i].value = tagUnknown
		}
		t.levels = append(t.levels, lv)
		t.widths = append(t.widths, w)
		if w == 1 && h == 1 {
			return t
		}
		w, h = (w+1)/2, (h+1)/2
	}
}

// decode reads bits until the value of leaf (x,y) is known or known to
// be ≥ threshold, and reports whether it is < threshold.
func (t *tagTree) decode(br *bitReader, x, y, threshold int) (int, bool) {
	low := 0
	for k := len(t.levels) - 1; k >= 0; k-- {
		n := &t.levels[k][(y>>k)*t.widths[k]+x>>k]
		if low > n.low {
			n.low = low
		} else {
			low = n.low
		}
		for low < threshold && low < n.value && !br.err {
			if br.bit() == 1 {
				n.value = low
			} else {
				low++
			}
		}
		n.low = low
	}
	v := t.levels[0][y*t.widths[0]+x].value
	return v, v < threshold
}

// bitReader reads packet header bits, skipping the stuffed bit after 0xFF.
type bitReader struct {
	data []byte
	pos  int
	buf  byte
	n    int
	err  bool
}

func (b *bitReader) bit() int {
	if b.n == 0 {
		if b.pos >= len(b.data) {
			b.err = true
			return 0
		}
		b.n = 8
		if b.buf == 0xFF {
			b.n = 7
		}
		b.buf = b.data[b.pos]
		b.pos++
	}
	b.n--
	return int(b.buf>>b.n) & 1
}

func (b *bitReader) bits(n int) int {
	v := 0
	for ; n > 0; n-- {
		v = v<<1 | b.bit()
	}
	return v
}

// align ends the header: a header ending in 0xFF is followed by a byte
// carrying the stuffed bit.
func (b *bitReader) align() {
	if b.buf == 0xFF {
		b.n = 0
		b.bit()
		b.buf = 0
	}
	b.n = 0
}

func (b *bitReader) passes() int {
	switch {
	case b.bit() == 0:
		return 1
	case b.bit() == 0:
		return 2
	}
	if n := b.bits(2); n != 3 {
		return 3 + n
	}
	if n := b.bits(5); n != 31 {
		return 6 + n
	}
	return 37 + b.bits(7)
}

// packets decodes every packet of the tile in its progression order.
func (td *tileDecoder) packets() error {
	p := td.t.p
	maxRes := 0
	for _, tc := range td.comps {
		maxRes = max(maxRes, len(tc.res))
	}
	nc := len(td.comps)
	// With one precinct per resolution the position-driven orders visit
	// every precinct at the tile's origin: RPCL is R,C,L and PCRL and
	// CPRL are C,R,L.
	var err error
	visit := func(c, r, l int) bool {
		if err == nil && r < len(td.comps[c].res) {
			err = td.packet(c, r, l)
		}
		return err == nil && td.pos < len(td.t.data)
	}
	L := p.layers
	switch p.prog {
	case 0: // LRCP
		for l := 0; l < L; l++ {
			for r := 0; r < maxRes; r++ {
				for c := 0; c < nc; c++ {
					if !visit(c, r, l) {
						return err
					}
				}
			}
		}
	case 1: // RLCP
		for r := 0; r < maxRes; r++ {
			for l := 0; l < L; l++ {
				for c := 0; c < nc; c++ {
					if !visit(c, r, l) {
						return err
					}
				}
			}
		}
	case 2: // RPCL
		for r := 0; r < maxRes; r++ {
			for c := 0; c < nc; c++ {
				for l := 0; l < L; l++ {
					if !visit(c, r, l) {
						return err
					}
				}
			}
		}
	default: // PCRL, CPRL
		for c := 0; c < nc; c++ {
			for r := 0; r < maxRes; r++ {
				for l := 0; l < L; l++ {
					if !visit(c, r, l) {
						return err
					}
				}
			}
		}
	}
	return err
}

type contribution struct {
	cb     *codeblock
	passes int
	length int
}

// packet decodes the packet of layer l, resolution r, component c.
func (td *tileDecoder) packet(c, r, l int) error {
	data := td.t.data
	if td.t.p.sop && len(data)-td.pos >= 6 && data[td.pos] == 0xFF && data[td.pos+1] == 0x91 {
		td.pos += 6
	}
	br := &bitReader{data: data, pos: td.pos}
	var list []contribution
	if br.bit() == 1 {
		res := &td.comps[c].res[r]
		for bi := 0; bi < len(res.bands) && !br.err; bi++ {
			b := &res.bands[bi]
			for j := 0; j < len(b.cbs) && !br.err; j++ {
				cb := &b.cbs[j]
				x, y := j%b.ncbx, j/b.ncbx
				if cb.included {
					if br.bit() == 0 {
						continue
					}
				} else {
					if _, in := b.incl.decode(br, x, y, l+1); !in {
						continue
					}
					zbp := 0
					for th := 1; ; th++ {
						v, known := b.zbp.decode(br, x, y, th)
						if known {
							zbp = v
							break
						}
						if th > 64 || br.err {
							return formatErr("packet header (component %d, resolution %d, layer %d): missing bit-planes beyond 64", c, r, l)
						}
					}
					cb.included, cb.zbp = true, zbp
				}
				n := br.passes()
				for br.bit() == 1 && !br.err {
					cb.lblock++
				}
				bits := cb.lblock + log2(n)
				if bits > 31 {
					return formatErr("packet header (component %d, resolution %d, layer %d): %d-bit code-block length", c, r, l, bits)
				}
				list = append(list, contribution{cb, n, br.bits(bits)})
			}
		}
	}
	br.align()
	if br.err {
		return formatErr("packet header (component %d, resolution %d, layer %d) runs past the tile data", c, r, l)
	}
	td.pos = br.pos
	if td.t.p.eph && len(data)-td.pos >= 2 && data[td.pos] == 0xFF && data[td.pos+1] == 0x92 {
		td.pos += 2
	}
	for _, k := range list {
		if k.length > len(data)-td.pos {
			return formatErr("packet (component %d, resolution %d, layer %d) has %d bytes of code-block data, %d remain", c, r, l, k.length, len(data)-td.pos)
		}
		k.cb.data = append(k.cb.data, data[td.pos:td.pos+k.length]...)
		k.cb.passes += k.passes
		td.pos += k.length
	}
	return nil
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}
