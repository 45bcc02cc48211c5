package hdf5

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// Class is an HDF5 datatype class.
type Class int

// Datatype classes.
const (
	ClassInteger   Class = 0
	ClassFloat     Class = 1
	ClassTime      Class = 2
	ClassString    Class = 3
	ClassBitfield  Class = 4
	ClassOpaque    Class = 5
	ClassCompound  Class = 6
	ClassReference Class = 7
	ClassEnum      Class = 8
	ClassVarLen    Class = 9
	ClassArray     Class = 10
)

func (c Class) String() string {
	names := []string{"integer", "float", "time", "string", "bitfield", "opaque", "compound", "reference", "enum", "variable-length", "array"}
	if c >= 0 && int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("class %d", int(c))
}

// Datatype describes the elements of a dataset or attribute.
type Datatype struct {
	Class Class
	// Size is the size of one element in the file, in bytes.
	Size      int
	BigEndian bool
	// Signed is set for signed integers.
	Signed bool
	// VarString is set for a variable-length string (Class VarLen).
	VarString bool
	// Base is the base type of an enum, variable-length sequence or
	// array.
	Base *Datatype
	// pad is the string padding: 0 null-terminated, 1 null-padded, 2
	// space-padded.
	pad int
}

func (t *Datatype) String() string {
	switch t.Class {
	case ClassInteger:
		s := "u"
		if t.Signed {
			s = ""
		}
		return fmt.Sprintf("%sint%d", s, 8*t.Size)
	case ClassFloat:
		return fmt.Sprintf("float%d", 8*t.Size)
	case ClassString:
		return fmt.Sprintf("string[%d]", t.Size)
	case ClassVarLen:
		if t.VarString {
			return "vlen string"
		}
	}
	return t.Class.String()
}

// datatype parses a datatype message; it returns the type and the bytes
// it used.
func (f *File) datatype(b []byte, at uint64, depth int) (*Datatype, int, error) {
	if depth > maxTypeDepth {
		return nil, 0, f.errf(at, "datatype nested more than %d deep", maxTypeDepth)
	}
	c := f.cursor(b, at)
	cv := c.u8()
	bits := c.take(3)
	size := c.u32()
	if c.err != nil {
		return nil, 0, c.err
	}
	t := &Datatype{Class: Class(cv & 0x0f), Size: int(size)}
	version := cv >> 4
	if size == 0 || size > 1<<20 {
		return nil, 0, f.errf(at, "datatype element size %d", size)
	}
	switch t.Class {
	case ClassInteger, ClassBitfield:
		t.BigEndian = bits[0]&1 != 0
		t.Signed = bits[0]&0x08 != 0
		c.skip(4) // bit offset, precision
	case ClassFloat:
		t.BigEndian = bits[0]&1 != 0
		if bits[0]&0x40 != 0 {
			return nil, 0, f.unsupported("VAX-ordered floats")
		}
		c.skip(12)
	case ClassString:
		t.pad = int(bits[0] & 0x0f)
	case ClassEnum:
		base, n, err := f.datatype(b[c.pos:], at+uint64(c.pos), depth+1)
		if err != nil {
			return nil, 0, err
		}
		c.skip(n)
		t.Base = base
		members := int(binary.LittleEndian.Uint16([]byte{bits[0], bits[1]}))
		// Names (padded to 8 bytes before version 3), then values.
		for i := 0; i < members && c.err == nil; i++ {
			start := c.pos
			for c.err == nil && c.u8() != 0 {
			}
			if version < 3 {
				if n := (c.pos - start) % 8; n != 0 {
					c.skip(8 - n)
				}
			}
		}
		c.skip(members * base.Size)
	case ClassVarLen:
		t.VarString = bits[0]&0x0f == 1
		t.pad = int(bits[0]>>4) & 0x0f
		base, n, err := f.datatype(b[c.pos:], at+uint64(c.pos), depth+1)
		if err != nil {
			return nil, 0, err
		}
		c.skip(n)
		t.Base = base
	case ClassOpaque:
		c.skip(int(bits[0]))
	case ClassReference, ClassTime:
	default:
		// Compound and array types are parsed no further; their size is
		// known, which is enough to skip them.
		return t, len(b), nil
	}
	if c.err != nil {
		return nil, 0, c.err
	}
	return t, c.pos, nil
}

