package batch

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestTransformJobs: convert with fp16, quantize dynamic and optimize,
// as manifest entries; each result is verified against its source and
// holds what the transform makes (float16 weights, DynamicQuantizeLinear).
func TestTransformJobs(t *testing.T) {
	root := testpaths.RepoRoot(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "models", "mlp", "model.onnx")
	if err := os.MkdirAll(filepath.Dir(model), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "fixtures", "models", "mlp_opset17", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	src := []byte(`jobs:
  - {name: half, models: ["models/*/model.onnx"], fp16: true, keep_io_types: true}
  - {name: int8, models: ["models/*/model.onnx"], quantize: dynamic}
  - {name: opt, models: ["models/*/model.onnx"], opset: [17], optimize: true}
`)
	m, err := ParseManifest(src, dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"half:models/mlp/model.onnx convert+fp16":         true,
		"int8:models/mlp/model.onnx convert+int8-dynamic": true,
		"opt:models/mlp/model.onnx opset=17+optimize":     true,
	}
	for _, j := range jobs {
		if !want[j.ID] {
			t.Errorf("unexpected job %q", j.ID)
		}
		delete(want, j.ID)
	}
	for id := range want {
		t.Errorf("no job %q", id)
	}
	out := filepath.Join(dir, "out")
	for i := range m.Jobs {
		m.Jobs[i].KeepOutputs = true
	}
	if _, err := Run(context.Background(), m, Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	merged, err := Merge([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range merged.Jobs {
		if r.Status != StatusPass || r.Figures.Comparisons == 0 {
			t.Errorf("%s: %s %s (%d comparisons)", r.ID, r.Status, r.Message, r.Figures.Comparisons)
			continue
		}
		res, err := canonical.Load(filepath.Join(out, filepath.FromSlash(r.Output)), canonical.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ops := map[string]int{}
		half := 0
		for _, n := range res.Graph.Nodes {
			ops[n.OpType]++
		}
		for _, init := range res.Graph.Initializers {
			if init.Const != nil && init.Const.DataType == onnxpb.TensorProto_FLOAT16 {
				half++
			}
		}
		res.Close()
		switch r.Action {
		case ActionConvert:
			if r.ID[:4] == "half" && half == 0 {
				t.Errorf("%s: no float16 initializer", r.ID)
			}
			if r.ID[:4] == "int8" && ops["DynamicQuantizeLinear"] == 0 {
				t.Errorf("%s: no DynamicQuantizeLinear (ops %v)", r.ID, ops)
			}
		}
		t.Logf("%s: pass, max_abs %v", r.ID, *r.Figures.MaxAbs)
	}
}
