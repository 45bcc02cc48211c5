package tflite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	unsupportedpkg "github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/executor"
	importer "github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	rt "github.com/onnxconv/onnxconv/runtimes/tflite"
)

func tfliteEnv(t *testing.T) rt.Env {
	t.Helper()
	return findNodeRuntime(t, rt.Package, rt.Find)
}

// runExec runs m on the executor.
func runExec(t *testing.T, m *canonical.Model, ins []*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	defer ex.Close()
	outs, err := ex.Run(context.Background(), ins)
	if err != nil {
		t.Fatalf("executor run: %v", err)
	}
	return outs
}

func floatsOf(t *testing.T, x *canonical.Tensor) []float64 {
	t.Helper()
	f, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func f32Tensor(name string, dims []int64, f []float64) *canonical.Tensor {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	}
	return canonical.NewTensor(name, canonical.Float, dims, b)
}

// toLayout returns x permuted by perm (nil: x).
func toLayout(t *testing.T, x *canonical.Tensor, perm []int) *canonical.Tensor {
	if perm == nil {
		return x
	}
	y, err := x.Transpose(perm)
	if err != nil {
		t.Fatal(err)
	}
	return f32Tensor(x.Name, y.Dims, floatsOf(t, y))
}

// maxRel is max|a-b| / max|b| (relative to the output's largest
// magnitude).
func maxRel(t *testing.T, a, b []float64) float64 {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d values, want %d", len(a), len(b))
	}
	var d, m float64
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
		m = math.Max(m, math.Abs(b[i]))
	}
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d / math.Max(m, 1e-30)
}

func protoOf(t *testing.T, x *canonical.Tensor, name string) *onnxpb.TensorProto {
	t.Helper()
	tp, err := canonical.TensorToProto(x)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	tp.RawData = raw
	tp.Name = &name
	return tp
}

type row struct {
	model, ops        string
	tin, tout, layout int
	f32, f16, round   string
}

var (
	tableMu sync.Mutex
	table   []row
)

// TestFixtureModels exports every fixture model to float32 and float16
// TFLite, runs it in Google's TFLite interpreter and compares it with the
// ONNX source on the executor; then re-imports the float32 file with
// importers/tflite and compares the re-imported model (executor) with the
// interpreter's outputs.
func TestFixtureModels(t *testing.T) {
	env := tfliteEnv(t)
	root := testpaths.RepoRoot(t)
	for _, name := range []string{"mlp_opset9", "mlp_opset17", "resnet_small", "squeezenet", "transformer_encoder", "transformer_block_opset21",
		"unet", "attention_causal", "lstm", "detector_head"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, "fixtures", "models", name)
			m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			in, err := canonical.ReadTensorFile(filepath.Join(dir, "test_data_set_0", "input_0.pb"))
			if err != nil {
				t.Fatal(err)
			}
			want := runExec(t, m, []*canonical.Tensor{in})
			r := row{model: name}
			defer func() { tableMu.Lock(); table = append(table, r); tableMu.Unlock() }()
			for _, f16 := range []bool{false, true} {
				res, err := Export(context.Background(), m, Options{Float16: f16})
				if err != nil {
					t.Fatalf("export (float16 %v): %v", f16, err)
				}
				path := filepath.Join(t.TempDir(), name+".tflite")
				if err := os.WriteFile(path, res.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				rep := res.Report
				if !f16 {
					t.Logf("%s", rep.Summary())
					r.ops = opsLine(rep.Ops)
					r.tin, r.tout, r.layout = rep.TransposesIn, rep.TransposesOut, rep.LayoutTransposes
				}
				ins := []*onnxpb.TensorProto{protoOf(t, toLayout(t, in, rep.Inputs[0].Perm), rep.Inputs[0].Name)}
				got, err := runTFLite(t, env, path, ins)
				if err != nil {
					t.Fatalf("tflite runtime (float16 %v): %v", f16, err)
				}
				worst := 0.0
				for i, w := range want {
					g, err := canonical.TensorFromProto(got.Outputs[i])
					if err != nil {
						t.Fatal(err)
					}
					worst = math.Max(worst, maxRel(t, floatsOf(t, g), floatsOf(t, toLayout(t, w, rep.Outputs[i].Perm))))
				}
				tol := 1e-4
				if f16 {
					tol = 1e-2 // float16 weights: the fp16 profile
					r.f16 = fmt.Sprintf("%.2g", worst)
				} else {
					r.f32 = fmt.Sprintf("%.2g", worst)
				}
				t.Logf("float16 %v: max error %.3g relative to the largest output", f16, worst)
				if worst > tol {
					t.Errorf("float16 %v: max relative error %.3g > %g", f16, worst, tol)
				}
				if f16 {
					continue
				}
				// Round trip: the file re-imported by importers/tflite, on the executor.
				back, err := importer.Import(res.Data, importer.Options{})
				if err != nil {
					r.round = "import error"
					t.Fatalf("re-import: %v", err)
				}
				again := runExec(t, back, []*canonical.Tensor{toLayout(t, in, rep.Inputs[0].Perm)})
				worst = 0
				for i, w := range again {
					g, _ := canonical.TensorFromProto(got.Outputs[i])
					worst = math.Max(worst, maxRel(t, floatsOf(t, w), floatsOf(t, g)))
				}
				r.round = fmt.Sprintf("%.2g", worst)
				if worst > 1e-4 {
					t.Errorf("round trip: max relative error %.3g > 1e-4", worst)
				}
			}
		})
	}
	if os.Getenv("TFLITE_EXPORT_TABLE") != "" {
		var sb strings.Builder
		sb.WriteString("| model | TFLite ops | Transposes in ONNX | TRANSPOSE in TFLite (layout) | float32 max rel. error | float16 max rel. error | round trip |\n| --- | --- | --- | --- | --- | --- | --- |\n")
		for _, r := range table {
			fmt.Fprintf(&sb, "| %s | %s | %d | %d (%d) | %s | %s | %s |\n", r.model, r.ops, r.tin, r.tout, r.layout, r.f32, r.f16, r.round)
		}
		_ = os.WriteFile(os.Getenv("TFLITE_EXPORT_TABLE"), []byte(sb.String()), 0o644)
	}
}

