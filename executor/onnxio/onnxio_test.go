package onnxio

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

func TestTensorFromTypedFields(t *testing.T) {
	tp := &onnxpb.TensorProto{Dims: []int64{3}, DataType: proto.Int32(int32(canonical.Float)), FloatData: []float32{1, -2.5, 3}}
	x, err := TensorFromProto(tp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(b[4:])); got != -2.5 {
		t.Fatalf("element 1 = %v, want -2.5", got)
	}
	tp.FloatData = tp.FloatData[:2]
	if _, err := TensorFromProto(tp); err == nil {
		t.Fatal("a tensor with too little data was accepted")
	}
}

func TestTensorFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.pb")
	in := canonical.NewTensor("x", canonical.Int64, []int64{2}, []byte{7, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	if err := WriteTensorFile(p, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadTensorFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := out.Bytes()
	if out.Name != "x" || int64(binary.LittleEndian.Uint64(b[8:])) != -1 || int64(binary.LittleEndian.Uint64(b)) != 7 {
		t.Fatalf("round trip gave %q %v", out.Name, b)
	}
}
