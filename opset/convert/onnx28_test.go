package convert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/onnxspec"
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
