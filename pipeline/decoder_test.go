package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/passes"
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
			count, opset := countOps(t, out), opsetOf(t, out)
			if opset != 23 {
				t.Errorf("opset %d", opset)
			}
			for op, n := range want {
				if count[op] != n {
					t.Errorf("%d %s nodes, want %d (%v)", count[op], op, n, count)
				}
			}
		})
	}
}

// TestDecoderToOpset28AndBack converts the decoders to opset 28 with
// --optimize (fused Attention, RMSNormalization, RotaryEmbedding, and the
// Llama-style SiLU-gated MLP as SwiGLU) and that result back down to 17:
// the fused ops are expanded again although the batch and sequence lengths
// are dynamic, and each step verifies over a prefill and 3 decode steps.
func TestDecoderToOpset28AndBack(t *testing.T) {
	for name, swiglu := range map[string]int{"llama": 2, "gpt2": 0} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			up, down := filepath.Join(dir, "o28.onnx"), filepath.Join(dir, "o17.onnx")
			for _, step := range []struct {
				in, out string
				opset   int
			}{
				{filepath.Join("..", "fixtures", "decoders", name, "model.onnx"), up, 28},
				{up, down, 17},
			} {
				res, err := Convert(context.Background(), step.in, step.out,
					Options{Env: builtins(), Opset: step.opset, Optimize: step.opset == 28, Verify: &VerifyOptions{}})
				if err != nil {
					t.Fatalf("to opset %d: %v", step.opset, err)
				}
				if !res.Equivalent || len(res.Comparisons) == 0 || res.Comparisons[0].Report.Decode == nil {
					t.Fatalf("to opset %d: equivalent %v over %d comparisons", step.opset, res.Equivalent, len(res.Comparisons))
				}
			}
			if n := countOps(t, up)["SwiGLU"]; n != swiglu {
				t.Errorf("%d SwiGLU nodes at opset 28, want %d", n, swiglu)
			}
			m, err := canonical.Load(down, canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, n := range m.Graph.Nodes {
				if n.OpType == "Attention" || n.OpType == "RotaryEmbedding" || n.OpType == "RMSNormalization" || n.OpType == "SwiGLU" {
					t.Errorf("opset 17 result keeps %s", n.OpType)
				}
			}
		})
	}
}

// countOps counts the op types of the main graph of the model at path.
func countOps(t *testing.T, path string) map[string]int {
	t.Helper()
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	count := map[string]int{}
	for _, n := range m.Graph.Nodes {
		count[n.OpType]++
	}
	return count
}

// TestDecoderToORTContribAndBack converts the decoders to opset 23 with
// --optimize for --target onnxruntime-1.30 (the fused ops become ONNX
// Runtime's contrib ops: GroupQueryAttention or MultiHeadAttention,
// RotaryEmbedding, Skip(Simplified)LayerNormalization) and that result to
// the plain onnx-opset23 and onnx-opset17 targets (back to standard ops,
// expanded below 23); every step verifies over a prefill and 3 decode
// steps.
func TestDecoderToORTContribAndBack(t *testing.T) {
	for name, want := range map[string]map[string]int{
		"llama": {"GroupQueryAttention": 2, "RotaryEmbedding": 4, "SkipSimplifiedLayerNormalization": 4},
		"gpt2":  {"MultiHeadAttention": 2, "SkipLayerNormalization": 5},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ort := filepath.Join(dir, "ort.onnx")
			steps := []struct {
				in, out, target string
				opset           int
			}{
				{filepath.Join("..", "fixtures", "decoders", name, "model.onnx"), ort, "onnxruntime-1.30", 23},
				{ort, filepath.Join(dir, "o23.onnx"), "onnx-opset23", 0},
				{ort, filepath.Join(dir, "o17.onnx"), "onnx-opset17", 0},
			}
			for _, step := range steps {
				res, err := Convert(context.Background(), step.in, step.out,
					Options{Env: builtins(), Opset: step.opset, Target: step.target, Optimize: step.opset != 0, Verify: &VerifyOptions{}})
				if err != nil {
					t.Fatalf("to %s: %v", step.target, err)
				}
				if !res.Equivalent || len(res.Comparisons) == 0 || res.Comparisons[0].Report.Decode == nil {
					t.Fatalf("to %s: equivalent %v over %d comparisons", step.target, res.Equivalent, len(res.Comparisons))
				}
			}
			count := countOps(t, ort)
			for op, n := range want {
				if count[op] != n {
					t.Errorf("%d %s nodes for onnxruntime-1.30, want %d (%v)", count[op], op, n, count)
				}
			}
			for _, s := range steps[1:] {
				for op := range want {
					if n := countOps(t, s.out)[op]; n != 0 && op != "RotaryEmbedding" {
						t.Errorf("%s keeps %d %s nodes", s.target, n, op)
					}
				}
			}
			if n := countOps(t, steps[2].out)["RotaryEmbedding"]; n != 0 {
				t.Errorf("onnx-opset17 keeps %d RotaryEmbedding nodes", n)
			}
		})
	}
}

