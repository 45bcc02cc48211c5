package backendtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// PoolOptions configures RunIsolated.
type PoolOptions struct {
	// Jobs is the number of worker processes run at once (at least 1).
	Jobs int
	// Timeout is the time limit of one case; 0 means none. A case over it
	// is an Error and its worker is killed and replaced.
	Timeout time.Duration
	// Command is the argv that starts a worker: a program that calls
	// ServeWorker on its stdin and stdout, e.g. {exe, "__testworker"}
	// where exe is os.Executable().
	Command []string
}

// OptionsError reports unusable PoolOptions.
type OptionsError struct {
	Field string
	Msg   string
}

func (e *OptionsError) Error() string {
	return fmt.Sprintf("backendtest: PoolOptions.%s: %s", e.Field, e.Msg)
}

// Timings of worker shutdown.
const (
	// exitGrace is how long a worker that closed its stdout has to exit
	// before it is killed.
	exitGrace = 5 * time.Second
	// pipeGrace bounds the wait for a dead worker's stderr to close (a
	// process it started may hold it open).
	pipeGrace = 2 * time.Second
	// stderrTail is how much of a worker's stderr is kept for the reason
	// of a crash.
	stderrTail = 4096
)

// RunIsolated runs the cases (backend-test folders, as FindCases returns)
// in opts.Jobs worker processes started with opts.Command, so that a case
// that crashes its process (a panic in a goroutine of the executor, a
// fatal error) or hangs is one Error result and the run goes on in a new
// worker. report, if not nil, is called with each result as it arrives,
// one call at a time.
//
// The results are in case order. When ctx is done, the cases not run are
// left out, the case in flight is abandoned (its worker killed) and the
// error wraps ctx.Err(). Unusable options are an *OptionsError. A worker
// that cannot be started is an Error result for each case it was to run.
func RunIsolated(ctx context.Context, cases []string, opts PoolOptions, report func(Result)) ([]Result, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, &OptionsError{Field: "Command", Msg: "empty; it must start a worker (a program calling ServeWorker)"}
	}
	if opts.Timeout < 0 {
		return nil, &OptionsError{Field: "Timeout", Msg: fmt.Sprintf("negative (%s)", opts.Timeout)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	jobs := max(opts.Jobs, 1)
	jobs = min(jobs, len(cases))
	results := make([]Result, len(cases))
	done := make([]bool, len(cases))
	next := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &slot{opts: opts}
			defer s.stop()
			for i := range next {
				r, ok := s.run(ctx, cases[i])
				if !ok {
					continue
				}
				mu.Lock()
				results[i], done[i] = r, true
				if report != nil {
					report(r)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range cases {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		ran := results[:0]
		for i, r := range results {
			if done[i] {
				ran = append(ran, r)
			}
		}
		return ran, fmt.Errorf("backendtest: stopped after %d of %d cases: %w", len(ran), len(cases), err)
	}
	return results, nil
}

// slot is one place of the pool: a worker, started when needed and
// replaced when it dies, times out or misbehaves.
type slot struct {
	opts PoolOptions
	w    *worker
}

// run runs one case; ok is false when ctx ended it.
func (s *slot) run(ctx context.Context, dir string) (Result, bool) {
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return Result{}, false
		}
		if s.w == nil {
			w, err := startWorker(s.opts.Command)
			if err != nil {
				return errorResult(dir, err.Error(), time.Time{}), true
			}
			s.w = w
		}
		r, out := s.w.run(ctx, dir, s.opts.Timeout)
		if out == replied {
			return r, true
		}
		s.stop()
		switch {
		case out == canceled:
			return Result{}, false
		case out == deadBefore && attempt == 0:
			// The worker died before this case reached it: the case
			// gets a fresh worker once.
			continue
		}
		return r, true
	}
}

func (s *slot) stop() {
	if s.w != nil {
		s.w.stop()
		s.w = nil
	}
}

func errorResult(dir, reason string, start time.Time) Result {
	r := Result{Name: filepath.Base(dir), Dir: dir, Status: Error, Reason: reason}
	if !start.IsZero() {
		r.Millis = time.Since(start).Milliseconds()
	}
	return r
}

// worker is one worker process.
type worker struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	stderr  *tailBuffer
	lines   chan string   // reply lines; closed at the end of its stdout
	quit    chan struct{} // closed by stop: the line reader gives up
	exited  chan struct{} // closed when the process has been waited for
	waitErr error         // set before exited is closed
	stopped bool
}

