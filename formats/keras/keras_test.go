package keras

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// Load reads each kind of Keras file into its config and weights: the
// kind, the Keras version the file records, and the weights of a layer in
// Keras's order with the shapes Keras gave them.
func TestLoadKinds(t *testing.T) {
	for _, c := range []struct {
		path    string
		kind    Kind
		version string
	}{
		{"keras_v3/flownet_25-06_model/model.keras", KerasV3, "3.9.2"},
		{"keras_h5/hls4ml_KERAS_3layer/KERAS_3layer.json", JSONWeights, ""},
	} {
		t.Run(c.path, func(t *testing.T) {
			p := testpaths.Shared(t, "models", c.path)
			head, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if d := Detect(p, head[:min(len(head), 4096)]); d < 0.8 {
				t.Errorf("Detect = %g", d)
			}
			m, err := Load(context.Background(), p, "")
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != c.kind || (c.version != "" && m.KerasVersion != c.version) {
				t.Errorf("kind %s version %q", m.Kind, m.KerasVersion)
			}
			layers := 0
			for _, name := range topLayers(m.Config) {
				ws, err := m.Weights.LayerWeights([]string{name})
				if err != nil {
					t.Fatalf("layer %s: %v", name, err)
				}
				if len(ws) > 0 {
					layers++
					// A Dense kernel and bias: rank 2, then rank 1 of the
					// kernel's last dimension.
					if len(ws) == 2 && (len(ws[0].Tensor.Dims) != 2 || len(ws[1].Tensor.Dims) != 1 || ws[0].Tensor.Dims[1] != ws[1].Tensor.Dims[0]) {
						t.Errorf("layer %s: weights %v %v", name, ws[0].Tensor.Dims, ws[1].Tensor.Dims)
					}
				}
			}
			if layers == 0 {
				t.Error("no layer has weights")
			}
		})
	}
}

// topLayers lists the names of the model's top-level layers.
func topLayers(cfg map[string]any) []string {
	var layers []any
	switch c := cfg["config"].(type) {
	case map[string]any:
		layers, _ = c["layers"].([]any)
	case []any:
		layers = c
	}
	var out []string
	for _, l := range layers {
		lm, _ := l.(map[string]any)
		name, _ := lm["name"].(string)
		if c, ok := lm["config"].(map[string]any); ok && name == "" {
			name, _ = c["name"].(string)
		}
		out = append(out, name)
	}
	return out
}

// QKeras and HGQ classes are a *CustomLayerError naming the library; a
// weights .h5 given alone says to give the architecture JSON; a weights
// file beside the JSON that is a link out of its folder is not read.
func TestLoadRefusals(t *testing.T) {
	for p, lib := range map[string]string{
		"keras_h5/hls4ml_qkeras_3layer/qkeras_3layer.json":         "QKeras",
		"keras_h5/hls4ml_hgq_jet_classifier/hgq_jet_classifier.h5": "HGQ",
	} {
		_, err := Load(context.Background(), testpaths.Shared(t, "models", p), "")
		var ce *CustomLayerError
		if !errors.As(err, &ce) || ce.Library != lib || len(ce.Classes) == 0 {
			t.Errorf("%s: %v, want a *CustomLayerError from %s", p, err, lib)
		}
	}
	_, err := Load(context.Background(), testpaths.Shared(t, "models", "keras_h5/hls4ml_KERAS_3layer/KERAS_3layer_weights.h5"), "")
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "-O weights=") {
		t.Errorf("weights alone: %v", err)
	}
	_, err = Load(context.Background(), filepath.Join(testpaths.RepoRoot(t), "fixtures", "hostile", "keras", "json_symlink_weights", "model.json"), "")
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "outside the folder") {
		t.Errorf("symlinked weights: %v", err)
	}
}

// FuzzLoad: no input makes Detect or Load panic or hang; seeds are the
// Keras 3 zip, a Keras 2 full-model .h5 and an architecture JSON.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{"keras_v3/flownet_25-06_model/model.keras", "keras_h5/hls4ml_hgq_jet_classifier/hgq_jet_classifier.h5",
		"keras_h5/hls4ml_KERAS_conv1d_small/KERAS_conv1d_small.json"} {
		testpaths.AddFiles(f, testpaths.Shared(f, "models", p))
	}
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "m.keras")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = Detect(p, data[:min(len(data), 4096)])
		m, err := Load(context.Background(), p, "")
		if err != nil {
			return
		}
		for _, name := range topLayers(m.Config) {
			_, _ = m.Weights.LayerWeights([]string{name})
		}
	})
}
