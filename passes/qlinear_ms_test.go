package passes

import (
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// qlinearCase is a one-op QDQ model: float inputs quantized and
// dequantized, the op, its output quantized (the graph's output, 8-bit).
type qlinearCase struct {
	name, op, want string
	dt             canonical.DataType // activations' type
	ins            [][]int64          // input shapes
	out            []int64            // output shape
	attrs          []*canonical.Attribute
	// gemm: the second input is a constant int8 weight per column
	// (transB: [N, K] per row) with a float bias.
	gemm, transB bool
	opset        int
	// relu: a Relu between the op and its QuantizeLinear, whose zero
	// point is then the type's minimum.
	relu bool
}

func qlinearCases() []qlinearCase {
	return []qlinearCase{
		{name: "add_u8", op: "Add", want: "QLinearAdd", dt: canonical.Uint8, ins: [][]int64{{1, 4, 5, 5}, {1, 4, 5, 5}}, out: []int64{1, 4, 5, 5}},
		{name: "add_broadcast_s8", op: "Add", want: "QLinearAdd", dt: canonical.Int8, ins: [][]int64{{1, 4, 5, 5}, {4, 1, 1}}, out: []int64{1, 4, 5, 5}},
		{name: "add_relu_u8", op: "Add", want: "QLinearAdd", dt: canonical.Uint8, ins: [][]int64{{1, 4, 5, 5}, {1, 4, 5, 5}}, out: []int64{1, 4, 5, 5}, relu: true},
		{name: "add_relu_s8", op: "Add", want: "QLinearAdd", dt: canonical.Int8, ins: [][]int64{{1, 4, 5, 5}, {4, 1, 1}}, out: []int64{1, 4, 5, 5}, relu: true},
		{name: "mul_u8", op: "Mul", want: "QLinearMul", dt: canonical.Uint8, ins: [][]int64{{2, 3, 8}, {2, 3, 8}}, out: []int64{2, 3, 8}},
		{name: "mul_s8", op: "Mul", want: "QLinearMul", dt: canonical.Int8, ins: [][]int64{{2, 3, 8}, {8}}, out: []int64{2, 3, 8}},
		{name: "sigmoid_u8", op: "Sigmoid", want: "QLinearSigmoid", dt: canonical.Uint8, ins: [][]int64{{2, 64}}, out: []int64{2, 64}},
		{name: "sigmoid_s8", op: "Sigmoid", want: "QLinearSigmoid", dt: canonical.Int8, ins: [][]int64{{2, 64}}, out: []int64{2, 64}},
		{name: "leakyrelu_u8", op: "LeakyRelu", want: "QLinearLeakyRelu", dt: canonical.Uint8, ins: [][]int64{{2, 64}}, out: []int64{2, 64},
			attrs: []*canonical.Attribute{canonical.FloatAttr("alpha", 0.2)}},
		{name: "gap_u8", op: "GlobalAveragePool", want: "QLinearGlobalAveragePool", dt: canonical.Uint8, ins: [][]int64{{1, 8, 7, 7}}, out: []int64{1, 8, 1, 1}},
		{name: "gap_s8", op: "GlobalAveragePool", want: "QLinearGlobalAveragePool", dt: canonical.Int8, ins: [][]int64{{2, 3, 5, 6}}, out: []int64{2, 3, 1, 1}},
		{name: "avgpool_u8", op: "AveragePool", want: "QLinearAveragePool", dt: canonical.Uint8, ins: [][]int64{{1, 4, 9, 9}}, out: []int64{1, 4, 5, 5},
			attrs: []*canonical.Attribute{canonical.IntsAttr("kernel_shape", 3, 3), canonical.IntsAttr("strides", 2, 2), canonical.IntsAttr("pads", 1, 1, 1, 1)}},
		{name: "avgpool_count_pad_s8", op: "AveragePool", want: "QLinearAveragePool", dt: canonical.Int8, ins: [][]int64{{1, 4, 8, 8}}, out: []int64{1, 4, 8, 8},
			attrs: []*canonical.Attribute{canonical.IntsAttr("kernel_shape", 3, 3), canonical.IntsAttr("pads", 1, 1, 1, 1), canonical.IntAttr("count_include_pad", 1)}},
		{name: "concat_u8", op: "Concat", want: "QLinearConcat", dt: canonical.Uint8, ins: [][]int64{{1, 2, 4, 4}, {1, 3, 4, 4}, {1, 1, 4, 4}}, out: []int64{1, 6, 4, 4},
			attrs: []*canonical.Attribute{canonical.IntAttr("axis", 1)}},
		{name: "concat_s8", op: "Concat", want: "QLinearConcat", dt: canonical.Int8, ins: [][]int64{{3, 5}, {3, 2}}, out: []int64{3, 7},
			attrs: []*canonical.Attribute{canonical.IntAttr("axis", -1)}},
		{name: "softmax_u8", op: "Softmax", want: "QLinearSoftmax", dt: canonical.Uint8, ins: [][]int64{{2, 3, 10}}, out: []int64{2, 3, 10}},
		{name: "softmax_s8", op: "Softmax", want: "QLinearSoftmax", dt: canonical.Int8, ins: [][]int64{{4, 10}}, out: []int64{4, 10}},
		{name: "softmax_opset11_u8", op: "Softmax", want: "QLinearSoftmax", dt: canonical.Uint8, ins: [][]int64{{2, 3, 4}}, out: []int64{2, 3, 4}, opset: 11},
		{name: "gemm_u8", op: "Gemm", want: "QGemm", dt: canonical.Uint8, ins: [][]int64{{3, 8}, {8, 6}}, out: []int64{3, 6}, gemm: true},
		{name: "gemm_transb_s8", op: "Gemm", want: "QGemm", dt: canonical.Int8, ins: [][]int64{{3, 8}, {6, 8}}, out: []int64{3, 6}, gemm: true, transB: true,
			attrs: []*canonical.Attribute{canonical.IntAttr("transB", 1)}},
	}
}

// qlinearModel builds one QDQ model of the cases (their inputs and
// outputs prefixed by the case's name) at opset; each input has its own
// scale and zero point, the output another.
func qlinearModel(t *testing.T, cases []qlinearCase, opset int) *canonical.Model {
	t.Helper()
	b := build.New(opset)
	var ins, outs []build.Info
	for _, c := range cases {
		zero := 0.0
		if c.dt == canonical.Uint8 {
			zero = 128
		}
		var fl []string
		for i, dims := range c.ins {
			if c.gemm && i == 1 {
				fl = append(fl, gemmWeight(b, dims, c.transB))
				continue
			}
			name := c.name + "_" + string(rune('a'+i))
			b.Reserve(name)
			ins = append(ins, build.TensorInfo(name, canonical.Float, dims, false))
			s := b.Number("s", canonical.Float, nil, 0.02+0.015*float64(i))
			z := b.Number("z", c.dt, nil, zero-float64(10*i))
			q := b.Op("QuantizeLinear", "q", []string{name, s, z})
			fl = append(fl, b.Op("DequantizeLinear", "dq", []string{q, s, z}))
		}
		if c.gemm {
			bias := make([]float64, c.out[1])
			for i := range bias {
				bias[i] = 0.1*float64(i) - 0.25
			}
			fl = append(fl, b.Number("bias", canonical.Float, []int64{c.out[1]}, bias...))
		}
		y := b.Op(c.op, c.name, fl, c.attrs...)
		ys, yz := 0.03, zero
		if c.op == "Sigmoid" || c.op == "Softmax" || c.relu {
			ys, yz = 1.0/256, 0
			if c.dt == canonical.Int8 {
				yz = -128
			}
		}
		if c.relu {
			y, ys = b.Op("Relu", "relu", []string{y}), 0.015
		}
		name := c.name + "_y"
		b.Reserve(name)
		b.OpTo("QuantizeLinear", name, []string{y, b.Number("ys", canonical.Float, nil, ys), b.Number("yz", c.dt, nil, yz)})
		outs = append(outs, build.TensorInfo(name, c.dt, c.out, false))
	}
	m, err := b.Model("g", ins, outs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// gemmWeight adds an int8 weight of shape dims, dequantized per output
// column (axis 1, or 0 when transposed).
func gemmWeight(b *build.Builder, dims []int64, transB bool) string {
	axis, n := int64(1), dims[1]
	if transB {
		axis, n = 0, dims[0]
	}
	w := make([]float64, dims[0]*dims[1])
	for i := range w {
		w[i] = float64((i*37)%255 - 127)
	}
	s := make([]float64, n)
	for i := range s {
		s[i] = 0.002 * float64(i+1)
	}
	return b.Op("DequantizeLinear", "dqw", []string{b.Number("w", canonical.Int8, dims, w...), b.Number("ws", canonical.Float, []int64{n}, s...),
		b.Number("wz", canonical.Int8, []int64{n}, make([]float64, n)...)}, canonical.IntAttr("axis", axis))
}

// TestQLinearContribOpsAgainstORT: QDQ models of Add (also through a Relu
// the output's quantization implies), Mul, Sigmoid, LeakyRelu,
// GlobalAveragePool, AveragePool, Concat, Softmax (also at opset 11) and
// Gemm, uint8 and int8 (qlinearCases), become one
// com.microsoft QLinear node (QGemm) each under QDQToQOperator. ONNX
// Runtime 1.30 computes the QOperator model's integers within one step of
// the QDQ model run as written (graph optimizations off: the float op
// between DequantizeLinear and QuantizeLinear; the QOperator kernels
// requantize in one rounding, or through a lookup table), and within one
// step of the QDQ model with its optimizations on (its own QDQ fusion picks
// the same kernels where it fuses: equal there). QOperatorToQDQ of the
// QOperator model gives the QDQ model's integers exactly.
func TestQLinearContribOpsAgainstORT(t *testing.T) {
	env := ortEnv(t)
	groups := map[int][]qlinearCase{}
	for _, c := range qlinearCases() {
		opset := c.opset
		if opset == 0 {
			opset = 17
		}
		groups[opset] = append(groups[opset], c)
	}
	for opset, cases := range groups {
		m := qlinearModel(t, cases, opset)
		q, n, err := QDQToQOperator(m)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		ops := opsOf(q)
		for _, c := range cases {
			ops[c.want]--
			if ops[c.op] != 0 || ops["Relu"] != 0 {
				t.Errorf("opset %d: %d %s, %d Relu left", opset, ops[c.op], c.op, ops["Relu"])
			}
		}
		for _, c := range cases {
			if ops[c.want] != 0 {
				t.Errorf("opset %d: %d %s too many", opset, ops[c.want], c.want)
			}
		}
		if n != len(cases) || ops["DequantizeLinear"] != 0 {
			t.Fatalf("opset %d: %d of %d rewritten, %d DequantizeLinear left", opset, n, len(cases), ops["DequantizeLinear"])
		}
		back, nb, err := QOperatorToQDQ(q)
		if err != nil {
			t.Fatal(err)
		}
		defer back.Close()
		if nb != len(cases) {
			t.Fatalf("opset %d: back to QDQ: %d of %d rewritten", opset, nb, len(cases))
		}
		ins := samples(t, m, 0, 3)
		asWritten, fused := ortRun(t, env, m, ins, true), ortRun(t, env, m, ins, false)
		got, again := ortRun(t, env, q, ins, false), ortRun(t, env, back, ins, true)
		for i, c := range cases {
			off, total, worst := stepsApart(outputOf(asWritten, i), outputOf(got, i))
			offF, _, worstF := stepsApart(outputOf(fused, i), outputOf(got, i))
			t.Logf("%s: %s vs QDQ as written: %d of %d integers differ, max %g step(s); vs ONNX Runtime's QDQ fusion: %d differ, max %g", c.name, c.want, off, total, worst, offF, worstF)
			if worst > 1 || worstF > 1 {
				t.Errorf("%s: %d integers differ, up to %g steps; %d from the fused QDQ model, up to %g", c.name, off, worst, offF, worstF)
			}
			if off, _, worst := stepsApart(outputOf(asWritten, i), outputOf(again, i)); off > 0 {
				t.Errorf("%s: QDQ again: %d integers differ, up to %g steps", c.name, off, worst)
			}
		}
	}
}

// outputOf is output i of each sample of runs.
func outputOf(runs [][][]float64, i int) [][]float64 {
	out := make([][]float64, len(runs))
	for s, r := range runs {
		out[s] = r[i]
	}
	return out
}

// stepsApart counts the values of got that differ from want, of how
// many, and the largest difference.
func stepsApart(want, got [][]float64) (int, int, float64) {
	off, total, worst := 0, 0, 0.0
	for i := range want {
		for j, w := range want[i] {
			d := math.Abs(got[i][j] - w)
			if d > 0 {
				off++
			}
			worst = max(worst, d)
			total++
		}
	}
	return off, total, worst
}
