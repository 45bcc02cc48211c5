package canonical

import (
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// TypeString formats a TypeProto for people: "float[N,3,224,224]",
// "int64[?]" (unknown dim), "float" with no shape known, "seq(float[2])",
// "map(int64,float)", "optional(…)", "sparse(float[10,10])", "?" when nil.
func TypeString(tp *onnxpb.TypeProto) string {
	var b strings.Builder
	writeType(&b, tp, 0)
	return b.String()
}

func writeType(b *strings.Builder, tp *onnxpb.TypeProto, depth int) {
	if tp == nil || depth > MaxDepth {
		b.WriteString("?")
		return
	}
	switch x := tp.Value.(type) {
	case *onnxpb.TypeProto_TensorType:
		writeTensorType(b, x.TensorType.GetElemType(), x.TensorType.GetShape(), x.TensorType.Shape != nil)
	case *onnxpb.TypeProto_SparseTensorType:
		b.WriteString("sparse(")
		writeTensorType(b, x.SparseTensorType.GetElemType(), x.SparseTensorType.GetShape(), x.SparseTensorType.Shape != nil)
		b.WriteString(")")
	case *onnxpb.TypeProto_SequenceType:
		b.WriteString("seq(")
		writeType(b, x.SequenceType.GetElemType(), depth+1)
		b.WriteString(")")
	case *onnxpb.TypeProto_OptionalType:
		b.WriteString("optional(")
		writeType(b, x.OptionalType.GetElemType(), depth+1)
		b.WriteString(")")
	case *onnxpb.TypeProto_MapType:
		b.WriteString("map(")
		b.WriteString(ElemTypeName(DataType(x.MapType.GetKeyType())))
		b.WriteString(",")
		writeType(b, x.MapType.GetValueType(), depth+1)
		b.WriteString(")")
	case *onnxpb.TypeProto_OpaqueType:
		b.WriteString("opaque(" + x.OpaqueType.GetDomain() + "." + x.OpaqueType.GetName() + ")")
	default:
		b.WriteString("?")
	}
}

func writeTensorType(b *strings.Builder, et int32, shape *onnxpb.TensorShapeProto, hasShape bool) {
	b.WriteString(ElemTypeName(DataType(et)))
	if !hasShape {
		return
	}
	b.WriteString("[")
	for i, d := range shape.GetDim() {
		if i > 0 {
			b.WriteString(",")
		}
		switch v := d.Value.(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			b.WriteString(strconv.FormatInt(v.DimValue, 10))
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			b.WriteString(v.DimParam)
		default:
			b.WriteString("?")
		}
	}
	b.WriteString("]")
}

// ElemTypeName returns the lower-case name of an element type as the ONNX
// text syntax writes it ("float", "int64", "bfloat16", …).
func ElemTypeName(dt DataType) string {
	if name, ok := onnxpb.TensorProto_DataType_name[int32(dt)]; ok {
		return strings.ToLower(name)
	}
	return "type" + strconv.Itoa(int(dt))
}
