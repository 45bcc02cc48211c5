package ortnode

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
)

// opValues makes the literal values of one-op test models: n numbers
// from f, comma separated, drawn from a seeded generator.
type opValues struct{ rng *rand.Rand }

func newOpValues(seed uint64) opValues { return opValues{rand.New(rand.NewPCG(seed, 2))} }

func (o opValues) list(n int, f func() string) string {
	s := make([]string, n)
	for i := range s {
		s[i] = f()
	}
	return strings.Join(s, ", ")
}

// floats is n values in [lo, hi).
func (o opValues) floats(n int, lo, hi float64) string {
	return o.list(n, func() string { return strconv.FormatFloat(lo+o.rng.Float64()*(hi-lo), 'g', 6, 64) })
}

// ints is n integers in [lo, hi).
func (o opValues) ints(n, lo, hi int) string {
	return o.list(n, func() string { return strconv.Itoa(lo + o.rng.IntN(hi-lo)) })
}

// rawBytes is n random bytes as an ONNX text raw literal, raw "hex".
func (o opValues) rawBytes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(o.rng.IntN(256))
	}
	return `raw "` + hex.EncodeToString(b) + `"`
}

// runsLikeORT parses a one-op model written in ONNX text syntax, runs it
// on the executor and in ONNX Runtime (which defines the contrib ops) on
// 3 generated samples, and fails unless every output agrees.
func runsLikeORT(t *testing.T, r runtimes.Runtime, op, src string) {
	t.Helper()
	mp, err := onnxtext.Parse(op, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range verify.GraphInputs(m) {
		names = append(names, v.Name)
	}
	s, err := r.Open(context.Background(), path, runtimes.OpenOptions{InputNames: names, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := verify.Compare(context.Background(), &verify.Side{Name: "onnxruntime", Model: m, Runner: s}, verify.ModelSide("executor", m), verify.Options{Samples: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent {
		t.Errorf("the executor's %s differs from ONNX Runtime's: %s", op, rep.Summary)
	}
	t.Logf("%s", rep.Summary)
}

// TestContribNormsLikeORT runs SimplifiedLayerNormalization (ai.onnx
// domain, as ONNX Runtime registers it), SkipLayerNormalization and
// SkipSimplifiedLayerNormalization with every optional input and output,
// and without them, on the executor and in ONNX Runtime.
func TestContribNormsLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(3)
	const H = 8
	head := `<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>`
	cases := map[string]string{
		"simplified/axis-1": fmt.Sprintf(`%s
g (float[2,3,%d] x) => (float[2,3,%d] y, float[2,3,1] inv)
  <float[%d] scale = {%s}>
{
  y, inv = SimplifiedLayerNormalization <axis: int = -1, epsilon: float = 0.001> (x, scale)
}`, head, H, H, H, v.floats(H, 0.5, 1.5)),
		"simplified/axis1": fmt.Sprintf(`%s
g (float[2,3,%d] x) => (float[2,3,%d] y)
  <float[3,%d] scale = {%s}>
{
  y = SimplifiedLayerNormalization <axis: int = 1> (x, scale)
}`, head, H, H, H, v.floats(3*H, 0.5, 1.5)),
		"skip/all": fmt.Sprintf(`%s
g (float[2,3,%d] x, float[2,3,%d] skip) => (float[2,3,%d] y, float[2,3,1] mean, float[2,3,1] inv, float[2,3,%d] sum)
  <float[%d] gamma = {%s}, float[%d] beta = {%s}, float[%d] bias = {%s}>
{
  y, mean, inv, sum = com.microsoft.SkipLayerNormalization <epsilon: float = 0.0001> (x, skip, gamma, beta, bias)
}`, head, H, H, H, H, H, v.floats(H, 0.5, 1.5), H, v.floats(H, -1, 1), H, v.floats(H, -1, 1)),
		"skip/broadcast": fmt.Sprintf(`%s
g (float[2,3,%d] x) => (float[2,3,%d] y, float[2,3,%d] sum)
  <float[3,%d] skip = {%s}, float[%d] gamma = {%s}>
{
  y, , , sum = com.microsoft.SkipLayerNormalization <epsilon: float = 0.00001> (x, skip, gamma)
}`, head, H, H, H, H, v.floats(3*H, -1, 1), H, v.floats(H, 0.5, 1.5)),
		"skipsimplified/all": fmt.Sprintf(`%s
g (float[2,3,%d] x, float[2,3,%d] skip) => (float[2,3,%d] y, float[2,3,1] inv, float[2,3,%d] sum)
  <float[%d] gamma = {%s}, float[%d] bias = {%s}>
{
  y, , inv, sum = com.microsoft.SkipSimplifiedLayerNormalization <epsilon: float = 0.000001> (x, skip, gamma, bias)
}`, head, H, H, H, H, H, v.floats(H, 0.5, 1.5), H, v.floats(H, -1, 1)),
		"skipsimplified/plain": fmt.Sprintf(`%s
g (float[4,%d] x, float[4,%d] skip) => (float[4,%d] y)
  <float[%d] gamma = {%s}>
{
  y = com.microsoft.SkipSimplifiedLayerNormalization <epsilon: float = 0.00001> (x, skip, gamma)
}`, head, H, H, H, H, v.floats(H, 0.5, 1.5)),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) { runsLikeORT(t, r, strings.SplitN(name, "/", 2)[0], src) })
	}
}

// TestGroupQueryAttentionLikeORT runs com.microsoft GroupQueryAttention
// (8 query heads over 2 key/value heads of 16 values) on a first prompt
// with rotary embedding; on decode steps over a cache with interleaved
// rotary, a local window, softcap and scale, with smooth_softmax, with
// head_sink, with attention_bias, with rotary at given position_ids; and
// on packed QKV with several new tokens after a cache — on the executor
// and in ONNX Runtime. The cases
// with a cache ask for present_key/present_value: without them ONNX
// Runtime's kernel does not join the cache to the new keys, and its
// output differs from the executor's.
func TestGroupQueryAttentionLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(4)
	const B, N, KVN, H, maxPos = 2, 8, 2, 16, 16
	head := `<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>`
	caches := func() string {
		return fmt.Sprintf("float[%d,%d] cos = {%s}, float[%d,%d] sin = {%s}", maxPos, H/2, v.floats(maxPos*H/2, -1, 1), maxPos, H/2, v.floats(maxPos*H/2, -1, 1))
	}
	lens := func(n int) string { return v.list(B, func() string { return strconv.Itoa(n) }) }
	cases := map[string]string{
		"prompt-rotary": fmt.Sprintf(`%s
g (float[%d,4,%d] q, float[%d,4,%d] k, float[%d,4,%d] v) => (float[%d,4,%d] y, float[%d,%d,4,%d] pk, float[%d,%d,4,%d] pv)
  <int32[%d] seqlens = {%s}, int32 total = {4}, %s>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d, do_rotary: int = 1> (q, k, v, , , seqlens, total, cos, sin)
}`, head, B, N*H, B, KVN*H, B, KVN*H, B, N*H, B, KVN, H, B, KVN, H, B, lens(3), caches(), N, KVN),
		"decode-interleaved-window-softcap": fmt.Sprintf(`%s
g (float[%d,1,%d] q, float[%d,1,%d] k, float[%d,1,%d] v, float[%d,%d,5,%d] past_k, float[%d,%d,5,%d] past_v) => (float[%d,1,%d] y, float[%d,%d,6,%d] pk, float[%d,%d,6,%d] pv)
  <int32[%d] seqlens = {%s}, int32 total = {6}, %s>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d, do_rotary: int = 1, rotary_interleaved: int = 1, local_window_size: int = 3, softcap: float = 2.0, scale: float = 0.5> (q, k, v, past_k, past_v, seqlens, total, cos, sin)
}`, head, B, N*H, B, KVN*H, B, KVN*H, B, KVN, H, B, KVN, H, B, N*H, B, KVN, H, B, KVN, H, B, lens(5), caches(), N, KVN),
		"decode-smooth-softmax": fmt.Sprintf(`%s
g (float[%d,1,%d] q, float[%d,1,%d] k, float[%d,1,%d] v, float[%d,%d,5,%d] past_k, float[%d,%d,5,%d] past_v) => (float[%d,1,%d] y, float[%d,%d,6,%d] pk, float[%d,%d,6,%d] pv)
  <int32[%d] seqlens = {%s}, int32 total = {6}>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d, smooth_softmax: int = 1> (q, k, v, past_k, past_v, seqlens, total)
}`, head, B, N*H, B, KVN*H, B, KVN*H, B, KVN, H, B, KVN, H, B, N*H, B, KVN, H, B, KVN, H, B, lens(5), N, KVN),
		"prompt-head-sink": fmt.Sprintf(`%s
g (float[%d,4,%d] q, float[%d,4,%d] k, float[%d,4,%d] v) => (float[%d,4,%d] y)
  <int32[%d] seqlens = {%s}, int32 total = {4}, float[%d] sink = {%s}>
{
  y, , = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d> (q, k, v, , , seqlens, total, , , , , sink)
}`, head, B, N*H, B, KVN*H, B, KVN*H, B, N*H, B, lens(3), N, v.floats(N, -2, 2), N, KVN),
		"decode-attention-bias": fmt.Sprintf(`%s
g (float[%d,1,%d] q, float[%d,1,%d] k, float[%d,1,%d] v, float[%d,%d,5,%d] past_k, float[%d,%d,5,%d] past_v, float[%d,1,1,6] ab) => (float[%d,1,%d] y, float[%d,%d,6,%d] pk, float[%d,%d,6,%d] pv)
  <int32[%d] seqlens = {%s}, int32 total = {6}>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d> (q, k, v, past_k, past_v, seqlens, total, , , , ab)
}`, head, B, N*H, B, KVN*H, B, KVN*H, B, KVN, H, B, KVN, H, B, B, N*H, B, KVN, H, B, KVN, H, B, lens(5), N, KVN),
		"decode-rotary-position-ids": fmt.Sprintf(`%s
g (float[%d,1,%d] q, float[%d,1,%d] k, float[%d,1,%d] v, float[%d,%d,5,%d] past_k, float[%d,%d,5,%d] past_v) => (float[%d,1,%d] y, float[%d,%d,6,%d] pk, float[%d,%d,6,%d] pv)
  <int32[%d] seqlens = {%s}, int32 total = {6}, int64[%d,1] pos = {%s}, %s>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d, do_rotary: int = 1> (q, k, v, past_k, past_v, seqlens, total, cos, sin, pos)
}`, head, B, N*H, B, KVN*H, B, KVN*H, B, KVN, H, B, KVN, H, B, N*H, B, KVN, H, B, KVN, H, B, lens(5), B, v.ints(B, 6, maxPos), caches(), N, KVN),
		// ONNX Runtime takes several new tokens after a cache for one sequence only.
		"packed-after-cache": fmt.Sprintf(`%s
g (float[1,3,%d] qkv, float[1,%d,4,%d] past_k, float[1,%d,4,%d] past_v) => (float[1,3,%d] y, float[1,%d,7,%d] pk, float[1,%d,7,%d] pv)
  <int32[1] seqlens = {6}, int32 total = {7}>
{
  y, pk, pv = com.microsoft.GroupQueryAttention <num_heads: int = %d, kv_num_heads: int = %d> (qkv, , , past_k, past_v, seqlens, total)
}`, head, (N+2*KVN)*H, KVN, H, KVN, H, N*H, KVN, H, KVN, H, N, KVN),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) { runsLikeORT(t, r, "GroupQueryAttention", src) })
	}
}

