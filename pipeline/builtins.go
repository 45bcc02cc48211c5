package pipeline

import (
	onnxexp "github.com/onnxconv/onnxconv/exporters/onnx"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	tfjsruntime "github.com/onnxconv/onnxconv/runtimes/tfjs"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
	"github.com/onnxconv/onnxconv/version"
)

// BuiltinPlugins returns the plugins an onnxconv executable serves itself
// (`onnxconv __plugin serve NAME`), by name: every built-in importer
// (importers/builtin) through sdk.ImporterFrom, the ONNX exporter and the
// TFLite and TF.js runtimes. They report onnxconv's version. Pass them to
// plugins.BuiltinOptions for Options.Plugins, and to plugins.Registry.
func BuiltinPlugins() map[string]func() sdk.Plugin {
	v := version.Get().Short()
	m := map[string]func() sdk.Plugin{
		onnxexp.Name:             func() sdk.Plugin { return sdk.Plugin{Exporter: onnxexp.Plugin(v)} },
		tfliteruntime.PluginName: func() sdk.Plugin { return tfliteruntime.Plugin(tfliteruntime.FindOptions{}) },
		tfjsruntime.PluginName:   func() sdk.Plugin { return tfjsruntime.Plugin(tfjsruntime.FindOptions{}) },
	}
	for _, imp := range builtin.Importers() {
		m[imp.Describe().Name] = func() sdk.Plugin { return sdk.Plugin{Importer: sdk.ImporterFrom(imp, v)} }
	}
	return m
}
