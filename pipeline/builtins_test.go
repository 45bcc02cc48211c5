package pipeline

import (
	"testing"

	onnxexp "github.com/onnxconv/onnxconv/exporters/onnx"
	"github.com/onnxconv/onnxconv/importers/builtin"
	tfjsruntime "github.com/onnxconv/onnxconv/runtimes/tfjs"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
)

// Every built-in importer, the ONNX exporter and the two runtimes are
// served, each describing what it serves under its own name.
func TestBuiltinPlugins(t *testing.T) {
	m := BuiltinPlugins()
	if len(m) != len(builtin.Importers())+3 {
		t.Errorf("%d built-in plugins, want %d", len(m), len(builtin.Importers())+3)
	}
	for _, imp := range builtin.Importers() {
		name := imp.Describe().Name
		mk, ok := m[name]
		if !ok {
			t.Fatalf("no built-in plugin %s", name)
		}
		if ii, _ := mk().Info(); ii == nil || ii.Format != imp.Describe().Format {
			t.Errorf("%s: importer info %+v", name, ii)
		}
	}
	if _, ei := m[onnxexp.Name]().Info(); ei == nil || len(ei.Targets) == 0 {
		t.Errorf("%s: exporter info %+v", onnxexp.Name, ei)
	}
	for _, n := range []string{tfliteruntime.PluginName, tfjsruntime.PluginName} {
		if p := m[n](); p.Runtime == nil {
			t.Errorf("%s serves no runtime", n)
		}
	}
}
