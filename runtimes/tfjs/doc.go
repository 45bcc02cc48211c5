// Package tfjs is the TensorFlow.js reference runtime of onnxconv: it
// computes a TF.js model.json the way TF.js itself does, so that the ONNX
// model importers/tfjs makes from it can be compared with its source
// (`--runtime tfjs`, and source verification through
// importers.Description.Runtime).
//
// It is pure Go (no cgo). A session (Open) starts `node` on an embedded
// script (runner.js) that loads @tensorflow/tfjs 4.22.0 on its
// WebAssembly backend (@tensorflow/tfjs-backend-wasm 4.22.0, XNNPACK, its
// SIMD build loaded from the package's dist folder; TF.js does not run the
// threaded build under Node; not tfjs-node, whose install downloads a
// native library). The kernels the WASM backend lacks (Einsum, FFT,
// UnsortedSegmentSum, …) run on the pure JavaScript CPU backend, their
// inputs and outputs copied between the two, and the session names those
// that ran (Session.CPUOps, Note: "ops run on the CPU backend: Einsum").
// Without the WASM package the CPU backend runs everything. The script
// reads model.json and the weight files its manifest names (inside the
// model's folder only), loads the model once and runs it on every sample:
// a layers model with tf.loadLayersModel(tf.io.fromMemory(...)) and
// predict, a graph model with tf.loadGraphModel(tf.io.fromMemory(...)) and
// execute, falling back to executeAsync for control flow and dynamic ops
// (NonMaxSuppression); Session.RunNamed executes a graph model with any
// of its node tensors as the outputs (the source side of the error map,
// verify/errmap). Requests and answers travel in runtimes/node's
// framed protocol (JSON header, raw tensor bytes); whatever TF.js prints
// goes to stderr.
//
// Keras files run the same way, as TF.js runs their architecture and
// weights (the reference runtime importers/keras names): a Keras 3 .keras
// zip, a Keras 2 full-model .h5, or an architecture JSON with its weights
// .h5 beside it is read with formats/keras, the loader importers/keras
// uses too (custom layers refused as the importer refuses them, a
// *KerasError) and written, in Go,
// as a TF.js layers model (model.json with the topology in the Keras 2
// form TF.js deserializes, a weights manifest and float32 weights.bin) into
// the run's private temporary folder, removed after the run; runner.js
// builds it with tf.models.modelFromJSON and gives each layer its weights
// in Keras's order. Outputs are named after the output layers, as
// importers/keras names the ONNX outputs.
//
// TensorFlow models run the same way, as the reference runtime
// importers/tensorflow names: a frozen GraphDef (.pb), a SavedModel
// (folder or saved_model.pb) or a TF1 checkpoint (.meta) is read with
// formats/tensorflow, the reader the importer uses (variables frozen into
// Const nodes from the tensor bundle, PartitionedCall and
// StatefulPartitionedCall inlined), and written, in Go, as a TF.js graph
// model into the run's private temporary folder (graphdef.go:
// modelTopology the GraphDef in protobuf JSON, the Const values in
// weights.bin, a signature from the SavedModel's or the imported model's
// inputs and outputs), which runner.js loads like any graph model. A graph
// with ops TF.js has no kernel for (formats/tensorflow.TFJSOps, the op
// list of tfjs-converter 4.22.0) is refused before node starts, every op
// named (*unsupported.OpsError, stage run): verification then says NOT
// VERIFIED with that list.
//
// Inputs are matched by name with the imported ONNX model (importers/tfjs
// names a graph model's inputs and outputs after the TF.js nodes), or by
// position for layers models; outputs come in TF.js's order. TF.js has no
// int64: int64 inputs are passed as int32 (refused when out of range).
//
// Where node and the npm package are found: see Find ($ONNXCONV_NODE,
// $ONNXCONV_NODE_MODULES, node_modules beside the executable, in the user
// plugins folder, in the checkout). A missing node or package is a
// *MissingError whose message is the one command to run (InstallCommand).
package tfjs
