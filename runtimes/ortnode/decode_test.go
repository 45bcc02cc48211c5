package ortnode

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/opset/convert"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// TestDecodesLikeTorch runs the decoder fixtures (fixtures/decoders, made
// by torch 1.13) in ONNX Runtime over torch's prompt and its 3 greedy
// tokens, each step's present.* fed back as past_key_values.*, and holds
// every step's logits to the ones torch computed.
func TestDecodesLikeTorch(t *testing.T) {
	r := testRuntime(t)
	for _, name := range []string{"llama", "gpt2"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "decoders", name)
			decodesLikeTorch(t, r, dir, filepath.Join(dir, "model.onnx"))
		})
	}
}

// TestContribDecodersLikeTorch fits the decoder fixtures, moved to opset 23
// and fused by the optimization passes, to the onnxruntime-1.30 target:
// their attention over the KV cache becomes com.microsoft
// GroupQueryAttention (Llama: 4 query heads over 2) or MultiHeadAttention
// (GPT-2, head size 12, which ONNX Runtime's GroupQueryAttention refuses),
// the Llama-style RoPE com.microsoft RotaryEmbedding, the residual norms
// SkipSimplifiedLayerNormalization (Llama) or SkipLayerNormalization
// (GPT-2); ONNX Runtime runs the result over torch's prompt and 3 greedy
// steps and its logits are torch's (within 1e-4 of their scale).
func TestContribDecodersLikeTorch(t *testing.T) {
	r := testRuntime(t)
	p, err := profiles.Get("onnxruntime-1.30")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]map[string]int{
		"llama": {"GroupQueryAttention": 2, "RotaryEmbedding": 4, "SkipSimplifiedLayerNormalization": 4},
		"gpt2":  {"MultiHeadAttention": 2, "SkipLayerNormalization": 5},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "decoders", name)
			m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if _, err := adapt.Opset(m, convert.Options{To: 23}); err != nil {
				t.Fatal(err)
			}
			fused, _, err := passes.Run(context.Background(), m, passes.Builtin(), passes.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer fused.Close()
			if _, err := adapt.Adapt(fused, p, adapt.Options{}); err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, n := range fused.Graph.Nodes {
				if n.Domain == "com.microsoft" {
					count[n.OpType]++
				}
			}
			for op, n := range want {
				if count[op] != n {
					t.Errorf("%d com.microsoft %s nodes, want %d (%v)", count[op], op, n, count)
				}
			}
			path := filepath.Join(t.TempDir(), "ort.onnx")
			if err := canonical.Save(path, fused, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			decodesLikeTorch(t, r, dir, path)
		})
	}
}

