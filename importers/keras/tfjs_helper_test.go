package keras_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/importers/keras"
	"github.com/onnxconv/onnxconv/importers/tfops/onnxb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// tfjsTopology rewrites a Keras model config into the Keras 2 form TF.js
// 4.22 deserializes: Keras 3's dtype policies become dtype names,
// batch_shape becomes batch_input_shape, the Keras 3 inbound_nodes
// ({"args": [keras tensors]}) become [[[layer, node, tensor, {}], ...]],
// LeakyReLU's negative_slope becomes alpha, and the keys TF.js does not
// know (module, registered_name, build_config) go. The architecture is
// not changed.
func tfjsTopology(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		if x["class_name"] == "DTypePolicy" || x["class_name"] == "Policy" {
			if c, ok := x["config"].(map[string]any); ok {
				return c["name"]
			}
		}
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
		var refs []any
		var walk func(a any)
		walk = func(a any) {
			switch y := a.(type) {
			case map[string]any:
				if y["class_name"] == "__keras_tensor__" {
					c, _ := y["config"].(map[string]any)
					h, _ := c["keras_history"].([]any)
					if len(h) == 3 {
						refs = append(refs, []any{h[0], h[1], h[2], map[string]any{}})
					}
					return
				}
				for _, e := range y {
					walk(e)
				}
			case []any:
				for _, e := range y {
					walk(e)
				}
			}
		}
		walk(nm["args"])
		out = append(out, refs)
	}
	return out
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

type wireTensor struct {
	Shape []int64   `json:"shape"`
	Data  []float32 `json:"data"`
}

// runTFJS exports m's architecture and weights to TF.js layers format in a
// temporary folder and computes the model on inputs with TF.js 4.22.0
// (testdata/tfjs_predict.js).
func runTFJS(t *testing.T, m *keras.Model, inputs []wireTensor) []wireTensor {
	t.Helper()
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	dir := t.TempDir()
	var bin bytes.Buffer
	var entries []map[string]any
	for _, name := range topLayers(m.Config) {
		ws, err := m.Weights.LayerWeights([]string{name})
		if err != nil {
			t.Fatalf("weights of %s: %v", name, err)
		}
		for i, w := range ws {
			v, err := onnxb.F32s(w.Tensor)
			if err != nil {
				t.Fatal(err)
			}
			bin.Write(onnxb.F32Bytes(v))
			entries = append(entries, map[string]any{"name": fmt.Sprintf("%s/%d", name, i), "shape": w.Tensor.Dims, "dtype": "float32"})
		}
	}
	mj := map[string]any{
		"format":          "layers-model",
		"generatedBy":     "onnxconv importers/keras test helper",
		"modelTopology":   tfjsTopology(m.Config),
		"weightsManifest": []any{map[string]any{"paths": []string{"weights.bin"}, "weights": entries}},
	}
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("model.json", mj)
	write("inputs.json", inputs)
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), bin.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "tfjs_predict.js"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, dir)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TF.js: %v\n%s", err, lastLines(stderr.String(), 20))
	}
	var res struct {
		Outputs []wireTensor `json:"outputs"`
		Version string       `json:"version"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("TF.js answer: %v", err)
	}
	if res.Version != "4.22.0" {
		t.Fatalf("TF.js %s, want 4.22.0", res.Version)
	}
	return res.Outputs
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
