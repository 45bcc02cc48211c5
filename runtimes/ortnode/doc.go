// Package ortnode is the ONNX Runtime reference runtime of onnxconv, with no
// build step: it runs an ONNX model in ONNX Runtime through npm's
// onnxruntime-node 1.30.0 (the native library that package ships, loaded by
// Node), which 'onnxconv runtimes install' already installs. It is pure Go
// (no cgo), registered in runtimes/builtin under the name "onnxruntime", so
// it wins over the cgo plugin onnxconv-plugin-onnxruntime (runtimes/ort) of
// the same name (runtimes.Set.Lookup).
//
// Each Open starts `node` on an embedded script (runner.js, after
// runtimes/node's frame.js) that creates one InferenceSession from the
// model's path (so external data beside it is found) with the intra-op
// threads asked for (1 by default, inter-op 1, sequential), and serves every
// sample of the session over runtimes/node's framed stdin/stdout protocol:
// a JSON header, then the raw little-endian tensor bytes.
//
// Element types: every tensor type onnxruntime-node 1.30 passes — float32,
// float64, float16 (its bits), int8, int16, int32, int64, uint8, uint16,
// uint32, uint64, bool and string (each element as UTF-8 text: bytes that
// are not valid UTF-8 do not survive the JavaScript string). A graph input
// or output of bfloat16, a float8 type, int4, uint4, int2 or uint2, which
// onnxruntime-node cannot pass, crosses as float32, int8 or uint8 (each of
// its values exactly one of those): ONNX Runtime runs a copy of the model
// with a Cast node at each such input and output (wire.go), and the values
// are converted back here. It cannot take float4 (ONNX Runtime 1.30 has no
// Cast kernel for it) or complex at a graph input or output (onnxruntime-node
// refuses to load such a model: "Unsupported data type"), nor maps;
// inside the graph every type ONNX Runtime has kernels for runs. Such a
// model is a *RunError of kind "type" (RuntimeLimit: onnxruntime-node's
// limit, not the model's), so that a caller can fall back. Sequences and
// optionals of tensors at the graph's inputs and outputs: Open refuses
// them (kind "values"), and New's sessions run such a model through
// copies whose inputs and outputs are tensors, built per sample
// (values.go; runtimes.ValueSession).
//
// Opsets: ONNX Runtime 1.30 refuses a model stamped with an ai.onnx opset
// past MaxOpset (26); when every op of such a model has the same schema at
// 26, it runs a copy stamped 26. The session's note says when a copy ran.
//
// Errors are typed and one line: *RunError (ONNX Runtime refused the model,
// an input, or failed running it; its Kind says which), a
// *runtimes.NotInstalledError from Check when Node or the package is
// missing (Find's *MissingError holds where it looked).
package ortnode
