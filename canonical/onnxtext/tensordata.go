package onnxtext

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// dataField names the typed TensorProto field that holds the values of a data type.
type dataField int

const (
	fieldNone dataField = iota
	fieldInt32
	fieldInt64
	fieldUint64
	fieldFloat
	fieldDouble
	fieldString
)

func (f dataField) String() string {
	switch f {
	case fieldInt32:
		return "int32_data"
	case fieldInt64:
		return "int64_data"
	case fieldUint64:
		return "uint64_data"
	case fieldFloat:
		return "float_data"
	case fieldDouble:
		return "double_data"
	case fieldString:
		return "string_data"
	}
	return "none"
}

// typedField returns the field the ONNX spec stores non-raw values of dt in.
func typedField(dt int32) dataField {
	switch onnxpb.TensorProto_DataType(dt) {
	case onnxpb.TensorProto_INT32, onnxpb.TensorProto_INT16, onnxpb.TensorProto_INT8,
		onnxpb.TensorProto_UINT16, onnxpb.TensorProto_UINT8, onnxpb.TensorProto_BOOL,
		onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16,
		onnxpb.TensorProto_FLOAT8E4M3FN, onnxpb.TensorProto_FLOAT8E4M3FNUZ,
		onnxpb.TensorProto_FLOAT8E5M2, onnxpb.TensorProto_FLOAT8E5M2FNUZ,
		onnxpb.TensorProto_FLOAT8E8M0, onnxpb.TensorProto_UINT4, onnxpb.TensorProto_INT4,
		onnxpb.TensorProto_FLOAT4E2M1, onnxpb.TensorProto_UINT2, onnxpb.TensorProto_INT2:
		return fieldInt32
	case onnxpb.TensorProto_INT64:
		return fieldInt64
	case onnxpb.TensorProto_UINT32, onnxpb.TensorProto_UINT64:
		return fieldUint64
	case onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_COMPLEX64:
		return fieldFloat
	case onnxpb.TensorProto_DOUBLE, onnxpb.TensorProto_COMPLEX128:
		return fieldDouble
	case onnxpb.TensorProto_STRING:
		return fieldString
	}
	return fieldNone
}

// rawElem describes how raw_data of a data type splits into printable values.
type rawElem struct {
	size   int  // bytes per printed value
	signed bool // integer values are two's complement
	float  bool // values are IEEE floats of size bytes
}

// rawLayout returns the element layout of raw_data for dt; ok is false for
// types whose raw bytes are not printed as values (sub-byte, string).
func rawLayout(dt int32) (rawElem, bool) {
	switch onnxpb.TensorProto_DataType(dt) {
	case onnxpb.TensorProto_INT8:
		return rawElem{size: 1, signed: true}, true
	case onnxpb.TensorProto_UINT8, onnxpb.TensorProto_BOOL,
		onnxpb.TensorProto_FLOAT8E4M3FN, onnxpb.TensorProto_FLOAT8E4M3FNUZ,
		onnxpb.TensorProto_FLOAT8E5M2, onnxpb.TensorProto_FLOAT8E5M2FNUZ, onnxpb.TensorProto_FLOAT8E8M0:
		return rawElem{size: 1}, true
	case onnxpb.TensorProto_INT16:
		return rawElem{size: 2, signed: true}, true
	case onnxpb.TensorProto_UINT16, onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
		return rawElem{size: 2}, true
	case onnxpb.TensorProto_INT32:
		return rawElem{size: 4, signed: true}, true
	case onnxpb.TensorProto_UINT32:
		return rawElem{size: 4}, true
	case onnxpb.TensorProto_INT64:
		return rawElem{size: 8, signed: true}, true
	case onnxpb.TensorProto_UINT64:
		return rawElem{size: 8}, true
	case onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_COMPLEX64:
		return rawElem{size: 4, float: true}, true
	case onnxpb.TensorProto_DOUBLE, onnxpb.TensorProto_COMPLEX128:
		return rawElem{size: 8, float: true}, true
	}
	return rawElem{}, false
}

func formatFloat32(f float32) string {
	switch {
	case math.IsNaN(float64(f)):
		if math.Signbit(float64(f)) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(float64(f), 1):
		return "inf"
	case math.IsInf(float64(f), -1):
		return "-inf"
	}
	return strconv.FormatFloat(float64(f), 'g', -1, 32)
}

