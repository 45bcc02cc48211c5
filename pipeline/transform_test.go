package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/passes"
)

func TestTransforms(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in9 := "../fixtures/models/mlp_opset9/model.onnx"
	report := filepath.Join(dir, "passes.json")
	rep, err := Optimize(ctx, in9, filepath.Join(dir, "o.onnx"), passes.Builtin(), passes.RunOptions{}, TransformOptions{Samples: 2, Report: report})
	if err != nil || rep.MaxAbs < 0 || rep.After.Nodes > rep.Before.Nodes {
		t.Fatalf("Optimize: %+v, %v", rep, err)
	}
	var back map[string]any
	if b, err := os.ReadFile(report); err != nil || json.Unmarshal(b, &back) != nil || back["passes"] == nil {
		t.Errorf("report %s: %v %v", report, err, back)
	}
	f, err := Float16(ctx, in9, filepath.Join(dir, "h.onnx"), passes.FP16Options{}, TransformOptions{Samples: 1})
	if err != nil || !f.Equivalent || f.Converted == 0 {
		t.Fatalf("Float16: %+v, %v", f, err)
	}
	q, err := Quantize(ctx, "../fixtures/models/mlp_opset17/model.onnx", filepath.Join(dir, "q.onnx"),
		passes.QuantOptions{Mode: passes.Dynamic}, "", 2, TransformOptions{})
	if err != nil || q.Quantized == 0 {
		t.Fatalf("Quantize: %+v, %v", q, err)
	}
	for _, p := range []string{"o.onnx", "h.onnx", "q.onnx"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("not written: %v", err)
		}
	}
	// Quantize refuses opset 9 (invalid), and nothing replaces the input
	// without Force (input).
	if _, err := Quantize(ctx, in9, filepath.Join(dir, "q9.onnx"), passes.QuantOptions{Mode: passes.Dynamic}, "", 1, TransformOptions{}); KindOf(err) != KindInvalid {
		t.Errorf("opset 9 quantize: %v (kind %v)", err, KindOf(err))
	}
	same := filepath.Join(dir, "o.onnx")
	var oe *OverwriteError
	if _, err := Optimize(ctx, same, same, nil, passes.RunOptions{}, TransformOptions{}); !errors.As(err, &oe) || KindOf(err) != KindInput {
		t.Errorf("overwrite: %v", err)
	}
}
