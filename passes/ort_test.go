//go:build cgo

package passes

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	ortgo "github.com/yalue/onnxruntime_go"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ort"
	"github.com/onnxconv/onnxconv/verify"
)

func openORT(t *testing.T) *ort.Runtime {
	t.Helper()
	rt, err := ort.Open(testpaths.ORT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// ortBasicNodes writes the model ONNX Runtime's basic-level graph
// optimization makes of path (optimizedModelFilePath) and counts its nodes.
func ortBasicNodes(t *testing.T, path string, in, out []string) int {
	t.Helper()
	return ortBasic(t, path, in, out).Nodes
}

// ortBasic is ortBasicNodes with the op histogram of ONNX Runtime's
// basic-level output.
func ortBasic(t *testing.T, path string, in, out []string) Stats {
	t.Helper()
	so, err := ortgo.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer so.Destroy()
	dst := filepath.Join(t.TempDir(), "ort_basic.onnx")
	if err := so.SetGraphOptimizationLevel(ortgo.GraphOptimizationLevelEnableBasic); err != nil {
		t.Fatal(err)
	}
	if err := so.SetOptimizedModelFilePath(dst); err != nil {
		t.Fatal(err)
	}
	s, err := ortgo.NewDynamicAdvancedSession(path, in, out, so)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Destroy()
	m, err := canonical.Load(dst, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	return StatsOf(m)
}

func save(t *testing.T, m *canonical.Model, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := canonical.Save(p, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

func runORT(t *testing.T, rt *ort.Runtime, path string, in []*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	var tps []*onnxpb.TensorProto
	for _, x := range in {
		tp, err := canonical.TensorToProto(x)
		if err != nil {
			t.Fatal(err)
		}
		tps = append(tps, tp)
	}
	outs, err := rt.Run(path, tps)
	if err != nil {
		t.Fatal(err)
	}
	var res []*canonical.Tensor
	for _, o := range outs {
		x, err := canonical.TensorFromProto(o)
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, x)
	}
	return res
}

func maxDiff(t *testing.T, a, b *canonical.Tensor) (abs, rel float64) {
	fa, err := a.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	fb, err := b.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(fa) != len(fb) {
		t.Fatalf("sizes %d and %d", len(fa), len(fb))
	}
	for i := range fa {
		d := math.Abs(fa[i] - fb[i])
		abs = math.Max(abs, d)
		rel = math.Max(rel, d/math.Max(math.Abs(fa[i]), 1e-3))
	}
	return abs, rel
}

// The optimized fixtures: node count at or below ONNX Runtime's basic
// level, outputs equal to the input model's on ONNX Runtime (1e-5
// relative, 1e-6 absolute floor).
func TestOptimizeAgainstORTBasic(t *testing.T) {
	rt := openORT(t)
	for _, name := range []string{"squeezenet", "resnet_small", "transformer_encoder", "transformer_block_opset21", "mlp_opset17"} {
		t.Run(name, func(t *testing.T) {
			m, path := fixture(t, name)
			res, rep, err := Run(context.Background(), m, Builtin(), RunOptions{Check: &Check{Samples: 2}})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			var in, out []string
			for _, v := range verify.GraphInputs(m) {
				in = append(in, v.Name)
			}
			for _, v := range m.Graph.Outputs {
				out = append(out, v.Name)
			}
			bs := ortBasic(t, path, in, out)
			basic := bs.Nodes
			t.Logf("onnxconv: %s", rep.After.OpsString())
			t.Logf("ORT basic: %s", bs.OpsString())
			t.Logf("| %s | %d | %d | %d | %.2g |", name, rep.Before.Nodes, rep.After.Nodes, basic, rep.MaxRel)
			if rep.After.Nodes > basic {
				t.Errorf("optimize leaves %d nodes, ONNX Runtime basic %d", rep.After.Nodes, basic)
			}
			// Every MatMul+Add ONNX Runtime makes a Gemm (2-D and the
			// transformers' 3-D ones) is one here too.
			if rep.After.Ops["Gemm"] < bs.Ops["Gemm"] || rep.After.Ops["MatMul"] > bs.Ops["MatMul"] {
				t.Errorf("Gemm %d MatMul %d, ONNX Runtime basic Gemm %d MatMul %d", rep.After.Ops["Gemm"], rep.After.Ops["MatMul"], bs.Ops["Gemm"], bs.Ops["MatMul"])
			}
			opt := save(t, res, "opt.onnx")
			x, err := verify.GenerateInputs(m, verify.GenOptions{Seed: 3}, 0)
			if err != nil {
				t.Fatal(err)
			}
			ya := runORT(t, rt, path, x)
			yb := runORT(t, rt, opt, x)
			for i := range ya {
				abs, rel := maxDiff(t, ya[i], yb[i])
				if abs > 1e-6 && rel > 1e-5 {
					t.Errorf("output %d on ONNX Runtime: max abs %g rel %g", i, abs, rel)
				}
			}
		})
	}
}

// The quantized CNN loads and runs in ONNX Runtime, its outputs within one
// quantization step of the executor's: static mode quantizes the final
// Gemm's output too, so both write values of its DequantizeLinear's grid
// and a rounding tie may put them one step of its scale apart.
func TestQuantizedRunsInORT(t *testing.T) {
	rt := openORT(t)
	m, _ := fixture(t, "resnet_small")
	res, _, err := Quantize(context.Background(), m, QuantOptions{Mode: Static, PerChannel: true, Calibration: samples(t, m, 0, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	d := producer(res.Graph.Outputs[0])
	if !isOp(d, "DequantizeLinear") {
		t.Fatalf("the output is computed by %v, not a DequantizeLinear", d)
	}
	step, ok := scalarValue(constOf(d.Input(1)))
	if !ok {
		t.Fatal("the output's DequantizeLinear has no scalar scale")
	}
	p := save(t, res, "q.onnx")
	x := samples(t, m, 500, 1)[0]
	ys, err := RunModel(context.Background(), res, [][]*canonical.Tensor{x}, "")
	if err != nil {
		t.Fatal(err)
	}
	yo := runORT(t, rt, p, x)
	abs, _ := maxDiff(t, ys[0][0], yo[0])
	t.Logf("executor vs ONNX Runtime on the int8 model: max abs %g, one step %g", abs, step)
	if math.Round(abs/step) > 1 { // one step, up to float32 rounding of the levels
		t.Errorf("max abs %g > one quantization step %g", abs, step)
	}
}

// The float16 model runs in ONNX Runtime within the fp16 profile of the
// float32 model.
func TestFloat16RunsInORT(t *testing.T) {
	rt := openORT(t)
	m, path := fixture(t, "resnet_small")
	res, _, err := Float16(context.Background(), m, FP16Options{KeepIOTypes: true, Check: &Check{Samples: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	p := save(t, res, "f16.onnx")
	x := samples(t, m, 0, 1)[0]
	ya := runORT(t, rt, path, x)
	yb := runORT(t, rt, p, x)
	fa, _ := ya[0].Float64s()
	fb, _ := yb[0].Float64s()
	for i := range fa {
		if d := math.Abs(fa[i] - fb[i]); d > 1e-3+1e-2*math.Abs(fa[i]) {
			t.Fatalf("element %d: %g vs %g", i, fa[i], fb[i])
		}
	}
}

// The float16 model with value_info loads in ONNX Runtime (which checks
// the declared types against its own inference) and stays within the fp16
// profile of the float32 model there.
func TestFloat16ValueInfoInORT(t *testing.T) {
	rt := openORT(t)
	m := ffnModel(t)
	res, _, err := Float16(context.Background(), m, FP16Options{KeepIOTypes: true, Check: &Check{Samples: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	x := samples(t, m, 0, 1)[0]
	ya := runORT(t, rt, save(t, m, "f32.onnx"), x)
	yb := runORT(t, rt, save(t, res, "f16.onnx"), x)
	fa, _ := ya[0].Float64s()
	fb, _ := yb[0].Float64s()
	for i := range fa {
		if d := math.Abs(fa[i] - fb[i]); d > 1e-3+1e-2*math.Abs(fa[i]) {
			t.Fatalf("element %d: %g vs %g", i, fa[i], fb[i])
		}
	}
}