// opsetOf is the ai.onnx opset of the model at path.
func opsetOf(t *testing.T, path string) int64 {
	t.Helper()
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	return m.Opset("")
}

// TestDecoderToORTContribBelow23 converts the decoders, at opset 17, for
// --target onnxruntime-1.30 with --optimize and no --opset: the passes
// fuse on a copy at opset 23, that copy gets ONNX Runtime's contrib ops
// there, and the rest goes back to 17; the result keeps opset 17, holds
// the contrib ops and verifies over a prefill and 3 decode steps.
func TestDecoderToORTContribBelow23(t *testing.T) {
	for name, want := range map[string]map[string]int{
		"llama": {"GroupQueryAttention": 2, "RotaryEmbedding": 4, "SkipSimplifiedLayerNormalization": 4},
		"gpt2":  {"MultiHeadAttention": 2, "SkipLayerNormalization": 5},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ort.onnx")
			res, err := Convert(context.Background(), filepath.Join("..", "fixtures", "decoders", name, "model.onnx"), out,
				Options{Env: builtins(), Target: "onnxruntime-1.30", Optimize: true, Verify: &VerifyOptions{}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Equivalent || len(res.Comparisons) == 0 {
				t.Fatalf("equivalent %v over %d comparisons", res.Equivalent, len(res.Comparisons))
			}
			for _, c := range res.Comparisons {
				if c.Report.Decode == nil || c.Report.Decode.Steps != 3 {
					t.Errorf("%s: not verified over decode steps: %s", c.What, c.Report.Summary)
				}
				t.Logf("%s: %s", c.What, c.Report.Summary)
			}
			if opset := opsetOf(t, out); opset != 17 {
				t.Errorf("opset %d, want the model's 17", opset)
			}
			count := countOps(t, out)
			for op, n := range want {
				if count[op] != n {
					t.Errorf("%d %s nodes, want %d (%v)", count[op], op, n, count)
				}
			}
		})
	}
}

// TestInt4DecoderToStandardAndBack converts the Llama fixture quantized to
// MatMulNBits (int4) to onnx-opset23 (blockwise DequantizeLinear + MatMul)
// and that back to onnxruntime-1.30 (MatMulNBits): both verify over a
// prefill and 3 decode steps, the second against the standard form run in
// ONNX Runtime as written (its optimizer would compute the MatMuls with
// 8-bit activations) and run in ONNX Runtime.
func TestInt4DecoderToStandardAndBack(t *testing.T) {
	dir := t.TempDir()
	m, err := canonical.Load(filepath.Join("..", "fixtures", "decoders", "llama", "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	q, _, err := passes.Quantize(context.Background(), m, passes.QuantOptions{Mode: passes.Int4, Format: passes.MatMulNBits})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	int4 := filepath.Join(dir, "int4.onnx")
	if err := canonical.Save(int4, q, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	std, back := filepath.Join(dir, "std.onnx"), filepath.Join(dir, "back.onnx")
	for _, step := range []struct{ in, out, target, op string }{
		{int4, std, "onnx-opset23", "DequantizeLinear"},
		{std, back, "onnxruntime-1.30", "MatMulNBits"},
	} {
		res, err := Convert(context.Background(), step.in, step.out, Options{Env: builtins(), Target: step.target, Verify: &VerifyOptions{}})
		if err != nil {
			t.Fatalf("to %s: %v", step.target, err)
		}
		if !res.Equivalent || len(res.Comparisons) == 0 || res.Comparisons[0].Report.Decode == nil {
			t.Fatalf("to %s: equivalent %v over %d comparisons", step.target, res.Equivalent, len(res.Comparisons))
		}
		for _, c := range res.Comparisons {
			t.Logf("to %s: %s: %s", step.target, c.What, c.Report.Summary)
		}
		if n := countOps(t, step.out)[step.op]; n != 15 {
			t.Errorf("to %s: %d %s nodes, want 15", step.target, n, step.op)
		}
	}
}

// TestORTTargetOptimizeNoContrib converts a small ResNet (no decoder
// pattern) for --target onnxruntime-1.30 with --optimize and no --opset:
// fusing on a copy at opset 23 gives none of ONNX Runtime's contrib ops,
// so the model goes the usual way and keeps its opset, and nothing of the
// attempt is in the report.
func TestORTTargetOptimizeNoContrib(t *testing.T) {
	in := filepath.Join("..", "fixtures", "models", "resnet_small", "model.onnx")
	out := filepath.Join(t.TempDir(), "o.onnx")
	res, err := Convert(context.Background(), in, out, Options{Env: builtins(), Target: "onnxruntime-1.30", Optimize: true, Verify: &VerifyOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Equivalent {
		t.Fatalf("not equivalent")
	}
	if got, want := opsetOf(t, out), opsetOf(t, in); got != want {
		t.Errorf("opset %d, want the model's %d", got, want)
	}
	for _, a := range res.Conversion.Applied {
		if strings.Contains(a, "23") {
			t.Errorf("the report keeps a line of the fusion attempt at opset 23: %s", a)
		}
	}
}
