package verify

import (
	"encoding/json"

	"github.com/onnxconv/onnxconv/canonical"
)

// InputValuesKey is the model metadata key under which an importer
// records the values an integer graph input must hold for the source to
// compute what the converted graph computes, as JSON {"NAME": [v, …]}: a
// TFLite TRANSPOSE_CONV whose output_shape is a graph input (the converted
// graph takes its declared output shape, which the interpreter computes
// only when fed that shape). Generated inputs take them; --inputs may give
// others.
const InputValuesKey = "onnxconv.input_values"

// InputValues returns the values recorded under InputValuesKey (nil when
// none, or when the metadata does not parse).
func InputValues(m *canonical.Model) map[string][]int64 {
	for _, p := range m.MetadataProps {
		if p.Key != InputValuesKey {
			continue
		}
		var out map[string][]int64
		if err := json.Unmarshal([]byte(p.Value), &out); err != nil {
			return nil
		}
		return out
	}
	return nil
}

// fixedInput returns v's recorded value as a tensor of v's type when it
// fits v's shape, else nil.
func fixedInput(v *canonical.Value, values []int64, dt canonical.DataType, shape []int64) *canonical.Tensor {
	n, err := canonical.NumElements(shape)
	if err != nil || n != int64(len(values)) || !canonical.IsIntType(dt) {
		return nil
	}
	f := make([]float64, len(values))
	for i, x := range values {
		f[i] = float64(x)
	}
	return canonical.NumberTensor(v.Name, dt, shape, f)
}
