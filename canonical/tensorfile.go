package canonical

import (
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// MaxTensorFileSize bounds the size of a TensorProto file that
// ReadTensorFile reads (the protobuf limit: 2 GiB - 1).
const MaxTensorFileSize = MaxProtoSize

// TensorFromProto converts a standalone TensorProto (a test_data_set .pb
// file, a Constant's value, a plugin message) with inline data into a
// Tensor. Like FromProto it takes ownership of tp (raw_data is not copied)
// and keeps every field, so TensorToProto gives the data back. It checks
// names, dims and that the data matches the dims; a tensor without data
// (for a non-empty shape) is an error, and so is external data, which has
// no model folder to be read from here.
func TensorFromProto(tp *onnxpb.TensorProto) (*Tensor, error) {
	if tp == nil {
		return nil, fmt.Errorf("nil TensorProto")
	}
	path := fmt.Sprintf("tensor %q", tp.GetName())
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL || len(tp.GetExternalData()) > 0 {
		return nil, fmt.Errorf("%s: external data cannot be read from a standalone tensor (inline it: save the tensor with its data)", path)
	}
	if tp.Segment != nil {
		return nil, fmt.Errorf("%s: a segment of a tensor cannot be read alone", path)
	}
	c := &converter{m: &Model{}, checkData: true}
	t, err := c.tensor(tp, path)
	if err != nil {
		return nil, err
	}
	if t.DataType == String {
		if _, err := t.Strings(); err != nil {
			return nil, err
		}
		return t, nil
	}
	if _, err := t.Bytes(); err != nil {
		return nil, err
	}
	return t, nil
}

// TensorToProto converts t into a standalone TensorProto: name, dims,
// data_type and the data as raw_data (a copy), or string_data for STRING
// tensors. External data is read and inlined.
func TensorToProto(t *Tensor) (*onnxpb.TensorProto, error) {
	tp := &onnxpb.TensorProto{Dims: append([]int64{}, t.Dims...), DataType: proto.Int32(int32(t.DataType))}
	if t.Name != "" {
		tp.Name = proto.String(t.Name)
	}
	if t.DocString != "" {
		tp.DocString = proto.String(t.DocString)
	}
	if t.DataType == String {
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

// ReadTensorFile reads a TensorProto .pb file (the input_N.pb and
// output_N.pb files of ONNX test data sets).
func ReadTensorFile(path string) (*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading tensor: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading tensor %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("reading tensor %s: not a regular file", path)
	}
	if st.Size() > MaxTensorFileSize {
		return nil, fmt.Errorf("reading tensor %s: %d bytes is over the %d-byte protobuf limit", path, st.Size(), int64(MaxTensorFileSize))
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxTensorFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading tensor %s: %w", path, err)
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(b, tp); err != nil {
		return nil, fmt.Errorf("tensor %s: not a TensorProto: %w", path, err)
	}
	t, err := TensorFromProto(tp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// WriteTensorFile writes t as a TensorProto .pb file, atomically (see
// WriteFileAtomic).
func WriteTensorFile(path string, t *Tensor) error {
	tp, err := TensorToProto(t)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	b, err := proto.Marshal(tp)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
