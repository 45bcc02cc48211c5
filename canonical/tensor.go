package canonical

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// DataType is a tensor element type (TensorProto.DataType).
type DataType = onnxpb.TensorProto_DataType

// Element types.
const (
	Undefined      = onnxpb.TensorProto_UNDEFINED
	Float          = onnxpb.TensorProto_FLOAT
	Uint8          = onnxpb.TensorProto_UINT8
	Int8           = onnxpb.TensorProto_INT8
	Uint16         = onnxpb.TensorProto_UINT16
	Int16          = onnxpb.TensorProto_INT16
	Int32          = onnxpb.TensorProto_INT32
	Int64          = onnxpb.TensorProto_INT64
	String         = onnxpb.TensorProto_STRING
	Bool           = onnxpb.TensorProto_BOOL
	Float16        = onnxpb.TensorProto_FLOAT16
	Double         = onnxpb.TensorProto_DOUBLE
	Uint32         = onnxpb.TensorProto_UINT32
	Uint64         = onnxpb.TensorProto_UINT64
	Complex64      = onnxpb.TensorProto_COMPLEX64
	Complex128     = onnxpb.TensorProto_COMPLEX128
	BFloat16       = onnxpb.TensorProto_BFLOAT16
	Float8E4M3FN   = onnxpb.TensorProto_FLOAT8E4M3FN
	Float8E4M3FNUZ = onnxpb.TensorProto_FLOAT8E4M3FNUZ
	Float8E5M2     = onnxpb.TensorProto_FLOAT8E5M2
	Float8E5M2FNUZ = onnxpb.TensorProto_FLOAT8E5M2FNUZ
	Uint4          = onnxpb.TensorProto_UINT4
	Int4           = onnxpb.TensorProto_INT4
	Float4E2M1     = onnxpb.TensorProto_FLOAT4E2M1
	Float8E8M0     = onnxpb.TensorProto_FLOAT8E8M0
	Uint2          = onnxpb.TensorProto_UINT2
	Int2           = onnxpb.TensorProto_INT2
)

// ElemBits returns the size of one element of dt in bits in the packed
// raw_data layout (4 for the 4-bit types, 2 for the 2-bit ones), or 0 for
// STRING and UNDEFINED.
func ElemBits(dt DataType) int {
	switch dt {
	case Float, Int32, Uint32:
		return 32
	case Uint8, Int8, Bool, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0:
		return 8
	case Uint16, Int16, Float16, BFloat16:
		return 16
	case Int64, Uint64, Double, Complex64:
		return 64
	case Complex128:
		return 128
	case Uint4, Int4, Float4E2M1:
		return 4
	case Uint2, Int2:
		return 2
	}
	return 0
}

// Tensor is a TensorProto whose data stays where it was read: raw_data is a
// slice of the file's bytes, external data is read (memory-mapped) only when
// Bytes is called. Typed data fields (float_data, int64_data, …) are kept as
// they were and converted on demand.
type Tensor struct {
	Name      string
	DataType  DataType
	Dims      []int64
	DocString string

	raw    []byte // packed little-endian data when hasRaw
	hasRaw bool
	// strs holds STRING data.
	strs [][]byte
	// shell holds the TensorProto as read minus name, dims, data_type,
	// doc_string, raw_data and string_data: typed data fields, segment,
	// external_data entries, data_location, metadata and unknown fields.
	shell *onnxpb.TensorProto
	// ext loads external data; nil for inline tensors.
	ext *externalData
}

// externalData describes data kept in a file beside the model.
type externalData struct {
	location string
	offset   int64
	length   int64 // -1 when not given
	checksum string
	load     func() ([]byte, error) // set by the loader; memory-maps lazily
	data     []byte                 // cached after the first load
	err      error                  // a malformed external_data entry
	mu       sync.Mutex
}

// NewTensor returns a tensor over raw, the packed little-endian data of a
// numeric type. raw is not copied.
func NewTensor(name string, dt DataType, dims []int64, raw []byte) *Tensor {
	return &Tensor{Name: name, DataType: dt, Dims: dims, raw: raw, hasRaw: true}
}

