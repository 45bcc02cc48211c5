package main

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

func floatType(dims ...int64) *onnxpb.TypeProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(1), Shape: shape}}}
}

func vi(name string) *onnxpb.ValueInfoProto {
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: floatType(2)}
}

func node(op, name string, in, out []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: in, Output: out, Attribute: attrs}
}

// validModel is X -> Relu -> Y.
func validModel() *onnxpb.ModelProto {
	return &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}},
		Graph: &onnxpb.GraphProto{
			Name:   proto.String("g"),
			Input:  []*onnxpb.ValueInfoProto{vi("X")},
			Output: []*onnxpb.ValueInfoProto{vi("Y")},
			Node:   []*onnxpb.NodeProto{node("Relu", "relu", []string{"X"}, []string{"Y"})},
		},
	}
}

func marshal(t *testing.T, m *onnxpb.ModelProto) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// check runs `onnxconv check path` and returns the exit code and all output.
func check(t *testing.T, path string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run([]string{"check", path}, &out, &errb)
	return code, out.String() + errb.String()
}

func expect(t *testing.T, path string, codes []int, want ...string) {
	t.Helper()
	code, msg := check(t, path)
	ok := false
	for _, c := range codes {
		ok = ok || c == code
	}
	if !ok {
		t.Fatalf("exit code %d, want one of %v; output:\n%s", code, codes, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("output does not mention %q:\n%s", w, msg)
		}
	}
	if !strings.Contains(msg, path) {
		t.Errorf("output does not name the file %s:\n%s", path, msg)
	}
}

func TestCheckValid(t *testing.T) {
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, validModel()))
	expect(t, p, []int{0}, "valid")
}

func TestCheckTruncated(t *testing.T) {
	mp := validModel()
	mp.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("W"), DataType: proto.Int32(1), Dims: []int64{4}, RawData: make([]byte, 16)}}
	data := marshal(t, mp)
	dir := t.TempDir()
	for _, cut := range []int{len(data) - 1, len(data) - 5, len(data) / 2, 3} {
		p := writeFile(t, dir, "m.onnx", data[:cut])
		expect(t, p, []int{2}, "truncated")
	}
}

func TestCheckRandomBytes(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	for i := 0; i < 20; i++ {
		b := make([]byte, 1+r.Intn(4096))
		r.Read(b)
		p := writeFile(t, dir, "m.onnx", b)
		code, msg := check(t, p)
		if code != 1 && code != 2 {
			t.Fatalf("random bytes: exit code %d, want 1 or 2:\n%s", code, msg)
		}
		if !strings.Contains(msg, p) {
			t.Fatalf("random bytes: message does not name the file:\n%s", msg)
		}
	}
}

func TestCheckEmptyFile(t *testing.T) {
	p := writeFile(t, t.TempDir(), "m.onnx", nil)
	expect(t, p, []int{2}, "empty")
}

func TestCheckCycle(t *testing.T) {
	mp := validModel()
	mp.Graph.Node = []*onnxpb.NodeProto{
		node("Add", "a", []string{"X", "C"}, []string{"B"}),
		node("Relu", "b", []string{"B"}, []string{"C"}),
		node("Identity", "c", []string{"C"}, []string{"Y"}),
	}
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{1}, "cycle")
}

func TestCheckUndefinedInput(t *testing.T) {
	mp := validModel()
	mp.Graph.Node[0].Input = []string{"nowhere"}
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{1}, `"nowhere" is not defined`, `"relu" (Relu)`, "graph.node[0].input[0]", "is not defined")
}

func TestCheckUndefinedOutput(t *testing.T) {
	mp := validModel()
	mp.Graph.Output[0].Name = proto.String("Z")
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{1}, `graph output "Z" is not defined`)
}

