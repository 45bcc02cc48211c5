package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary is its own worker: started with one of these as its
// first argument, TestMain serves the worker protocol instead of running
// the tests.
const (
	workerArg     = "__backendtest_worker"      // ServeWorker, as onnxconv's __testworker
	hookWorkerArg = "__backendtest_hook_worker" // the same with hookRun's crashes and hangs
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case workerArg:
			os.Exit(workerExit(ServeWorker(context.Background(), os.Stdin, os.Stdout)))
		case hookWorkerArg:
			os.Exit(workerExit(serve(context.Background(), os.Stdin, os.Stdout, hookRun)))
		}
	}
	os.Exit(m.Run())
}

func workerExit(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// hookRun runs a case in the hook worker: a folder named hook_panic
// panics in a goroutine (as GoMLX may), hook_exit exits with status 3,
// hook_hang never returns, hook_pass passes at once; any other folder is
// run for real.
func hookRun(ctx context.Context, dir string) Result {
	switch filepath.Base(dir) {
	case "hook_panic":
		done := make(chan struct{})
		go func() {
			defer close(done)
			panic("hook: panic on purpose")
		}()
		<-done
	case "hook_exit":
		fmt.Fprintln(os.Stderr, "hook: exiting on purpose")
		os.Exit(3)
	case "hook_hang":
		select {}
	case "hook_pass":
		return Result{Name: filepath.Base(dir), Dir: dir, Status: Pass}
	}
	return RunDir(ctx, dir, ExecutorRunner)
}

func selfCommand(t *testing.T, arg string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, arg}
}

