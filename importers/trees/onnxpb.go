package trees

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

type graph struct {
	nodes  []*onnxpb.NodeProto
	inits  []*onnxpb.TensorProto
	usesML bool
	double bool
	// treeIn is what the tree op reads ("" means InputName).
	treeIn string
}

func (g *graph) treeInput() string {
	if g.treeIn == "" {
		return InputName
	}
	return g.treeIn
}

func (g *graph) add(op, domain, name string, in, out []string, attrs ...*onnxpb.AttributeProto) {
	n := &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: in, Output: out, Attribute: attrs}
	if domain != "" {
		n.Domain = proto.String(domain)
		g.usesML = true
	}
	g.nodes = append(g.nodes, n)
}

func (g *graph) init(t *onnxpb.TensorProto) string {
	g.inits = append(g.inits, t)
	return t.GetName()
}

// elem is the model's floating-point element type.
func (g *graph) elem() onnxpb.TensorProto_DataType {
	if g.double {
		return onnxpb.TensorProto_DOUBLE
	}
	return onnxpb.TensorProto_FLOAT
}

// scalar is a constant of the model's element type.
func (g *graph) scalar(name string, v float64) string {
	return g.init(realTensor(name, nil, []float64{v}, g.double))
}

func attrType(t onnxpb.AttributeProto_AttributeType) *onnxpb.AttributeProto_AttributeType { return &t }

func aInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_INT), I: proto.Int64(v)}
}

func aInts(name string, v []int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_INTS), Ints: v}
}

func aFloats(name string, v []float64) *onnxpb.AttributeProto {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_FLOATS), Floats: f}
}

func aString(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_STRING), S: []byte(v)}
}

func aStrings(name string, v []string) *onnxpb.AttributeProto {
	b := make([][]byte, len(v))
	for i, s := range v {
		b[i] = []byte(s)
	}
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_STRINGS), Strings: b}
}

func aTensor(name string, t *onnxpb.TensorProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_TENSOR), T: t}
}

func dtype(t onnxpb.TensorProto_DataType) *int32 { v := int32(t); return &v }

// realTensor is a float (or, when double, double) tensor of v.
func realTensor(name string, dims []int64, v []float64, double bool) *onnxpb.TensorProto {
	if double {
		raw := make([]byte, 8*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(f))
		}
		return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: dtype(onnxpb.TensorProto_DOUBLE), RawData: raw}
	}
	raw := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(f)))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: dtype(onnxpb.TensorProto_FLOAT), RawData: raw}
}

func int64Tensor(name string, dims []int64, v []int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: dtype(onnxpb.TensorProto_INT64), Int64Data: v}
}

func uint8Tensor(name string, v []uint8) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(v))}, DataType: dtype(onnxpb.TensorProto_UINT8), RawData: v}
}

func valueInfo(name string, elem onnxpb.TensorProto_DataType, dims ...any) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		switch d := d.(type) {
		case string:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
		case int:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
		}
	}
	return &onnxpb.ValueInfoProto{
		Name: proto.String(name),
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: dtype(elem), Shape: shape,
		}}},
	}
}

// IRVersion is the lowest IR version that knows both opsets.
func IRVersion(ai, ml int) int64 {
	var ir int64
	switch {
	case ai <= 8:
		ir = 3
	case ai == 9:
		ir = 4
	case ai == 10:
		ir = 5
	case ai == 11:
		ir = 6
	case ai <= 14:
		ir = 7
	case ai <= 18:
		ir = 8
	case ai <= 20:
		ir = 9
	case ai <= 22:
		ir = 10
	case ai == 23:
		ir = 11
	case ai == 24:
		ir = 12
	default:
		ir = 13
	}
	if ml >= 5 && ir < 10 { // ai.onnx.ml 5 came with ONNX 1.16 (IR 10)
		ir = 10
	}
	return ir
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
