// Package pipeline is onnxconv's jobs as a library: Convert (detect →
// import → adapt → verify → write), Opset and Plan (move a model between
// opsets, or list what blocks it), Verify (two models, or a model and
// stored outputs, on the executor or on reference runtimes), Reduce (a
// model on which ONNX Runtime and the executor disagree cut down to a
// repro bundle), Run (the built-in executor on a folder of inputs), and
// Load/Save/Detect. The
// onnxconv command line is a thin shell over these functions, as crane is
// over pkg/crane in go-containerregistry: a Go program that converts and
// verifies calls exactly what the command line calls.
//
// pipeline names no format: the importers, exporters and runtimes come in
// a caller's Env (package builtinenv assembles the built-in ones); an
// output in another file format is the Env's exporter's (by extension or
// target), and the runtime a result runs in is its target profile's
// (profiles.Profile.Runtime; profiles.Default without a target).
// TestPipelineNamesNoFormat holds the code to it: no string or name here
// names a built-in format, runtime or target.
//
// Every job returns a result that carries the facts a reader needs
// (source format, importer, opsets and IR version before and after, every
// adapter and expansion applied, warnings, timings, the verification
// reports), and errors classified by *Error (see Kind): bad usage or
// unreadable input, or a model that is invalid, blocked or not equivalent.
//
// Nothing here modifies a model given to it: transforms run on clones, and
// the imported model is kept to verify the result against, so no file is
// read twice.
package pipeline