// TestRotaryEmbeddingMSLikeORT runs com.microsoft RotaryEmbedding on 3D
// input with one start position, on 4D input with per-token positions
// (interleaved), and with a rotary dimension under the head size.
func TestRotaryEmbeddingMSLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(5)
	const B, S, N, H, maxPos = 2, 3, 4, 16, 12
	head := `<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>`
	caches := func(half int) string {
		return fmt.Sprintf("float[%d,%d] cos = {%s}, float[%d,%d] sin = {%s}", maxPos, half, v.floats(maxPos*half, -1, 1), maxPos, half, v.floats(maxPos*half, -1, 1))
	}
	cases := map[string]string{
		"3d-start": fmt.Sprintf(`%s
g (float[%d,%d,%d] x) => (float[%d,%d,%d] y)
  <int64[1] pos = {4}, %s>
{
  y = com.microsoft.RotaryEmbedding (x, pos, cos, sin)
}`, head, B, S, N*H, B, S, N*H, caches(H/2)),
		"4d-positions-interleaved": fmt.Sprintf(`%s
g (float[%d,%d,%d,%d] x) => (float[%d,%d,%d,%d] y)
  <int64[%d,%d] pos = {%s}, %s>
{
  y = com.microsoft.RotaryEmbedding <interleaved: int = 1> (x, pos, cos, sin)
}`, head, B, N, S, H, B, N, S, H, B, S, v.ints(B*S, 0, maxPos), caches(H/2)),
		"3d-rotary-dim": fmt.Sprintf(`%s
g (float[%d,%d,%d] x) => (float[%d,%d,%d] y)
  <int64[%d,%d] pos = {%s}, %s>
{
  y = com.microsoft.RotaryEmbedding <num_heads: int = %d, rotary_embedding_dim: int = %d> (x, pos, cos, sin)
}`, head, B, S, N*H, B, S, N*H, B, S, v.ints(B*S, 0, maxPos), caches(H/4), N, H/2),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) { runsLikeORT(t, r, "RotaryEmbedding", src) })
	}
}

