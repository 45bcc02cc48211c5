package plugins

import (
	"context"
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// BuiltinOptions returns Options for an executable that serves the
// built-in plugins of builtins itself, started with serveArgs followed by
// the plugin's name: each built-in is described from its sdk.Plugin,
// without starting it, in the order of BuiltinNames. Time and memory
// limits are left at their defaults.
func BuiltinOptions(builtins map[string]func() sdk.Plugin, serveArgs []string) Options {
	opts := Options{ServeArgs: serveArgs}
	for _, name := range BuiltinNames(builtins) {
		imp, exp := builtins[name]().Info()
		opts.Builtins = append(opts.Builtins, Builtin{Name: name, Importer: imp, Exporter: exp})
	}
	return opts
}

// BuiltinNames returns the names of builtins, sorted.
func BuiltinNames(builtins map[string]func() sdk.Plugin) []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Registry returns the importers of a host that serves its built-in
// importers (locals) as plugins: every local importer not named in
// inProcess runs through its plugin of the same name on h, in the order of
// locals, with the local importer's description and detection (in this
// process) and, when it is an importers.Predictor, its direct source
// computation in a plugin process; then h's third-party importer plugins in discovery order; then
// the local importers named in inProcess, in process, in the order of
// locals.
func Registry(h *Host, locals []importers.Importer, inProcess ...string) (*importers.Registry, error) {
	r := &importers.Registry{}
	var last []importers.Importer
	for _, imp := range locals {
		name := imp.Describe().Name
		if slices.Contains(inProcess, name) {
			last = append(last, imp)
			continue
		}
		hi, err := h.Importer(name)
		if err != nil {
			return nil, fmt.Errorf("built-in importer %s: %w", name, err)
		}
		if err := r.Add(ViaPlugin(imp, hi)); err != nil {
			return nil, err
		}
	}
	for _, imp := range append(h.Importers(), last...) {
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

// Source computes the source in a plugin process (see
// predictingHostImporter.Source).
func (w predictingPluginImporter) Source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	return w.source(ctx, path, opts)
}
