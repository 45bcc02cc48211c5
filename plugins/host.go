// Package plugins is the host side of onnxconv plugins: it finds importer,
// exporter and runtime plugins (runtime.go), starts one plugin process per
// call through github.com/hashicorp/go-plugin, bounds the call in time and memory, kills
// the process afterwards, and turns every misbehaviour (panic, hang, early
// exit, garbage, out of memory) into a *PluginError naming the plugin and
// the input file. Outputs are written to a private temporary folder beside
// the final path and renamed onto it only on success.
//
// Built-in plugins are the onnxconv executable itself, started as
// `onnxconv __plugin serve NAME`; third-party plugins are executables named
// onnxconv-plugin-NAME in the folders of $ONNXCONV_PLUGIN_PATH and in the
// user plugins folder (os.UserConfigDir()/onnxconv/plugins). Plugin authors
// use package sdk.
package plugins

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// EnvPluginPath names the colon-separated list of folders searched for
// third-party plugins.
const EnvPluginPath = "ONNXCONV_PLUGIN_PATH"

// ExecutablePrefix starts the file name of every third-party plugin.
const ExecutablePrefix = "onnxconv-plugin-"

// Defaults.
const (
	DefaultCallTimeout     = 10 * time.Minute
	DefaultDescribeTimeout = 30 * time.Second
	DefaultStartTimeout    = 30 * time.Second
)

// Builtin is a plugin served by the host executable itself.
type Builtin struct {
	Name string
	// Importer, Exporter and Runtime describe the plugin without starting
	// it (see sdk.Plugin.Info and RuntimeInfo). When all are nil the plugin
	// is started and asked.
	Importer *protocol.ImporterInfo
	Exporter *protocol.ExporterInfo
	Runtime  *protocol.RuntimeInfo
}

// Options configure discovery and calls. The zero value is usable.
type Options struct {
	// Executable serves the built-in plugins; "" means os.Executable().
	Executable string
	// ServeArgs are the arguments before the plugin name that make
	// Executable serve a built-in plugin; nil means ["__plugin", "serve"].
	ServeArgs []string
	// Builtins are the built-in plugins. They take precedence over
	// third-party plugins of the same name.
	Builtins []Builtin

	// PluginPath lists folders to search, separated by
	// os.PathListSeparator; "" means $ONNXCONV_PLUGIN_PATH.
	PluginPath string
	// UserDir is the user plugins folder; "" means
	// os.UserConfigDir()/onnxconv/plugins.
	UserDir string
	// NoThirdParty disables the search for third-party plugins.
	NoThirdParty bool

	// CallTimeout bounds every import and export call, including the start
	// of the plugin; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// DescribeTimeout bounds asking a plugin what it is (discovery and
	// detection calls); 0 means DefaultDescribeTimeout.
	DescribeTimeout time.Duration
	// StartTimeout bounds the start and handshake of a plugin; 0 means
	// DefaultStartTimeout. A call's own deadline is never exceeded.
	StartTimeout time.Duration
	// MemoryLimit is the memory limit of each plugin process in bytes: its
	// private writable memory may grow by this much after start (on Linux;
	// elsewhere Go plugins only get it as a garbage collector goal). 0 means three
	// quarters of physical memory or of the cgroup's limit, the smaller
	// (at least 1 GiB); negative means none.
	MemoryLimit int64

	// Logger receives go-plugin's logs; nil discards them.
	Logger hclog.Logger
	// Stderr, if set, receives a copy of the plugins' standard error.
	Stderr io.Writer
}

// withDefaults resolves the defaults of o.
func (o Options) withDefaults() (Options, error) {
	if o.Executable == "" && len(o.Builtins) > 0 {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("finding the onnxconv executable for built-in plugins: %w", err)
		}
		o.Executable = exe
	}
	if o.ServeArgs == nil {
		o.ServeArgs = []string{"__plugin", "serve"}
	}
	if o.PluginPath == "" {
		o.PluginPath = os.Getenv(EnvPluginPath)
	}
	if o.UserDir == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			o.UserDir = filepath.Join(dir, "onnxconv", "plugins")
		}
	}
	if err := limitsFromEnv(&o); err != nil {
		return o, err
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.DescribeTimeout <= 0 {
		o.DescribeTimeout = DefaultDescribeTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = max(physicalMemory()/4*3, 1<<30)
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o, nil
}

// Host runs plugin calls. It is safe for concurrent use; each call starts
// its own plugin process.
type Host struct {
	opts    Options
	plugins []PluginInfo
	byName  map[string]int
}

// NewHost discovers the plugins (see Discover) and returns a host for them.
func NewHost(ctx context.Context, opts Options) (*Host, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	infos, err := discover(ctx, opts)
	if err != nil {
		return nil, err
	}
	h := &Host{opts: opts, plugins: infos, byName: make(map[string]int, len(infos))}
	for i, p := range infos {
		h.byName[p.Name] = i
	}
	return h, nil
}

// Plugins returns the plugins found, built-ins first, including those that
// failed to describe themselves (their Err is set).
func (h *Host) Plugins() []PluginInfo {
	return append([]PluginInfo(nil), h.plugins...)
}

// Plugin returns the plugin called name.
func (h *Host) Plugin(name string) (PluginInfo, bool) {
	i, ok := h.byName[name]
	if !ok {
		return PluginInfo{}, false
	}
	return h.plugins[i], true
}

// MemoryLimit returns the memory limit applied to plugin processes in
// bytes (negative: none).
func (h *Host) MemoryLimit() int64 { return h.opts.MemoryLimit }

// Folders returns the folders searched for third-party plugins, in order
// (the plugin path, then the user plugins folder); none when third-party
// plugins are disabled.
func (h *Host) Folders() []string {
	if h.opts.NoThirdParty {
		return nil
	}
	var out []string
	for _, d := range filepath.SplitList(h.opts.PluginPath) {
		if d != "" {
			out = append(out, d)
		}
	}
	if h.opts.UserDir != "" {
		out = append(out, h.opts.UserDir)
	}
	return out
}

// UserDir returns the user plugins folder of h ("" when unknown).
func (h *Host) UserDir() string { return h.opts.UserDir }
