package tfjs

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/formats/keras"
)

// KerasError is a Keras file the runtime could not turn into a TF.js
// layers model: not a well-formed Keras file, a custom layer (Err is then
// formats/keras's *keras.CustomLayerError or *keras.FormatError, reachable
// with errors.As), weights that do not fit.
type KerasError struct {
	Model string
	Err   error
}

func (e *KerasError) Error() string {
	return fmt.Sprintf("tfjs runtime: %s: cannot run the Keras file on TF.js: %v", e.Model, e.Err)
}

func (e *KerasError) Unwrap() error { return e.Err }

// looksLikeKeras tells whether the file at path is one formats/keras
// reads (a .keras zip, a full-model .h5, a Keras architecture JSON, or
// Keras weights alone, which Load then refuses naming what to give).
func looksLikeKeras(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 1<<16)
	n, _ := f.Read(head)
	return keras.Detect(path, head[:n]) > 0
}

// writeKerasAsTFJS reads the Keras file at path with formats/keras (the
// loader importers/keras uses) (the weights .h5 of an architecture JSON is found beside it) and
// writes it into dir as a TF.js layers model: model.json (the topology in
// the Keras 2 form TF.js 4.22 deserializes, and a weights manifest) and
// weights.bin (float32). Each manifest entry is named LAYER/INDEX, INDEX
// the weight's position in the top-level layer's Keras order; runner.js
// gives each layer its weights in that order (setWeights), so the names
// TF.js would give the variables do not matter. It returns the path of
// model.json and the Keras kind of the file.
func writeKerasAsTFJS(ctx context.Context, path, dir string) (string, keras.Kind, error) {
	m, err := keras.Load(ctx, path, "")
	if err != nil {
		return "", "", &KerasError{Model: path, Err: err}
	}
	var bin bytes.Buffer
	entries := []map[string]any{}
	for _, name := range topLayers(m.Config) {
		ws, err := m.Weights.LayerWeights([]string{name})
		if err != nil {
			return "", "", &KerasError{Model: path, Err: fmt.Errorf("weights of layer %q: %w", name, err)}
		}
		for i, w := range ws {
			v, err := w.Tensor.Float64s()
			if err != nil {
				return "", "", &KerasError{Model: path, Err: fmt.Errorf("weight %d of layer %q: %w", i, name, err)}
			}
			// The weights are float32: the round trip through float64 is
			// exact.
			raw := make([]byte, 0, 4*len(v))
			for _, x := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(x)))
			}
			bin.Write(raw)
			dims := w.Tensor.Dims
			if dims == nil {
				dims = []int64{}
			}
			entries = append(entries, map[string]any{"name": fmt.Sprintf("%s/%d", name, i), "shape": dims, "dtype": "float32"})
		}
	}
	mj := map[string]any{
		"format":          "layers-model",
		"generatedBy":     fmt.Sprintf("onnxconv runtimes/tfjs from %s (%s)", filepath.Base(path), m.Kind),
		"modelTopology":   tfjsTopology(m.Config),
		"weightsManifest": []any{map[string]any{"paths": []string{"weights.bin"}, "weights": entries}},
	}
	b, err := json.Marshal(mj)
	if err != nil {
		return "", "", &KerasError{Model: path, Err: fmt.Errorf("writing the TF.js topology: %w", err)}
	}
	out := filepath.Join(dir, "model.json")
	if err := os.WriteFile(out, b, 0o600); err != nil {
		return "", "", fmt.Errorf("tfjs runtime: %s: %w", path, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), bin.Bytes(), 0o600); err != nil {
		return "", "", fmt.Errorf("tfjs runtime: %s: %w", path, err)
	}
	return out, m.Kind, nil
}

// tfjsTopology rewrites a Keras model config into the Keras 2 form TF.js
// 4.22 deserializes: Keras 3's dtype policies become dtype names,
// batch_shape becomes batch_input_shape, the Keras 3 inbound_nodes
// ({"args": [keras tensors]}) become [[[layer, node, tensor, {}], ...]],
// LeakyReLU's negative_slope becomes alpha, and the keys TF.js does not
// know (module, registered_name, build_config, ...) go. The architecture
// is not changed.
func tfjsTopology(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x["class_name"] == "DTypePolicy" || x["class_name"] == "Policy" {
			if c, ok := x["config"].(map[string]any); ok {
				return c["name"]
			}
		}
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "module", "registered_name", "build_config", "compile_config", "shared_object_id":
				continue
			case "batch_shape":
				out["batch_input_shape"] = tfjsTopology(e)
				continue
			case "negative_slope":
				out["alpha"] = e
				continue
			case "inbound_nodes":
				out[k] = inbound(e)
				continue
			}
			out[k] = tfjsTopology(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tfjsTopology(e)
		}
		return out
	}
	return v
}

