// Package tflite is the TFLite reference runtime of onnxconv: it computes a
// .tflite model the way TensorFlow Lite itself does, so that a converted
// model can be compared with its source (`--runtime tflite`, and the
// pipeline's source verification through importers.Description.Runtime).
//
// It is pure Go (no cgo). Each Run starts `node` on an embedded script
// (runner.js) that loads Google's TFLite interpreter compiled to
// WebAssembly from the npm package @tensorflow/tfjs-tflite 0.0.1-alpha.10
// (its non-threaded SIMD build, with XNNPACK for float ops) and runs the
// model once through the package's raw model runner
// (TFLiteWebModelRunner), with the exact element types of the model:
// float32, int8, uint8, int16, int32, uint32, bool through the runner's
// typed views; int64 (and uint16, uint64, float16), for which the runner
// gives no view, written and read in the WebAssembly heap at the data
// pointer of the runner's tensor info (runner.js, dataPointerWord); LSTM
// and SVDF with their variable tensors. The request and the answer travel
// on the script's stdin and stdout as a length-prefixed JSON header
// followed by the raw little-endian tensor bytes. Outputs are read after
// the run, so that an output whose shape depends on an input has its
// run-time shape.
//
// The second build, @litertjs/core 2.5.3 (LiteRT.js, the maintained
// successor), runs under Node with shims (litert.js: self, location,
// require, an importScripts that evaluates its loader, wasmBinary, and its
// "compat" build, since Node 20 compiles the default relaxed-SIMD build
// only with --experimental-wasm-relaxed-simd). Its model inputs and
// outputs must be float32 or int32 ("Element type INT8 is not supported",
// likewise INT16, INT64; int8 ops inside a float model run), no
// variable tensors (LSTM, SVDF: "Variable tensors not yet supported") and
// cannot resize a dynamic (-1) input either, so every model it runs
// tfjs-tflite runs too: RunLiteRT is a cross-check on float models, not a
// fallback. Reports name the build that ran (Result.Build).
//
// Limits, said plainly in the errors: tfjs-tflite cannot resize inputs, so
// a dynamic (-1) dim runs at the size the model's static shape holds for it
// (*ShapeError); custom ops that only TFLite Micro has (the Signal* audio
// ops) run in neither build (an *unsupported.OpsError naming every node).
//
// Inputs and outputs are matched by name: the TFLite importer keeps the
// TFLite tensor names and the TFLite NHWC layout at the graph inputs and
// outputs of the ONNX model it makes, so tensors pass through unchanged.
//
// Where node and the npm packages are found: see Find. A missing node or
// package is a *MissingError whose message is the one command to run.
package tflite
