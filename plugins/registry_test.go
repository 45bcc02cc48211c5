//go:build unix

package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/importers/xgboost"
	"github.com/onnxconv/onnxconv/plugins/protocol"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

func testBuiltins() map[string]func() sdk.Plugin {
	m := map[string]func() sdk.Plugin{}
	for _, imp := range builtin.Importers() {
		m[imp.Describe().Name] = func() sdk.Plugin { return sdk.Plugin{Importer: sdk.ImporterFrom(imp, "test")} }
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

// Registry routes the built-ins through their plugins, in their order,
// with their own descriptions and predictors, and keeps the in-process
// ones last.
func TestRegistry(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := BuiltinOptions(testBuiltins(), []string{"__plugin", "serve"})
	opts.Executable = exe
	opts.NoThirdParty = true
	o := testOptions(t, "")
	opts.UserDir, opts.CallTimeout, opts.DescribeTimeout, opts.StartTimeout = o.UserDir, o.CallTimeout, o.DescribeTimeout, o.StartTimeout
	h := newHost(t, opts)
	locals := builtin.Importers()
	r, err := Registry(h, locals, onnximp.Name)
	if err != nil {
		t.Fatal(err)
	}
	got := r.All()
	if len(got) != len(locals) {
		t.Fatalf("%d importers, want %d", len(got), len(locals))
	}
	var want []string
	for _, imp := range locals {
		if n := imp.Describe().Name; n != onnximp.Name {
			want = append(want, n)
		}
	}
	want = append(want, onnximp.Name)
	for i, imp := range got {
		name := imp.Describe().Name
		if name != want[i] {
			t.Fatalf("importer %d is %s, want %s", i, name, want[i])
		}
		_, viaPlugin := imp.(interface{ Plugin() PluginInfo })
		if viaPlugin == (name == onnximp.Name) {
			t.Errorf("%s: through a plugin %v", name, viaPlugin)
		}
		local := locals[slices.IndexFunc(locals, func(l importers.Importer) bool { return l.Describe().Name == name })]
		_, lp := local.(importers.Predictor)
		_, gp := imp.(importers.Predictor)
		if lp != gp {
			t.Errorf("%s: predictor %v, local %v", name, gp, lp)
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

// A built-in predictor computes its source in a plugin process: the
// registry's importer is an importers.Predictor whose Source runs in the
// plugin (OpenSource, then Predict for each sample of one process), and
// its outputs are the in-process predictor's, bit for bit.
func TestRemoteSource(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := BuiltinOptions(testBuiltins(), []string{"__plugin", "serve"})
	opts.Executable = exe
	opts.NoThirdParty = true
	o := testOptions(t, "")
	opts.UserDir, opts.CallTimeout, opts.DescribeTimeout, opts.StartTimeout = o.UserDir, o.CallTimeout, o.DescribeTimeout, o.StartTimeout
	h := newHost(t, opts)
	r, err := Registry(h, builtin.Importers(), onnximp.Name)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := r.Lookup("xgboost")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := imp.(interface{ Plugin() PluginInfo }); !ok {
		t.Fatal("xgboost is not served by its plugin")
	}
	path := filepath.Join("..", "fixtures", "xgboost", "binary_logistic.json")
	x, err := tensorio.ReadNpyFile(filepath.Join("..", "fixtures", "xgboost", "binary_logistic.input.npy"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Float64s()
	if err != nil || len(x.Dims) != 2 {
		t.Fatalf("input: %v (dims %v)", err, x.Dims)
	}
	rows := make([][]float64, x.Dims[0])
	for i := range rows {
		rows[i] = v[i*int(x.Dims[1]) : (i+1)*int(x.Dims[1])]
	}
	in := treetest.Input(canonical.Float, rows)
	remote := treetest.RunSource(t, imp, path, nil, in)
	local := treetest.RunSource(t, xgboost.New(), path, nil, in)
	if e := treetest.SameOutputs(t, "plugin vs in-process predictor", remote, local, 0); e != 0 {
		t.Errorf("the plugin's predictor differs from the in-process one by %g", e)
	}

	// One process serves every sample; a closed source runs no more.
	src, err := imp.(importers.Predictor).Source(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := src.Run(context.Background(), []*canonical.Tensor{in}); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Run(context.Background(), []*canonical.Tensor{in}); err == nil {
		t.Error("a closed source ran")
	}
	// A file the plugin cannot parse is the plugin's error, not a parse
	// in the host.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"learner": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var pe *PluginError
	if _, err := imp.(importers.Predictor).Source(context.Background(), bad, nil); !errors.As(err, &pe) || pe.Op != "predict" {
		t.Errorf("bad source: %v, want a *PluginError of op predict", err)
	}
}

// ImportSource imports and opens the source in one plugin process: the
// model is Import's, the source computes what the in-process predictor
// computes, and while it is open the host has one child process.
func TestImportSource(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := BuiltinOptions(testBuiltins(), []string{"__plugin", "serve"})
	opts.Executable = exe
	opts.NoThirdParty = true
	o := testOptions(t, "")
	opts.UserDir, opts.CallTimeout, opts.DescribeTimeout, opts.StartTimeout = o.UserDir, o.CallTimeout, o.DescribeTimeout, o.StartTimeout
	h := newHost(t, opts)
	r, err := Registry(h, builtin.Importers(), onnximp.Name)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := r.Lookup("xgboost")
	if err != nil {
		t.Fatal(err)
	}
	si, ok := imp.(importers.SourceImporter)
	if !ok {
		t.Fatal("the xgboost plugin importer is no importers.SourceImporter")
	}
	path := filepath.Join("..", "fixtures", "xgboost", "binary_logistic.json")
	in := xgbInput(t)
	res, src, err := si.ImportSource(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	if src == nil {
		t.Fatal("no source")
	}
	want, err := imp.Import(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Model.Close()
	if a, b := len(res.Model.Graph.Nodes), len(want.Model.Graph.Nodes); a != b || a == 0 {
		t.Errorf("ImportSource's model has %d node(s), Import's %d", a, b)
	}
	n, err := childProcesses()
	t.Logf("%d child process(es) while the source is open (%v)", n, err)
	if err == nil && n != 1 {
		t.Errorf("%d child process(es) while the source is open, want 1 (the importer's, which serves it)", n)
	}
	// RunSource runs the open source and closes it.
	remote := treetest.RunSource(t, openSource{imp, src}, path, nil, in)
	local := treetest.RunSource(t, xgboost.New(), path, nil, in)
	if e := treetest.SameOutputs(t, "ImportSource's source vs in-process predictor", remote, local, 0); e != 0 {
		t.Errorf("the plugin's predictor differs from the in-process one by %g", e)
	}
	if n, err := childProcesses(); err == nil && n != 0 {
		t.Errorf("%d child process(es) after the source closed, want 0", n)
	}

	// A file the plugin cannot import is the import's *PluginError.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"learner": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var pe *PluginError
	if _, src, err := si.ImportSource(context.Background(), bad, nil); !errors.As(err, &pe) || pe.Op != "import" || src != nil {
		t.Errorf("bad file: %v (source %v), want a *PluginError of op import and no source", err, src)
	}
}

// openSource is an importer whose Source is src, already open.
type openSource struct {
	importers.Importer
	src importers.Source
}

func (o openSource) Source(context.Context, string, importers.Options) (importers.Source, error) {
	return o.src, nil
}

// childProcesses counts the live child processes of this process (from
// /proc; an error where there is none).
func childProcesses() (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self := strconv.Itoa(os.Getpid())
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split
		// after its closing parenthesis.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[1] == self && f[0] != "Z" {
			n++
		}
	}
	return n, nil
}
