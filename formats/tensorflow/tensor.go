package tensorflow

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/internal/bytesize"
)

// maxElements bounds the elements of one constant tensor.
const maxElements = 1 << 31

// DataType maps a TF DataType name to the ONNX element type.
func DataType(tf string) (canonical.DataType, bool) {
	switch strings.TrimPrefix(tf, "DT_") {
	case "FLOAT":
		return canonical.Float, true
	case "HALF":
		return canonical.Float16, true
	case "DOUBLE":
		return canonical.Double, true
	case "INT32":
		return canonical.Int32, true
	case "INT64":
		return canonical.Int64, true
	case "INT8":
		return canonical.Int8, true
	case "UINT8":
		return canonical.Uint8, true
	case "INT16":
		return canonical.Int16, true
	case "UINT16":
		return canonical.Uint16, true
	case "BOOL":
		return canonical.Bool, true
	case "STRING":
		return canonical.String, true
	case "BFLOAT16":
		return canonical.BFloat16, true
	}
	return canonical.Undefined, false
}

// TensorFromProto converts a TensorProto (inline Const value or bundle
// entry metadata) to a canonical tensor.
func TensorFromProto(file, name string, tp *tfpb.TensorProto) (*canonical.Tensor, error) {
	dt, ok := DataType(tp.GetDtype().String())
	if !ok || dt == canonical.String {
		return nil, Unsupported(file, name, "", fmt.Sprintf("constant of type %s", tp.GetDtype()))
	}
	dims, n, err := shapeOf(file, name, tp.GetTensorShape())
	if err != nil {
		return nil, err
	}
	es := canonical.ElemBits(dt) / 8
	if c := tp.GetTensorContent(); len(c) > 0 {
		if uint64(len(c)) != n*uint64(es) {
			return nil, &FormatError{File: file, What: fmt.Sprintf("node %q: constant of shape %v holds %d bytes, want %d", name, dims, len(c), n*uint64(es))}
		}
		return canonical.NewTensor(name, dt, dims, append([]byte(nil), c...)), nil
	}
	// Typed values; fewer than n repeat the last one (TF's rule).
	var put func(dst []byte, i int)
	var count int
	switch dt {
	case canonical.Float:
		v := tp.GetFloatVal()
		count, put = len(v), func(d []byte, i int) { binary.LittleEndian.PutUint32(d, math.Float32bits(v[i])) }
	case canonical.Double:
		v := tp.GetDoubleVal()
		count, put = len(v), func(d []byte, i int) { binary.LittleEndian.PutUint64(d, math.Float64bits(v[i])) }
	case canonical.Int32, canonical.Int16, canonical.Int8, canonical.Uint8, canonical.Uint16:
		v := tp.GetIntVal()
		count, put = len(v), func(d []byte, i int) {
			x := uint32(v[i])
			for k := 0; k < es; k++ {
				d[k] = byte(x >> (8 * k))
			}
		}
	case canonical.Int64:
		v := tp.GetInt64Val()
		count, put = len(v), func(d []byte, i int) { binary.LittleEndian.PutUint64(d, uint64(v[i])) }
	case canonical.Bool:
		v := tp.GetBoolVal()
		count, put = len(v), func(d []byte, i int) {
			if v[i] {
				d[0] = 1
			}
		}
	case canonical.Float16, canonical.BFloat16:
		v := tp.GetHalfVal()
		count, put = len(v), func(d []byte, i int) { binary.LittleEndian.PutUint16(d, uint16(v[i])) }
	default:
		return nil, Unsupported(file, name, "", fmt.Sprintf("constant of type %s", tp.GetDtype()))
	}
	if uint64(count) < n {
		if err := checkFill(file, name, dims, count, n*uint64(es)); err != nil {
			return nil, err
		}
	}
	raw := make([]byte, n*uint64(es))
	if count > 0 {
		for i := 0; i < int(n); i++ {
			put(raw[i*es:], min(i, count-1))
		}
	}
	return canonical.NewTensor(name, dt, dims, raw), nil
}

func shapeOf(file, name string, sp *tfpb.TensorShapeProto) ([]int64, uint64, error) {
	if sp.GetUnknownRank() {
		return nil, 0, &FormatError{File: file, What: fmt.Sprintf("node %q: constant of unknown rank", name)}
	}
	dims := make([]int64, len(sp.GetDim()))
	n := uint64(1)
	for i, d := range sp.GetDim() {
		if d.GetSize() < 0 || d.GetSize() > maxElements || (d.GetSize() > 0 && n > maxElements/uint64(d.GetSize())) {
			return nil, 0, &FormatError{File: file, What: fmt.Sprintf("node %q: constant dims %v", name, sp.GetDim())}
		}
		dims[i] = d.GetSize()
		n *= uint64(d.GetSize())
	}
	return dims, n, nil
}

// maxFillBytes bounds a constant that TF's rule fills from fewer values
// than its shape holds (the last value repeated): such a constant costs
// its file a few bytes whatever its size, so its size is checked before
// it is allocated.
const maxFillBytes = 256 << 20

// checkFill refuses a constant of dims filled to bytes from count values.
func checkFill(file, node string, dims []int64, count int, bytes uint64) error {
	if bytes <= maxFillBytes {
		return nil
	}
	return &FormatError{File: file, What: fmt.Sprintf(
		"node %q: constant of shape %v would be filled to %s from %d value(s), more than the %s onnxconv fills from a repeated value (store the values, or compute the constant with tf.fill)",
		node, dims, bytesize.Format(int64(min(bytes, 1<<62))), count, bytesize.Format(maxFillBytes))}
}
