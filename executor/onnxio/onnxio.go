// Package onnxio reads and writes the files the executor and the backend
// test runner exchange: models (.onnx), tensors (TensorProto .pb files),
// sequences and optionals (SequenceProto / OptionalProto .pb files) and
// NumPy .npy arrays.
// Models are read by canonical.Load; .npy files by verify/tensorio.
package onnxio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// LoadModel reads an .onnx file with canonical.Load (memory-mapped: call
// Model.Close when done).
func LoadModel(path string) (*canonical.Model, error) {
	return canonical.Load(path, canonical.LoadOptions{})
}

// TensorFromProto converts a TensorProto with inline data into a Tensor
// holding packed little-endian bytes.
func TensorFromProto(tp *onnxpb.TensorProto) (*canonical.Tensor, error) {
	dt := canonical.DataType(tp.GetDataType())
	dims := append([]int64{}, tp.GetDims()...)
	if len(tp.GetExternalData()) > 0 {
		return nil, fmt.Errorf("tensor %q: external data is not supported by this loader", tp.GetName())
	}
	if dt == canonical.String {
		return canonical.NewStringTensor(tp.GetName(), dims, tp.GetStringData()), nil
	}
	if canonical.ElemBits(dt) == 0 {
		return nil, fmt.Errorf("tensor %q: unsupported data type %v", tp.GetName(), dt)
	}
	n, err := canonical.NumElements(dims)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", tp.GetName(), err)
	}
	want := (n*int64(canonical.ElemBits(dt)) + 7) / 8
	if tp.RawData != nil {
		if int64(len(tp.RawData)) != want {
			return nil, fmt.Errorf("tensor %q: raw_data holds %d bytes, dims %v of %v need %d", tp.GetName(), len(tp.RawData), dims, dt, want)
		}
		return canonical.NewTensor(tp.GetName(), dt, dims, tp.RawData), nil
	}
	out := make([]byte, 0, want)
	switch dt {
	case canonical.Float, canonical.Complex64:
		for _, f := range tp.GetFloatData() {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
		}
	case canonical.Double, canonical.Complex128:
		for _, f := range tp.GetDoubleData() {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(f))
		}
	case canonical.Int64:
		for _, v := range tp.GetInt64Data() {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	case canonical.Uint64:
		for _, v := range tp.GetUint64Data() {
			out = binary.LittleEndian.AppendUint64(out, v)
		}
	case canonical.Uint32:
		for _, v := range tp.GetUint64Data() {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	case canonical.Int32:
		for _, v := range tp.GetInt32Data() {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	case canonical.Int16, canonical.Uint16, canonical.Float16, canonical.BFloat16:
		for _, v := range tp.GetInt32Data() {
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		}
	default: // 8, 4 and 2 bit types: one (packed) byte per int32 entry
		for _, v := range tp.GetInt32Data() {
			out = append(out, byte(v))
		}
	}
	if int64(len(out)) != want {
		return nil, fmt.Errorf("tensor %q: data holds %d bytes, dims %v of %v need %d", tp.GetName(), len(out), dims, dt, want)
	}
	return canonical.NewTensor(tp.GetName(), dt, dims, out), nil
}

// TensorToProto converts t into a TensorProto with raw_data (string_data
// for STRING tensors).
func TensorToProto(t *canonical.Tensor) (*onnxpb.TensorProto, error) {
	tp := &onnxpb.TensorProto{Dims: append([]int64{}, t.Dims...), DataType: proto.Int32(int32(t.DataType))}
	if t.Name != "" {
		tp.Name = proto.String(t.Name)
	}
	if t.DataType == canonical.String {
		s, err := t.Strings()
		if err != nil {
			return nil, err
		}
		tp.StringData = s
		return tp, nil
	}
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	tp.RawData = append([]byte{}, b...)
	return tp, nil
}

// ReadTensorFile reads a TensorProto .pb file.
func ReadTensorFile(path string) (*canonical.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading tensor: %w", err)
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(b, tp); err != nil {
		return nil, fmt.Errorf("tensor %s: decoding protobuf: %w", path, err)
	}
	t, err := TensorFromProto(tp)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", path, err)
	}
	return t, nil
}

// WriteTensorFile writes t as a TensorProto .pb file atomically.
func WriteTensorFile(path string, t *canonical.Tensor) error {
	tp, err := TensorToProto(t)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	b, err := proto.Marshal(tp)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return WriteFileAtomic(path, b)
}

// WriteFileAtomic writes data to a temporary file beside path and renames
// it onto path (canonical.WriteFileAtomic).
func WriteFileAtomic(path string, data []byte) error {
	return canonical.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
