package tfops

import "github.com/onnxconv/onnxconv/importers"

// TensorsOption is an option ("inputs", "outputs") that names TF tensors,
// NAME:0,… (ParseTensors), stored in the field field returns: the graph is
// cut there, as tf2onnx's --inputs and --outputs do.
func TensorsOption[T any](name, doc string, field func(*T) *[]IO) importers.Option[T] {
	return importers.Option[T]{Spec: importers.OptionSpec{Name: name, Kind: importers.KindList, Doc: doc},
		Set: func(o *T, v string) (err error) {
			*field(o), err = ParseTensors(v)
			return err
		}}
}
