package tflite

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// WithOutputs extends the main subgraph's outputs of a copy (each tensor
// once) and drops its signatures; the model itself is left as it was.
func TestWithOutputs(t *testing.T) {
	model, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "tflite", "unnamed_sig.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	if fb.GetRootAsModel(model, 0).SignatureDefsLength() == 0 {
		t.Fatal("the fixture has no signature")
	}
	before, err := OutputIndexes(model)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mainSubgraph(model)
	if err != nil {
		t.Fatal(err)
	}
	// Every tensor that is not an output yet, and one that is.
	var extra []int32
	for i := int32(0); i < int32(g.TensorsLength()); i++ {
		if !slices.Contains(before, i) {
			extra = append(extra, i)
		}
	}
	cp, err := WithOutputs(model, append(extra, before[0]))
	if err != nil {
		t.Fatal(err)
	}
	after, err := OutputIndexes(cp)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(slices.Clone(before), extra...); !slices.Equal(after, want) {
		t.Errorf("outputs %v, want %v", after, want)
	}
	if n := fb.GetRootAsModel(cp, 0).SignatureDefsLength(); n != 0 {
		t.Errorf("%d signatures left", n)
	}
	if io, err := MainIO(cp); err != nil || len(io.OutRaw) != len(after) {
		t.Errorf("MainIO of the copy: %v, %d outputs", err, len(io.OutRaw))
	}
	if len(cp) < len(model) || len(cp)%4 != 0 {
		t.Errorf("copy of %d bytes from %d", len(cp), len(model))
	}
	if again, _ := OutputIndexes(model); !slices.Equal(again, before) {
		t.Errorf("the model itself changed: outputs %v", again)
	}
	if _, err := WithOutputs(model, []int32{int32(g.TensorsLength())}); err == nil {
		t.Error("a tensor out of range gave no error")
	}
	if _, err := WithOutputs([]byte("not a model"), nil); err == nil {
		t.Error("bytes that are no model gave no error")
	}
	if _, err := TensorIndex(model, "no such tensor"); err == nil {
		t.Error("an unknown name gave no error")
	}
}
