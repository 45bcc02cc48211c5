package onnxio

import (
	"encoding/binary"
	"math"
	"os"
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

func TestReadNpy(t *testing.T) {
	hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var buf []byte
	buf = append(buf, "\x93NUMPY\x01\x00"...)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(hdr)))
	buf = append(buf, hdr...)
	for _, v := range []float32{1, 2, 3, 4.5} {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	p := filepath.Join(t.TempDir(), "a.npy")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := ReadNpy(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := x.Bytes()
	if x.DataType != canonical.Float || len(x.Dims) != 2 || math.Float32frombits(binary.LittleEndian.Uint32(b[12:])) != 4.5 {
		t.Fatalf("read %v %v", x.DataType, x.Dims)
	}
	if err := os.WriteFile(p, buf[:len(buf)-4], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNpy(p); err == nil {
		t.Fatal("a truncated .npy was accepted")
	}
}

func TestLoadModelSubgraph(t *testing.T) {
	d, _ := os.Getwd()
	p := filepath.Join(d, "..", "..", "..", "shared", "onnx-v1.22", "backend-tests", "node", "test_if", "model.onnx")
	if _, err := os.Stat(p); err != nil {
		t.Skip("backend tests not available")
	}
	m, err := LoadModel(p)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Graph.Nodes[len(m.Graph.Nodes)-1]
	if n.OpType != "If" || len(n.Subgraphs()) != 2 || n.Subgraphs()[0].Parent != m.Graph {
		t.Fatalf("If subgraphs not linked: %s %d", n.OpType, len(n.Subgraphs()))
	}
}
