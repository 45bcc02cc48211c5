// Package flexbuf reads FlexBuffers, the schema-less form TFLite custom
// operators keep their custom_options in (CustomOptionsFormat
// FLEXBUFFERS): the root map, its scalars (ints, floats, bools), strings
// and typed vectors of ints. Every offset is checked against the buffer, so a
// hostile buffer is an error, never a panic or an out-of-range read.
//
// Layout (little-endian): the last byte is the root's byte width, the
// byte before it the root's packed type (type<<2 | log2 of its children's
// width), and the root value ends there. A map points (backwards) at its
// values; before them sit the keys vector's offset, the keys' byte width
// and the count; after them one packed type byte per value.
package flexbuf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Types of FlexBuffers values (flexbuffers::Type).
const (
	typeNull         = 0
	typeInt          = 1
	typeUint         = 2
	typeFloat        = 3
	typeKey          = 4
	typeString       = 5
	typeIndirectInt  = 6
	typeIndirectUint = 7
	typeIndirectFlt  = 8
	typeMap          = 9
	typeVector       = 10
	typeVectorInt    = 11
	typeVectorUint   = 12
	typeVectorFloat  = 13
	typeVectorKey    = 14
	typeVectorInt2   = 16 // VECTOR_INT2..VECTOR_FLOAT4: fixed lengths 2, 3, 4
	typeVectorFloat4 = 24
	typeBool         = 26
	typeVectorBool   = 36
)

