package jpeg2k

import "encoding/binary"

// Markers (T.800 Table A.2).
const (
	mSOT = 0xFF90
	mSOD = 0xFF93
	mEOC = 0xFFD9
	mSIZ = 0xFF51
	mCOD = 0xFF52
	mCOC = 0xFF53
	mQCD = 0xFF5C
	mQCC = 0xFF5D
	mPOC = 0xFF5F
	mPPM = 0xFF60
	mPPT = 0xFF61
	mRGN = 0xFF5E
	mSOP = 0xFF91
	mEPH = 0xFF92
)

// Bounds on header values: a codestream claiming more is refused.
const (
	maxComponents = 4 // gray, gray+alpha, RGB, RGBA
	maxLevels     = 32
	maxTiles      = 1 << 16
	maxLayers     = 1 << 16
)

type component struct {
	prec   int
	signed bool
	dx, dy int
}

// style is one component's coding style (COD/COC SPcod).
type style struct {
	levels     int
	xcb, ycb   int // code-block size exponents
	cbStyle    byte
	reversible bool
	precincts  []byte // PPx | PPy<<4 per resolution; nil: 15,15
}

// quant is one component's quantization (QCD/QCC).
type quant struct {
	kind  int // 0 none, 1 scalar derived, 2 scalar expounded
	guard int
	exp   []int
	mant  []int
}

// params are the coding parameters in force for a tile.
type params struct {
	sop, eph bool
	prog     int
	layers   int
	mct      bool
	styles   []style
	quants   []quant
	// set marks components whose style/quant came from a COC/QCC (which a
	// later COD/QCD of the same header does not override).
	styleSet, quantSet []bool
}

func (p *params) clone() *params {
	q := *p
	q.styles = append([]style(nil), p.styles...)
	q.quants = append([]quant(nil), p.quants...)
	q.styleSet = make([]bool, len(p.styles))
	q.quantSet = make([]bool, len(p.quants))
	return &q
}

type decoder struct {
	data []byte
	pos  int
	opt  Options

	w, h, x0, y0     int // image area on the reference grid
	tw, th, tx0, ty0 int
	ntx, nty         int
	comps            []component
	main             *params
	haveCOD, haveQCD bool
	tiles            []*tile
	out              [][]uint8 // per component, (w-x0)×(h-y0)
}

func (d *decoder) u16(p int) int { return int(binary.BigEndian.Uint16(d.data[p:])) }
func (d *decoder) u32(p int) int { return int(binary.BigEndian.Uint32(d.data[p:])) }

// segment reads the marker at d.pos and, for markers with a segment,
// its payload (after the length field).
func (d *decoder) segment() (marker int, body []byte, err error) {
	if len(d.data)-d.pos < 2 {
		return 0, nil, formatErr("codestream ends at offset %d without EOC", d.pos)
	}
	marker = d.u16(d.pos)
	if marker>>8 != 0xFF {
		return 0, nil, formatErr("expected a marker at offset %d, found 0x%04X", d.pos, marker)
	}
	if marker == mSOD || marker == mEOC || marker == 0xFF4F || (marker >= 0xFF30 && marker <= 0xFF3F) {
		d.pos += 2
		return marker, nil, nil
	}
	if len(d.data)-d.pos < 4 {
		return 0, nil, formatErr("truncated marker 0x%04X at offset %d", marker, d.pos)
	}
	n := d.u16(d.pos + 2)
	if n < 2 || n > len(d.data)-d.pos-2 {
		return 0, nil, formatErr("marker 0x%04X at offset %d has length %d beyond the codestream", marker, d.pos, n)
	}
	body = d.data[d.pos+4 : d.pos+2+n]
	d.pos += 2 + n
	return marker, body, nil
}

func (d *decoder) mainHeader() error {
	m, body, err := d.segment()
	if err != nil {
		return err
	}
	if m != mSIZ {
		return formatErr("SIZ must follow SOC, found 0x%04X", m)
	}
	if err := d.siz(body); err != nil {
		return err
	}
	d.main = &params{
		styles: make([]style, len(d.comps)), quants: make([]quant, len(d.comps)),
		styleSet: make([]bool, len(d.comps)), quantSet: make([]bool, len(d.comps)),
	}
	for {
		start := d.pos
		m, body, err := d.segment()
		if err != nil {
			return err
		}
		if m == mSOT {
			d.pos = start
			break
		}
		if err := d.headerMarker(d.main, m, body, true); err != nil {
			return err
		}
	}
	if !d.haveCOD || !d.haveQCD {
		return formatErr("main header lacks a COD or QCD marker")
	}
	return nil
}

