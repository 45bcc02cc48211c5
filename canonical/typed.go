package canonical

import (
	"encoding/binary"
	"math"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// Typed tensor constructors: the one way to make a tensor from Go values.

// Float32Tensor returns a FLOAT tensor of v.
func Float32Tensor(name string, dims []int64, v []float32) *Tensor {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return NewTensor(name, Float, dims, raw)
}

// Float64Tensor returns a DOUBLE tensor of v.
func Float64Tensor(name string, dims []int64, v []float64) *Tensor {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
	}
	return NewTensor(name, Double, dims, raw)
}

// Int64Tensor returns an INT64 tensor of v.
func Int64Tensor(name string, dims []int64, v []int64) *Tensor {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return NewTensor(name, Int64, dims, raw)
}

// Int32Tensor returns an INT32 tensor of v.
func Int32Tensor(name string, dims []int64, v []int32) *Tensor {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
	}
	return NewTensor(name, Int32, dims, raw)
}

// NumberTensor returns a tensor of the numeric type dt holding vals:
// floating types are rounded to nearest (float16 and bfloat16 ties to
// even), integers truncated toward zero, bool is v != 0. Undefined and
// types it cannot encode mean FLOAT.
func NumberTensor(name string, dt DataType, dims []int64, vals []float64) *Tensor {
	raw := []byte{}
	le := binary.LittleEndian
	switch dt {
	case Double, Float16, BFloat16, Int64, Uint64, Int32, Uint32, Int16, Uint16, Int8, Uint8, Bool, Float:
	default:
		dt = Float
	}
	for _, v := range vals {
		switch dt {
		case Double:
			raw = le.AppendUint64(raw, math.Float64bits(v))
		case Float16:
			raw = le.AppendUint16(raw, Float32ToFloat16(float32(v)))
		case BFloat16:
			raw = le.AppendUint16(raw, Float32ToBFloat16(float32(v)))
		case Int64:
			raw = le.AppendUint64(raw, uint64(int64(v)))
		case Uint64:
			raw = le.AppendUint64(raw, uint64(v))
		case Int32:
			raw = le.AppendUint32(raw, uint32(int32(v)))
		case Uint32:
			raw = le.AppendUint32(raw, uint32(v))
		case Int16:
			raw = le.AppendUint16(raw, uint16(int16(v)))
		case Uint16:
			raw = le.AppendUint16(raw, uint16(v))
		case Int8:
			raw = append(raw, byte(int8(v)))
		case Uint8:
			raw = append(raw, byte(v))
		case Bool:
			b := byte(0)
			if v != 0 {
				b = 1
			}
			raw = append(raw, b)
		default:
			raw = le.AppendUint32(raw, math.Float32bits(float32(v)))
		}
	}
	return NewTensor(name, dt, dims, raw)
}

// Float32s returns the elements of a numeric tensor as float32 (see
// Float64s; values are rounded to float32).
func (t *Tensor) Float32s() ([]float32, error) {
	if t.DataType == Float {
		raw, n, err := t.numericData()
		if err != nil {
			return nil, err
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out, nil
	}
	f, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(f))
	for i, v := range f {
		out[i] = float32(v)
	}
	return out, nil
}

// TensorTypeDims returns the TypeProto of a tensor of dt with the given
// dims: a known size, a symbolic name (Param) or unknown (neither).
func TensorTypeDims(dt DataType, dims []Dim) *onnxpb.TypeProto {
	shape := &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{}}
	for _, d := range dims {
		pd := &onnxpb.TensorShapeProto_Dimension{}
		switch {
		case d.Known:
			pd.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d.Value}
		case d.Param != "":
			pd.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d.Param}
		}
		shape.Dim = append(shape.Dim, pd)
	}
	et := int32(dt)
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: &et, Shape: shape},
	}}
}

// TensorTypeNoShape returns the TypeProto of a tensor of dt whose rank is
// unknown.
func TensorTypeNoShape(dt DataType) *onnxpb.TypeProto {
	et := int32(dt)
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: &et}}}
}

// SequenceType returns the TypeProto of a sequence of elem.
func SequenceType(elem *onnxpb.TypeProto) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: elem}}}
}
