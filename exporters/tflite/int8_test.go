package tflite

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	rt "github.com/onnxconv/onnxconv/runtimes/tflite"
	"github.com/onnxconv/onnxconv/verify"
)

func genSamples(t *testing.T, m *canonical.Model, from, n int) [][]*canonical.Tensor {
	t.Helper()
	var out [][]*canonical.Tensor
	for s := from; s < from+n; s++ {
		in, err := verify.GenerateInputs(m, verify.GenOptions{Seed: 7}, s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}

func argmax(f []float64) int {
	best := 0
	for i, v := range f {
		if v > f[best] {
			best = i
		}
	}
	return best
}

// withBatch returns m with the batch dim of its inputs and outputs set to
// n (value_info dropped, re-inferred by Export).
func withBatch(t *testing.T, m *canonical.Model, n int64) *canonical.Model {
	t.Helper()
	mp := proto.Clone(mustProto(t, m)).(*onnxpb.ModelProto)
	mp.Graph.ValueInfo = nil
	for _, vi := range append(append([]*onnxpb.ValueInfoProto{}, mp.Graph.Input...), mp.Graph.Output...) {
		d := vi.GetType().GetTensorType().GetShape().GetDim()
		if len(d) > 0 {
			d[0].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: n}
		}
	}
	out, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stack concatenates batch-1 samples along the batch dim.
func stack(t *testing.T, samples [][]*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	out := make([]*canonical.Tensor, len(samples[0]))
	for j := range out {
		var f []float64
		for _, s := range samples {
			f = append(f, floatsOf(t, s[j])...)
		}
		dims := append([]int64{int64(len(samples))}, samples[0][j].Dims[1:]...)
		out[j] = f32Tensor(samples[0][j].Name, dims, f)
	}
	return out
}

// runTFLiteMany runs the file at path on every sample (ONNX layout,
// permuted as the report says) in the TFLite interpreter, one session of
// the package's pool for all of them, and returns the first output of each
// run in the ONNX layout. The first sample is checked against a process
// of its own once per interpreter (tflitetest.Runner.Check).
func runTFLiteMany(t *testing.T, env rt.Env, path string, rep *Report, samples [][]*canonical.Tensor) [][]float64 {
	t.Helper()
	o := rt.Options{Threads: 1}
	r := runner(env)
	s, err := r.Open(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := make([][]float64, len(samples))
	for i, smp := range samples {
		ins := make([]*onnxpb.TensorProto, len(smp))
		for j, x := range smp {
			ins[j] = protoOf(t, toLayout(t, x, rep.Inputs[j].Perm), rep.Inputs[j].Name)
		}
		got, err := s.Run(context.Background(), ins)
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if i == 0 {
			r.Check(t, path, ins, o, got)
		}
		g, err := canonical.TensorFromProto(got.Outputs[0])
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		f, err := g.Float64s()
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if p := rep.Outputs[0].Perm; p != nil {
			if f, err = transposeData(f, g.Dims, layout.Inverse(p)); err != nil {
				t.Fatalf("sample %d: %v", i, err)
			}
		}
		out[i] = f
	}
	return out
}

type int8Row struct {
	model, ops          string
	quantized, float    int
	f32Bytes, int8Bytes int
	top1                float64
	maxRel, meanRel     float64
}

// TestInt8 quantizes resnet_small and squeezenet to full-integer int8 with
// 32 generated calibration samples, runs the file in Google's TFLite
// interpreter on 32 other samples and checks top-1 agreement with the
// float ONNX model on the executor (>= 99 %, i.e. all 32).
func TestInt8(t *testing.T) {
	env := tfliteEnv(t)
	root := testpaths.RepoRoot(t)
	var rows []int8Row
	for _, name := range []string{"resnet_small", "squeezenet"} {
		t.Run(name, func(t *testing.T) {
			m, err := canonical.Load(filepath.Join(root, "fixtures", "models", name, "model.onnx"), canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			calib := genSamples(t, m, 0, 32)
			held := genSamples(t, m, 1000, 32)
			res, err := Export(context.Background(), m, Options{Int8: true, Calibration: calib})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", res.Report.Summary())
			for _, f := range res.Report.Int8.Float {
				t.Logf("kept float: %s", f)
			}
			f32, err := Export(context.Background(), m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Report.Int8.Quantized == 0 || len(res.Report.Int8.Float) != 0 {
				t.Errorf("int8: %d ops quantized, kept float: %v", res.Report.Int8.Quantized, res.Report.Int8.Float)
			}
			if 3*len(res.Data) > len(f32.Data) {
				t.Errorf("int8 file %d bytes, float32 %d: weights not int8", len(res.Data), len(f32.Data))
			}
			dir := t.TempDir()
			path := filepath.Join(dir, name+".int8.tflite")
			if err := os.WriteFile(path, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			// The batch-1 file on 4 held samples, one interpreter run each;
			// then the same quantization of the model at batch 32 (the
			// calibration as one batch: the same min-max ranges) on all 32
			// held samples in one run.
			few := runTFLiteMany(t, env, path, res.Report, held[:4])
			mb := withBatch(t, m, int64(len(held)))
			defer mb.Close()
			resB, err := Export(context.Background(), mb, Options{Int8: true, Calibration: [][]*canonical.Tensor{stack(t, calib)}})
			if err != nil {
				t.Fatal(err)
			}
			pathB := filepath.Join(dir, name+".int8.b32.tflite")
			if err := os.WriteFile(pathB, resB.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			all := runTFLiteMany(t, env, pathB, resB.Report, [][]*canonical.Tensor{stack(t, held)})[0]
			classes := len(all) / len(held)
			agree := 0
			var worst, sum float64
			for i, s := range held {
				want := floatsOf(t, runExec(t, m, s)[0])
				got := all[i*classes : (i+1)*classes]
				if i < len(few) {
					if e := maxRel(t, few[i], got); e > 1e-6 {
						t.Errorf("sample %d: the batch-1 file and the batch-32 file differ by %.3g", i, e)
					}
				}
				if argmax(want) == argmax(got) {
					agree++
				}
				e := maxRel(t, got, want)
				worst = math.Max(worst, e)
				sum += e
			}
			if name == "resnet_small" {
				checkInt8IO(t, env, m, calib, held[0][0], few[0])
			}
			top1 := float64(agree) / float64(len(held))
			t.Logf("top-1 agreement %d/%d; error max %.3g, mean %.3g relative to the largest output; %d -> %d bytes",
				agree, len(held), worst, sum/float64(len(held)), len(f32.Data), len(res.Data))
			rows = append(rows, int8Row{model: name, ops: opsLine(res.Report.Ops), quantized: res.Report.Int8.Quantized,
				float: len(res.Report.Int8.Float), f32Bytes: len(f32.Data), int8Bytes: len(res.Data), top1: top1,
				maxRel: worst, meanRel: sum / float64(len(held))})
			if top1 < 0.99 {
				t.Errorf("top-1 agreement %.3f < 0.99", top1)
			}
		})
	}
	if p := os.Getenv("TFLITE_INT8_TABLE"); p != "" {
		s := "| model | TFLite ops | int8 ops / float ops | bytes float32 -> int8 | top-1 agreement (32 held) | max rel. error | mean rel. error |\n| --- | --- | --- | --- | --- | --- | --- |\n"
		for _, r := range rows {
			s += fmt.Sprintf("| %s | %s | %d / %d | %d -> %d | %.0f %% | %.3g | %.3g |\n", r.model, r.ops, r.quantized, r.float, r.f32Bytes, r.int8Bytes, 100*r.top1, r.maxRel, r.meanRel)
		}
		_ = os.WriteFile(p, []byte(s), 0o644)
	}
}

// checkInt8IO exports with int8 inputs and outputs, feeds the sample
// quantized with the reported scale and zero point and checks that the
// dequantized output is the float-I/O file's (want) within one output step.
func checkInt8IO(t *testing.T, env rt.Env, m *canonical.Model, calib [][]*canonical.Tensor, x *canonical.Tensor, want []float64) {
	t.Helper()
	res, err := Export(context.Background(), m, Options{Int8: true, Int8IO: true, Calibration: calib})
	if err != nil {
		t.Fatal(err)
	}
	in, out := res.Report.Inputs[0], res.Report.Outputs[0]
	if in.Type != "int8" || out.Type != "int8" || in.Scale <= 0 || out.Scale <= 0 {
		t.Fatalf("Int8IO: input %+v, output %+v", in, out)
	}
	xl := toLayout(t, x, in.Perm)
	f := floatsOf(t, xl)
	q := make([]byte, len(f))
	for i, v := range f {
		q[i] = byte(clampI8(v/in.Scale + float64(in.ZeroPoint)))
	}
	path := filepath.Join(t.TempDir(), "io.tflite")
	if err := os.WriteFile(path, res.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := runTFLite(t, env, path, []*onnxpb.TensorProto{protoOf(t, canonical.NewTensor(in.Name, canonical.Int8, xl.Dims, q), in.Name)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := canonical.TensorFromProto(got.Outputs[0])
	if err != nil {
		t.Fatal(err)
	}
	if g.DataType != canonical.Int8 {
		t.Fatalf("output type %s, want int8", g.DataType)
	}
	gi := floatsOf(t, g)
	var worst float64
	for i, v := range gi {
		worst = math.Max(worst, math.Abs(out.Scale*(v-float64(out.ZeroPoint))-want[i]))
	}
	t.Logf("Int8IO: input scale %.3g zero %d, output scale %.3g zero %d; dequantized output vs the float-I/O file: max |diff| %.3g", in.Scale, in.ZeroPoint, out.Scale, out.ZeroPoint, worst)
	if worst > 1.01*out.Scale {
		t.Errorf("Int8IO: dequantized output differs from the float-I/O file by %.3g (> one step %.3g)", worst, out.Scale)
	}
}