// Error is a malformed buffer: At is the byte offset being read.
type Error struct {
	At  int
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("flexbuffer, byte %d: %v", e.At, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// Ref is one value: where it is, the width it is stored in, its type and
// the width of what it points to.
type Ref struct {
	b           []byte
	at          int
	parentWidth int
	width       int
	typ         int
}

func fail(at int, format string, args ...any) error {
	return &Error{At: at, Err: fmt.Errorf(format, args...)}
}

func (r Ref) uint(at, w int) (uint64, error) {
	if at < 0 || w <= 0 || at > len(r.b)-w {
		return 0, fail(at, "a %d-byte value outside the %d-byte buffer", w, len(r.b))
	}
	switch w {
	case 1:
		return uint64(r.b[at]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(r.b[at:])), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(r.b[at:])), nil
	case 8:
		return binary.LittleEndian.Uint64(r.b[at:]), nil
	}
	return 0, fail(at, "byte width %d", w)
}

func (r Ref) int(at, w int) (int64, error) {
	u, err := r.uint(at, w)
	if err != nil {
		return 0, err
	}
	shift := 64 - 8*w
	return int64(u<<shift) >> shift, nil
}

func (r Ref) float(at, w int) (float64, error) {
	u, err := r.uint(at, w)
	if err != nil {
		return 0, err
	}
	switch w {
	case 4:
		return float64(math.Float32frombits(uint32(u))), nil
	case 8:
		return math.Float64frombits(u), nil
	}
	return 0, fail(at, "a float of %d bytes", w)
}

// indirect is where an offset stored at at (w bytes wide) points.
func (r Ref) indirect(at, w int) (int, error) {
	off, err := r.uint(at, w)
	if err != nil {
		return 0, err
	}
	if off > uint64(at) {
		return 0, fail(at, "offset %d points before the buffer", off)
	}
	return at - int(off), nil
}

func widthOf(packed byte) int { return 1 << (packed & 3) }

// Root is the root value of buffer b.
func Root(b []byte) (Ref, error) {
	if len(b) < 3 {
		return Ref{}, fail(0, "%d bytes: too short for a flexbuffer", len(b))
	}
	w := int(b[len(b)-1])
	if w != 1 && w != 2 && w != 4 && w != 8 {
		return Ref{}, fail(len(b)-1, "root byte width %d", w)
	}
	packed := b[len(b)-2]
	at := len(b) - 2 - w
	if at < 0 {
		return Ref{}, fail(0, "root of %d bytes in a %d-byte buffer", w, len(b))
	}
	return Ref{b: b, at: at, parentWidth: w, width: widthOf(packed), typ: int(packed >> 2)}, nil
}

// Int is the value as an integer: an int, uint, bool or (truncated) float.
func (r Ref) Int() (int64, error) {
	switch r.typ {
	case typeInt:
		return r.int(r.at, r.parentWidth)
	case typeUint, typeBool:
		u, err := r.uint(r.at, r.parentWidth)
		return int64(u), err
	case typeIndirectInt, typeIndirectUint:
		p, err := r.indirect(r.at, r.parentWidth)
		if err != nil {
			return 0, err
		}
		if r.typ == typeIndirectUint {
			u, err := r.uint(p, r.width)
			return int64(u), err
		}
		return r.int(p, r.width)
	case typeFloat, typeIndirectFlt:
		f, err := r.Float()
		return int64(f), err
	}
	return 0, fail(r.at, "a value of type %d is not a number", r.typ)
}

// Float is the value as a float: a float, or an int or uint converted.
func (r Ref) Float() (float64, error) {
	switch r.typ {
	case typeFloat:
		return r.float(r.at, r.parentWidth)
	case typeIndirectFlt:
		p, err := r.indirect(r.at, r.parentWidth)
		if err != nil {
			return 0, err
		}
		return r.float(p, r.width)
	case typeInt, typeUint, typeBool, typeIndirectInt, typeIndirectUint:
		i, err := r.Int()
		return float64(i), err
	}
	return 0, fail(r.at, "a value of type %d is not a number", r.typ)
}

// String is the value as a string: a string (its stored length) or a key
// (up to its terminating zero).
func (r Ref) String() (string, error) {
	if r.typ != typeString && r.typ != typeKey {
		return "", fail(r.at, "a value of type %d is not a string", r.typ)
	}
	data, err := r.indirect(r.at, r.parentWidth)
	if err != nil {
		return "", err
	}
	end := data
	if r.typ == typeKey {
		for end < len(r.b) && r.b[end] != 0 {
			end++
		}
	} else {
		size, err := r.uint(data-r.width, r.width)
		if err != nil {
			return "", err
		}
		if size > uint64(len(r.b)-data) {
			return "", fail(data, "a string of %d bytes in a %d-byte buffer", size, len(r.b))
		}
		end = data + int(size)
	}
	if end > len(r.b) {
		return "", fail(data, "a string past the buffer")
	}
	return string(r.b[data:end]), nil
}

// Ints is a vector of numbers as integers: a typed int/uint/float
// vector (fixed length or not) or an untyped vector of numbers; also an
// empty typed vector of keys, which is how the flatbuffers library's
// Builder writes an empty typed vector.
func (r Ref) Ints() ([]int64, error) {
	data, err := r.indirect(r.at, r.parentWidth)
	if err != nil {
		return nil, err
	}
	w := r.width
	var n int
	var elem int
	switch {
	case r.typ == typeVectorInt || r.typ == typeVectorUint || r.typ == typeVectorFloat || r.typ == typeVector || r.typ == typeVectorKey:
		size, err := r.uint(data-w, w)
		if err != nil {
			return nil, err
		}
		if r.typ == typeVectorKey {
			if size != 0 {
				return nil, fail(r.at, "a vector of %d keys is not a vector of numbers", size)
			}
			return []int64{}, nil
		}
		if size > uint64(len(r.b)/w) {
			return nil, fail(data-w, "a vector of %d elements in a %d-byte buffer", size, len(r.b))
		}
		n, elem = int(size), r.typ-typeVectorInt+typeInt
	case r.typ >= typeVectorInt2 && r.typ <= typeVectorFloat4:
		k := r.typ - typeVectorInt2
		n, elem = k/3+2, k%3+typeInt
	default:
		return nil, fail(r.at, "a value of type %d is not a vector", r.typ)
	}
	out := make([]int64, n)
	for i := range out {
		e := Ref{b: r.b, at: data + i*w, parentWidth: w, width: 1, typ: elem}
		if r.typ == typeVector {
			t, err := r.uint(data+n*w+i, 1)
			if err != nil {
				return nil, err
			}
			e.typ, e.width = int(t>>2), widthOf(byte(t))
		}
		if out[i], err = e.Int(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Map is the value as a map: its keys in order and their values.
func (r Ref) Map() (map[string]Ref, error) {
	if r.typ != typeMap {
		return nil, fail(r.at, "a value of type %d is not a map", r.typ)
	}
	data, err := r.indirect(r.at, r.parentWidth)
	if err != nil {
		return nil, err
	}
	w := r.width
	size, err := r.uint(data-w, w)
	if err != nil {
		return nil, err
	}
	if size > uint64(len(r.b)/w) {
		return nil, fail(data-w, "a map of %d entries in a %d-byte buffer", size, len(r.b))
	}
	keys, err := r.indirect(data-3*w, w)
	if err != nil {
		return nil, err
	}
	kw, err := r.uint(data-2*w, w)
	if err != nil {
		return nil, err
	}
	if kw != 1 && kw != 2 && kw != 4 && kw != 8 {
		return nil, fail(data-2*w, "keys byte width %d", kw)
	}
	n := int(size)
	out := make(map[string]Ref, n)
	for i := 0; i < n; i++ {
		k, err := r.indirect(keys+i*int(kw), int(kw))
		if err != nil {
			return nil, err
		}
		end := k
		for end < len(r.b) && r.b[end] != 0 {
			end++
		}
		if end >= len(r.b) {
			return nil, fail(k, "a key without its terminating zero")
		}
		t, err := r.uint(data+n*w+i, 1)
		if err != nil {
			return nil, err
		}
		out[string(r.b[k:end])] = Ref{b: r.b, at: data + i*w, parentWidth: w, width: widthOf(byte(t)), typ: int(t >> 2)}
	}
	return out, nil
}
