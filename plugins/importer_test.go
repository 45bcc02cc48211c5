//go:build unix

package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/plugins/sdk/importersdk"
)

// serveBuiltin serves the built-in importer name through importersdk.From
// (the test binary started by a host, see TestMain).
func serveBuiltin(name string) int {
	for _, imp := range builtin.Importers() {
		if imp.Describe().Name == name {
			if err := sdk.Run(sdk.Plugin{Importer: importersdk.From(imp, "test")}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "no built-in importer %q\n", name)
	return 1
}

// privateTemp points the temporary folder of the process at a fresh folder
// for the test, and returns it.
func privateTemp(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

// assertNoImportTemp fails if a HostImporter left a temporary folder in
// dir. (go-plugin's own socket folders, plugin*, are not ours.)
func assertNoImportTemp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "plugin") {
			t.Errorf("%s: left behind in the temporary folder", e.Name())
		}
	}
}

// The example third-party plugin as an ImporterPlugin: detected from its
// description (or by asking it), importing through a temporary file that
// is gone afterwards, and failing with an error that names the input and
// the plugin, not the temporary file (plugins/importhost adapts it to
// importers.Importer).
func TestImporterPluginCSVGraph(t *testing.T) {
	dir := t.TempDir()
	if err := os.Link(csvgraphBin, filepath.Join(dir, "onnxconv-plugin-csvgraph")); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, testOptions(t, dir))
	imps := h.ImporterPlugins()
	if len(imps) != 1 {
		t.Fatalf("ImporterPlugins() = %d importers, want 1", len(imps))
	}
	imp := imps[0]
	d := imp.Describe()
	if d.Name != "csvgraph" || d.FormatName() != "csvgraph" || strings.Join(d.Extensions, ",") != ".csvg" ||
		len(d.Magic) != 1 || string(d.Magic[0].Bytes) != "#csvgraph" || d.Summary == "" {
		t.Errorf("Describe() = %+v", d)
	}
	work := t.TempDir()
	example, err := os.ReadFile("../examples/csvgraph/example.csvg")
	if err != nil {
		t.Fatal(err)
	}
	in := writeFile(t, filepath.Join(work, "model.txt"), string(example)) // by magic, not extension
	if c := imp.Detect(in, example); c != 1 {
		t.Errorf("Detect(magic) = %v, want 1", c)
	}
	// The extension alone: the plugin is asked (its SDK says 0.5).
	noMagic := writeFile(t, filepath.Join(work, "plain.csvg"), "input,X,float,1\n")
	if c := imp.Detect(noMagic, []byte("input,X,float,1\n")); c != 0.5 {
		t.Errorf("Detect(extension) = %v, want 0.5", c)
	}
	tfl := filepath.Join("..", "fixtures", "tflite", "cnn.tflite")
	if c := imp.Detect(tfl, readHeadT(t, tfl)); c != 0 {
		t.Errorf("Detect(tflite) = %v, want 0", c)
	}

	tmp := privateTemp(t)
	m, warnings, err := imp.ImportModel(context.Background(), in, map[string]string{"name": "demo"})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	var ops []string
	for _, n := range m.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	if strings.Join(ops, ",") != "Relu,Add,Sigmoid" || m.Graph.Name != "demo" || m.Graph.Inputs[0].Name != "X" ||
		m.ProducerName != "onnxconv-plugin-csvgraph" || len(warnings) != 0 {
		t.Errorf("imported ops %v graph %q inputs %v producer %q warnings %q", ops, m.Graph.Name, m.Graph.Inputs, m.ProducerName, warnings)
	}
	// The model stays usable after its temporary file is gone.
	assertNoImportTemp(t, tmp)
	if _, err := m.ToProtoInline(); err != nil {
		t.Errorf("model after its file was removed: %v", err)
	}
	m.Close()

	// Warnings come through.
	empty := writeFile(t, filepath.Join(work, "empty.csvg"), "#csvgraph\ninput,X,float,1\noutput,X,float,1\n")
	m, warnings, err = imp.ImportModel(context.Background(), empty, nil)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "no op rows") {
		t.Fatalf("Import(empty) = %v, %v", warnings, err)
	}
	m.Close()

	// A bad input: the plugin's message, the input file and the plugin
	// named, no temporary path, kind kept.
	bad := writeFile(t, filepath.Join(work, "bad.csvg"), "#csvgraph\nnonsense,row\n")
	_, _, err = imp.ImportModel(context.Background(), bad, nil)
	var pe *PluginError
	if !errors.As(err, &pe) || !errors.Is(err, ErrFailed) || pe.Plugin != "csvgraph" {
		t.Fatalf("Import(bad) = %v; want a *PluginError of kind ErrFailed", err)
	}
	for _, s := range []string{bad, `plugin "csvgraph"`, "line 2"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Import(bad) error %q does not name %q", err, s)
		}
	}
	if strings.Contains(err.Error(), tmp) || strings.Contains(err.Error(), "onnxconv-import-") {
		t.Errorf("Import(bad) error names a temporary path: %v", err)
	}
	assertNoImportTemp(t, tmp)
	assertDirEntries(t, work, "bad.csvg", "empty.csvg", "model.txt", "plain.csvg")
	assertNoChildren(t)
}

