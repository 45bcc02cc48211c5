package main

import (
	"testing"

	onnxexp "github.com/onnxconv/onnxconv/exporters/onnx"
	"github.com/onnxconv/onnxconv/importers/builtin"
)

// Every built-in importer and the ONNX exporter are served, each
// describing what it serves under its own name.
func TestBuiltinPlugins(t *testing.T) {
	m := builtinPlugins()
	if len(m) != len(builtin.Importers())+1 {
		t.Errorf("%d built-in plugins, want %d", len(m), len(builtin.Importers())+1)
	}
	for _, imp := range builtin.Importers() {
		name := imp.Describe().Name
		mk, ok := m[name]
		if !ok {
			t.Fatalf("no built-in plugin %s", name)
		}
		if ii, _ := mk().Info(); ii == nil || ii.Format != imp.Describe().FormatName() {
			t.Errorf("%s: importer info %+v", name, ii)
		}
	}
	if _, ei := m[onnxexp.Name]().Info(); ei == nil || len(ei.Targets) == 0 {
		t.Errorf("%s: exporter info %+v", onnxexp.Name, ei)
	}
}
