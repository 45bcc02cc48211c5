package jpeg2k

import "math"

type tile struct {
	p    *params
	data []byte // the tile-parts' packet data, concatenated
}

// tileParts reads every tile-part (SOT ... SOD data) up to EOC.
func (d *decoder) tileParts() error {
	for d.pos < len(d.data) {
		start := d.pos
		m, body, err := d.segment()
		if err != nil {
			return err
		}
		if m == mEOC {
			break
		}
		if m != mSOT || len(body) < 8 {
			return formatErr("expected an SOT marker at offset %d, found 0x%04X", start, m)
		}
		idx, psot, tpsot := int(body[0])<<8|int(body[1]), d.u32(start+6), int(body[6])
		if idx >= len(d.tiles) {
			return formatErr("tile-part for tile %d of %d", idx, len(d.tiles))
		}
		t := d.tiles[idx]
		if t == nil {
			t = &tile{p: d.main.clone()}
			d.tiles[idx] = t
		}
		for {
			m, body, err := d.segment()
			if err != nil {
				return err
			}
			if m == mSOD {
				break
			}
			if tpsot == 0 || m == mPOC || m == mPPT {
				if err := d.headerMarker(t.p, m, body, false); err != nil {
					return err
				}
			}
		}
		end := len(d.data)
		if psot == 0 {
			if end-d.pos >= 2 && d.u16(end-2) == mEOC {
				end -= 2
			}
		} else {
			end = start + psot
		}
		if end < d.pos || end > len(d.data) {
			return formatErr("tile-part of tile %d at offset %d has length %d beyond the codestream (%d bytes)", idx, start, psot, len(d.data))
		}
		t.data = append(t.data, d.data[d.pos:end]...)
		d.pos = end
	}
	return nil
}

// codeblock is one code-block of a subband and what the packets gave it.
type codeblock struct {
	x0, y0, x1, y1 int // in subband coordinates
	included       bool
	lblock         int
	passes         int
	zbp            int
	data           []byte
}

type band struct {
	orient         int // 0 LL, 1 HL, 2 LH, 3 HH
	x0, y0, x1, y1 int
	offx, offy     int // where the band sits in the tile-component buffer
	ncbx, ncby     int
	cbs            []codeblock
	incl, zbp      *tagTree
	planes         int // M_b = G + ε_b − 1 (E-2)
	step           float32
}

type resolution struct {
	x0, y0, x1, y1 int
	bands          []band
}

type tileComp struct {
	x0, y0, x1, y1 int
	st             style
	res            []resolution
	ints           []int32   // reversible samples
	floats         []float32 // irreversible samples
}

type tileDecoder struct {
	d     *decoder
	t     *tile
	comps []*tileComp
	pos   int // in t.data
}

// decodeTile decodes tile idx into d.out.
func (d *decoder) decodeTile(idx int, t *tile) error {
	px, py := idx%d.ntx, idx/d.ntx
	x0, y0 := max(d.tx0+px*d.tw, d.x0), max(d.ty0+py*d.th, d.y0)
	x1, y1 := min(d.tx0+(px+1)*d.tw, d.w), min(d.ty0+(py+1)*d.th, d.h)
	td := &tileDecoder{d: d, t: t}
	for c := range d.comps {
		tc, err := newTileComp(x0, y0, x1, y1, t.p.styles[c], t.p.quants[c], d.comps[c].prec)
		if err != nil {
			return formatErrWrap(err, "tile %d component %d", idx, c)
		}
		td.comps = append(td.comps, tc)
	}
	if err := td.packets(); err != nil {
		return formatErrWrap(err, "tile %d", idx)
	}
	var t1d t1
	for _, tc := range td.comps {
		if err := tc.decodeBlocks(&t1d); err != nil {
			return formatErrWrap(err, "tile %d", idx)
		}
		tc.inverseDWT()
	}
	return d.store(td, x0, y0, x1, y1)
}

