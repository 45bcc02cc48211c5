package tflite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
)

// fakeFind is FindOptions over a fake environment.
func fakeFind(env map[string]string, exe, user, wd string, node bool) FindOptions {
	return FindOptions{
		Getenv: func(k string) string { return env[k] },
		LookPath: func(n string) (string, error) {
			if !node {
				return "", exec.ErrNotFound
			}
			return "/usr/bin/" + filepath.Base(n), nil
		},
		Executable: func() (string, error) { return exe, nil },
		UserDir:    func() (string, error) { return user, nil },
		Getwd:      func() (string, error) { return wd, nil },
	}
}

// fakePackage makes modules/@tensorflow/tfjs-tflite with a package.json and
// the wasm file Find checks for.
func fakePackage(t *testing.T, modules string) {
	t.Helper()
	dir := filepath.Join(modules, filepath.FromSlash(Package))
	if err := os.MkdirAll(filepath.Join(dir, "wasm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"version":"`+PackageVersion+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wasm", "tflite_web_api_cc_simd.wasm"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	tmp := t.TempDir()
	exe := filepath.Join(tmp, "bin", "onnxconv")
	user := filepath.Join(tmp, "config", "onnxconv", "plugins")
	wd := filepath.Join(tmp, "work")

	// Nothing installed: the error names every place and the command.
	_, err := Find(fakeFind(nil, exe, user, wd, true))
	var me *MissingError
	if !errors.As(err, &me) || me.What != Package {
		t.Fatalf("Find with no package = %v, want a *MissingError for %s", err, Package)
	}
	for _, want := range []string{filepath.Join(tmp, "bin", "node_modules"), filepath.Join(user, "node_modules"), InstallCommand} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// No node.
	_, err = Find(fakeFind(nil, exe, user, wd, false))
	if !errors.As(err, &me) || me.What != "node" || !strings.Contains(err.Error(), InstallCommand) {
		t.Fatalf("Find without node = %v, want a *MissingError for node with the install command", err)
	}
	// The user plugins folder, then beside the executable (which wins).
	fakePackage(t, filepath.Join(user, "node_modules"))
	env, err := Find(fakeFind(nil, exe, user, wd, true))
	if err != nil || env.Modules != filepath.Join(user, "node_modules") || env.Version != PackageVersion {
		t.Fatalf("Find = %+v, %v; want the user folder's node_modules", env, err)
	}
	fakePackage(t, filepath.Join(tmp, "bin", "node_modules"))
	if env, err = Find(fakeFind(nil, exe, user, wd, true)); err != nil || env.Modules != filepath.Join(tmp, "bin", "node_modules") {
		t.Fatalf("Find = %+v, %v; want node_modules beside the executable", env, err)
	}
	// $ONNXCONV_NODE_MODULES alone when set.
	other := filepath.Join(tmp, "other")
	if _, err = Find(fakeFind(map[string]string{EnvNodeModules: other}, exe, user, wd, true)); !errors.As(err, &me) || len(me.Looked) != 1 || me.Looked[0] != other {
		t.Fatalf("Find with $%s=%s = %v, want a *MissingError that looked there only", EnvNodeModules, other, err)
	}
	// A checkout above the working folder (development).
	co := filepath.Join(tmp, "checkout")
	if err := os.MkdirAll(filepath.Join(co, "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(co, "go.mod"), []byte("module github.com/onnxconv/onnxconv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fakePackage(t, filepath.Join(co, "node_modules"))
	if env, err = Find(fakeFind(nil, filepath.Join(tmp, "x", "onnxconv"), filepath.Join(tmp, "nouser"), filepath.Join(co, "sub", "dir"), true)); err != nil || env.Modules != filepath.Join(co, "node_modules") {
		t.Fatalf("Find = %+v, %v; want the checkout's node_modules", env, err)
	}
}

func realEnv(t *testing.T) Env {
	t.Helper()
	_, modules := testpaths.Node(t, Package)
	env, err := Find(runtimetest.NodeModules(modules))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func readCSV(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, f := range strings.FieldsFunc(string(b), func(r rune) bool { return r == ',' || r == '\n' || r == '\r' || r == ' ' }) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

func int16Proto(name string, dims []int64, v []int64) *onnxpb.TensorProto {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(x)))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_INT16)), Dims: dims, RawData: b}
}

// TestSeaNetGolden runs the int16 SeaNet convolutions on their stored
// inputs: the interpreter must reproduce the golden outputs that TFLite
// Micro's reference kernels produced, exactly.
func TestSeaNetGolden(t *testing.T) {
	env := realEnv(t)
	dir := testpaths.Shared(t, "tflite-micro", "seanet")
	for _, name := range []string{"conv1", "conv5", "conv9"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".tflite")
			in := readCSV(t, filepath.Join(dir, name+"_input0_int16.csv"))
			want := readCSV(t, filepath.Join(dir, name+"_golden_int16.csv"))
			// Bind by position (no name): the shape is the interpreter's.
			res, err := Run(context.Background(), env, path, []*onnxpb.TensorProto{int16Proto("", []int64{int64(len(in))}, in)}, 1)
			var se *ShapeError
			if !errors.As(err, &se) || len(se.Inputs) != 1 {
				t.Fatalf("Run with a shapeless input = %v, want a *ShapeError listing the input", err)
			}
			res, err = Run(context.Background(), env, path, []*onnxpb.TensorProto{int16Proto(se.Inputs[0].Name, se.Inputs[0].Shape, in)}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Outputs) != 1 || !strings.Contains(res.Build, Package+" "+PackageVersion) {
				t.Fatalf("%d outputs, build %q", len(res.Outputs), res.Build)
			}
			raw := res.Outputs[0].GetRawData()
			if len(raw) != 2*len(want) {
				t.Fatalf("output has %d bytes, want %d int16", len(raw), len(want))
			}
			diff := 0
			for i, w := range want {
				if g := int64(int16(binary.LittleEndian.Uint16(raw[2*i:]))); g != w {
					diff++
				}
			}
			if diff != 0 {
				t.Errorf("%d of %d values differ from the TFLite Micro golden output", diff, len(want))
			}
		})
	}
}

// TestErrors: files that are not TFLite, inputs that do not bind, and the
// TFLite Micro-only Signal ops are typed errors that say what to do.
func TestErrors(t *testing.T) {
	env := realEnv(t)
	onnx := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(onnx, []byte("\x08\x07\x12\x04test"), 0o644); err != nil {
		t.Fatal(err)
	}
	var nt *NotTFLiteError
	if _, err := Run(context.Background(), env, onnx, nil, 1); !errors.As(err, &nt) {
		t.Errorf("Run on an ONNX file = %v, want *NotTFLiteError", err)
	}
	hello := testpaths.Shared(t, "tflite-micro", "models", "hello_world_int8.tflite")
	in := &onnxpb.TensorProto{Name: proto.String("nope"), DataType: proto.Int32(int32(onnxpb.TensorProto_INT8)), Dims: []int64{1, 1}, RawData: []byte{1}}
	var re *RunError
	_, err := Run(context.Background(), env, hello, []*onnxpb.TensorProto{in}, 1)
	if !errors.As(err, &re) || re.Kind != "inputs" || !strings.Contains(err.Error(), "serving_default_dense_input:0") {
		t.Errorf("Run with a wrong input name = %v, want a *RunError of kind inputs naming the model's input", err)
	}
	signal := filepath.Join("testdata", "signal_window.tflite")
	var ue *unsupported.OpsError
	if _, err := Run(context.Background(), env, signal, nil, 1); !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0].Op != "SignalWindow" ||
		ue.Ops[0].Node == "" || ue.Stage != unsupported.StageRun || !strings.Contains(err.Error(), "only TFLite Micro") {
		t.Errorf("Run on a Signal op model = %v, want *unsupported.OpsError naming SignalWindow", err)
	}
}

// TestOutsideCheckout runs the runtime from a built onnxconv binary in a
// folder outside the checkout, run from another folder outside it, with
// the npm packages found beside the executable (a link to the checkout's
// node_modules): a conversion is verified against the installed version.
func TestOutsideCheckout(t *testing.T) {
	env := realEnv(t)
	if testing.Short() {
		t.Skip("builds onnxconv")
	}
	root := testpaths.RepoRoot(t)
	bin := filepath.Join(t.TempDir(), "install")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(bin, "onnxconv")
	build := exec.Command("go", "build", "-o", exe, "./cmd/onnxconv")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink(env.Modules, filepath.Join(bin, "node_modules")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvNodeModules, "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Chdir(t.TempDir())

	// The onnxconv binary runs the runtime in its own node child, finding
	// the npm packages beside itself: a conversion is verified against
	// the installed build.
	out := filepath.Join(t.TempDir(), "cnn.onnx")
	src, err := filepath.Abs(filepath.Join(root, "fixtures", "tflite", "cnn.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "convert", src, out, "--verify", "--samples", "2")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, got)
	}
	if want := "tflite " + env.Versions() + " (in a node process; computed by " + LiteRTPackage; !strings.Contains(string(got), want) {
		t.Errorf("convert output lacks %q:\n%s", want, got)
	}
}

func int64Values(t *testing.T, tp *onnxpb.TensorProto) []int64 {
	t.Helper()
	raw := tp.GetRawData()
	var out []int64
	switch onnxpb.TensorProto_DataType(tp.GetDataType()) {
	case onnxpb.TensorProto_INT64:
		for i := 0; i+8 <= len(raw); i += 8 {
			out = append(out, int64(binary.LittleEndian.Uint64(raw[i:])))
		}
	case onnxpb.TensorProto_INT32:
		for i := 0; i+4 <= len(raw); i += 4 {
			out = append(out, int64(int32(binary.LittleEndian.Uint32(raw[i:]))))
		}
	case onnxpb.TensorProto_INT16:
		for i := 0; i+2 <= len(raw); i += 2 {
			out = append(out, int64(int16(binary.LittleEndian.Uint16(raw[i:]))))
		}
	case onnxpb.TensorProto_BOOL:
		for _, b := range raw {
			out = append(out, int64(b))
		}
	default:
		t.Fatalf("%s: element type %v", tp.GetName(), tp.GetDataType())
	}
	return out
}

// TestInt64 runs fixtures/tflite/int64_io.tflite: its int64 input is
// written and its int64 outputs are read in the WebAssembly heap (the
// runner gives int64 no typed view), and must agree with the int32, int16
// and bool outputs of the same values that the runner does expose.
func TestInt64(t *testing.T) {
	env := realEnv(t)
	path := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite", "int64_io.tflite")
	xs := []float32{-0.93, 0.41, 0.07, -0.5, 0.99, 0.2, -0.25, 0.61, -0.77, 0.013}
	ids := []int64{-999, 12, 1 << 20, 0, 7, 300, -42, 5, 1, -1}
	xb := make([]byte, 4*len(xs))
	for i, v := range xs {
		binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(v))
	}
	ib := make([]byte, 8*len(ids))
	for i, v := range ids {
		binary.LittleEndian.PutUint64(ib[8*i:], uint64(v))
	}
	in := []*onnxpb.TensorProto{
		{Name: proto.String("x"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{2, 5}, RawData: xb},
		{Name: proto.String("ids"), DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Dims: []int64{2, 5}, RawData: ib},
	}
	res, err := Run(context.Background(), env, path, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int64{}
	for _, o := range res.Outputs {
		out[o.GetName()] = int64Values(t, o)
		t.Logf("%s %v %v: %v", o.GetName(), onnxpb.TensorProto_DataType(o.GetDataType()), o.GetDims(), out[o.GetName()])
	}
	same := func(a, b string) {
		t.Helper()
		if fmt.Sprint(out[a]) != fmt.Sprint(out[b]) || len(out[a]) == 0 {
			t.Errorf("%s = %v, %s = %v: want the same values", a, out[a], b, out[b])
		}
	}
	same("x_int64", "x_int32")
	same("x_int16", "x_int32")
	// The int64 input, written in the heap, read back through int32.
	if fmt.Sprint(out["ids_int32"]) != fmt.Sprint(ids) {
		t.Errorf("ids_int32 = %v, want the int64 input %v", out["ids_int32"], ids)
	}
	// ADD with the model's constant, which holds 2^40 and -2^33: int64 values
	// beyond int32 read whole.
	if s := out["ids_shifted"]; len(s) != 10 || s[2]-ids[2] != 1<<40 || s[7]-ids[7] != -(1<<33) {
		t.Errorf("ids_shifted = %v, want ids + the model's offsets (2^40 at 2, -2^33 at 7)", s)
	}
	if a := out["argmin"]; len(a) != 2 || a[0] < 0 || a[0] > 4 || a[1] < 0 || a[1] > 4 {
		t.Errorf("argmin = %v, want two indices in [0, 5)", a)
	}
}

// TestLiteRT runs a float model with both builds: LiteRT.js (the default
// for it) must agree with tfjs-tflite within 1e-5 of the output's largest
// magnitude, and refuse what it does not run (variable tensors, int64)
// with a *RunError that says so.
func TestLiteRT(t *testing.T) {
	testpaths.Node(t, Package, LiteRTPackage) // counted skip when npm ci has not installed it
	env := realEnv(t)
	if env.LiteRTVersion == "" {
		t.Fatalf("%s is installed, but Find found no version of it beside %s in %s", LiteRTPackage, Package, env.Modules)
	}
	fixtures := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite")
	path := filepath.Join(fixtures, "cnn.tflite")
	xs := make([]byte, 4*8*8*3)
	for i := 0; i < 8*8*3; i++ {
		binary.LittleEndian.PutUint32(xs[4*i:], math.Float32bits(float32(math.Sin(float64(i)))))
	}
	in := []*onnxpb.TensorProto{{Name: proto.String("input"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{1, 8, 8, 3}, RawData: xs}}
	a, err := runWith(context.Background(), env, path, in, Options{Interpreters: []Interpreter{TFJSTFLite}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), env, path, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Build, LiteRTPackage+" "+env.LiteRTVersion) {
		t.Errorf("build %q, want it named", b.Build)
	}
	if len(a.Outputs) != 1 || len(b.Outputs) != 1 || a.Outputs[0].GetName() != b.Outputs[0].GetName() ||
		fmt.Sprint(a.Outputs[0].GetDims()) != fmt.Sprint(b.Outputs[0].GetDims()) {
		t.Fatalf("outputs %v and %v differ in names or shapes", a.Outputs, b.Outputs)
	}
	ra, rb := a.Outputs[0].GetRawData(), b.Outputs[0].GetRawData()
	scale, worst := 0.0, 0.0
	for i := 0; i+4 <= len(ra); i += 4 {
		x, y := float64(math.Float32frombits(binary.LittleEndian.Uint32(ra[i:]))), float64(math.Float32frombits(binary.LittleEndian.Uint32(rb[i:])))
		scale, worst = math.Max(scale, math.Abs(x)), math.Max(worst, math.Abs(x-y))
	}
	if len(ra) != len(rb) || worst > 1e-5*scale {
		t.Errorf("LiteRT.js differs from tfjs-tflite by %g (max |y| %g)", worst, scale)
	}
	t.Logf("cnn: %s and %s agree within %g (max |y| %g)", a.Build, b.Build, worst, scale)

	for _, c := range []struct{ model, want string }{
		{"svdf.tflite", "Variable tensors"},
		{"int64_io.tflite", "INT64"},
	} {
		_, err := RunLiteRT(context.Background(), env, filepath.Join(fixtures, c.model), nil)
		var re *RunError
		if !errors.As(err, &re) || re.Kind != "load" || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), LiteRTPackage) {
			t.Errorf("RunLiteRT(%s) = %v, want a load *RunError of %s mentioning %q", c.model, err, LiteRTPackage, c.want)
		}
	}
}

// TestStatefulSamples runs one session of an SVDF model (variable state
// tensors) on two different samples and then the first again: each
// answer must be the one a fresh interpreter gives (the converted model
// computes every sample from the initial state), so the state of one
// sample does not leak into the next. A session that kept one
// interpreter answered the repeated first sample differently.
func TestStatefulSamples(t *testing.T) {
	env := realEnv(t)
	path := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite", "svdf_int8.tflite")
	s, err := Open(context.Background(), env, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sample := func(seed byte) []*onnxpb.TensorProto {
		var in []*onnxpb.TensorProto
		for k, ti := range s.Inputs {
			n := 1
			for _, d := range ti.Shape {
				n *= int(d)
			}
			raw := make([]byte, n)
			for i := range raw {
				raw[i] = byte(int(seed)*31 + k*7 + i*13)
			}
			in = append(in, &onnxpb.TensorProto{Name: proto.String(ti.Name), DataType: proto.Int32(int32(onnxpb.TensorProto_INT8)), Dims: append([]int64(nil), ti.Shape...), RawData: raw})
		}
		return in
	}
	first, second := sample(1), sample(2)
	var answers [][]*onnxpb.TensorProto
	for _, in := range [][]*onnxpb.TensorProto{first, second, first} {
		res, err := s.Run(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, res.Outputs)
	}
	fresh, err := Run(context.Background(), env, path, first, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 2} {
		for i, o := range answers[k] {
			if !proto.Equal(o, fresh.Outputs[i]) {
				t.Errorf("run %d, output %q: %v, a fresh interpreter gives %v", k+1, o.GetName(), o.GetRawData(), fresh.Outputs[i].GetRawData())
			}
		}
	}
}