// headerMarker applies a main or tile-part header marker to p.
func (d *decoder) headerMarker(p *params, m int, body []byte, main bool) error {
	switch m {
	case mCOD:
		if main {
			d.haveCOD = true
		}
		return d.cod(p, body)
	case mCOC:
		return d.coc(p, body)
	case mQCD:
		if main {
			d.haveQCD = true
		}
		q, err := d.qcx(body, 0)
		if err != nil {
			return err
		}
		for c := range p.quants {
			if !p.quantSet[c] {
				p.quants[c] = q
			}
		}
	case mQCC:
		c, n, err := d.compIndex(body)
		if err != nil {
			return err
		}
		q, err := d.qcx(body, n)
		if err != nil {
			return err
		}
		p.quants[c], p.quantSet[c] = q, true
	case mPOC:
		return unsupported("progression order change (POC marker)")
	case mPPM, mPPT:
		return unsupported("packed packet headers (PPM/PPT marker)")
	case mRGN:
		return unsupported("region of interest (RGN marker)")
	case mSIZ, 0xFF4F, mSOD, mEOC:
		return formatErr("marker 0x%04X out of place in a header", m)
	}
	return nil // COM, TLM, PLM, PLT, CRG, CAP, ... carry nothing we need
}

func (d *decoder) siz(b []byte) error {
	if len(b) < 36 {
		return formatErr("SIZ marker too short (%d bytes)", len(b))
	}
	be := binary.BigEndian
	d.w, d.h = int(be.Uint32(b[2:])), int(be.Uint32(b[6:]))
	d.x0, d.y0 = int(be.Uint32(b[10:])), int(be.Uint32(b[14:]))
	d.tw, d.th = int(be.Uint32(b[18:])), int(be.Uint32(b[22:]))
	d.tx0, d.ty0 = int(be.Uint32(b[26:])), int(be.Uint32(b[30:]))
	nc := int(be.Uint16(b[34:]))
	if d.w <= d.x0 || d.h <= d.y0 || d.tw == 0 || d.th == 0 || d.tx0 > d.x0 || d.ty0 > d.y0 ||
		d.tx0+d.tw <= d.x0 || d.ty0+d.th <= d.y0 {
		return formatErr("SIZ image %d×%d (origin %d,%d), tiles %d×%d (origin %d,%d) are inconsistent",
			d.w, d.h, d.x0, d.y0, d.tw, d.th, d.tx0, d.ty0)
	}
	if nc < 1 || nc > maxComponents {
		return unsupported("%d components (1..%d are decoded)", nc, maxComponents)
	}
	if len(b) < 36+3*nc {
		return formatErr("SIZ marker too short for %d components", nc)
	}
	W, H := d.w-d.x0, d.h-d.y0
	if W > d.opt.MaxPixels || H > d.opt.MaxPixels || W*H > d.opt.MaxPixels/nc {
		return unsupported("image of %d×%d×%d samples (the limit is %d)", W, H, nc, d.opt.MaxPixels)
	}
	d.ntx = ceilDiv(d.w-d.tx0, d.tw)
	d.nty = ceilDiv(d.h-d.ty0, d.th)
	if d.ntx > maxTiles || d.nty > maxTiles || d.ntx*d.nty > maxTiles {
		return unsupported("%d×%d tiles (at most %d)", d.ntx, d.nty, maxTiles)
	}
	d.comps = make([]component, nc)
	for i := range d.comps {
		s := b[36+3*i:]
		c := component{prec: int(s[0]&0x7F) + 1, signed: s[0]&0x80 != 0, dx: int(s[1]), dy: int(s[2])}
		switch {
		case c.dx != 1 || c.dy != 1:
			return unsupported("component %d subsampled %d×%d", i, c.dx, c.dy)
		case c.signed:
			return unsupported("signed component %d", i)
		case c.prec != 8:
			return unsupported("%d-bit component %d (8-bit is decoded)", c.prec, i)
		}
		d.comps[i] = c
	}
	d.tiles = make([]*tile, d.ntx*d.nty)
	return nil
}

