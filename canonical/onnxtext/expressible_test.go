package onnxtext

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"google.golang.org/protobuf/proto"
)

const baseText = `
<ir_version: 9, opset_import: ["" : 18], producer_name: "t">
main (float[N] X) => (float[N] Y) <float[1] W = {2}, float[N] T> {
   T = Mul <alpha: float = 1, k: int = 2> (X, W)
   Y = If (c) <then_branch: graph = tb () => (float[N] o) { o = Identity (T) }, else_branch: graph = eb () => (float[N] o2) { o2 = Neg (T) }>
}
<domain: "local">
F <a> (x) => (y) { y = Identity (x) }
`

func TestExpressibleRejects(t *testing.T) {
	type mut struct {
		name   string
		want   string
		mutate func(m *onnxpb.ModelProto)
	}
	g := func(m *onnxpb.ModelProto) *onnxpb.GraphProto { return m.Graph }
	node := func(m *onnxpb.ModelProto, i int) *onnxpb.NodeProto { return m.Graph.Node[i] }
	attr := func(m *onnxpb.ModelProto) *onnxpb.AttributeProto { return m.Graph.Node[0].Attribute[1] }
	muts := []mut{
		{"training_info", "ModelProto.training_info", func(m *onnxpb.ModelProto) {
			m.TrainingInfo = []*onnxpb.TrainingInfoProto{{}}
		}},
		{"model configuration", "ModelProto.configuration", func(m *onnxpb.ModelProto) {
			m.Configuration = []*onnxpb.DeviceConfigurationProto{{Name: proto.String("d")}}
		}},
		{"no graph", "model has no graph", func(m *onnxpb.ModelProto) { m.Graph = nil }},
		{"opset without version", "opset version is not set", func(m *onnxpb.ModelProto) { m.OpsetImport[0].Version = nil }},
		{"graph doc_string", "GraphProto.doc_string", func(m *onnxpb.ModelProto) { g(m).DocString = proto.String("d") }},
		{"graph sparse_initializer", "GraphProto.sparse_initializer", func(m *onnxpb.ModelProto) {
			g(m).SparseInitializer = []*onnxpb.SparseTensorProto{{Dims: []int64{2}}}
		}},
		{"quantization_annotation", "GraphProto.quantization_annotation", func(m *onnxpb.ModelProto) {
			g(m).QuantizationAnnotation = []*onnxpb.TensorAnnotation{{TensorName: proto.String("X")}}
		}},
		{"graph metadata", "GraphProto.metadata_props", func(m *onnxpb.ModelProto) {
			g(m).MetadataProps = []*onnxpb.StringStringEntryProto{{Key: proto.String("k"), Value: proto.String("v")}}
		}},
		{"graph name unset", "graph name is not set", func(m *onnxpb.ModelProto) { g(m).Name = nil }},
		{"value_info doc_string", "ValueInfoProto.doc_string", func(m *onnxpb.ModelProto) { g(m).Input[0].DocString = proto.String("d") }},
		{"value_info name unset", "value name is not set", func(m *onnxpb.ModelProto) { g(m).Output[0].Name = nil }},
		{"node doc_string", "NodeProto.doc_string", func(m *onnxpb.ModelProto) { node(m, 0).DocString = proto.String("d") }},
		{"node metadata", "NodeProto.metadata_props", func(m *onnxpb.ModelProto) {
			node(m, 0).MetadataProps = []*onnxpb.StringStringEntryProto{{Key: proto.String("k"), Value: proto.String("v")}}
		}},
		{"op_type not an identifier", "operator type \"Not Ident\"", func(m *onnxpb.ModelProto) { node(m, 0).OpType = proto.String("Not Ident") }},
		{"bad domain", "not a dotted identifier", func(m *onnxpb.ModelProto) { node(m, 0).Domain = proto.String("a..b") }},
		{"empty overload", "overload \"\"", func(m *onnxpb.ModelProto) { node(m, 0).Overload = proto.String("") }},
		{"invalid UTF-8 name", "not valid UTF-8", func(m *onnxpb.ModelProto) { node(m, 0).Name = proto.String("\xff") }},
		{"attribute doc_string", "AttributeProto.doc_string", func(m *onnxpb.ModelProto) { attr(m).DocString = proto.String("d") }},
		{"attribute without type", "attribute type is not set", func(m *onnxpb.ModelProto) { attr(m).Type = nil }},
		{"int attribute without i", "has no i value", func(m *onnxpb.ModelProto) { attr(m).I = nil }},
		{"int attribute with extra f", "AttributeProto.f", func(m *onnxpb.ModelProto) { attr(m).F = proto.Float32(1) }},
		{"sparse attribute", "SPARSE_TENSOR has no text syntax", func(m *onnxpb.ModelProto) {
			a := attr(m)
			a.I = nil
			a.Type = onnxpb.AttributeProto_SPARSE_TENSOR.Enum()
			a.SparseTensor = &onnxpb.SparseTensorProto{}
		}},
		{"attribute name not an identifier", "attribute name \"a b\"", func(m *onnxpb.ModelProto) { attr(m).Name = proto.String("a b") }},
		{"unknown fields", "unknown fields", func(m *onnxpb.ModelProto) {
			node(m, 0).ProtoReflect().SetUnknown([]byte{0xf8, 0x07, 0x01}) // field 127, varint 1
		}},
		{"type denotation", "TypeProto.denotation", func(m *onnxpb.ModelProto) { g(m).Input[0].Type.Denotation = proto.String("IMAGE") }},
		{"dim denotation", "Dimension.denotation", func(m *onnxpb.ModelProto) {
			g(m).Input[0].Type.GetTensorType().Shape.Dim[0].Denotation = proto.String("DATA_BATCH")
		}},
		{"opaque type", "opaque", func(m *onnxpb.ModelProto) {
			g(m).Input[0].Type = &onnxpb.TypeProto{Value: &onnxpb.TypeProto_OpaqueType{OpaqueType: &onnxpb.TypeProto_Opaque{Name: proto.String("o")}}}
		}},
		{"unknown elem type", "has no name", func(m *onnxpb.ModelProto) {
			g(m).Input[0].Type.GetTensorType().ElemType = proto.Int32(99)
		}},
		{"tensor doc_string", "TensorProto.doc_string", func(m *onnxpb.ModelProto) { g(m).Initializer[0].DocString = proto.String("d") }},
		{"tensor segment", "TensorProto.segment", func(m *onnxpb.ModelProto) {
			g(m).Initializer[0].Segment = &onnxpb.TensorProto_Segment{Begin: proto.Int64(0)}
		}},
		{"tensor metadata", "TensorProto.metadata_props", func(m *onnxpb.ModelProto) {
			g(m).Initializer[0].MetadataProps = []*onnxpb.StringStringEntryProto{{Key: proto.String("k"), Value: proto.String("v")}}
		}},
		{"raw and typed data", "TensorProto.float_data", func(m *onnxpb.ModelProto) { g(m).Initializer[0].RawData = []byte{0, 0, 0, 0} }},
		{"data in the wrong field", "TensorProto.int64_data", func(m *onnxpb.ModelProto) { g(m).Initializer[0].Int64Data = []int64{1} }},
		{"data_location DEFAULT", "data_location set to DEFAULT", func(m *onnxpb.ModelProto) {
			g(m).Initializer[0].DataLocation = onnxpb.TensorProto_DEFAULT.Enum()
		}},
		{"external_data without location", "TensorProto.external_data", func(m *onnxpb.ModelProto) {
			g(m).Initializer[0].ExternalData = []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("x")}}
		}},
		{"initializer without name", "initializer name is not set", func(m *onnxpb.ModelProto) { g(m).Initializer[0].Name = nil }},
		{"function metadata", "FunctionProto.metadata_props", func(m *onnxpb.ModelProto) {
			m.Functions[0].MetadataProps = []*onnxpb.StringStringEntryProto{{Key: proto.String("k"), Value: proto.String("v")}}
		}},
		{"deep nesting", "nested deeper than 64", func(m *onnxpb.ModelProto) {
			inner := m.Graph.Node[1].Attribute[0].G
			for i := 0; i < MaxDepth; i++ {
				next := &onnxpb.GraphProto{Name: proto.String("d")}
				inner.Node = append(inner.Node, &onnxpb.NodeProto{OpType: proto.String("If"), Attribute: []*onnxpb.AttributeProto{
					{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: next}}})
				inner = next
			}
		}},
	}
	for _, mu := range muts {
		t.Run(mu.name, func(t *testing.T) {
			m := mustParse(t, baseText)
			if err := Expressible(m); err != nil {
				t.Fatalf("base model not expressible: %v", err)
			}
			mu.mutate(m)
			err := Expressible(m)
			if err == nil {
				t.Fatalf("Expressible accepted a model with %s", mu.name)
			}
			var ne *NotExpressibleError
			if !errors.As(err, &ne) {
				t.Errorf("error type %T, want *NotExpressibleError", err)
			}
			if !strings.Contains(err.Error(), mu.want) {
				t.Errorf("Expressible = %v, want it to name %q", err, mu.want)
			}
			// Honesty: the rejected model must indeed not survive Format→Parse.
			text, ferr := Format(m)
			if ferr != nil {
				return
			}
			back, perr := Parse("formatted", text)
			if perr == nil && proto.Equal(back, m) {
				t.Errorf("rejected (%v) but Format→Parse reproduces the model:\n%s", err, text)
			}
		})
	}
}

