package tflite

import (
	"slices"
	"testing"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// TestOpTable checks that the builtins this importer converts are the ones
// the op table of formats/tflite says it imports.
func TestOpTable(t *testing.T) {
	h := handlers()
	var got, want []string
	for _, o := range formats.Ops() {
		if _, ok := h[o.Builtin]; ok || o.Kind == formats.Unary || o.Kind == formats.Binary {
			got = append(got, o.Name)
		}
		if o.Imported() {
			want = append(want, o.Name)
		}
		if _, ok := h[o.Builtin]; ok && (o.Kind == formats.Unary || o.Kind == formats.Binary) {
			t.Errorf("%s is a %s row of the table and has a converter of its own", o.Name, o.Kind)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the importer converts\n%v\nthe table of formats/tflite says\n%v", got, want)
	}
	if _, ok := h[fb.BuiltinOperatorCUSTOM]; ok {
		t.Error("CUSTOM has a converter: custom ops are dispatched by name")
	}
}
