//go:build unix

package plugins_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/importers/xgboost"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/importhost"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// The tests of plugins/importhost run here, in the plugins test binary,
// whose TestMain serves the built-in importers (`EXE __plugin serve NAME`)
// and builds the example plugin.

// builtinRegistry is the registry of a host that serves the built-in
// importers from this test binary (every one but ONNX's through its
// plugin), with the host's call timeout, or the test default for 0.
func builtinRegistry(t *testing.T, callTimeout time.Duration) *importers.Registry {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := plugins.BuiltinOptions(plugins.TestBuiltins(), []string{"__plugin", "serve"})
	opts.Executable = exe
	opts.NoThirdParty = true
	o := plugins.TestOptions(t, "")
	opts.UserDir, opts.CallTimeout, opts.DescribeTimeout, opts.StartTimeout = o.UserDir, o.CallTimeout, o.DescribeTimeout, o.StartTimeout
	if callTimeout > 0 {
		opts.CallTimeout = callTimeout
	}
	r, err := importhost.Registry(plugins.NewTestHost(t, opts), builtin.Importers(), onnximp.Name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The example third-party plugin is an importers.Importer in a registry
// beside the built-ins: detected by its magic, importing with its options,
// and options that do not fit its specs refused as an
// *importers.OptionError before a process starts.
func TestHostImporterCSVGraph(t *testing.T) {
	dir := t.TempDir()
	if err := os.Link(plugins.CSVGraphBin(), filepath.Join(dir, "onnxconv-plugin-csvgraph")); err != nil {
		t.Fatal(err)
	}
	h := plugins.NewTestHost(t, plugins.TestOptions(t, dir))
	imps := importhost.All(h)
	if len(imps) != 1 {
		t.Fatalf("All = %d importers, want 1", len(imps))
	}
	reg, err := importers.NewRegistry(append(builtin.Importers(), imps...)...)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join("..", "examples", "csvgraph", "example.csvg")
	tfl := filepath.Join("..", "fixtures", "tflite", "cnn.tflite")
	if got, _, err := reg.Detect(in); err != nil || got.Describe().Name != "csvgraph" {
		t.Errorf("registry Detect = %v, %v", got, err)
	}
	if got, _, err := reg.Detect(tfl); err != nil || got.Describe().Name != "tflite" {
		t.Errorf("registry Detect(tflite) = %v, %v", got, err)
	}
	res, err := imps[0].Import(context.Background(), in, importers.Options{"name": "demo"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	if res.Model.Graph.Name != "demo" || len(res.Model.Graph.Nodes) != 3 {
		t.Errorf("imported graph %q with %d nodes, want demo with 3", res.Model.Graph.Name, len(res.Model.Graph.Nodes))
	}
	if _, err := importhost.New(h, "nope"); !errors.Is(err, plugins.ErrNotFound) {
		t.Errorf("New(nope) = %v", err)
	}
}

// Through the adapter the host checks a built-in's options against the
// specs the protocol carried, before a process starts: typed errors
// (which the protocol could not carry) naming the option, and the known
// ones or the kind.
func TestHostImporterOptionErrors(t *testing.T) {
	imp, err := builtinRegistry(t, 0).Lookup("tflite")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "fixtures", "tflite", "cnn.tflite")
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"layout": "nchw"}, `tflite importer: unknown option "layout" (known: opset, keep_nhwc, subgraph, int8_kernels, custom)`},
		{map[string]string{"opset": "99"}, `tflite importer: option opset="99": 99 is out of range: want an int from 13 to 23`},
		{map[string]string{"keep_nhwc": "maybe"}, `tflite importer: option keep_nhwc="maybe": want a bool (true or false)`},
		{map[string]string{"int8_kernels": "gpu"}, `tflite importer: option int8_kernels="gpu": want one of xnnpack, reference`},
	} {
		_, err = imp.Import(context.Background(), path, c.opts)
		var oe *importers.OptionError
		if !errors.As(err, &oe) || err.Error() != c.want {
			t.Errorf("HostImporter with %v: %v, want an *importers.OptionError %q", c.opts, err, c.want)
		}
	}
}

// Registry routes the built-ins through their plugins, in their order,
// with their own descriptions and predictors, and keeps the in-process
// ones last.
func TestRegistry(t *testing.T) {
	r := builtinRegistry(t, 0)
	locals := builtin.Importers()
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
		_, viaPlugin := imp.(interface{ Plugin() plugins.PluginInfo })
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

// A built-in predictor computes its source in a plugin process: the
// registry's importer is an importers.Predictor whose Source runs in the
// plugin (OpenSource, then Predict for each sample of one process), and
// its outputs are the in-process predictor's, bit for bit.
func TestRemoteSource(t *testing.T) {
	r := builtinRegistry(t, 0)
	imp, err := r.Lookup("xgboost")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := imp.(interface{ Plugin() plugins.PluginInfo }); !ok {
		t.Fatal("xgboost is not served by its plugin")
	}
	path := filepath.Join("..", "fixtures", "xgboost", "binary_logistic.json")
	in := xgbInput(t)
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
	var pe *plugins.PluginError
	if _, err := imp.(importers.Predictor).Source(context.Background(), bad, nil); !errors.As(err, &pe) || pe.Op != "predict" {
		t.Errorf("bad source: %v, want a *plugins.PluginError of op predict", err)
	}
}

// ImportSource imports and opens the source in one plugin process: the
// model is Import's, the source computes what the in-process predictor
// computes, and while it is open the host has one child process.
func TestImportSource(t *testing.T) {
	r := builtinRegistry(t, 0)
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

	// A file the plugin cannot import is the import's *plugins.PluginError.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"learner": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var pe *plugins.PluginError
	if _, src, err := si.ImportSource(context.Background(), bad, nil); !errors.As(err, &pe) || pe.Op != "import" || src != nil {
		t.Errorf("bad file: %v (source %v), want a *plugins.PluginError of op import and no source", err, src)
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

// The process kept by ImportSource serves its source longer than the call
// timeout: each request has the whole timeout, the session as a whole is
// not bounded by it.
func TestSessionOutlivesCallTimeout(t *testing.T) {
	r := builtinRegistry(t, 3*time.Second)
	imp, err := r.Lookup("xgboost")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "fixtures", "xgboost", "binary_logistic.json")
	res, src, err := imp.(importers.SourceImporter).ImportSource(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	if src == nil {
		t.Fatal("no source")
	}
	defer src.Close()
	in := xgbInput(t)
	time.Sleep(3*time.Second + 500*time.Millisecond)
	if _, err := src.Run(context.Background(), []*canonical.Tensor{in}); err != nil {
		t.Errorf("a run %v after the import, past the call timeout: %v", 3*time.Second+500*time.Millisecond, err)
	}
}

// xgbInput is the input of fixtures/xgboost/binary_logistic.json that
// xgboost's own outputs were stored for.
func xgbInput(t *testing.T) *canonical.Tensor {
	t.Helper()
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
	return treetest.Input(canonical.Float, rows)
}
