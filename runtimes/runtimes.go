// Package runtimes picks where each side of a comparison runs: on the
// built-in executor, or on a reference runtime (Runtime: load a model once,
// run it on every sample). The runtimes of a run are a Set: the built-in
// ones (runtimes/builtin: TFLite's and TF.js's interpreters and ONNX
// Runtime through npm's onnxruntime-node, each in one node child process
// per model) and the runtime plugins of the run's one plugin host (the cgo
// executables onnxconv-plugin-onnxruntime, used when the built-in ONNX
// Runtime is not installed, and onnxconv-plugin-libtorch). It is what
// `onnxconv verify --runtime`
// uses, as a library:
//
//	names, err := runtimes.Parse("onnxruntime,executor")
//	host, err := plugins.NewHost(ctx, plugins.Options{})
//	s, err := runtimes.NewSetup(names, 1, runtimes.NewSet(host, builtin.Runtimes()...))
//	defer s.Close()
//	a, err := s.Side(0, "model.onnx", m)
//	b, err := s.Side(1, "model.onnx", m)
//	rep, err := verify.Compare(ctx, a, b, opts)
//	rep.Notes = append(rep.Notes, s.Describe(b))
//
// This package never links a runtime that needs cgo (runtimes/ort), so
// that the onnxconv binary stays static.
package runtimes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/verify"
)

// Executor names the built-in executor.
const Executor = "executor"

// ONNXRuntime names ONNX Runtime: the built-in runtimes/ortnode (npm's
// onnxruntime-node under Node), else the cgo plugin
// onnxconv-plugin-onnxruntime.
const ONNXRuntime = "onnxruntime"

// Parse reads a runtime list as `onnxconv verify --runtime` takes it: one
// name (both sides) or two separated by a comma (A's, then B's). Blank
// means none (nil): both sides run on the executor.
func Parse(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return nil, fmt.Errorf("runtimes %q: give one runtime, or two separated by a comma (A's, then B's)", s)
	}
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] == "" {
			return nil, fmt.Errorf("runtimes %q: empty runtime name", s)
		}
	}
	return parts, nil
}

// MissingError is returned when no installed plugin serves a runtime. Its
// message says where plugins were looked for and how to install one.
type MissingError struct {
	// Runtime is the runtime asked for.
	Runtime string
	// Searched are the plugin folders looked in, in order
	// ($ONNXCONV_PLUGIN_PATH or plugins.Options.PluginPath, then the user
	// plugins folder); empty when third-party plugins are disabled.
	Searched []string
	// Err is the plugin host's lookup error (it wraps plugins.ErrNotFound).
	Err error

	userDir string // the user plugins folder, for the install hint
}

func (e *MissingError) Error() string {
	where := "third-party plugins are disabled"
	if len(e.Searched) > 0 {
		shown := make([]string, len(e.Searched))
		for i, d := range e.Searched {
			shown[i] = displayDir(d)
		}
		where = "looked in " + strings.Join(shown, ", ")
	}
	dir := "~/.config/onnxconv/plugins"
	if e.userDir != "" {
		dir = displayDir(e.userDir)
	}
	if e.Runtime == ONNXRuntime {
		return fmt.Sprintf("runtime %s: the ONNX Runtime plugin is not installed (%s).\n"+
			"Build it (needs cgo) into the user plugins folder or a folder of $%s:\n"+
			"  go build -o %s/%sonnxruntime ./cmd/onnxconv-plugin-onnxruntime\n"+
			"and put the ONNX Runtime library beside it; npm's onnxruntime-node ships it:\n"+
			"  npm install --ignore-scripts onnxruntime-node@1.30.0\n"+
			"  cp node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1 %s/\n"+
			"(or set ONNXRUNTIME_LIB to a libonnxruntime.so.1)",
			e.Runtime, where, plugins.EnvPluginPath, dir, plugins.ExecutablePrefix, dir)
	}
	if e.Runtime == "libtorch" { // issue 29: the torchscript format's reference runtime
		return fmt.Sprintf("runtime %s: the libtorch plugin is not installed (%s).\n"+
			"Install libtorch and build the plugin (needs cgo) into the user plugins folder or a folder of $%s:\n"+
			"  apt-get install libtorch-dev\n"+
			"  go build -tags libtorch -o %s/%slibtorch ./cmd/onnxconv-plugin-libtorch",
			e.Runtime, where, plugins.EnvPluginPath, dir, plugins.ExecutablePrefix)
	}
	return fmt.Sprintf("runtime %s: no plugin serves this runtime (%s).\n"+
		"Install a plugin executable named %s%s in the user plugins folder or a folder of $%s, "+
		"or use the runtime %q for the built-in executor",
		e.Runtime, where, plugins.ExecutablePrefix, e.Runtime, plugins.EnvPluginPath, Executor)
}

