package canonical

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

func withUnknown[M proto.Message](m M, num protowire.Number) M {
	var b []byte
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendString(b, "unknown payload")
	m.ProtoReflect().SetUnknown(b)
	return m
}

func ftype(dims ...int64) *onnxpb.TypeProto {
	return TensorType(Float, dims)
}

func valueInfo(name string, tp *onnxpb.TypeProto) *onnxpb.ValueInfoProto {
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: tp}
}

// oddModel exercises everything FromProto/ToProto must keep: unknown fields
// at every level, presence of empty optional fields, duplicated
// declarations, initializers listed as inputs, omitted optional inputs and
// outputs, undefined names, subgraphs using outer values, functions,
// sparse initializers, external data references and training info.
func oddModel() *onnxpb.ModelProto {
	sub := withUnknown(&onnxpb.GraphProto{
		Name:      proto.String("then"),
		Node:      []*onnxpb.NodeProto{{OpType: proto.String("Add"), Input: []string{"X", "T"}, Output: []string{"S"}}},
		Output:    []*onnxpb.ValueInfoProto{valueInfo("S", ftype(2))},
		ValueInfo: []*onnxpb.ValueInfoProto{valueInfo("T", nil)},
	}, 901)
	return withUnknown(&onnxpb.ModelProto{
		IrVersion:       proto.Int64(9),
		ProducerName:    proto.String(""),
		ProducerVersion: proto.String("1"),
		DocString:       proto.String(""),
		OpsetImport: []*onnxpb.OperatorSetIdProto{
			withUnknown(&onnxpb.OperatorSetIdProto{Domain: proto.String(""), Version: proto.Int64(18)}, 902),
			{Domain: proto.String("local"), Version: proto.Int64(1)},
		},
		MetadataProps: []*onnxpb.StringStringEntryProto{{Key: proto.String("k"), Value: proto.String("")}},
		Graph: withUnknown(&onnxpb.GraphProto{
			Name: proto.String("main"),
			Input: []*onnxpb.ValueInfoProto{
				withUnknown(valueInfo("X", ftype(2)), 903),
				valueInfo("W", ftype(2)),
				valueInfo("X", ftype(3)), // a second definition of X
			},
			Initializer: []*onnxpb.TensorProto{
				withUnknown(&onnxpb.TensorProto{Name: proto.String("W"), DataType: proto.Int32(1), Dims: []int64{2}, RawData: make([]byte, 8)}, 904),
				{Name: proto.String("T"), DataType: proto.Int32(1), Dims: []int64{2}, FloatData: []float32{1, 2}, DocString: proto.String("")},
				{Name: proto.String("E"), DataType: proto.Int32(1), Dims: []int64{0}, RawData: []byte{}},
				{Name: proto.String("Ext"), DataType: proto.Int32(1), Dims: []int64{2}, DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
					ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("w.bin")}}},
				{Name: proto.String("Str"), DataType: proto.Int32(8), Dims: []int64{2}, StringData: [][]byte{[]byte("a"), {}}},
			},
			SparseInitializer: []*onnxpb.SparseTensorProto{{Values: &onnxpb.TensorProto{Name: proto.String("SP"), DataType: proto.Int32(1), Dims: []int64{1}, FloatData: []float32{1}}, Dims: []int64{4}}},
			Node: []*onnxpb.NodeProto{
				withUnknown(&onnxpb.NodeProto{OpType: proto.String("Foo"), Domain: proto.String(""), Name: proto.String(""), Input: []string{"X", "", "W", "undefined_name", "SP"}, Output: []string{"", "A"},
					Attribute: []*onnxpb.AttributeProto{
						withUnknown(&onnxpb.AttributeProto{Name: proto.String("f"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(0)}, 905),
						{Name: proto.String("s"), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte{}},
						{Name: proto.String("i"), I: proto.Int64(0)},
						{Name: proto.String("t"), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: &onnxpb.TensorProto{DataType: proto.Int32(7), Int64Data: []int64{1, 2}, Dims: []int64{2}}},
						{Name: proto.String("tp"), Type: onnxpb.AttributeProto_TYPE_PROTO.Enum(), Tp: ftype(1)},
					},
					DocString: proto.String("")}, 906),
				{OpType: proto.String("If"), Input: []string{"A"}, Output: []string{"Y"},
					Attribute: []*onnxpb.AttributeProto{{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: sub},
						{Name: proto.String("gs"), Type: onnxpb.AttributeProto_GRAPHS.Enum(), Graphs: []*onnxpb.GraphProto{{Name: proto.String("")}}}}},
				{OpType: proto.String("Fn"), Domain: proto.String("local"), Input: []string{"Y"}, Output: []string{"Y"}}, // Y defined twice
			},
			Output: []*onnxpb.ValueInfoProto{
				valueInfo("Y", ftype(2)),
				valueInfo("Y", ftype(5)),
				valueInfo("nothing", nil),
				valueInfo("W", nil),
			},
			ValueInfo: []*onnxpb.ValueInfoProto{
				valueInfo("A", ftype(2)),
				valueInfo("A", nil),
				valueInfo("ghost", ftype(1)),
				{Name: proto.String("W"), DocString: proto.String("")},
			},
			MetadataProps: []*onnxpb.StringStringEntryProto{{Key: proto.String("g"), Value: proto.String("v")}},
		}, 907),
		Functions: []*onnxpb.FunctionProto{withUnknown(&onnxpb.FunctionProto{
			Name: proto.String("Fn"), Domain: proto.String("local"),
			Input: []string{"a", ""}, Output: []string{"b", "undefined_out"}, Attribute: []string{"alpha"},
			AttributeProto: []*onnxpb.AttributeProto{{Name: proto.String("beta"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(3)}},
			OpsetImport:    []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(18)}},
			Node: []*onnxpb.NodeProto{{OpType: proto.String("LeakyRelu"), Input: []string{"a"}, Output: []string{"b"},
				Attribute: []*onnxpb.AttributeProto{{Name: proto.String("alpha"), RefAttrName: proto.String("alpha"), Type: onnxpb.AttributeProto_FLOAT.Enum()}}}},
			ValueInfo: []*onnxpb.ValueInfoProto{valueInfo("b", ftype(2))},
		}, 908)},
		TrainingInfo: []*onnxpb.TrainingInfoProto{{Algorithm: &onnxpb.GraphProto{Name: proto.String("algo")}}},
	}, 909)
}

