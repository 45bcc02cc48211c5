package passes

import (
	"context"
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/canonical/testmodels"
)

// TestQuantizeStaticSEResNet: static quantization of a CNN with a
// residual Add, a squeeze-and-excitation block (GlobalAveragePool,
// Sigmoid, Mul), Concat, LeakyRelu, pools and Softmax wraps each of them
// as ONNX Runtime's QDQ quantizer does: no Relu left (each read a
// quantized output alone), and QDQToQOperator turns every Conv, Gemm and
// op with a com.microsoft QLinear form into it (none left float; MaxPool
// and Flatten, same-scale, stay between DequantizeLinear and
// QuantizeLinear). ONNX Runtime computes the QOperator model's outputs
// within one step of the output's quantization (Softmax's: 1/255) of its
// outputs for the QDQ model.
func TestQuantizeStaticSEResNet(t *testing.T) {
	env := ortEnv(t)
	m, err := testmodels.SEResNet(true)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	qdq, rep, err := Quantize(context.Background(), m, QuantOptions{Mode: Static, PerChannel: true,
		Calibration: samples(t, m, 0, 16), Held: samples(t, m, 1000, 16)})
	if err != nil {
		t.Fatal(err)
	}
	defer qdq.Close()
	t.Logf("%d nodes quantized, %d Relu removed; top-1 %.4f, max abs %.3g, mean abs %.3g; QDQ ops %v",
		rep.Quantized, rep.Fused, rep.Top1, rep.MaxAbs, rep.MeanAbs, opsOf(qdq))
	// 6 Conv, MaxPool, Add, 2 GlobalAveragePool, Sigmoid, Mul, Concat,
	// LeakyRelu, AveragePool, Flatten, Gemm, Softmax; 4 Relu removed.
	if rep.Quantized != 18 || rep.Fused != 4 || opsOf(qdq)["Relu"] != 0 {
		t.Errorf("%d nodes quantized, %d Relu removed, %d Relu left; want 18, 4, 0", rep.Quantized, rep.Fused, opsOf(qdq)["Relu"])
	}
	if rep.Top1 < 0.9 {
		t.Errorf("top-1 agreement with float %.4f < 0.9", rep.Top1)
	}
	q, n, err := QDQToQOperator(qdq)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ops := opsOf(q)
	t.Logf("%d nodes rewritten: %v", n, ops)
	want := map[string]int{"QLinearConv": 6, "QGemm": 1, "QLinearAdd": 1, "QLinearMul": 1, "QLinearSigmoid": 1, "QLinearConcat": 1,
		"QLinearGlobalAveragePool": 2, "QLinearLeakyRelu": 1, "QLinearAveragePool": 1, "QLinearSoftmax": 1}
	total := 0
	for op, k := range want {
		total += k
		if ops[op] != k {
			t.Errorf("%d %s, want %d", ops[op], op, k)
		}
	}
	for _, op := range []string{"Conv", "Gemm", "Add", "Mul", "Sigmoid", "Concat", "GlobalAveragePool", "LeakyRelu", "AveragePool", "Softmax"} {
		if ops[op] != 0 {
			t.Errorf("%d %s left float", ops[op], op)
		}
	}
	if n != total {
		t.Errorf("%d nodes rewritten, want %d", n, total)
	}
	d := producer(qdq.Graph.Outputs[0])
	if !isOp(d, "DequantizeLinear") {
		t.Fatalf("the QDQ model's output is computed by %v, not a DequantizeLinear", d)
	}
	step, ok := scalarValue(constOf(d.Input(1)))
	if !ok || math.Abs(step-1.0/255) > 1e-9 {
		t.Fatalf("the output's scale %g, want Softmax's 1/255", step)
	}
	ins := samples(t, m, 2000, 8)
	a, b := ortOutputs(t, env, qdq, ins), ortOutputs(t, env, q, ins)
	worst, off, all := 0.0, 0, 0
	for i := range a {
		for j := range a[i] {
			d := math.Abs(a[i][j] - b[i][j])
			worst = max(worst, d)
			if d > 0 {
				off++
			}
			all++
		}
	}
	t.Logf("ONNX Runtime, QOperator vs QDQ: %d of %d outputs differ, max abs %.3g = %.2f steps", off, all, worst, worst/step)
	if math.Round(worst/step) > 1 { // one step, up to float32 rounding of the levels
		t.Errorf("max abs %.3g above one step %.3g", worst, step)
	}
}

