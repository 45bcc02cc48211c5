package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// sharedDir returns ../shared relative to the repository root.
func sharedDir(t testing.TB) string {
	t.Helper()
	s := testpaths.Shared(t, "onnx-v1.22", "backend-tests")
	if _, err := os.Stat(s); err != nil {
		t.Fatalf("ONNX backend tests not found (../shared must sit beside the repository): %v", err)
	}
	return s
}

func TestBackendModelsPass(t *testing.T) {
	root := sharedDir(t)
	total := 0
	for _, folder := range []string{"node", "simple", "pytorch-converted", "pytorch-operator"} {
		entries, err := os.ReadDir(filepath.Join(root, folder))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			path := filepath.Join(root, folder, e.Name(), "model.onnx")
			if _, err := os.Stat(path); err != nil {
				continue
			}
			m, err := canonical.Load(path, canonical.LoadOptions{})
			if err != nil {
				t.Errorf("%s/%s: load: %v", folder, e.Name(), err)
				continue
			}
			total++
			for _, p := range Check(m) {
				t.Errorf("%s/%s: %s", folder, e.Name(), p)
			}
			m.Close()
		}
	}
	t.Logf("checked %d backend-test models", total)
	if total < 1900 {
		t.Errorf("only %d models found, want >= 1900", total)
	}
}
