package tflite

import (
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func TestTensorNames(t *testing.T) {
	got := TensorNames([]string{"", "x", "x", "", "x_2", "x", "a\x00b"})
	want := []string{"tensor_0", "x", "x_2", "tensor_3", "x_2_4", "x_5", "ab"}
	if !slices.Equal(got, want) {
		t.Errorf("TensorNames = %q, want %q", got, want)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("%q given twice", n)
		}
		seen[n] = true
	}
}

// FuzzMainIO: any bytes give names or an error, never a panic.
func FuzzMainIO(f *testing.F) {
	testpaths.AddFiles(f, "../../fixtures/tflite/*.tflite")
	f.Add([]byte("\x1c\x00\x00\x00TFL3"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		io, err := MainIO(b)
		if err == nil && (len(io.InRaw) != len(io.InONNX) || len(io.OutRaw) != len(io.OutONNX)) {
			t.Fatalf("names out of step: %+v", io)
		}
	})
}