// inbound converts Keras 3 inbound_nodes to the Keras 2 form (Keras 2
// forms pass through).
func inbound(v any) any {
	nodes, ok := v.([]any)
	if !ok {
		return v
	}
	out := []any{}
	for _, n := range nodes {
		nm, ok := n.(map[string]any)
		if !ok {
			out = append(out, n)
			continue
		}
		refs := []any{}
		collectRefs(nm["args"], &refs, 0)
		out = append(out, refs)
	}
	return out
}

// collectRefs appends the [layer, node, tensor, {}] reference of every
// Keras 3 __keras_tensor__ in a, in order (maps are walked in key order;
// Keras 3 args are lists, so the order of the tensors is kept).
func collectRefs(a any, refs *[]any, depth int) {
	if depth > 64 {
		return
	}
	switch y := a.(type) {
	case map[string]any:
		if y["class_name"] == "__keras_tensor__" {
			c, _ := y["config"].(map[string]any)
			h, _ := c["keras_history"].([]any)
			if len(h) == 3 {
				*refs = append(*refs, []any{h[0], h[1], h[2], map[string]any{}})
			}
			return
		}
		for _, k := range sortedKeys(y) {
			collectRefs(y[k], refs, depth+1)
		}
	case []any:
		for _, e := range y {
			collectRefs(e, refs, depth+1)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// modelLayers returns the top-level layer configs of a Keras model config
// (a Sequential's list or a Functional's "layers", under "model_config"
// in a model.json).
func modelLayers(cfg map[string]any) []any {
	if mc, ok := cfg["model_config"].(map[string]any); ok {
		cfg = mc
	}
	switch c := cfg["config"].(type) {
	case map[string]any:
		layers, _ := c["layers"].([]any)
		return layers
	case []any:
		return c
	}
	return nil
}

// topLayers lists the names of the model's top-level layers.
func topLayers(cfg map[string]any) []string {
	var out []string
	for _, l := range modelLayers(cfg) {
		lm, _ := l.(map[string]any)
		name, _ := lm["name"].(string)
		if c, ok := lm["config"].(map[string]any); ok && name == "" {
			name, _ = c["name"].(string)
		}
		out = append(out, name)
	}
	return out
}

// resetAfterGRULayers lists the top-level GRU layers of a Keras model
// config with reset_after=true: TF.js's GRUCell refuses them, and
// runner.js computes them with its reset-after GRU in TF.js ops (the same
// rule as runner.js's withResetAfterGRU).
func resetAfterGRULayers(cfg map[string]any) []string {
	var out []string
	for _, l := range modelLayers(cfg) {
		lm, _ := l.(map[string]any)
		c, _ := lm["config"].(map[string]any)
		if lm["class_name"] != "GRU" || c == nil || c["reset_after"] != true {
			continue
		}
		name, _ := c["name"].(string)
		if name == "" {
			name, _ = lm["name"].(string)
		}
		out = append(out, name)
	}
	return out
}

// modelNote says how the runtime computes the Keras file at path when it
// does not run it on TF.js's layers alone: "" for a TF.js model.json, a
// file that is not Keras or that cannot be read (Open then says why).
func modelNote(path string) string {
	if looksLikeTFJS(path) || !looksLikeKeras(path) {
		return ""
	}
	m, err := keras.Load(context.Background(), path, "")
	if err != nil {
		return ""
	}
	names := resetAfterGRULayers(m.Config)
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("a reset-after GRU in TF.js ops for layer(s) %s, which TF.js's GRUCell refuses", strings.Join(names, ", "))
}

// uniqueNames renames repeated output names as importers/keraslayers names
// the ONNX outputs (a repeat at position i becomes NAME_i).
func uniqueNames(names []string) []string {
	seen := map[string]bool{}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if seen[n] {
			out[i] = fmt.Sprintf("%s_%d", n, i)
		}
		seen[out[i]] = true
	}
	return out
}
