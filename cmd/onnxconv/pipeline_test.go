package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins/protocol"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// testBin holds the onnxconv binary the pipeline tests run (built once, on
// first use, into testBinDir).
var testBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain serves built-in plugins when the plugin host of an in-process
// test (run) starts this test binary as `__plugin serve NAME`, acts as
// TestHostileFixtures' launcher when hostileLauncherEnv is set, and removes
// the built onnxconv binary afterwards.
func TestMain(m *testing.M) {
	if report := os.Getenv(hostileLauncherEnv); report != "" {
		os.Exit(hostileLauncher(report, os.Args[1:]))
	}
	if len(os.Args) > 2 && os.Args[1] == pluginServeArgs[0] && os.Args[2] == pluginServeArgs[1] {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	if os.Getenv(protocol.EnvMagicCookie) != "" {
		// Started by a plugin host in some other way: running the tests
		// here would start plugins recursively.
		fmt.Fprintf(os.Stderr, "test binary started as a plugin with arguments %q; refusing to run tests\n", os.Args[1:])
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "onnxconv-pipeline-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testBin.dir = dir
	code := testpaths.Main(m, "cmd/onnxconv")
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// onnxconvBin builds cmd/onnxconv with CGO_ENABLED=0 once and returns its
// path.
func onnxconvBin(t *testing.T) string {
	t.Helper()
	testBin.once.Do(func() {
		testBin.path = filepath.Join(testBin.dir, "onnxconv")
		cmd := exec.Command("go", "build", "-o", testBin.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			testBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if testBin.err != nil {
		t.Fatal(testBin.err)
	}
	return testBin.path
}

// execCmd runs the built binary and returns its exit code and output.
func execCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(onnxconvBin(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("running onnxconv %v: %v", args, err)
	return 0, "", ""
}

func repoDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found: %v", err)
	}
	return dir
}

// copyFiles copies src files into a new folder under dir, named by the map
// values, and returns the folder.
func copyFiles(t *testing.T, dir, name string, files map[string]string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// values returns the elements of a FLOAT, DOUBLE, INT64 or INT32 tensor as
// float64.
func values(t *testing.T, x *canonical.Tensor) []float64 {
	t.Helper()
	b, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	switch x.DataType {
	case canonical.Float:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))))
		}
	case canonical.Double:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
		}
	case canonical.Int64:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, float64(int64(binary.LittleEndian.Uint64(b[i:]))))
		}
	case canonical.Int32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(int32(binary.LittleEndian.Uint32(b[i:]))))
		}
	default:
		t.Fatalf("tensor %q: element type %s not handled", x.Name, canonical.ElemTypeName(x.DataType))
	}
	return out
}

func readTensor(t *testing.T, path string) *canonical.Tensor {
	t.Helper()
	x, err := tensorio.ReadTensorFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// runModel loads the model at path and runs it on the built-in executor;
// it returns the outputs by name and the model's ai.onnx opset and IR
// version.
func runModel(t *testing.T, path string, inputs ...*canonical.Tensor) (map[string]*canonical.Tensor, int64, int64) {
	t.Helper()
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	outs, err := ex.Run(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]*canonical.Tensor{}
	for i, v := range m.Graph.Outputs {
		res[v.Name] = outs[i]
	}
	return res, m.Opset(""), m.IRVersion
}

// assertClose checks got against want element-wise: |got-want| <= atol +
// rtol*|want|. It returns the largest absolute difference.
func assertClose(t *testing.T, what string, got *canonical.Tensor, want []float64, rtol, atol float64) float64 {
	t.Helper()
	g := values(t, got)
	if len(g) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(want))
	}
	worst := 0.0
	for i := range g {
		d := math.Abs(g[i] - want[i])
		if math.IsNaN(g[i]) || d > atol+rtol*math.Abs(want[i]) {
			t.Errorf("%s[%d] = %.9g, want %.9g", what, i, g[i], want[i])
		}
		worst = max(worst, d)
	}
	return worst
}

// xgboostDirs makes the --inputs and --reference folders of an xgboost
// fixture.
func xgboostDirs(t *testing.T, dir, name string) (in, ref string) {
	t.Helper()
	fx := filepath.Join(repoDir(t), "fixtures", "xgboost")
	in = copyFiles(t, dir, "inputs", map[string]string{filepath.Join(fx, name+".input.npy"): "input.npy"})
	ref = copyFiles(t, dir, "reference", map[string]string{
		filepath.Join(fx, name+".predict.npy"):       "predict.npy",
		filepath.Join(fx, name+".probabilities.npy"): "probabilities.npy",
		filepath.Join(fx, name+".label.npy"):         "label.npy",
	})
	return in, ref
}

