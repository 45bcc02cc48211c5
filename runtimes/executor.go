package runtimes

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/version"
)

// NewExecutor returns the built-in executor behind the Runtime interface:
// Open loads an ONNX file (canonical.Load) and compiles it
// (executor.New with o); the session hands out intermediate values
// (verify.CaptureRunner). A Setup runs its executor sides without it
// (verify.ModelSide, on the model already loaded); it is there for code
// that takes any Runtime, as the conformance suite (runtimes/runtimetest)
// does.
func NewExecutor(o executor.Options) Runtime { return executorRuntime{o: o} }

type executorRuntime struct{ o executor.Options }

func (r executorRuntime) Info() Info {
	return Info{Name: Executor, Version: version.Get().Short(), Description: "onnxconv's built-in executor on GoMLX", Where: "in process"}
}

// LoadError is a file the executor runtime could not load or compile.
type LoadError struct {
	Path string
	Err  error
}

func (e *LoadError) Error() string { return fmt.Sprintf("executor: %s: %v", e.Path, e.Err) }
func (e *LoadError) Unwrap() error { return e.Err }

func (r executorRuntime) Open(ctx context.Context, modelPath string, o OpenOptions) (Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := canonical.Load(modelPath, canonical.LoadOptions{})
	if err != nil {
		return nil, &LoadError{Path: modelPath, Err: err}
	}
	opts := r.o
	if o.Threads > 0 {
		opts.Threads = o.Threads
	}
	ex, err := executor.New(m, opts)
	if err != nil {
		_ = m.Close()
		return nil, &LoadError{Path: modelPath, Err: err}
	}
	return &executorSession{path: modelPath, m: m, ex: ex}, nil
}

// errClosed is the error of a run on a closed executor session.
var errClosed = errors.New("the session is closed")

// executorSession is a model compiled by the executor. Runs share it
// (read lock); Close waits for them.
type executorSession struct {
	path string
	mu   sync.RWMutex
	m    *canonical.Model
	ex   *executor.Executor
}

func (s *executorSession) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.ex == nil {
		return nil, fmt.Errorf("executor: %s: %w", s.path, errClosed)
	}
	return s.ex.Run(ctx, inputs)
}

// RunCapture hands out the values named (verify.CaptureRunner).
func (s *executorSession) RunCapture(ctx context.Context, inputs []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.ex == nil {
		return nil, fmt.Errorf("executor: %s: %w", s.path, errClosed)
	}
	return s.ex.RunCapture(ctx, inputs, names)
}

func (s *executorSession) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ex == nil {
		return nil
	}
	err := s.ex.Close()
	_ = s.m.Close()
	s.ex, s.m = nil, nil
	return err
}
