// Package builtin lists the importers built into onnxconv. It is the one
// place a new built-in format is registered: one line in Importers.
//
// The order matters for detection ties (the earlier importer wins): formats
// with real magic numbers first, onnx last (a binary ModelProto has no
// magic number; its structural detection is weaker).
package builtin

import (
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/catboost"
	"github.com/onnxconv/onnxconv/importers/keras"
	"github.com/onnxconv/onnxconv/importers/lightgbm"
	"github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/importers/sklearn"
	"github.com/onnxconv/onnxconv/importers/tensorflow"
	"github.com/onnxconv/onnxconv/importers/tfjs"
	"github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/importers/torchscript"
	"github.com/onnxconv/onnxconv/importers/xgboost"
)

// Importers returns new values of the built-in importers, in detection
// order.
func Importers() []importers.Importer {
	return []importers.Importer{
		tflite.New(),
		torchscript.New(),
		tfjs.New(),
		xgboost.New(),
		lightgbm.New(),
		catboost.New(),
		sklearn.New(),
		keras.New(),
		tensorflow.New(),
		onnx.New(),
	}
}

// Registry returns a registry of the built-in importers. The built-ins
// have distinct names (TestRegistry checks it), so none is refused by
// Registry.Add; were one refused, it would be left out rather than
// panicking.
func Registry() *importers.Registry {
	r := &importers.Registry{}
	for _, imp := range Importers() {
		_ = r.Add(imp)
	}
	return r
}
