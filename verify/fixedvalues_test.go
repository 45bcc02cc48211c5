package verify

import (
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestInputValues: an integer input with a value recorded under
// InputValuesKey is generated as that value (every sample), one whose
// recorded value does not fit its shape is generated as usual, and a
// range asked for wins over the record.
func TestInputValues(t *testing.T) {
	m := freeRankModel(t, "Add", nil)
	for _, name := range []string{"shape", "odd"} {
		if _, err := m.Graph.AddInput(name, canonical.TensorType(canonical.Int32, []int64{4})); err != nil {
			t.Fatal(err)
		}
	}
	m.MetadataProps = append(m.MetadataProps, canonical.StringPair{Key: InputValuesKey, Value: `{"shape":[1,22,32,3],"odd":[1,2]}`})
	for k := range 2 {
		ins, err := GenerateInputs(m, GenOptions{Seed: 1}, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ins[1].Int64s()
		if err != nil || !slices.Equal(got, []int64{1, 22, 32, 3}) {
			t.Errorf("sample %d: shape input %v (%v), want [1 22 32 3]", k, got, err)
		}
		if odd, _ := ins[2].Int64s(); len(odd) != 4 {
			t.Errorf("sample %d: the input whose record does not fit: %v", k, odd)
		}
	}
	ins, err := GenerateInputs(m, GenOptions{Seed: 1, Ranges: map[string]Range{"shape": {Lo: 100, Hi: 100}}}, 0)
	if got, _ := ins[1].Int64s(); err != nil || !slices.Equal(got, []int64{100, 100, 100, 100}) {
		t.Errorf("with a range: %v (%v), want 100s", got, err)
	}
}
