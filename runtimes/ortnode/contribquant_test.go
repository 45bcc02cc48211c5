package ortnode

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
)

// convertedLikeORT takes a one-op model (load gives a fresh copy), fits a copy
// to each target profile (the contrib op becomes standard ops, or back),
// runs the original and every result in ONNX Runtime on 3 generated
// samples and fails unless each result's outputs are the original's and
// it holds the ops in want[target] (counts) and no op named in gone.
func convertedLikeORT(t *testing.T, r runtimes.Runtime, load func() *canonical.Model, want map[string]map[string]int, gone ...string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	orig := load()
	var names []string
	for _, v := range verify.GraphInputs(orig) {
		names = append(names, v.Name)
	}
	// The models run as written: ONNX Runtime's optimizer fuses a
	// blockwise DequantizeLinear and its MatMul into a MatMulNBits that
	// quantizes the activations to 8 bits (its default accuracy level 4),
	// an approximation of its own.
	open := func(path string, m *canonical.Model) runtimes.Session {
		t.Helper()
		if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := r.Open(ctx, path, runtimes.OpenOptions{InputNames: names, Threads: 1, Unoptimized: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	ref := &verify.Side{Name: "contrib in ORT", Model: orig, Runner: open(filepath.Join(dir, "orig.onnx"), orig)}
	for target, ops := range want {
		p, err := profiles.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		m := load()
		rep, err := adapt.Adapt(m, p, adapt.Options{})
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		count := map[string]int{}
		for _, n := range m.Graph.Nodes {
			count[n.OpType]++
		}
		for op, n := range ops {
			if count[op] != n {
				t.Errorf("%s: %d %s nodes, want %d (%v)", target, count[op], op, n, count)
			}
		}
		for _, op := range gone {
			if count[op] != 0 && ops[op] == 0 {
				t.Errorf("%s keeps %d %s nodes", target, count[op], op)
			}
		}
		if len(gone) > 0 && m.Opset("com.microsoft") != 0 {
			t.Errorf("%s keeps the com.microsoft opset import without its ops", target)
		}
		cmp, err := verify.Compare(ctx, ref, &verify.Side{Name: target + " in ORT", Model: m, Runner: open(filepath.Join(dir, target+".onnx"), m)}, verify.Options{Samples: 3})
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if !cmp.Equivalent {
			t.Errorf("%s: the converted model differs in ONNX Runtime: %s", target, cmp.Summary)
		}
		t.Logf("%s: %s; %v", target, cmp.Summary, rep.Notes)
	}
}

// textModel returns a loader of the model in ONNX text syntax src.
func textModel(t *testing.T, src string) func() *canonical.Model {
	return func() *canonical.Model {
		t.Helper()
		mp, err := onnxtext.Parse("m", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		m, err := canonical.FromProto(mp, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
}

// TestMatMulNBitsToStandardLikeORT converts one com.microsoft MatMulNBits
// node — K 40 in blocks of 16 (the last one padded) or K 64 in blocks of
// 32, with and without packed zero points and a bias, 4 and 8 bits — to
// opset 23 (blockwise DequantizeLinear + MatMul), to opset 17 (a float
// weight + MatMul) and, from the opset-23 form, back to MatMulNBits for
// onnxruntime-1.30; ONNX Runtime runs each and holds it to the original.
func TestMatMulNBitsToStandardLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(11)
	model := func(K, N, block, bits int, zp, bias bool) string {
		blocks := (K + block - 1) / block
		blob := block * bits / 8
		inits := fmt.Sprintf("uint8[%d,%d,%d] b = {%s}, float[%d] s = {%s}", N, blocks, blob, v.ints(N*blocks*blob, 0, 256), N*blocks, v.floats(N*blocks, 0.01, 0.21))
		ins := "a, b, s"
		if zp {
			rowBytes := (blocks*bits + 7) / 8
			inits += fmt.Sprintf(", uint8[%d] zp = {%s}", N*rowBytes, v.ints(N*rowBytes, 0, 256))
			ins += ", zp"
		} else if bias {
			ins += ", "
		}
		if bias {
			inits += fmt.Sprintf(", float[%d] bias = {%s}", N, v.floats(N, -1, 1))
			ins += ", , bias"
		}
		return fmt.Sprintf(`<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,3,%d] a) => (float[2,3,%d] y)
  <%s>
{
  y = com.microsoft.MatMulNBits <K: int = %d, N: int = %d, bits: int = %d, block_size: int = %d> (%s)
}`, K, N, inits, K, N, bits, block, ins)
	}
	cases := map[string]string{
		"k40-b16-zp-bias": model(40, 5, 16, 4, true, true),
		"k40-b16":         model(40, 5, 16, 4, false, false),
		"k64-b32-bias":    model(64, 6, 32, 4, false, true),
		"k48-b32-zp":      model(48, 3, 32, 4, true, false),
		"8bit-k40-b16":    model(40, 5, 16, 8, false, false),
		"8bit-k40-b16-zp": model(40, 5, 16, 8, true, true),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			convertedLikeORT(t, r, textModel(t, src), map[string]map[string]int{
				"onnx-opset23": {"DequantizeLinear": 1, "MatMul": 1},
				"onnx-opset17": {"DequantizeLinear": 0, "MatMul": 1},
			}, "MatMulNBits")
			// And back: the standard form for ONNX Runtime.
			m := textModel(t, src)()
			p23, err := profiles.Get("onnx-opset23")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := adapt.Adapt(m, p23, adapt.Options{}); err != nil {
				t.Fatal(err)
			}
			std := filepath.Join(t.TempDir(), "std.onnx")
			if err := canonical.Save(std, m, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			convertedLikeORT(t, r, func() *canonical.Model {
				m, err := canonical.Load(std, canonical.LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = m.Close() })
				return m
			}, map[string]map[string]int{
				"onnxruntime-1.30": {"MatMulNBits": 1, "DequantizeLinear": 0, "MatMul": 0},
			})
		})
	}
}

// TestGatherBlockQuantizedToStandardLikeORT converts com.microsoft
// GatherBlockQuantized (a 6×32 table in blocks of 16 along its rows:
// uint4 with zero points, int4 without, uint8 holding two 4-bit values,
// 8-bit uint8) to opset 23 (blockwise DequantizeLinear + Gather) and to
// opset 17 (a float table + Gather); ONNX Runtime runs each and holds it
// to the original.
func TestGatherBlockQuantizedToStandardLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(13)
	const rows, cols, block, nb = 6, 32, 16, 32 / 16
	model := func(inits, attrs string, zp bool) string {
		in := "(data, idx, s)"
		if zp {
			in = "(data, idx, s, zp)"
		}
		return fmt.Sprintf(`<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,3,%d] x) => (float[2,3,%d] y)
  <int64[2,3] idx = {%s}, float[%d,%d] s = {%s}%s>
{
  g = com.microsoft.GatherBlockQuantized <block_size: int = %d%s> %s
  y = Add (g, x)
}`, cols, cols, v.ints(6, -rows, rows), rows, nb, v.floats(rows*nb, 0.01, 0.21), inits, block, attrs, in)
	}
	cases := map[string]string{
		"uint4-zp": model(fmt.Sprintf(", uint4[%d,%d] data = %s, uint4[%d,%d] zp = %s",
			rows, cols, v.rawBytes(rows*cols/2), rows, nb, v.rawBytes(rows*nb/2)), "", true),
		"int4": model(fmt.Sprintf(", int4[%d,%d] data = %s", rows, cols, v.rawBytes(rows*cols/2)), "", false),
		"uint8-4bit": model(fmt.Sprintf(", uint8[%d,%d] data = {%s}",
			rows, cols/2, v.ints(rows*cols/2, 0, 256)), "", false),
		"uint8-8bit-zp": model(fmt.Sprintf(", uint8[%d,%d] data = {%s}, uint8[%d,%d] zp = {%s}",
			rows, cols, v.ints(rows*cols, 0, 256), rows, nb, v.ints(rows*nb, 0, 256)), ", bits: int = 8", true),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			convertedLikeORT(t, r, textModel(t, src), map[string]map[string]int{
				"onnx-opset23": {"DequantizeLinear": 1, "Gather": 1},
				"onnx-opset17": {"DequantizeLinear": 0, "Gather": 1},
			}, "GatherBlockQuantized")
		})
	}
}