// NewStringTensor returns a STRING tensor.
func NewStringTensor(name string, dims []int64, data [][]byte) *Tensor {
	return &Tensor{Name: name, DataType: String, Dims: dims, strs: data}
}

// NumElements returns the product of the dims, or an error when a dim is
// negative or the product overflows int64.
func (t *Tensor) NumElements() (int64, error) {
	return NumElements(t.Dims)
}

// NumElements returns the product of dims, or an error when a dim is
// negative or the product overflows int64.
func NumElements(dims []int64) (int64, error) {
	n := int64(1)
	for i, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("dim %d is negative (%d)", i, d)
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("dims %v: element count overflows int64", dims)
		}
		n = int64(lo)
	}
	return n, nil
}

// ByteSize returns the size in bytes of the packed data the dims call for
// (0 for STRING tensors).
func (t *Tensor) ByteSize() (int64, error) {
	n, err := t.NumElements()
	if err != nil {
		return 0, err
	}
	b := int64(ElemBits(t.DataType))
	if b == 0 {
		return 0, nil
	}
	if b < 8 {
		per := 8 / b // elements per byte
		return n/per + min(n%per, 1), nil
	}
	if n > math.MaxInt64/(b/8) {
		return 0, fmt.Errorf("dims %v: byte size overflows int64", t.Dims)
	}
	return n * (b / 8), nil
}

// HasData reports whether t carries data of its own: raw_data, a typed
// data field, STRING elements or an external data reference. A tensor
// without data describes a shape only; it is valid only when it has no
// elements.
func (t *Tensor) HasData() bool {
	if t.ext != nil || t.hasRaw || len(t.strs) > 0 {
		return true
	}
	if s := t.shell; s != nil {
		return len(s.FloatData)+len(s.DoubleData)+len(s.Int64Data)+len(s.Uint64Data)+len(s.Int32Data) > 0
	}
	return false
}

// IsExternal reports whether the data lives in an external file.
func (t *Tensor) IsExternal() bool { return t.ext != nil }

// ExternalLocation returns the external data file (relative to the model's
// folder), offset and length (-1 when unknown), or "" for inline data.
func (t *Tensor) ExternalLocation() (string, int64, int64) {
	if t.ext == nil {
		return "", 0, 0
	}
	return t.ext.location, t.ext.offset, t.ext.length
}

// Bytes returns the tensor's packed little-endian data (for the 4- and
// 2-bit types, packed as raw_data packs them). Raw and external data are
// returned without copying and must not be modified; typed fields are
// converted into a new slice. It checks that the data size matches the
// dims. STRING tensors have no bytes: use Strings.
func (t *Tensor) Bytes() ([]byte, error) {
	want, err := t.ByteSize()
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if t.DataType == String {
		return nil, fmt.Errorf("tensor %q: STRING tensors have no raw bytes", t.Name)
	}
	if ElemBits(t.DataType) == 0 {
		return nil, fmt.Errorf("tensor %q: unsupported data type %v", t.Name, t.DataType)
	}
	var b []byte
	switch {
	case t.ext != nil:
		b, err = t.ext.bytes()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	case t.hasRaw:
		b = t.raw
	default:
		b, err = typedToRaw(t.DataType, t.shell, want)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	}
	if int64(len(b)) != want {
		return nil, fmt.Errorf("tensor %q: data holds %d bytes but dims %v of %v need %d", t.Name, len(b), t.Dims, t.DataType, want)
	}
	return b, nil
}

// Strings returns the elements of a STRING tensor.
func (t *Tensor) Strings() ([][]byte, error) {
	if t.DataType != String {
		return nil, fmt.Errorf("tensor %q: is %v, not STRING", t.Name, t.DataType)
	}
	n, err := t.NumElements()
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if int64(len(t.strs)) != n {
		return nil, fmt.Errorf("tensor %q: holds %d strings but dims %v need %d", t.Name, len(t.strs), t.Dims, n)
	}
	return t.strs, nil
}

// SetBytes replaces the data with raw (packed little-endian), dropping
// typed fields and any external reference.
func (t *Tensor) SetBytes(raw []byte) {
	t.raw, t.hasRaw, t.ext = raw, true, nil
	if t.shell != nil {
		clearTypedData(t.shell)
	}
}

