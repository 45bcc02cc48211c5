// Package pluginpb holds the gRPC service definitions of the onnxconv plugin
// protocol (plugin.proto) and the Go code generated from them by
// protoc-gen-go and protoc-gen-go-grpc.
//
// Only plugin.proto and this file are written by hand. Regenerate with
// `go generate ./plugins/pluginpb` (needs protoc, protoc-gen-go and
// protoc-gen-go-grpc on PATH); the generated files are committed so that
// building needs no protoc.
package pluginpb

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative plugin.proto
