package tflite

import (
	"maps"
	"slices"
	"testing"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
)

// TestOpTable checks that the ONNX ops this exporter converts are the ones
// the op table of formats/tflite says it exports.
func TestOpTable(t *testing.T) {
	got := append(slices.Collect(maps.Keys(handlers())), loweredOps()...)
	for _, o := range formats.Ops() {
		if o.Kind == formats.Unary || o.Kind == formats.Binary {
			got = append(got, o.ONNX)
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	if want := formats.Exported(); !slices.Equal(got, want) {
		t.Errorf("the exporter converts\n%v\nthe table of formats/tflite says\n%v", got, want)
	}
}
