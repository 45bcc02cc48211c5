package catboost

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A minimal, bounds-checked reader of the flatbuffers wire format: just
// what TModelCore needs (tables, scalars, strings, vectors of scalars,
// structs and tables). Every offset is checked against the buffer before
// use; a malformed buffer is an error, never a panic.

var errFB = errors.New("malformed flatbuffer")

type fbTable struct {
	buf   []byte
	pos   int // the table's start
	vt    int // its vtable's start
	vtLen int
	// dec counts what the reads of one buffer decode (fbdecode.go).
	dec *fbDecoded
}

func fbErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errFB, fmt.Sprintf(format, a...))
}

func u32At(buf []byte, p int) (uint32, error) {
	if p < 0 || p > len(buf)-4 {
		return 0, fbErr("offset %d out of range (%d bytes)", p, len(buf))
	}
	return binary.LittleEndian.Uint32(buf[p:]), nil
}

func u16At(buf []byte, p int) (uint16, error) {
	if p < 0 || p > len(buf)-2 {
		return 0, fbErr("offset %d out of range (%d bytes)", p, len(buf))
	}
	return binary.LittleEndian.Uint16(buf[p:]), nil
}

// fbRoot returns the root table of buf.
func fbRoot(buf []byte) (fbTable, error) {
	off, err := u32At(buf, 0)
	if err != nil {
		return fbTable{}, err
	}
	t, err := fbTableAt(buf, int64(off))
	t.dec = newFBDecoded(len(buf))
	return t, err
}

func fbTableAt(buf []byte, pos int64) (fbTable, error) {
	if pos < 0 || pos > int64(len(buf))-4 {
		return fbTable{}, fbErr("table at %d out of range (%d bytes)", pos, len(buf))
	}
	p := int(pos)
	so := int64(int32(binary.LittleEndian.Uint32(buf[p:])))
	vt := int64(p) - so
	if vt < 0 || vt > int64(len(buf))-4 {
		return fbTable{}, fbErr("vtable of the table at %d out of range", p)
	}
	vtLen, _ := u16At(buf, int(vt))
	objLen, _ := u16At(buf, int(vt)+2)
	if vtLen < 4 || vtLen%2 != 0 || vt+int64(vtLen) > int64(len(buf)) {
		return fbTable{}, fbErr("vtable at %d has size %d", vt, vtLen)
	}
	if int64(p)+int64(objLen) > int64(len(buf)) {
		return fbTable{}, fbErr("table at %d has size %d past the end", p, objLen)
	}
	return fbTable{buf: buf, pos: p, vt: int(vt), vtLen: int(vtLen)}, nil
}

// field returns the absolute position of field i, or -1 when absent.
func (t fbTable) field(i int) int {
	o := 4 + 2*i
	if o+2 > t.vtLen {
		return -1
	}
	off, _ := u16At(t.buf, t.vt+o)
	if off == 0 {
		return -1
	}
	return t.pos + int(off)
}

func (t fbTable) scalar(i, size int) ([]byte, bool, error) {
	p := t.field(i)
	if p < 0 {
		return nil, false, nil
	}
	if p > len(t.buf)-size {
		return nil, false, fbErr("field %d at %d out of range", i, p)
	}
	return t.buf[p : p+size], true, nil
}

func (t fbTable) int32(i int, def int32) (int32, error) {
	b, ok, err := t.scalar(i, 4)
	if err != nil || !ok {
		return def, err
	}
	return int32(binary.LittleEndian.Uint32(b)), nil
}

func (t fbTable) uint8(i int, def uint8) (uint8, error) {
	b, ok, err := t.scalar(i, 1)
	if err != nil || !ok {
		return def, err
	}
	return b[0], nil
}

