package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/batch"
)

// copyModel copies a fixture model to dir/rel.
func copyModel(t *testing.T, fixture, dir, rel string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "models", fixture, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The manifest of issue 18, as written, over two fixture models: batch
// runs it, merge reports every job passed; a model that cannot be read
// makes merge exit 1; bad shards and manifests exit 2.
func TestBatchCommand(t *testing.T) {
	dir := t.TempDir()
	copyModel(t, "mlp_opset9", dir, "models/mlp9/model.onnx")
	copyModel(t, "mlp_opset17", dir, "models/deep/mlp17/model.onnx")
	manifest := filepath.Join(dir, "manifest.yaml")
	src := "jobs:\n  - models: [\"models/**/*.onnx\"]\n    opset: [11, 17]\n    verify: true\n"
	if err := os.WriteFile(manifest, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCmd("batch", manifest, "--out", out, "--jobs", "2", "--cache", filepath.Join(dir, "cache"))
	if code != 0 || !strings.Contains(stdout, "4 of 4 job(s): 4 pass, 0 fail, 0 error; 4 run") {
		t.Fatalf("batch: exit %d\n%s%s", code, stdout, stderr)
	}
	report := filepath.Join(dir, "report.json")
	code, stdout, stderr = runCmd("batch", "merge", out, "-o", report, "-o", filepath.Join(dir, "report.html"))
	if code != 0 || !strings.Contains(stdout, "4 job(s): 4 pass") {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	var m batch.Merged
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Jobs {
		if r.Status != batch.StatusPass || r.Figures.OpsetAfter != int64(r.Opset) || r.Figures.Comparisons < 1 {
			t.Errorf("%s: %s, opset after %d, %d comparison(s)", r.ID, r.Status, r.Figures.OpsetAfter, r.Figures.Comparisons)
		}
	}

	// Shard 1 of 2 from GitLab's variables (CI_NODE_INDEX counts from 1)
	// runs part of the jobs; with the cache, none runs again.
	t.Setenv("CI_NODE_INDEX", "2")
	t.Setenv("CI_NODE_TOTAL", "2")
	code, stdout, stderr = runCmd("batch", manifest, "--out", filepath.Join(dir, "s1"), "--cache", filepath.Join(dir, "cache"))
	if code != 0 || !strings.Contains(stdout, "shard 1/2:") || !strings.Contains(stdout, "0 run") || !strings.Contains(stderr, "from CI_NODE_INDEX") {
		t.Errorf("shard from CI_NODE_INDEX: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runCmd("batch", manifest, "--out", filepath.Join(dir, "s2"), "--shard", "2/2")
	if code != 2 || !strings.Contains(stderr, "--shard") {
		t.Errorf("--shard 2/2: exit %d, %s", code, stderr)
	}

	// A file that is not a model: the job errs, the run goes on, merge
	// exits 1 (and batch too with --strict).
	if err := os.WriteFile(filepath.Join(dir, "models", "broken.onnx"), []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI_NODE_INDEX", "")
	code, stdout, stderr = runCmd("batch", manifest, "--out", out, "--strict")
	if code != 1 || !strings.Contains(stdout, "6 of 6 job(s): 4 pass, 0 fail, 2 error; 2 run, 0 cached, 4 done before") {
		t.Errorf("batch --strict with a broken model: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCmd("batch", "merge", out, "-o", filepath.Join(dir, "report.md"))
	if code != 1 || !strings.Contains(stdout, "2 error") {
		t.Errorf("merge with a broken model: exit %d\n%s", code, stdout)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "| **ERROR** input | `models/broken.onnx`") {
		t.Errorf("Markdown report:\n%s", md)
	}

	// Bad manifests and reports are usage errors.
	if err := os.WriteFile(manifest, []byte("jobs:\n  - models: [x.onnx]\n    opset: seventeen\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd("batch", manifest, "--out", out)
	if code != 2 || !strings.Contains(stderr, "/jobs/0/opset") {
		t.Errorf("bad manifest: exit %d, %s", code, stderr)
	}
	if code, _, stderr = runCmd("batch", "merge", out, "-o", filepath.Join(dir, "r.txt")); code != 2 {
		t.Errorf("merge -o r.txt: exit %d, %s", code, stderr)
	}
	if code, _, stderr = runCmd("batch", "merge", dir, "-o", report); code != 2 {
		t.Errorf("merge of a folder that is no batch output: exit %d, %s", code, stderr)
	}
}

// batch reports each job's steps with its place and elapsed time, then
// its result; -q says nothing on standard error.
func TestBatchProgress(t *testing.T) {
	dir := t.TempDir()
	copyModel(t, "mlp_opset9", dir, "models/a/model.onnx")
	copyModel(t, "mlp_opset17", dir, "models/b/model.onnx")
	manifest := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(manifest, []byte("jobs:\n  - models: [\"models/**/*.onnx\"]\n    opset: [13]\n    verify: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd("batch", manifest, "--out", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("batch: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"job 1 of 2 (models/a/model.onnx opset=13, 0s): started",
		"job 2 of 2 (models/b/model.onnx opset=13, 0s): started",
		"[2/2] pass",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, id := range []string{"models/a/model.onnx", "models/b/model.onnx"} {
		if !regexp.MustCompile(`job \d of 2 \(` + regexp.QuoteMeta(id) + ` opset=13, [0-9.]+m?s\): verifying `).MatchString(stderr) {
			t.Errorf("no verifying step with its elapsed time for %s:\n%s", id, stderr)
		}
	}
	code, stdout, stderr = runCmd("batch", manifest, "--out", filepath.Join(dir, "q"), "-q")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "2 pass") {
		t.Errorf("batch -q: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
}
