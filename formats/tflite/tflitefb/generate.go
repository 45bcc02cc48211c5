// Package tflitefb holds the Go flatbuffers accessors for the TFLite schema.
//
// schema.fbs is tensorflow/compiler/mlir/lite/schema/schema.fbs (from
// tflite-micro commit 90b983c2b3f1) with three "(deprecated)" attributes on an
// enum value, a union member and a table removed, which flatc 2.0.8 rejects.
package tflitefb

//go:generate flatc --go --go-namespace tflitefb -o .. schema.fbs
