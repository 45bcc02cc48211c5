package tflite

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/canonical/testmodels"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	importer "github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/runtimes/node"
	"github.com/onnxconv/onnxconv/runtimes/ortnode"
)

// mobilenetStyle builds a small MobileNet-v2-style float model: a strided
// 3x3 convolution, then inverted residual blocks (1x1 expansion, 3x3
// depthwise, 1x1 linear projection, a residual Add when the shapes agree),
// ReLU6 as Clip, global average pooling and a Gemm classifier; weights
// from a fixed seed.
func mobilenetStyle(t *testing.T) *canonical.Model {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 11))
	b := build.New(13)
	b.Reserve("input", "output")
	lo, hi := b.Scalar("zero", 0), b.Scalar("six", 6)
	weights := func(dims ...int64) string { return testmodels.HeNormal(b, r, dims...) }
	bias := func(n int64) string { return testmodels.Bias(b, r, n) }
	conv := func(x string, cin, cout, k, stride, group int64, relu6 bool) string {
		y := b.Op("Conv", "conv", []string{x, weights(cout, cin/group, k, k), bias(cout)},
			canonical.IntsAttr("kernel_shape", k, k), canonical.IntsAttr("strides", stride, stride),
			canonical.IntsAttr("pads", k/2, k/2, k/2, k/2), canonical.IntAttr("group", group))
		if relu6 {
			y = b.Op("Clip", "relu6", []string{y, lo, hi})
		}
		return y
	}
	x := conv("input", 3, 16, 3, 2, 1, true)
	c := int64(16)
	for _, blk := range []struct{ out, expand, stride int64 }{{16, 4, 1}, {24, 4, 2}, {24, 4, 1}, {32, 4, 2}} {
		e := conv(x, c, c*blk.expand, 1, 1, 1, true)
		d := conv(e, c*blk.expand, c*blk.expand, 3, blk.stride, c*blk.expand, true)
		p := conv(d, c*blk.expand, blk.out, 1, 1, 1, false)
		if blk.stride == 1 && blk.out == c {
			p = b.Op("Add", "res", []string{x, p})
		}
		x, c = p, blk.out
	}
	pool := b.Op("GlobalAveragePool", "pool", []string{x})
	flat := b.Op("Flatten", "flat", []string{pool})
	b.OpTo("Gemm", "output", []string{flat, weights(10, c), bias(10)}, canonical.IntAttr("transB", 1))
	m, err := b.Model("mobilenet_style", []build.Info{build.TensorInfo("input", canonical.Float, []int64{1, 3, 32, 32}, false)},
		[]build.Info{build.TensorInfo("output", canonical.Float, []int64{1, 10}, false)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// quantTestModel is the MobileNet-style model, testmodels.SEResNet
// (se_resnet: its logits, no Softmax), or the fixture model name.
func quantTestModel(t *testing.T, name string) *canonical.Model {
	t.Helper()
	switch name {
	case "mobilenet_style":
		return mobilenetStyle(t)
	case "se_resnet":
		m, err := testmodels.SEResNet(false)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m, err := canonical.Load(filepath.Join(testpaths.RepoRoot(t), "fixtures", "models", name, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// findNodeRuntime finds a node runtime (find: its package's Find) on the
// repository's node_modules (npm ci --ignore-scripts), or skips by the
// SKIP/REQUIRE scheme when pkg is not installed there.
func findNodeRuntime[E any](t *testing.T, pkg string, find func(node.FindOptions) (E, error)) E {
	t.Helper()
	_, modules := testpaths.Node(t, pkg)
	env, err := find(node.FindOptions{Getenv: func(k string) string {
		if k == node.EnvNodeModules {
			return modules
		}
		return os.Getenv(k)
	}})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// ortEnv is ONNX Runtime (onnxruntime-node) on the repository's
// node_modules, or a skip by the SKIP/REQUIRE scheme.
func ortEnv(t *testing.T) ortnode.Env {
	t.Helper()
	return findNodeRuntime(t, ortnode.Package, ortnode.Find)
}

// runORT runs the ONNX file at path on every sample in ONNX Runtime and
// returns the first output of each.
func runORT(t *testing.T, env ortnode.Env, path string, samples [][]*canonical.Tensor) [][]float64 {
	t.Helper()
	s, err := ortnode.Open(context.Background(), env, path, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out [][]float64
	for _, in := range samples {
		ins := make([]*onnxpb.TensorProto, len(in))
		for j, x := range in {
			ins[j] = protoOf(t, x, x.Name)
		}
		got, err := s.RunProtos(context.Background(), ins)
		if err != nil {
			t.Fatal(err)
		}
		g, err := canonical.TensorFromProto(got[0])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, floatsOf(t, g))
	}
	return out
}

// onnxQuantizations lists the scale and int8 zero point vectors of the
// QuantizeLinear and DequantizeLinear nodes of m (a uint8 zero point
// minus 128: the same real values), as "scales/zero points" keys.
func onnxQuantizations(t *testing.T, m *canonical.Model) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range m.Graph.Nodes {
		if n.OpType != "QuantizeLinear" && n.OpType != "DequantizeLinear" {
			continue
		}
		if z := n.Input(2); z != nil && z.Const.DataType == canonical.Int32 {
			continue // a bias
		}
		s, err := n.Input(1).Const.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		z, err := n.Input(2).Const.Int64s()
		if err != nil {
			t.Fatal(err)
		}
		sf := make([]float32, len(s))
		for i, v := range s {
			sf[i] = float32(v)
			if n.Input(2).Const.DataType == canonical.Uint8 {
				z[i] -= 128
			}
		}
		out[fmt.Sprint(sf, "/", z)] = n.Name
	}
	return out
}

// TestQDQToInt8 quantizes resnet_small, a MobileNet-style model and
// testmodels.SEResNet (residual Add, squeeze-and-excitation with Sigmoid
// and Mul, Concat, LeakyRelu, pools; its logits) with passes.Quantize
// (static, per channel: what 'onnxconv quantize static' writes, QDQ around
// every op ONNX Runtime's quantizer wraps), exports the QDQ model to
// TFLite and checks that the file's int8 tensors carry exactly the
// model's scales and zero points (every QuantizeLinear and weight
// DequantizeLinear of it, none calibrated), and that Google's TFLite
// interpreter computes ONNX Runtime's outputs of the QDQ model within one
// int8 step: the scale of the output's quantization (the output range
// over 255 when it is not quantized).
func TestQDQToInt8(t *testing.T) {
	env := tfliteEnv(t)
	oenv := ortEnv(t)
	for _, name := range []string{"resnet_small", "mobilenet_style", "se_resnet"} {
		t.Run(name, func(t *testing.T) {
			m := quantTestModel(t, name)
			defer m.Close()
			calib := genSamples(t, m, 0, 8)
			held := genSamples(t, m, 1000, 8)
			qm, _, err := passes.Quantize(context.Background(), m, passes.QuantOptions{Mode: passes.Static, Calibration: calib, PerChannel: true, Held: [][]*canonical.Tensor{}})
			if err != nil {
				t.Fatal(err)
			}
			defer qm.Close()
			dir := t.TempDir()
			onnxPath := filepath.Join(dir, name+".qdq.onnx")
			if err := canonical.Save(onnxPath, qm, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			res, err := Export(context.Background(), qm, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", res.Report.Summary())
			if res.Report.Int8 == nil || !res.Report.Int8.FromModel || res.Report.Int8.Quantized == 0 {
				t.Fatalf("int8 report %+v: want the model's own quantization", res.Report.Int8)
			}
			// The scales in the file are the model's.
			want := onnxQuantizations(t, qm)
			seen := map[string]bool{}
			fm := fb.GetRootAsModel(res.Data, 0)
			var sg fb.SubGraph
			fm.Subgraphs(&sg, 0)
			for i := range sg.TensorsLength() {
				var tt fb.Tensor
				sg.Tensors(&tt, i)
				if tt.Type() != fb.TensorTypeINT8 {
					continue
				}
				qp := tt.Quantization(nil)
				if qp == nil || qp.ScaleLength() == 0 {
					t.Errorf("int8 tensor %s has no quantization", tt.Name())
					continue
				}
				s := make([]float32, qp.ScaleLength())
				z := make([]int64, qp.ZeroPointLength())
				for j := range s {
					s[j] = qp.Scale(j)
				}
				for j := range z {
					z[j] = qp.ZeroPoint(j)
				}
				key := fmt.Sprint(s, "/", z)
				if _, ok := want[key]; !ok {
					t.Errorf("int8 tensor %s: scales %v zero points %v are none of the ONNX model's", tt.Name(), s[:min(4, len(s))], z[:min(4, len(z))])
				}
				seen[key] = true
			}
			for key, n := range want {
				if !seen[key] {
					t.Errorf("the quantization of %s is in no int8 tensor of the file", n)
				}
			}
			path := filepath.Join(dir, name+".tflite")
			if err := os.WriteFile(path, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			got := runTFLiteMany(t, env, path, res.Report, held)
			ort := runORT(t, oenv, onnxPath, held)
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, o := range ort {
				lo, hi = min(lo, slices.Min(o)), max(hi, slices.Max(o))
			}
			step := (hi - lo) / 255
			if d, _ := qm.Graph.Outputs[0].Producer(); d != nil && d.OpType == "DequantizeLinear" {
				s, err := d.Input(1).Const.Float64s()
				if err != nil || len(s) != 1 {
					t.Fatalf("the output's DequantizeLinear scale %v: %v", s, err)
				}
				step = s[0]
			}
			var worst float64
			for i := range held {
				for j := range ort[i] {
					worst = max(worst, math.Abs(got[i][j]-ort[i][j]))
				}
			}
			t.Logf("%d int8 ops, %d kept float; TFLite interpreter vs ONNX Runtime on %d samples: max |diff| %.3g = %.3f steps of %.3g",
				res.Report.Int8.Quantized, len(res.Report.Int8.Float), len(held), worst, worst/step, step)
			if math.Round(worst/step) > 1 { // one step, up to float32 rounding of the levels
				t.Errorf("the interpreter's outputs differ from ONNX Runtime's by %.3g, more than one step %.3g", worst, step)
			}
		})
	}
}

// outputStep is the scale of the int8 tensor the TFLite file's output i
// is the DEQUANTIZE of (0 when it is not one).
func outputStep(data []byte, i int) float64 {
	fm := fb.GetRootAsModel(data, 0)
	var sg fb.SubGraph
	fm.Subgraphs(&sg, 0)
	out := sg.Outputs(i)
	for k := range sg.OperatorsLength() {
		var op fb.Operator
		sg.Operators(&op, k)
		if op.OutputsLength() != 1 || op.Outputs(0) != out || op.InputsLength() != 1 {
			continue
		}
		var tt fb.Tensor
		sg.Tensors(&tt, int(op.Inputs(0)))
		if qp := tt.Quantization(nil); tt.Type() == fb.TensorTypeINT8 && qp != nil && qp.ScaleLength() == 1 {
			return float64(qp.Scale(0))
		}
	}
	return 0
}

// TestInt8RoundTrip exports resnet_small, squeezenet and the
// MobileNet-style model to int8 TFLite (calibrated), imports each file
// back with importers/tflite and counts the output values where ONNX
// Runtime and the executor differ from Google's TFLite interpreter, in
// steps of the int8 output's scale.
func TestInt8RoundTrip(t *testing.T) {
	env := tfliteEnv(t)
	oenv := ortEnv(t)
	for _, name := range []string{"resnet_small", "squeezenet", "mobilenet_style"} {
		t.Run(name, func(t *testing.T) {
			m := quantTestModel(t, name)
			defer m.Close()
			res, err := Export(context.Background(), m, Options{Int8: true, Calibration: genSamples(t, m, 0, 8)})
			if err != nil {
				t.Fatal(err)
			}
			step := outputStep(res.Data, 0)
			if step == 0 {
				t.Fatal("the output is not the DEQUANTIZE of an int8 tensor")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, name+".tflite")
			if err := os.WriteFile(path, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			back, err := importer.Import(res.Data, importer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			onnxPath := filepath.Join(dir, name+".onnx")
			if err := canonical.Save(onnxPath, back, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			held := genSamples(t, m, 1000, 4)
			want := runTFLiteMany(t, env, path, res.Report, held)
			var inTF [][]*canonical.Tensor
			for _, s := range held {
				var ins []*canonical.Tensor
				for j, x := range s {
					y := toLayout(t, x, res.Report.Inputs[j].Perm)
					y.Name = back.Graph.Inputs[j].Name
					ins = append(ins, y)
				}
				inTF = append(inTF, ins)
			}
			ort := runORT(t, oenv, onnxPath, inTF)
			for _, side := range []string{"onnxruntime", "executor"} {
				off, worst, n := 0, 0.0, 0
				for i, s := range inTF {
					got := ort[i]
					if side == "executor" {
						got = floatsOf(t, runExec(t, back, s)[0])
					}
					w := want[i]
					if p := res.Report.Outputs[0].Perm; p != nil {
						t.Fatalf("output permuted %v", p)
					}
					for j := range w {
						d := math.Round(math.Abs(got[j]-w[j]) / step)
						if d > 0 {
							off++
						}
						worst = max(worst, d)
						n++
					}
				}
				t.Logf("%s vs the TFLite interpreter: %d of %d values differ, max %g step(s) of %.3g", side, off, n, worst, step)
				if off > 0 {
					t.Errorf("%s: %d of %d values differ from the interpreter (max %g steps)", side, off, n, worst)
				}
			}
		})
	}
}

// qoperatorModel builds a QOperator model as ONNX Runtime's QOperator
// format writes it: a float input through QuantizeLinear (uint8), a 3x3
// QLinearConv with per-channel int8 weights and an int32 bias, a 1x1
// QLinearConv, DequantizeLinear to a float output; values from a fixed
// seed. residual adds the quantized input to the second convolution's
// output with ONNX Runtime's com.microsoft QLinearAdd.
func qoperatorModel(t *testing.T, residual bool) *canonical.Model {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 5))
	b := build.New(13)
	b.Reserve("input", "output")
	i8 := func(n int) []byte {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(int8(r.IntN(255) - 127))
		}
		return v
	}
	i32 := func(n int) []byte {
		v := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(v[4*i:], uint32(int32(r.IntN(4001)-2000)))
		}
		return v
	}
	scales := func(n int, base float64) string {
		v := make([]float64, n)
		for i := range v {
			v[i] = base * (1 + 0.5*r.Float64())
		}
		return b.Number("scale", canonical.Float, []int64{int64(n)}, v...)
	}
	xs, xz := b.Scalar("x_scale", 0.02), b.Init("x_zero", canonical.Uint8, nil, []byte{128})
	x := b.Op("QuantizeLinear", "x_q", []string{"input", xs, xz})
	h1s, h1z := b.Scalar("h_scale", 0.05), b.Init("h_zero", canonical.Uint8, nil, []byte{100})
	h := b.Op("QLinearConv", "h_q", []string{x, xs, xz, b.Init("w1", canonical.Int8, []int64{16, 8, 3, 3}, i8(16*8*9)), scales(16, 0.002),
		b.Init("w1_zero", canonical.Int8, []int64{16}, make([]byte, 16)), h1s, h1z, b.Init("b1", canonical.Int32, []int64{16}, i32(16))},
		canonical.IntsAttr("kernel_shape", 3, 3), canonical.IntsAttr("pads", 1, 1, 1, 1))
	ys, yz := b.Scalar("y_scale", 0.08), b.Init("y_zero", canonical.Uint8, nil, []byte{120})
	y := b.Op("QLinearConv", "y_q", []string{h, h1s, h1z, b.Init("w2", canonical.Int8, []int64{8, 16, 1, 1}, i8(8*16)), scales(8, 0.003),
		b.Init("w2_zero", canonical.Int8, []int64{8}, make([]byte, 8)), ys, yz})
	if residual {
		as, az := b.Scalar("add_scale", 0.1), b.Init("add_zero", canonical.Uint8, nil, []byte{125})
		b.Import("com.microsoft", 1)
		y = b.OpIn("com.microsoft", "QLinearAdd", "add_q", []string{y, ys, yz, x, xs, xz, as, az})
		ys, yz = as, az
	}
	b.OpTo("DequantizeLinear", "output", []string{y, ys, yz})
	m, err := b.Model("qoperator", []build.Info{build.TensorInfo("input", canonical.Float, []int64{1, 8, 8, 8}, false)},
		[]build.Info{build.TensorInfo("output", canonical.Float, []int64{1, 8, 8, 8}, false)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestQOperatorToInt8 exports a QOperator model (QLinearConv; with
// residual also ONNX Runtime's com.microsoft QLinearAdd) to TFLite: read as
// QDQ, written int8 with the model's scales (no calibration), the
// interpreter's outputs against ONNX Runtime's on the QOperator model:
// every value equal (0 of 2048 off, also through the residual sum).
func TestQOperatorToInt8(t *testing.T) {
	env := tfliteEnv(t)
	oenv := ortEnv(t)
	for _, residual := range []bool{false, true} {
		t.Run(fmt.Sprintf("residual=%v", residual), func(t *testing.T) {
			m := qoperatorModel(t, residual)
			defer m.Close()
			res, err := Export(context.Background(), m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", res.Report.Summary())
			want := 2
			if residual {
				want = 3
			}
			if res.Report.Int8 == nil || !res.Report.Int8.FromModel || res.Report.Int8.Quantized != want || len(res.Report.Int8.Float) != 0 {
				t.Fatalf("int8 report %+v: want %d ops int8 with the model's quantization", res.Report.Int8, want)
			}
			dir := t.TempDir()
			onnxPath := filepath.Join(dir, "qop.onnx")
			if err := canonical.Save(onnxPath, m, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "qop.tflite")
			if err := os.WriteFile(path, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			held := genSamples(t, m, 1000, 4)
			got := runTFLiteMany(t, env, path, res.Report, held)
			ort := runORT(t, oenv, onnxPath, held)
			step := 0.08
			if residual {
				step = 0.1
			}
			off, worst, n := 0, 0.0, 0
			for i := range held {
				for j := range ort[i] {
					d := math.Round(math.Abs(got[i][j]-ort[i][j]) / step)
					if d > 0 {
						off++
					}
					worst = max(worst, d)
					n++
				}
			}
			t.Logf("TFLite interpreter vs ONNX Runtime: %d of %d values differ, max %g step(s)", off, n, worst)
			// Both compute the convolutions in integers with one float32
			// requantization: equal (an int32 bias read with a wrong zero
			// point once made 357 of 2048 values one step off).
			if off > 0 {
				t.Errorf("%d of %d values differ, up to %g steps", off, n, worst)
			}
		})
	}
}

// TestQDQSoftmaxOutputToInt8: a QDQ model whose output is Softmax
// quantized at the model's own scale (1/255, uint8 zero point 0, as
// 'onnxconv quantize static' and ONNX Runtime's quantizer write it) is
// not TFLite's fixed int8 SOFTMAX quantization (1/256): the op stays float
// and its output is quantized and dequantized at the model's scale (the
// file holds an int8 tensor of it), so that the interpreter gives ONNX
// Runtime's values: within one step of 1/255 (before, SOFTMAX was written
// int8 at 1/256 and the model's scale was in no tensor).
func TestQDQSoftmaxOutputToInt8(t *testing.T) {
	env := tfliteEnv(t)
	oenv := ortEnv(t)
	b := build.New(13)
	b.Reserve("input", "output")
	xs, xz := b.Scalar("x_scale", 0.05), b.Init("x_zero", canonical.Uint8, nil, []byte{128})
	x := b.Op("DequantizeLinear", "x_dq", []string{b.Op("QuantizeLinear", "x_q", []string{"input", xs, xz}), xs, xz})
	y := b.Op("Softmax", "softmax", []string{x}, canonical.IntAttr("axis", 1))
	ys, yz := b.Scalar("y_scale", 1.0/255), b.Init("y_zero", canonical.Uint8, nil, []byte{0})
	b.OpTo("DequantizeLinear", "output", []string{b.Op("QuantizeLinear", "y_q", []string{y, ys, yz}), ys, yz})
	m, err := b.Model("softmax_qdq", []build.Info{build.TensorInfo("input", canonical.Float, []int64{2, 10}, false)},
		[]build.Info{build.TensorInfo("output", canonical.Float, []int64{2, 10}, false)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := Export(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", res.Report.Summary())
	if r := res.Report.Int8; r == nil || !r.FromModel || len(r.Float) != 1 {
		t.Fatalf("int8 report %+v: want SOFTMAX kept float with the model's quantization", r)
	}
	fm := fb.GetRootAsModel(res.Data, 0)
	var sg fb.SubGraph
	fm.Subgraphs(&sg, 0)
	found := false
	for i := range sg.TensorsLength() {
		var tt fb.Tensor
		sg.Tensors(&tt, i)
		if qp := tt.Quantization(nil); tt.Type() == fb.TensorTypeINT8 && qp != nil && qp.ScaleLength() == 1 &&
			qp.Scale(0) == float32(1.0/255) && qp.ZeroPoint(0) == -128 {
			found = true
		}
	}
	if !found {
		t.Error("no int8 tensor has the output's quantization (1/255, zero point -128)")
	}
	dir := t.TempDir()
	onnxPath, path := filepath.Join(dir, "softmax.onnx"), filepath.Join(dir, "softmax.tflite")
	if err := canonical.Save(onnxPath, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, res.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	held := genSamples(t, m, 1000, 4)
	got := runTFLiteMany(t, env, path, res.Report, held)
	ort := runORT(t, oenv, onnxPath, held)
	off, worst := 0, 0.0
	for i := range held {
		for j := range ort[i] {
			d := math.Round(math.Abs(got[i][j]-ort[i][j]) * 255)
			if d > 0 {
				off++
			}
			worst = max(worst, d)
		}
	}
	t.Logf("TFLite interpreter vs ONNX Runtime: %d of %d values differ, max %g step(s) of 1/255", off, 4*20, worst)
	if worst > 1 {
		t.Errorf("%d values differ, up to %g steps", off, worst)
	}
}