func TestCheckLyingLength(t *testing.T) {
	data := marshal(t, validModel())
	// The graph field (7) claims far more bytes than the file holds.
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 8)
	b = protowire.AppendTag(b, 7, protowire.BytesType)
	b = protowire.AppendVarint(b, 1<<40)
	b = append(b, data...)
	p := writeFile(t, t.TempDir(), "m.onnx", b)
	expect(t, p, []int{2}, "malformed or truncated")

	// A tensor's raw_data length claims more than its message holds.
	mp := validModel()
	mp.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("W"), DataType: proto.Int32(1), Dims: []int64{4}, RawData: make([]byte, 16)}}
	data = marshal(t, mp)
	i := bytes.Index(data, append([]byte{0x4a, 16}, make([]byte, 16)...)) // raw_data tag 9, length 16
	if i < 0 {
		t.Fatal("raw_data not found in the encoding")
	}
	data[i+1] = 100
	p = writeFile(t, t.TempDir(), "m.onnx", data)
	expect(t, p, []int{2}, "graph.initializer[0]")
}

func TestCheckRawDataSize(t *testing.T) {
	mp := validModel()
	mp.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("W"), DataType: proto.Int32(1), Dims: []int64{5}, RawData: make([]byte, 16)}}
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{2}, `graph.initializer[0] "W".raw_data`, "holds 16 bytes", "need 20")
}

func TestCheckDimsOverflow(t *testing.T) {
	mp := validModel()
	mp.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("W"), DataType: proto.Int32(1), Dims: []int64{1 << 40, 1 << 40}, RawData: make([]byte, 16)}}
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{2}, "overflows")

	mp.Graph.Initializer[0].Dims = []int64{-4}
	p = writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{2}, "negative")

	// Overflow hidden in a Constant node's tensor attribute.
	mp = validModel()
	mp.Graph.Node = append([]*onnxpb.NodeProto{node("Constant", "k", nil, []string{"K"}, &onnxpb.AttributeProto{
		Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(),
		T: &onnxpb.TensorProto{DataType: proto.Int32(1), Dims: []int64{1 << 62, 4}, RawData: []byte{}},
	})}, mp.Graph.Node...)
	p = writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{2}, `graph.node[0](Constant "k").attribute "value".t.dims`, "overflows")
}

func externalModel(loc string, offset, length string) *onnxpb.ModelProto {
	mp := validModel()
	kv := []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(loc)}}
	if offset != "" {
		kv = append(kv, &onnxpb.StringStringEntryProto{Key: proto.String("offset"), Value: proto.String(offset)})
	}
	if length != "" {
		kv = append(kv, &onnxpb.StringStringEntryProto{Key: proto.String("length"), Value: proto.String(length)})
	}
	mp.Graph.Initializer = []*onnxpb.TensorProto{{
		Name: proto.String("W"), DataType: proto.Int32(1), Dims: []int64{4},
		DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(), ExternalData: kv,
	}}
	return mp
}

func TestCheckExternalDotDot(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "x", make([]byte, 16))
	p := writeFile(t, dir, "m.onnx", marshal(t, externalModel("../x", "", "")))
	expect(t, p, []int{2}, `".."`, `graph.initializer[0] "W".external_data`)
	p = writeFile(t, dir, "m.onnx", marshal(t, externalModel("sub/../../x", "", "")))
	expect(t, p, []int{2}, `".."`)
}

func TestCheckExternalAbsolute(t *testing.T) {
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, externalModel("/etc/passwd", "", "16")))
	expect(t, p, []int{2}, "absolute path")
}

func TestCheckExternalSymlinkOutside(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := writeFile(t, root, "secret", make([]byte, 16))
	if err := os.Symlink(secret, filepath.Join(dir, "w.bin")); err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, dir, "m.onnx", marshal(t, externalModel("w.bin", "", "")))
	expect(t, p, []int{2}, "outside the model's folder")
}

func TestCheckExternalPastEOF(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "w.bin", make([]byte, 16))
	p := writeFile(t, dir, "m.onnx", marshal(t, externalModel("w.bin", "8", "16")))
	expect(t, p, []int{2}, "past the end")
	p = writeFile(t, dir, "m.onnx", marshal(t, externalModel("w.bin", "4096", "")))
	expect(t, p, []int{2}, "past the end")
	p = writeFile(t, dir, "m.onnx", marshal(t, externalModel("w.bin", "0", "16")))
	expect(t, p, []int{0}, "valid")
}