// Unwrap returns the host's lookup error.
func (e *MissingError) Unwrap() error { return e.Err }

// Setup runs the sides of a comparison on their runtimes, taken from a
// Set. A session is opened on first use, loads its model once and serves
// every sample; Close closes them. A Setup is safe for concurrent use.
type Setup struct {
	names   []string // A's and B's runtime, or one for both, or none
	threads int
	rts     []Runtime // per name; nil for the executor
	mu      sync.Mutex
	open    []Session
	notes   [2]string // per side: the runtime's ModelNote on its model
	// sessNotes, per side: the session's SessionNote once it is open.
	sessNotes [2]string
}

// SessionNoter is a Session that says what computed its model once it
// is loaded, for a runtime with more than one engine (the tflite
// runtime: LiteRT.js, or tfjs-tflite when LiteRT.js does not take the
// model): "computed by …". DescribeSide and Describe add it to the
// runtime's name once the side's session is open.
type SessionNoter interface {
	SessionNote() string
}

// ModelNoter is a Runtime that computes some models other than by
// running them on its framework as they are (a layer the framework
// refuses computed by the runtime with the framework's ops): ModelNote
// says how, for the model file at path ("" when it runs as it is), and
// DescribeSide and Describe add it to the runtime's name.
type ModelNoter interface {
	ModelNote(path string) string
}

// NewSetup prepares the runtimes named (as Parse returns them: none, one
// for both sides, or A's and B's) from set. threads is the number of
// intra-op threads of the runtimes (0: the runtime chooses). Nothing is
// started; every runtime other than Executor must be in set, or the error
// is a *MissingError.
func NewSetup(names []string, threads int, set *Set) (*Setup, error) {
	if len(names) > 2 {
		return nil, fmt.Errorf("runtimes %q: give one runtime, or two (A's, then B's)", names)
	}
	if threads < 0 {
		return nil, fmt.Errorf("runtimes: threads must not be negative, got %d", threads)
	}
	s := &Setup{names: append([]string(nil), names...), threads: threads, rts: make([]Runtime, len(names))}
	for i, n := range names {
		if n == "" {
			return nil, fmt.Errorf("runtimes %q: empty runtime name", names)
		}
		if n == Executor {
			continue
		}
		rt, err := set.Lookup(n)
		if err != nil {
			return nil, err
		}
		s.rts[i] = rt
	}
	return s, nil
}

// Runtime returns the runtime of side i (0: A, 1: B), "" when none was
// named (the executor).
func (s *Setup) Runtime(i int) string {
	k := s.index(i)
	if k < 0 {
		return ""
	}
	return s.names[k]
}

// index is the position in names of side i's runtime, -1 for none.
func (s *Setup) index(i int) int {
	switch {
	case len(s.names) == 0 || i < 0 || i > 1:
		return -1
	case len(s.names) == 1:
		return 0
	case i >= len(s.names):
		return -1
	}
	return i
}

