package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// collection is the manifest the run tests use (see its comments): the
// fixture models and 50 ONNX backend node tests, each to opsets 11 and
// 17, and one file that is not a model.
func collection(t *testing.T) *Manifest {
	t.Helper()
	node := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("the ONNX backend tests are not beside the repository (%v): they come with ../shared", err)
	}
	m, err := LoadManifest(filepath.Join("testdata", "collection.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m.AllowOutside = true // its models are the repository's and ../shared's
	return m
}

// outcomes maps job ID to outcome.
func outcomes(t *testing.T, m *Merged) map[string]Outcome {
	t.Helper()
	out := map[string]Outcome{}
	for _, r := range m.Jobs {
		out[r.ID] = r.Outcome()
	}
	return out
}

func merge(t *testing.T, dirs ...string) *Merged {
	t.Helper()
	m, err := Merge(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// records reads the records of an output folder: file name -> bytes.
func records(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, jobsDir, "*.json"))
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

// shardCmd starts this test binary as shard index of count, as a
// Kubernetes Indexed Job would (JOB_COMPLETION_INDEX, JOB_COMPLETIONS).
func shardCmd(t *testing.T, manifest, out string, index, count, hangAfter int) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(),
		childManifestEnv+"="+manifest, childOutEnv+"="+out, childJobsEnv+"=1",
		EnvK8sIndex+"="+strconv.Itoa(index), EnvK8sCount+"="+strconv.Itoa(count),
		childHangEnv+"="+strconv.Itoa(hangAfter))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stdout, &stderr
}

func childSummary(t *testing.T, cmd *exec.Cmd, stdout, stderr *bytes.Buffer) *Summary {
	t.Helper()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("shard process: %v\n%s", err, stderr.String())
	}
	var s Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("shard summary: %v\n%s", err, stdout.String())
	}
	return &s
}