// TestMultiHeadAttentionLikeORT runs com.microsoft MultiHeadAttention
// (4 heads of 8) with bias, a key padding mask and a cache; with
// attention_bias, causal, scale; and as cross attention with key and value
// already split into heads, on the executor and in ONNX Runtime.
func TestMultiHeadAttentionLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(6)
	const B, N, H = 2, 4, 8
	D := N * H
	head := `<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>`
	cases := map[string]string{
		"bias-mask-past": fmt.Sprintf(`%s
g (float[%d,3,%d] q, float[%d,3,%d] k, float[%d,3,%d] v, float[%d,%d,2,%d] pk, float[%d,%d,2,%d] pv) => (float[%d,3,%d] y, float[%d,%d,5,%d] ok, float[%d,%d,5,%d] ov)
  <float[%d] bias = {%s}, int32[%d,5] mask = {1, 1, 1, 1, 1, 1, 0, 1, 1, 0}>
{
  y, ok, ov = com.microsoft.MultiHeadAttention <num_heads: int = %d> (q, k, v, bias, mask, , pk, pv)
}`, head, B, D, B, D, B, D, B, N, H, B, N, H, B, D, B, N, H, B, N, H, 3*D, v.floats(3*D, -0.5, 0.5), B, N),
		"attention-bias-causal-scale": fmt.Sprintf(`%s
g (float[%d,4,%d] q, float[%d,4,%d] k, float[%d,4,%d] v, float[1,%d,4,4] ab) => (float[%d,4,%d] y)
{
  y = com.microsoft.MultiHeadAttention <num_heads: int = %d, unidirectional: int = 1, scale: float = 0.25> (q, k, v, , , ab)
}`, head, B, D, B, D, B, D, N, B, D, N),
		"cross-bnsh": fmt.Sprintf(`%s
g (float[%d,2,%d] q, float[%d,%d,5,%d] k, float[%d,%d,5,%d] v) => (float[%d,2,%d] y)
{
  y = com.microsoft.MultiHeadAttention <num_heads: int = %d> (q, k, v)
}`, head, B, D, B, N, H, B, N, H, B, D, N),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) { runsLikeORT(t, r, "MultiHeadAttention", src) })
	}
}

