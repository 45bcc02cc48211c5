//go:build cgo

package ort

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built is the onnxconv binary the package's tests run (CGO_ENABLED=0,
// as released), built once into a folder TestMain removes.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// onnxconvBin builds ./cmd/onnxconv on the first call and returns its path.
func onnxconvBin(t testing.TB) string {
	t.Helper()
	root := repoRoot(t)
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "ocort")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "onnxconv")
		cmd := exec.Command("go", "build", "-o", built.path, "./cmd/onnxconv")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("building onnxconv: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}