// TestShardedRunMatchesOneProcess runs the collection in this process,
// then as 4 shard processes (shard 1 killed once mid-way and restarted),
// then again from the cache, and compares the merged results job for job.
func TestShardedRunMatchesOneProcess(t *testing.T) {
	man := collection(t)
	jobs, err := man.Expand()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cache := filepath.Join(tmp, "cache")

	// 1. One process, two jobs at a time, filling the cache.
	one := filepath.Join(tmp, "one")
	start := time.Now()
	sum, err := Run(context.Background(), man, Options{Out: one, Jobs: 2, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	full := time.Since(start)
	if sum.Total != len(jobs) || sum.Assigned != len(jobs) || len(sum.Executed) != len(jobs) || sum.Cached != 0 || sum.Resumed != 0 {
		t.Fatalf("one process: %d total, %d assigned, %d executed, %d cached, %d resumed; want all %d executed",
			sum.Total, sum.Assigned, len(sum.Executed), sum.Cached, sum.Resumed, len(jobs))
	}
	ref := merge(t, one)
	t.Logf("one process: %d jobs (%d pass, %d fail, %d error) in %v; machine time %.1f s, %.0f ms per job",
		len(jobs), ref.Totals.Pass, ref.Totals.Fail, ref.Totals.Error, full.Round(time.Millisecond), ref.Totals.DurationMS/1000, ref.Totals.DurationMS/float64(len(jobs)))
	// The collection holds every kind of outcome, so that the comparison
	// below compares something.
	kinds := map[string]int{}
	for _, r := range ref.Jobs {
		kinds[string(r.Status)+"/"+r.Kind]++
	}
	for _, k := range []string{"pass/", "fail/blocked", "fail/not_equivalent", "error/input"} {
		if kinds[k] == 0 {
			t.Errorf("no job ended %s (outcomes %v)", k, kinds)
		}
	}

	// 2. Four shard processes; shard 1 stops after 3 jobs and is killed.
	const shards = 4
	manifest, _ := filepath.Abs(filepath.Join("testdata", "collection.yaml"))
	dirs := make([]string, shards)
	type proc struct {
		cmd            *exec.Cmd
		stdout, stderr *bytes.Buffer
	}
	procs := make([]proc, shards)
	const killed, hangAfter = 1, 3
	for i := range shards {
		dirs[i] = filepath.Join(tmp, "shard-"+strconv.Itoa(i))
		h := 0
		if i == killed {
			h = hangAfter
		}
		cmd, o, e := shardCmd(t, manifest, dirs[i], i, shards, h)
		procs[i] = proc{cmd, o, e}
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(procs[killed].stderr.String(), "hanging") {
		if time.Now().After(deadline) {
			t.Fatalf("shard %d did not reach %d jobs: %s", killed, hangAfter, procs[killed].stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := procs[killed].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = procs[killed].cmd.Wait()
	sums := make([]*Summary, shards)
	for i, p := range procs {
		if i != killed {
			sums[i] = childSummary(t, p.cmd, p.stdout, p.stderr)
		}
	}
	// What the killed shard left: its plan, and fewer records than jobs.
	before := records(t, dirs[killed])
	partial := merge(t, dirs...)
	if partial.Totals.Missing == 0 || !partial.Failed() {
		t.Errorf("with shard %d killed the merge has %d missing jobs; want its unfinished ones", killed, partial.Totals.Missing)
	}
	// 3. Restart the killed shard: it resumes.
	cmd, o, e := shardCmd(t, manifest, dirs[killed], killed, shards, 0)
	sums[killed] = childSummary(t, cmd, o, e)
	rs := sums[killed]
	if rs.Resumed != len(before) || len(rs.Executed) != rs.Assigned-len(before) {
		t.Errorf("restarted shard: %d resumed, %d executed of %d; want the %d recorded before resumed and only the other %d run",
			rs.Resumed, len(rs.Executed), rs.Assigned, len(before), rs.Assigned-len(before))
	}
	if len(before) < hangAfter || len(before) >= rs.Assigned {
		t.Errorf("the killed shard had %d of %d records; want it killed mid-way", len(before), rs.Assigned)
	}
	after := records(t, dirs[killed])
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("record %s was rewritten by the restarted shard", name)
		}
	}
	beforeIDs := map[string]bool{}
	for _, b := range before {
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		beforeIDs[r.ID] = true
	}
	for _, id := range rs.Executed {
		if beforeIDs[id] {
			t.Errorf("the restarted shard ran %s again", id)
		}
	}
	// Every job ran in exactly one shard, and the shards were balanced.
	assigned := 0
	for i, s := range sums {
		assigned += s.Assigned
		if s.Shard != (Shard{Index: i, Count: shards}) {
			t.Errorf("shard process %d ran shard %v", i, s.Shard)
		}
	}
	if assigned != len(jobs) {
		t.Errorf("the shards were assigned %d jobs in all, want %d", assigned, len(jobs))
	}

	// 4. The merged results are identical job for job.
	sharded := merge(t, dirs...)
	want, got := outcomes(t, ref), outcomes(t, sharded)
	if len(got) != len(want) {
		t.Errorf("sharded merge has %d jobs, one process %d", len(got), len(want))
	}
	for id, w := range want {
		if g, ok := got[id]; !ok {
			t.Errorf("%s: missing from the sharded merge", id)
		} else if g != w {
			t.Errorf("%s: sharded %+v, one process %+v", id, g, w)
		}
	}
	st, rt := sharded.Totals, ref.Totals
	if st.Missing != 0 || sharded.Duplicates != 0 || st.Jobs != rt.Jobs || st.Pass != rt.Pass || st.Fail != rt.Fail || st.Error != rt.Error {
		t.Errorf("sharded totals %+v, one process %+v", sharded.Totals, ref.Totals)
	}
	// Merging the one-process folder with the shards finds no conflict.
	both := merge(t, append([]string{one}, dirs...)...)
	if both.Duplicates != len(jobs) || len(both.Conflicts) != 0 {
		t.Errorf("one process + shards: %d duplicates, conflicts %v; want %d and none", both.Duplicates, both.Conflicts, len(jobs))
	}

	// 5. A second run with the same cache does no work.
	again := filepath.Join(tmp, "again")
	start = time.Now()
	sum2, err := Run(context.Background(), man, Options{Out: again, Jobs: 2, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	cached := time.Since(start)
	if len(sum2.Executed) != 0 || sum2.Cached != len(jobs) {
		t.Errorf("cached run executed %d jobs (%v), took %d from the cache; want none run, all %d cached", len(sum2.Executed), sum2.Executed, sum2.Cached, len(jobs))
	}
	t.Logf("second run with the cache: %v (first: %v)", cached.Round(time.Millisecond), full.Round(time.Millisecond))
	fromCache := merge(t, again)
	if g := outcomes(t, fromCache); len(g) != len(want) {
		t.Errorf("cached merge has %d jobs, want %d", len(g), len(want))
	} else {
		for id, w := range want {
			if g[id] != w {
				t.Errorf("%s: cached %+v, computed %+v", id, g[id], w)
			}
		}
	}
	refReports := map[string]int{}
	for _, r := range ref.Jobs {
		refReports[r.ID] = len(r.Reports)
	}
	for _, r := range fromCache.Jobs {
		if len(r.Reports) != refReports[r.ID] {
			t.Errorf("%s: the cached result has %d reports, the computed one %d", r.ID, len(r.Reports), refReports[r.ID])
		}
		for _, rep := range r.Reports {
			if _, err := os.Stat(filepath.Join(again, filepath.FromSlash(rep))); err != nil {
				t.Errorf("%s: cached report: %v", r.ID, err)
			}
		}
	}
	// Resuming a finished folder runs nothing either.
	sum3, err := Run(context.Background(), man, Options{Out: one, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sum3.Resumed != len(jobs) || len(sum3.Executed) != 0 {
		t.Errorf("rerun of a finished folder: %d resumed, %d executed", sum3.Resumed, len(sum3.Executed))
	}

	// 6. The merged reports.
	checkReports(t, ref, tmp)
}

// checkReports writes the merge in every format and checks each: JSON
// and JUnit against the merge's totals, Markdown's order, and the HTML in
// headless Chromium.
func checkReports(t *testing.T, m *Merged, dir string) {
	t.Helper()
	paths := map[string]string{}
	for _, ext := range MergedFormats() {
		p := filepath.Join(dir, "report"+ext)
		if err := WriteMerged(p, m); err != nil {
			t.Fatal(err)
		}
		paths[ext] = p
	}
	if err := WriteMerged(filepath.Join(dir, "report.txt"), m); err == nil {
		t.Error("a .txt report was written")
	}
	bad := m.Totals.Fail + m.Totals.Error + m.Totals.Missing

	// JSON: the same jobs, failures first.
	var back Merged
	b, _ := os.ReadFile(paths[".json"])
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Totals != m.Totals || len(back.Jobs) != len(m.Jobs) {
		t.Errorf("JSON report: totals %+v, %d jobs; want %+v, %d", back.Totals, len(back.Jobs), m.Totals, len(m.Jobs))
	}
	for i, r := range back.Jobs {
		if (i < bad) != r.Status.Failed() {
			t.Errorf("JSON report: job %d (%s) is %s: failures are not first", i, r.ID, r.Status)
			break
		}
	}

	// JUnit: one test case per job.
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Error   *struct{} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	b, _ = os.ReadFile(paths[".xml"])
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != len(m.Jobs) || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != len(m.Jobs) ||
		doc.Failures != m.Totals.Fail+m.Totals.Missing || doc.Errors != m.Totals.Error {
		t.Errorf("JUnit: %d tests, %d failures, %d errors; want %d, %d, %d", doc.Tests, doc.Failures, doc.Errors, len(m.Jobs), m.Totals.Fail+m.Totals.Missing, m.Totals.Error)
	}
	names := map[string]bool{}
	for _, c := range doc.Suites[0].Cases {
		names[c.Name] = true
	}
	for _, r := range m.Jobs {
		if !names[r.ID] {
			t.Errorf("JUnit lacks a test case for %s", r.ID)
		}
	}

	// Markdown: the verdict, then failures first; links resolve.
	b, _ = os.ReadFile(paths[".md"])
	md := string(b)
	if !strings.HasPrefix(md, "### ❌") {
		t.Errorf("Markdown verdict: %q", strings.SplitN(md, "\n", 2)[0])
	}
	var tableRows []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| status") {
			tableRows = append(tableRows, l)
		}
	}
	if len(tableRows) == 0 || strings.HasPrefix(tableRows[0], "| pass") {
		t.Errorf("Markdown: the first row is not a failure")
	}
	link := regexp.MustCompile(`\]\(([^)]+)\)`)
	for _, mm := range link.FindAllStringSubmatch(md, 5) {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(mm[1]))); err != nil {
			t.Errorf("Markdown link %s: %v", mm[1], err)
		}
	}

	checkHTML(t, m, paths[".html"], bad)
}

// consoleError matches what Chromium logs for page errors and console
// messages (the page logs nothing when it works).
var consoleError = regexp.MustCompile(`Uncaught|:CONSOLE[:(]|CONSOLE\(\d+\)|Refused to (load|apply|execute|connect)`)

// chromium runs headless Chromium on url with extra flags and returns its
// stdout and the console errors of its log.
func chromium(t *testing.T, exe, url string, flags ...string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0", "--window-size=1200,900"}, flags...)
	cmd := exec.CommandContext(ctx, exe, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	var errs []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if consoleError.MatchString(l) {
			errs = append(errs, l)
		}
	}
	return stdout.String(), errs
}

// rowRE reads the rendered rows of the job table from the DOM.
var rowRE = regexp.MustCompile(`<tr class="[^"]*" data-status="(\w+)"[^>]*?( hidden="")?>`)

// checkHTML opens the HTML report in headless Chromium: it renders (a
// screenshot), logs no console error, lists the failures first, and its
// filter (given in the address) hides the rows it should.
func checkHTML(t *testing.T, m *Merged, path string, bad int) {
	t.Helper()
	exe := testpaths.Chromium(t)
	abs, _ := filepath.Abs(path)
	shot := filepath.Join(t.TempDir(), "shot.png")
	_, errs := chromium(t, exe, "file://"+abs, "--screenshot="+shot)
	if len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Errorf("no screenshot of the report (%v)", err)
	}
	dom, errs := chromium(t, exe, "file://"+abs, "--dump-dom")
	if len(errs) > 0 {
		t.Errorf("console errors (dump-dom):\n%s", strings.Join(errs, "\n"))
	}
	rows := rowRE.FindAllStringSubmatch(dom, -1)
	if len(rows) != len(m.Jobs) {
		t.Fatalf("the rendered table has %d rows, want %d", len(rows), len(m.Jobs))
	}
	for i, r := range rows {
		if (i < bad) != (r[1] != "pass") {
			t.Errorf("rendered row %d is %s: the %d failures are not first", i, r[1], bad)
			break
		}
		if r[2] != "" {
			t.Errorf("rendered row %d is hidden without a filter", i)
			break
		}
	}
	if !strings.Contains(dom, strconv.Itoa(len(m.Jobs))+" shown") {
		t.Error("the script did not count the rows shown")
	}
	// The filter: #status=pass hides every failure.
	dom, errs = chromium(t, exe, "file://"+abs+"#status=pass", "--dump-dom")
	if len(errs) > 0 {
		t.Errorf("console errors (filtered):\n%s", strings.Join(errs, "\n"))
	}
	hidden := 0
	for _, r := range rowRE.FindAllStringSubmatch(dom, -1) {
		if (r[2] != "") != (r[1] != "pass") {
			t.Errorf("with #status=pass a %s row is hidden=%v", r[1], r[2] != "")
			break
		}
		if r[2] != "" {
			hidden++
		}
	}
	if hidden != bad || !strings.Contains(dom, strconv.Itoa(len(m.Jobs)-bad)+" shown") {
		t.Errorf("with #status=pass %d rows are hidden, want %d", hidden, bad)
	}
	// Every job's report link resolves.
	for _, r := range m.Jobs {
		for _, l := range reportLinks(r, filepath.Dir(path)) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), filepath.FromSlash(l))); err != nil {
				t.Errorf("%s: report link %s: %v", r.ID, l, err)
			}
		}
	}
}