// TestQuantizeStaticSameScale: Reshape, Transpose and Resize after a
// quantized output are same-scale ops (ONNX Runtime's QDQDirect8BitOp,
// QDQResize): each reads a DequantizeLinear and its output goes to a
// QuantizeLinear of the very scale and zero point; a Relu reading a
// quantized output alone is removed, a Relu of the graph input (not
// quantized yet) is kept reading it float, a Clip(1, 6) (bounds excluding 0)
// is kept between quantizations. ONNX Runtime runs the result within one
// step of the output's scale of the executor.
func TestQuantizeStaticSameScale(t *testing.T) {
	rt := openORT(t)
	b := build.New(13)
	b.Reserve("input", "output")
	w := func(dims ...int64) string {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((i*37)%17-8) / 20
		}
		return b.F32("w", dims, v)
	}
	x := b.Op("Relu", "relu_in", []string{"input"})
	y := b.Op("Relu", "relu", []string{b.Op("Conv", "conv1", []string{x, w(8, 4, 1, 1)})})
	y = b.Op("Reshape", "reshape", []string{y, b.I64("shape", []int64{4}, []int64{1, 8, 4, 9})})
	y = b.Op("Transpose", "transpose", []string{y}, canonical.IntsAttr("perm", 0, 1, 3, 2))
	y = b.Op("Resize", "resize", []string{y, "", b.F32("scales", []int64{4}, []float32{1, 1, 2, 2})}, canonical.StringAttr("mode", "nearest"))
	y = b.Op("Clip", "clip", []string{b.Op("Conv", "conv2", []string{y, w(4, 8, 1, 1)}), b.Scalar("lo", 1), b.Scalar("hi", 6)})
	b.OpTo("Conv", "output", []string{y, w(2, 4, 1, 1)})
	m, err := b.Model("same_scale", []build.Info{build.TensorInfo("input", canonical.Float, []int64{1, 4, 6, 6}, false)},
		[]build.Info{build.TensorInfo("output", canonical.Float, []int64{1, 2, 18, 8}, false)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, rep, err := Quantize(context.Background(), m, QuantOptions{Mode: Static, Calibration: samples(t, m, 0, 8)})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	ops := opsOf(res)
	t.Logf("%d quantized, %d removed: %v", rep.Quantized, rep.Fused, ops)
	if rep.Quantized != 7 || rep.Fused != 1 || ops["Relu"] != 1 || ops["Clip"] != 1 {
		t.Errorf("%d quantized, %d removed, %d Relu, %d Clip; want 7 (3 Conv, Reshape, Transpose, Resize, Clip), 1, 1, 1", rep.Quantized, rep.Fused, ops["Relu"], ops["Clip"])
	}
	for _, n := range res.Graph.Nodes {
		switch n.OpType {
		case "Reshape", "Transpose", "Resize":
			d, q := producer(n.Input(0)), consumer(n.Output(0))
			if !isOp(d, "DequantizeLinear") || !isOp(q, "QuantizeLinear") || d.Input(1) != q.Input(1) || d.Input(2) != q.Input(2) {
				t.Errorf("%s: not between a DequantizeLinear and a QuantizeLinear of one scale and zero point", n.OpType)
			}
		case "Relu":
			// its output is quantized as the first Conv's input
			if isOp(producer(n.Input(0)), "DequantizeLinear") {
				t.Errorf("the Relu of the graph input reads it quantized")
			}
		case "Clip":
			if !isOp(producer(n.Input(0)), "DequantizeLinear") || !isOp(consumer(n.Output(0)), "QuantizeLinear") {
				t.Errorf("the Clip(1, 6) is not between quantizations")
			}
		}
	}
	d := producer(res.Graph.Outputs[0])
	step, ok := 0.0, isOp(d, "DequantizeLinear")
	if ok {
		step, ok = scalarValue(constOf(d.Input(1)))
	}
	if !ok {
		t.Fatal("the output is not a DequantizeLinear of a scalar scale")
	}
	p := save(t, res, "q.onnx")
	in := samples(t, m, 100, 1)[0]
	ys, err := RunModel(context.Background(), res, [][]*canonical.Tensor{in}, "")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := maxDiff(t, ys[0][0], runORT(t, rt, p, in)[0])
	t.Logf("executor vs ONNX Runtime: max abs %g, step %g", abs, step)
	if math.Round(abs/step) > 1 {
		t.Errorf("max abs %g > one step %g", abs, step)
	}
}
