package batch_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/onnxconv/onnxconv/batch"
)

// merged is what `onnxconv batch merge … -o merged.json` wrote.
type merged = batch.Merged

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// mergeDirs runs `onnxconv batch merge DIRS -o merged.json` (the command
// the examples document) and reads the JSON report. The merge exits 1
// when a job failed, which the example collection has on purpose; any
// other failure fails the test.
func mergeDirs(t *testing.T, bin string, dirs ...string) *merged {
	t.Helper()
	report := filepath.Join(t.TempDir(), "merged.json")
	cmd := exec.Command(bin, append(append([]string{"batch", "merge"}, dirs...), "-o", report)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("batch merge: %v\n%s", err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("batch merge wrote no report: %v\n%s", err, out)
	}
	var m merged
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("merged report: %v", err)
	}
	return &m
}

// compareOutcomes checks that got has the same jobs as want with the same
// outcome (status, kind, figures), job for job, and nothing missing.
func compareOutcomes(t *testing.T, what string, want, got *merged) {
	t.Helper()
	wo, go_ := map[string]batch.Outcome{}, map[string]batch.Outcome{}
	for _, r := range want.Jobs {
		wo[r.ID] = r.Outcome()
	}
	for _, r := range got.Jobs {
		go_[r.ID] = r.Outcome()
	}
	if len(wo) == 0 {
		t.Fatalf("%s: the one-process run has no jobs", what)
	}
	ids := make([]string, 0, len(wo))
	for id := range wo {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g, ok := go_[id]
		if !ok {
			t.Errorf("%s: %s missing", what, id)
		} else if g != wo[id] {
			t.Errorf("%s: %s: %+v, one process %+v", what, id, g, wo[id])
		}
	}
	if len(go_) != len(wo) || got.Totals.Missing != 0 {
		t.Errorf("%s: %d jobs (%d missing), one process %d", what, len(go_), got.Totals.Missing, len(wo))
	}
}

// shardDirs returns the results/shard-* folders the array wrote.
func shardDirs(t *testing.T, work string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(work, "results", "shard-*"))
	if err != nil || len(dirs) != 4 {
		t.Fatalf("want 4 shard folders, have %v (%v)", dirs, err)
	}
	return dirs
}

// records returns the job records in an output folder, by file name.
func records(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "jobs", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}