// checkXGBoost runs the converted model and compares it with xgboost's own
// predictions.
func checkXGBoost(t *testing.T, out, name string) int64 {
	t.Helper()
	fx := filepath.Join(repoDir(t), "fixtures", "xgboost")
	x := readTensor(t, filepath.Join(fx, name+".input.npy"))
	x.Name = "input"
	outs, opset, _ := runModel(t, out, x)
	want := values(t, readTensor(t, filepath.Join(fx, name+".predict.npy")))
	if len(want) != 24 {
		t.Fatalf("fixture has %d predictions, want 24", len(want))
	}
	d := assertClose(t, "predict", outs["predict"], want, 1e-5, 0)
	t.Logf("predict: max abs difference to xgboost %.3g", d)
	assertClose(t, "probabilities", outs["probabilities"], values(t, readTensor(t, filepath.Join(fx, name+".probabilities.npy"))), 1e-5, 0)
	assertClose(t, "label", outs["label"], values(t, readTensor(t, filepath.Join(fx, name+".label.npy"))), 0, 0)
	return opset
}

func TestPipelineXGBoost(t *testing.T) {
	dir := t.TempDir()
	in, ref := xgboostDirs(t, dir, "binary_logistic")
	out := filepath.Join(dir, "out.onnx")
	report := filepath.Join(dir, "report.json")
	src := filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json")
	code, stdout, stderr := execCmd(t, "convert", src, out, "--verify", "--inputs", in, "--reference", ref, "--report", report)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, s := range []string{"EQUIVALENT (3 output(s), 1 sample(s))", "predict ", "probabilities ", "24 of 24 equal", "max_abs"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("summary lacks %q:\n%s", s, stdout)
		}
	}
	if !strings.Contains(stderr, "format xgboost (importer xgboost)") {
		t.Errorf("stderr does not name the detected format:\n%s", stderr)
	}
	if b, err := os.ReadFile(report); err != nil || !bytes.Contains(b, []byte(`"equivalent": true`)) {
		t.Errorf("report %s: %v\n%s", report, err, b)
	}
	if opset := checkXGBoost(t, out, "binary_logistic"); opset != 21 {
		t.Errorf("opset %d, want the importer's 21", opset)
	}
	// -q: no progress lines.
	code, _, stderr = execCmd(t, "convert", src, filepath.Join(dir, "q.onnx"), "-q", "--inputs", in, "--reference", ref)
	if code != 0 || stderr != "" {
		t.Errorf("-q: exit %d, stderr %q", code, stderr)
	}
}

// A UBJSON model converted to opset 13: verified against the imported
// model and the stored predictions.
func TestPipelineXGBoostOpset13(t *testing.T) {
	dir := t.TempDir()
	in, ref := xgboostDirs(t, dir, "binary_logistic")
	out := filepath.Join(dir, "out13.onnx")
	src := filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.ubj")
	code, stdout, stderr := execCmd(t, "convert", src, out, "--opset", "13", "--verify", "--inputs", in, "--reference", ref)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Source and reference; and the result in ONNX Runtime when installed.
	if n := strings.Count(stdout, ": EQUIVALENT"); n < 2 || strings.Contains(stdout, "NOT EQUIVALENT") {
		t.Errorf("want 2 comparisons (source, reference), got %d:\n%s", n, stdout)
	}
	if !strings.Contains(stdout, "direct Go predictor") || !strings.Contains(stderr, "opset 21 -> 13") {
		t.Errorf("the opset conversion was not verified against xgboost's trees:\n%s\n%s", stdout, stderr)
	}
	if opset := checkXGBoost(t, out, "binary_logistic"); opset != 13 {
		t.Errorf("opset %d, want 13", opset)
	}
}