func clearTypedData(s *onnxpb.TensorProto) {
	s.FloatData, s.Int32Data, s.Int64Data, s.DoubleData, s.Uint64Data = nil, nil, nil, nil, nil
	s.StringData, s.RawData, s.ExternalData, s.DataLocation = nil, nil, nil, nil
}

// typedToRaw converts the typed data fields of a TensorProto into packed
// little-endian bytes, following the storage rules of onnx.proto.
func typedToRaw(dt DataType, s *onnxpb.TensorProto, want int64) ([]byte, error) {
	if s == nil {
		if want == 0 {
			return []byte{}, nil
		}
		return nil, fmt.Errorf("no data for %d bytes", want)
	}
	// want comes from the dims, which may lie: allocate for the data
	// present, never more.
	have := int64(4*len(s.FloatData)+8*len(s.DoubleData)+8*len(s.Int64Data)+8*len(s.Uint64Data)) + 4*int64(len(s.Int32Data))
	out := make([]byte, 0, min(want, have))
	switch dt {
	case Float:
		for _, f := range s.FloatData {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
		}
	case Complex64:
		for _, f := range s.FloatData {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
		}
	case Double, Complex128:
		for _, f := range s.DoubleData {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(f))
		}
	case Int64:
		for _, v := range s.Int64Data {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	case Uint64:
		for _, v := range s.Uint64Data {
			out = binary.LittleEndian.AppendUint64(out, v)
		}
	case Uint32:
		for _, v := range s.Uint64Data {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	case Int32:
		for _, v := range s.Int32Data {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	case Int16, Uint16, Float16, BFloat16:
		for _, v := range s.Int32Data {
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		}
	case Int8, Uint8, Bool, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0:
		for _, v := range s.Int32Data {
			out = append(out, byte(v))
		}
	case Int4, Uint4, Float4E2M1:
		// int32_data holds the packed bytes (two elements per entry's low byte).
		for _, v := range s.Int32Data {
			out = append(out, byte(v))
		}
	case Int2, Uint2:
		for _, v := range s.Int32Data {
			out = append(out, byte(v))
		}
	default:
		return nil, fmt.Errorf("unsupported data type %v", dt)
	}
	return out, nil
}

// TensorType returns the TypeProto of a tensor of dt with fixed dims.
func TensorType(dt DataType, dims []int64) *onnxpb.TypeProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{
			Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d},
		})
	}
	et := int32(dt)
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: &et, Shape: shape},
	}}
}

// Dim is one dimension of a tensor type: a known size, a symbolic name, or
// unknown (neither).
type Dim struct {
	Value int64
	Param string
	Known bool
}

// Same reports whether d and o are the same size: equal known sizes, or the
// same named symbolic dim (unknown dims are never the same).
func (d Dim) Same(o Dim) bool {
	if d.Known || o.Known {
		return d.Known && o.Known && d.Value == o.Value
	}
	return d.Param != "" && d.Param == o.Param
}

// TensorTypeOf returns the element type and dims of a tensor TypeProto.
// hasShape is false when the type carries no shape (rank unknown). ok is
// false when tp is not a tensor type.
func TensorTypeOf(tp *onnxpb.TypeProto) (dt DataType, dims []Dim, hasShape, ok bool) {
	tt := tp.GetTensorType()
	if tt == nil {
		return Undefined, nil, false, false
	}
	dt = DataType(tt.GetElemType())
	if tt.Shape == nil {
		return dt, nil, false, true
	}
	for _, d := range tt.Shape.Dim {
		switch x := d.Value.(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			dims = append(dims, Dim{Value: x.DimValue, Known: true})
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			dims = append(dims, Dim{Param: x.DimParam})
		default:
			dims = append(dims, Dim{})
		}
	}
	return dt, dims, true, true
}

// bytes maps the external data on first use and caches it.
func (e *externalData) bytes() ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	if e.data != nil {
		return e.data, nil
	}
	if e.load == nil {
		return nil, fmt.Errorf("external data %q is not attached to a model folder (load the model from a file)", e.location)
	}
	d, err := e.load()
	if err != nil {
		return nil, err
	}
	e.data = d
	return d, nil
}
