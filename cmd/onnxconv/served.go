package main

import (
	onnxexp "github.com/onnxconv/onnxconv/exporters/onnx"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/plugins/sdk/importersdk"
	"github.com/onnxconv/onnxconv/version"
)

// builtinPlugins returns the plugins the onnxconv executable serves
// itself (`onnxconv __plugin serve NAME`), by name: every built-in
// importer (importers/builtin) through importersdk.From, and the ONNX
// exporter. They report onnxconv's version. The built-in runtimes
// (runtimes/builtin) are no plugins: they run in this process's node
// children.
func builtinPlugins() map[string]func() sdk.Plugin {
	v := version.Get().Short()
	m := map[string]func() sdk.Plugin{
		onnxexp.Name: func() sdk.Plugin { return sdk.Plugin{Exporter: onnxexp.Plugin(v)} },
	}
	for _, imp := range builtin.Importers() {
		m[imp.Describe().Name] = func() sdk.Plugin { return sdk.Plugin{Importer: importersdk.From(imp, v)} }
	}
	return m
}
