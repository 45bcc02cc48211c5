package jpeg2k

// MQ arithmetic decoder (T.800 Annex C) and EBCOT tier-1 bit-plane
// decoding of one code-block (Annex D), default code-block style.

type qeEntry struct {
	qe         uint32
	nmps, nlps uint8
	sw         bool
}

// qeTable is T.800 Table C.2.
var qeTable = [47]qeEntry{
	{0x5601, 1, 1, true}, {0x3401, 2, 6, false}, {0x1801, 3, 9, false}, {0x0AC1, 4, 12, false},
	{0x0521, 5, 29, false}, {0x0221, 38, 33, false}, {0x5601, 7, 6, true}, {0x5401, 8, 14, false},
	{0x4801, 9, 14, false}, {0x3801, 10, 14, false}, {0x3001, 11, 17, false}, {0x2401, 12, 18, false},
	{0x1C01, 13, 20, false}, {0x1601, 29, 21, false}, {0x5601, 15, 14, true}, {0x5401, 16, 14, false},
	{0x5101, 17, 15, false}, {0x4801, 18, 16, false}, {0x3801, 19, 17, false}, {0x3401, 20, 18, false},
	{0x3001, 21, 19, false}, {0x2801, 22, 19, false}, {0x2401, 23, 20, false}, {0x2201, 24, 21, false},
	{0x1C01, 25, 22, false}, {0x1801, 26, 23, false}, {0x1601, 27, 24, false}, {0x1401, 28, 25, false},
	{0x1201, 29, 26, false}, {0x1101, 30, 27, false}, {0x0AC1, 31, 28, false}, {0x09C1, 32, 29, false},
	{0x08A1, 33, 30, false}, {0x0521, 34, 31, false}, {0x0441, 35, 32, false}, {0x02A1, 36, 33, false},
	{0x0221, 37, 34, false}, {0x0141, 38, 35, false}, {0x0111, 39, 36, false}, {0x0085, 40, 37, false},
	{0x0049, 41, 38, false}, {0x0025, 42, 39, false}, {0x0015, 43, 40, false}, {0x0009, 44, 41, false},
	{0x0005, 45, 42, false}, {0x0001, 45, 43, false}, {0x5601, 46, 46, false},
}

// Contexts (T.800 Table D.7): 0–8 zero coding, 9–13 sign, 14–16
// magnitude refinement, 17 run length, 18 uniform.
const (
	ctxRL  = 17
	ctxUni = 18
	nCtx   = 19
)

type mqDecoder struct {
	data  []byte
	bp    int
	a, c  uint32
	ct    int
	state [nCtx]uint8
	mps   [nCtx]uint8
}

// byteAt reads past the end as 0xFF, which the decoder treats as a marker.
func (m *mqDecoder) byteAt(i int) uint32 {
	if i < len(m.data) {
		return uint32(m.data[i])
	}
	return 0xFF
}

func (m *mqDecoder) init(data []byte) {
	m.data, m.bp = data, 0
	m.c = m.byteAt(0) << 16
	m.byteIn()
	m.c <<= 7
	m.ct -= 7
	m.a = 0x8000
	for i := range m.state {
		m.state[i], m.mps[i] = 0, 0
	}
	m.state[0] = 4
	m.state[ctxRL] = 3
	m.state[ctxUni] = 46
}

func (m *mqDecoder) byteIn() {
	if m.byteAt(m.bp) == 0xFF {
		if m.byteAt(m.bp+1) > 0x8F {
			m.c += 0xFF00
			m.ct = 8
		} else {
			m.bp++
			m.c += m.byteAt(m.bp) << 9
			m.ct = 7
		}
		return
	}
	m.bp++
	m.c += m.byteAt(m.bp) << 8
	m.ct = 8
}

func (m *mqDecoder) renorm() {
	for {
		if m.ct == 0 {
			m.byteIn()
		}
		m.a <<= 1
		m.c <<= 1
		m.ct--
		if m.a&0x8000 != 0 {
			return
		}
	}
}

