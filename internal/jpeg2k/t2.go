package jpeg2k

import (
	"cmp"
	"slices"
)

// Tier 2 (T.800 Annex B): packet headers with tag trees and bit
// stuffing, packet bodies, in the tile's progression order.

type tagNode struct {
	value, low int32
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
	low, th := int32(0), int32(threshold)
	for k := len(t.levels) - 1; k >= 0; k-- {
		n := &t.levels[k][(y>>k)*t.widths[k]+x>>k]
		if low > n.low {
			n.low = low
		} else {
			low = n.low
		}
		for low < th && low < n.value && !br.err {
			if br.bit() == 1 {
				n.value = low
			} else {
				low++
			}
		}
		n.low = low
	}
	v := t.levels[0][y*t.widths[0]+x].value
	return int(v), v < th
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

// packetKey names one precinct's packets (all layers): component,
// resolution, precinct, and where the precinct starts on the reference
// grid (clipped to the tile), which orders the position-driven
// progressions (B.12.1.3-5).
type packetKey struct{ c, r, k, x, y int }

// packets decodes every packet of the tile in its progression order.
func (td *tileDecoder) packets() error {
	p := td.t.p
	var keys []packetKey
	for c, tc := range td.comps {
		for r := range tc.res {
			res := &tc.res[r]
			n := len(tc.res) - 1 - r
			for k := range res.precincts {
				i, j := res.px0+k%res.npx, res.py0+k/res.npx
				keys = append(keys, packetKey{c, r, k, max(tc.x0, i<<(res.ppx+n)), max(tc.y0, j<<(res.ppy+n))})
			}
		}
	}
	less := map[int]func(a, b packetKey) int{
		0: func(a, b packetKey) int { return cmpInts(a.r, b.r, a.c, b.c, a.k, b.k) },           // LRCP
		1: func(a, b packetKey) int { return cmpInts(a.r, b.r, a.c, b.c, a.k, b.k) },           // RLCP
		2: func(a, b packetKey) int { return cmpInts(a.r, b.r, a.y, b.y, a.x, b.x, a.c, b.c) }, // RPCL
		3: func(a, b packetKey) int { return cmpInts(a.y, b.y, a.x, b.x, a.c, b.c, a.r, b.r) }, // PCRL
		4: func(a, b packetKey) int { return cmpInts(a.c, b.c, a.y, b.y, a.x, b.x, a.r, b.r) }, // CPRL
	}[p.prog]
	slices.SortStableFunc(keys, less)
	var err error
	visit := func(key packetKey, l int) bool {
		if err == nil {
			err = td.packet(key.c, key.r, key.k, l)
		}
		return err == nil && td.pos < len(td.t.data)
	}
	switch p.prog {
	case 0: // layer outermost
		for l := 0; l < p.layers; l++ {
			for _, key := range keys {
				if !visit(key, l) {
					return err
				}
			}
		}
	case 1: // resolution, then layer
		for lo := 0; lo < len(keys); {
			hi := lo
			for hi < len(keys) && keys[hi].r == keys[lo].r {
				hi++
			}
			for l := 0; l < p.layers; l++ {
				for _, key := range keys[lo:hi] {
					if !visit(key, l) {
						return err
					}
				}
			}
			lo = hi
		}
	default: // layer innermost
		for _, key := range keys {
			for l := 0; l < p.layers; l++ {
				if !visit(key, l) {
					return err
				}
			}
		}
	}
	return err
}

// cmpInts compares pairs (a0, b0), (a1, b1), ... lexicographically.
func cmpInts(v ...int) int {
	for i := 0; i+1 < len(v); i += 2 {
		if c := cmp.Compare(v[i], v[i+1]); c != 0 {
			return c
		}
	}
	return 0
}

type contribution struct {
	cb     *codeblock
	passes int
	length int
}

// packet decodes the packet of layer l, precinct k, resolution r,
// component c.
func (td *tileDecoder) packet(c, r, k, l int) error {
	data := td.t.data
	if td.t.p.sop && len(data)-td.pos >= 6 && data[td.pos] == 0xFF && data[td.pos+1] == 0x91 {
		td.pos += 6
	}
	br := &bitReader{data: data, pos: td.pos}
	var list []contribution
	if br.bit() == 1 {
		res := &td.comps[c].res[r]
		for bi := 0; bi < len(res.bands) && !br.err; bi++ {
			b, pb := &res.bands[bi], &res.precincts[k].bands[bi]
			for j := 0; j < pb.cw*pb.ch && !br.err; j++ {
				x, y := j%pb.cw, j/pb.cw
				cb := &b.cbs[(pb.cy0+y)*b.ncbx+pb.cx0+x]
				if cb.included {
					if br.bit() == 0 {
						continue
					}
				} else {
					if _, in := pb.incl.decode(br, x, y, l+1); !in {
						continue
					}
					zbp := 0
					for th := 1; ; th++ {
						v, known := pb.zbp.decode(br, x, y, th)
						if known {
							zbp = v
							break
						}
						if th > 64 || br.err {
							return formatErr("packet header (component %d, resolution %d, layer %d): missing bit-planes beyond 64", c, r, l)
						}
					}
					cb.included, cb.zbp = true, uint8(zbp)
				}
				n := br.passes()
				if total := int(cb.passes) + n; total > 3*(b.planes-int(cb.zbp))-2 {
					return formatErr("packet header (component %d, resolution %d, layer %d): a code-block with %d coding passes over %d bit-planes", c, r, l, total, b.planes-int(cb.zbp))
				}
				lblock := 3 + int(cb.lblock)
				for br.bit() == 1 && !br.err && lblock < 32 {
					lblock++
				}
				bits := lblock + log2(n)
				if bits > 31 {
					return formatErr("packet header (component %d, resolution %d, layer %d): %d-bit code-block length", c, r, l, bits)
				}
				cb.lblock = uint8(lblock - 3)
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
		k.cb.passes += uint16(k.passes)
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