// wrongCase makes a copy of test_add whose expected output is its first
// input: the executor's right answer must then be a Fail.
func wrongCase(t *testing.T) string {
	t.Helper()
	src := caseDir(t, "test_add")
	dir := filepath.Join(t.TempDir(), "test_add_wrong")
	if err := os.MkdirAll(filepath.Join(dir, "test_data_set_0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for to, from := range map[string]string{
		"model.onnx":                 "model.onnx",
		"test_data_set_0/input_0.pb": "test_data_set_0/input_0.pb",
		"test_data_set_0/input_1.pb": "test_data_set_0/input_1.pb",
		// The sum x+y expected to be x.
		"test_data_set_0/output_0.pb": "test_data_set_0/input_0.pb",
	} {
		b, err := os.ReadFile(filepath.Join(src, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func hookCase(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}

func statuses(rs []Result) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Name+"="+string(r.Status))
	}
	return strings.Join(s, " ")
}

func TestRunIsolatedRealCases(t *testing.T) {
	cases := []string{
		caseDir(t, "test_add"),
		caseDir(t, "test_relu"),
		wrongCase(t),
		filepath.Join(t.TempDir(), "test_missing"),
	}
	var reported []string
	rs, err := RunIsolated(context.Background(), cases, PoolOptions{Jobs: 2, Timeout: 2 * time.Minute, Command: selfCommand(t, workerArg)},
		func(r Result) { reported = append(reported, r.Name) })
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(cases) || len(reported) != len(cases) {
		t.Fatalf("%d results, %d reported, for %d cases", len(rs), len(reported), len(cases))
	}
	want := []Status{Pass, Pass, Fail, Error}
	for i, r := range rs {
		if r.Dir != cases[i] || r.Status != want[i] {
			t.Errorf("result %d: %s %s (%s), want %s %s", i, r.Dir, r.Status, r.Reason, cases[i], want[i])
		}
	}
	if !strings.Contains(rs[2].Reason, "elements differ") {
		t.Errorf("wrong case's reason: %q", rs[2].Reason)
	}
	if got := Tally(rs); got != (Totals{Passed: 2, Failed: 2}) {
		t.Errorf("Tally = %+v", got)
	}
}

func TestRunIsolatedCrash(t *testing.T) {
	cases := []string{
		caseDir(t, "test_add"),
		hookCase(t, "hook_panic"),
		caseDir(t, "test_relu"),
		hookCase(t, "hook_exit"),
		hookCase(t, "hook_pass"),
	}
	rs, err := RunIsolated(context.Background(), cases, PoolOptions{Jobs: 1, Timeout: 2 * time.Minute, Command: selfCommand(t, hookWorkerArg)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := statuses(rs), "test_add=pass hook_panic=error test_relu=pass hook_exit=error hook_pass=pass"; got != want {
		t.Fatalf("statuses %s, want %s\n%+v", got, want, rs)
	}
	if r := rs[1].Reason; !strings.HasPrefix(r, "test worker crashed (exit status 2): panic: hook: panic on purpose") {
		t.Errorf("panic reason: %q", r)
	}
	if r := rs[3].Reason; !strings.HasPrefix(r, "test worker crashed (exit status 3)") || !strings.Contains(r, "hook: exiting on purpose") {
		t.Errorf("exit reason: %q", r)
	}
}

func TestRunIsolatedTimeout(t *testing.T) {
	cases := []string{hookCase(t, "hook_hang"), hookCase(t, "hook_pass"), hookCase(t, "hook_hang"), hookCase(t, "hook_pass")}
	start := time.Now()
	rs, err := RunIsolated(context.Background(), cases, PoolOptions{Jobs: 2, Timeout: time.Second, Command: selfCommand(t, hookWorkerArg)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := statuses(rs), "hook_hang=error hook_pass=pass hook_hang=error hook_pass=pass"; got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}
	for _, r := range []Result{rs[0], rs[2]} {
		if r.Reason != "timed out after 1s" || r.Millis < 1000 {
			t.Errorf("hang: %q after %d ms", r.Reason, r.Millis)
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestRunIsolatedCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	cases := []string{hookCase(t, "hook_pass"), hookCase(t, "hook_hang"), hookCase(t, "hook_pass")}
	start := time.Now()
	rs, err := RunIsolated(ctx, cases, PoolOptions{Jobs: 1, Command: selfCommand(t, hookWorkerArg)}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	if got := statuses(rs); got != "hook_pass=pass" {
		t.Errorf("results %s, want only the first case", got)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %s", d)
	}
}

func TestRunIsolatedBadCommand(t *testing.T) {
	_, err := RunIsolated(context.Background(), []string{"x"}, PoolOptions{}, nil)
	var oe *OptionsError
	if !errors.As(err, &oe) || oe.Field != "Command" {
		t.Fatalf("empty command: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-worker")
	rs, err := RunIsolated(context.Background(), []string{"a", "b"}, PoolOptions{Jobs: 2, Command: []string{missing}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Status != Error || !strings.Contains(r.Reason, "starting test worker") {
			t.Errorf("%s: %s %q", r.Dir, r.Status, r.Reason)
		}
	}
	// A worker that does not speak the protocol.
	rs, err = RunIsolated(context.Background(), []string{"a"}, PoolOptions{Command: []string{"/bin/sh", "-c", "read x; echo hello"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Status != Error || !strings.Contains(rs[0].Reason, "bad reply") {
		t.Errorf("%s %q", rs[0].Status, rs[0].Reason)
	}
	// A worker that dies in the middle of its reply crashed.
	rs, err = RunIsolated(context.Background(), []string{"a"}, PoolOptions{Command: []string{"/bin/sh", "-c", `read x; printf '{"dir"'; echo dying >&2; exit 4`}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Status != Error || rs[0].Reason != "test worker crashed (exit status 4): dying" {
		t.Errorf("%s %q", rs[0].Status, rs[0].Reason)
	}
}

func TestServeWorker(t *testing.T) {
	pass := func(_ context.Context, dir string) Result {
		return Result{Name: filepath.Base(dir), Dir: dir, Status: Pass}
	}
	var out bytes.Buffer
	if err := serve(context.Background(), strings.NewReader("{\"dir\":\"/a/b\"}\n\n{\"dir\":\"/c\"}\n"), &out, pass); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "{\"name\":\"b\",\"dir\":\"/a/b\",\"status\":\"pass\",\"ms\":0}\n{\"name\":\"c\",\"dir\":\"/c\",\"status\":\"pass\",\"ms\":0}\n"; got != want {
		t.Errorf("replies\n%s\nwant\n%s", got, want)
	}
	for _, in := range []string{"not json\n", "{}\n", "{\"dir\":\"" + strings.Repeat("x", maxRequest) + "\"}\n"} {
		err := serve(context.Background(), strings.NewReader(in), io.Discard, pass)
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%.20q: err = %v, want a *ProtocolError", in, err)
		}
	}
	// The real worker on a missing case: an Error result, not an error.
	out.Reset()
	if err := ServeWorker(context.Background(), strings.NewReader("{\"dir\":\"/no/such/case\"}\n"), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\"status\":\"error\"") {
		t.Errorf("reply %s", out.String())
	}
}

func TestLastLines(t *testing.T) {
	cases := map[string]string{
		"":                                  "",
		"a\nb\nc\n":                         "a | b | c",
		"x\npanic: boom\n\ngoroutine 1\n":   "panic: boom",
		"fatal error: out of memory\nstack": "fatal error: out of memory",
		"1\n2\n3\n4\n5\n6\n7\n8":            "3 | 4 | 5 | 6 | 7 | 8",
	}
	for in, want := range cases {
		if got := lastLines(in, 6); got != want {
			t.Errorf("lastLines(%q) = %q, want %q", in, got, want)
		}
	}
	tb := &tailBuffer{max: 4}
	fmt.Fprint(tb, "abc")
	fmt.Fprint(tb, "defg")
	if tb.String() != "defg" {
		t.Errorf("tail %q", tb.String())
	}
}

func TestWriteMarkdown(t *testing.T) {
	rs := []Result{
		{Name: "test_b", Dir: "/s/node/test_b", Status: Fail, Reason: "x | y\nz"},
		{Name: "test_a", Dir: "/s/node/test_a", Status: Pass},
		{Name: "test_c", Dir: "/s/simple/test_c", Status: Error, Reason: "gone"},
	}
	var sb strings.Builder
	if err := WriteMarkdown(&sb, "onnxconv test /s/node /s/simple", rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Generated by `onnxconv test /s/node /s/simple`\n",
		"| node | 1 | 1 | 0 | 2 |\n| simple | 0 | 1 | 0 | 1 |\n",
		"| node | test_b | fail | x \\| y z |\n| simple | test_c | error | gone |\n",
	} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, sb.String())
		}
	}
}