func TestCheckDeepSubgraphs(t *testing.T) {
	body := &onnxpb.GraphProto{Name: proto.String("leaf"), Output: []*onnxpb.ValueInfoProto{vi("X")}}
	for i := 0; i < 200; i++ {
		body = &onnxpb.GraphProto{
			Name:   proto.String("level"),
			Node:   []*onnxpb.NodeProto{node("If", "if", []string{"c"}, []string{"o"}, &onnxpb.AttributeProto{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: body})},
			Output: []*onnxpb.ValueInfoProto{vi("o")},
		}
	}
	mp := validModel()
	mp.Graph.Node = append(mp.Graph.Node, body.Node...)
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{2}, "nested deeper than 64")
}

func TestCheckDeepTypes(t *testing.T) {
	typ := floatType(2)
	for i := 0; i < 200; i++ {
		typ = &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: typ}}}
	}
	mp := validModel()
	mp.Graph.Input[0].Type = typ
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{2}, "graph.input[0].type", "deeper than 64")
}

func TestCheckInvalidUTF8(t *testing.T) {
	mp := validModel()
	mp.Graph.Node[0].Name = proto.String("bad\xff\xfename")
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{2}, "graph.node[0]", "not valid UTF-8")

	mp = validModel()
	mp.Graph.Input[0].Name = proto.String("\xc3")
	mp.Graph.Node[0].Input = []string{"\xc3"}
	p = writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{2}, "graph.input[0]", "not valid UTF-8")
}

func TestCheckDuplicateNames(t *testing.T) {
	mp := validModel()
	mp.Graph.Node = []*onnxpb.NodeProto{
		node("Relu", "r1", []string{"X"}, []string{"Y"}),
		node("Relu", "r2", []string{"X"}, []string{"Y"}),
	}
	mp.Graph.Input = append(mp.Graph.Input, vi("X"))
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	code, msg := check(t, p)
	if code != 1 {
		t.Fatalf("exit code %d, want 1:\n%s", code, msg)
	}
	if n := strings.Count(msg, "defined twice"); n != 2 {
		t.Fatalf("want 2 duplicate problems (X and Y), got %d:\n%s", n, msg)
	}
	for _, w := range []string{`value "X" is defined twice`, `value "Y" is defined twice`, `"r2" (Relu) #1`} {
		if !strings.Contains(msg, w) {
			t.Errorf("output does not mention %q:\n%s", w, msg)
		}
	}
}

func TestCheckMissingOpsetImport(t *testing.T) {
	mp := validModel()
	mp.OpsetImport = nil
	mp.IrVersion = nil
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{1}, "opset_import is missing", "ir_version is missing", "fix:")
}

func TestCheckEveryProblemListed(t *testing.T) {
	mp := validModel()
	mp.OpsetImport = nil
	mp.Graph.Node = append(mp.Graph.Node,
		node("", "noop", []string{"X"}, []string{"Z"}),
		node("Relu", "u", []string{"missing"}, []string{"W"}))
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{1}, "opset_import is missing", "has no op_type", `"missing" is not defined`, "3 problem(s)")
}

func TestCheckUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"check"}, &out, &errb); code != 2 {
		t.Fatalf("check without a model: exit code %d, want 2", code)
	}
	if code := run([]string{"check", filepath.Join(t.TempDir(), "none.onnx")}, &out, &errb); code != 2 {
		t.Fatalf("check of a missing file: exit code %d, want 2", code)
	}
}

func TestCheckDatalessHugeInitializer(t *testing.T) {
	mp := validModel()
	mp.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(1), Dims: []int64{1 << 20, 1 << 20, 1 << 20}}}
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{1}, `graph.initializer[0] "w": dims [1048576 1048576 1048576] of float claim 4.0 EiB of data but the tensor holds none`)
}

func TestCheckOpsetBeyondNewest(t *testing.T) {
	mp := validModel()
	mp.OpsetImport[0].Version = proto.Int64(999)
	p := writeFile(t, t.TempDir(), "m.onnx", marshal(t, mp))
	expect(t, p, []int{1}, "opset_import[0]: ai.onnx version 999 is beyond the newest known opset 28")
}
