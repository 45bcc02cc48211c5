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
// are not valid UTF-8 do not survive the JavaScript string). It cannot take
// bfloat16, the float8 types, float4, int2/uint2 or complex at a graph input
// or output (onnxruntime-node refuses to load such a model: "Unsupported
// data type"), nor int4/uint4 there (it loads them but refuses such an
// input and aborts Node on such an output, so runner.js refuses the model
// at load), nor sequences, maps or optionals; inside the graph every type
// ONNX Runtime has kernels for runs. Such a model is a *RunError of kind
// "type" (RuntimeLimit: onnxruntime-node's limit, not the model's), so
// that a caller can fall back.
//
// Errors are typed and one line: *RunError (ONNX Runtime refused the model,
// an input, or failed running it; its Kind says which), a
// *runtimes.NotInstalledError from Check when Node or the package is
// missing (Find's *MissingError holds where it looked).
package ortnode