// dataspace parses a dataspace message into dims (nil dims with scalar
// true for a scalar; null spaces are an empty shape with zero elements).
func (f *File) dataspace(m *message) (dims []uint64, null bool, err error) {
	c := f.cursor(m.data, m.at)
	version := c.u8()
	rank := int(c.u8())
	c.u8() // flags (bit 0: max dims follow)
	switch version {
	case 1:
		c.skip(5)
	case 2:
		null = c.u8() == 2 // type: 0 scalar, 1 simple, 2 null
	default:
		if c.err == nil {
			return nil, false, f.unsupported("dataspace version %d", version)
		}
	}
	if c.err != nil {
		return nil, false, c.err
	}
	if rank > maxRank {
		return nil, false, f.errf(m.at, "dataspace rank %d, more than %d", rank, maxRank)
	}
	dims = make([]uint64, rank)
	for i := range dims {
		dims[i] = c.length()
	}
	if c.err != nil {
		return nil, false, c.err
	}
	return dims, null, nil
}

// count is the number of elements of dims, or an error past limit.
func count(dims []uint64, limit uint64) (uint64, bool) {
	n := uint64(1)
	for _, d := range dims {
		if d != 0 && n > limit/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// Value is the data of a dataset or attribute as stored: Shape (nil for a
// scalar) and the raw bytes of its elements in the file's encoding.
type Value struct {
	Type  *Datatype
	Shape []int
	raw   []byte
	f     *File
	path  string
}

// Len is the number of elements.
func (v *Value) Len() int {
	n := 1
	for _, d := range v.Shape {
		n *= d
	}
	return n
}

// Raw returns the stored bytes of the elements (shared, do not modify).
func (v *Value) Raw() []byte { return v.raw }

func (v *Value) typeErr(want string) error {
	return &UnsupportedError{File: v.f.name, What: fmt.Sprintf("%s: %s values read as %s", v.path, v.Type, want)}
}

func order(t *Datatype) binary.ByteOrder {
	if t.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Float64s converts numeric elements (floats of 2, 4, 8 bytes, integers,
// enums) to float64.
func (v *Value) Float64s() ([]float64, error) {
	t := v.Type
	if t.Class == ClassEnum {
		t = t.Base
	}
	n := v.Len()
	out := make([]float64, n)
	bo := order(t)
	sz := t.Size
	if len(v.raw) < n*sz {
		return nil, v.f.errf(0, "%s: %d bytes hold fewer than %d elements", v.path, len(v.raw), n)
	}
	switch t.Class {
	case ClassFloat:
		for i := range out {
			b := v.raw[i*sz:]
			switch sz {
			case 2:
				out[i] = canonical.Float16ToFloat64(bo.Uint16(b))
			case 4:
				out[i] = float64(math.Float32frombits(bo.Uint32(b)))
			case 8:
				out[i] = math.Float64frombits(bo.Uint64(b))
			default:
				return nil, v.typeErr("floats")
			}
		}
	case ClassInteger:
		ints, err := v.Int64s()
		if err != nil {
			return nil, err
		}
		for i, x := range ints {
			if !t.Signed && x < 0 {
				out[i] = float64(uint64(x))
			} else {
				out[i] = float64(x)
			}
		}
	default:
		return nil, v.typeErr("numbers")
	}
	return out, nil
}

// Float32s is Float64s rounded to float32 (float32 data is exact).
func (v *Value) Float32s() ([]float32, error) {
	d, err := v.Float64s()
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(d))
	for i, x := range d {
		out[i] = float32(x)
	}
	return out, nil
}

// Int64s converts integer (and enum) elements to int64; unsigned 64-bit
// values keep their bits.
func (v *Value) Int64s() ([]int64, error) {
	t := v.Type
	if t.Class == ClassEnum {
		t = t.Base
	}
	if t.Class != ClassInteger {
		return nil, v.typeErr("integers")
	}
	n := v.Len()
	sz := t.Size
	if len(v.raw) < n*sz {
		return nil, v.f.errf(0, "%s: %d bytes hold fewer than %d elements", v.path, len(v.raw), n)
	}
	bo := order(t)
	out := make([]int64, n)
	for i := range out {
		b := v.raw[i*sz:]
		switch sz {
		case 1:
			if t.Signed {
				out[i] = int64(int8(b[0]))
			} else {
				out[i] = int64(b[0])
			}
		case 2:
			if t.Signed {
				out[i] = int64(int16(bo.Uint16(b)))
			} else {
				out[i] = int64(bo.Uint16(b))
			}
		case 4:
			if t.Signed {
				out[i] = int64(int32(bo.Uint32(b)))
			} else {
				out[i] = int64(bo.Uint32(b))
			}
		case 8:
			out[i] = int64(bo.Uint64(b))
		default:
			return nil, v.typeErr("integers")
		}
	}
	return out, nil
}

// Strings reads fixed-length and variable-length string elements (and
// variable-length sequences of bytes).
func (v *Value) Strings() ([]string, error) {
	t := v.Type
	n := v.Len()
	switch {
	case t.Class == ClassString:
		if len(v.raw) < n*t.Size {
			return nil, v.f.errf(0, "%s: %d bytes hold fewer than %d strings", v.path, len(v.raw), n)
		}
		out := make([]string, n)
		for i := range out {
			s := v.raw[i*t.Size : (i+1)*t.Size]
			switch t.pad {
			case 2:
				out[i] = strings.TrimRight(string(s), " ")
			default:
				if j := indexByte(s, 0); j >= 0 {
					s = s[:j]
				}
				out[i] = string(s)
			}
		}
		return out, nil
	case t.Class == ClassVarLen && (t.VarString || t.Base.Size == 1):
		es := 4 + v.f.so + 4
		if t.Size != es || len(v.raw) < n*es {
			return nil, v.f.errf(0, "%s: variable-length elements of %d bytes, want %d", v.path, t.Size, es)
		}
		out := make([]string, n)
		var total uint64
		for i := range out {
			c := v.f.cursor(v.raw[i*es:(i+1)*es], 0)
			ln := uint64(c.u32())
			coll := c.addr()
			idx := c.u32()
			if ln == 0 {
				continue
			}
			total += ln
			if total > v.f.maxBytes {
				return nil, &LimitError{File: v.f.name, Path: v.path, Bytes: total, Limit: v.f.maxBytes}
			}
			b, err := v.f.globalObject(coll, idx)
			if err != nil {
				return nil, fmt.Errorf("%s: string %d: %w", v.path, i, err)
			}
			if uint64(len(b)) < ln {
				return nil, v.f.errf(coll, "%s: string %d of %d bytes in a heap object of %d", v.path, i, ln, len(b))
			}
			out[i] = string(b[:ln])
		}
		return out, nil
	}
	return nil, v.typeErr("strings")
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// globalObject returns object idx of the global heap collection at addr.
func (f *File) globalObject(addr uint64, idx uint32) ([]byte, error) {
	b, at, err := f.tail(addr)
	if err != nil {
		return nil, err
	}
	c := f.cursor(b, at)
	c.sig("GCOL")
	c.skip(4)
	size := c.length()
	if c.err != nil {
		return nil, c.err
	}
	if size > uint64(len(b)) || size < uint64(8+f.sl) {
		return nil, f.errf(at, "global heap collection of %d bytes", size)
	}
	c.b = b[:size]
	for c.left() >= 8+f.sl {
		id := c.u16()
		c.skip(6)
		n := c.length()
		if id == 0 {
			break
		}
		if n > uint64(c.left()) {
			return nil, f.errf(at+uint64(c.pos), "global heap object of %d bytes past its collection", n)
		}
		data := c.take(int(n))
		if uint32(id) == idx {
			return data, nil
		}
		if r := n % 8; r != 0 {
			c.skip(int(8 - r))
		}
		if c.err != nil {
			break
		}
	}
	return nil, f.errf(at, "global heap object %d not in its collection", idx)
}