func formatErrWrap(err error, format string, args ...any) error {
	switch e := err.(type) {
	case *FormatError:
		return formatErr(format+": %s", append(args, e.Msg)...)
	case *UnsupportedError:
		return unsupported(format+": %s", append(args, e.Feature)...)
	}
	return err
}

func newTileComp(x0, y0, x1, y1 int, st style, q quant, prec int) (*tileComp, error) {
	tc := &tileComp{x0: x0, y0: y0, x1: x1, y1: y1, st: st}
	L := st.levels
	w, h := x1-x0, y1-y0
	if st.reversible {
		tc.ints = make([]int32, w*h)
	} else {
		tc.floats = make([]float32, w*h)
	}
	for r := 0; r <= L; r++ {
		res := resolution{
			x0: ceilDivPow2(x0, L-r), y0: ceilDivPow2(y0, L-r),
			x1: ceilDivPow2(x1, L-r), y1: ceilDivPow2(y1, L-r),
		}
		ppx, ppy := 15, 15
		if st.precincts != nil {
			ppx, ppy = int(st.precincts[r]&0xF), int(st.precincts[r]>>4)
			if r > 0 && (ppx == 0 || ppy == 0) {
				return nil, formatErr("precinct size 2^%d×2^%d at resolution %d", ppx, ppy, r)
			}
		}
		if res.x1 > res.x0 && res.y1 > res.y0 {
			npx := ceilDivPow2(res.x1, ppx) - res.x0>>ppx
			npy := ceilDivPow2(res.y1, ppy) - res.y0>>ppy
			if npx*npy > 1 {
				return nil, unsupported("%d×%d precincts at resolution %d (one precinct per resolution is decoded)", npx, npy, r)
			}
		}
		xcb, ycb := st.xcb, st.ycb
		if r > 0 {
			xcb, ycb = min(xcb, ppx-1), min(ycb, ppy-1)
		} else {
			xcb, ycb = min(xcb, ppx), min(ycb, ppy)
		}
		orients := []int{1, 2, 3}
		if r == 0 {
			orients = []int{0}
		}
		for k, o := range orients {
			b := band{orient: o}
			bandIdx := 0
			if r == 0 {
				n := L
				b.x0, b.y0, b.x1, b.y1 = ceilDivPow2(x0, n), ceilDivPow2(y0, n), ceilDivPow2(x1, n), ceilDivPow2(y1, n)
			} else {
				bandIdx = 3*(r-1) + 1 + k
				n := L - r + 1
				xo, yo := o&1, o>>1
				b.x0 = ceilDivPow2(x0-xo<<(n-1), n)
				b.y0 = ceilDivPow2(y0-yo<<(n-1), n)
				b.x1 = ceilDivPow2(x1-xo<<(n-1), n)
				b.y1 = ceilDivPow2(y1-yo<<(n-1), n)
				prev := tc.res[r-1]
				if xo == 1 {
					b.offx = prev.x1 - prev.x0
				}
				if yo == 1 {
					b.offy = prev.y1 - prev.y0
				}
			}
			exp, mant, err := q.step(bandIdx, L)
			if err != nil {
				return nil, err
			}
			b.planes = exp + q.guard - 1
			if b.planes > 30 {
				return nil, unsupported("%d bit-planes in subband %d", b.planes, bandIdx)
			}
			if !st.reversible {
				// OpenJPEG's Δ_b with R_b = precision for every subband
				// (its 9/7 carries the subband gain in 2/K).
				b.step = float32((1.0 + float64(mant)/2048.0) * math.Pow(2, float64(prec-exp)))
			}
			if b.x1 > b.x0 && b.y1 > b.y0 {
				cx0, cy0 := b.x0>>xcb, b.y0>>ycb
				b.ncbx, b.ncby = ceilDivPow2(b.x1, xcb)-cx0, ceilDivPow2(b.y1, ycb)-cy0
				b.cbs = make([]codeblock, b.ncbx*b.ncby)
				for j := range b.cbs {
					gx, gy := cx0+j%b.ncbx, cy0+j/b.ncbx
					b.cbs[j] = codeblock{
						x0: max(b.x0, gx<<xcb), y0: max(b.y0, gy<<ycb),
						x1: min(b.x1, (gx+1)<<xcb), y1: min(b.y1, (gy+1)<<ycb),
						lblock: 3,
					}
				}
				b.incl, b.zbp = newTagTree(b.ncbx, b.ncby), newTagTree(b.ncbx, b.ncby)
			}
			res.bands = append(res.bands, b)
		}
		tc.res = append(tc.res, res)
	}
	return tc, nil
}