// outcome of sending one case to a worker.
type outcome int

const (
	replied    outcome = iota // a result came back; the worker goes on
	deadBefore                // the request could not be sent: the worker was gone
	crashed                   // the worker died on the case
	timedOut                  // the case went over the time limit
	badReply                  // the reply did not decode
	canceled                  // ctx ended
)

func startWorker(argv []string) (*worker, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting test worker %s: %w", argv[0], err)
	}
	// Our own pipe, not StdoutPipe: Wait must not close it before the
	// last reply has been read.
	pr, pw, err := os.Pipe()
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("starting test worker %s: %w", argv[0], err)
	}
	w := &worker{
		cmd:    cmd,
		in:     in,
		stderr: &tailBuffer{max: stderrTail},
		lines:  make(chan string, 1),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	cmd.Stdout = pw
	cmd.Stderr = w.stderr
	cmd.WaitDelay = pipeGrace
	err = cmd.Start()
	pw.Close()
	if err != nil {
		in.Close()
		pr.Close()
		return nil, fmt.Errorf("starting test worker %s: %w", argv[0], err)
	}
	go func() {
		w.waitErr = cmd.Wait()
		close(w.exited)
	}()
	go func() {
		defer close(w.lines)
		defer pr.Close()
		br := bufio.NewReaderSize(pr, 1<<16)
		for {
			line, err := br.ReadString('\n')
			// A line cut short by the worker's end is no reply: the
			// worker crashed while writing it.
			if strings.HasSuffix(line, "\n") {
				select {
				case w.lines <- line:
				case <-w.quit:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return w, nil
}

// run sends one case and waits for its result.
func (w *worker) run(ctx context.Context, dir string, timeout time.Duration) (Result, outcome) {
	req, err := json.Marshal(request{Dir: dir})
	if err != nil {
		return errorResult(dir, "test worker: "+err.Error(), time.Time{}), badReply
	}
	start := time.Now()
	if _, err := w.in.Write(append(req, '\n')); err != nil {
		return errorResult(dir, "test worker: "+err.Error(), start), deadBefore
	}
	var expire <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expire = timer.C
	}
	select {
	case line, ok := <-w.lines:
		if !ok {
			return errorResult(dir, w.crashReason(), start), crashed
		}
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			perr := &ProtocolError{Msg: "bad reply", Line: shorten(strings.TrimSpace(line), 200), Err: err}
			return errorResult(dir, "test worker: "+perr.Error(), start), badReply
		}
		if r.Dir != dir {
			perr := &ProtocolError{Msg: fmt.Sprintf("reply for %q, expected %q", r.Dir, dir)}
			return errorResult(dir, "test worker: "+perr.Error(), start), badReply
		}
		return r, replied
	case <-expire:
		return errorResult(dir, fmt.Sprintf("timed out after %s", timeout), start), timedOut
	case <-ctx.Done():
		return Result{}, canceled
	}
}

// crashReason waits for a worker whose stdout ended and describes its
// end: exit status and the panic line or the last lines of its stderr.
func (w *worker) crashReason() string {
	select {
	case <-w.exited:
	case <-time.After(exitGrace):
		w.kill()
		<-w.exited
	}
	reason := "test worker crashed"
	if w.waitErr != nil {
		reason += " (" + w.waitErr.Error() + ")"
	}
	if tail := lastLines(w.stderr.String(), 6); tail != "" {
		reason += ": " + tail
	}
	return reason
}

func (w *worker) kill() {
	if w.cmd.Process != nil {
		// An error means it is gone already.
		_ = w.cmd.Process.Kill()
	}
}

// stop ends the worker process and waits for it.
func (w *worker) stop() {
	if w.stopped {
		return
	}
	w.stopped = true
	close(w.quit)
	w.in.Close()
	w.kill()
	<-w.exited
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastLines returns the line of s that starts a Go panic or fatal error,
// else its last n lines joined with " | ".
func lastLines(s string, n int) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	ls := strings.Split(s, "\n")
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