// A reference that disagrees: exit 1, nothing written.
func TestPipelineNotEquivalentWritesNothing(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join(repoDir(t), "fixtures", "xgboost")
	in, _ := xgboostDirs(t, dir, "binary_logistic")
	// binary_hinge's predictions (0/1) for other rows: not what this
	// model computes.
	ref := copyFiles(t, dir, "wrong", map[string]string{filepath.Join(fx, "binary_hinge.predict.npy"): "predict.npy"})
	out := filepath.Join(dir, "out.onnx")
	code, stdout, stderr := execCmd(t, "convert", filepath.Join(fx, "binary_logistic.json"), out, "--inputs", in, "--reference", ref)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "NOT EQUIVALENT (1 output(s)") || !strings.Contains(stdout, "FAIL") ||
		!strings.Contains(stderr, "nothing was written") {
		t.Errorf("summary or message missing:\n%s\n%s", stdout, stderr)
	}
	assertOnly(t, dir, "inputs", "reference", "wrong")
}

// assertOnly checks that dir holds exactly the names given (no output, no
// temporary leftovers).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

func TestPipelineTFLite(t *testing.T) {
	fx := filepath.Join(repoDir(t), "fixtures", "tflite")
	for _, tc := range []struct {
		name    string
		outputs int
		// tolerance of the result against gen.py's reference outputs
		rtol, atol float64
	}{
		{"cnn", 1, 1e-5, 1e-6},
		// int8: gen.py computes in integer arithmetic with a double
		// multiplier; the executor matches it exactly on this fixture
		// (importers/tflite allows one quantization step against ONNX
		// Runtime).
		{"qcnn", 2, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			refFiles := map[string]string{}
			for i := range tc.outputs {
				refFiles[filepath.Join(fx, fmt.Sprintf("%s.output_%d.npy", tc.name, i))] = fmt.Sprintf("output_%d.npy", i)
			}
			in := copyFiles(t, dir, "inputs", map[string]string{filepath.Join(fx, tc.name+".input_0.npy"): "input_0.npy"})
			ref := copyFiles(t, dir, "reference", refFiles)
			out := filepath.Join(dir, tc.name+".onnx")
			code, stdout, stderr := execCmd(t, "convert", filepath.Join(fx, tc.name+".tflite"), out, "--verify", "--inputs", in, "--reference", ref)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if want := fmt.Sprintf("EQUIVALENT (%d output(s), 1 sample(s))", tc.outputs); !strings.Contains(stdout, want) {
				t.Errorf("summary lacks %q:\n%s", want, stdout)
			}
			x := readTensor(t, filepath.Join(fx, tc.name+".input_0.npy"))
			m, err := canonical.Load(out, canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			x.Name = m.Graph.Inputs[0].Name
			var names []string
			for _, o := range m.Graph.Outputs {
				names = append(names, o.Name)
			}
			m.Close()
			outs, _, _ := runModel(t, out, x)
			for i := range tc.outputs {
				want := values(t, readTensor(t, filepath.Join(fx, fmt.Sprintf("%s.output_%d.npy", tc.name, i))))
				d := assertClose(t, names[i], outs[names[i]], want, tc.rtol, tc.atol)
				t.Logf("%s: %d values, max abs difference %.3g", names[i], len(want), d)
			}
		})
	}
}

