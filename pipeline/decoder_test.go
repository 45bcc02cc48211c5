package pipeline

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestDecoderToOpset23Optimized converts the torch-exported decoders of
// fixtures/decoders to opset 23 with --optimize: the passes run after the
// upgrade, so the Llama-style RMSNorm becomes RMSNormalization (one per
// norm: 2 per layer and the final one) and GPT-2's LayerNorm
// LayerNormalization, the rotate-half RoPE of Q and K RotaryEmbedding,
// each layer's attention over its concatenated cache
// (dynamic batch and sequence, a causal mask) becomes Attention, and the
// result verifies over a prefill and 3 decode
// steps against the source (ONNX Runtime when installed, else the
// executor).
func TestDecoderToOpset23Optimized(t *testing.T) {
	for name, want := range map[string]map[string]int{
		"llama": {"RMSNormalization": 5, "RotaryEmbedding": 4, "Attention": 2},
		"gpt2":  {"LayerNormalization": 5, "Attention": 2},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "o.onnx")
			res, err := Convert(context.Background(), filepath.Join("..", "fixtures", "decoders", name, "model.onnx"), out,
				Options{Env: builtins(), Opset: 23, Optimize: true, Verify: &VerifyOptions{}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Equivalent || len(res.Comparisons) == 0 {
				t.Fatalf("equivalent %v after %d comparisons", res.Equivalent, len(res.Comparisons))
			}
			for _, c := range res.Comparisons {
				if c.Report.Decode == nil || c.Report.Decode.Steps != 3 {
					t.Errorf("%s: not verified over decode steps: %s", c.What, c.Report.Summary)
				}
			}
			m, err := canonical.Load(out, canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			count := map[string]int{}
			for _, n := range m.Graph.Nodes {
				count[n.OpType]++
			}
			if m.Opset("") != 23 {
				t.Errorf("opset %d", m.Opset(""))
			}
			for op, n := range want {
				if count[op] != n {
					t.Errorf("%d %s nodes, want %d (%v)", count[op], op, n, count)
				}
			}
		})
	}
}
