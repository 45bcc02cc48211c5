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
// float32, int8, uint8, int16, int32, bool; LSTM and SVDF with their
// variable tensors. The request and the answer travel on the script's
// stdin and stdout as a length-prefixed JSON header followed by the raw
// little-endian tensor bytes. Outputs are read after the run, so that an
// output whose shape depends on an input has its run-time shape.
//
// The other published build, @litertjs/core 2.5.3 (LiteRT.js), is not used:
// it runs float models only ("Element type INT8/INT16 is not supported"),
// cannot resize a dynamic (-1) input and has no variable tensors, so every
// model it runs tfjs-tflite runs too. Reports name the build that ran
// (Result.Build).
//
// Limits, said plainly in the errors: tfjs-tflite cannot resize inputs, so
// a dynamic (-1) dim runs at the size the model's static shape holds for it
// (*ShapeError); custom ops that only TFLite Micro has (the Signal* audio
// ops) run in neither build (*UnsupportedOpError).
//
// Inputs and outputs are matched by name: the TFLite importer keeps the
// TFLite tensor names and the TFLite NHWC layout at the graph inputs and
// outputs of the ONNX model it makes, so tensors pass through unchanged.
//
// Where node and the npm packages are found: see Find. A missing node or
// package is a *MissingError whose message is the one command to run.
package tflite
