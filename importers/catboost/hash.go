package catboost

import (
	"encoding/binary"
	"math/bits"
)

// CatFeatureHash is the value a categorical feature's string takes in the
// model's input: CatBoost's CalcCatFeatureHash (the low 32 bits of
// CityHash64 v1.0 of the string's bytes, as a signed integer). A number
// given as a categorical feature is hashed as its decimal string as
// CatBoost formats it ("3", not "3.0").
func CatFeatureHash(s string) int32 {
	return int32(uint32(cityHash64([]byte(s))))
}

const (
	k0 uint64 = 0xc3a5c85c97cb3127
	k1 uint64 = 0xb492b66fbe98f273
	k2 uint64 = 0x9ae16a3b2f90404f
	k3 uint64 = 0xc949d7c7509e6557
)

func fetch64(s []byte) uint64 { return binary.LittleEndian.Uint64(s) }
func fetch32(s []byte) uint64 { return uint64(binary.LittleEndian.Uint32(s)) }

func rotate(v uint64, shift int) uint64 {
	if shift == 0 {
		return v
	}
	return bits.RotateLeft64(v, -shift)
}

func shiftMix(v uint64) uint64 { return v ^ (v >> 47) }

func hashLen16(u, v uint64) uint64 {
	const kMul uint64 = 0x9ddfea08eb382d69
	a := (u ^ v) * kMul
	a ^= a >> 47
	b := (v ^ a) * kMul
	b ^= b >> 47
	return b * kMul
}

func hashLen0to16(s []byte) uint64 {
	n := uint64(len(s))
	switch {
	case n > 8:
		a := fetch64(s)
		b := fetch64(s[n-8:])
		return hashLen16(a, rotate(b+n, int(n))) ^ b
	case n >= 4:
		a := fetch32(s)
		return hashLen16(n+(a<<3), fetch32(s[n-4:]))
	case n > 0:
		a, b, c := uint32(s[0]), uint32(s[n>>1]), uint32(s[n-1])
		y := a + b<<8
		z := uint32(n) + c<<2
		return shiftMix(uint64(y)*k2^uint64(z)*k3) * k2
	}
	return k2
}

func hashLen17to32(s []byte) uint64 {
	n := uint64(len(s))
	a := fetch64(s) * k1
	b := fetch64(s[8:])
	c := fetch64(s[n-8:]) * k2
	d := fetch64(s[n-16:]) * k0
	return hashLen16(rotate(a-b, 43)+rotate(c, 30)+d, a+rotate(b^k3, 20)-c+n)
}

func hashLen33to64(s []byte) uint64 {
	n := uint64(len(s))
	z := fetch64(s[24:])
	a := fetch64(s) + (n+fetch64(s[n-16:]))*k0
	b := rotate(a+z, 52)
	c := rotate(a, 37)
	a += fetch64(s[8:])
	c += rotate(a, 7)
	a += fetch64(s[16:])
	vf := a + z
	vs := b + rotate(a, 31) + c
	a = fetch64(s[16:]) + fetch64(s[n-32:])
	z = fetch64(s[n-8:])
	b = rotate(a+z, 52)
	c = rotate(a, 37)
	a += fetch64(s[n-24:])
	c += rotate(a, 7)
	a += fetch64(s[n-16:])
	wf := a + z
	ws := b + rotate(a, 31) + c
	r := shiftMix((vf+ws)*k2 + (wf+vs)*k0)
	return shiftMix(r*k0+vs) * k2
}

func weakHashLen32WithSeeds(s []byte, a, b uint64) (uint64, uint64) {
	w, x, y, z := fetch64(s), fetch64(s[8:]), fetch64(s[16:]), fetch64(s[24:])
	a += w
	b = rotate(b+a+z, 21)
	c := a
	a += x
	a += y
	b += rotate(a, 44)
	return a + z, b + c
}

// cityHash64 is Google's CityHash64, version 1.0.x (the one in
// CatBoost's util/digest/city).
func cityHash64(s []byte) uint64 {
	n := len(s)
	switch {
	case n <= 16:
		return hashLen0to16(s)
	case n <= 32:
		return hashLen17to32(s)
	case n <= 64:
		return hashLen33to64(s)
	}
	x := fetch64(s)
	y := fetch64(s[n-16:]) ^ k1
	z := fetch64(s[n-56:]) ^ k0
	v1, v2 := weakHashLen32WithSeeds(s[n-64:], uint64(n), y)
	w1, w2 := weakHashLen32WithSeeds(s[n-32:], uint64(n)*k1, k0)
	z += shiftMix(v2) * k1
	x = rotate(z+x, 39) * k1
	y = rotate(y, 33) * k1
	left := (n - 1) &^ 63
	for p := 0; left > 0; p, left = p+64, left-64 {
		c := s[p:]
		x = rotate(x+y+v1+fetch64(c[16:]), 37) * k1
		y = rotate(y+v2+fetch64(c[48:]), 42) * k1
		x ^= w2
		y ^= v1
		z = rotate(z^w1, 33)
		v1, v2 = weakHashLen32WithSeeds(c, v2*k1, x+w1)
		w1, w2 = weakHashLen32WithSeeds(c[32:], z+w2, y)
		z, x = x, z
	}
	return hashLen16(hashLen16(v1, w1)+shiftMix(y)*k1+z, hashLen16(v2, w2)+x)
}
