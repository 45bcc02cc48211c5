//go:build unix

package plugins

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The example third-party plugin is found through $ONNXCONV_PLUGIN_PATH,
// detected by its magic bytes, and imports a file.
func TestExampleCSVGraphPlugin(t *testing.T) {
	dir := t.TempDir()
	if err := os.Link(csvgraphBin, filepath.Join(dir, "onnxconv-plugin-csvgraph")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPluginPath, t.TempDir()+string(os.PathListSeparator)+dir)
	opts := testOptions(t, "")
	h := newHost(t, opts)

	p, ok := h.Plugin("csvgraph")
	if !ok {
		t.Fatalf("csvgraph not discovered; found %+v", h.Plugins())
	}
	if p.Kind() != "importer" || p.Importer.Version != "0.1" || strings.Join(p.Importer.Extensions, ",") != ".csvg" ||
		p.Path != filepath.Join(dir, "onnxconv-plugin-csvgraph") || p.Builtin {
		t.Errorf("plugin info = %+v, importer %+v", p, p.Importer)
	}

	work := t.TempDir()
	in := filepath.Join(work, "model.txt") // the extension does not match: magic bytes must
	data, err := os.ReadFile("../examples/csvgraph/example.csvg")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, in, string(data))
	name, format, err := h.Detect(context.Background(), in)
	if err != nil || name != "csvgraph" || format != "csvgraph" {
		t.Fatalf("Detect = %q, %q, %v; want csvgraph", name, format, err)
	}

	out := filepath.Join(work, "model.onnx")
	warnings, err := h.Import(context.Background(), "csvgraph", in, out, map[string]string{"name": "demo"})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	m := readModel(t, out)
	if got := strings.Join(opTypes(m), ","); got != "Relu,Add,Sigmoid" {
		t.Errorf("op types = %s, want Relu,Add,Sigmoid", got)
	}
	g := m.GetGraph()
	if g.GetName() != "demo" || len(g.GetInput()) != 1 || g.GetInput()[0].GetName() != "X" ||
		len(g.GetOutput()) != 1 || g.GetOutput()[0].GetName() != "W" {
		t.Errorf("graph name %q inputs %v outputs %v", g.GetName(), g.GetInput(), g.GetOutput())
	}
	add := g.GetNode()[1]
	if strings.Join(add.GetInput(), ",") != "Y,X" || add.GetOutput()[0] != "Z" {
		t.Errorf("Add node = %v", add)
	}
	dims := g.GetInput()[0].GetType().GetTensorType().GetShape().GetDim()
	if len(dims) != 2 || dims[0].GetDimParam() != "N" || dims[1].GetDimValue() != 3 {
		t.Errorf("input dims = %v", dims)
	}
	assertDirEntries(t, work, "model.onnx", "model.txt")
	assertNoChildren(t)

	// A broken input is reported by the plugin, naming the file.
	bad := writeFile(t, filepath.Join(work, "bad.csvg"), "#csvgraph\nnonsense,row\n")
	_, err = h.Import(context.Background(), "csvgraph", bad, filepath.Join(work, "bad.onnx"), nil)
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), bad) {
		t.Errorf("Import(bad) error = %v; want the line and the file", err)
	}
	assertDirEntries(t, work, "bad.csvg", "model.onnx", "model.txt")
	assertNoChildren(t)
}
