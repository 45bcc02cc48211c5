//go:build unix

package plugins

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/plugins/protocol"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/plugins/sdk/importersdk"
)

func testBuiltins() map[string]func() sdk.Plugin {
	m := map[string]func() sdk.Plugin{}
	for _, imp := range builtin.Importers() {
		m[imp.Describe().Name] = func() sdk.Plugin { return sdk.Plugin{Importer: importersdk.From(imp, "test")} }
	}
	return m
}

// BuiltinOptions describes every built-in without starting it, sorted by
// name, with the serve arguments given.
func TestBuiltinOptions(t *testing.T) {
	b := testBuiltins()
	opts := BuiltinOptions(b, []string{"__plugin", "serve"})
	if !slices.Equal(opts.ServeArgs, []string{"__plugin", "serve"}) || len(opts.Builtins) != len(b) {
		t.Fatalf("ServeArgs %v, %d builtins of %d", opts.ServeArgs, len(opts.Builtins), len(b))
	}
	names := BuiltinNames(b)
	if !slices.IsSorted(names) {
		t.Errorf("names not sorted: %v", names)
	}
	for i, bi := range opts.Builtins {
		if bi.Name != names[i] || bi.Importer == nil || bi.Importer.Format == "" {
			t.Errorf("builtin %d: %+v", i, bi)
		}
	}
}

func TestWriteTablesAndList(t *testing.T) {
	infos := []PluginInfo{
		{Name: "tflite", Builtin: true, Importer: &protocol.ImporterInfo{Description: importers.Description{Format: "tflite", Extensions: []string{".tflite"}, Magic: []protocol.Magic{{Offset: 4, Bytes: []byte("TFL3")}}, Summary: "TFLite"}, Version: "1.0"}},
		{Name: "onnx-export", Builtin: true, Exporter: &protocol.ExporterInfo{Version: "1.0", Targets: []string{"a", "b", "c", "d", "e"}}},
		{Name: "bad", Path: "/p/onnxconv-plugin-bad", Err: errors.New("does not start")},
	}
	var b strings.Builder
	if err := WriteTable(&b, infos); err != nil {
		t.Fatal(err)
	}
	want := `NAME         KIND      VERSION  FORMATS                                    PATH
tflite       importer  1.0      tflite (.tflite)                           (built-in)
onnx-export  exporter  1.0      →a, →b … →e (5 targets: onnxconv targets)  (built-in)
bad          broken    -        -                                          /p/onnxconv-plugin-bad

bad: does not start
`
	if b.String() != want {
		t.Errorf("plugin table\n%s\nwant\n%s", b.String(), want)
	}
	l := List(infos)
	if len(l) != 3 || l[0].Kind != "importer" || l[2].Error != "does not start" || l[1].Exporter == nil {
		t.Errorf("List = %+v", l)
	}
	f := Formats(infos)
	if len(f) != 1 || f[0].Format != "tflite" || !f[0].Magic || f[0].Plugin != "tflite" {
		t.Fatalf("Formats = %+v", f)
	}
	b.Reset()
	if err := WriteFormatTable(&b, append(f, Format{Format: "csv", Plugin: "csvgraph"})); err != nil {
		t.Fatal(err)
	}
	want = `FORMAT  PLUGIN    EXTENSIONS  MAGIC  DESCRIPTION
tflite  tflite    .tflite     yes    TFLite
csv     csvgraph  -           no     
`
	if b.String() != want {
		t.Errorf("format table\n%q\nwant\n%q", b.String(), want)
	}
}
