package convert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/onnxspec"
	"github.com/onnxconv/onnxconv/runtimes/ort"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// llmCases are the node cases of the decoder operators: the ones rebuilt
// from the ONNX 1.23 dev snapshot (fixtures/onnx28) and ONNX 1.22's own
// RMSNormalization, RotaryEmbedding, TensorScatter and Attention cases.
func llmCases(t *testing.T) []string {
	root := repoRoot(t)
	var dirs []string
	for _, d := range []string{filepath.Join(root, "fixtures", "onnx28", "node"), filepath.Join(root, "..", "shared", "onnx-v1.22", "backend-tests", "node")} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.Contains(d, "onnx-v1.22") && (strings.HasSuffix(name, "_expanded") ||
				!strings.HasPrefix(name, "test_rms_normalization") && !strings.HasPrefix(name, "test_rotary_embedding") &&
					!strings.HasPrefix(name, "test_tensorscatter") && !strings.HasPrefix(name, "test_attention")) {
				continue
			}
			dirs = append(dirs, filepath.Join(d, name))
		}
	}
	return dirs
}

// TestOnnx28CasesAcrossOpsets converts the node cases of the decoder ops
// (llmCases: Attention 23/24/25 with KV cache, nonpad_kv_seqlen and sliding
// windows, SwiGLU-28, Celu-28 on float16 and double, RMSNormalization,
// RotaryEmbedding, TensorScatter) down to the previous version of their op,
// to opset 17 (the primitive-op expansions) and up to 28, runs each result
// on the executor and compares with the outputs ONNX's numpy reference
// computed.
func TestOnnx28CasesAcrossOpsets(t *testing.T) {
	ran, want := 0, 0
	for _, dir := range llmCases(t) {
		c, err := backendtest.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		op := c.Model.Graph.Nodes[0].OpType
		from := int(c.Model.Opset(""))
		var targets []int
		switch op {
		case "Attention":
			targets = []int{23, 17, 28}
			if from > 23 {
				targets = append(targets, from-1)
			}
		case "SwiGLU":
			targets = []int{27, 23, 17}
		case "Celu":
			targets = []int{17, 12}
		case "RMSNormalization", "RotaryEmbedding":
			targets = []int{17, 28}
		case "TensorScatter":
			targets = []int{23, 17, 28}
		default:
			continue
		}
		for _, to := range targets {
			if to == from {
				continue
			}
			want++
			t.Run(fmt.Sprintf("%s_to_%d", filepath.Base(dir), to), func(t *testing.T) {
				c, err := backendtest.Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := Convert(c.Model, Options{To: to}); err != nil {
					t.Fatalf("opset %d -> %d: %v", from, to, err)
				}
				for _, nd := range c.Model.Graph.Nodes {
					if s, ok := onnxspec.Lookup(nd.Domain, nd.OpType, to); !ok || s.Deprecated {
						t.Fatalf("opset %d -> %d left %s, which opset %d lacks", from, to, nd.OpType, to)
					}
				}
				if err := backendtest.Run(context.Background(), c, backendtest.ExecutorRunner); err != nil {
					t.Fatalf("opset %d -> %d: %v", from, to, err)
				}
				ran++
			})
		}
	}
	if ran != want || ran < 300 {
		t.Errorf("%d of %d conversions passed", ran, want)
	}
}

