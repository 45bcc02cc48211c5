// Package tflite is the TFLite reference runtime of onnxconv: it computes a
// .tflite model the way TensorFlow Lite itself does, so that a converted
// model can be compared with its source (`--runtime tflite`, and the
// pipeline's source verification through importers.Description.Runtime).
//
// It is pure Go (no cgo). A session (Open) starts `node` on the embedded
// script of one of two WebAssembly builds of TFLite, loads the model once
// and serves every run; the request and the answer travel on the script's
// stdin and stdout as a length-prefixed JSON header followed by the raw
// little-endian tensor bytes. Outputs are read after each run, so that an
// output whose shape depends on an input has its run-time shape.
//
// LiteRT.js first: @litertjs/core 2.5.3 (litert.js), the maintained
// build, which reads newer files (operator versions tfjs-tflite's
// interpreter does not know). It runs under Node with shims (self,
// location, require, an importScripts that evaluates its loader,
// wasmBinary, and its "compat" build, since Node 20 compiles the default
// relaxed-SIMD build only with --experimental-wasm-relaxed-simd). It takes
// float32, int32 and uint8 model inputs and outputs only ("Element type
// INT8 is not supported", likewise INT16, INT64; int8 ops inside a float
// model run), no variable tensors (LSTM, SVDF: "Variable tensors not yet
// supported"), and names tensors by signature key (the load request
// carries the subgraph's names and keys, so binding is by tensor name).
// An int64 input given for a model input of int32 (the TFLite exporter
// writes ONNX int64 as INT32) is cast to int32 first, whichever
// interpreter runs.
//
// tfjs-tflite second: @tensorflow/tfjs-tflite 0.0.1-alpha.10 (runner.js),
// its non-threaded SIMD build with XNNPACK, through the package's raw
// model runner (TFLiteWebModelRunner), with the exact element types of
// the model: float32, int8, uint8, int16, int32, uint32, bool through the
// runner's typed views; int64 (and uint16, uint64, float16), for which the
// runner gives no view, written and read in the WebAssembly heap at the
// data pointer of the runner's tensor info (runner.js, dataPointerWord);
// LSTM and SVDF with their variable tensors, from a fresh interpreter for
// every sample.
//
// Route says which goes first for a model: tfjs-tflite for what LiteRT.js
// does not run (other input or output types, state, outputs computed at
// prepare or resized at run time: UNIQUE, SEGMENT_SUM, UNSORTED_SEGMENT_*),
// else LiteRT.js. When
// the first refuses the model (at load, or on its first run), the other
// is tried (Session.Refused); Session.Build and Session.Note name the
// build that computed the model, which reports show (the session is a
// runtimes.SessionNoter). RunLiteRT runs LiteRT.js alone.
//
// Limits, said plainly in the errors: neither build can resize inputs, so
// a dynamic (-1) dim runs at the size the model's static shape holds for it
// (*ShapeError); custom ops that only TFLite Micro has (the Signal* audio
// ops), and MediaPipe's Landmarks2TransformMatrix, TransformLandmarks,
// TransformTensorBilinear and TransformTensor (LiteRT.js runs them without writing their
// outputs; Options.RunUncomputed shows it), are computed by neither build
// (an *unsupported.OpsError naming every node).
//
// Inputs and outputs are matched by name: the TFLite importer keeps the
// TFLite tensor names and the TFLite NHWC layout at the graph inputs and
// outputs of the ONNX model it makes, so tensors pass through unchanged.
//
// Where node and the npm packages are found: see Find. A missing node or
// package is a *MissingError whose message is the one command to run.
package tflite