func formatFloat64(f float64) string {
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Bit patterns produced by the parser for nan and -nan.
const (
	nan32Bits    = 0x7fc00000
	negNan32Bits = 0xffc00000
	nan64Bits    = 0x7ff8000000000000
	negNan64Bits = 0xfff8000000000000
)

// parseFloatText converts a float or integer literal to a float of the
// given bit size. It reports false when the text is not a number or is out
// of range.
func parseFloatText(s string, bits int) (float64, bool) {
	neg := false
	body := s
	if len(body) > 0 && body[0] == '-' {
		neg = true
		body = body[1:]
	}
	if isSpecialFloat(body) {
		var v float64
		if body[0] == 'n' || body[0] == 'N' {
			if bits == 32 {
				b := uint32(nan32Bits)
				if neg {
					b = negNan32Bits
				}
				return float64(math.Float32frombits(b)), true
			}
			b := uint64(nan64Bits)
			if neg {
				b = negNan64Bits
			}
			return math.Float64frombits(b), true
		}
		v = math.Inf(1)
		if neg {
			v = math.Inf(-1)
		}
		return v, true
	}
	v, err := strconv.ParseFloat(s, bits)
	if err != nil {
		return 0, false
	}
	return v, true
}

// rawValues decodes raw bytes into printed values. ok is false when the
// bytes cannot be reproduced exactly from printed values.
func rawValues(dt int32, raw []byte) ([]string, bool) {
	lay, ok := rawLayout(dt)
	if !ok || len(raw)%lay.size != 0 {
		return nil, false
	}
	n := len(raw) / lay.size
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		b := raw[i*lay.size : (i+1)*lay.size]
		var s string
		switch {
		case lay.float && lay.size == 4:
			bits := binary.LittleEndian.Uint32(b)
			f := math.Float32frombits(bits)
			if math.IsNaN(float64(f)) && bits != nan32Bits && bits != negNan32Bits {
				return nil, false
			}
			s = formatFloat32(f)
		case lay.float:
			bits := binary.LittleEndian.Uint64(b)
			f := math.Float64frombits(bits)
			if math.IsNaN(f) && bits != nan64Bits && bits != negNan64Bits {
				return nil, false
			}
			s = formatFloat64(f)
		default:
			var u uint64
			switch lay.size {
			case 1:
				u = uint64(b[0])
			case 2:
				u = uint64(binary.LittleEndian.Uint16(b))
			case 4:
				u = uint64(binary.LittleEndian.Uint32(b))
			default:
				u = binary.LittleEndian.Uint64(b)
			}
			if lay.signed {
				shift := 64 - 8*uint(lay.size)
				s = strconv.FormatInt(int64(u<<shift)>>shift, 10)
			} else {
				s = strconv.FormatUint(u, 10)
			}
		}
		out = append(out, s)
	}
	return out, true
}

// appendRawValue encodes one printed value of dt into raw bytes.
// It returns a message describing the problem on failure.
func appendRawValue(dst []byte, dt int32, text string) ([]byte, string) {
	lay, ok := rawLayout(dt)
	if !ok {
		return dst, "raw values are not supported for this element type; use raw \"hex\""
	}
	if lay.float {
		f, ok := parseFloatText(text, 8*lay.size)
		if !ok {
			return dst, "invalid or out-of-range float " + strconv.Quote(text)
		}
		if lay.size == 4 {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), ""
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), ""
	}
	if isFloatLiteral(text) {
		return dst, "integer expected, found " + strconv.Quote(text)
	}
	var u uint64
	bits := 8 * lay.size
	if lay.signed {
		v, err := strconv.ParseInt(text, 10, bits)
		if err != nil {
			return dst, "integer " + strconv.Quote(text) + " out of range"
		}
		u = uint64(v)
	} else {
		v, err := strconv.ParseUint(text, 10, bits)
		if err != nil {
			return dst, "unsigned integer " + strconv.Quote(text) + " out of range"
		}
		u = v
	}
	switch lay.size {
	case 1:
		return append(dst, byte(u)), ""
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(u)), ""
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(u)), ""
	}
	return binary.LittleEndian.AppendUint64(dst, u), ""
}
