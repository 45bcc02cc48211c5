package backendtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestOnnx28Cases runs the node cases rebuilt from the generators of the
// ONNX main snapshot (fixtures/onnx28/build.py: Attention 23-25,
// SwiGLU-28, Celu-28, TensorScatter, BitCast; expected outputs computed by
// the snapshot's numpy code) on the built-in executor.
func TestOnnx28Cases(t *testing.T) {
	dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "onnx28", "node")
	cases, err := FindCases([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("%d cases under %s, want the 105 build.py writes", len(cases), dir)
	}
	failed := 0
	for _, c := range cases {
		r := RunDir(context.Background(), c, ExecutorRunner)
		if r.Status != Pass {
			failed++
			t.Errorf("%s: %s: %s", r.Name, r.Status, r.Reason)
		}
	}
	t.Logf("%d of %d cases pass", len(cases)-failed, len(cases))
	if _, err := os.Stat(filepath.Join(dir, "test_swiglu")); err != nil {
		t.Errorf("the SwiGLU-28 case is missing: %v", err)
	}
}
