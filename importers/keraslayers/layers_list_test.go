package keraslayers

import (
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/formats/keras"
)

// formats/keras refuses a Keras file holding a class not in keras.Layers
// before any graph is built (for the importer and for the TF.js runtime
// alike): that list must be exactly the classes this package maps.
func TestLayersListMatchesTable(t *testing.T) {
	want := Supported()
	got := slices.Clone(keras.Layers())
	slices.Sort(got)
	for _, c := range want {
		if _, ok := slices.BinarySearch(got, c); !ok {
			t.Errorf("keraslayers maps %s, formats/keras Layers() does not list it (files using it are refused)", c)
		}
	}
	for _, c := range got {
		if _, ok := slices.BinarySearch(want, c); !ok {
			t.Errorf("formats/keras Layers() lists %s, keraslayers does not map it", c)
		}
	}
	if len(got) != len(want) {
		t.Errorf("formats/keras Layers() has %d classes, keraslayers maps %d", len(got), len(want))
	}
}