// Side returns side i (0: A, 1: B) of a comparison for the model m read
// from the file at path, run on its runtime. A runtime loads the model
// from path, once, on the side's first run. When a runtime is named the
// side's name is "path (runtime)", else path.
func (s *Setup) Side(i int, path string, m *canonical.Model) (*verify.Side, error) {
	return s.side(i, path, m, false)
}

// UnoptimizedSide is Side with the runtime's graph optimizations off
// (OpenOptions.Unoptimized): the model as written, to measure the
// runtime's own noise.
func (s *Setup) UnoptimizedSide(i int, path string, m *canonical.Model) (*verify.Side, error) {
	return s.side(i, path, m, true)
}

func (s *Setup) side(i int, path string, m *canonical.Model, unoptimized bool) (*verify.Side, error) {
	if i < 0 || i > 1 {
		return nil, fmt.Errorf("runtimes: side %d: want 0 (A) or 1 (B)", i)
	}
	if m == nil {
		return nil, fmt.Errorf("runtimes: side %d (%s): no model", i, path)
	}
	k := s.index(i)
	if k < 0 {
		return verify.ModelSide(path, m), nil
	}
	side := &verify.Side{Name: path + " (" + s.names[k] + ")", Model: m}
	if s.rts[k] == nil {
		return side, nil
	}
	if n, ok := s.rts[k].(ModelNoter); ok {
		note := n.ModelNote(path)
		s.mu.Lock()
		s.notes[i] = note
		s.mu.Unlock()
	}
	ins := verify.GraphInputs(m)
	names := make([]string, len(ins))
	for j, v := range ins {
		names[j] = v.Name
	}
	outs := make([]string, len(m.Graph.Outputs))
	for j, v := range m.Graph.Outputs {
		outs[j] = v.Name
	}
	meta := map[string]string{}
	for _, p := range m.MetadataProps {
		meta[p.Key] = p.Value
	}
	r := s.Runner(s.rts[k], path, OpenOptions{InputNames: names, OutputNames: outs, Metadata: meta, Threads: s.threads, Unoptimized: unoptimized})
	r.side = i
	side.Runner = r
	if _, ok := s.rts[k].(ONNXLoader); ok {
		side.Runner = captureRunner{Runner: r, model: m}
	} else if src, err := canonical.SourceTensors(m); err == nil && len(src) > 0 {
		// The importer recorded the source tensor of each value: the
		// runtime may compute them (a TF.js graph model).
		side.Runner = sourceCapture{Runner: r, model: m, src: src}
	}
	return side, nil
}

// Runner returns a verify.Runner that runs the model at path on rt: the
// session is opened on the first run and serves every later one; Close
// closes it.
func (s *Setup) Runner(rt Runtime, path string, o OpenOptions) *Runner {
	return &Runner{setup: s, rt: rt, path: path, opts: o, side: -1}
}

// Runner runs one model file on a runtime, loading it once.
type Runner struct {
	setup *Setup
	rt    Runtime
	path  string
	opts  OpenOptions
	side  int // the Setup's side it runs (0: A, 1: B), -1: none
	mu    sync.Mutex
	sess  Session
}

// Runtime names the runtime r runs on.
func (r *Runner) Runtime() string { return r.rt.Info().Name }

// Open loads the model now, if it is not loaded yet (Run loads it on
// first use): a model the runtime cannot compute fails here, before any
// sample runs.
func (r *Runner) Open(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.open(ctx)
}

func (r *Runner) open(ctx context.Context) error {
	if r.sess != nil {
		return nil
	}
	sess, err := r.rt.Open(ctx, r.path, r.opts)
	if err != nil {
		return err
	}
	r.sess = sess
	r.setup.mu.Lock()
	r.setup.open = append(r.setup.open, sess)
	r.setup.mu.Unlock()
	return nil
}

// Run runs the model on one sample.
func (r *Runner) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.open(ctx); err != nil {
		return nil, err
	}
	out, err := r.sess.Run(ctx, inputs)
	r.noteSession()
	return out, err
}

