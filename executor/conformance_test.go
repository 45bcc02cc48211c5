package executor_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// repoRoot walks up to the folder holding go.mod.
func repoRoot(t *testing.T) string { return testpaths.RepoRoot(t) }

// TestConformance builds onnxconv, runs `onnxconv test --json` over the
// ONNX backend tests and fails when the node pass count drops below the
// floor recorded in testdata/conformance-floor.txt.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("conformance suite skipped in -short mode")
	}
	root := repoRoot(t)
	suites := filepath.Join(root, "..", "shared", "onnx-v1.22", "backend-tests")
	if _, err := os.Stat(filepath.Join(suites, "node")); err != nil {
		t.Fatalf("ONNX backend tests not found at %s (../shared must sit beside the repository): %v", suites, err)
	}
	floorText, err := os.ReadFile(filepath.Join(root, "executor", "testdata", "conformance-floor.txt"))
	if err != nil {
		t.Fatal(err)
	}
	floors := map[string]int{}
	for _, line := range strings.Split(string(floorText), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("bad floor line %q", line)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("bad floor line %q", line)
		}
		floors[f[0]] = n
	}
	bin := filepath.Join(t.TempDir(), "onnxconv")
	build := exec.Command("go", "build", "-o", bin, "./cmd/onnxconv")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building onnxconv: %v\n%s", err, out)
	}
	for _, suite := range []string{"node", "simple", "pytorch-converted", "pytorch-operator"} {
		cmd := exec.Command(bin, "test", "--json", "--jobs", "2", filepath.Join(suites, suite))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
			t.Fatalf("%s: onnxconv test: %v\n%s", suite, err, stderr.String())
		}
		var res struct {
			Passed, Failed, Skipped int
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatalf("%s: decoding JSON: %v", suite, err)
		}
		t.Logf("%s: %d passed, %d failed, %d skipped", suite, res.Passed, res.Failed, res.Skipped)
		if floor, ok := floors[suite]; ok && res.Passed < floor {
			t.Errorf("%s: %d cases pass, below the recorded floor of %d", suite, res.Passed, floor)
		}
		if res.Passed+res.Failed+res.Skipped == 0 {
			t.Errorf("%s: no cases ran", suite)
		}
	}
}