// --target onnxruntime-1.17 takes the opset-21 transformer block to opset
// 20 and IR 9, verified against the source and the stored torch outputs.
func TestPipelineTarget(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join(repoDir(t), "fixtures", "models", "transformer_block_opset21")
	data := filepath.Join(fx, "test_data_set_0")
	out := filepath.Join(dir, "ort.onnx")
	code, stdout, stderr := execCmd(t, "convert", filepath.Join(fx, "model.onnx"), out, "--target", "onnxruntime-1.17",
		"--inputs", data, "--reference", data, "--report", filepath.Join(dir, "r.md"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Source and reference; and the result in ONNX Runtime when installed.
	if n := strings.Count(stdout, ": EQUIVALENT"); n < 2 || strings.Contains(stdout, "NOT EQUIVALENT") {
		t.Errorf("want 2 equivalent comparisons (source, reference), got %d:\n%s", n, stdout)
	}
	if !strings.Contains(stderr, "target onnxruntime-1.17: opset 21 -> 20, IR 10 -> 9") {
		t.Errorf("adaptation not reported:\n%s", stderr)
	}
	for _, r := range []string{"r.md", "r-reference.md"} {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			t.Errorf("report %s: %v", r, err)
		}
	}
	x := readTensor(t, filepath.Join(data, "input_0.pb"))
	outs, opset, ir := runModel(t, out, x)
	if opset != 20 || ir != 9 {
		t.Errorf("opset %d IR %d, want 20 and 9", opset, ir)
	}
	want := values(t, readTensor(t, filepath.Join(data, "output_0.pb")))
	if len(want) != 16*64 {
		t.Fatalf("reference has %d values, want 1024", len(want))
	}
	d := assertClose(t, "output", outs["output"], want, 1e-4, 1e-5)
	t.Logf("output: max abs difference to torch %.3g", d)

	// --no-verify: nothing compared.
	code, stdout, _ = execCmd(t, "convert", filepath.Join(fx, "model.onnx"), filepath.Join(dir, "nv.onnx"), "--target", "onnxruntime-1.17", "--no-verify")
	if code != 0 || strings.Contains(stdout, "EQUIVALENT") {
		t.Errorf("--no-verify: exit %d, stdout %q", code, stdout)
	}
}

func TestPipelineUnknownFormat(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "mystery.bin")
	if err := os.WriteFile(in, []byte("hello, not a model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := execCmd(t, "convert", in, filepath.Join(dir, "out.onnx"))
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	for _, s := range []string{in, "no importer recognizes the file", "--from", "onnx .onnx .onnxtxt", "tflite .tflite", "xgboost .json .ubj"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("message lacks %q: %s", s, stderr)
		}
	}
	assertOnly(t, dir, "mystery.bin")
}

func TestPipelineCorruptTFLite(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(repoDir(t), "fixtures", "tflite", "cnn.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "cut.tflite")
	if err := os.WriteFile(in, src[:300], 0o644); err != nil { // magic intact, offsets past the end
		t.Fatal(err)
	}
	code, _, stderr := execCmd(t, "convert", in, filepath.Join(dir, "out.onnx"), "--verify")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	if !strings.Contains(stderr, `plugin "tflite" failed to import `+in) || !strings.Contains(stderr, "corrupt") {
		t.Errorf("message does not name the plugin and the file: %s", stderr)
	}
	assertOnly(t, dir, "cut.tflite")
}

// In process (run), the plugin host starts this test binary, which serves
// the plugin from TestMain; --from overrides detection.
func TestConvertFromFlag(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join(repoDir(t), "fixtures", "xgboost")
	in := filepath.Join(dir, "model.bin")
	b, err := os.ReadFile(filepath.Join(fx, "binary_logistic.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.onnx")
	if code, _, stderr := runCmd("convert", in, out, "--from", "xgboost", "-O", "output=margin"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	x := readTensor(t, filepath.Join(fx, "binary_logistic.input.npy"))
	x.Name = "input"
	outs, _, _ := runModel(t, out, x)
	var margin *canonical.Tensor
	for _, o := range outs {
		margin = o
	}
	if len(outs) != 1 {
		t.Fatalf("outputs %d, want the margin only", len(outs))
	}
	assertClose(t, "margin", margin, values(t, readTensor(t, filepath.Join(fx, "binary_logistic.margin.npy"))), 1e-5, 1e-6)
	if code, _, stderr := runCmd("convert", in, out, "--from", "caffe"); code != 2 || !strings.Contains(stderr, "formats: tflite,") || !strings.Contains(stderr, "xgboost") {
		t.Errorf("--from caffe: exit %d: %s", code, stderr)
	}
}

// A third-party importer (examples/csvgraph, built as
// onnxconv-plugin-csvgraph on $ONNXCONV_PLUGIN_PATH) is detected by its
// magic bytes and its model verified and run.
func TestPipelineThirdPartyPlugin(t *testing.T) {
	dir := t.TempDir()
	pdir := filepath.Join(dir, "plugins")
	build := exec.Command("go", "build", "-o", filepath.Join(pdir, "onnxconv-plugin-csvgraph"), "../../examples/csvgraph")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example plugin: %v\n%s", err, out)
	}
	t.Setenv("ONNXCONV_PLUGIN_PATH", pdir)
	code, stdout, _ := execCmd(t, "formats")
	if code != 0 || !strings.Contains(stdout, "csvgraph") {
		t.Fatalf("formats: exit %d\n%s", code, stdout)
	}
	out := filepath.Join(dir, "out.onnx")
	// Nothing computes a csvgraph model but the graph itself: the result
	// is written, run once and reported NOT VERIFIED (exit 3).
	code, stdout, stderr := execCmd(t, "convert", filepath.Join(repoDir(t), "examples", "csvgraph", "example.csvg"), out, "--verify", "--dim", "N=4")
	if code != 3 || !strings.Contains(stdout, "NOT VERIFIED against the source: no reference runtime or direct predictor for format csvgraph") ||
		!strings.Contains(stdout, "ok (produced, no NaN or Inf)") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "(importer csvgraph)") {
		t.Errorf("not imported by csvgraph:\n%s", stderr)
	}
	// W = Sigmoid(Relu(X) + X) on X = [[-1, 0, 2]].
	x := canonical.NewTensor("X", canonical.Float, []int64{1, 3}, f32bytes(-1, 0, 2))
	outs, _, _ := runModel(t, out, x)
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	assertClose(t, "W", outs["W"], []float64{sig(-1), sig(0), sig(4)}, 1e-6, 1e-7)
}

func f32bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func TestFormats(t *testing.T) {
	t.Setenv("ONNXCONV_PLUGIN_PATH", t.TempDir())
	code, stdout, stderr := runCmd("formats")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	want := map[string]string{"onnx": ".onnx .onnxtxt", "tflite": ".tflite", "xgboost": ".json .ubj"}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if exts, ok := want[f[0]]; ok && strings.Contains(l, exts) {
			delete(want, f[0])
		}
	}
	if len(want) > 0 {
		t.Errorf("formats lacks %v:\n%s", want, stdout)
	}
}

// A target the model cannot fit: exit 1, the blocking node named (Gelu
// needs Erf, from opset 9; the Slices with shape-derived ends fold),
// nothing written.
func TestPipelineTargetUnsupported(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(repoDir(t), "fixtures", "models", "transformer_block_opset21", "model.onnx")
	code, _, stderr := execCmd(t, "convert", in, filepath.Join(dir, "old.onnx"), "--target", "onnx-opset7")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	for _, s := range []string{"1 violation(s) of target onnx-opset7", `"Gelu_0" (Gelu)`, "target opset 9 or later", "nothing was written"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("message lacks %q:\n%s", s, stderr)
		}
	}
	assertOnly(t, dir)
}

