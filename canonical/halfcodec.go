package canonical

import "math"

// The one fp16/bf16 codec of the project: every package that encodes or
// decodes IEEE half or bfloat16 values calls these.

// Float32ToFloat16 rounds f to the nearest IEEE half (ties to even);
// values beyond the half range become ±Inf, NaN stays a (quiet) NaN.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		half := mant >> shift
		rem := mant & ((1 << shift) - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, up to Inf: correct
	}
	return sign | uint16(half)
}

// Float16ToFloat32 decodes an IEEE half exactly (every half is a float32).
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		v := float32(math.Ldexp(float64(man), -24))
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 31:
		return math.Float32frombits(sign | 0xff<<23 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// Float16ToFloat64 decodes an IEEE half exactly.
func Float16ToFloat64(h uint16) float64 { return float64(Float16ToFloat32(h)) }

// Float32ToBFloat16 rounds f to the nearest bfloat16 (ties to even); NaN
// stays a quiet NaN.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BFloat16ToFloat32 decodes a bfloat16 exactly.
func BFloat16ToFloat32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }
