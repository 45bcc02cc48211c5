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
)

// serveBuiltin serves the built-in importer name through sdk.ImporterFrom
// (the test binary started by a host, see TestMain).
func serveBuiltin(name string) int {
	for _, imp := range builtin.Importers() {
		if imp.Describe().Name == name {
			if err := sdk.Run(sdk.Plugin{Importer: sdk.ImporterFrom(imp, "test")}); err != nil {
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

// The example third-party plugin is an importers.Importer: detected from
// its description (or by asking it), importing through a temporary file
// that is gone afterwards, and failing with an error that names the input
// and the plugin, not the temporary file.
func TestHostImporterCSVGraph(t *testing.T) {
	dir := t.TempDir()
	if err := os.Link(csvgraphBin, filepath.Join(dir, "onnxconv-plugin-csvgraph")); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, testOptions(t, dir))
	imps := h.Importers()
	if len(imps) != 1 {
		t.Fatalf("Importers() = %d importers, want 1", len(imps))
	}
	var imp importers.Importer = imps[0]
	d := imp.Describe()
	if d.Name != "csvgraph" || d.FormatName() != "csvgraph" || strings.Join(d.Extensions, ",") != ".csvg" ||
		len(d.Magic) != 1 || string(d.Magic[0].Bytes) != "#csvgraph" || d.Summary == "" {
		t.Errorf("Describe() = %+v", d)
	}
	reg, err := importers.NewRegistry(append(builtin.Importers(), imps...)...)
	if err != nil {
		t.Fatal(err)
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
	if got, _, err := reg.Detect(in); err != nil || got.Describe().Name != "csvgraph" {
		t.Errorf("registry Detect = %v, %v", got, err)
	}
	if got, _, err := reg.Detect(tfl); err != nil || got.Describe().Name != "tflite" {
		t.Errorf("registry Detect(tflite) = %v, %v", got, err)
	}

	tmp := privateTemp(t)
	res, err := imp.Import(context.Background(), in, importers.Options{"name": "demo"})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	m := res.Model
	var ops []string
	for _, n := range m.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	if strings.Join(ops, ",") != "Relu,Add,Sigmoid" || m.Graph.Name != "demo" || m.Graph.Inputs[0].Name != "X" ||
		m.ProducerName != "onnxconv-plugin-csvgraph" || len(res.Warnings) != 0 {
		t.Errorf("imported ops %v graph %q inputs %v producer %q warnings %q", ops, m.Graph.Name, m.Graph.Inputs, m.ProducerName, res.Warnings)
	}
	// The model stays usable after its temporary file is gone.
	assertNoImportTemp(t, tmp)
	if _, err := m.ToProtoInline(); err != nil {
		t.Errorf("model after its file was removed: %v", err)
	}
	m.Close()

	// Warnings come through.
	empty := writeFile(t, filepath.Join(work, "empty.csvg"), "#csvgraph\ninput,X,float,1\noutput,X,float,1\n")
	res, err = imp.Import(context.Background(), empty, nil)
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "no op rows") {
		t.Fatalf("Import(empty) = %v, %v", res, err)
	}
	res.Model.Close()

	// A bad input: the plugin's message, the input file and the plugin
	// named, no temporary path, kind kept.
	bad := writeFile(t, filepath.Join(work, "bad.csvg"), "#csvgraph\nnonsense,row\n")
	_, err = imp.Import(context.Background(), bad, nil)
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

// Plugin failures through a HostImporter keep their kind, and temporary
// paths never reach the message, even when the plugin puts them there.
func TestHostImporterErrors(t *testing.T) {
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
			imp, err := h.Importer(c.mode)
			if err != nil {
				t.Fatal(err)
			}
			in := writeFile(t, filepath.Join(work, "in."+c.mode), "Relu\n")
			_, err = imp.Import(context.Background(), in, nil)
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
	if _, err := h.Importer("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Importer(nope) = %v", err)
	}
	assertNoChildren(t)
}

// A built-in importers.Importer served out of process through
// sdk.ImporterFrom, started as `EXE __plugin serve NAME` like cmd/onnxconv
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
		ii, _ := sdk.Plugin{Importer: sdk.ImporterFrom(imp, "test")}.Info()
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

	// Through the HostImporter adapter.
	imp, err := h.Importer("tflite")
	if err != nil {
		t.Fatal(err)
	}
	res, err := imp.Import(ctx, path, importers.Options{"opset": "17"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	if len(res.Model.Graph.Nodes) != len(want.Model.Graph.Nodes) || res.Model.Opset("") != 17 {
		t.Errorf("HostImporter: %d nodes opset %d", len(res.Model.Graph.Nodes), res.Model.Opset(""))
	}
	if err := canonical.Save(filepath.Join(t.TempDir(), "again.onnx"), res.Model, canonical.SaveOptions{}); err != nil {
		t.Errorf("saving the served model: %v", err)
	}

	// The served importer's option errors reach the host as the plugin's
	// error (the protocol carries messages, not types).
	_, err = h.Import(ctx, "tflite", path, filepath.Join(t.TempDir(), "x.onnx"), map[string]string{"layout": "nchw"})
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), `unknown option "layout"`) {
		t.Errorf("unknown option: %v", err)
	}
	// Through the HostImporter the host checks them against the specs the
	// protocol carried, before a process starts: typed errors (which the
	// protocol could not carry) naming the option, and the known ones or
	// the kind.
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"layout": "nchw"}, `tflite importer: unknown option "layout" (known: opset, keep_nhwc, subgraph, int8_kernels, custom)`},
		{map[string]string{"opset": "99"}, `tflite importer: option opset="99": 99 is out of range: want an int from 13 to 23`},
		{map[string]string{"keep_nhwc": "maybe"}, `tflite importer: option keep_nhwc="maybe": want a bool (true or false)`},
		{map[string]string{"int8_kernels": "gpu"}, `tflite importer: option int8_kernels="gpu": want one of xnnpack, reference`},
	} {
		_, err = imp.Import(ctx, path, c.opts)
		var oe *importers.OptionError
		if !errors.As(err, &oe) || err.Error() != c.want {
			t.Errorf("HostImporter with %v: %v, want an *importers.OptionError %q", c.opts, err, c.want)
		}
	}
	assertNoChildren(t)
}
