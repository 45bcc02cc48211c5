package tensorio

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

func TestSaveSamplesRoundTrip(t *testing.T) {
	// The stored inputs of a fixture, written and read back through the
	// same lookup verification uses.
	set := filepath.Join("..", "..", "fixtures", "models", "mlp_opset9", "test_data_set_0")
	x, err := canonical.ReadTensorFile(filepath.Join(set, "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	x.Name = "input"
	vals := []*canonical.Value{{Name: "input"}}
	for _, n := range []int{1, 3} {
		dir := t.TempDir()
		var samples [][]*canonical.Tensor
		for range n {
			samples = append(samples, []*canonical.Tensor{x})
		}
		if err := SaveSamples(dir, samples); err != nil {
			t.Fatal(err)
		}
		got, err := LoadSamples(dir, "input", vals, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d samples saved, %d read", n, len(got))
		}
		a, _ := x.Float64s()
		b, _ := got[n-1][0].Float64s()
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(x.Dims, got[n-1][0].Dims) {
			t.Fatalf("sample read back differs")
		}
	}
}