func TestRoundTripOddModel(t *testing.T) {
	mp := oddModel()
	want := proto.Clone(mp)
	m, err := fromProto(mp, "", false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("round trip differs:\n got %v\nwant %v", got, want)
	}

	// Use-def links.
	g := m.Graph
	if len(g.Inputs) != 3 || g.Inputs[0] == g.Inputs[2] || g.Inputs[0].Name != g.Inputs[2].Name {
		t.Fatalf("the two definitions of X should be two Values")
	}
	if w := g.Lookup("W"); w != g.Inputs[1] || !w.IsConst() {
		t.Fatalf("initializer W should be the input W with Const set")
	}
	foo := g.Nodes[0]
	if foo.Inputs[1] != nil || foo.Outputs[0] != nil {
		t.Fatalf("omitted optional input/output should be nil")
	}
	if u := foo.Inputs[3]; u == nil || !u.Undefined() || u.Name != "undefined_name" {
		t.Fatalf("undefined input should be a placeholder marked undefined")
	}
	if sp := foo.Inputs[4]; sp == nil || sp.Undefined() {
		t.Fatalf("a sparse initializer name should be defined")
	}
	a := g.Lookup("A")
	if p, i := a.Producer(); p != foo || i != 1 {
		t.Fatalf("A should be output 1 of the first node")
	}
	if len(a.Uses()) != 1 || a.Uses()[0].Node != g.Nodes[1] {
		t.Fatalf("A should be used by the If node")
	}
	then := g.Nodes[1].Attributes[0].G
	if then.Parent != g || then.Owner != g.Nodes[1] {
		t.Fatalf("subgraph Parent/Owner not set")
	}
	if x := then.Nodes[0].Inputs[0]; x != g.Inputs[0] {
		t.Fatalf("subgraph should resolve X to the outer value")
	}
	if ov := g.Nodes[1].OuterValues(); len(ov) != 2 {
		t.Fatalf("If should have 2 outer values (X, T), has %d", len(ov))
	}
	f := m.Function("local", "Fn", "")
	if f == nil || len(f.Body.Inputs) != 2 || f.Body.Inputs[0].Type != nil {
		t.Fatalf("function body should have 2 untyped inputs")
	}

	// The same through the wire decoder and through Save/Load.
	data, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	dm, err := Decode(data, "", LoadOptions{SkipDataChecks: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := dm.ToProto(); !proto.Equal(got, want) {
		t.Fatalf("Decode round trip differs")
	}

	// Validate reports the defects of this model.
	probs := Validate(m)
	var all []string
	for _, p := range probs {
		all = append(all, p.Error())
	}
	text := strings.Join(all, "\n")
	for _, w := range []string{`value "X" is defined twice`, `value "Y" is defined twice`, `"undefined_name" is not defined`, `graph output "nothing" is not defined`} {
		if !strings.Contains(text, w) {
			t.Errorf("Validate does not report %q:\n%s", w, text)
		}
	}
}

func TestSaveExternalData(t *testing.T) {
	dir := t.TempDir()
	src := oddModel()
	// Make the model loadable: provide the external file.
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), []byte{0, 0, 128, 63, 0, 0, 0, 64}, 0o644); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 4000)
	for i := range big {
		big[i] = byte(i)
	}
	src.Graph.Initializer = append(src.Graph.Initializer, &onnxpb.TensorProto{Name: proto.String("Big"), DataType: proto.Int32(2), Dims: []int64{4000}, RawData: big})
	data, _ := proto.Marshal(src)
	in := filepath.Join(dir, "in.onnx")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(in, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out := filepath.Join(dir, "out", "m.onnx")
	os.Mkdir(filepath.Dir(out), 0o755)
	var calls int
	if err := Save(out, m, SaveOptions{ExternalData: true, ExternalThreshold: 8, Progress: func(done, total int64) { calls++ }}); err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Errorf("progress was never reported")
	}
	m2, err := Load(out, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	for _, name := range []string{"W", "T", "Ext", "Big"} {
		v1, v2 := m.Graph.Lookup(name), m2.Graph.Lookup(name)
		b1, err1 := v1.Const.Bytes()
		b2, err2 := v2.Const.Bytes()
		if err1 != nil || err2 != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("%s: data differs after external save: %v %v", name, err1, err2)
		}
		loc, off, n := v2.Const.ExternalLocation()
		if loc != "m.onnx.data" || off%4096 != 0 || n != int64(len(b1)) {
			t.Fatalf("%s: external location %q offset %d length %d", name, loc, off, n)
		}
	}
	if m2.Graph.Lookup("E").Const.IsExternal() {
		t.Fatalf("an empty tensor below the threshold should stay inline")
	}
	// Saving again without external data inlines everything.
	if err := Save(filepath.Join(dir, "inline.onnx"), m2, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	m3, err := Load(filepath.Join(dir, "inline.onnx"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m3.Close()
	b, err := m3.Graph.Lookup("Big").Const.Bytes()
	if err != nil || !bytes.Equal(b, big) || m3.Graph.Lookup("Big").Const.IsExternal() {
		t.Fatalf("inlined Big differs: %v", err)
	}
}

func TestSaveAtomicOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	old := []byte("previous content")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	mp := oddModel() // its external tensor has no file: saving must fail
	m, err := fromProto(mp, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	err = Save(path, m, SaveOptions{})
	if err == nil || !strings.Contains(err.Error(), "w.bin") {
		t.Fatalf("Save should fail naming the missing external file, got %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Fatalf("the existing file was modified")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestEncodeTooLarge(t *testing.T) {
	const size = MaxProtoSize + 1
	raw, err := unix.Mmap(-1, 0, size, unix.PROT_READ, unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_NORESERVE)
	if err != nil {
		t.Skipf("cannot reserve address space: %v", err)
	}
	defer unix.Munmap(raw)
	m := &Model{IRVersion: 9, Graph: NewGraph("g")}
	if _, err := m.Graph.AddInitializer(NewTensor("huge", Uint8, []int64{size}, raw)); err != nil {
		t.Fatal(err)
	}
	err = Encode(io.Discard, m, SaveOptions{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "--external-data") {
		t.Fatalf("want ErrTooLarge telling to use --external-data, got %v", err)
	}
}