// TestOnnx28CasesInORT converts the decoder-op cases (llmCases) to what
// ONNX Runtime 1.30 loads — opset 26, its highest (24 for Attention-25's
// sliding window, which its ONNX does not know, so that the window is
// expanded) — and to opset 17 (the primitive-op expansions), runs them in
// ONNX Runtime and compares with the outputs of ONNX's numpy reference.
func TestOnnx28CasesInORT(t *testing.T) {
	rt, err := ort.Open(testpaths.ORT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	// What ONNX Runtime 1.30 cannot run, measured.
	ortLimits := map[string]string{
		"test_attention_4d_diff_heads_mask4d_padded_kv_to_26": "its Attention needs attn_mask's last dimension to equal the total sequence length (\"inconsistent total_sequence_length\")",
		"test_bitcast_bool_to_uint8_to_26":                    "it has no BitCast kernel for bool",
	}
	ran, want := 0, 0
	for _, dir := range llmCases(t) {
		for _, to := range []int{26, 17} {
			name := fmt.Sprintf("%s_to_%d", filepath.Base(dir), to)
			if to == 17 && strings.HasPrefix(filepath.Base(dir), "test_bitcast") {
				continue // BitCast-26 has no expansion
			}
			if _, ok := ortLimits[name]; !ok {
				want++
			}
			t.Run(name, func(t *testing.T) {
				if why, ok := ortLimits[name]; ok {
					t.Skipf("ONNX Runtime 1.30 limit: %s", why)
				}
				c, err := backendtest.Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				n := c.Model.Graph.Nodes[0]
				if to == 26 && n.OpType == "Attention" && (n.Attr("left_window_size") != nil || n.Attr("right_window_size") != nil) {
					to = 24
				}
				if _, err := Convert(c.Model, Options{To: to}); err != nil {
					t.Fatalf("opset %d: %v", to, err)
				}
				path := filepath.Join(t.TempDir(), "m.onnx")
				if err := canonical.Save(path, c.Model, canonical.SaveOptions{}); err != nil {
					t.Fatal(err)
				}
				ins, wantOut, err := readDataSet(filepath.Join(dir, "test_data_set_0"))
				if err != nil {
					t.Fatal(err)
				}
				got, err := rt.Run(path, ins)
				if err != nil {
					t.Fatalf("ONNX Runtime refuses the opset %d model: %v", to, err)
				}
				if err := compareOutputs(got, wantOut); err != nil {
					t.Fatalf("opset %d in ONNX Runtime: %v", to, err)
				}
				ran++
			})
		}
	}
	t.Logf("%d of %d conversions run in ONNX Runtime and match", ran, want)
	if ran != want {
		t.Errorf("%d of %d conversions passed", ran, want)
	}
}

// TestAttentionCasesOnDynamicLengths converts the 4-D Attention cases of
// llmCases (past key/value, causal, sliding windows, masks; not
// nonpad_kv_seqlen) to opset 17 with the batch and every sequence length
// made symbolic, as a decoder declares them: the expansion builds the
// causal frontier, the window and the mask's padding from the lengths at
// run time. Each result runs on the executor against the outputs ONNX's
// numpy reference computed.
func TestAttentionCasesOnDynamicLengths(t *testing.T) {
	ran := 0
	for _, dir := range llmCases(t) {
		c, err := backendtest.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		n := c.Model.Graph.Nodes[0]
		if n.OpType != "Attention" || n.Input(6) != nil {
			continue
		}
		if _, d, ok, _ := canonical.TensorTypeOf(n.Input(0).Type); !ok || len(d) != 4 {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c, err := backendtest.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			g := c.Model.Graph
			g.ValueInfo = nil
			for i, v := range append(append([]*canonical.Value(nil), g.Inputs...), g.Outputs...) {
				dt, d, ok, _ := canonical.TensorTypeOf(v.Type)
				if !ok || len(d) < 2 {
					continue
				}
				// Rank-4 tensors [B, heads, length, size]: batch and
				// length symbolic; masks: every dim.
				for j := range d {
					if len(d) != 4 || j == 0 || j == 2 {
						d[j] = canonical.Dim{Param: fmt.Sprintf("d%d_%d", i, j)}
					}
				}
				v.Type = canonical.TensorTypeDims(dt, d)
			}
			if _, err := Convert(c.Model, Options{To: 17}); err != nil {
				t.Fatalf("to 17: %v", err)
			}
			for _, nd := range g.Nodes {
				if nd.OpType == "Attention" {
					t.Fatal("Attention left at opset 17")
				}
			}
			if err := backendtest.Run(context.Background(), c, backendtest.ExecutorRunner); err != nil {
				t.Fatal(err)
			}
			ran++
		})
	}
	if ran < 10 {
		t.Errorf("%d cases ran", ran)
	}
	t.Logf("%d Attention cases expanded on dynamic lengths", ran)
}
