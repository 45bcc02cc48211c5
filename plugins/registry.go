package plugins

import (
	"slices"

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
