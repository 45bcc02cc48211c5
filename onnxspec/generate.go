package onnxspec

// schemas_gen.go is generated from the ONNX 1.22 operator changelogs found
// at ../../shared/onnx-v1.22/docs (relative to this folder); pass
// -docs DIR to the generator to read another copy.
//go:generate go run ./internal/gen -docs ../../shared/onnx-v1.22/docs -o schemas_gen.go