func opsLine(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func parseModel(t *testing.T, src string) *canonical.Model {
	t.Helper()
	mp, err := onnxtext.Parse("test", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUnsupported: the ops TFLite cannot express are listed all at once
// (*unsupportedpkg.OpsError), each with its first node and reason;
// the nodes that read their outputs are not reported again.
func TestUnsupported(t *testing.T) {
	m := parseModel(t, `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[2,3] y, float[3,2] z, float[2,3] w) {
  a = Hardmax (x)
  b = Hardmax (a)
  c = Relu (b)
  y = Sigmoid (c)
  e0 = Celu (x)
  e = Transpose <perm: ints = [1, 0]> (e0)
  z = Elu <alpha: float = 0.5> (e)
  w = Elu <alpha: float = 0.5> (x)
}`)
	m.Graph.Nodes[0].Name = "the_hardmax"
	_, err := Export(context.Background(), m, Options{})
	var ue *unsupportedpkg.OpsError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an *unsupportedpkg.OpsError", err)
	}
	got := ue.ByOp()
	if len(got) != 3 || got["Hardmax"].Node != "the_hardmax" || got["Celu"].Op == "" || !strings.Contains(got["Elu"].Reason, "alpha") {
		t.Errorf("ops %+v, want Hardmax (node the_hardmax), Celu and Elu (alpha) once each", ue.Ops)
	}
	if got["Hardmax"].Count != 1 {
		t.Errorf("Hardmax counted %d times, want 1 (the second reads the first's output)", got["Hardmax"].Count)
	}
	t.Log(err)
}

// TestKeepNCHWIOAndGroups: depthwise, grouped and padded convs, average
// pooling and a Transpose pair, exported with and without KeepNCHWIO, match
// the executor in the TFLite interpreter; with KeepNCHWIO the input and
// output stay NCHW.
func TestKeepNCHWIOAndGroups(t *testing.T) {
	env := tfliteEnv(t)
	src := `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4,9,9] x) => (float[1,8,5,5] y) {
  a = Conv <group: int = 4, pads: ints = [1,1,1,1]> (x, wd)
  b = Relu (a)
  c = Conv <group: int = 2, strides: ints = [2,2], pads: ints = [1,1,1,1]> (b, wg)
  d = Mul (c, s)
  t1 = Transpose <perm: ints = [0,2,3,1]> (d)
  t2 = Sigmoid (t1)
  t3 = Transpose <perm: ints = [0,3,1,2]> (t2)
  y = AveragePool <kernel_shape: ints = [3,3], pads: ints = [1,1,1,1], count_include_pad: int = 1> (t3)
}`
	m := parseModel(t, src)
	fill := func(name string, dims ...int64) {
		n, _ := canonical.NumElements(dims)
		f := make([]float64, n)
		for i := range f {
			f[i] = math.Sin(float64(i)*0.37+float64(len(name))) * 0.5
		}
		if _, err := m.Graph.AddInitializer(f32Tensor(name, dims, f)); err != nil {
			t.Fatal(err)
		}
	}
	fill("wd", 4, 1, 3, 3)
	fill("wg", 8, 2, 3, 3)
	fill("s", 8, 1, 1)
	m2, err := canonical.FromProto(mustProto(t, m), "")
	if err != nil {
		t.Fatal(err)
	}
	xin := make([]float64, 4*81)
	for i := range xin {
		xin[i] = math.Cos(float64(i) * 0.11)
	}
	x := f32Tensor("x", []int64{1, 4, 9, 9}, xin)
	want := runExec(t, m2, []*canonical.Tensor{x})[0]
	for _, keep := range []bool{false, true} {
		res, err := Export(context.Background(), m2, Options{KeepNCHWIO: keep})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("keep %v: %s", keep, res.Report.Summary())
		if keep && (res.Report.LayoutChanged || res.Report.Inputs[0].Perm != nil) {
			t.Errorf("KeepNCHWIO: the layout changed: %+v", res.Report.Inputs)
		}
		if !keep && res.Report.TransposesOut != 0 {
			t.Errorf("%d TRANSPOSE left, want 0 (NHWC input and output)", res.Report.TransposesOut)
		}
		path := filepath.Join(t.TempDir(), "m.tflite")
		if err := os.WriteFile(path, res.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := runTFLite(t, env, path, []*onnxpb.TensorProto{protoOf(t, toLayout(t, x, res.Report.Inputs[0].Perm), "x")})
		if err != nil {
			t.Fatal(err)
		}
		g, err := canonical.TensorFromProto(got.Outputs[0])
		if err != nil {
			t.Fatal(err)
		}
		if e := maxRel(t, floatsOf(t, g), floatsOf(t, toLayout(t, want, res.Report.Outputs[0].Perm))); e > 1e-4 {
			t.Errorf("keep %v: max relative error %.3g > 1e-4", keep, e)
		}
	}
}

func mustProto(t *testing.T, m *canonical.Model) *onnxpb.ModelProto {
	t.Helper()
	mp, err := m.ToProtoInline()
	if err != nil {
		t.Fatal(err)
	}
	return mp
}
