// Package tflitetest runs TFLite files for tests through one
// runtimes/tflite Pool: node is started and an interpreter's WebAssembly
// compiled once per interpreter, not once per model (a suite of one-op
// models spent most of its time starting node). So that the pool cannot
// hide a difference, the first result of each interpreter (by its Build)
// that a lent process computes is computed again by a process of its own
// and must be the same bytes, as runtimes/tflite's TestPool checks.
package tflitetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
)

// Runner runs models through its pool. Its methods are safe for
// concurrent use.
//
// Each model's load and run in a pooled process has a time limit: a
// process that does not answer in time is killed, the test says so, and
// the model runs in a process of its own (under a limit too), so that a
// stuck process costs minutes, not the test binary's whole timeout.
type Runner struct {
	env  tflite.Env
	pool *tflite.Pool
	// pooledLimit bounds one model's load and run in a pooled process,
	// aloneLimit in a process of its own.
	pooledLimit, aloneLimit time.Duration

	mu      sync.Mutex
	runs    map[string]int  // pooled results per build
	checked map[string]bool // builds compared with a process of their own
	last    string          // the model run before, named when a pooled process hangs
}

// The limits of a model's load and run: the largest TFLite file of the
// tests runs in seconds on a loaded two-core machine.
const (
	pooledLimit = 3 * time.Minute
	aloneLimit  = 10 * time.Minute
)

// New returns a runner on env whose processes live until ctx ends or
// Close.
func New(ctx context.Context, env tflite.Env) *Runner {
	return &Runner{env: env, pool: tflite.NewPool(ctx, env), pooledLimit: pooledLimit, aloneLimit: aloneLimit,
		runs: map[string]int{}, checked: map[string]bool{}}
}

// Close ends the pool's idle processes.
func (r *Runner) Close() error {
	return r.pool.Close()
}

// Open is tflite.OpenWith with the pool's processes. A caller that runs
// the session itself passes its first result to Check.
func (r *Runner) Open(ctx context.Context, path string, o tflite.Options) (*tflite.Session, error) {
	return r.pool.OpenWith(ctx, path, o)
}

// Run is tflite.OpenWith, Session.Run and Close with the pool's
// processes; the result goes through Check.
func (r *Runner) Run(t testing.TB, path string, inputs []*onnxpb.TensorProto, o tflite.Options) (*tflite.Result, error) {
	t.Helper()
	r.mu.Lock()
	last := r.last
	r.last = path
	r.mu.Unlock()
	got, err := r.runPooled(path, inputs, o)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Logf("tflitetest: %s: a pooled process did not load and run it in %v (the model run before: %q); it was killed, and the model runs in a process of its own", path, r.pooledLimit, last)
		return r.runAlone(path, inputs, o)
	}
	if err != nil {
		return nil, err
	}
	r.Check(t, path, inputs, o, got)
	return got, nil
}

// runPooled loads and runs the model in a pooled process.
func (r *Runner) runPooled(path string, inputs []*onnxpb.TensorProto, o tflite.Options) (*tflite.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.pooledLimit)
	defer cancel()
	s, err := r.pool.OpenWith(ctx, path, o)
	if err != nil {
		return nil, err
	}
	got, err := s.Run(ctx, inputs)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return got, err
}

// runAlone loads and runs the model in a process of its own.
func (r *Runner) runAlone(path string, inputs []*onnxpb.TensorProto, o tflite.Options) (*tflite.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.aloneLimit)
	defer cancel()
	s, err := tflite.OpenWith(ctx, r.env, path, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, inputs)
}

// Check counts got, a pooled result of the model at path on inputs; on
// the second result of its build (the first a process that served
// another model can have computed) it runs the model in a process of its
// own and fails t unless every output is the same bytes and shape.
func (r *Runner) Check(t testing.TB, path string, inputs []*onnxpb.TensorProto, o tflite.Options, got *tflite.Result) {
	t.Helper()
	r.mu.Lock()
	r.runs[got.Build]++
	check := r.runs[got.Build] >= 2 && !r.checked[got.Build]
	r.checked[got.Build] = r.checked[got.Build] || check
	r.mu.Unlock()
	if !check {
		return
	}
	alone, err := r.runAlone(path, inputs, o)
	if err != nil {
		t.Fatalf("tflitetest: %s in a process of its own: %v", path, err)
		return
	}
	if alone.Build != got.Build || len(alone.Outputs) != len(got.Outputs) {
		t.Fatalf("tflitetest: %s: pooled %d outputs by %s, a process of its own %d by %s", path, len(got.Outputs), got.Build, len(alone.Outputs), alone.Build)
		return
	}
	for i := range got.Outputs {
		g, a := got.Outputs[i], alone.Outputs[i]
		if !bytes.Equal(g.GetRawData(), a.GetRawData()) || !slices.Equal(g.GetDims(), a.GetDims()) {
			t.Errorf("tflitetest: %s output %d: pooled %v (%d bytes) differs from a process of its own %v (%d bytes), %s",
				path, i, g.GetDims(), len(g.GetRawData()), a.GetDims(), len(a.GetRawData()), got.Build)
		}
	}
	t.Logf("tflitetest: %s: the pooled result of %s equals a process of its own byte for byte", path, got.Build)
}

// Shared is a test package's one runner, made on the first Get (every
// test of a package finds the same env) and ended by Close in TestMain.
// Its zero value is ready to use.
type Shared struct {
	once sync.Once
	r    *Runner
}

// Get returns the shared runner, made with env on the first call.
func (s *Shared) Get(env tflite.Env) *Runner {
	s.once.Do(func() { s.r = New(context.Background(), env) })
	return s.r
}

// Close ends the runner's idle processes; nothing when none was made.
func (s *Shared) Close() error {
	if s.r == nil {
		return nil
	}
	return s.r.Close()
}
