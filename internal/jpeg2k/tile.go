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

// codeblock is what the packets gave one code-block (its place follows
// from its index in the band's grid); kept small, as a band may hold one
// for every 16 samples.
type codeblock struct {
	data     []byte
	passes   uint16
	zbp      uint8 // missing most significant bit-planes
	lblock   uint8 // Lblock − 3
	included bool
}

type band struct {
	orient         int // 0 LL, 1 HL, 2 LH, 3 HH
	x0, y0, x1, y1 int
	offx, offy     int // where the band sits in the tile-component buffer
	cx0, cy0       int // code-block grid index of cbs[0]
	xcb, ycb       int // code-block size exponents in this resolution
	ncbx, ncby     int
	cbs            []codeblock
	planes         int // M_b = G + ε_b − 1 (E-2)
	step           float32
}

type resolution struct {
	x0, y0, x1, y1 int
	bands          []band
	ppx, ppy       int // precinct size exponents
	px0, py0       int // precinct grid index of precincts[0]
	npx, npy       int
	precincts      []precinct
}

// precinct holds, per band of its resolution, the rectangle of the band's
// code-block grid it covers and its own tag trees.
type precinct struct {
	bands []precinctBand
}

type precinctBand struct {
	cx0, cy0, cw, ch int // relative to the band's cbs grid
	incl, zbp        *tagTree
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
		res.ppx, res.ppy = ppx, ppy
		if res.x1 > res.x0 && res.y1 > res.y0 {
			res.px0, res.py0 = res.x0>>ppx, res.y0>>ppy
			res.npx, res.npy = ceilDivPow2(res.x1, ppx)-res.px0, ceilDivPow2(res.y1, ppy)-res.py0
			// Precincts average at least 4 samples (PPx, PPy ≥ 1 above
			// resolution 0): more are refused before they are allocated.
			if res.npx*res.npy > (res.x1-res.x0)*(res.y1-res.y0)/4+res.npx+res.npy {
				return nil, formatErr("%d×%d precincts of 2^%d×2^%d at resolution %d", res.npx, res.npy, ppx, ppy, r)
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
			b.xcb, b.ycb = xcb, ycb
			if b.x1 > b.x0 && b.y1 > b.y0 {
				b.cx0, b.cy0 = b.x0>>xcb, b.y0>>ycb
				b.ncbx, b.ncby = ceilDivPow2(b.x1, xcb)-b.cx0, ceilDivPow2(b.y1, ycb)-b.cy0
				b.cbs = make([]codeblock, b.ncbx*b.ncby)
			}
			res.bands = append(res.bands, b)
		}
		res.precincts = makePrecincts(&res, r)
		tc.res = append(tc.res, res)
	}
	return tc, nil
}

// makePrecincts partitions the code-blocks of res's bands into its
// precincts (B.6): a precinct of 2^PPx in the resolution is one of
// 2^(PPx−1) in each band above resolution 0, both anchored at 0.
func makePrecincts(res *resolution, r int) []precinct {
	ps := make([]precinct, res.npx*res.npy)
	for k := range ps {
		i, j := res.px0+k%res.npx, res.py0+k/res.npx
		for _, b := range res.bands {
			ex, ey := res.ppx, res.ppy
			if r > 0 {
				ex, ey = ex-1, ey-1
			}
			x0, x1 := max(b.x0, i<<ex), min(b.x1, (i+1)<<ex)
			y0, y1 := max(b.y0, j<<ey), min(b.y1, (j+1)<<ey)
			var pb precinctBand
			if x1 > x0 && y1 > y0 {
				pb.cx0, pb.cy0 = x0>>b.xcb-b.cx0, y0>>b.ycb-b.cy0
				pb.cw, pb.ch = ceilDivPow2(x1, b.xcb)-x0>>b.xcb, ceilDivPow2(y1, b.ycb)-y0>>b.ycb
				pb.incl, pb.zbp = newTagTree(pb.cw, pb.ch), newTagTree(pb.cw, pb.ch)
			}
			ps[k].bands = append(ps[k].bands, pb)
		}
	}
	return ps
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
				// the packets checked passes against the bit-planes
				planes, passes := b.planes-int(cb.zbp), int(cb.passes)
				gx, gy := b.cx0+ci%b.ncbx, b.cy0+ci/b.ncbx
				x0, y0 := max(b.x0, gx<<b.xcb), max(b.y0, gy<<b.ycb)
				w, h := min(b.x1, (gx+1)<<b.xcb)-x0, min(b.y1, (gy+1)<<b.ycb)-y0
				t.reset(w, h, b.orient)
				t.decode(cb.data, planes, passes)
				half := float32(0.5) * b.step
				for y := 0; y < h; y++ {
					o := (y0-b.y0+b.offy+y)*stride + x0 - b.x0 + b.offx
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
