package onnxtext

import (
	"strings"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// elemTypeName returns the syntax name of a data type, or "" if it has none.
func elemTypeName(dt int32) string {
	switch onnxpb.TensorProto_DataType(dt) {
	case onnxpb.TensorProto_FLOAT:
		return "float"
	case onnxpb.TensorProto_UINT8:
		return "uint8"
	case onnxpb.TensorProto_INT8:
		return "int8"
	case onnxpb.TensorProto_UINT16:
		return "uint16"
	case onnxpb.TensorProto_INT16:
		return "int16"
	case onnxpb.TensorProto_INT32:
		return "int32"
	case onnxpb.TensorProto_INT64:
		return "int64"
	case onnxpb.TensorProto_STRING:
		return "string"
	case onnxpb.TensorProto_BOOL:
		return "bool"
	case onnxpb.TensorProto_FLOAT16:
		return "float16"
	case onnxpb.TensorProto_DOUBLE:
		return "double"
	case onnxpb.TensorProto_UINT32:
		return "uint32"
	case onnxpb.TensorProto_UINT64:
		return "uint64"
	case onnxpb.TensorProto_COMPLEX64:
		return "complex64"
	case onnxpb.TensorProto_COMPLEX128:
		return "complex128"
	case onnxpb.TensorProto_BFLOAT16:
		return "bfloat16"
	case onnxpb.TensorProto_FLOAT8E4M3FN:
		return "float8e4m3fn"
	case onnxpb.TensorProto_FLOAT8E4M3FNUZ:
		return "float8e4m3fnuz"
	case onnxpb.TensorProto_FLOAT8E5M2:
		return "float8e5m2"
	case onnxpb.TensorProto_FLOAT8E5M2FNUZ:
		return "float8e5m2fnuz"
	case onnxpb.TensorProto_UINT4:
		return "uint4"
	case onnxpb.TensorProto_INT4:
		return "int4"
	case onnxpb.TensorProto_FLOAT4E2M1:
		return "float4e2m1"
	case onnxpb.TensorProto_FLOAT8E8M0:
		return "float8e8m0"
	case onnxpb.TensorProto_UINT2:
		return "uint2"
	case onnxpb.TensorProto_INT2:
		return "int2"
	}
	return ""
}

// elemTypeByName returns the data type for a name, or 0.
func elemTypeByName(name string) int32 {
	switch name {
	case "float":
		return int32(onnxpb.TensorProto_FLOAT)
	case "uint8":
		return int32(onnxpb.TensorProto_UINT8)
	case "int8":
		return int32(onnxpb.TensorProto_INT8)
	case "uint16":
		return int32(onnxpb.TensorProto_UINT16)
	case "int16":
		return int32(onnxpb.TensorProto_INT16)
	case "int32":
		return int32(onnxpb.TensorProto_INT32)
	case "int64":
		return int32(onnxpb.TensorProto_INT64)
	case "string":
		return int32(onnxpb.TensorProto_STRING)
	case "bool":
		return int32(onnxpb.TensorProto_BOOL)
	case "float16":
		return int32(onnxpb.TensorProto_FLOAT16)
	case "double":
		return int32(onnxpb.TensorProto_DOUBLE)
	case "uint32":
		return int32(onnxpb.TensorProto_UINT32)
	case "uint64":
		return int32(onnxpb.TensorProto_UINT64)
	case "complex64":
		return int32(onnxpb.TensorProto_COMPLEX64)
	case "complex128":
		return int32(onnxpb.TensorProto_COMPLEX128)
	case "bfloat16":
		return int32(onnxpb.TensorProto_BFLOAT16)
	case "float8e4m3fn":
		return int32(onnxpb.TensorProto_FLOAT8E4M3FN)
	case "float8e4m3fnuz":
		return int32(onnxpb.TensorProto_FLOAT8E4M3FNUZ)
	case "float8e5m2":
		return int32(onnxpb.TensorProto_FLOAT8E5M2)
	case "float8e5m2fnuz":
		return int32(onnxpb.TensorProto_FLOAT8E5M2FNUZ)
	case "uint4":
		return int32(onnxpb.TensorProto_UINT4)
	case "int4":
		return int32(onnxpb.TensorProto_INT4)
	case "float4e2m1":
		return int32(onnxpb.TensorProto_FLOAT4E2M1)
	case "float8e8m0":
		return int32(onnxpb.TensorProto_FLOAT8E8M0)
	case "uint2":
		return int32(onnxpb.TensorProto_UINT2)
	case "int2":
		return int32(onnxpb.TensorProto_INT2)
	}
	return 0
}

// attrTypeName returns the syntax name of an attribute type, or "".
func attrTypeName(t onnxpb.AttributeProto_AttributeType) string {
	switch t {
	case onnxpb.AttributeProto_FLOAT:
		return "float"
	case onnxpb.AttributeProto_INT:
		return "int"
	case onnxpb.AttributeProto_STRING:
		return "string"
	case onnxpb.AttributeProto_TENSOR:
		return "tensor"
	case onnxpb.AttributeProto_GRAPH:
		return "graph"
	case onnxpb.AttributeProto_SPARSE_TENSOR:
		return "sparse_tensor"
	case onnxpb.AttributeProto_TYPE_PROTO:
		return "type_proto"
	case onnxpb.AttributeProto_FLOATS:
		return "floats"
	case onnxpb.AttributeProto_INTS:
		return "ints"
	case onnxpb.AttributeProto_STRINGS:
		return "strings"
	case onnxpb.AttributeProto_TENSORS:
		return "tensors"
	case onnxpb.AttributeProto_GRAPHS:
		return "graphs"
	case onnxpb.AttributeProto_SPARSE_TENSORS:
		return "sparse_tensors"
	case onnxpb.AttributeProto_TYPE_PROTOS:
		return "type_protos"
	}
	return ""
}

func attrTypeByName(name string) (onnxpb.AttributeProto_AttributeType, bool) {
	switch name {
	case "float":
		return onnxpb.AttributeProto_FLOAT, true
	case "int":
		return onnxpb.AttributeProto_INT, true
	case "string":
		return onnxpb.AttributeProto_STRING, true
	case "tensor":
		return onnxpb.AttributeProto_TENSOR, true
	case "graph":
		return onnxpb.AttributeProto_GRAPH, true
	case "sparse_tensor":
		return onnxpb.AttributeProto_SPARSE_TENSOR, true
	case "type_proto":
		return onnxpb.AttributeProto_TYPE_PROTO, true
	case "floats":
		return onnxpb.AttributeProto_FLOATS, true
	case "ints":
		return onnxpb.AttributeProto_INTS, true
	case "strings":
		return onnxpb.AttributeProto_STRINGS, true
	case "tensors":
		return onnxpb.AttributeProto_TENSORS, true
	case "graphs":
		return onnxpb.AttributeProto_GRAPHS, true
	case "sparse_tensors":
		return onnxpb.AttributeProto_SPARSE_TENSORS, true
	case "type_protos":
		return onnxpb.AttributeProto_TYPE_PROTOS, true
	}
	return 0, false
}

// singletonOf maps a list attribute type to its element type.
func singletonOf(t onnxpb.AttributeProto_AttributeType) (onnxpb.AttributeProto_AttributeType, bool) {
	switch t {
	case onnxpb.AttributeProto_FLOATS:
		return onnxpb.AttributeProto_FLOAT, true
	case onnxpb.AttributeProto_INTS:
		return onnxpb.AttributeProto_INT, true
	case onnxpb.AttributeProto_STRINGS:
		return onnxpb.AttributeProto_STRING, true
	case onnxpb.AttributeProto_TENSORS:
		return onnxpb.AttributeProto_TENSOR, true
	case onnxpb.AttributeProto_GRAPHS:
		return onnxpb.AttributeProto_GRAPH, true
	case onnxpb.AttributeProto_SPARSE_TENSORS:
		return onnxpb.AttributeProto_SPARSE_TENSOR, true
	case onnxpb.AttributeProto_TYPE_PROTOS:
		return onnxpb.AttributeProto_TYPE_PROTO, true
	}
	return t, false
}

// listOf maps a singleton attribute type to its list type.
func listOf(t onnxpb.AttributeProto_AttributeType) onnxpb.AttributeProto_AttributeType {
	switch t {
	case onnxpb.AttributeProto_FLOAT:
		return onnxpb.AttributeProto_FLOATS
	case onnxpb.AttributeProto_INT:
		return onnxpb.AttributeProto_INTS
	case onnxpb.AttributeProto_STRING:
		return onnxpb.AttributeProto_STRINGS
	case onnxpb.AttributeProto_TENSOR:
		return onnxpb.AttributeProto_TENSORS
	case onnxpb.AttributeProto_GRAPH:
		return onnxpb.AttributeProto_GRAPHS
	case onnxpb.AttributeProto_TYPE_PROTO:
		return onnxpb.AttributeProto_TYPE_PROTOS
	}
	return onnxpb.AttributeProto_UNDEFINED
}

// isTypeKeyword reports whether an identifier starts a type.
func isTypeKeyword(id string) bool {
	switch id {
	case "seq", "map", "optional", "sparse_tensor":
		return true
	}
	return elemTypeByName(id) != 0
}

// isReserved reports whether a plain identifier must be quoted to be read
// back as a name: type keywords, the float words and the raw-data marker.
func isReserved(id string) bool {
	return isTypeKeyword(id) || isSpecialFloat(id) || id == "raw" || id == "opaque"
}

// isPlainIdent reports whether s matches [A-Za-z_][A-Za-z0-9_]*.
func isPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlpha(c) || c == '_' || (i > 0 && isDigit(c)) {
			continue
		}
		return false
	}
	return true
}

// isQualifiedID reports whether s is a dot-separated list of plain identifiers.
func isQualifiedID(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !isPlainIdent(part) {
			return false
		}
	}
	return true
}
