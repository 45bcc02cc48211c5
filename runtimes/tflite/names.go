package tflite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	formats "github.com/onnxconv/onnxconv/formats/tflite"
)

// A model whose input or output tensor names are empty or repeated cannot
// bind by name: its inputs bind by position, named as the importer names
// them (formats/tflite IONames: signature keys, else input_K/output_K),
// and its outputs get those names too.

// inModelOrder orders inputs as the model's inputs when the model's
// tensor names are empty or repeated and cannot bind them: each input
// named as the importer names the model's input (formats/tflite
// IONames) goes to its position; unnamed inputs keep theirs.
func inModelOrder(names formats.IO, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	if len(inputs) != len(names.InONNX) {
		return inputs, nil // the runner says how many it takes
	}
	out := make([]*onnxpb.TensorProto, len(inputs))
	for k, in := range inputs {
		j := k
		if in.GetName() != "" {
			j = slices.Index(names.InONNX, in.GetName())
			if j < 0 {
				return nil, fmt.Errorf("no model input is named %q: the model's input names are empty or repeated, so its inputs are named by position: %s",
					in.GetName(), strings.Join(names.InONNX, ", "))
			}
		}
		if out[j] != nil {
			return nil, fmt.Errorf("two inputs for the model's input %d (%q)", j, names.InONNX[j])
		}
		out[j] = in
	}
	return out, nil
}
