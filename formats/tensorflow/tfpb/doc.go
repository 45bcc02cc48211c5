// Package tfpb is the Go code generated from TensorFlow 2.15's .proto
// files (GraphDef, FunctionDef, SavedModel, MetaGraphDef, SavedObjectGraph,
// BundleHeaderProto/BundleEntryProto) by gen.sh; do not edit the .pb.go
// files.
package tfpb

//go:generate bash gen.sh
