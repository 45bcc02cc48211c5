package main

// Runtimes for `onnxconv verify --runtime`: the built-in executor, or a
// runtime served by a plugin (ONNX Runtime through the cgo executable
// onnxconv-plugin-onnxruntime; onnxconv itself never links it).

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

// executorRuntime names the built-in executor in --runtime.
const executorRuntime = "executor"

// ortRuntime is the runtime served by cmd/onnxconv-plugin-onnxruntime.
const ortRuntime = "onnxruntime"

// parseRuntimes reads --runtime: one name (both sides) or two separated by
// a comma (A's, then B's). "" means the executor for both.
func parseRuntimes(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return nil, fmt.Errorf("verify: --runtime %q: give one runtime, or two separated by a comma (A's, then B's)", s)
	}
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] == "" {
			return nil, fmt.Errorf("verify: --runtime %q: empty runtime name", s)
		}
	}
	return parts, nil
}

// runtimeSetup runs the sides of verify on their runtimes. It starts a
// plugin host only when a runtime other than the executor is asked for.
type runtimeSetup struct {
	names   []string // A's and B's runtime ("" when not set)
	threads int
	host    *plugins.Host
}

// newRuntimeSetup discovers the runtime plugins that names need. It fails
// with a hint when one is not installed.
func newRuntimeSetup(ctx context.Context, names []string, threads int) (*runtimeSetup, error) {
	rs := &runtimeSetup{names: names, threads: threads}
	need := false
	for _, n := range names {
		need = need || n != executorRuntime
	}
	if !need {
		return rs, nil
	}
	h, err := plugins.NewHost(ctx, plugins.Options{})
	if err != nil {
		return nil, fmt.Errorf("verify: finding runtime plugins: %w", err)
	}
	rs.host = h
	for _, n := range names {
		if n == executorRuntime {
			continue
		}
		if _, err := h.RuntimePlugin(n); err != nil {
			return nil, runtimeMissing(n, err)
		}
	}
	return rs, nil
}

// runtimeFor returns the runtime of side i (0: A, 1: B).
func (rs *runtimeSetup) runtimeFor(i int) string {
	switch {
	case len(rs.names) == 0:
		return ""
	case len(rs.names) == 1:
		return rs.names[0]
	}
	return rs.names[i]
}

// side returns side i for the model m read from path, run on its runtime.
func (rs *runtimeSetup) side(i int, path string, m *canonical.Model) (*verify.Side, error) {
	rt := rs.runtimeFor(i)
	if rt == "" {
		return verify.ModelSide(path, m), nil
	}
	s := &verify.Side{Name: path + " (" + rt + ")", Model: m}
	if rt == executorRuntime {
		return s, nil
	}
	r, err := rs.host.Runner(rt, path, verifyValueNames(verify.GraphInputs(m)), plugins.RunOptions{Threads: rs.threads})
	if err != nil {
		return nil, runtimeMissing(rt, err)
	}
	s.Runner = r
	return s, nil
}

// describe says where each side ran, for the report's notes.
func (rs *runtimeSetup) describe(b *verify.Side) string {
	name := func(i int) string {
		rt := rs.runtimeFor(i)
		if rt == executorRuntime || rs.host == nil {
			return "the built-in executor"
		}
		p, err := rs.host.RuntimePlugin(rt)
		if err != nil {
			return rt
		}
		return fmt.Sprintf("%s %s (plugin %s)", p.Runtime.Name, p.Runtime.Version, p.Path)
	}
	if b.Model == nil {
		return "A ran on " + name(0) + "; B is stored outputs"
	}
	return "A ran on " + name(0) + ", B on " + name(1)
}

// runtimeMissing turns the host's lookup error into one that says how to
// install the runtime.
func runtimeMissing(name string, err error) error {
	if !errors.Is(err, plugins.ErrNotFound) {
		return fmt.Errorf("verify: --runtime %s: %w", name, err)
	}
	dir := userPluginDir()
	searched := dir
	if pp := os.Getenv(plugins.EnvPluginPath); pp != "" {
		searched = "$" + plugins.EnvPluginPath + " (" + pp + ") and " + dir
	}
	if name == ortRuntime {
		return &hintError{err: err, msg: fmt.Sprintf("verify: --runtime %s: the ONNX Runtime plugin is not installed (looked in %s).\n"+
			"Build it (needs cgo) into the user plugins folder or a folder of $%s:\n"+
			"  go build -o %s/%sonnxruntime ./cmd/onnxconv-plugin-onnxruntime\n"+
			"and get the ONNX Runtime library, in the repository root:\n"+
			"  npm install --ignore-scripts onnxruntime-node@1.30.0\n"+
			"(or set ONNXRUNTIME_LIB to a libonnxruntime.so)", name, searched, plugins.EnvPluginPath, dir, plugins.ExecutablePrefix)}
	}
	return &hintError{err: err, msg: fmt.Sprintf("verify: --runtime %s: no plugin serves this runtime (looked in %s).\n"+
		"Install a plugin executable named %s%s there, or use --runtime %s for the built-in executor",
		name, searched, plugins.ExecutablePrefix, name, executorRuntime)}
}

// hintError is an error with its own message that still matches what it
// wraps.
type hintError struct {
	msg string
	err error
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// userPluginDir is the user plugins folder as a person would type it.
func userPluginDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "~/.config/onnxconv/plugins"
	}
	dir = filepath.Join(dir, "onnxconv", "plugins")
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, dir); err == nil && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return dir
}
