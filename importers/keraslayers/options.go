package keraslayers

import (
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/options"
)

// The options the importers of Keras-layer models (keras, tfjs) share,
// declared once.

// OpsetOption is "opset": the ai.onnx opset of the result, 14 to 21
// (default 17).
func OpsetOption[T any](field func(*T) *int) importers.Option[T] {
	return options.Int("opset", "17", "ai.onnx opset of the result", field).Range(14, 21)
}

// LayoutOption is "layout": one of Layouts, case and spaces ignored
// (default nhwc); a value that is none is a *LayoutError. doc says what
// nchw makes channels-first.
func LayoutOption[T any](doc string, field func(*T) *string) importers.Option[T] {
	o := options.Enum("layout", LayoutNHWC, doc, Layouts(), field)
	o.Invalid = func(v string, _ error) error { return &LayoutError{Layout: v} }
	return o
}
