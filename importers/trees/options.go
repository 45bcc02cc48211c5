package trees

import (
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/options"
)

// The options every tree importer takes, declared once (each importer's
// OptionSet lists them beside its own).

// MLOpsetOption is "ml_opset": the ai.onnx.ml opset, lo to MaxMLOpset
// (default 5); more says what the lower opsets give.
func MLOpsetOption[T any](lo int, more string, field func(*T) *int) importers.Option[T] {
	return options.Int("ml_opset", "5", "ai.onnx.ml opset of the result (5: TreeEnsemble; "+more+")", field).Range(lo, MaxMLOpset)
}

// AIOpsetOption is "opset": the ai.onnx opset, MinAIOpset to MaxAIOpset
// (default 21).
func AIOpsetOption[T any](field func(*T) *int) importers.Option[T] {
	return options.Int("opset", "21", "ai.onnx opset of the result", field).Range(MinAIOpset, MaxAIOpset)
}

// RawScoreOption is "raw_score": true makes the raw score alone the
// output; what says which.
func RawScoreOption[T any](what string, field func(*T) *bool) importers.Option[T] {
	return options.Bool("raw_score", "false", what, field)
}
