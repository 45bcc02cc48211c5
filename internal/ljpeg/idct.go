package ljpeg

// libjpeg's "islow" inverse DCT: the Loeffler, Ligtenberg and Moschytz
// factorisation (12 multiplies, 32 adds per 1-D pass) in integers, its
// cosine constants scaled by 2^13 and rounded; the column pass keeps 2
// fraction bits more than the input (descaled by 2^11), the row pass
// descales by 2^18 (those 2 bits, the 13 of the constants and the 3 of
// the 1/8 normalisation), both rounding half up with an arithmetic shift.
// The result, offset by 128, is range-limited as libjpeg's table does:
// through a 10-bit mask, so that only values within [-512, 512) clamp to
// [0, 255] and values beyond wrap (as they do in libjpeg for corrupt
// data).

const (
	constBits = 13
	pass1Bits = 2

	fix0_298631336 = 2446
	fix0_390180644 = 3196
	fix0_541196100 = 4433
	fix0_765366865 = 6270
	fix0_899976223 = 7373
	fix1_175875602 = 9633
	fix1_501321110 = 12299
	fix1_847759065 = 15137
	fix1_961570560 = 16069
	fix2_053119869 = 16819
	fix2_562915447 = 20995
	fix3_072711026 = 25172
)

func descale(x int32, n uint) int32 { return (x + 1<<(n-1)) >> n }

// rangeLimit is libjpeg's post-IDCT sample range limit of x (before the
// +128 offset).
func rangeLimit(x int32) uint8 {
	switch v := x & 1023; {
	case v < 128:
		return uint8(v + 128)
	case v < 512:
		return 255
	case v < 896:
		return 0
	default:
		return uint8(v - 896)
	}
}

// butterfly is one 1-D pass over the eight values in[0..7] (already
// dequantized, or the column pass's results): it returns the eight
// outputs before descaling.
func butterfly(in [8]int32, evenShift uint) (out [8]int32) {
	// Even part.
	z2, z3 := in[2], in[6]
	z1 := (z2 + z3) * fix0_541196100
	tmp2 := z1 - z3*fix1_847759065
	tmp3 := z1 + z2*fix0_765366865
	tmp0 := (in[0] + in[4]) << evenShift
	tmp1 := (in[0] - in[4]) << evenShift
	tmp10, tmp13 := tmp0+tmp3, tmp0-tmp3
	tmp11, tmp12 := tmp1+tmp2, tmp1-tmp2

	// Odd part.
	t0, t1, t2, t3 := in[7], in[5], in[3], in[1]
	o1, o2, o3, o4 := t0+t3, t1+t2, t0+t2, t1+t3
	z5 := (o3 + o4) * fix1_175875602
	t0 *= fix0_298631336
	t1 *= fix2_053119869
	t2 *= fix3_072711026
	t3 *= fix1_501321110
	o1 *= -fix0_899976223
	o2 *= -fix2_562915447
	o3 = o3*-fix1_961570560 + z5
	o4 = o4*-fix0_390180644 + z5
	t0 += o1 + o3
	t1 += o2 + o4
	t2 += o2 + o3
	t3 += o1 + o4

	return [8]int32{
		tmp10 + t3, tmp11 + t2, tmp12 + t1, tmp13 + t0,
		tmp13 - t0, tmp12 - t1, tmp11 - t2, tmp10 - t3,
	}
}

// idctIslow dequantizes the coefficients blk (natural order) with q and
// writes the 8x8 samples to out (row stride stride).
func idctIslow(blk *[64]int32, q *[64]uint16, out []uint8, stride int) {
	var ws [64]int32
	for col := range 8 {
		var in [8]int32
		for r := range 8 {
			in[r] = blk[8*r+col] * int32(q[8*r+col])
		}
		o := butterfly(in, constBits)
		for r := range 8 {
			ws[8*r+col] = descale(o[r], constBits-pass1Bits)
		}
	}
	for row := range 8 {
		var in [8]int32
		copy(in[:], ws[8*row:8*row+8])
		o := butterfly(in, constBits)
		for c := range 8 {
			out[row*stride+c] = rangeLimit(descale(o[c], constBits+pass1Bits+3))
		}
	}
}
