// Package onnxtext reads and writes the ONNX text syntax described in
// docs/Syntax.md of ONNX (the format of onnx.parser and onnx.printer), on
// the generated protobuf messages of canonical/onnxpb.
//
//	<
//	   ir_version: 8,
//	   opset_import: ["" : 18]
//	>
//	agraph (float[N, 128] X, float[128, 10] W, float[10] B) => (float[N, 10] C) {
//	   T = MatMul (X, W)
//	   S = Add (T, B)
//	   C = Softmax (S)
//	}
//
// Parse, ParseGraph, ParseFunction and ParseNode read text; Format,
// FormatGraph and FormatFunction write it; Expressible tells whether a
// model survives Format followed by Parse unchanged (proto.Equal).
//
// Everything Syntax.md describes is supported: all element types (float16,
// bfloat16, the float8, float4, int4/uint4 and int2/uint2 types, string,
// complex), shapes with symbolic ('N', "quoted name"), unknown ('?') and
// numeric dimensions, unknown rank (float[]) and scalars (float), seq, map,
// optional and sparse_tensor types, initializers in the graph input list
// and in the <...> block before the nodes, value infos, node names
// ([name]), domains (com.microsoft.Op) and overloads (Op:overload),
// attributes of every kind with or without a type annotation, subgraphs,
// attribute references (@name), functions with attributes and default
// values, external data and the model header keys ir_version,
// opset_import, producer_name, producer_version, domain, model_version,
// doc_string and metadata_props. Comments run from '#' to the end of the
// line. Text in the shape onnx.printer writes parses as well.
//
// Protobuf distinguishes a field set to its default from an unset field;
// to reproduce models exactly the syntax is extended where Syntax.md has
// no way to say what a model holds:
//
//   - `= .Op (...)`: the node's domain is set to "" (plain `Op` leaves it
//     unset; `dom.Op` sets it to "dom").
//   - `opset_import: [7]`: an opset entry without a domain field.
//   - `float[2] W = raw {1, 2.5}`: the tensor keeps its values in
//     raw_data (little-endian), and `raw "0a0b"` gives raw_data as hex
//     bytes where values cannot reproduce it (sub-byte types, NaN
//     payloads, lengths that are not a whole number of elements).
//   - `value = float[2] "" {1, 2}`: an attribute tensor whose name is set
//     to "" (without a name the field stays unset).
//   - `g = "a graph" () => () {...}`: a subgraph with a name that is not a
//     plain identifier.
//
// Names that are not plain identifiers, or that are words of the syntax
// (type names, seq, map, optional, sparse_tensor, inf, nan, raw), are
// written quoted. Strings use backslash escapes: a backslash makes the
// next character literal.
//
// Input is untrusted: graphs and types may nest at most MaxDepth levels,
// identifiers and strings must be valid UTF-8, numbers are range checked
// and at most 512 characters long, and errors are *SyntaxError values that
// give file:line:col and what was expected.
package onnxtext
