//go:build cgo

package ort

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	ortgo "github.com/yalue/onnxruntime_go"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// maxElements bounds the element count of one tensor handed to ONNX Runtime
// (2^40), so that a hostile dims list cannot overflow size computations.
const maxElements = int64(1) << 40

// elemSize returns the byte size of one element of an ONNX data type that
// this package supports, or 0. ONNX Runtime's element-type enum equals
// TensorProto.DataType up to FLOAT4E2M1 (23) and differs after it (its
// UINT2 is 24, ONNX's FLOAT8E8M0 is 24), so every supported type is below 21
// and a value converts between the two enums unchanged.
func elemSize(dt onnxpb.TensorProto_DataType) int {
	switch dt {
	case onnxpb.TensorProto_UINT8, onnxpb.TensorProto_INT8, onnxpb.TensorProto_BOOL,
		onnxpb.TensorProto_FLOAT8E4M3FN, onnxpb.TensorProto_FLOAT8E4M3FNUZ,
		onnxpb.TensorProto_FLOAT8E5M2, onnxpb.TensorProto_FLOAT8E5M2FNUZ:
		return 1
	case onnxpb.TensorProto_UINT16, onnxpb.TensorProto_INT16,
		onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
		return 2
	case onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_INT32, onnxpb.TensorProto_UINT32:
		return 4
	case onnxpb.TensorProto_DOUBLE, onnxpb.TensorProto_INT64, onnxpb.TensorProto_UINT64:
		return 8
	}
	return 0
}

// numElements checks dims and returns their product.
func numElements(dims []int64) (int64, error) {
	n := int64(1)
	for i, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is negative (%d)", i, d)
		}
		if d != 0 && n > maxElements/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", dims, maxElements)
		}
		n *= d
	}
	return n, nil
}

// tensorBytes returns the little-endian element bytes of a numeric or bool
// tensor, from raw_data or from the typed field that holds its type.
func tensorBytes(tp *onnxpb.TensorProto, dt onnxpb.TensorProto_DataType, n int64) ([]byte, error) {
	size := elemSize(dt)
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, fmt.Errorf("external data is not supported for run inputs")
	}
	want := n * int64(size)
	if tp.RawData != nil {
		if int64(len(tp.RawData)) != want {
			return nil, fmt.Errorf("raw_data has %d bytes, shape %v of %s needs %d",
				len(tp.RawData), tp.GetDims(), dt, want)
		}
		return tp.RawData, nil
	}
	out := make([]byte, want)
	le := binary.LittleEndian
	count := func(have int) error {
		if int64(have) != n {
			return fmt.Errorf("typed data has %d values, shape %v needs %d", have, tp.GetDims(), n)
		}
		return nil
	}
	switch dt {
	case onnxpb.TensorProto_FLOAT:
		v := tp.GetFloatData()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		for i, x := range v {
			le.PutUint32(out[4*i:], math.Float32bits(x))
		}
	case onnxpb.TensorProto_DOUBLE:
		v := tp.GetDoubleData()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		for i, x := range v {
			le.PutUint64(out[8*i:], math.Float64bits(x))
		}
	case onnxpb.TensorProto_INT64:
		v := tp.GetInt64Data()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		for i, x := range v {
			le.PutUint64(out[8*i:], uint64(x))
		}
	case onnxpb.TensorProto_UINT32, onnxpb.TensorProto_UINT64:
		v := tp.GetUint64Data()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		for i, x := range v {
			if size == 4 {
				le.PutUint32(out[4*i:], uint32(x))
			} else {
				le.PutUint64(out[8*i:], x)
			}
		}
	default: // int32_data holds int32, int16, int8, uint16, uint8, bool, float16, bfloat16, float8
		v := tp.GetInt32Data()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		for i, x := range v {
			switch size {
			case 1:
				out[i] = byte(x)
			case 2:
				le.PutUint16(out[2*i:], uint16(x))
			default:
				le.PutUint32(out[4*i:], uint32(x))
			}
		}
	}
	return out, nil
}

