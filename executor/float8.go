package executor

import (
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// f8Table returns the float32 value of each of the 256 codes of a float8
// type (NaN codes decode to NaN).
func f8Table(dt canonical.DataType) *[256]float32 {
	var t [256]float32
	for c := 0; c < 256; c++ {
		t[c] = f8Decode(dt, uint8(c))
	}
	return &t
}

func f8Decode(dt canonical.DataType, b uint8) float32 {
	nan := float32(math.NaN())
	if dt == canonical.Float8E8M0 {
		if b == 0xFF {
			return nan
		}
		return float32(math.Ldexp(1, int(b)-127))
	}
	var ebits, mbits, bias uint
	switch dt {
	case canonical.Float8E4M3FN:
		ebits, mbits, bias = 4, 3, 7
		if b&0x7F == 0x7F {
			return nan
		}
	case canonical.Float8E4M3FNUZ:
		ebits, mbits, bias = 4, 3, 8
		if b == 0x80 {
			return nan
		}
	case canonical.Float8E5M2:
		ebits, mbits, bias = 5, 2, 15
		if b&0x7F == 0x7C {
			if b&0x80 != 0 {
				return float32(math.Inf(-1))
			}
			return float32(math.Inf(1))
		}
		if b&0x7F > 0x7C {
			return nan
		}
	case canonical.Float8E5M2FNUZ:
		ebits, mbits, bias = 5, 2, 16
		if b == 0x80 {
			return nan
		}
	}
	sign := b >> 7
	e := uint(b>>mbits) & (1<<ebits - 1)
	m := uint(b) & (1<<mbits - 1)
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(m), 1-int(bias)-int(mbits))
	} else {
		v = math.Ldexp(1+float64(m)/float64(uint(1)<<mbits), int(e)-int(bias))
	}
	if sign == 1 {
		v = -v
	}
	return float32(v)
}

// f8Encode converts v to the nearest code of dt (ties to even), following
// the ONNX Cast rules for saturate.
func f8Encode(dt canonical.DataType, v float32, saturate bool) uint8 {
	fnuz := dt == canonical.Float8E4M3FNUZ || dt == canonical.Float8E5M2FNUZ
	var nanCode uint8 = 0x7F
	switch dt {
	case canonical.Float8E4M3FNUZ, canonical.Float8E5M2FNUZ:
		nanCode = 0x80
	case canonical.Float8E5M2:
		nanCode = 0x7F
	case canonical.Float8E8M0:
		nanCode = 0xFF
	}
	if v != v {
		return nanCode
	}
	neg := math.Signbit(float64(v))
	a := float32(math.Abs(float64(v)))
	tab := f8Table(dt)
	// largest finite positive code
	var maxCode uint8
	var maxVal float32
	for c := 0; c < 128 || (dt == canonical.Float8E8M0 && c < 256); c++ {
		x := tab[c]
		if x == x && !math.IsInf(float64(x), 0) && x > maxVal {
			maxVal, maxCode = x, uint8(c)
		}
	}
	signed := func(c uint8) uint8 {
		if dt == canonical.Float8E8M0 {
			return c
		}
		if neg && !(fnuz && c == 0) {
			return c | 0x80
		}
		return c
	}
	if math.IsInf(float64(a), 0) || a > maxVal {
		if math.IsInf(float64(a), 0) && !saturate {
			if dt == canonical.Float8E5M2 {
				return signed(0x7C)
			}
			return nanCode
		}
		if saturate {
			return signed(maxCode)
		}
		// not saturating: values beyond the range that round past max
		// become inf/NaN; those that round down to max stay.
		if dt == canonical.Float8E5M2 {
			return signed(0x7C)
		}
		return nanCode
	}
	best, bestD := uint8(0), float32(math.Inf(1))
	limit := 128
	if dt == canonical.Float8E8M0 {
		limit = 255
	}
	for c := 0; c < limit; c++ {
		x := tab[c]
		if x != x || math.IsInf(float64(x), 0) || x < 0 {
			continue
		}
		d := float32(math.Abs(float64(x - a)))
		if d < bestD || (d == bestD && c%2 == 0) {
			best, bestD = uint8(c), d
		}
	}
	return signed(best)
}

var f4Values = [8]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}

func f4Decode(c uint8) float32 {
	v := f4Values[c&7]
	if c&8 != 0 {
		return -v
	}
	return v
}

func f4Encode(v float32, saturate bool) uint8 {
	if v != v {
		return 0x8 // float4 has no NaN
	}
	var s uint8
	if math.Signbit(float64(v)) {
		s = 8
	}
	a := float32(math.Abs(float64(v)))
	if a >= 6 {
		return s | 7
	}
	best, bestD := uint8(0), float32(math.Inf(1))
	for c := uint8(0); c < 8; c++ {
		d := float32(math.Abs(float64(f4Values[c] - a)))
		if d < bestD || (d == bestD && c%2 == 0) {
			best, bestD = c, d
		}
	}
	return s | best
}