func readHeadT(t *testing.T, path string) []byte {
	t.Helper()
	b, err := readHead(path, importers.HeadSize)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Plugin failures through an ImporterPlugin keep their kind, and temporary
// paths never reach the message, even when the plugin puts them there.
func TestImporterPluginErrors(t *testing.T) {
	opts := testOptions(t, pluginDir(t, "leakpath", "badoutput", "hang", "failing"))
	opts.CallTimeout = 5 * time.Second
	h := newHost(t, opts)
	work := t.TempDir()
	for _, c := range []struct {
		mode string
		kind error
		want string
	}{
		{"leakpath", ErrFailed, "cannot write (the plugin's output): disk full"},
		{"badoutput", ErrBadOutput, "not an ONNX model"},
		{"hang", ErrTimeout, "did not finish within 5s"},
		{"failing", ErrFailed, `line 3: unknown op "Frobnicate"`},
	} {
		t.Run(c.mode, func(t *testing.T) {
			tmp := privateTemp(t)
			imp, err := h.ImporterPlugin(c.mode)
			if err != nil {
				t.Fatal(err)
			}
			in := writeFile(t, filepath.Join(work, "in."+c.mode), "Relu\n")
			_, _, err = imp.ImportModel(context.Background(), in, nil)
			var pe *PluginError
			if !errors.As(err, &pe) || !errors.Is(err, c.kind) || pe.Plugin != c.mode || pe.Input != in {
				t.Fatalf("Import = %v; want a *PluginError of kind %v for %s", err, c.kind, in)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, in) {
				t.Errorf("error %q lacks %q or the input", msg, c.want)
			}
			if strings.Contains(msg, tmp) || strings.Contains(msg, "onnxconv-import-") || strings.Contains(pe.Stderr, tmp) {
				t.Errorf("error names a temporary path: %q", msg)
			}
			assertNoImportTemp(t, tmp)
		})
	}
	if _, err := h.ImporterPlugin("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ImporterPlugin(nope) = %v", err)
	}
	assertNoChildren(t)
}

// A built-in importers.Importer served out of process through
// importersdk.From, started as `EXE __plugin serve NAME` like cmd/onnxconv
// does (EXE is this test binary), imports a TFLite fixture into the same
// model as the in-process importer.
func TestBuiltinServedFromImporter(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t, "")
	opts.NoThirdParty = true
	opts.Executable = exe
	opts.ServeArgs = []string{"__plugin", "serve"}
	for _, imp := range builtin.Importers() {
		name := imp.Describe().Name
		ii, _ := sdk.Plugin{Importer: importersdk.From(imp, "test")}.Info()
		opts.Builtins = append(opts.Builtins, Builtin{Name: name, Importer: ii})
	}
	h := newHost(t, opts)
	ctx := context.Background()
	path := filepath.Join("..", "fixtures", "tflite", "cnn.tflite")
	if name, format, err := h.Detect(ctx, path); err != nil || name != "tflite" || format != "tflite" {
		t.Fatalf("Detect = %q %q %v", name, format, err)
	}

	want, err := tflite.New().Import(ctx, path, importers.Options{"opset": "17"})
	if err != nil {
		t.Fatal(err)
	}
	defer want.Model.Close()
	wantProto, err := want.Model.ToProtoInline()
	if err != nil {
		t.Fatal(err)
	}

	// Through Host.Import, as cmd/onnxconv convert does.
	out := filepath.Join(t.TempDir(), "cnn.onnx")
	if _, err := h.Import(ctx, "tflite", path, out, map[string]string{"opset": "17"}); err != nil {
		t.Fatalf("Import: %v", err)
	}
	got := readModel(t, out)
	if got.GetOpsetImport()[0].GetVersion() != 17 || len(got.GetGraph().GetNode()) != len(wantProto.GetGraph().GetNode()) ||
		len(got.GetGraph().GetInitializer()) != len(wantProto.GetGraph().GetInitializer()) ||
		got.GetProducerName() != "onnxconv" || got.GetProducerVersion() != wantProto.GetProducerVersion() {
		t.Errorf("served import: opset %d, %d nodes, %d initializers, producer %q %q; in process: %d nodes, %d initializers, producer %q",
			got.GetOpsetImport()[0].GetVersion(), len(got.GetGraph().GetNode()), len(got.GetGraph().GetInitializer()),
			got.GetProducerName(), got.GetProducerVersion(), len(wantProto.GetGraph().GetNode()),
			len(wantProto.GetGraph().GetInitializer()), wantProto.GetProducerVersion())
	}
	for i, n := range got.GetGraph().GetNode() {
		if w := wantProto.GetGraph().GetNode()[i]; n.GetOpType() != w.GetOpType() || n.GetName() != w.GetName() {
			t.Errorf("node %d: %s %q, in process %s %q", i, n.GetOpType(), n.GetName(), w.GetOpType(), w.GetName())
			break
		}
	}

	// Through the ImporterPlugin, as plugins/importhost's adapter does.
	imp, err := h.ImporterPlugin("tflite")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := imp.ImportModel(ctx, path, map[string]string{"opset": "17"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.Graph.Nodes) != len(want.Model.Graph.Nodes) || m.Opset("") != 17 {
		t.Errorf("ImporterPlugin: %d nodes opset %d", len(m.Graph.Nodes), m.Opset(""))
	}
	if err := canonical.Save(filepath.Join(t.TempDir(), "again.onnx"), m, canonical.SaveOptions{}); err != nil {
		t.Errorf("saving the served model: %v", err)
	}

	// The served importer's option errors reach the host as the plugin's
	// error (the protocol carries messages, not types; importhost checks
	// them before a process starts).
	_, err = h.Import(ctx, "tflite", path, filepath.Join(t.TempDir(), "x.onnx"), map[string]string{"layout": "nchw"})
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), `unknown option "layout"`) {
		t.Errorf("unknown option: %v", err)
	}
	assertNoChildren(t)
}
