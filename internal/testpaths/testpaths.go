// Package testpaths finds, for tests, the repository root (the folder
// holding go.mod) and the shared folder beside it (../shared), which holds
// the ONNX release and other test material that is not copied into the
// repository.
package testpaths

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot returns the folder holding go.mod, walking up from the test's
// working directory (its package folder).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("go.mod not found above the package folder")
		}
		dir = up
	}
}

// Shared returns ../shared beside the repository, joined with elem.
func Shared(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{RepoRoot(t), "..", "shared"}, elem...)...)
}