// A model built field by field with the presence subtleties of proto2.
func TestExpressibleKitchenSink(t *testing.T) {
	f32 := func(v float32) []byte {
		b := math.Float32bits(v)
		return []byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)}
	}
	tensorAttr := func(name string, t *onnxpb.TensorProto) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: t}
	}
	ft := int32(onnxpb.TensorProto_FLOAT)
	m := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(10),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(7)}, {Domain: proto.String(""), Version: proto.Int64(21)}},
		Domain:      proto.String("dom"),
		Graph: &onnxpb.GraphProto{
			Name:  proto.String("float"), // reserved word: must be quoted
			Input: []*onnxpb.ValueInfoProto{{Name: proto.String("")}, {Name: proto.String("raw")}},
			Node: []*onnxpb.NodeProto{{
				OpType: proto.String("Constant"), Domain: proto.String(""), Name: proto.String("seq"),
				Output: []string{"", "nan"},
				Attribute: []*onnxpb.AttributeProto{
					tensorAttr("unnamed", &onnxpb.TensorProto{DataType: proto.Int32(ft), FloatData: []float32{float32(math.NaN()), float32(math.Copysign(0, -1))}}),
					tensorAttr("emptyname", &onnxpb.TensorProto{Name: proto.String(""), DataType: proto.Int32(ft), Dims: []int64{1}, RawData: f32(1.25)}),
					tensorAttr("nanpayload", &onnxpb.TensorProto{Name: proto.String("raw"), DataType: proto.Int32(ft), RawData: []byte{1, 0, 0xc0, 0x7f}}),
					tensorAttr("oddraw", &onnxpb.TensorProto{DataType: proto.Int32(ft), RawData: []byte{1, 2, 3}}),
					tensorAttr("emptyraw", &onnxpb.TensorProto{DataType: proto.Int32(ft), RawData: []byte{}}),
					tensorAttr("strraw", &onnxpb.TensorProto{DataType: proto.Int32(int32(onnxpb.TensorProto_STRING)), RawData: []byte("xy")}),
					tensorAttr("c128", &onnxpb.TensorProto{DataType: proto.Int32(int32(onnxpb.TensorProto_COMPLEX128)), Dims: []int64{1}, DoubleData: []float64{1, -2}}),
					{Name: proto.String("emptys"), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte{}},
					{Name: proto.String("zero"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(float32(math.Copysign(0, -1)))},
					{Name: proto.String("tiny"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(math.SmallestNonzeroFloat32)},
					{Name: proto.String("big"), Type: onnxpb.AttributeProto_FLOATS.Enum(), Floats: []float32{math.MaxFloat32, 1e-7}},
					{Name: proto.String("ref"), RefAttrName: proto.String("outer")},
					{Name: proto.String("noints"), Type: onnxpb.AttributeProto_INTS.Enum()},
					{Name: proto.String("tps"), Type: onnxpb.AttributeProto_TYPE_PROTOS.Enum(), TypeProtos: []*onnxpb.TypeProto{
						{Value: &onnxpb.TypeProto_SparseTensorType{SparseTensorType: &onnxpb.TypeProto_SparseTensor{ElemType: proto.Int32(ft)}}}}},
				},
			}},
		},
		Functions: []*onnxpb.FunctionProto{{Name: proto.String("f"), Input: []string{"float"}, Attribute: []string{"map"}}},
	}
	if err := Expressible(m); err != nil {
		t.Fatalf("Expressible: %v", err)
	}
	text, err := Format(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("sink", text)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	if !proto.Equal(back, m) {
		t.Fatalf("round trip differs:\n%s\nback: %v", text, back)
	}
	for _, want := range []string{`"float" ("", "raw")`, `["seq"] "", "nan" = .Constant`, `float "raw" raw "0100c07f"`,
		`float[1] "" raw {1.25}`, `float {nan, -0}`, `zero: float = -0`, `ref = @outer`, `f <"map"> ("float")`, `[7, "" : 21]`} {
		if !strings.Contains(string(text), want) {
			t.Errorf("formatted text lacks %q:\n%s", want, text)
		}
	}
}

func TestNilElementsDoNotPanic(t *testing.T) {
	m := mustParse(t, baseText)
	m.Graph.Node = append(m.Graph.Node, nil)
	m.Graph.Input = append(m.Graph.Input, nil)
	if err := Expressible(m); err == nil {
		t.Error("Expressible accepted a nil node")
	}
	if _, err := Format(m); err == nil {
		t.Error("Format accepted a nil node")
	}
	if _, err := Format(nil); err == nil {
		t.Error("Format(nil) succeeded")
	}
	if err := Expressible(nil); err == nil {
		t.Error("Expressible(nil) succeeded")
	}
}

// Order of initializers, inputs and value infos is kept whatever it is.
func TestOrderingPreserved(t *testing.T) {
	m := mustParse(t, `
<ir_version: 9, opset_import: ["" : 18]>
g (float[2] B = {1, 2}, float[N] X, float[2] A = {3, 4}) => (float[N] Y) <float[1] C = {5}, float Z, float[1] D = {6}, float Y2> {
   Y = Add (X, A)
}
<domain: "d">
F (float x, y) => (float z) <float t, float y> {
   z = Add (x, y)
}
`)
	var names []string
	for _, t := range m.Graph.Initializer {
		names = append(names, t.GetName())
	}
	if got := strings.Join(names, ","); got != "B,A,C,D" {
		t.Errorf("initializer order = %s", got)
	}
	// Reorder so that initializers in the block come before input-list ones.
	m.Graph.Initializer[0], m.Graph.Initializer[3] = m.Graph.Initializer[3], m.Graph.Initializer[0]
	m.Graph.ValueInfo[0], m.Graph.ValueInfo[1] = m.Graph.ValueInfo[1], m.Graph.ValueInfo[0]
	f := m.Functions[0]
	names = nil
	for _, vi := range f.ValueInfo {
		names = append(names, vi.GetName())
	}
	if got := strings.Join(names, ","); got != "x,z,t,y" {
		t.Errorf("function value_info order = %s", got)
	}
	f.ValueInfo[0], f.ValueInfo[3] = f.ValueInfo[3], f.ValueInfo[0]
	roundTrip(t, m)
}
