package ljpeg

import "fmt"

// Progressive Huffman scans (ITU-T T.81 G.1.2), decoded as libjpeg's
// jdphuff.c does: DC first and refinement scans (interleaved or not), AC
// first scans with end-of-band runs and AC refinement scans with their
// correction bits. The coefficients are kept until EOI, then
// dequantized and inverse transformed with the islow IDCT.

func (d *decoder) progressiveScan(comps []*component, ss, se, ah, al int) error {
	switch {
	case ss > se || se > 63 || al > 13 || ah > 13:
		return formatErr("progressive scan: spectral selection %d..%d, approximation %d/%d", ss, se, ah, al)
	case ss == 0 && se != 0:
		return formatErr("progressive scan mixes DC and AC (%d..%d)", ss, se)
	case ss > 0 && len(comps) != 1:
		return formatErr("progressive AC scan of %d components", len(comps))
	}
	for _, c := range comps {
		if ss == 0 && ah == 0 && d.dc[c.td] == nil {
			return formatErr("component %d: DC Huffman table %d not defined", c.id, c.td)
		}
		if ss > 0 && d.ac[c.ta] == nil {
			return formatErr("component %d: AC Huffman table %d not defined", c.id, c.ta)
		}
	}
	blockOf := func(c *component, bx, by int) []int32 {
		i := 64 * (by*c.bw + bx)
		return c.coef[i : i+64]
	}
	switch {
	case ss == 0 && ah == 0:
		return d.walk(comps, func(c *component, bx, by int) error {
			if err := d.dcDiff(c); err != nil {
				return err
			}
			blockOf(c, bx, by)[0] = c.dcPred << al
			return nil
		})
	case ss == 0:
		return d.walk(comps, func(c *component, bx, by int) error {
			if d.bits.bit() == 1 {
				blockOf(c, bx, by)[0] |= 1 << al
			}
			return nil
		})
	case ah == 0:
		return d.walk(comps, func(c *component, bx, by int) error {
			return d.acFirst(c, blockOf(c, bx, by), ss, se, al)
		})
	default:
		return d.walk(comps, func(c *component, bx, by int) error {
			return d.acRefine(c, blockOf(c, bx, by), ss, se, al)
		})
	}
}

// eobRun reads the end-of-band run coded by an EOBr symbol (r < 15).
func (d *decoder) eobRun(r int) int {
	n := 1 << r
	if r > 0 {
		v := 0
		for range r {
			v = v<<1 | int(d.bits.bit())
		}
		n += v
	}
	return n
}

func (d *decoder) acFirst(c *component, blk []int32, ss, se, al int) error {
	if d.eobrun > 0 {
		d.eobrun--
		return nil
	}
	for k := ss; k <= se; {
		rs, err := d.bits.decode(d.ac[c.ta])
		if err != nil {
			return err
		}
		r, s := int(rs>>4), int(rs&15)
		if s == 0 {
			if r < 15 {
				d.eobrun = d.eobRun(r) - 1
				return nil
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
		blk[zigzag[k]] = v << al
		k++
	}
	return nil
}

// refine reads the correction bit of an already nonzero coefficient.
func (d *decoder) refine(v *int32, p1 int32) {
	if d.bits.bit() == 1 && *v&p1 == 0 {
		if *v >= 0 {
			*v += p1
		} else {
			*v -= p1
		}
	}
}

func (d *decoder) acRefine(c *component, blk []int32, ss, se, al int) error {
	p1 := int32(1) << al
	k := ss
	if d.eobrun == 0 {
		for ; k <= se; k++ {
			rs, err := d.bits.decode(d.ac[c.ta])
			if err != nil {
				return err
			}
			r, s := int(rs>>4), int(rs&15)
			var v int32
			switch {
			case s == 1:
				v = p1
				if d.bits.bit() == 0 {
					v = -p1
				}
			case s != 0:
				return &FormatError{fmt.Sprintf("AC refinement symbol 0x%02X", rs)}
			case r != 15:
				d.eobrun = d.eobRun(r)
			}
			if d.eobrun > 0 {
				break
			}
			// Skip r zero-history coefficients (refining the nonzero ones
			// passed on the way); the new coefficient goes after them.
			for ; k <= se; k++ {
				if blk[zigzag[k]] != 0 {
					d.refine(&blk[zigzag[k]], p1)
				} else {
					if r == 0 {
						break
					}
					r--
				}
			}
			if v != 0 {
				if k > se {
					return formatErr("AC refinement past the spectral band")
				}
				blk[zigzag[k]] = v
			}
		}
	}
	if d.eobrun > 0 {
		for ; k <= se; k++ {
			if blk[zigzag[k]] != 0 {
				d.refine(&blk[zigzag[k]], p1)
			}
		}
		d.eobrun--
	}
	return nil
}

// progressiveIDCT turns every block's coefficients into samples.
func (d *decoder) progressiveIDCT() {
	var blk [64]int32
	for _, c := range d.comps {
		q := d.q[c.tq]
		if q == nil {
			continue
		}
		for by := range c.bh {
			for bx := range c.bw {
				copy(blk[:], c.coef[64*(by*c.bw+bx):])
				idctIslow(&blk, q, c.pix[8*by*c.stride+8*bx:], c.stride)
			}
		}
	}
}
