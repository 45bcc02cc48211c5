package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/executor/onnxio"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// testWorkerCmd is the hidden subcommand `onnxconv test` starts to run
// cases in: a panic inside a GoMLX worker goroutine ends the process, so
// each case runs in a child that the parent restarts when it dies.
const testWorkerCmd = "__testworker"

type workerRequest struct {
	Dir string `json:"dir"`
}

// newTestCmd returns `onnxconv test DIR... [--json] [--jobs N] [--markdown FILE]`.
func newTestCmd() *cobra.Command {
	var (
		asJSON   bool
		jobs     int
		markdown string
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "test DIR...",
		Short: "Run ONNX backend-test cases with the built-in executor",
		Long: `Run ONNX backend-test folders (model.onnx + test_data_set_*/input_N.pb,
output_N.pb) with the built-in executor and compare with the expected
outputs as the ONNX backend runner does (rtol 1e-3, atol 1e-7; integers,
booleans and strings exactly). DIR is a case folder or a folder of cases.
Cases run in worker subprocesses (a crash fails one case, not the run).
The last line is 'N passed, N failed, N skipped'.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cases, err := backendtest.FindCases(args)
			if err != nil {
				return badInput(err)
			}
			if jobs < 1 {
				jobs = 1
			}
			results := runCases(cmd.Context(), cases, jobs, timeout, func(r backendtest.Result) {
				if !asJSON {
					line := fmt.Sprintf("%-5s %s", strings.ToUpper(string(r.Status)), r.Name)
					if r.Reason != "" {
						line += ": " + oneLine(r.Reason, 300)
					}
					fmt.Fprintln(cmd.OutOrStdout(), line)
				}
			})
			passed, failed, skipped := tally(results)
			if markdown != "" {
				if err := writeConformanceMarkdown(markdown, args, results); err != nil {
					return badInput(err)
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string]any{"results": results, "passed": passed, "failed": failed, "skipped": skipped}); err != nil {
					return fmt.Errorf("writing JSON: %w", err)
				}
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
			}
			if failed > 0 {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write the results as JSON")
	cmd.Flags().IntVar(&jobs, "jobs", 2, "number of worker processes")
	cmd.Flags().StringVar(&markdown, "markdown", "", "also write a Markdown conformance report to this file")
	cmd.Flags().DurationVar(&timeout, "timeout", 120*time.Second, "time limit per case")
	return cmd
}

func oneLine(s string, max int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

func tally(rs []backendtest.Result) (passed, failed, skipped int) {
	for _, r := range rs {
		switch r.Status {
		case backendtest.Pass:
			passed++
		case backendtest.Skip:
			skipped++
		default:
			failed++
		}
	}
	return
}

// runCases runs the cases in jobs worker processes and returns the
// results in case order. report is called as results arrive (serialized).
func runCases(ctx context.Context, cases []string, jobs int, timeout time.Duration, report func(backendtest.Result)) []backendtest.Result {
	if ctx == nil {
		ctx = context.Background()
	}
	results := make([]backendtest.Result, len(cases))
	next := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for j := 0; j < jobs; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w *worker
			defer func() {
				if w != nil {
					w.stop()
				}
			}()
			for i := range next {
				var r backendtest.Result
				if w == nil {
					var err error
					if w, err = startWorker(); err != nil {
						r = backendtest.Result{Name: filepath.Base(cases[i]), Dir: cases[i], Status: backendtest.Error, Reason: err.Error()}
					}
				}
				if w != nil {
					var ok bool
					r, ok = w.run(cases[i], timeout)
					if !ok {
						w.stop()
						w = nil
					}
				}
				mu.Lock()
				results[i] = r
				report(r)
				mu.Unlock()
			}
		}()
	}
	for i := range cases {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

type worker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	lines  chan string
}

type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func startWorker() (*worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the onnxconv executable: %w", err)
	}
	cmd := exec.Command(exe, testWorkerCmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting test worker: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting test worker: %w", err)
	}
	w := &worker{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16), stderr: &tailBuffer{}, lines: make(chan string, 1)}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting test worker: %w", err)
	}
	go func() {
		defer close(w.lines)
		for {
			line, err := w.out.ReadString('\n')
			if line != "" {
				w.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return w, nil
}

// run sends one case; ok is false when the worker must be replaced.
func (w *worker) run(dir string, timeout time.Duration) (backendtest.Result, bool) {
	name := filepath.Base(dir)
	req, _ := json.Marshal(workerRequest{Dir: dir})
	start := time.Now()
	if _, err := w.in.Write(append(req, '\n')); err != nil {
		return backendtest.Result{Name: name, Dir: dir, Status: backendtest.Error, Reason: "test worker: " + err.Error()}, false
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line, ok := <-w.lines:
		if !ok {
			werr := w.cmd.Wait()
			reason := "test worker crashed"
			if werr != nil {
				reason += " (" + werr.Error() + ")"
			}
			if tail := lastLines(w.stderr.String(), 6); tail != "" {
				reason += ": " + tail
			}
			return backendtest.Result{Name: name, Dir: dir, Status: backendtest.Error,
				Reason: reason, Millis: time.Since(start).Milliseconds()}, false
		}
		var r backendtest.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return backendtest.Result{Name: name, Dir: dir, Status: backendtest.Error, Reason: "test worker: bad reply: " + err.Error()}, false
		}
		return r, true
	case <-timer.C:
		return backendtest.Result{Name: name, Dir: dir, Status: backendtest.Error, Reason: fmt.Sprintf("timed out after %s", timeout), Millis: time.Since(start).Milliseconds()}, false
	}
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	// Prefer the panic message line.
	for _, l := range ls {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			return l
		}
	}
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}

func (w *worker) stop() {
	w.in.Close()
	if w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
	w.cmd.Wait()
}

// newTestWorkerCmd is the hidden worker: one JSON request per line on
// stdin, one JSON result per line on stdout.
func newTestWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    testWorkerCmd,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc := bufio.NewScanner(os.Stdin)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			out := bufio.NewWriter(cmd.OutOrStdout())
			for sc.Scan() {
				var req workerRequest
				if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
					return badInput(fmt.Errorf("test worker: %w", err))
				}
				r := runOneCase(cmd.Context(), req.Dir)
				b, _ := json.Marshal(r)
				out.Write(append(b, '\n'))
				if err := out.Flush(); err != nil {
					return fmt.Errorf("test worker: %w", err)
				}
			}
			return nil
		},
	}
}

func runOneCase(ctx context.Context, dir string) backendtest.Result {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	r := backendtest.Result{Name: filepath.Base(dir), Dir: dir}
	c, err := backendtest.Load(dir)
	if err != nil {
		r.Status, r.Reason = backendtest.Error, err.Error()
	} else {
		defer c.Close()
		err = backendtest.Run(ctx, c, func(m *canonical.Model) (backendtest.Runner, error) {
			return executor.New(m, executor.Options{})
		})
		var mm *backendtest.MismatchError
		switch {
		case err == nil:
			r.Status = backendtest.Pass
		case asMismatch(err, &mm):
			r.Status, r.Reason = backendtest.Fail, err.Error()
		default:
			r.Status, r.Reason = backendtest.Error, err.Error()
		}
	}
	r.Millis = time.Since(start).Milliseconds()
	return r
}

func asMismatch(err error, target **backendtest.MismatchError) bool {
	m, ok := err.(*backendtest.MismatchError)
	if ok {
		*target = m
	}
	return ok
}

// writeConformanceMarkdown writes the conformance report: totals per
// folder and every case that does not pass, with its reason.
func writeConformanceMarkdown(path string, dirs []string, rs []backendtest.Result) error {
	var sb strings.Builder
	sb.WriteString("# Executor conformance\n\n")
	sb.WriteString("Generated by `onnxconv test --markdown docs/conformance.md " + strings.Join(relDirs(dirs), " ") + "`\n")
	sb.WriteString("(see executor/OPS.md). Do not edit by hand.\n\n")
	type tot struct{ pass, fail, skip int }
	byDir := map[string]*tot{}
	var order []string
	for _, r := range rs {
		d := filepath.Base(filepath.Dir(r.Dir))
		if byDir[d] == nil {
			byDir[d] = &tot{}
			order = append(order, d)
		}
		switch r.Status {
		case backendtest.Pass:
			byDir[d].pass++
		case backendtest.Skip:
			byDir[d].skip++
		default:
			byDir[d].fail++
		}
	}
	sb.WriteString("| suite | passed | failed | skipped | total |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, d := range order {
		t := byDir[d]
		fmt.Fprintf(&sb, "| %s | %d | %d | %d | %d |\n", d, t.pass, t.fail, t.skip, t.pass+t.fail+t.skip)
	}
	sb.WriteString("\n## Failing cases\n\n| suite | case | status | reason |\n| --- | --- | --- | --- |\n")
	sorted := append([]backendtest.Result{}, rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Dir < sorted[j].Dir })
	for _, r := range sorted {
		if r.Status == backendtest.Pass {
			continue
		}
		reason := strings.ReplaceAll(oneLine(r.Reason, 240), "|", "\\|")
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", filepath.Base(filepath.Dir(r.Dir)), r.Name, r.Status, reason)
	}
	return onnxio.WriteFileAtomic(path, []byte(sb.String()))
}

func relDirs(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.ToSlash(d)
		if j := strings.Index(out[i], "shared/"); j >= 0 {
			out[i] = "../" + out[i][j:]
		}
	}
	return out
}
