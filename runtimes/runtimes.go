// Package runtimes picks where each side of a comparison runs: on the
// built-in executor, or on a reference runtime served by a plugin (ONNX
// Runtime through the cgo executable onnxconv-plugin-onnxruntime). It is
// what `onnxconv verify --runtime` uses, as a library:
//
//	names, err := runtimes.Parse("onnxruntime,executor")
//	s, err := runtimes.NewSetup(ctx, names, 1, plugins.Options{})
//	defer s.Close()
//	a, err := s.Side(0, "model.onnx", m)
//	b, err := s.Side(1, "model.onnx", m)
//	rep, err := verify.Compare(ctx, a, b, opts)
//	rep.Notes = append(rep.Notes, s.Describe(b))
//
// This package talks to runtimes only through package plugins: it never
// links a runtime that needs cgo (runtimes/ort), so that the onnxconv
// binary stays static.
package runtimes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/verify"
)

// Executor names the built-in executor.
const Executor = "executor"

// ONNXRuntime names ONNX Runtime, served by the plugin
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

// Setup runs the sides of a comparison on their runtimes. It starts a
// plugin host only when a runtime other than the executor is named. A Setup
// is safe for concurrent use.
type Setup struct {
	names   []string // A's and B's runtime, or one for both, or none
	threads int
	opts    plugins.Options
	host    *plugins.Host // nil when only the executor is named
}

// NewSetup prepares the runtimes named (as Parse returns them: none, one
// for both sides, or A's and B's). threads is the number of intra-op
// threads of plugin runtimes (0: the runtime chooses). opts configure the
// plugin host, which is started only when a runtime other than Executor is
// named; every such runtime must then be served by an installed plugin, or
// the error is a *MissingError.
func NewSetup(ctx context.Context, names []string, threads int, opts plugins.Options) (*Setup, error) {
	if len(names) > 2 {
		return nil, fmt.Errorf("runtimes %q: give one runtime, or two (A's, then B's)", names)
	}
	if threads < 0 {
		return nil, fmt.Errorf("runtimes: threads must not be negative, got %d", threads)
	}
	s := &Setup{names: append([]string(nil), names...), threads: threads, opts: opts}
	need := false
	for _, n := range names {
		if n == "" {
			return nil, fmt.Errorf("runtimes %q: empty runtime name", names)
		}
		need = need || n != Executor
	}
	if !need {
		return s, nil
	}
	h, err := plugins.NewHost(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("finding runtime plugins: %w", err)
	}
	s.host = h
	for _, n := range names {
		if n == Executor {
			continue
		}
		if _, err := h.RuntimePlugin(n); err != nil {
			return nil, s.missing(n, err)
		}
	}
	return s, nil
}

// Runtime returns the runtime of side i (0: A, 1: B), "" when none was
// named (the executor).
func (s *Setup) Runtime(i int) string {
	switch {
	case len(s.names) == 0:
		return ""
	case len(s.names) == 1:
		return s.names[0]
	case i < 0 || i >= len(s.names):
		return ""
	}
	return s.names[i]
}

// Side returns side i (0: A, 1: B) of a comparison for the model m read
// from the file at path, run on its runtime. A plugin runtime loads the
// model from path. When a runtime is named the side's name is
// "path (runtime)", else path.
func (s *Setup) Side(i int, path string, m *canonical.Model) (*verify.Side, error) {
	if i < 0 || i > 1 {
		return nil, fmt.Errorf("runtimes: side %d: want 0 (A) or 1 (B)", i)
	}
	if m == nil {
		return nil, fmt.Errorf("runtimes: side %d (%s): no model", i, path)
	}
	rt := s.Runtime(i)
	if rt == "" {
		return verify.ModelSide(path, m), nil
	}
	side := &verify.Side{Name: path + " (" + rt + ")", Model: m}
	if rt == Executor {
		return side, nil
	}
	if s.host == nil {
		return nil, fmt.Errorf("runtime %s: no plugin host (internal error: the Setup was not made by NewSetup)", rt)
	}
	ins := verify.GraphInputs(m)
	names := make([]string, len(ins))
	for j, v := range ins {
		names[j] = v.Name
	}
	r, err := s.host.Runner(rt, path, names, plugins.RunOptions{Threads: s.threads})
	if err != nil {
		return nil, s.missing(rt, err)
	}
	side.Runner = r
	return side, nil
}

// Describe says where each side ran, for a report's notes: "A ran on …,
// B on …" (or "; B is stored outputs" when b has no model). A plugin
// runtime is named with its version (for ONNX Runtime, ONNX Runtime's own
// version), its plugin and the plugin's description.
func (s *Setup) Describe(b *verify.Side) string {
	if b == nil || b.Model == nil {
		return "A ran on " + s.describe(0) + "; B is stored outputs"
	}
	return "A ran on " + s.describe(0) + ", B on " + s.describe(1)
}

// describe names the runtime of side i.
func (s *Setup) describe(i int) string {
	rt := s.Runtime(i)
	if rt == "" || rt == Executor || s.host == nil {
		return "the built-in executor"
	}
	p, err := s.host.RuntimePlugin(rt)
	if err != nil || p.Runtime == nil {
		return rt
	}
	d := fmt.Sprintf("%s %s (plugin %s", p.Runtime.Name, p.Runtime.Version, p.Path)
	if p.Runtime.Description != "" {
		d += ": " + p.Runtime.Description
	}
	return d + ")"
}

// Close releases what s holds. Plugin processes are started per run and
// stopped after it, so there is nothing left running; Close exists so that
// callers need not change if that does.
func (s *Setup) Close() error { return nil }

// missing turns the host's lookup error for runtime name into a
// *MissingError when no plugin serves it.
func (s *Setup) missing(name string, err error) error {
	if !errors.Is(err, plugins.ErrNotFound) {
		return fmt.Errorf("runtime %s: %w", name, err)
	}
	e := &MissingError{Runtime: name, Err: err}
	e.userDir = s.opts.UserDir
	if e.userDir == "" {
		e.userDir, _ = plugins.UserDir() // "" when unknown: the hint shows the usual folder
	}
	if s.opts.NoThirdParty {
		return e
	}
	pp := s.opts.PluginPath
	if pp == "" {
		pp = os.Getenv(plugins.EnvPluginPath)
	}
	for _, d := range filepath.SplitList(pp) {
		if d != "" {
			e.Searched = append(e.Searched, d)
		}
	}
	if e.userDir != "" {
		e.Searched = append(e.Searched, e.userDir)
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

// DescribeSide names where side i (0: A, 1: B) runs in a few words: "the
// built-in executor", or "tflite 0.0.1-alpha.10 (runtime plugin
// tflite-runtime)"; Describe gives the long form with the path.
func (s *Setup) DescribeSide(i int) string {
	rt := s.Runtime(i)
	if rt == "" || rt == Executor || s.host == nil {
		return "the built-in executor"
	}
	p, err := s.host.RuntimePlugin(rt)
	if err != nil || p.Runtime == nil {
		return rt
	}
	return fmt.Sprintf("%s %s (runtime plugin %s)", p.Runtime.Name, p.Runtime.Version, p.Name)
}
