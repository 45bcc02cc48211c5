package backendtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
)

// The worker protocol, between RunIsolated and ServeWorker: the pool
// writes one request per line to the worker's stdin, a JSON object
// {"dir": CASE}; the worker runs the case and writes one Result per line,
// as JSON, to its stdout. Nothing else may be written to the worker's
// stdout. The worker exits when its stdin ends.

// request is one line from the pool to a worker.
type request struct {
	Dir string `json:"dir"`
}

// maxRequest bounds one request line.
const maxRequest = 1 << 20

// ProtocolError reports a malformed line of the worker protocol, on
// either side: a request the worker cannot decode, or a reply the pool
// cannot.
type ProtocolError struct {
	Msg  string // what was wrong, e.g. "bad request"
	Line string // the offending line, shortened
	Err  error  // the decoding error, if any
}

func (e *ProtocolError) Error() string {
	s := "backendtest: worker protocol: " + e.Msg
	if e.Line != "" {
		s += fmt.Sprintf(" %q", e.Line)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// ServeWorker is the worker side of RunIsolated: it reads case folders
// from in, runs each with the built-in executor (RunDir with
// ExecutorRunner) and writes each Result to out, until in ends (nil) or
// ctx is done (checked between cases). A malformed request is a
// *ProtocolError. A program that serves as a worker calls it on its
// stdin and stdout and writes nothing else to stdout.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	return serve(ctx, in, out, func(ctx context.Context, dir string) Result {
		return RunDir(ctx, dir, ExecutorRunner)
	})
}

// serve runs the worker loop with run as the case runner (tests put a
// runner that crashes or hangs on given names here).
func serve(ctx context.Context, in io.Reader, out io.Writer, run func(context.Context, string) Result) error {
	if ctx == nil {
		ctx = context.Background()
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxRequest)
	bw := bufio.NewWriter(out)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("backendtest: test worker: %w", err)
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			return &ProtocolError{Msg: "bad request", Line: shorten(string(line), 200), Err: err}
		}
		if req.Dir == "" {
			return &ProtocolError{Msg: "request without a case folder", Line: shorten(string(line), 200)}
		}
		b, err := json.Marshal(run(ctx, req.Dir))
		if err != nil {
			return fmt.Errorf("backendtest: test worker: encoding the result of %s: %w", req.Dir, err)
		}
		if _, err := bw.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("backendtest: test worker: writing the result of %s: %w", req.Dir, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("backendtest: test worker: writing the result of %s: %w", req.Dir, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &ProtocolError{Msg: fmt.Sprintf("request longer than %d bytes", maxRequest), Err: err}
		}
		return fmt.Errorf("backendtest: test worker: reading requests: %w", err)
	}
	return nil
}

// ExecutorRunner is the NewRunner of the built-in executor with default
// options.
func ExecutorRunner(m *canonical.Model) (Runner, error) {
	e, err := executor.New(m, executor.Options{})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// RunDir loads the case in dir, runs it with newRunner in this process
// and returns its Result: Pass, Fail (a *MismatchError: wrong numbers) or
// Error (the case could not be loaded, prepared or run), with the time
// taken. RunIsolated runs it in worker processes instead.
func RunDir(ctx context.Context, dir string, newRunner NewRunner) Result {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	r := Result{Name: filepath.Base(dir), Dir: dir}
	c, err := Load(dir)
	if err != nil {
		r.Status, r.Reason = Error, err.Error()
	} else {
		defer c.Close()
		err = Run(ctx, c, newRunner)
		var mm *MismatchError
		switch {
		case err == nil:
			r.Status = Pass
		case errors.As(err, &mm):
			r.Status, r.Reason = Fail, err.Error()
		default:
			r.Status, r.Reason = Error, err.Error()
		}
	}
	r.Millis = time.Since(start).Milliseconds()
	return r
}

// shorten cuts s to at most max bytes, marking the cut.
func shorten(s string, max int) string {
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
