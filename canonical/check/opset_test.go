package check

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// TestOpsetBeyondNewest: a real backend model whose default-domain import
// is rewritten to version 999 is rejected, naming the field.
func TestOpsetBeyondNewest(t *testing.T) {
	p := filepath.Join(testpaths.RepoRoot(t), "..", "shared", "onnx-v1.22", "backend-tests", "node", "test_relu", "model.onnx")
	m, err := canonical.Load(p, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if probs := Schema(m); len(probs) != 0 {
		t.Fatalf("test_relu as shipped: %v", probs)
	}
	idx := -1
	for i, o := range m.OpsetImports {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatal("test_relu imports no default domain")
	}
	m.OpsetImports[idx].Version = 999
	max := onnxspec.MaxOpset("")
	if max != 28 {
		t.Fatalf("the registry's newest ai.onnx opset (ONNX 1.23 dev snapshot) is %d, want 28", max)
	}
	want := fmt.Sprintf("opset_import[%d]: ai.onnx version 999 is beyond the newest known opset 28", idx)
	var got []string
	for _, p := range Schema(m) {
		got = append(got, p.Error())
	}
	if len(got) == 0 || !strings.HasPrefix(got[0], want) {
		t.Errorf("Schema = %q, want first %q", got, want)
	}
	// The newest known version itself is fine.
	m.OpsetImports[idx].Version = int64(max)
	if probs := Schema(m); len(probs) != 0 {
		t.Errorf("opset %d: %v", max, probs)
	}
	// ai.onnx.ml too.
	m.SetOpset(canonical.MLDomain, 99)
	found := false
	for _, p := range Schema(m) {
		found = found || strings.Contains(p.Error(), "ai.onnx.ml version 99 is beyond the newest known opset 5")
	}
	if !found {
		t.Errorf("ai.onnx.ml 99 not reported: %v", Schema(m))
	}
}