func (t fbTable) float64(i int, def float64) (float64, error) {
	b, ok, err := t.scalar(i, 8)
	if err != nil || !ok {
		return def, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// indirect follows the uoffset of field i; -1 when absent.
func (t fbTable) indirect(i int) (int64, error) {
	p := t.field(i)
	if p < 0 {
		return -1, nil
	}
	off, err := u32At(t.buf, p)
	if err != nil {
		return -1, err
	}
	return int64(p) + int64(off), nil
}

func (t fbTable) table(i int) (fbTable, bool, error) {
	p, err := t.indirect(i)
	if err != nil || p < 0 {
		return fbTable{}, false, err
	}
	tt, err := fbTableAt(t.buf, p)
	tt.dec = t.dec
	return tt, err == nil, err
}

// vector returns the start and length of the vector of field i whose
// elements are elem bytes each (0, 0 when absent).
func (t fbTable) vector(i, elem int) (int, int, error) {
	p, err := t.indirect(i)
	if err != nil || p < 0 {
		return 0, 0, err
	}
	if p > int64(len(t.buf))-4 {
		return 0, 0, fbErr("vector of field %d at %d out of range", i, p)
	}
	n := int64(binary.LittleEndian.Uint32(t.buf[p:]))
	start := p + 4
	if n > (int64(len(t.buf))-start)/int64(elem) {
		return 0, 0, fbErr("vector of field %d: %d elements of %d bytes past the end", i, n, elem)
	}
	if err := t.dec.take(n*int64(elem), i); err != nil {
		return 0, 0, err
	}
	return int(start), int(n), nil
}

func (t fbTable) int32s(i int) ([]int32, error) {
	s, n, err := t.vector(i, 4)
	if err != nil {
		return nil, err
	}
	out := make([]int32, n)
	for k := range out {
		out[k] = int32(binary.LittleEndian.Uint32(t.buf[s+4*k:]))
	}
	return out, nil
}

func (t fbTable) uint32s(i int) ([]uint32, error) {
	s, n, err := t.vector(i, 4)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, n)
	for k := range out {
		out[k] = binary.LittleEndian.Uint32(t.buf[s+4*k:])
	}
	return out, nil
}

func (t fbTable) float32s(i int) ([]float32, error) {
	s, n, err := t.vector(i, 4)
	if err != nil {
		return nil, err
	}
	out := make([]float32, n)
	for k := range out {
		out[k] = math.Float32frombits(binary.LittleEndian.Uint32(t.buf[s+4*k:]))
	}
	return out, nil
}

func (t fbTable) float64s(i int) ([]float64, error) {
	s, n, err := t.vector(i, 8)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for k := range out {
		out[k] = math.Float64frombits(binary.LittleEndian.Uint64(t.buf[s+8*k:]))
	}
	return out, nil
}

// uint16Pairs reads a vector of structs of two uint16 (4 bytes each).
func (t fbTable) uint16Pairs(i int) ([][2]uint16, error) {
	s, n, err := t.vector(i, 4)
	if err != nil {
		return nil, err
	}
	out := make([][2]uint16, n)
	for k := range out {
		out[k] = [2]uint16{binary.LittleEndian.Uint16(t.buf[s+4*k:]), binary.LittleEndian.Uint16(t.buf[s+4*k+2:])}
	}
	return out, nil
}

func (t fbTable) string(i int) (string, error) {
	s, n, err := t.vector(i, 1)
	if err != nil {
		return "", err
	}
	return string(t.buf[s : s+n]), nil
}

// tables reads a vector of tables.
func (t fbTable) tables(i int) ([]fbTable, error) {
	s, n, err := t.vector(i, 4)
	if err != nil {
		return nil, err
	}
	out := make([]fbTable, n)
	for k := range out {
		p := s + 4*k
		off := binary.LittleEndian.Uint32(t.buf[p:])
		if out[k], err = fbTableAt(t.buf, int64(p)+int64(off)); err != nil {
			return nil, err
		}
		out[k].dec = t.dec
	}
	return out, nil
}

// strings reads a vector of strings.
func (t fbTable) strings(i int) ([]string, error) {
	s, n, err := t.vector(i, 4)
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for k := range out {
		p := int64(s + 4*k)
		q := p + int64(binary.LittleEndian.Uint32(t.buf[p:]))
		if q > int64(len(t.buf))-4 {
			return nil, fbErr("string at %d out of range", q)
		}
		l := int64(binary.LittleEndian.Uint32(t.buf[q:]))
		if l > int64(len(t.buf))-q-4 {
			return nil, fbErr("string at %d of %d bytes past the end", q, l)
		}
		out[k] = string(t.buf[q+4 : q+4+l])
	}
	return out, nil
}

func (t fbTable) float32(i int, def float32) (float32, error) {
	b, ok, err := t.scalar(i, 4)
	if err != nil || !ok {
		return def, err
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
}

// bytes reads a vector of ubyte (nil when absent).
func (t fbTable) bytes(i int) ([]byte, error) {
	s, n, err := t.vector(i, 1)
	if err != nil {
		return nil, err
	}
	return t.buf[s : s+n : s+n], nil
}

// int32Pairs reads a vector of structs of two 4-byte fields (TFloatSplit,
// TOneHotSplit), as raw 32-bit words.
func (t fbTable) int32Pairs(i int) ([][2]uint32, error) {
	s, n, err := t.vector(i, 8)
	if err != nil {
		return nil, err
	}
	out := make([][2]uint32, n)
	for k := range out {
		out[k] = [2]uint32{binary.LittleEndian.Uint32(t.buf[s+8*k:]), binary.LittleEndian.Uint32(t.buf[s+8*k+4:])}
	}
	return out, nil
}