func (m *mqDecoder) decode(cx int) int {
	e := &qeTable[m.state[cx]]
	mps := int(m.mps[cx])
	m.a -= e.qe
	d := mps
	if m.c>>16 < e.qe {
		// LPS sub-interval (with conditional exchange)
		if m.a < e.qe {
			m.state[cx] = e.nmps
		} else {
			d = 1 - mps
			if e.sw {
				m.mps[cx] ^= 1
			}
			m.state[cx] = e.nlps
		}
		m.a = e.qe
	} else {
		m.c -= e.qe << 16
		if m.a&0x8000 != 0 {
			return mps
		}
		// MPS sub-interval (with conditional exchange)
		if m.a < e.qe {
			d = 1 - mps
			if e.sw {
				m.mps[cx] ^= 1
			}
			m.state[cx] = e.nlps
		} else {
			m.state[cx] = e.nmps
		}
	}
	m.renorm()
	return d
}

// Coefficient state flags.
const (
	fSig     = 1
	fVisit   = 2
	fRefined = 4
	fNeg     = 8
)

// t1 decodes code-blocks; its buffers are reused from block to block.
type t1 struct {
	w, h   int
	orient int // 0 LL, 1 HL, 2 LH, 3 HH
	mag    []int32
	flags  []uint8 // (w+2)×(h+2) with a border of insignificant samples
	mq     mqDecoder
}

func (t *t1) reset(w, h, orient int) {
	t.w, t.h, t.orient = w, h, orient
	n := w * h
	if cap(t.mag) < n {
		t.mag = make([]int32, n)
	}
	t.mag = t.mag[:n]
	clear(t.mag)
	m := (w + 2) * (h + 2)
	if cap(t.flags) < m {
		t.flags = make([]uint8, m)
	}
	t.flags = t.flags[:m]
	clear(t.flags)
}

// decode runs passes coding passes over planes bit-planes (the first a
// cleanup pass on the top plane) on data. Magnitudes are kept with one
// extra bit below the last decoded plane, set to one half (the
// reconstruction point OpenJPEG uses).
func (t *t1) decode(data []byte, planes, passes int) {
	t.mq.init(data)
	p := planes - 1
	kind := 2
	for i := 0; i < passes && p >= 0; i++ {
		switch kind {
		case 0:
			t.sigPass(p)
		case 1:
			t.refPass(p)
		case 2:
			t.cleanupPass(p)
		}
		if kind++; kind == 3 {
			kind = 0
			p--
		}
	}
}

func (t *t1) fi(x, y int) int { return (y+1)*(t.w+2) + x + 1 }

// neighbours returns the counts of significant horizontal, vertical and
// diagonal neighbours of flag index i.
func (t *t1) neighbours(i int) (h, v, d int) {
	f, s := t.flags, t.w+2
	h = int(f[i-1]&fSig + f[i+1]&fSig)
	v = int(f[i-s]&fSig + f[i+s]&fSig)
	d = int(f[i-s-1]&fSig + f[i-s+1]&fSig + f[i+s-1]&fSig + f[i+s+1]&fSig)
	return
}

// zcContext is T.800 Table D.1.
func (t *t1) zcContext(i int) int {
	h, v, d := t.neighbours(i)
	switch t.orient {
	case 1: // HL: the table with H and V exchanged
		h, v = v, h
	case 3:
		hv := h + v
		switch {
		case d >= 3:
			return 8
		case d == 2:
			if hv >= 1 {
				return 7
			}
			return 6
		case d == 1:
			return [3]int{3, 4, 5}[min(hv, 2)]
		default:
			return [3]int{0, 1, 2}[min(hv, 2)]
		}
	}
	switch {
	case h == 2:
		return 8
	case h == 1:
		if v >= 1 {
			return 7
		}
		if d >= 1 {
			return 6
		}
		return 5
	case v == 2:
		return 4
	case v == 1:
		return 3
	default:
		return [3]int{0, 1, 2}[min(d, 2)]
	}
}

