package runtimes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/plugins"
)

// Info describes a runtime.
type Info struct {
	// Name is what users pick it by (`--runtime NAME`).
	Name string
	// Version is the runtime's own version ("unknown" when it is not
	// installed).
	Version string
	// Description says what computes and how it is installed.
	Description string
	// Where says where it runs, for reports: "in a node process" for a
	// built-in runtime, "plugin PATH" for a runtime plugin.
	Where string
}

// OpenOptions tune a session.
type OpenOptions struct {
	// InputNames, when not nil, are the names the model's inputs are
	// bound by, in order: input i of Run is passed as InputNames[i]
	// whatever its tensor is called.
	InputNames []string
	// OutputNames, when not nil, are the names of the model's outputs as
	// the side's model calls them, in order: a runtime that must be told
	// which outputs to compute (a TensorFlow graph without a signature)
	// reads them.
	OutputNames []string
	// Metadata holds the side's model's metadata_props: what its importer
	// recorded for the source's runtime (the TensorFlow graph chosen).
	Metadata map[string]string
	// Threads is the number of intra-op threads (0: the runtime chooses).
	Threads int
	// Unoptimized asks a runtime that rewrites graphs before it runs them
	// (ONNX Runtime's graph optimizations) to run the graph as written:
	// the same model both ways shows the runtime's own noise.
	Unoptimized bool
}

// Runtime is a reference runtime: it loads a model file once (Open) and
// then runs it on any number of samples (Session.Run). A built-in runtime
// (runtimes/builtin) is linked into the host and starts its interpreter as
// a child process (Node for TFLite and TF.js); a runtime plugin
// (onnxconv-plugin-onnxruntime) is reached through the plugin host.
// Implementations are safe for concurrent use.
type Runtime interface {
	Info() Info
	// Open loads the model at modelPath. The session is closed by the
	// caller.
	Open(ctx context.Context, modelPath string, opts OpenOptions) (Session, error)
}

// Checker is implemented by runtimes that can tell, without starting
// anything, that they cannot run here (Node or an npm package missing):
// Set.Lookup then fails with Check's error.
type Checker interface {
	Check() error
}

// Limited is implemented by a runtime's errors that are the runtime's
// limit, not the model's (a graph input or output of a type its binding
// cannot pass): a result refused so is not run there, rather than refused.
type Limited interface {
	RuntimeLimit() bool
}

// Session is a model loaded by a runtime. It has the method set of
// verify.Runner (plus Close), so it takes a side of a comparison.
type Session interface {
	// Run computes the outputs for one sample of inputs (the graph
	// inputs that are not initializers, in order); the outputs come in
	// the model's order.
	Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error)
	Close() error
}

// Set is the runtimes of a run: the built-in ones, linked in, and the
// runtime plugins of one plugin host, built once by the caller. The zero
// Set and a nil *Set have no runtime but the executor.
type Set struct {
	builtin []Runtime
	host    *plugins.Host
}

// NewSet returns the runtimes builtin (see runtimes/builtin) followed by
// the runtime plugins of host (nil: none). A built-in wins over a plugin
// of the same runtime name.
func NewSet(host *plugins.Host, builtin ...Runtime) *Set {
	return &Set{builtin: append([]Runtime(nil), builtin...), host: host}
}

// Host returns the plugin host of the set (nil when it has none).
func (s *Set) Host() *plugins.Host {
	if s == nil {
		return nil
	}
	return s.host
}

// Names lists the runtimes of the set: the built-ins, then the runtime
// plugins, without the executor.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, r := range s.builtin {
		out = append(out, r.Info().Name)
	}
	if s.host != nil {
		for _, p := range s.host.Runtimes() {
			out = append(out, p.Runtime.Name)
		}
	}
	return out
}

// Lookup returns the runtime called name: a built-in, else the runtime
// plugin of the host. A built-in that cannot run here (its Check fails)
// gives way to a plugin of the same name, and fails with Check's error
// when there is none. Starting nothing, it fails with a *MissingError
// when neither serves it. The executor is not a Runtime: callers run a
// model on it themselves (verify.ModelSide).
func (s *Set) Lookup(name string) (Runtime, error) {
	var host *plugins.Host
	if s != nil {
		host = s.host
		for _, r := range s.builtin {
			if r.Info().Name != name {
				continue
			}
			if c, ok := r.(Checker); ok {
				if err := c.Check(); err != nil {
					if host != nil {
						if p, perr := host.RuntimePlugin(name); perr == nil {
							return pluginRuntime{host: host, info: p}, nil
						}
					}
					return nil, err
				}
			}
			return r, nil
		}
	}
	if host == nil {
		return nil, missingError(name, fmt.Errorf("runtime %q: %w serves it (no plugin host)", name, plugins.ErrNotFound), nil)
	}
	p, err := host.RuntimePlugin(name)
	if err != nil {
		if !errors.Is(err, plugins.ErrNotFound) {
			return nil, fmt.Errorf("runtime %s: %w", name, err)
		}
		return nil, missingError(name, err, host)
	}
	return pluginRuntime{host: host, info: p}, nil
}

// pluginRuntime is a runtime plugin as a Runtime.
type pluginRuntime struct {
	host *plugins.Host
	info plugins.PluginInfo
}

func (p pluginRuntime) Info() Info {
	return Info{Name: p.info.Runtime.Name, Version: p.info.Runtime.Version, Description: p.info.Runtime.Description, Where: "plugin " + p.info.Path}
}

// Open starts the runtime plugin once for the model: one process serves
// every run of the session. The run options the importer recorded for
// this runtime (canonical.RunOptions) are passed on.
func (p pluginRuntime) Open(ctx context.Context, modelPath string, o OpenOptions) (Session, error) {
	name := p.info.Runtime.Name
	return p.host.OpenRuntime(ctx, name, modelPath, o.InputNames, plugins.RunOptions{Threads: o.Threads, Options: canonical.RunOptions(o.Metadata, name)})
}

// describe is the long form of a runtime's description: "NAME VERSION
// (WHERE: DESCRIPTION)".
func describe(i Info) string {
	d := fmt.Sprintf("%s %s (%s", i.Name, i.Version, i.Where)
	if i.Description != "" {
		d += ": " + i.Description
	}
	return d + ")"
}

// short is the short form: "NAME VERSION (WHERE)", with a plugin named by
// its file name only.
func short(i Info) string {
	where := i.Where
	if p, ok := strings.CutPrefix(where, "plugin "); ok {
		if k := strings.LastIndexAny(p, `/\`); k >= 0 {
			p = p[k+1:]
		}
		where = "runtime plugin " + strings.TrimPrefix(p, plugins.ExecutablePrefix)
	}
	return fmt.Sprintf("%s %s (%s)", i.Name, i.Version, where)
}

// NotInstalledError is a reference runtime that is not installed. Its
// message is one line with the command that installs it (what a user
// sees once, not the search paths); Err holds the details.
type NotInstalledError struct {
	// Runtime is the runtime's name ("tflite"); Line the one line.
	Runtime, Line string
	Err           error
}

func (e *NotInstalledError) Error() string { return e.Line }
func (e *NotInstalledError) Unwrap() error { return e.Err }

// InstallCommand installs the reference runtimes under Node and ONNX
// Runtime's library in the user's data folder.
const InstallCommand = "onnxconv runtimes install"
