package convert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/onnxspec"
	"github.com/onnxconv/onnxconv/runtimes/ort"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// TestOnnx28CasesAcrossOpsets converts the node cases rebuilt from the ONNX
// 1.23 dev snapshot (fixtures/onnx28: Attention 23/24/25 with KV cache,
// nonpad_kv_seqlen and sliding windows, SwiGLU-28, Celu-28 on float16 and
// double) down to the previous version of their op, to opset 17 (the
// primitive-op expansions) and up to 28, runs each result on the executor
// and compares with the outputs the snapshot's numpy reference computed.
func TestOnnx28CasesAcrossOpsets(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "fixtures", "onnx28", "node")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ran, want := 0, 0
	for _, e := range entries {
		c, err := backendtest.Load(filepath.Join(dir, e.Name()))
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
		default:
			continue
		}
		for _, to := range targets {
			if to == from {
				continue
			}
			want++
			t.Run(fmt.Sprintf("%s_to_%d", e.Name(), to), func(t *testing.T) {
				c, err := backendtest.Load(filepath.Join(dir, e.Name()))
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
	if ran != want || ran < 200 {
		t.Errorf("%d of %d conversions passed", ran, want)
	}
}

// TestOnnx28CasesInORT converts the snapshot's cases to what ONNX Runtime
// 1.30 loads (opset 26, its highest; 24 for Attention-25's sliding window,
// which its ONNX does not know, so that the window is expanded), runs them
// in ONNX Runtime and compares with the snapshot's numpy outputs.
func TestOnnx28CasesInORT(t *testing.T) {
	rt, err := ort.Open(testpaths.ORT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repoRoot(t), "fixtures", "onnx28", "node")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// What ONNX Runtime 1.30 cannot run, measured.
	ortLimits := map[string]string{
		"test_attention_4d_diff_heads_mask4d_padded_kv": "its Attention needs attn_mask's last dimension to equal the total sequence length (\"inconsistent total_sequence_length\")",
		"test_bitcast_bool_to_uint8":                    "it has no BitCast kernel for bool",
	}
	ran := 0
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			if why, ok := ortLimits[e.Name()]; ok {
				t.Skipf("ONNX Runtime 1.30 limit: %s", why)
			}
			c, err := backendtest.Load(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			n := c.Model.Graph.Nodes[0]
			to := 26
			if n.OpType == "Attention" && (n.Attr("left_window_size") != nil || n.Attr("right_window_size") != nil) {
				to = 24
			}
			if _, err := Convert(c.Model, Options{To: to}); err != nil {
				t.Fatalf("opset %d: %v", to, err)
			}
			path := filepath.Join(t.TempDir(), "m.onnx")
			if err := canonical.Save(path, c.Model, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			ins, want, err := readDataSet(filepath.Join(dir, e.Name(), "test_data_set_0"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := rt.Run(path, ins)
			if err != nil {
				t.Fatalf("ONNX Runtime refuses the opset %d model: %v", to, err)
			}
			if err := compareOutputs(got, want); err != nil {
				t.Fatalf("opset %d in ONNX Runtime: %v", to, err)
			}
			ran++
		})
	}
	t.Logf("%d of %d cases run in ONNX Runtime and match", ran, len(entries))
	if ran != len(entries)-len(ortLimits) {
		t.Errorf("%d cases ran, want %d", ran, len(entries)-len(ortLimits))
	}
}
