package onnxspec

// schemas_gen.go is generated from the operator changelogs of the ONNX main
// snapshot (1.23 in development, ai.onnx opset 28: Attention-25, Celu-28,
// SwiGLU-28) found at ../../shared/onnx-main-1.23dev/docs (relative to this
// folder); pass -docs DIR to the generator to read another copy.
//go:generate go run ./internal/gen -docs ../../shared/onnx-main-1.23dev/docs -o schemas_gen.go