func (t *t1) contrib(i int) int {
	f := t.flags[i]
	if f&fSig == 0 {
		return 0
	}
	if f&fNeg != 0 {
		return -1
	}
	return 1
}

// decodeSign decodes the sign of flag index i (T.800 Tables D.2, D.3).
func (t *t1) decodeSign(i int) bool {
	s := t.w + 2
	h := max(-1, min(1, t.contrib(i-1)+t.contrib(i+1)))
	v := max(-1, min(1, t.contrib(i-s)+t.contrib(i+s)))
	var ctx, xor int
	switch h {
	case 1:
		ctx = 12 + v
	case -1:
		ctx, xor = 12-v, 1
	default:
		ctx = 9 + v*v
		if v == -1 {
			xor = 1
		}
	}
	return t.mq.decode(ctx)^xor == 1
}

// becomeSignificant decodes the sign of coefficient (x,y) at flag index
// i and sets its magnitude to 1.5 × 2^p.
func (t *t1) becomeSignificant(x, y, i, p int) {
	if t.decodeSign(i) {
		t.flags[i] |= fNeg
	}
	t.flags[i] |= fSig
	t.mag[y*t.w+x] = 3 << p
}

func (t *t1) sigPass(p int) {
	for y0 := 0; y0 < t.h; y0 += 4 {
		for x := 0; x < t.w; x++ {
			for y := y0; y < min(y0+4, t.h); y++ {
				i := t.fi(x, y)
				if t.flags[i]&fSig != 0 {
					continue
				}
				h, v, d := t.neighbours(i)
				if h+v+d == 0 {
					continue
				}
				if t.mq.decode(t.zcContext(i)) == 1 {
					t.becomeSignificant(x, y, i, p)
				}
				t.flags[i] |= fVisit
			}
		}
	}
}

func (t *t1) refPass(p int) {
	for y0 := 0; y0 < t.h; y0 += 4 {
		for x := 0; x < t.w; x++ {
			for y := y0; y < min(y0+4, t.h); y++ {
				i := t.fi(x, y)
				f := t.flags[i]
				if f&(fSig|fVisit) != fSig {
					continue
				}
				ctx := 16
				if f&fRefined == 0 {
					ctx = 14
					if h, v, d := t.neighbours(i); h+v+d > 0 {
						ctx = 15
					}
				}
				if t.mq.decode(ctx) == 1 {
					t.mag[y*t.w+x] += 1 << p
				} else {
					t.mag[y*t.w+x] -= 1 << p
				}
				t.flags[i] |= fRefined
			}
		}
	}
}

func (t *t1) cleanupPass(p int) {
	for y0 := 0; y0 < t.h; y0 += 4 {
		for x := 0; x < t.w; x++ {
			start := y0
			if y0+4 <= t.h && t.runLengthColumn(x, y0) {
				if t.mq.decode(ctxRL) == 0 {
					continue
				}
				r := t.mq.decode(ctxUni)<<1 | t.mq.decode(ctxUni)
				y := y0 + r
				t.becomeSignificant(x, y, t.fi(x, y), p)
				start = y + 1
			}
			for y := start; y < min(y0+4, t.h); y++ {
				i := t.fi(x, y)
				if t.flags[i]&(fSig|fVisit) != 0 {
					continue
				}
				if t.mq.decode(t.zcContext(i)) == 1 {
					t.becomeSignificant(x, y, i, p)
				}
			}
		}
	}
	for i := range t.flags {
		t.flags[i] &^= fVisit
	}
}

// runLengthColumn reports whether the four coefficients of column x from
// y0 are all insignificant, uncoded in this plane and without a
// significant neighbour: the cleanup pass's run-length mode.
func (t *t1) runLengthColumn(x, y0 int) bool {
	for y := y0; y < y0+4; y++ {
		i := t.fi(x, y)
		if t.flags[i]&(fSig|fVisit) != 0 {
			return false
		}
		if h, v, d := t.neighbours(i); h+v+d != 0 {
			return false
		}
	}
	return true
}
