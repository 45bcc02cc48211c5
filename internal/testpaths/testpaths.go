// Package testpaths finds, for tests, the repository root (the folder
// holding go.mod) and the shared folder beside it (../shared), which holds
// the ONNX release and other test material that is not copied into the
// repository.
package testpaths

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
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

// GoModule returns the folder of Go module path at version in the module
// cache, downloading it through the Go module proxy when it is not there
// (`go mod download`, which checks it against the checksum database), and
// checks that its hash is sum (the "h1:" line of go.sum). Tests read the
// test data that a Go module ships (its testdata/) from there rather than
// copy it into the repository.
func GoModule(t testing.TB, path, version, sum string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = t.TempDir() // outside this module: its go.mod and go.sum stay as they are
	out, err := cmd.Output()
	var m struct{ Dir, Sum, Error string }
	if jerr := json.Unmarshal(out, &m); jerr != nil || m.Error != "" || err != nil {
		t.Fatalf("go mod download %s@%s (the test's data; needs the Go module proxy once): %v %s %s", path, version, err, m.Error, stderrOf(err))
	}
	if m.Sum != sum {
		t.Fatalf("go mod download %s@%s: hash %s, want %s", path, version, m.Sum, sum)
	}
	return m.Dir
}

// stderrOf is the standard error an *exec.ExitError kept, or "".
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// LeavesTestdata returns the testdata folder of the Go leaves library
// (github.com/dmitryikh/leaves, MIT), the version ../shared/models/lightgbm
// took its LightGBM files from: it also holds real pre-1.0 XGBoost
// binaries (xg*.model) and scikit-learn 0.19 protocol-0 pickles
// (sk_*.model) with the predictions those libraries stored for them.
func LeavesTestdata(t testing.TB) string {
	t.Helper()
	return filepath.Join(GoModule(t, "github.com/dmitryikh/leaves", "v0.0.0-20230708180554-25d19a787328",
		"h1:ht/zhLOAy9iiEKTKGkXvpw92Z7O6NK0bIVZVREy0kIE="), "testdata")
}