// noteSession records the session's note: what computed the model is
// known once it ran (an engine may hand the model to another on its first
// run).
func (r *Runner) noteSession() {
	if n, ok := r.sess.(SessionNoter); ok && r.side >= 0 && r.side < len(r.setup.sessNotes) {
		note := n.SessionNote()
		r.setup.mu.Lock()
		r.setup.sessNotes[r.side] = note
		r.setup.mu.Unlock()
	}
}

// ValueSession is a Session that also runs models whose graph inputs or
// outputs are sequences or optionals (ONNX Runtime under Node does).
type ValueSession interface {
	Session
	RunValues(ctx context.Context, inputs []*executor.Value) ([]*executor.Value, error)
}

// RunValues runs the model on one sample of values (verify.ValueRunner):
// a runtime whose sessions pass tensors only gives a *ValuesError.
func (r *Runner) RunValues(ctx context.Context, inputs []*executor.Value) ([]*executor.Value, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.open(ctx); err != nil {
		return nil, err
	}
	vs, ok := r.sess.(ValueSession)
	if !ok {
		return nil, &ValuesError{Runtime: r.rt.Info().Name}
	}
	out, err := vs.RunValues(ctx, inputs)
	r.noteSession()
	return out, err
}

// ValuesError is a runtime that takes and gives tensors only, asked to run
// a model with sequence or optional inputs or outputs.
type ValuesError struct{ Runtime string }

func (e *ValuesError) Error() string {
	return "the runtime " + e.Runtime + " takes and gives tensors only, and the model takes or gives sequences or optionals"
}

// RuntimeLimit: the runtime's limit, not the model's (Limited).
func (e *ValuesError) RuntimeLimit() bool { return true }

// Describe says where each side ran, for a report's notes: "A ran on …,
// B on …" (or "; B is stored outputs" when b has no model). A runtime is
// named with its version, where it runs and its description.
func (s *Setup) Describe(b *verify.Side) string {
	if b == nil || b.Model == nil {
		return "A ran on " + s.describe(0, describe) + "; B is stored outputs"
	}
	return "A ran on " + s.describe(0, describe) + ", B on " + s.describe(1, describe)
}

// DescribeSide names where side i (0: A, 1: B) runs in a few words: "the
// built-in executor", or "tflite 0.0.1-alpha.10 (in a node process)";
// Describe gives the long form.
func (s *Setup) DescribeSide(i int) string { return s.describe(i, short) }

func (s *Setup) describe(i int, form func(Info) string) string {
	k := s.index(i)
	if k < 0 || s.rts[k] == nil {
		return "the built-in executor"
	}
	info := s.rts[k].Info()
	s.mu.Lock()
	if i >= 0 && i < len(s.notes) && s.notes[i] != "" {
		info.Where += "; " + s.notes[i]
	}
	if i >= 0 && i < len(s.sessNotes) && s.sessNotes[i] != "" {
		info.Where += "; " + s.sessNotes[i]
	}
	s.mu.Unlock()
	return form(info)
}

// Close closes the sessions opened (stopping their processes).
func (s *Setup) Close() error {
	s.mu.Lock()
	open := s.open
	s.open = nil
	s.mu.Unlock()
	var errs []error
	for _, sess := range open {
		errs = append(errs, sess.Close())
	}
	return errors.Join(errs...)
}

// missingError is the *MissingError for runtime name, with the folders
// host searched (nil host: third-party plugins are disabled).
func missingError(name string, err error, host *plugins.Host) error {
	e := &MissingError{Runtime: name, Err: err}
	if host != nil {
		e.Searched = host.Folders()
		e.userDir = host.UserDir()
	}
	if e.userDir == "" {
		e.userDir, _ = plugins.UserDir() // "" when unknown: the hint shows the usual folder
	}
	return e
}

// displayDir shows dir as a person would type it: under the home folder as
// ~/….
func displayDir(dir string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return dir
	}
	rel, err := filepath.Rel(home, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return dir
	}
	if rel == "." {
		return "~"
	}
	return "~/" + filepath.ToSlash(rel)
}
