package batch

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// tree makes files (slash paths) under a new temporary folder.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, 100*(i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSchemaInDocsIsTheEmbeddedOne(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "docs", "batch.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, ManifestSchema()) {
		t.Error("docs/batch.schema.json differs from batch/manifest.schema.json: copy it over")
	}
}

func TestIssueManifestAsWritten(t *testing.T) {
	dir := tree(t, "models/a/model.onnx", "models/b/c/deep.onnx", "models/readme.txt", "other/x.onnx")
	src := "jobs:\n  - models: [\"models/**/*.onnx\"]\n    opset: [11, 17]\n    verify: true\n"
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadManifest(filepath.Join(dir, "m.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.ID)
		if j.Action != ActionOpset || !j.Spec.Verify || j.Size == 0 {
			t.Errorf("%s: action %s verify %v size %d", j.ID, j.Action, j.Spec.Verify, j.Size)
		}
	}
	want := []string{"models/a/model.onnx opset=11", "models/a/model.onnx opset=17", "models/b/c/deep.onnx opset=11", "models/b/c/deep.onnx opset=17"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("jobs %q, want %q", ids, want)
	}
	// The same manifest as JSON gives the same jobs.
	js := `{"jobs": [{"models": ["models/**/*.onnx"], "opset": [11, 17], "verify": true}]}`
	mj, err := ParseManifest([]byte(js), dir)
	if err != nil {
		t.Fatal(err)
	}
	jj, err := mj.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(jj, jobs) {
		t.Error("the JSON manifest expands differently from the YAML one")
	}
}

func TestManifestErrors(t *testing.T) {
	dir := tree(t, "a/model.onnx")
	for _, c := range []struct{ src, field, says string }{
		{"jobs:\n  - models: [a/model.onnx]\n    opset: eleven\n", "/jobs/0/opset", ""},
		{"jobs:\n  - models: [a/model.onnx]\n    opset: 11\n    colour: red\n", "/jobs/0", "colour"},
		{"jobs:\n  - models: [a/model.onnx]\n", "/jobs/0", ""},
		{"jobs: []\n", "/jobs", ""},
		{"jobs:\n  - models: [a/*.onnx]\n    opset: 200\n", "/jobs/0/opset", ""},
		{"jobs: [\n", "", "YAML"},
	} {
		_, err := ParseManifest([]byte(c.src), dir)
		var me *ManifestError
		if !errors.As(err, &me) {
			t.Errorf("%q: error %v, want a *ManifestError", c.src, err)
			continue
		}
		if me.Field != c.field || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: field %q, error %q; want field %q saying %q", c.src, me.Field, err, c.field, c.says)
		}
	}
	// Valid by the schema, but matching nothing, or one job twice.
	for _, c := range []struct{ src, field string }{
		{"jobs:\n  - models: [b/*.onnx]\n    opset: 11\n", "/jobs/0/models"},
		{"jobs:\n  - models: [a/model.onnx]\n    opset: 11\n  - models: [\"**/*.onnx\"]\n    opset: [13, 11]\n", "/jobs/1"},
	} {
		m, err := ParseManifest([]byte(c.src), dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Expand()
		var me *ManifestError
		if !errors.As(err, &me) || me.Field != c.field {
			t.Errorf("%q: %v, want a *ManifestError at %s", c.src, err, c.field)
		}
	}
}

func TestExpandActions(t *testing.T) {
	dir := tree(t, "m/model.onnx", "m/test_data_set_0/output_0.pb", "skip/model.onnx")
	src := `jobs:
  - models: ["**/model.onnx"]
    exclude: ["skip/**"]
    targets: onnxruntime-1.15
    plan: [7]
    check: true
    samples: 3
  - name: ref
    models: [m/model.onnx]
    reference: test_data_set_0
`
	m, err := ParseManifest([]byte(src), dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Action{}
	for _, j := range jobs {
		got[j.ID] = j.Action
	}
	want := map[string]Action{
		"m/model.onnx target=onnxruntime-1.15":       ActionTarget,
		"m/model.onnx plan=7":                        ActionPlan,
		"m/model.onnx check":                         ActionCheck,
		"ref:m/model.onnx reference=test_data_set_0": ActionReference,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobs %v, want %v", got, want)
	}
	for _, j := range jobs {
		if j.Action == ActionReference && j.Reference != filepath.Join(dir, "m", "test_data_set_0") {
			t.Errorf("reference folder %s", j.Reference)
		}
		if j.Action == ActionTarget && j.Spec.Samples != 3 {
			t.Errorf("target job samples %d", j.Spec.Samples)
		}
	}
}

func TestGlob(t *testing.T) {
	dir := tree(t, "a.onnx", "x/a.onnx", "x/y/z/a.onnx", "x/y/b.txt", ".hidden/a.onnx")
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{"**/*.onnx", []string{"a.onnx", "x/a.onnx", "x/y/z/a.onnx"}},
		{"x/**/a.onnx", []string{"x/a.onnx", "x/y/z/a.onnx"}},
		{"x/*/*/a.onnx", []string{"x/y/z/a.onnx"}},
		{"x/y/*", []string{"x/y/b.txt"}},
		{"x/a.onnx", []string{"x/a.onnx"}},
		{"nothing/**/*.onnx", nil},
	} {
		got, err := Glob(dir, c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.pattern, got, c.want)
		}
	}
	// Relative to the folder given, also upwards.
	got, err := Glob(filepath.Join(dir, "x"), "../x/y/z/*.onnx")
	if err != nil || !reflect.DeepEqual(got, []string{"../x/y/z/a.onnx"}) {
		t.Errorf("../x/y/z/*.onnx: %q %v", got, err)
	}
	if _, err := Glob(dir, "x/[/a"); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

func TestShardFromEnv(t *testing.T) {
	for _, c := range []struct {
		env    map[string]string
		want   Shard
		source string
		bad    bool
	}{
		{nil, Shard{0, 1}, "", false},
		{map[string]string{"ONNXCONV_SHARD": "2/5"}, Shard{2, 5}, EnvShard, false},
		{map[string]string{"JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "4"}, Shard{3, 4}, EnvK8sIndex, false},
		{map[string]string{"JOB_COMPLETION_INDEX": "3"}, Shard{}, EnvK8sIndex, true},
		{map[string]string{"JOB_COMPLETION_INDEX": "4", "JOB_COMPLETIONS": "4"}, Shard{}, EnvK8sIndex, true},
		// GitLab counts from 1.
		{map[string]string{"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3"}, Shard{0, 3}, EnvGitLabIndex, false},
		{map[string]string{"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "3"}, Shard{2, 3}, EnvGitLabIndex, false},
		{map[string]string{"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "3"}, Shard{}, EnvGitLabIndex, true},
		// Slurm counts from the array's first index.
		{map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "8"}, Shard{0, 8}, EnvSlurmID, false},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "2"}, Shard{3, 4}, EnvSlurmID, false},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "4"}, Shard{}, EnvSlurmID, true},
	} {
		got, source, err := ShardFromEnv(func(k string) string { return c.env[k] })
		var se *ShardError
		if c.bad {
			if !errors.As(err, &se) {
				t.Errorf("%v: %v, want a *ShardError", c.env, err)
			}
			continue
		}
		if err != nil || got != c.want || source != c.source {
			t.Errorf("%v: %v from %q (%v), want %v from %q", c.env, got, source, err, c.want, c.source)
		}
	}
	// --shard wins over the environment.
	s, src, err := ResolveShard("1/2", func(string) string { return "3" })
	if err != nil || s != (Shard{1, 2}) || src != "--shard" {
		t.Errorf("ResolveShard: %v %q %v", s, src, err)
	}
	for _, bad := range []string{"1", "2/2", "-1/2", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("--shard %s accepted", bad)
		}
	}
}

func TestAssign(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var jobs []Job
	var maxW int64
	for i := range 300 {
		// Sizes spread over four orders of magnitude, as a zoo's are.
		size := int64(1000 * (1 << r.IntN(14)))
		j := Job{ID: "m" + string(rune('a'+i%26)) + "/" + strings.Repeat("x", i%7) + string(rune(i)), Size: size}
		jobs = append(jobs, j)
		maxW = max(maxW, Weight(j))
	}
	for _, n := range []int{1, 2, 4, 7} {
		a := Assign(jobs, n)
		load := make([]int64, n)
		byID := map[string]int{}
		for i, s := range a {
			if s < 0 || s >= n {
				t.Fatalf("shard %d of %d", s, n)
			}
			load[s] += Weight(jobs[i])
			byID[jobs[i].ID] = s
		}
		lo, hi := load[0], load[0]
		for _, l := range load {
			lo, hi = min(lo, l), max(hi, l)
		}
		if hi-lo > maxW {
			t.Errorf("%d shards: loads %v differ by more than the heaviest job (%d)", n, load, maxW)
		}
		// The assignment depends on the jobs, not on their order.
		shuffled := append([]Job(nil), jobs...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for i, s := range Assign(shuffled, n) {
			if byID[shuffled[i].ID] != s {
				t.Fatalf("%d shards: %s moved from shard %d to %d when the list was shuffled", n, shuffled[i].ID, byID[shuffled[i].ID], s)
			}
		}
		// Select partitions the jobs.
		total := 0
		for i := range n {
			total += len(Select(jobs, Shard{i, n}))
		}
		if total != len(jobs) {
			t.Errorf("%d shards select %d jobs in all, want %d", n, total, len(jobs))
		}
	}
}

// The example manifest is valid.
func TestExampleManifest(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "examples", "batch", "models.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Jobs) != 3 || len(m.Jobs[0].Opset) != 2 || len(m.Jobs[1].Targets) != 1 ||
		m.Jobs[2].Bench == nil || *m.Jobs[2].Bench != (BenchSpec{Reps: 20, Warmup: 2, Threads: 1}) {
		t.Errorf("example manifest read as %+v", m.Jobs)
	}
}
