package batch

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/bench"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// benchManifest is a small manifest with bench jobs over two fixture
// models, a conversion beside them, a bench of a file that is not a
// model, and a bench against a runtime that is not installed. Speed is
// measured, never asserted: the test checks the structure of the figures.
func benchManifest(t *testing.T, reps int) *Manifest {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`jobs:
  - name: speed
    models: [../../fixtures/models/mlp_opset9/model.onnx, ../../fixtures/models/resnet_small/model.onnx]
    bench: {reps: %d, warmup: 2, threads: 1}
  - name: convert
    models: [../../fixtures/models/mlp_opset9/model.onnx]
    opset: 17
  - name: broken
    models: [broken/model.onnx]
    bench: true
  - name: ort
    models: [../../fixtures/models/mlp_opset9/model.onnx]
    bench: {reps: 1, runtime: no-such-runtime}
`, reps)
	m, err := ParseManifest([]byte(src), dir)
	if err != nil {
		t.Fatal(err)
	}
	m.AllowOutside = true // the fixture models are the repository's
	return m
}

func TestBenchJobs(t *testing.T) {
	const reps = 5
	man := benchManifest(t, reps)
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "no-plugins")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := func(out string) Options {
		return Options{Out: filepath.Join(tmp, out), Jobs: 2, Cache: filepath.Join(tmp, "cache"),
			Plugins: plugins.Options{PluginPath: empty, UserDir: empty}}
	}
	sum, err := Run(context.Background(), man, opts("one"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != 5 || len(sum.Executed) != 5 {
		t.Fatalf("%d jobs, %d executed; want 5 and 5", sum.Total, len(sum.Executed))
	}
	merged := merge(t, filepath.Join(tmp, "one"))
	byID := map[string]*Record{}
	for _, r := range merged.Jobs {
		byID[r.ID] = r
	}
	benched := []string{
		"speed:../../fixtures/models/mlp_opset9/model.onnx bench",
		"speed:../../fixtures/models/resnet_small/model.onnx bench",
	}
	for _, id := range benched {
		r := byID[id]
		if r == nil {
			t.Fatalf("no record for %s (have %v)", id, keys(byID))
		}
		checkBenchRecord(t, r, reps)
		e := r.Bench.Executor
		t.Logf("%s: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, %.0f runs/s, peak RSS %.0f MiB, load %.1f ms; job %.0f ms",
			id, e.P50MS, e.P90MS, e.P99MS, e.ThroughputPerS, float64(r.Bench.PeakRSSBytes)/(1<<20), r.Bench.LoadMS, r.DurationMS)
		// The record on disk holds the figures.
		b, err := os.ReadFile(filepath.Join(tmp, "one", jobsDir, (&Job{ID: id}).Key()+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"action":"bench"`, `"p50_ms":`, `"p99_ms":`, `"throughput_per_s":`, `"peak_rss_bytes":`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: the record lacks %s: %s", id, want, b)
			}
		}
		// Its reports: the table and the JSON of onnxconv bench.
		if len(r.Reports) != 2 {
			t.Fatalf("%s: reports %v, want bench.txt and bench.json", id, r.Reports)
		}
		var res bench.Result
		js, err := os.ReadFile(filepath.Join(tmp, "one", filepath.FromSlash(r.Reports[1])))
		if err == nil {
			err = json.Unmarshal(js, &res)
		}
		if err != nil || res.Executor.Runs != reps || res.Model != r.Model {
			t.Errorf("%s: bench.json: %v, %d runs of %q", id, err, res.Executor.Runs, res.Model)
		}
		txt, err := os.ReadFile(filepath.Join(tmp, "one", filepath.FromSlash(r.Reports[0])))
		if err != nil || !strings.Contains(string(txt), "p50 ms") {
			t.Errorf("%s: bench.txt: %v\n%s", id, err, txt)
		}
	}
	// A conversion beside the benches is untouched by them.
	if r := byID["convert:../../fixtures/models/mlp_opset9/model.onnx opset=17"]; r == nil || r.Status != StatusPass || r.Bench != nil {
		t.Errorf("the conversion job: %+v", r)
	}
	// A file that is not a model does not run: no figures.
	if r := byID["broken:broken/model.onnx bench"]; r == nil || r.Status != StatusError || r.Kind != "input" || r.Bench != nil {
		t.Errorf("bench of a file that is not a model: %+v", r)
	}
	// A runtime that is not installed is a usage error, not a failure of
	// the model.
	if r := byID["ort:../../fixtures/models/mlp_opset9/model.onnx bench"]; r == nil || r.Status != StatusError || r.Kind != "usage" ||
		!strings.Contains(r.Message, "no-such-runtime") {
		t.Errorf("bench against a missing runtime: %+v", r)
	}
	if merged.Totals.Pass != 3 || merged.Totals.Error != 2 || merged.Totals.Fail != 0 {
		t.Errorf("totals %+v, want 3 pass and 2 errors", merged.Totals)
	}

	checkBenchReports(t, merged, tmp, benched, reps)

	// The same manifest and cache: nothing runs, the figures are the
	// ones measured (the cache is per kind of machine, and this is one).
	sum, err = Run(context.Background(), man, opts("again"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Executed) != 1 || sum.Cached != 4 {
		// The usage error is not cached: it says nothing about the model.
		t.Errorf("second run executed %v and took %d from the cache; want only the usage error run", sum.Executed, sum.Cached)
	}
	again := merge(t, filepath.Join(tmp, "again"))
	for _, r := range again.Jobs {
		if w := byID[r.ID]; r.Outcome() != w.Outcome() {
			t.Errorf("%s: cached %+v, computed %+v", r.ID, r.Outcome(), w.Outcome())
		}
		if r.Bench != nil && (!r.Cached || *r.Bench != *byID[r.ID].Bench) {
			t.Errorf("%s: from the cache %v, figures %+v; want the computed %+v", r.ID, r.Cached, r.Bench, byID[r.ID].Bench)
		}
	}

	// Other bench settings are another key: the benches run again, the
	// conversion comes from the cache.
	sum, err = Run(context.Background(), benchManifest(t, reps+1), opts("more"))
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	for _, id := range sum.Executed {
		ran[id] = true
	}
	for _, id := range benched {
		if !ran[id] {
			t.Errorf("with reps %d, %s came from the cache of reps %d", reps+1, id, reps)
		}
	}
	if ran["convert:../../fixtures/models/mlp_opset9/model.onnx opset=17"] {
		t.Error("the conversion ran again although only the bench settings changed")
	}
	more := merge(t, filepath.Join(tmp, "more"))
	for _, r := range more.Jobs {
		if r.ID == benched[0] {
			checkBenchRecord(t, r, reps+1)
		}
	}
}

// checkBenchRecord checks a bench job's record: it passed, and its
// figures are consistent (not fast or slow: consistent).
func checkBenchRecord(t *testing.T, r *Record, reps int) {
	t.Helper()
	b := r.Bench
	if r.Status != StatusPass || r.Action != ActionBench || b == nil {
		t.Fatalf("%s: %s %s %q, bench %v", r.ID, r.Status, r.Kind, r.Message, b)
	}
	e := b.Executor
	if b.Reps != reps || b.Warmup != 2 || b.Threads != 1 || e.Runs != reps || e.Name != "executor" {
		t.Errorf("%s: settings %d/%d/%d, %d runs of %q; want reps %d, warmup 2, threads 1", r.ID, b.Reps, b.Warmup, b.Threads, e.Runs, e.Name, reps)
	}
	if !(0 < e.MinMS && e.MinMS <= e.P50MS && e.P50MS <= e.P90MS && e.P90MS <= e.P99MS) || e.MeanMS <= 0 || e.ThroughputPerS <= 0 || b.LoadMS <= 0 {
		t.Errorf("%s: inconsistent figures %+v (load %g ms)", r.ID, e, b.LoadMS)
	}
	if runtime.GOOS == "linux" && b.PeakRSSBytes <= 0 {
		t.Errorf("%s: no peak RSS", r.ID)
	}
	if b.CPUs <= 0 || b.Kernel == "" || b.Runtime != nil {
		t.Errorf("%s: machine %d CPUs, kernel %q, runtime %v", r.ID, b.CPUs, b.Kernel, b.Runtime)
	}
	if r.Figures.OpsetBefore == 0 || r.Figures.IRBefore == 0 {
		t.Errorf("%s: figures %+v lack the model's opset and IR", r.ID, r.Figures)
	}
	if want := fmt.Sprintf("executor %d runs", reps); !strings.Contains(r.Outcome().Bench, want) {
		t.Errorf("%s: outcome %q lacks %q", r.ID, r.Outcome().Bench, want)
	}
}

// checkBenchReports writes the merge in every format and finds the bench
// figures in each.
func checkBenchReports(t *testing.T, m *Merged, dir string, benched []string, reps int) {
	t.Helper()
	read := func(ext string) string {
		p := filepath.Join(dir, "bench"+ext)
		if err := WriteMerged(p, m); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	isBench := map[string]bool{}
	for _, id := range benched {
		isBench[id] = true
	}

	// JSON: every record, the bench ones with their figures.
	var back Merged
	if err := json.Unmarshal([]byte(read(".json")), &back); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range back.Jobs {
		if isBench[r.ID] {
			n++
			checkBenchRecord(t, r, reps)
		}
	}
	if n != len(benched) {
		t.Errorf("JSON report: %d bench records, want %d", n, len(benched))
	}

	// HTML: the bench columns, one row per job, figures in the bench rows.
	html := read(".html")
	if !strings.Contains(html, "<th title=\"executor latency: median, 90th and 99th percentile of the timed runs\">p50 / p90 / p99 ms</th><th>Runs/s</th><th>Peak RSS MiB</th>") {
		t.Error("HTML report: no bench columns")
	}
	if got := strings.Count(html, `<td class="num bench">`); got != len(benched) {
		t.Errorf("HTML report: %d rows with bench figures, want %d", got, len(benched))
	}
	if got := strings.Count(html, "<tr class="); got != len(m.Jobs) {
		t.Errorf("HTML report: %d rows, want %d", got, len(m.Jobs))
	}
	for _, r := range m.Jobs {
		if b := r.Bench; b != nil {
			cell := fmt.Sprintf(`<td class="num bench">%s / %s / %s</td>`, msText(b.Executor.P50MS), msText(b.Executor.P90MS), msText(b.Executor.P99MS))
			if !strings.Contains(html, cell) {
				t.Errorf("HTML report: %s: no cell %s", r.ID, cell)
			}
		}
	}

	// It renders in headless Chromium, failures first.
	checkHTML(t, m, filepath.Join(dir, "bench.html"), m.Totals.Fail+m.Totals.Error+m.Totals.Missing)

	// Markdown: the columns, and every row as wide as the header.
	md := read(".md")
	var header string
	var rowsMD []string
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "| status"):
			header = l
		case strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| ---"):
			rowsMD = append(rowsMD, l)
		}
	}
	if !strings.Contains(header, "| p50 / p90 / p99 ms | runs/s | peak RSS MiB |") || strings.Contains(header, "ratio") {
		t.Errorf("Markdown header %q", header)
	}
	if len(rowsMD) != len(m.Jobs) {
		t.Errorf("Markdown: %d rows, want %d", len(rowsMD), len(m.Jobs))
	}
	for _, l := range rowsMD {
		if strings.Count(l, "|") != strings.Count(header, "|") {
			t.Errorf("Markdown row %q has %d cells, the header %d", l, strings.Count(l, "|")-1, strings.Count(header, "|")-1)
		}
	}

	// JUnit: the figures as properties of the bench test cases only.
	var doc struct {
		Cases []struct {
			Name  string `xml:"name,attr"`
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal([]byte(read(".xml")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) != len(m.Jobs) {
		t.Fatalf("JUnit: %d test cases, want %d", len(doc.Cases), len(m.Jobs))
	}
	for _, c := range doc.Cases {
		props := map[string]string{}
		for _, p := range c.Props {
			props[p.Name] = p.Value
		}
		if !isBench[c.Name] {
			if len(props) != 0 {
				t.Errorf("JUnit: %s has properties %v", c.Name, props)
			}
			continue
		}
		if props["bench.runs"] != strconv.Itoa(reps) || props["bench.reps"] != strconv.Itoa(reps) || props["bench.threads"] != "1" {
			t.Errorf("JUnit: %s: properties %v", c.Name, props)
		}
		var p [3]float64
		for i, k := range []string{"bench.p50_ms", "bench.p90_ms", "bench.p99_ms"} {
			v, err := strconv.ParseFloat(props[k], 64)
			if err != nil {
				t.Errorf("JUnit: %s: %s = %q", c.Name, k, props[k])
			}
			p[i] = v
		}
		if !(0 < p[0] && p[0] <= p[1] && p[1] <= p[2]) {
			t.Errorf("JUnit: %s: p50, p90, p99 = %v", c.Name, p)
		}
		for _, k := range []string{"bench.throughput_per_s", "bench.peak_rss_bytes", "bench.sgemm_kernel"} {
			if props[k] == "" {
				t.Errorf("JUnit: %s lacks %s", c.Name, k)
			}
		}
	}
}

func keys(m map[string]*Record) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBenchManifest(t *testing.T) {
	dir := tree(t, "m/model.onnx")
	m, err := ParseManifest([]byte("jobs:\n  - models: [m/model.onnx]\n    bench: true\n  - name: one\n    models: [m/model.onnx]\n    bench: {threads: 1, runtime: onnxruntime}\n    opset: 17\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*BenchSpec{}
	for _, j := range jobs {
		if j.Action == ActionBench {
			if j.Spec.Verify || j.Spec.Action != ActionBench {
				t.Errorf("%s: spec %+v", j.ID, j.Spec)
			}
			got[j.ID] = j.Spec.Bench
		}
	}
	if len(jobs) != 3 || len(got) != 2 {
		t.Fatalf("jobs %+v", jobs)
	}
	if b := got["m/model.onnx bench"]; b == nil || *b != (BenchSpec{Reps: DefaultBenchReps, Warmup: DefaultBenchWarmup}) {
		t.Errorf("bench: true read as %+v", b)
	}
	if b := got["one:m/model.onnx bench"]; b == nil || *b != (BenchSpec{Reps: DefaultBenchReps, Warmup: DefaultBenchWarmup, Threads: 1, Runtime: "onnxruntime"}) {
		t.Errorf("bench: {threads: 1, runtime: onnxruntime} read as %+v", b)
	}
	// The cache key holds every bench setting.
	var base *Job
	for i := range jobs {
		if jobs[i].ID == "m/model.onnx bench" {
			base = &jobs[i]
		}
	}
	k0, _, err := cacheKey(base, Tool{Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []BenchSpec{{Reps: 21, Warmup: 2}, {Reps: 20, Warmup: 3}, {Reps: 20, Warmup: 2, Threads: 2}, {Reps: 20, Warmup: 2, Runtime: "x"}} {
		j := *base
		j.Spec.Bench = &b
		k, _, err := cacheKey(&j, Tool{Version: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if k == k0 {
			t.Errorf("bench %+v has the cache key of the defaults", b)
		}
	}

	for _, c := range []struct{ src, field string }{
		{"jobs:\n  - models: [m/model.onnx]\n    bench: {reps: 0}\n", "/jobs/0/bench/reps"},
		{"jobs:\n  - models: [m/model.onnx]\n    bench: {reps: 3, speed: fast}\n", "/jobs/0/bench"},
		{"jobs:\n  - models: [m/model.onnx]\n    bench: false\n", "/jobs/0"},
		{"jobs:\n  - models: [m/model.onnx]\n    bench: {threads: -1}\n", "/jobs/0/bench/threads"},
	} {
		_, err := ParseManifest([]byte(c.src), dir)
		var me *ManifestError
		if !errors.As(err, &me) {
			t.Errorf("%q: %v, want a *ManifestError", c.src, err)
			continue
		}
		if !strings.HasPrefix(me.Field, c.field) {
			t.Errorf("%q: field %q (%v), want %q", c.src, me.Field, err, c.field)
		}
	}
}

func TestBenchErrorKinds(t *testing.T) {
	for _, c := range []struct {
		err         error
		status      Status
		kind        string
		description string
	}{
		{&bench.UsageError{Msg: "reps must be at least 1"}, StatusError, "usage", "bad settings"},
		{fmt.Errorf("bench: %w", fmt.Errorf("runtime %q: %w serves it", "x", plugins.ErrNotFound)), StatusError, "usage", "no such runtime"},
		{fmt.Errorf("bench m: inputs: %w", &tensorio.MissingTensorError{Prefix: "input"}), StatusError, "input", "inputs missing"},
		{fmt.Errorf("bench m: inputs: %w", &os.PathError{Op: "open", Path: "x", Err: os.ErrNotExist}), StatusError, "input", "inputs unreadable"},
		{fmt.Errorf("bench m: ort: %w", &plugins.PluginError{Plugin: "ort", Op: "run", Kind: plugins.ErrCrashed}), StatusError, "runtime", "runtime crashed"},
		{fmt.Errorf("bench m: ort: %w", &plugins.PluginError{Plugin: "ort", Op: "run", Kind: plugins.ErrFailed}), StatusFail, "does_not_run", "runtime refuses the model"},
		{fmt.Errorf("bench m: executor: %w", errors.New("op Foo is not supported")), StatusFail, "does_not_run", "executor cannot run it"},
	} {
		var rec Record
		setBenchError(&rec, c.err)
		if rec.Status != c.status || rec.Kind != c.kind || rec.Message != c.err.Error() {
			t.Errorf("%s: %s/%s %q, want %s/%s", c.description, rec.Status, rec.Kind, rec.Message, c.status, c.kind)
		}
	}
}

// TestBenchFailureCrossesProcesses: what BenchFailure makes of an error
// (the answer of `onnxconv bench --json`) is recorded with the class the
// error has in process, and an answer that is not a class a bench job
// records is not taken.
func TestBenchFailureCrossesProcesses(t *testing.T) {
	for _, err := range []error{
		&bench.UsageError{Msg: "reps must be at least 1"},
		fmt.Errorf("bench: %w", plugins.ErrNotFound),
		fmt.Errorf("bench x: executor: %w", errors.New("no operator NoSuchOp")),
		fmt.Errorf("inputs: %w", &os.PathError{Op: "open", Path: "x", Err: os.ErrNotExist}),
	} {
		var direct, crossed Record
		setBenchError(&direct, err)
		b, jerr := json.Marshal(BenchFailure(err))
		var back BenchError
		if jerr == nil {
			jerr = json.Unmarshal(b, &back)
		}
		if jerr != nil || !back.valid() {
			t.Fatalf("%v: answer %s (%v) not taken back", err, b, jerr)
		}
		setBenchError(&crossed, &back)
		if crossed.Status != direct.Status || crossed.Kind != direct.Kind || crossed.Message != direct.Message {
			t.Errorf("%v: across processes %s/%s %q, in process %s/%s %q", err, crossed.Status, crossed.Kind, crossed.Message, direct.Status, direct.Kind, direct.Message)
		}
	}
	for _, bad := range []*BenchError{nil, {Status: StatusPass, Kind: "usage", Message: "x"}, {Status: StatusError, Kind: "does_not_run", Message: "x"},
		{Status: StatusFail, Kind: "anything", Message: "x"}, {Status: StatusError, Kind: "usage"}} {
		if bad.valid() {
			t.Errorf("%+v taken as a failure class", bad)
		}
	}
}