// TestInt4DecodersToStandardAndBack quantizes the decoder fixtures to
// MatMulNBits (int4, blocks of 32), converts that to onnx-opset23
// (blockwise DequantizeLinear + MatMul) and the result back to
// onnxruntime-1.30 (MatMulNBits again), and runs all three in ONNX Runtime
// over a prefill and 3 decode steps: each conversion's logits are the
// MatMulNBits model's at every step (the models run as written, see
// convertedLikeORT). From MatMulNBits of accuracy_level 4 (int8
// activations) the standard form computes float32 activations: the
// adaptation says so and names the int8 profile, within which the
// conversions agree with the level-4 model (and not within fp32).
func TestInt4DecodersToStandardAndBack(t *testing.T) {
	r := testRuntime(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		level int
	}{{"llama", 0}, {"gpt2", 0}, {"llama", 4}} {
		name, level := tc.name, tc.level
		t.Run(fmt.Sprintf("%s/level%d", name, level), func(t *testing.T) {
			dir := t.TempDir()
			m, err := canonical.Load(filepath.Join(testpaths.RepoRoot(t), "fixtures", "decoders", name, "model.onnx"), canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			q, rep, err := passes.Quantize(ctx, m, passes.QuantOptions{Mode: passes.Int4, Format: passes.MatMulNBits, AccuracyLevel: level})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			profile := ""
			if level == 4 {
				profile = "int8"
			}
			var names []string
			for _, v := range verify.GraphInputs(m) {
				names = append(names, v.Name)
			}
			side := func(label string, mm *canonical.Model) *verify.Side {
				path := filepath.Join(dir, label+".onnx")
				if err := canonical.Save(path, mm, canonical.SaveOptions{}); err != nil {
					t.Fatal(err)
				}
				s, err := r.Open(ctx, path, runtimes.OpenOptions{InputNames: names, Threads: 1, Unoptimized: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return &verify.Side{Name: label + " in ORT", Model: mm, Runner: s}
			}
			ref := side("matmulnbits", q)
			cur := q
			for _, target := range []string{"onnx-opset23", "onnxruntime-1.30"} {
				p, err := profiles.Get(target)
				if err != nil {
					t.Fatal(err)
				}
				c, err := cur.Clone()
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ar, err := adapt.Adapt(c, p, adapt.Options{})
				if err != nil {
					t.Fatalf("%s: %v", target, err)
				}
				if want := map[bool]string{true: profile}[target == "onnx-opset23"]; ar.Tolerance != want {
					t.Errorf("%s: the adaptation names the profile %q, want %q", target, ar.Tolerance, want)
				}
				count := map[string]int{}
				for _, n := range c.Graph.Nodes {
					count[n.OpType]++
				}
				if target == "onnx-opset23" && (count["MatMulNBits"] != 0 || count["DequantizeLinear"] != rep.Quantized) ||
					target != "onnx-opset23" && (count["MatMulNBits"] != rep.Quantized || count["DequantizeLinear"] != 0) {
					t.Errorf("%s: %d MatMulNBits and %d DequantizeLinear nodes for %d quantized weights", target, count["MatMulNBits"], count["DequantizeLinear"], rep.Quantized)
				}
				sd := side(target, c)
				cmp, err := verify.Compare(ctx, ref, sd, verify.Options{Profile: profile, Decode: &verify.Decode{Steps: 3}})
				if err != nil {
					t.Fatal(err)
				}
				if !cmp.Equivalent || cmp.Decode == nil {
					t.Errorf("%s: not equivalent to the MatMulNBits model over the decode steps: %s", target, cmp.Summary)
				}
				if profile != "" {
					if fp, err := verify.Compare(ctx, ref, sd, verify.Options{Profile: "fp32", Decode: &verify.Decode{Steps: 3}}); err != nil || fp.Equivalent {
						t.Errorf("%s: within fp32 of the level-%d model (error %v): the activations' int8 step should show", target, level, err)
					}
				}
				t.Logf("%s: %d MatMulNBits, %d DequantizeLinear: %s", target, count["MatMulNBits"], count["DequantizeLinear"], cmp.Summary)
				cur = c
			}
		})
	}
}

// TestGroupQueryAttentionToStandardLikeORT converts com.microsoft
// GroupQueryAttention in the forms real exports carry (8 query heads over
// 2 key/value heads of 16 values) to onnx-opset23 — a past with seqlens_k
// differing per batch, packed QKV after a cache, rotary on a first prompt,
// interleaved rotary with a local window, softcap and scale, rotary at
// position_ids, attention_bias, a shared past buffer longer than the
// total — and holds ONNX Runtime's run of the standard form to its run
// of GroupQueryAttention.
func TestGroupQueryAttentionToStandardLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(17)
	const B, N, KVN, H, maxPos = 2, 8, 2, 16, 16
	head := `<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>`
	caches := func(half int) string {
		return fmt.Sprintf("float[%d,%d] cos = {%s}, float[%d,%d] sin = {%s}", maxPos, half, v.floats(maxPos*half, -1, 1), maxPos, half, v.floats(maxPos*half, -1, 1))
	}
	// decode is a model of S new tokens after a past of P positions;
	// present of T.
	decode := func(S, P, T int, inits, attrs, extraIn, extraArgs string) string {
		return fmt.Sprintf(`%s
g (float[%d,%d,%d] q, float[%d,%d,%d] k, float[%d,%d,%d] v, float[%d,%d,%d,%d] past_k, float[%d,%d,%d,%d] past_v%s) => (float[%d,%d,%d] y, float[%d,%d,%d,%d] pk, float[%d,%d,%d,%d] pv)
  <%s>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d%s> (q, k, v, past_k, past_v, seqlens, total%s)
}`, head, B, S, N*H, B, S, KVN*H, B, S, KVN*H, B, KVN, P, H, B, KVN, P, H, extraIn, B, S, N*H, B, KVN, T, H, B, KVN, T, H, inits, N, KVN, attrs, extraArgs)
	}
	cases := map[string]string{
		"decode-seqlens-per-batch": decode(1, 5, 6, "int32[2] seqlens = {5, 3}, int32 total = {6}", "", "", ""),
		"decode-shared-buffer":     decode(1, 8, 8, "int32[2] seqlens = {5, 3}, int32 total = {6}", "", "", ""),
		"decode-rotary-interleaved-window-softcap": decode(1, 5, 6, "int32[2] seqlens = {5, 5}, int32 total = {6}, "+caches(H/2),
			", do_rotary: int = 1, rotary_interleaved: int = 1, local_window_size: int = 3, softcap: float = 2.0, scale: float = 0.5", "", ", cos, sin"),
		"decode-rotary-position-ids": decode(1, 5, 6, fmt.Sprintf("int32[2] seqlens = {5, 5}, int32 total = {6}, int64[2,1] pos = {%s}, %s", v.ints(B, 6, maxPos), caches(H/2)),
			", do_rotary: int = 1", "", ", cos, sin, pos"),
		"decode-attention-bias": decode(1, 5, 6, "int32[2] seqlens = {5, 5}, int32 total = {6}", "", ", float[2,1,1,6] ab", ", , , , ab"),
		"prompt-rotary": fmt.Sprintf(`%s
g (float[%d,4,%d] q, float[%d,4,%d] k, float[%d,4,%d] v) => (float[%d,4,%d] y, float[%d,%d,4,%d] pk, float[%d,%d,4,%d] pv)
  <int32[%d] seqlens = {3, 3}, int32 total = {4}, %s>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d, do_rotary: int = 1> (q, k, v, , , seqlens, total, cos, sin)
}`, head, B, N*H, B, KVN*H, B, KVN*H, B, N*H, B, KVN, H, B, KVN, H, B, caches(H/2), N, KVN),
		// ONNX Runtime takes several new tokens after a cache for one sequence only.
		"packed-after-cache": fmt.Sprintf(`%s
g (float[1,3,%d] qkv, float[1,%d,4,%d] past_k, float[1,%d,4,%d] past_v) => (float[1,3,%d] y, float[1,%d,7,%d] pk, float[1,%d,7,%d] pv)
  <int32[1] seqlens = {6}, int32 total = {7}>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d> (qkv, , , past_k, past_v, seqlens, total)
}`, head, (N+2*KVN)*H, KVN, H, KVN, H, N*H, KVN, H, KVN, H, N, KVN),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			convertedLikeORT(t, r, textModel(t, src), map[string]map[string]int{"onnx-opset23": {"Attention": 1}}, "GroupQueryAttention")
		})
	}
	// smooth_softmax (a sink score) has no standard form: refused by name.
	m := textModel(t, fmt.Sprintf(`%s
g (float[%d,1,%d] q, float[%d,1,%d] k, float[%d,1,%d] v, float[%d,%d,5,%d] past_k, float[%d,%d,5,%d] past_v) => (float[%d,1,%d] y)
  <int32[%d] seqlens = {5, 5}, int32 total = {6}>
{
  y, , = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d, smooth_softmax: int = 1> (q, k, v, past_k, past_v, seqlens, total)
}`, head, B, N*H, B, KVN*H, B, KVN*H, B, KVN, H, B, KVN, H, B, N*H, B, N, KVN))()
	p, err := profiles.Get("onnx-opset23")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := adapt.Adapt(m, p, adapt.Options{})
	if err == nil || !strings.Contains(strings.Join(rep.Notes, "\n"), "smooth_softmax") {
		t.Errorf("smooth_softmax: got error %v, notes %v; want it refused by name", err, rep.Notes)
	}
}