// TestGatherBlockQuantizedLikeORT runs com.microsoft GatherBlockQuantized
// on a 6×32 table in blocks of 16 along its rows — uint4 with zero points,
// int4 without (4-bit tables as raw packed bytes), uint8 packing two 4-bit values a byte, and 8-bit
// uint8 — gathering 2×3 rows, on the executor and in ONNX Runtime.
func TestGatherBlockQuantizedLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(7)
	const rows, cols, block, nb = 6, 32, 16, 32 / 16
	head := `<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>`
	// model gathers with the given extra graph inputs, initializers and
	// attributes; zp says whether the node takes zero points.
	model := func(inputs, inits, attrs string, zp bool) string {
		in := "(data, idx, s)"
		if zp {
			in = "(data, idx, s, zp)"
		}
		return fmt.Sprintf(`%s
g (float[%d,%d] s%s) => (float[2,3,%d] y)
  <int64[2,3] idx = {%s}%s>
{
  y = com.microsoft.GatherBlockQuantized <block_size: int = %d%s> %s
}`, head, rows, nb, inputs, cols, v.ints(6, -rows, rows), inits, block, attrs, in)
	}
	cases := map[string]string{
		"uint4-zp": model("", fmt.Sprintf(", uint4[%d,%d] data = %s, uint4[%d,%d] zp = %s",
			rows, cols, v.rawBytes(rows*cols/2), rows, nb, v.rawBytes(rows*nb/2)), "", true),
		"int4": model("", fmt.Sprintf(", int4[%d,%d] data = %s", rows, cols, v.rawBytes(rows*cols/2)), "", false),
		"uint8-4bit-zp": model("", fmt.Sprintf(", uint8[%d,%d] data = {%s}, uint8[%d,%d] zp = {%s}",
			rows, cols/2, v.ints(rows*cols/2, 0, 256), rows, nb/2, v.ints(rows*nb/2, 0, 256)), "", true),
		"uint8-8bit-zp": model("", fmt.Sprintf(", uint8[%d,%d] data = {%s}, uint8[%d,%d] zp = {%s}",
			rows, cols, v.ints(rows*cols, 0, 256), rows, nb, v.ints(rows*nb, 0, 256)), ", bits: int = 8", true),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) { runsLikeORT(t, r, "GatherBlockQuantized", src) })
	}
}