// decodesLikeTorch runs the model at path in ONNX Runtime over the prompt
// and greedy tokens torch stored in dir/torch and holds every step's
// logits to torch's.
func decodesLikeTorch(t *testing.T, r runtimes.Runtime, dir, path string) {
	t.Helper()
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ids, want, err := tensorio.ReadDecodeSteps(filepath.Join(dir, "torch"), 3)
	if err != nil {
		t.Fatal(err)
	}
	first, err := verify.PrefillInputs(m, &verify.Decode{Steps: 3, Prompt: int(ids[0].Dims[1])}, verify.GenOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, v := range verify.GraphInputs(m) {
		names = append(names, v.Name)
		if v.Name == "input_ids" {
			first[i] = ids[0]
		}
	}
	var tokens [][]int64
	for _, id := range ids[1:] {
		v, err := id.Int64s()
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, v)
	}
	sess, err := r.Open(context.Background(), path, runtimes.OpenOptions{InputNames: names, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	outs, err := verify.RunDecode(context.Background(), sess, m, nil, first, tokens)
	if err != nil {
		t.Fatal(err)
	}
	for step, y := range outs {
		a, err := y[0].Float64s()
		if err != nil {
			t.Fatal(err)
		}
		b, err := want[step].Float64s()
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("step %d: logits %v, torch's %v", step, y[0].Dims, want[step].Dims)
		}
		d, s := 0.0, 0.0
		for i := range a {
			d, s = math.Max(d, math.Abs(a[i]-b[i])), math.Max(s, math.Abs(b[i]))
		}
		if d > 1e-4*s {
			t.Errorf("step %d: ONNX Runtime's logits differ from torch's by %.3g (scale %.3g)", step, d, s)
		}
		t.Logf("step %d: ONNX Runtime's logits within %.3g of torch's (scale %.3g)", step, d, s)
	}
}

// TestInt4DecodersRunInORT quantizes the decoder fixtures' MatMul weights
// to int4 (blocks of 32) in both forms — ONNX Runtime's MatMulNBits and
// standard INT4 with blockwise DequantizeLinear at opset 21 — and runs
// each in ONNX Runtime over a prefill and 3 decode steps against the float
// model, also in ONNX Runtime: within the int4 profile, with the logits'
// cosine and top-1 agreement per step logged. MatMulNBits with
// accuracy_level 4 (A quantized to int8 by blocks) too, whose model the
// executor runs with ONNX Runtime's numbers: within the fp32 profile of
// ONNX Runtime's over the same steps (computing the float32 product, it
// is not).
func TestInt4DecodersRunInORT(t *testing.T) {
	r := testRuntime(t)
	ctx := context.Background()
	for _, name := range []string{"llama", "gpt2"} {
		for _, v := range []struct {
			format passes.Int4Format
			level  int
		}{{passes.MatMulNBits, 0}, {passes.Int4QDQ, 0}, {passes.MatMulNBits, 4}} {
			format := v.format
			t.Run(fmt.Sprintf("%s/%s/level%d", name, format, v.level), func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(testpaths.RepoRoot(t), "fixtures", "decoders", name, "model.onnx")
				m, err := canonical.Load(src, canonical.LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				if format == passes.Int4QDQ {
					if _, err := adapt.Opset(m, convert.Options{To: 21}); err != nil {
						t.Fatal(err)
					}
				}
				q, rep, err := passes.Quantize(ctx, m, passes.QuantOptions{Mode: passes.Int4, Format: format, AccuracyLevel: v.level})
				if err != nil {
					t.Fatal(err)
				}
				defer q.Close()
				if rep.Quantized == 0 {
					t.Fatal("no MatMul was quantized")
				}
				floatPath, qPath := filepath.Join(dir, "float.onnx"), filepath.Join(dir, "int4.onnx")
				for path, mm := range map[string]*canonical.Model{floatPath: m, qPath: q} {
					if err := canonical.Save(path, mm, canonical.SaveOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				var names []string
				for _, v := range verify.GraphInputs(m) {
					names = append(names, v.Name)
				}
				open := func(path string) runtimes.Session {
					s, err := r.Open(ctx, path, runtimes.OpenOptions{InputNames: names, Threads: 1})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = s.Close() })
					return s
				}
				cmp, err := verify.Compare(ctx, &verify.Side{Name: "float in ORT", Model: m, Runner: open(floatPath)},
					&verify.Side{Name: "int4 in ORT", Model: q, Runner: open(qPath)},
					verify.Options{Profile: "int4", Decode: &verify.Decode{Steps: 3}})
				if err != nil {
					t.Fatal(err)
				}
				if !cmp.Equivalent || cmp.Decode == nil {
					t.Errorf("not equivalent within int4: %s", cmp.Summary)
				}
				steps := 0
				for _, o := range cmp.Outputs {
					if o.Classifier == nil || o.Float == nil {
						continue
					}
					steps++
					t.Logf("%s: cosine %.6f, top-1 %.3f", o.Name, o.Float.Cosine, o.Classifier.Top1)
					if o.Float.Cosine < 0.99 || o.Classifier.Top1 < 0.8 {
						t.Errorf("%s: cosine %.4f, top-1 %.2f: want >= 0.99 and >= 0.8", o.Name, o.Float.Cosine, o.Classifier.Top1)
					}
				}
				if steps != 4 {
					t.Errorf("%d logits compared, want the prefill's and 3 steps'", steps)
				}
				if v.level == 0 {
					return
				}
				levels := 0
				for _, n := range q.Graph.Nodes {
					if a := n.Attr("accuracy_level"); n.OpType == "MatMulNBits" && a != nil && a.I == int64(v.level) {
						levels++
					}
				}
				if levels != rep.Quantized {
					t.Errorf("%d of %d MatMulNBits nodes have accuracy_level %d", levels, rep.Quantized, v.level)
				}
				same, err := verify.Compare(ctx, &verify.Side{Name: "int4 in ORT", Model: q, Runner: open(qPath)},
					verify.ModelSide("int4 on the executor", q), verify.Options{Profile: "fp32", Decode: &verify.Decode{Steps: 3}})
				if err != nil {
					t.Fatal(err)
				}
				if !same.Equivalent {
					t.Errorf("the executor against ONNX Runtime at accuracy_level %d: %s", v.level, same.Summary)
				}
			})
		}
	}
}

// TestMatMulNBitsLikeORT runs one com.microsoft MatMulNBits node — K 40
// in blocks of 16 (the last one padded), packed uint8 zero points and a
// bias — on the executor and in ONNX Runtime, which defines the op.
func TestMatMulNBitsLikeORT(t *testing.T) {
	r := testRuntime(t)
	const K, N, block, blocks = 40, 5, 16, 3
	v := newOpValues(1)
	src := fmt.Sprintf(`<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,3,%d] a) => (float[2,3,%d] y)
  <uint8[%d,%d,%d] b = {%s}, float[%d] s = {%s}, uint8[%d] zp = {%s}, float[%d] bias = {%s}>
{
  y = com.microsoft.MatMulNBits <K: int = %d, N: int = %d, bits: int = 4, block_size: int = %d> (a, b, s, zp, , bias)
}`, K, N, N, blocks, block/2, v.ints(N*blocks*block/2, 0, 256), N*blocks, v.floats(N*blocks, 0.01, 0.21),
		N*2, v.ints(N*2, 0, 256), N, v.floats(N, 0.01, 0.21), K, N, block)
	runsLikeORT(t, r, "MatMulNBits", src)
}