// spcod reads SPcod/SPcoc (levels, code-block size and style, wavelet,
// precinct sizes when custom) from b.
func spcod(b []byte, custom bool) (style, error) {
	if len(b) < 5 {
		return style{}, formatErr("COD/COC marker too short")
	}
	s := style{levels: int(b[0]), xcb: int(b[1]&0xF) + 2, ycb: int(b[2]&0xF) + 2, cbStyle: b[3], reversible: b[4] == 1}
	switch {
	case s.levels > maxLevels:
		return s, formatErr("%d decomposition levels (at most %d)", s.levels, maxLevels)
	case s.xcb > 10 || s.ycb > 10 || s.xcb+s.ycb > 12:
		return s, formatErr("code-block size 2^%d×2^%d (at most 4096 samples)", s.xcb, s.ycb)
	case b[4] > 1:
		return s, unsupported("wavelet transform %d (5/3 and 9/7 are decoded)", b[4])
	case s.cbStyle != 0:
		return s, unsupported("code-block style 0x%02X (bypass, reset, termination, vertically causal, predictable termination, segmentation symbols; only the default style is decoded)", s.cbStyle)
	}
	if custom {
		if len(b) < 5+s.levels+1 {
			return s, formatErr("COD/COC marker too short for %d precinct sizes", s.levels+1)
		}
		s.precincts = append([]byte(nil), b[5:5+s.levels+1]...)
	}
	return s, nil
}

func (d *decoder) cod(p *params, b []byte) error {
	if len(b) < 5 {
		return formatErr("COD marker too short")
	}
	p.sop, p.eph = b[0]&2 != 0, b[0]&4 != 0
	p.prog, p.layers, p.mct = int(b[1]), int(binary.BigEndian.Uint16(b[2:])), b[4] != 0
	if p.prog > 4 {
		return formatErr("progression order %d", p.prog)
	}
	if p.layers == 0 {
		return formatErr("COD marker with 0 layers")
	}
	s, err := spcod(b[5:], b[0]&1 != 0)
	if err != nil {
		return err
	}
	for c := range p.styles {
		if !p.styleSet[c] {
			p.styles[c] = s
		}
	}
	return nil
}

func (d *decoder) compIndex(b []byte) (c, n int, err error) {
	n = 1
	if len(d.comps) >= 257 {
		n = 2
	}
	if len(b) < n {
		return 0, 0, formatErr("COC/QCC marker too short")
	}
	c = int(b[0])
	if n == 2 {
		c = int(binary.BigEndian.Uint16(b))
	}
	if c >= len(d.comps) {
		return 0, 0, formatErr("COC/QCC for component %d of %d", c, len(d.comps))
	}
	return c, n, nil
}

func (d *decoder) coc(p *params, b []byte) error {
	c, n, err := d.compIndex(b)
	if err != nil {
		return err
	}
	if len(b) < n+1 {
		return formatErr("COC marker too short")
	}
	s, err := spcod(b[n+1:], b[n]&1 != 0)
	if err != nil {
		return err
	}
	p.styles[c], p.styleSet[c] = s, true
	return nil
}

// qcx reads a QCD (or QCC from offset n) body.
func (d *decoder) qcx(b []byte, n int) (quant, error) {
	if len(b) < n+1 {
		return quant{}, formatErr("QCD/QCC marker too short")
	}
	q := quant{kind: int(b[n] & 0x1F), guard: int(b[n] >> 5)}
	b = b[n+1:]
	switch q.kind {
	case 0:
		for _, v := range b {
			q.exp = append(q.exp, int(v>>3))
			q.mant = append(q.mant, 0)
		}
	case 1, 2:
		for i := 0; i+1 < len(b); i += 2 {
			v := int(binary.BigEndian.Uint16(b[i:]))
			q.exp = append(q.exp, v>>11)
			q.mant = append(q.mant, v&0x7FF)
		}
	default:
		return q, formatErr("quantization style %d", q.kind)
	}
	if len(q.exp) == 0 {
		return q, formatErr("QCD/QCC marker without step sizes")
	}
	return q, nil
}

// step returns the exponent and mantissa of subband band (0 LL, then
// 3 per resolution) of a component with the given levels.
func (q *quant) step(band, levels int) (exp, mant int, err error) {
	if q.kind == 1 {
		// derived: ε_b = ε_0 − N_L + n_b (E-5)
		n := 0
		if band > 0 {
			n = levels - (band-1)/3
		} else {
			n = levels
		}
		return q.exp[0] - levels + n, q.mant[0], nil
	}
	if band >= len(q.exp) {
		return 0, 0, formatErr("QCD/QCC gives %d step sizes, subband %d needs one", len(q.exp), band)
	}
	return q.exp[band], q.mant[band], nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ceilDivPow2 is ceil(a / 2^n) for a ≥ 0.
func ceilDivPow2(a, n int) int { return (a + (1 << n) - 1) >> n }
