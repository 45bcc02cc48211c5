package canonical

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Typed element access. Tensors keep their data as the packed bytes of
// raw_data; the functions here decode it element by element following the
// ONNX storage rules: little-endian, float16 (IEEE half) and bfloat16 as
// 16-bit codes, the float8 types as one code per byte (E4M3FN, E4M3FNUZ,
// E5M2, E5M2FNUZ, E8M0 as the ONNX spec defines them), and the 4- and 2-bit
// types packed low bits first (element 0 in the low nibble).

// IsFloatType reports whether dt is a floating-point or complex type.
func IsFloatType(dt DataType) bool {
	switch dt {
	case Float, Double, Float16, BFloat16, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ,
		Float8E8M0, Float4E2M1, Complex64, Complex128:
		return true
	}
	return false
}

// IsIntType reports whether dt is an integer type (signed or unsigned, any
// width; bool is not).
func IsIntType(dt DataType) bool {
	switch dt {
	case Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Int4, Uint4, Int2, Uint2:
		return true
	}
	return false
}

// Float64s returns the elements of a numeric tensor as float64, in
// row-major order. Every numeric type is decoded exactly (float64 holds all
// their values) except int64 and uint64 beyond 2^53, which round. Bool is 0
// or 1. A complex tensor yields 2 values per element, real then imaginary.
// STRING tensors are an error (use Strings or ElementStrings).
func (t *Tensor) Float64s() ([]float64, error) {
	raw, n, err := t.numericData()
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch t.DataType {
	case Complex64:
		out := make([]float64, 2*n)
		for i := range out {
			out[i] = float64(math.Float32frombits(le.Uint32(raw[4*i:])))
		}
		return out, nil
	case Complex128:
		out := make([]float64, 2*n)
		for i := range out {
			out[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return out, nil
	}
	out := make([]float64, n)
	switch t.DataType {
	case Float:
		for i := range out {
			out[i] = float64(math.Float32frombits(le.Uint32(raw[4*i:])))
		}
	case Double:
		for i := range out {
			out[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
	case Float16:
		for i := range out {
			out[i] = Float16ToFloat64(le.Uint16(raw[2*i:]))
		}
	case BFloat16:
		for i := range out {
			out[i] = float64(math.Float32frombits(uint32(le.Uint16(raw[2*i:])) << 16))
		}
	case Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0:
		for i := range out {
			out[i] = Float8ToFloat64(t.DataType, raw[i])
		}
	case Float4E2M1:
		for i := range out {
			out[i] = Float4E2M1ToFloat64(nibble(raw, i))
		}
	default:
		ints, err := t.intsFrom(raw, n)
		if err != nil {
			return nil, err
		}
		if t.DataType == Uint64 {
			for i, v := range ints {
				out[i] = float64(uint64(v))
			}
			break
		}
		for i, v := range ints {
			out[i] = float64(v)
		}
	}
	return out, nil
}

// Int64s returns the elements of an integer or bool tensor as int64, in
// row-major order, exactly; uint64 values above 2^63-1 wrap to negative
// (only their equality is meaningful). Floating-point elements are
// truncated toward zero, as a Cast to int64 does (NaN and out-of-range
// values give unspecified results). Complex and STRING tensors are an
// error.
func (t *Tensor) Int64s() ([]int64, error) {
	if t.DataType == Complex64 || t.DataType == Complex128 {
		return nil, fmt.Errorf("tensor %q: %s elements are not integers", t.Name, ElemTypeName(t.DataType))
	}
	if IsFloatType(t.DataType) {
		f, err := t.Float64s()
		if err != nil {
			return nil, err
		}
		out := make([]int64, len(f))
		for i, v := range f {
			out[i] = int64(v)
		}
		return out, nil
	}
	raw, n, err := t.numericData()
	if err != nil {
		return nil, err
	}
	return t.intsFrom(raw, n)
}

// intsFrom decodes the integer and bool types.
func (t *Tensor) intsFrom(raw []byte, n int) ([]int64, error) {
	le := binary.LittleEndian
	out := make([]int64, n)
	switch t.DataType {
	case Int8:
		for i := range out {
			out[i] = int64(int8(raw[i]))
		}
	case Uint8, Bool:
		for i := range out {
			out[i] = int64(raw[i])
		}
	case Int16:
		for i := range out {
			out[i] = int64(int16(le.Uint16(raw[2*i:])))
		}
	case Uint16:
		for i := range out {
			out[i] = int64(le.Uint16(raw[2*i:]))
		}
	case Int32:
		for i := range out {
			out[i] = int64(int32(le.Uint32(raw[4*i:])))
		}
	case Uint32:
		for i := range out {
			out[i] = int64(le.Uint32(raw[4*i:]))
		}
	case Int64, Uint64:
		for i := range out {
			out[i] = int64(le.Uint64(raw[8*i:]))
		}
	case Int4:
		for i := range out {
			out[i] = int64(int8(nibble(raw, i)<<4) >> 4)
		}
	case Uint4:
		for i := range out {
			out[i] = int64(nibble(raw, i))
		}
	case Int2:
		for i := range out {
			out[i] = int64(int8(crumb(raw, i)<<6) >> 6)
		}
	case Uint2:
		for i := range out {
			out[i] = int64(crumb(raw, i))
		}
	default:
		return nil, fmt.Errorf("tensor %q: %s elements are not integers", t.Name, ElemTypeName(t.DataType))
	}
	return out, nil
}

// numericData returns the packed bytes and the element count, checked
// against each other.
func (t *Tensor) numericData() ([]byte, int, error) {
	if t.DataType == String {
		return nil, 0, fmt.Errorf("tensor %q: STRING elements are not numbers", t.Name)
	}
	if ElemBits(t.DataType) == 0 {
		return nil, 0, fmt.Errorf("tensor %q: unsupported data type %v", t.Name, t.DataType)
	}
	n, err := t.NumElements()
	if err != nil {
		return nil, 0, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if n > math.MaxInt32*8 {
		return nil, 0, fmt.Errorf("tensor %q: %d elements are too many to decode at once", t.Name, n)
	}
	raw, err := t.Bytes() // checks the size against the dims
	if err != nil {
		return nil, 0, err
	}
	return raw, int(n), nil
}

func nibble(raw []byte, i int) uint8 { return (raw[i/2] >> (4 * uint(i%2))) & 0xF }
func crumb(raw []byte, i int) uint8  { return (raw[i/4] >> (2 * uint(i%4))) & 0x3 }

// Float8ToFloat64 decodes one code of a float8 type (FLOAT8E4M3FN,
// FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0) as the ONNX
// specification defines it; NaN codes give NaN. Other types give NaN.
func Float8ToFloat64(dt DataType, b uint8) float64 {
	nan := math.NaN()
	var ebits, mbits, bias uint
	switch dt {
	case Float8E8M0:
		if b == 0xFF {
			return nan
		}
		return math.Ldexp(1, int(b)-127)
	case Float8E4M3FN:
		ebits, mbits, bias = 4, 3, 7
		if b&0x7F == 0x7F {
			return nan
		}
	case Float8E4M3FNUZ:
		ebits, mbits, bias = 4, 3, 8
		if b == 0x80 {
			return nan
		}
	case Float8E5M2:
		ebits, mbits, bias = 5, 2, 15
		if b&0x7F == 0x7C {
			if b&0x80 != 0 {
				return math.Inf(-1)
			}
			return math.Inf(1)
		}
		if b&0x7F > 0x7C {
			return nan
		}
	case Float8E5M2FNUZ:
		ebits, mbits, bias = 5, 2, 16
		if b == 0x80 {
			return nan
		}
	default:
		return nan
	}
	e := uint(b>>mbits) & (1<<ebits - 1)
	m := uint(b) & (1<<mbits - 1)
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(m), 1-int(bias)-int(mbits))
	} else {
		v = math.Ldexp(1+float64(m)/float64(uint(1)<<mbits), int(e)-int(bias))
	}
	if b&0x80 != 0 {
		v = -v
	}
	return v
}

var float4Values = [8]float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}

// Float4E2M1ToFloat64 decodes one FLOAT4E2M1 code (the low 4 bits of c).
func Float4E2M1ToFloat64(c uint8) float64 {
	v := float4Values[c&7]
	if c&8 != 0 {
		return -v
	}
	return v
}

// ElementStrings returns every element of t as text, in row-major order:
// integers in decimal, bool as true/false, floating-point values as the
// shortest decimal that reads back to the same value of the element's
// precision (float32 for float and the 16-, 8- and 4-bit float types,
// float64 for double), with NaN, +Inf and -Inf spelled so; complex values
// as (re+imi); STRING elements as they are.
func (t *Tensor) ElementStrings() ([]string, error) {
	if t.DataType == String {
		ss, err := t.Strings()
		if err != nil {
			return nil, err
		}
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = string(s)
		}
		return out, nil
	}
	if t.DataType == Bool {
		v, err := t.Int64s()
		if err != nil {
			return nil, err
		}
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = strconv.FormatBool(x != 0)
		}
		return out, nil
	}
	if IsIntType(t.DataType) {
		v, err := t.Int64s()
		if err != nil {
			return nil, err
		}
		out := make([]string, len(v))
		for i, x := range v {
			if t.DataType == Uint64 {
				out[i] = strconv.FormatUint(uint64(x), 10)
			} else {
				out[i] = strconv.FormatInt(x, 10)
			}
		}
		return out, nil
	}
	f, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	bitSize := 32
	if t.DataType == Double || t.DataType == Complex128 {
		bitSize = 64
	}
	if t.DataType == Complex64 || t.DataType == Complex128 {
		out := make([]string, len(f)/2)
		for i := range out {
			out[i] = strconv.FormatComplex(complex(f[2*i], f[2*i+1]), 'g', -1, 2*bitSize)
		}
		return out, nil
	}
	out := make([]string, len(f))
	for i, x := range f {
		out[i] = strconv.FormatFloat(x, 'g', -1, bitSize)
	}
	return out, nil
}