// decodeBlocks runs tier 1 on every code-block and dequantizes the
// coefficients into the tile-component buffer.
func (tc *tileComp) decodeBlocks(t *t1) error {
	stride := tc.x1 - tc.x0
	for r := range tc.res {
		for bi := range tc.res[r].bands {
			b := &tc.res[r].bands[bi]
			for ci := range b.cbs {
				cb := &b.cbs[ci]
				if cb.passes == 0 {
					continue
				}
				planes := b.planes - cb.zbp
				if planes <= 0 {
					return formatErr("code-block with %d missing bit-planes of %d", cb.zbp, b.planes)
				}
				if cb.passes > 3*planes-2 {
					return formatErr("code-block with %d coding passes over %d bit-planes", cb.passes, planes)
				}
				w, h := cb.x1-cb.x0, cb.y1-cb.y0
				t.reset(w, h, b.orient)
				t.decode(cb.data, planes, cb.passes)
				half := float32(0.5) * b.step
				for y := 0; y < h; y++ {
					o := (cb.y0-b.y0+b.offy+y)*stride + cb.x0 - b.x0 + b.offx
					for x := 0; x < w; x++ {
						v := t.mag[y*w+x]
						if t.flags[t.fi(x, y)]&fNeg != 0 {
							v = -v
						}
						if tc.ints != nil {
							tc.ints[o+x] = v / 2
						} else {
							tc.floats[o+x] = float32(v) * half
						}
					}
				}
			}
		}
	}
	return nil
}

// store applies the component transform, DC level shift and clamping
// and writes the tile's samples to d.out.
func (d *decoder) store(td *tileDecoder, x0, y0, x1, y1 int) error {
	n := (x1 - x0) * (y1 - y0)
	if td.t.p.mct && len(td.comps) >= 3 {
		c0, c1, c2 := td.comps[0], td.comps[1], td.comps[2]
		switch {
		case c0.ints != nil && c1.ints != nil && c2.ints != nil:
			for i := 0; i < n; i++ {
				y, u, v := c0.ints[i], c1.ints[i], c2.ints[i]
				g := y - (u+v)>>2
				c0.ints[i], c1.ints[i], c2.ints[i] = v+g, g, u+g
			}
		case c0.floats != nil && c1.floats != nil && c2.floats != nil:
			for i := 0; i < n; i++ {
				y, u, v := c0.floats[i], c1.floats[i], c2.floats[i]
				c0.floats[i] = y + float32(v*1.402)
				c1.floats[i] = y - float32(u*0.34413) - float32(v*0.71414)
				c2.floats[i] = y + float32(u*1.772)
			}
		default:
			return unsupported("component transform over components with different wavelets")
		}
	}
	W := d.w - d.x0
	for c, tc := range td.comps {
		out := d.out[c]
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				i := (y-y0)*(x1-x0) + x - x0
				var v int64
				if tc.ints != nil {
					v = int64(tc.ints[i])
				} else {
					f := tc.floats[i]
					switch {
					case f > math.MaxInt32:
						v = 255
					case f < math.MinInt32:
						v = -255
					default:
						v = int64(math.RoundToEven(float64(f)))
					}
				}
				out[(y-d.y0)*W+x-d.x0] = uint8(max(0, min(255, v+128)))
			}
		}
	}
	return nil
}
