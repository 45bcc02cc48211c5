package keras

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// A .keras file unpacked into a folder loads through its config.json as
// the zip does: the same config, version and weights; a config.json whose
// model.weights.h5 is a link leading out of the folder is refused.
func TestLoadUnpacked(t *testing.T) {
	p := testpaths.Shared(t, "models", "keras_v3", "flownet_25-06_model", "model.keras")
	dir := testpaths.Unzip(t, p)
	z, err := Load(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	u, err := Load(context.Background(), filepath.Join(dir, "config.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	if u.Kind != KerasV3 || u.KerasVersion != z.KerasVersion || !reflect.DeepEqual(u.Config, z.Config) {
		t.Fatalf("unpacked: kind %s version %q; zip: version %q", u.Kind, u.KerasVersion, z.KerasVersion)
	}
	n := 0
	for _, name := range topLayers(z.Config) {
		zw, err1 := z.Weights.LayerWeights([]string{name})
		uw, err2 := u.Weights.LayerWeights([]string{name})
		if err1 != nil || err2 != nil || len(zw) != len(uw) {
			t.Fatalf("layer %s: %v %v, %d and %d weights", name, err1, err2, len(zw), len(uw))
		}
		for i := range zw {
			a, _ := zw[i].Tensor.Bytes()
			b, _ := uw[i].Tensor.Bytes()
			if !bytes.Equal(a, b) || len(a) == 0 {
				t.Errorf("layer %s weight %d differs", name, i)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no weights compared")
	}
	outside := filepath.Join(t.TempDir(), "model.weights.h5")
	if err := os.Rename(filepath.Join(dir, "model.weights.h5"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "model.weights.h5")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), filepath.Join(dir, "config.json"), ""); err == nil {
		t.Error("a weights link leading out of the folder was followed")
	}
}