// toValue makes an ONNX Runtime value holding a copy of tp's data. The caller
// destroys it.
func toValue(tp *onnxpb.TensorProto) (ortgo.Value, error) {
	dt := onnxpb.TensorProto_DataType(tp.GetDataType())
	dims := tp.GetDims()
	n, err := numElements(dims)
	if err != nil {
		return nil, err
	}
	if dt == onnxpb.TensorProto_STRING {
		return stringValue(tp, dims, n)
	}
	if elemSize(dt) == 0 {
		return nil, fmt.Errorf("element type %s is not supported", dt)
	}
	b, err := tensorBytes(tp, dt, n)
	if err != nil {
		return nil, err
	}
	shape := ortgo.NewShape(dims...)
	switch dt {
	case onnxpb.TensorProto_FLOAT:
		return typedValue[float32](shape, b, n)
	case onnxpb.TensorProto_DOUBLE:
		return typedValue[float64](shape, b, n)
	case onnxpb.TensorProto_INT8:
		return typedValue[int8](shape, b, n)
	case onnxpb.TensorProto_INT16:
		return typedValue[int16](shape, b, n)
	case onnxpb.TensorProto_INT32:
		return typedValue[int32](shape, b, n)
	case onnxpb.TensorProto_INT64:
		return typedValue[int64](shape, b, n)
	case onnxpb.TensorProto_UINT8:
		return typedValue[uint8](shape, b, n)
	case onnxpb.TensorProto_UINT16:
		return typedValue[uint16](shape, b, n)
	case onnxpb.TensorProto_UINT32:
		return typedValue[uint32](shape, b, n)
	case onnxpb.TensorProto_UINT64:
		return typedValue[uint64](shape, b, n)
	case onnxpb.TensorProto_BOOL:
		for i, x := range b {
			if x > 1 {
				return nil, fmt.Errorf("bool element %d has byte value %d", i, x)
			}
		}
		return typedValue[bool](shape, b, n)
	}
	// float16, bfloat16, float8: no Go type; hand over the bytes.
	if len(dims) == 0 {
		return nil, fmt.Errorf("%s scalars are not supported (onnxruntime_go has no rank-0 %s tensor)", dt, dt)
	}
	// onnxruntime_go wants at least one byte even for an empty tensor.
	buf := make([]byte, max(len(b), elemSize(dt)))
	copy(buf, b)
	v, err := ortgo.NewCustomDataTensor(shape, buf, ortgo.TensorElementDataType(dt))
	if err != nil {
		return nil, fmt.Errorf("make %s tensor %v: %w", dt, dims, err)
	}
	return v, nil
}

// typedValue copies little-endian bytes b (n elements of T) into a new Go
// slice (aligned for T) and wraps it as an ONNX Runtime tensor or scalar.
func typedValue[T ortgo.TensorData](shape ortgo.Shape, b []byte, n int64) (ortgo.Value, error) {
	data := make([]T, n)
	if n > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(b)), b)
	}
	if len(shape) == 0 {
		v, err := ortgo.NewScalar(data[0])
		if err != nil {
			return nil, fmt.Errorf("make scalar: %w", err)
		}
		return v, nil
	}
	v, err := ortgo.NewTensor(shape, data)
	if err != nil {
		return nil, fmt.Errorf("make tensor %v: %w", []int64(shape), err)
	}
	return v, nil
}

func stringValue(tp *onnxpb.TensorProto, dims []int64, n int64) (ortgo.Value, error) {
	if len(dims) == 0 {
		return nil, fmt.Errorf("string scalars are not supported")
	}
	sd := tp.GetStringData()
	if int64(len(sd)) != n {
		return nil, fmt.Errorf("string_data has %d values, shape %v needs %d", len(sd), dims, n)
	}
	v, err := ortgo.NewStringTensor(ortgo.NewShape(dims...))
	if err != nil {
		return nil, fmt.Errorf("make string tensor %v: %w", dims, err)
	}
	ss := make([]string, n)
	for i, s := range sd {
		ss[i] = string(s)
	}
	if err := v.SetContents(ss); err != nil {
		_ = v.Destroy()
		return nil, fmt.Errorf("fill string tensor: %w", err)
	}
	return v, nil
}