// Format returns t as text for messages and listings:
// `name float[2,3] {1, 2.5, NaN, …}` with at most limit elements (all when
// limit <= 0). Elements that cannot be decoded are replaced by the reason.
func (t *Tensor) Format(limit int) string {
	var b strings.Builder
	if t.Name != "" {
		b.WriteString(t.Name)
		b.WriteByte(' ')
	}
	b.WriteString(ElemTypeName(t.DataType))
	b.WriteByte('[')
	for i, d := range t.Dims {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteString("] {")
	els, err := t.ElementStrings()
	if err != nil {
		b.WriteString("<")
		b.WriteString(err.Error())
		b.WriteString(">}")
		return b.String()
	}
	for i, s := range els {
		if limit > 0 && i == limit {
			fmt.Fprintf(&b, ", … %d more", len(els)-limit)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if t.DataType == String {
			s = strconv.Quote(s)
		}
		b.WriteString(s)
	}
	b.WriteString("}")
	return b.String()
}

// QuantRange is the range of the quantized element type dt (the values
// QuantizeLinear saturates to); ok is false for a type that is not one.
func QuantRange(dt DataType) (lo, hi float64, ok bool) {
	switch dt {
	case Uint8:
		return 0, 255, true
	case Int8:
		return -128, 127, true
	case Uint16:
		return 0, 65535, true
	case Int16:
		return -32768, 32767, true
	case Int32:
		return math.MinInt32, math.MaxInt32, true
	case Uint4:
		return 0, 15, true
	case Int4:
		return -8, 7, true
	case Uint2:
		return 0, 3, true
	case Int2:
		return -2, 1, true
	}
	return 0, 0, false
}
