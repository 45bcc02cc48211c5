package tflite

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

const (
	sharedDir  = "../../../shared/tflite-micro"
	fixtureDir = "../../fixtures/tflite"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// runner runs an .onnx file (ONNX Runtime through runtimes/ort, which
// needs cgo; see ort_cgo_test.go and ort_nocgo_test.go).
type runner interface {
	Run(modelPath string, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error)
}

func runModel(t testing.TB, rt runner, mp *onnxpb.ModelProto, inputs []*onnxpb.TensorProto) []*onnxpb.TensorProto {
	t.Helper()
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	path := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := rt.Run(path, inputs)
	if err != nil {
		t.Fatalf("onnxruntime: %v", err)
	}
	return out
}

func tensorProto(name string, dt onnxpb.TensorProto_DataType, dims []int64, raw []byte) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(dt)), Dims: dims, RawData: raw}
}

func floatTensor(name string, dims []int64, v []float32) *onnxpb.TensorProto {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return tensorProto(name, onnxpb.TensorProto_FLOAT, dims, b)
}

func int16Tensor(name string, dims []int64, v []int64) *onnxpb.TensorProto {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(x)))
	}
	return tensorProto(name, onnxpb.TensorProto_INT16, dims, b)
}

func tensorFloats(t testing.TB, tp *onnxpb.TensorProto) []float32 {
	t.Helper()
	raw := tp.GetRawData()
	switch onnxpb.TensorProto_DataType(tp.GetDataType()) {
	case onnxpb.TensorProto_FLOAT:
	case onnxpb.TensorProto_INT32:
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = float32(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		}
		return out
	case onnxpb.TensorProto_INT64:
		out := make([]float32, len(raw)/8)
		for i := range out {
			out[i] = float32(int64(binary.LittleEndian.Uint64(raw[8*i:])))
		}
		return out
	case onnxpb.TensorProto_BOOL:
		out := make([]float32, len(raw))
		for i, b := range raw {
			out[i] = float32(b)
		}
		return out
	default:
		t.Fatalf("output %s is %v, want FLOAT, INT32, INT64 or BOOL", tp.GetName(), onnxpb.TensorProto_DataType(tp.GetDataType()))
	}
	if len(tp.GetRawData()) == 0 && len(tp.GetFloatData()) > 0 {
		return tp.GetFloatData()
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func tensorInt16s(t testing.TB, tp *onnxpb.TensorProto) []int64 {
	t.Helper()
	if onnxpb.TensorProto_DataType(tp.GetDataType()) != onnxpb.TensorProto_INT16 {
		t.Fatalf("output %s is %v, want INT16", tp.GetName(), onnxpb.TensorProto_DataType(tp.GetDataType()))
	}
	raw := tp.GetRawData()
	out := make([]int64, len(raw)/2)
	for i := range out {
		out[i] = int64(int16(binary.LittleEndian.Uint16(raw[2*i:])))
	}
	return out
}

func readCSVInts(t testing.TB, path string) []int64 {
	t.Helper()
	var out []int64
	for _, f := range strings.FieldsFunc(string(readFile(t, path)), func(r rune) bool { return r == ',' || r == '\n' || r == '\r' || r == ' ' }) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

func opCounts(mp *onnxpb.ModelProto) map[string]int {
	m := map[string]int{}
	for _, n := range mp.GetGraph().GetNode() {
		m[n.GetOpType()]++
	}
	return m
}

func convert(t testing.TB, path string, opts Options) *onnxpb.ModelProto {
	t.Helper()
	mp, err := importProto(readFile(t, path), opts)
	if err != nil {
		t.Fatalf("Import(%s): %v", path, err)
	}
	return mp
}

func inputDims(mp *onnxpb.ModelProto, i int) []int64 {
	var dims []int64
	for _, d := range mp.GetGraph().GetInput()[i].GetType().GetTensorType().GetShape().GetDim() {
		dims = append(dims, d.GetDimValue())
	}
	return dims
}

// importProto is Import with the model as a ModelProto, for tests that
// read its encoding.
func importProto(data []byte, opts Options) (*onnxpb.ModelProto, error) {
	m, err := Import(data, opts)
	if err != nil {
		return nil, err
	}
	return m.ToProto()
}