// fromValue copies an ONNX Runtime value into a named TensorProto.
func fromValue(name string, v ortgo.Value) (*onnxpb.TensorProto, error) {
	switch t := v.(type) {
	case *ortgo.Tensor[float32]:
		return fromSlice(name, onnxpb.TensorProto_FLOAT, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[float64]:
		return fromSlice(name, onnxpb.TensorProto_DOUBLE, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[int8]:
		return fromSlice(name, onnxpb.TensorProto_INT8, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[int16]:
		return fromSlice(name, onnxpb.TensorProto_INT16, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[int32]:
		return fromSlice(name, onnxpb.TensorProto_INT32, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[int64]:
		return fromSlice(name, onnxpb.TensorProto_INT64, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[uint8]:
		return fromSlice(name, onnxpb.TensorProto_UINT8, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[uint16]:
		return fromSlice(name, onnxpb.TensorProto_UINT16, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[uint32]:
		return fromSlice(name, onnxpb.TensorProto_UINT32, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[uint64]:
		return fromSlice(name, onnxpb.TensorProto_UINT64, t.GetShape(), t.GetData()), nil
	case *ortgo.Tensor[bool]:
		return fromSlice(name, onnxpb.TensorProto_BOOL, t.GetShape(), t.GetData()), nil
	case *ortgo.Scalar[float32]:
		return fromSlice(name, onnxpb.TensorProto_FLOAT, nil, []float32{t.GetData()}), nil
	case *ortgo.Scalar[float64]:
		return fromSlice(name, onnxpb.TensorProto_DOUBLE, nil, []float64{t.GetData()}), nil
	case *ortgo.Scalar[int8]:
		return fromSlice(name, onnxpb.TensorProto_INT8, nil, []int8{t.GetData()}), nil
	case *ortgo.Scalar[int16]:
		return fromSlice(name, onnxpb.TensorProto_INT16, nil, []int16{t.GetData()}), nil
	case *ortgo.Scalar[int32]:
		return fromSlice(name, onnxpb.TensorProto_INT32, nil, []int32{t.GetData()}), nil
	case *ortgo.Scalar[int64]:
		return fromSlice(name, onnxpb.TensorProto_INT64, nil, []int64{t.GetData()}), nil
	case *ortgo.Scalar[uint8]:
		return fromSlice(name, onnxpb.TensorProto_UINT8, nil, []uint8{t.GetData()}), nil
	case *ortgo.Scalar[uint16]:
		return fromSlice(name, onnxpb.TensorProto_UINT16, nil, []uint16{t.GetData()}), nil
	case *ortgo.Scalar[uint32]:
		return fromSlice(name, onnxpb.TensorProto_UINT32, nil, []uint32{t.GetData()}), nil
	case *ortgo.Scalar[uint64]:
		return fromSlice(name, onnxpb.TensorProto_UINT64, nil, []uint64{t.GetData()}), nil
	case *ortgo.Scalar[bool]:
		return fromSlice(name, onnxpb.TensorProto_BOOL, nil, []bool{t.GetData()}), nil
	case *ortgo.CustomDataTensor:
		dt := onnxpb.TensorProto_DataType(int32(t.DataType()))
		size := elemSize(dt)
		if size == 0 {
			return nil, fmt.Errorf("output %q: element type %s is not supported", name, dt)
		}
		n, err := numElements(t.GetShape())
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", name, err)
		}
		d := t.GetData()
		if int64(len(d)) < n*int64(size) {
			return nil, fmt.Errorf("output %q: %d bytes for %d %s elements", name, len(d), n, dt)
		}
		raw := make([]byte, n*int64(size))
		copy(raw, d)
		return &onnxpb.TensorProto{Name: &name, DataType: ptr(int32(dt)),
			Dims: append([]int64{}, t.GetShape()...), RawData: raw}, nil
	case *ortgo.StringTensor:
		ss, err := t.GetContents()
		if err != nil {
			return nil, fmt.Errorf("output %q: read strings: %w", name, err)
		}
		sd := make([][]byte, len(ss))
		for i, s := range ss {
			sd[i] = []byte(s)
		}
		return &onnxpb.TensorProto{Name: &name, DataType: ptr(int32(onnxpb.TensorProto_STRING)),
			Dims: append([]int64{}, t.GetShape()...), StringData: sd}, nil
	}
	return nil, fmt.Errorf("output %q: ONNX Runtime value of kind %s is not supported", name, v.GetONNXType())
}

func fromSlice[T any](name string, dt onnxpb.TensorProto_DataType, shape ortgo.Shape, data []T) *onnxpb.TensorProto {
	var raw []byte
	if len(data) > 0 {
		size := int(unsafe.Sizeof(data[0]))
		raw = make([]byte, len(data)*size)
		copy(raw, unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(raw)))
	} else {
		raw = []byte{}
	}
	dims := []int64{}
	if len(shape) > 0 {
		dims = append(dims, shape...)
	}
	return &onnxpb.TensorProto{Name: &name, DataType: ptr(int32(dt)), Dims: dims, RawData: raw}
}

func ptr[T any](v T) *T { return &v }
