// Package importhost adapts the importer plugins of a plugins.Host to
// importers.Importer (and importers.Predictor, importers.SourceImporter)
// and assembles the registry of a run whose built-in importers run as
// plugins. The host (plugins) serves every role and speaks only the
// protocol's terms; the importer contract enters here, so that runtimes
// and exporters, which use the host, depend on no importer.
package importhost

import (
	"context"
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/plugins"
)

// HostImporter is an importer plugin of a host as an importers.Importer.
// Each Import starts the plugin process (see plugins.Host.Import);
// Describe and Detect mostly use the description the plugin gave at
// discovery (plugins.ImporterPlugin).
type HostImporter struct{ *plugins.ImporterPlugin }

var _ importers.Importer = (*HostImporter)(nil)

// New returns the importer of plugin name on h. A plugin that is unknown,
// broken, or serves no importer is an error (plugins.ErrNotFound, the
// plugin's Err, plugins.ErrUnsupported).
func New(h *plugins.Host, name string) (*HostImporter, error) {
	p, err := h.ImporterPlugin(name)
	if err != nil {
		return nil, err
	}
	return &HostImporter{p}, nil
}

// All returns the third-party importer plugins of h that work, in
// discovery order, as importers: what a registry of the built-in importers
// (importers/builtin) lacks. One whose plugin computes its sources is an
// importers.Predictor too.
func All(h *plugins.Host) []importers.Importer {
	var out []importers.Importer
	for _, p := range h.ImporterPlugins() {
		out = append(out, (&HostImporter{p}).withPredictor())
	}
	return out
}

// Import imports the file at path through the plugin
// (plugins.ImporterPlugin.ImportModel). Options that do not fit the
// plugin's specs are an *importers.OptionError, before a process starts.
func (hi *HostImporter) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	if err := importers.CheckOptions(hi.Describe(), opts); err != nil {
		return nil, err
	}
	m, warnings, err := hi.ImportModel(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return &importers.Result{Model: m, Warnings: warnings}, nil
}

// withPredictor returns hi as an importers.Importer that is also an
// importers.Predictor and an importers.SourceImporter when the plugin
// computes its sources.
func (hi *HostImporter) withPredictor() importers.Importer {
	if hi.Predicts() {
		return predictingHostImporter{hi}
	}
	return hi
}

type predictingHostImporter struct{ *HostImporter }

var (
	_ importers.Predictor      = predictingHostImporter{}
	_ importers.SourceImporter = predictingHostImporter{}
)

// Source opens the source at path for direct computation in a plugin
// process started for it (plugins.ImporterPlugin.OpenSource).
func (p predictingHostImporter) Source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	return p.source(ctx, path, opts)
}

// ImportSource imports the file at path and opens its source in one
// plugin process (plugins.ImporterPlugin.ImportModelSource). A source that
// cannot be opened is nil; Source says why.
func (p predictingHostImporter) ImportSource(ctx context.Context, path string, opts importers.Options) (*importers.Result, importers.Source, error) {
	return p.importSource(ctx, path, opts)
}

// source is Source for any importer plugin (*HostImporter itself is no
// importers.Predictor: only the plugins that say they predict are).
func (hi *HostImporter) source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	if err := importers.CheckOptions(hi.Describe(), opts); err != nil {
		return nil, err
	}
	src, err := hi.OpenSource(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return src, nil
}

// importSource is ImportSource for any importer plugin; one that does not
// compute its sources only imports.
func (hi *HostImporter) importSource(ctx context.Context, path string, opts importers.Options) (*importers.Result, importers.Source, error) {
	if err := importers.CheckOptions(hi.Describe(), opts); err != nil {
		return nil, nil, err
	}
	m, warnings, src, err := hi.ImportModelSource(ctx, path, opts)
	if err != nil {
		return nil, nil, err
	}
	res := &importers.Result{Model: m, Warnings: warnings}
	if src == nil {
		return res, nil, nil // no *RemoteSource in a non-nil interface
	}
	return res, src, nil
}

// Registry returns the importers of a host that serves its built-in
// importers (locals) as plugins: every local importer not named in
// inProcess runs through its plugin of the same name on h, in the order of
// locals, with the local importer's description and detection (in this
// process) and, when it is an importers.Predictor, its direct source
// computation in a plugin process; then h's third-party importer plugins in discovery order; then
// the local importers named in inProcess, in process, in the order of
// locals.
func Registry(h *plugins.Host, locals []importers.Importer, inProcess ...string) (*importers.Registry, error) {
	r := &importers.Registry{}
	var last []importers.Importer
	for _, imp := range locals {
		name := imp.Describe().Name
		if slices.Contains(inProcess, name) {
			last = append(last, imp)
			continue
		}
		hi, err := New(h, name)
		if err != nil {
			return nil, fmt.Errorf("built-in importer %s: %w", name, err)
		}
		if err := r.Add(ViaPlugin(imp, hi)); err != nil {
			return nil, err
		}
	}
	for _, imp := range append(All(h), last...) {
		if err := r.Add(imp); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// ViaPlugin returns a built-in importer whose Import runs out of process
// (hi), whose description is local's own (the same the plugin gives), and
// whose detection runs in this process (local.Detect: a pure function of
// the head): only Import starts a process. When the plugin computes its
// sources (local is an importers.Predictor), Source runs in a plugin
// process too: nothing parsed from the file runs in the host.
func ViaPlugin(local importers.Importer, hi *HostImporter) importers.Importer {
	w := pluginImporter{HostImporter: hi, local: local}
	if hi.Predicts() {
		return predictingPluginImporter{w}
	}
	return w
}

type pluginImporter struct {
	*HostImporter
	local importers.Importer
}

func (w pluginImporter) Describe() importers.Description { return w.local.Describe() }

// Detect is the local importer's: a built-in Detect is a pure function of
// the file's head, linked into the host, so detection starts no process.
func (w pluginImporter) Detect(path string, head []byte) float32 { return w.local.Detect(path, head) }

type predictingPluginImporter struct{ pluginImporter }

var _ importers.Predictor = predictingPluginImporter{}

var _ importers.SourceImporter = predictingPluginImporter{}

// Source computes the source in a plugin process (see
// predictingHostImporter.Source).
func (w predictingPluginImporter) Source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	return w.source(ctx, path, opts)
}

// ImportSource is predictingHostImporter.ImportSource for a built-in
// importer served by its plugin.
func (w predictingPluginImporter) ImportSource(ctx context.Context, path string, opts importers.Options) (*importers.Result, importers.Source, error) {
	return w.importSource(ctx, path, opts)
}