func TestPluginsCommand(t *testing.T) {
	t.Setenv("ONNXCONV_PLUGIN_PATH", t.TempDir())
	code, stdout, stderr := runCmd("plugins")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"onnx ", "onnx-export ", "tflite ", "xgboost "} {
		found := false
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(l, want) && strings.Contains(l, "(built-in)") {
				found = true
			}
		}
		if !found {
			t.Errorf("no built-in %q in:\n%s", strings.TrimSpace(want), stdout)
		}
	}
	// Run by hand (no host): refused with a hint, exit 2.
	code, _, stderr = runCmd("__plugin", "serve", "tflite")
	if code != 2 || !strings.Contains(stderr, "onnxconv starts it") {
		t.Errorf("serve without a host: exit %d: %s", code, stderr)
	}
}

// An ml opset the importer's tree node cannot move to: exit 1 naming the
// node and the importer option that gets there.
func TestConvertOpsetBlocked(t *testing.T) {
	// Gelu needs Erf, which opset 8 lacks: refused, the node named,
	// nothing written.
	dir := t.TempDir()
	block := filepath.Join(repoDir(t), "fixtures", "models", "transformer_block_opset21", "model.onnx")
	code, _, stderr := runCmd("convert", block, filepath.Join(dir, "o.onnx"), "--opset", "8")
	if code != 1 || !strings.Contains(stderr, `"Gelu_0" (Gelu)`) || !strings.Contains(stderr, "nothing was written") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertOnly(t, dir)

	// An xgboost model moved to ai.onnx.ml 3 by the converter, verified
	// against the imported (ml 5) model, equals the importer's own ml-3
	// output structurally (TreeEnsembleRegressor).
	in := filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json")
	for _, args := range [][]string{{"--ml-opset", "3", "--verify"}, {"-O", "ml_opset=3"}} {
		out := filepath.Join(dir, "o3.onnx")
		code, stdout, stderr := runCmd(append([]string{"convert", in, out}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if args[0] == "--ml-opset" && !strings.Contains(stdout, "EQUIVALENT") {
			t.Errorf("%v: no equivalence summary:\n%s", args, stdout)
		}
		m, err := canonical.Load(out, canonical.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, n := range m.Graph.Nodes {
			found = found || n.OpType == "TreeEnsembleRegressor"
		}
		if m.Opset(canonical.MLDomain) != 3 || !found {
			t.Errorf("%v: ml opset %d, TreeEnsembleRegressor present: %v", args, m.Opset(canonical.MLDomain), found)
		}
		m.Close()
		os.Remove(out)
	}
}
