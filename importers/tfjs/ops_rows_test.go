package tfjs_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// The rows of the op harness (ops_tfjs_test.go): each builds a tiny graph
// model around one op and one attribute set.

// unaryRow is op applied to a [2,3,4] float input with values in [lo, hi].
func unaryRow(name, op string, lo, hi float64, a attrs) opRow {
	return opRow{name: name, ops: []string{op}, build: func(g *gm) {
		x := g.in("x", []int64{2, 3, 4}, vals(24, lo, hi, len(name)))
		g.out(g.op("y", op, []string{x}, a))
	}}
}

// binaryRow is op applied to a [2,3,4] input and a [3,1] (broadcast)
// input, values in [lo, hi].
func binaryRow(name, op string, lo, hi float64) opRow {
	return opRow{name: name, ops: []string{op}, build: func(g *gm) {
		x := g.in("x", []int64{2, 3, 4}, vals(24, lo, hi, 1))
		y := g.in("y", []int64{3, 1}, vals(3, lo, hi, 2))
		g.out(g.op("z", op, []string{x, y}, nil))
	}}
}

// intBinaryRow is op on int32 [2,3] and [3] inputs in [lo, hi] (the
// second without zeros when nz).
func intBinaryRow(name, op string, lo, hi int32, nz bool) opRow {
	return opRow{name: name, ops: []string{op}, build: func(g *gm) {
		a := g.inI("a", []int64{2, 3}, ivals(6, lo, hi, 1))
		bv := ivals(3, lo, hi, 5)
		if nz {
			for i := range bv {
				if bv[i] == 0 {
					bv[i] = 3
				}
			}
		}
		b := g.inI("b", []int64{3}, bv)
		g.out(g.op("z", op, []string{a, b}, nil))
	}}
}

// cmpRow compares inputs with equal elements (Equal, GreaterEqual …).
func cmpRow(name, op string) opRow {
	return opRow{name: name, ops: []string{op}, build: func(g *gm) {
		a := g.in("a", []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
		b := g.in("b", []int64{3}, []float32{1, 5, 3})
		g.out(g.op("z", op, []string{a, b}, nil))
	}}
}

func boolIn(g *gm, name string, v ...bool) string {
	raw := make([]byte, len(v))
	for i, b := range v {
		if b {
			raw[i] = 1
		}
	}
	return g.input(name, canonicalBool([]int64{int64(len(v))}, raw))
}

// nhwc is a [1,5,5,2] image input.
func nhwc(g *gm) string { return g.in("x", []int64{1, 5, 5, 2}, vals(50, -1, 1, 3)) }

func opRows() []opRow {
	F := aT("DT_FLOAT")
	rows := []opRow{
		unaryRow("relu", "Relu", -1, 1, nil),
		unaryRow("abs", "Abs", -1, 1, nil),
		unaryRow("ceil", "Ceil", -3, 3, nil),
		unaryRow("floor", "Floor", -3, 3, nil),
		unaryRow("elu", "Elu", -2, 2, nil),
		unaryRow("exp", "Exp", -2, 2, nil),
		unaryRow("log", "Log", 0.1, 3, nil),
		unaryRow("reciprocal", "Reciprocal", 0.5, 3, nil),
		unaryRow("relu6", "Relu6", -3, 9, nil),
		unaryRow("rsqrt", "Rsqrt", 0.1, 3, nil),
		unaryRow("selu", "Selu", -2, 2, nil),
		unaryRow("softplus", "Softplus", -3, 3, nil),
		unaryRow("sqrt", "Sqrt", 0, 3, nil),
		unaryRow("square", "Square", -3, 3, nil),
		unaryRow("sigmoid", "Sigmoid", -3, 3, nil),
		unaryRow("tanh", "Tanh", -3, 3, nil),
		unaryRow("neg", "Neg", -3, 3, nil),
		unaryRow("leakyrelu", "LeakyRelu", -3, 3, attrs{"alpha": aF(0.3)}),
		unaryRow("identity", "Identity", -3, 3, nil),
		unaryRow("snapshot", "Snapshot", -3, 3, nil),
		unaryRow("stopgradient", "StopGradient", -3, 3, nil),
		unaryRow("softmax", "Softmax", -3, 3, nil),
		unaryRow("logsoftmax", "LogSoftmax", -3, 3, nil),
		binaryRow("add", "Add", -1, 1),
		binaryRow("addv2", "AddV2", -1, 1),
		binaryRow("sub", "Sub", -1, 1),
		binaryRow("mul", "Mul", -1, 1),
		binaryRow("div", "Div", 0.5, 2),
		binaryRow("realdiv", "RealDiv", 0.5, 2),
		binaryRow("maximum", "Maximum", -1, 1),
		binaryRow("minimum", "Minimum", -1, 1),
		binaryRow("pow", "Pow", 0.2, 2),
		binaryRow("squareddifference", "SquaredDifference", -1, 1),
		binaryRow("greater", "Greater", -1, 1),
		binaryRow("less", "Less", -1, 1),
		cmpRow("equal", "Equal"),
		cmpRow("notequal", "NotEqual"),
		cmpRow("greaterequal", "GreaterEqual"),
		cmpRow("lessequal", "LessEqual"),
		{name: "logical", ops: []string{"LogicalAnd", "LogicalOr", "LogicalNot"}, build: func(g *gm) {
			a := boolIn(g, "a", true, true, false, false)
			b := boolIn(g, "b", true, false, true, false)
			g.out(g.op("and", "LogicalAnd", []string{a, b}, nil), g.op("or", "LogicalOr", []string{a, b}, nil), g.op("not", "LogicalNot", []string{a}, nil))
		}},
		{name: "biasadd", ops: []string{"BiasAdd"}, build: func(g *gm) {
			x := nhwc(g)
			g.out(g.op("y", "BiasAdd", []string{x, g.c("b", []int64{2}, []float32{0.5, -1})}, attrs{"data_format": aS("NHWC")}))
		}},
		{name: "prelu", ops: []string{"Prelu"}, build: func(g *gm) {
			x := nhwc(g)
			g.out(g.op("y", "Prelu", []string{x, g.c("a", []int64{2}, []float32{0.1, 0.3})}, nil))
		}},
		{name: "cast", ops: []string{"Cast"}, build: func(g *gm) {
			x := g.in("x", []int64{6}, []float32{-2.7, -0.5, 0, 0.4, 1.9, 3})
			g.out(g.op("i", "Cast", []string{x}, attrs{"DstT": aT("DT_INT32"), "SrcT": F}),
				g.op("b", "Cast", []string{x}, attrs{"DstT": aT("DT_BOOL"), "SrcT": F}))
		}},
		{name: "concatv2", ops: []string{"ConcatV2"}, build: func(g *gm) {
			a := g.in("a", []int64{2, 3}, vals(6, -1, 1, 1))
			b := g.in("b", []int64{2, 2}, vals(4, -1, 1, 2))
			g.out(g.op("y", "ConcatV2", []string{a, b, g.cs("axis", -1)}, attrs{"N": aI(2)}))
		}},
		{name: "expanddims", ops: []string{"ExpandDims"}, build: func(g *gm) {
			a := g.in("a", []int64{2, 3}, vals(6, -1, 1, 1))
			g.out(g.op("y", "ExpandDims", []string{a, g.cs("axis", -1)}, nil), g.op("z", "ExpandDims", []string{a, g.cs("axis1", 1)}, nil))
		}},
		{name: "gather_batch_dims", ops: []string{"GatherV2"}, build: func(g *gm) {
			p := g.in("p", []int64{2, 3, 4, 2}, vals(48, -1, 1, 1))
			i := g.ci("i", []int64{2, 2}, 2, 0, 1, 1)
			i3 := g.ci("i3", []int64{2, 3, 2}, 3, 0, 1, 1, 2, 0, 0, 3, 2, 2, 1, 0)
			g.out(g.op("b1a1", "GatherV2", []string{p, i, g.cs("a1", 1)}, attrs{"batch_dims": aI(1)}),
				g.op("b1a2", "GatherV2", []string{p, i, g.cs("a2", 2)}, attrs{"batch_dims": aI(1)}),
				g.op("b2a2", "GatherV2", []string{p, i3, g.cs("a3", 2)}, attrs{"batch_dims": aI(2)}),
				g.op("bneg", "GatherV2", []string{p, i3, g.cs("a4", -2)}, attrs{"batch_dims": aI(-1)}))
		}},
		{name: "gather", ops: []string{"Gather"}, build: func(g *gm) {
			a := g.in("a", []int64{4, 3}, vals(12, -1, 1, 1))
			g.out(g.op("y", "Gather", []string{a, g.ci("i", []int64{2, 2}, 3, 0, 1, 1)}, nil))
		}},
		{name: "reduce_keep", ops: []string{"Mean", "Min", "Prod", "Max", "Sum"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, 0.5, 1.5, 1))
			ax := g.ci1("ax", 0, -1)
			for _, op := range []string{"Mean", "Min", "Prod", "Max", "Sum"} {
				g.out(g.op(op+"_k", op, []string{x, ax}, attrs{"keep_dims": aB(true)}), g.op(op, op, []string{x, g.cs(op+"_ax", 1)}, attrs{"keep_dims": aB(false)}))
			}
		}},
		{name: "pad", ops: []string{"Pad", "PadV2", "MirrorPad"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3}, vals(6, -1, 1, 1))
			p := g.ci("p", []int64{2, 2}, 1, 0, 2, 1)
			g.out(g.op("pad", "Pad", []string{x, p}, nil), g.op("padv2", "PadV2", []string{x, p, g.cf("cv", 7)}, nil),
				g.op("reflect", "MirrorPad", []string{x, p}, attrs{"mode": aS("REFLECT")}), g.op("symmetric", "MirrorPad", []string{x, p}, attrs{"mode": aS("SYMMETRIC")}))
		}},
		{name: "reshape", ops: []string{"Reshape"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, -1, 1, 1))
			g.out(g.op("y", "Reshape", []string{x, g.ci1("s", 4, -1)}, nil))
		}},
		{name: "select", ops: []string{"Select", "SelectV2"}, build: func(g *gm) {
			c := g.input("c", canonicalBool([]int64{2, 3}, []byte{1, 0, 0, 1, 1, 0}))
			a := g.in("a", []int64{2, 3}, vals(6, -1, 1, 1))
			b := g.in("b", []int64{2, 3}, vals(6, -1, 1, 2))
			c3 := g.cb("c3", []int64{3}, true, false, true)
			g.out(g.op("s", "Select", []string{c, a, b}, nil), g.op("s2", "SelectV2", []string{c3, a, b}, nil))
		}},
		{name: "squeeze", ops: []string{"Squeeze"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 1, 3, 1}, vals(6, -1, 1, 1))
			g.out(g.op("y", "Squeeze", []string{x}, attrs{"squeeze_dims": aInts(1), "axis": aInts(1)}))
		}},
		{name: "transpose", ops: []string{"Transpose"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, -1, 1, 1))
			g.out(g.op("y", "Transpose", []string{x, g.ci1("p", 2, 0, 1)}, nil))
		}},
		{name: "if", ops: []string{"If"}, build: func(g *gm) {
			x := g.in("x", []int64{3}, vals(3, -1, 1, 1))
			c := boolIn(g, "c", false)
			th := g.fn(g.n("then"), [][2]string{{"a", "DT_FLOAT"}}, func() [][3]string {
				return [][3]string{{"out", g.op("e", "Exp", []string{"a"}, nil) + ":y:0", "DT_FLOAT"}}
			})
			el := g.fn(g.n("else"), [][2]string{{"a", "DT_FLOAT"}}, func() [][3]string {
				return [][3]string{{"out", g.op("n", "Neg", []string{"a"}, nil) + ":y:0", "DT_FLOAT"}}
			})
			cs := g.op("cs", "Squeeze", []string{c}, attrs{"squeeze_dims": aInts(0), "axis": aInts(0)})
			g.out(g.op("if", "If", []string{cs, x}, attrs{"then_branch": aFunc(th), "else_branch": aFunc(el), "Tcond": aT("DT_BOOL"), "Tin": aTypes("DT_FLOAT"), "Tout": aTypes("DT_FLOAT")}))
		}},
		{name: "noop", ops: []string{"NoOp"}, build: func(g *gm) {
			x := g.in("x", []int64{3}, vals(3, -1, 1, 1))
			n := g.op("n", "NoOp", nil, nil)
			g.out(g.op("y", "Identity", []string{x, "^" + n}, nil))
		}},
		{name: "pools", ops: []string{"MaxPool", "AvgPool"}, build: func(g *gm) {
			x := nhwc(g)
			for _, op := range []string{"MaxPool", "AvgPool"} {
				for _, pad := range []string{"SAME", "VALID"} {
					g.out(g.op(op+pad, op, []string{x}, attrs{"ksize": aInts(1, 3, 2, 1), "strides": aInts(1, 2, 1, 1), "padding": aS(pad), "data_format": aS("NHWC")}))
				}
			}
		}},
		{name: "depthwise", ops: []string{"DepthwiseConv2dNative", "FusedDepthwiseConv2dNative"}, build: func(g *gm) {
			x := nhwc(g)
			w := g.c("w", []int64{3, 3, 2, 2}, vals(36, -1, 1, 4))
			g.out(g.op("dw", "DepthwiseConv2dNative", []string{x, w}, attrs{"strides": aInts(1, 1, 1, 1), "padding": aS("SAME"), "dilations": aInts(1, 1, 1, 1), "data_format": aS("NHWC")}),
				g.op("fdw", "FusedDepthwiseConv2dNative", []string{x, w, g.c("b", []int64{4}, []float32{0.1, -0.2, 0.3, 0})},
					attrs{"strides": aInts(1, 2, 2, 1), "padding": aS("VALID"), "dilations": aInts(1, 1, 1, 1), "fused_ops": aStrs("BiasAdd", "Relu"), "num_args": aI(1), "data_format": aS("NHWC")}))
		}},
		{name: "fusedconv", ops: []string{"_FusedConv2D", "Conv2D"}, build: func(g *gm) {
			x := nhwc(g)
			w := g.c("w", []int64{3, 3, 2, 3}, vals(54, -1, 1, 4))
			g.out(g.op("conv", "Conv2D", []string{x, w}, attrs{"strides": aInts(1, 2, 2, 1), "padding": aS("SAME"), "dilations": aInts(1, 1, 1, 1), "data_format": aS("NHWC")}),
				g.op("fconv", "_FusedConv2D", []string{x, w, g.c("b", []int64{3}, []float32{0.1, -0.2, 0.3})},
					attrs{"strides": aInts(1, 1, 1, 1), "padding": aS("VALID"), "dilations": aInts(1, 1, 1, 1), "fused_ops": aStrs("BiasAdd", "Relu6"), "num_args": aI(1), "data_format": aS("NHWC")}))
		}},
		{name: "matmuls", ops: []string{"MatMul", "_FusedMatMul", "BatchMatMul", "BatchMatMulV2"}, build: func(g *gm) {
			a := g.in("a", []int64{3, 2}, vals(6, -1, 1, 1))
			b := g.c("b", []int64{4, 3}, vals(12, -1, 1, 2))
			x := g.in("x", []int64{2, 3, 4}, vals(24, -1, 1, 3))
			y := g.in("y", []int64{2, 3, 4}, vals(24, -1, 1, 4))
			g.out(g.op("mm", "MatMul", []string{a, b}, attrs{"transpose_a": aB(true), "transpose_b": aB(true)}),
				g.op("fmm", "_FusedMatMul", []string{a, b, g.c("bias", []int64{4}, []float32{1, 2, 3, 4})}, attrs{"transpose_a": aB(true), "transpose_b": aB(true), "fused_ops": aStrs("BiasAdd"), "num_args": aI(1)}),
				g.op("bmm", "BatchMatMul", []string{x, y}, attrs{"adj_y": aB(true)}),
				g.op("bmm2", "BatchMatMulV2", []string{x, y}, attrs{"adj_x": aB(true)}))
		}},
		{name: "batchnorm", ops: []string{"FusedBatchNorm", "FusedBatchNormV3"}, build: func(g *gm) {
			x := nhwc(g)
			s, o := g.c("s", []int64{2}, []float32{1.5, 0.5}), g.c("o", []int64{2}, []float32{0.1, -0.1})
			m, v := g.c("m", []int64{2}, []float32{0.2, -0.3}), g.c("v", []int64{2}, []float32{0.5, 2})
			g.out(g.op("bn", "FusedBatchNorm", []string{x, s, o, m, v}, attrs{"epsilon": aF(0.001), "is_training": aB(false)}),
				g.op("bn3", "FusedBatchNormV3", []string{x, s, o, m, v}, attrs{"epsilon": aF(0.01), "is_training": aB(false)}))
		}},
	}
	rows = append(rows, mathRows()...)
	rows = append(rows, shapeRows()...)
	rows = append(rows, convRows()...)
	rows = append(rows, randomRows()...)
	rows = append(rows, listRows()...)
	rows = append(rows, tf1Rows()...)
	rows = append(rows, sparseRows()...)
	rows = append(rows, tableRows()...)
	rows = append(rows, raggedRows()...)
	return rows
}

func mathRows() []opRow {
	rows := []opRow{
		unaryRow("acos", "Acos", -0.99, 0.99, nil),
		unaryRow("asin", "Asin", -0.99, 0.99, nil),
		unaryRow("atan", "Atan", -5, 5, nil),
		unaryRow("cos", "Cos", -4, 4, nil),
		unaryRow("cosh", "Cosh", -3, 3, nil),
		unaryRow("sin", "Sin", -4, 4, nil),
		unaryRow("sinh", "Sinh", -3, 3, nil),
		unaryRow("tan", "Tan", -1.4, 1.4, nil),
		unaryRow("asinh", "Asinh", -5, 5, nil),
		unaryRow("acosh", "Acosh", 1, 5, nil),
		unaryRow("atanh", "Atanh", -0.95, 0.95, nil),
		unaryRow("erf", "Erf", -3, 3, nil),
		unaryRow("expm1", "Expm1", -2, 2, nil),
		unaryRow("log1p", "Log1p", -0.9, 3, nil),
		{name: "sign_round", ops: []string{"Sign", "Round"}, build: func(g *gm) {
			x := g.in("x", []int64{10}, []float32{-2.5, -1.5, -0.5, 0, 0.5, 1.5, 2.5, 0.49, -3.7, 2.2})
			g.out(g.op("sign", "Sign", []string{x}, nil), g.op("round", "Round", []string{x}, nil))
		}},
		{name: "predicates", ops: []string{"IsNan", "IsInf", "IsFinite"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3}, []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, -2, 3e38})
			g.out(g.op("nan", "IsNan", []string{x}, nil), g.op("inf", "IsInf", []string{x}, nil), g.op("finite", "IsFinite", []string{x}, nil))
		}},
		{name: "addn", ops: []string{"AddN"}, build: func(g *gm) {
			a := nhwc(g)
			w := g.c("w", []int64{1, 1, 2, 2}, []float32{1, 0, 0, 1})
			conv := g.op("conv", "Conv2D", []string{a, w}, attrs{"strides": aInts(1, 1, 1, 1), "padding": aS("SAME"), "dilations": aInts(1, 1, 1, 1), "data_format": aS("NHWC")})
			b := g.in("b", []int64{1, 5, 5, 2}, vals(50, -1, 1, 7))
			g.out(g.op("sum3", "AddN", []string{conv, b, a}, attrs{"N": aI(3)}), g.op("sum1", "AddN", []string{b}, attrs{"N": aI(1)}))
		}},
		{name: "clipbyvalue", ops: []string{"ClipByValue"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, -3, 3, 1))
			g.out(g.op("y", "ClipByValue", []string{x, g.cf("lo", -1), g.cf("hi", 1.5)}, nil))
		}},
		{name: "floordiv_float", ops: []string{"FloorDiv", "FloorMod", "Mod"}, anyType: "TF.js's floorDiv of floats is int32; TF's (and the import's) is float", build: func(g *gm) {
			a := g.in("a", []int64{2, 3}, []float32{-7, 7, -5.5, 5.5, 3, -3})
			b := g.in("b", []int64{3}, []float32{2, -2, 1.5})
			g.out(g.op("fd", "FloorDiv", []string{a, b}, nil), g.op("fm", "FloorMod", []string{a, b}, nil), g.op("m", "Mod", []string{a, b}, nil))
		}},
		{name: "floordiv_int", ops: []string{"FloorDiv", "FloorMod", "Mod"}, build: func(g *gm) {
			a := g.inI("a", []int64{2, 3}, []int32{-7, 7, -5, 5, 6, -9})
			b := g.inI("b", []int64{3}, []int32{2, -2, 3})
			g.out(g.op("fd", "FloorDiv", []string{a, b}, nil), g.op("fm", "FloorMod", []string{a, b}, nil), g.op("m", "Mod", []string{a, b}, nil))
		}},
		{name: "divnonan", ops: []string{"DivNoNan"}, build: func(g *gm) {
			a := g.in("a", []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
			b := g.in("b", []int64{3}, []float32{2, 0, -4})
			g.out(g.op("y", "DivNoNan", []string{a, b}, nil))
		}},
		{name: "atan2", ops: []string{"Atan2"}, build: func(g *gm) {
			y := g.in("y", []int64{9}, []float32{1, 1, -1, -1, 0, 0, 0, 2, -2})
			x := g.in("x", []int64{9}, []float32{1, -1, 1, -1, 1, -1, 0, 0, 0})
			g.out(g.op("z", "Atan2", []string{y, x}, nil))
		}},
	}
	return rows
}

func shapeRows() []opRow {
	I := aT("DT_INT32")
	F := aT("DT_FLOAT")
	return []opRow{
		{name: "argminmax", ops: []string{"ArgMax", "ArgMin"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, -1, 1, 3))
			g.out(g.op("amax", "ArgMax", []string{x, g.cs("a0", -1)}, attrs{"output_type": aT("DT_INT32")}), g.op("amin", "ArgMin", []string{x, g.cs("a1", 1)}, nil))
		}},
		{name: "size_rank_shapen", ops: []string{"Size", "Rank", "ShapeN"}, anyType: "TF.js's ShapeN gives float32 shapes; TF's (and the import's) are out_type", build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, -1, 1, 3))
			y := g.in("y", []int64{5}, vals(5, -1, 1, 3))
			sn := g.op("sn", "ShapeN", []string{x, y}, attrs{"N": aI(2), "out_type": I})
			g.out(g.op("size", "Size", []string{x}, attrs{"out_type": I}), g.op("rank", "Rank", []string{x}, nil), sn, sn+":1")
		}},
		{name: "broadcast", ops: []string{"BroadcastTo", "BroadcastArgs"}, build: func(g *gm) {
			x := g.in("x", []int64{3, 1}, vals(3, -1, 1, 3))
			g.out(g.op("bt", "BroadcastTo", []string{x, g.ci1("s", 2, 3, 4)}, nil), g.op("ba", "BroadcastArgs", []string{g.ci1("s0", 3, 1), g.ci1("s1", 2, 1, 5)}, nil))
		}},
		{name: "fills", ops: []string{"OnesLike", "ZerosLike", "Ones", "Zeros"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3}, vals(6, -1, 1, 3))
			xi := g.inI("xi", []int64{4}, []int32{1, 2, 3, 4})
			g.out(g.op("ol", "OnesLike", []string{x}, attrs{"T": F, "dtype": F}), g.op("zl", "ZerosLike", []string{xi}, attrs{"T": I}),
				g.op("o", "Ones", []string{g.ci1("s", 2, 2)}, attrs{"T": F}), g.op("z", "Zeros", []string{g.ci1("s2", 3)}, attrs{"T": I}))
		}},
		{name: "linspace", ops: []string{"LinSpace"}, build: func(g *gm) {
			g.out(g.op("y", "LinSpace", []string{g.cf("a", -1), g.cf("b", 2), g.cs("n", 7)}, attrs{"T": F, "Tidx": I}))
		}},
		{name: "onehot", ops: []string{"OneHot"}, build: func(g *gm) {
			i := g.inI("i", []int64{2, 3}, []int32{0, 2, -1, 3, 1, 4})
			g.out(g.op("y", "OneHot", []string{i, g.cs("d", 4), g.cf("on", 5), g.cf("off", -1)}, attrs{"T": F, "axis": aI(-1)}))
		}},
		{name: "cumsum", ops: []string{"Cumsum"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, -1, 1, 3))
			for _, ex := range []bool{false, true} {
				for _, rv := range []bool{false, true} {
					g.out(g.op(fmt.Sprintf("cs_%v_%v", ex, rv), "Cumsum", []string{x, g.cs(fmt.Sprintf("a_%v_%v", ex, rv), 2)}, attrs{"exclusive": aB(ex), "reverse": aB(rv)}))
				}
			}
			g.out(g.op("cs1", "Cumsum", []string{x, g.cs("a1", 1)}, nil))
		}},
		{name: "cumprod", ops: []string{"Cumprod"}, tol: 1e-5, build: func(g *gm) {
			x := g.in("x", []int64{2, 5}, []float32{1.5, -2, 0.5, 0, 3, -1, -1.5, 2, 0.25, -4})
			for _, ex := range []bool{false, true} {
				for _, rv := range []bool{false, true} {
					g.out(g.op(fmt.Sprintf("cp_%v_%v", ex, rv), "Cumprod", []string{x, g.cs(fmt.Sprintf("a_%v_%v", ex, rv), 1)}, attrs{"exclusive": aB(ex), "reverse": aB(rv)}))
				}
			}
		}},
		{name: "reverse", ops: []string{"Reverse", "ReverseV2"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, -1, 1, 3))
			g.out(g.op("r2", "ReverseV2", []string{x, g.ci1("ax", -1, 0)}, nil), g.op("r", "Reverse", []string{x, g.cb("d", []int64{3}, false, true, false)}, nil))
		}},
		{name: "scatter", ops: []string{"ScatterNd", "TensorScatterUpdate"}, build: func(g *gm) {
			u := g.in("u", []int64{3, 4}, vals(12, -1, 1, 3))
			x := g.in("x", []int64{5, 4}, vals(20, -1, 1, 4))
			idx := g.ci("i", []int64{3, 1}, 4, 0, 2)
			g.out(g.op("snd", "ScatterNd", []string{idx, u, g.ci1("s", 5, 4)}, nil), g.op("tsu", "TensorScatterUpdate", []string{x, idx, u}, nil))
		}},
		{name: "sparsetodense", ops: []string{"SparseToDense"}, build: func(g *gm) {
			v := g.in("v", []int64{3}, []float32{1, 2, 3})
			g.out(g.op("y", "SparseToDense", []string{g.ci("i", []int64{3, 2}, 0, 1, 1, 2, 2, 0), g.ci1("s", 3, 4), v, g.cf("d", -1)}, nil),
				g.op("y1", "SparseToDense", []string{g.ci1("i1", 4, 1), g.ci1("s1", 6), g.cf("sv", 7), g.cf("d1", 0.5)}, nil))
		}},
		// TF.js 4.22 reads num_upper from input 1 (its op list gives
		// both bounds start 1), so the rows keep num_lower = num_upper.
		{name: "matrixbandpart", ops: []string{"MatrixBandPart"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 4, 5}, vals(40, -1, 1, 3))
			g.out(g.op("b", "MatrixBandPart", []string{x, g.cs("l", 1), g.cs("u", 1)}, nil), g.op("all", "MatrixBandPart", []string{x, g.cs("l2", -1), g.cs("u2", -1)}, nil),
				g.op("diag", "MatrixBandPart", []string{x, g.cs("l3", 0), g.cs("u3", 0)}, nil))
		}},
		{name: "depthtospace", ops: []string{"DepthToSpace"}, build: func(g *gm) {
			x := g.in("x", []int64{1, 2, 3, 8}, vals(48, -1, 1, 3))
			g.out(g.op("y", "DepthToSpace", []string{x}, attrs{"block_size": aI(2), "data_format": aS("NHWC")}))
		}},
		{name: "aliases", ops: []string{"DepthwiseConv2d", "FusedBatchNormV2"}, build: func(g *gm) {
			x := nhwc(g)
			w := g.c("w", []int64{2, 2, 2, 1}, vals(8, -1, 1, 4))
			s, o := g.c("s", []int64{2}, []float32{1.5, 0.5}), g.c("o", []int64{2}, []float32{0.1, -0.1})
			m, v := g.c("m", []int64{2}, []float32{0.2, -0.3}), g.c("v", []int64{2}, []float32{0.5, 2})
			g.out(g.op("dw", "DepthwiseConv2d", []string{x, w}, attrs{"strides": aInts(1, 1, 1, 1), "padding": aS("VALID"), "dilations": aInts(1, 1, 1, 1), "data_format": aS("NHWC")}),
				g.op("bn", "FusedBatchNormV2", []string{x, s, o, m, v}, attrs{"epsilon": aF(0.001), "is_training": aB(false)}))
		}},
		{name: "placeholderwithdefault", ops: []string{"PlaceholderWithDefault"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3}, vals(6, -1, 1, 1))
			d := g.op("d", "PlaceholderWithDefault", []string{g.c("dv", []int64{3}, []float32{1, 2, 3})}, attrs{"dtype": F, "shape": aShape(3)})
			g.out(g.op("y", "Mul", []string{x, d}, nil))
		}},
		{name: "concat_v1", ops: []string{"Concat"}, build: func(g *gm) {
			a := g.in("a", []int64{2, 3}, vals(6, -1, 1, 1))
			b := g.in("b", []int64{1, 3}, vals(3, -1, 1, 2))
			g.out(g.op("y", "Concat", []string{g.cs("ax", 0), a, b}, attrs{"N": aI(2)}))
		}},
		{name: "passthrough", ops: []string{"Print", "EnsureShape", "IdentityN"}, build: func(g *gm) {
			a := g.in("a", []int64{2, 3}, vals(6, -1, 1, 1))
			b := g.in("b", []int64{3}, vals(3, -1, 1, 2))
			idn := g.op("idn", "IdentityN", []string{a, b}, attrs{"T": aTypes("DT_FLOAT", "DT_FLOAT")})
			g.out(g.op("p", "Print", []string{a, b}, attrs{"message": aS("x"), "summarize": aI(3)}), g.op("es", "EnsureShape", []string{b, g.ci1("s", 3)}, nil), g.op("neg", "Neg", []string{idn + ":1"}, nil))
		}},
		{name: "allany", ops: []string{"All", "Any"}, build: func(g *gm) {
			x := g.input("x", canonicalBool([]int64{2, 3}, []byte{1, 1, 0, 0, 0, 0}))
			g.out(g.op("all", "All", []string{x, g.ci1("a", 1)}, attrs{"keep_dims": aB(false)}), g.op("any", "Any", []string{x, g.ci1("b", 1)}, attrs{"keep_dims": aB(true)}),
				g.op("all0", "All", []string{x, g.ci1("c", 0)}, nil))
		}},
		{name: "euclideannorm", ops: []string{"EuclideanNorm"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3, 4}, vals(24, -1, 1, 3))
			g.out(g.op("n", "EuclideanNorm", []string{x, g.ci1("a", 0, 2)}, attrs{"keep_dims": aB(true)}))
		}},
		{name: "unique", ops: []string{"Unique"}, build: func(g *gm) {
			x := g.in("x", []int64{8}, []float32{3, 1, 3, 2, 1, 5, 5, 0})
			u := g.op("u", "Unique", []string{x}, attrs{"out_idx": I})
			g.out(u, u+":1")
		}},
		{name: "uniquev2", ops: []string{"UniqueV2"}, build: func(g *gm) {
			x := g.inI("x", []int64{4, 2}, []int32{1, 2, 3, 4, 1, 2, 0, 0})
			u := g.op("u", "UniqueV2", []string{x, g.ci1("a", 0)}, attrs{"out_idx": I})
			g.out(u, u+":1")
		}},
		{name: "listdiff", ops: []string{"ListDiff"}, build: func(g *gm) {
			x := g.inI("x", []int64{6}, []int32{1, 2, 3, 4, 5, 6})
			y := g.inI("y", []int64{3}, []int32{1, 3, 5})
			d := g.op("d", "ListDiff", []string{x, y}, attrs{"out_idx": I})
			g.out(d, d+":1")
		}},
		{name: "bounds", ops: []string{"LowerBound", "UpperBound"}, build: func(g *gm) {
			s := g.in("s", []int64{2, 4}, []float32{1, 2, 2, 5, -1, 0, 3, 3})
			v := g.in("v", []int64{2, 3}, []float32{2, 0, 6, 3, -2, 0})
			g.out(g.op("lb", "LowerBound", []string{s, v}, attrs{"out_type": I}), g.op("ub", "UpperBound", []string{s, v}, attrs{"out_type": I}))
		}},
		{name: "bincount", ops: []string{"Bincount", "DenseBincount"}, build: func(g *gm) {
			x := g.inI("x", []int64{6}, []int32{1, 1, 3, 0, 7, 3})
			w := g.in("w", []int64{6}, []float32{0.5, 1, 2, 3, 4, 5})
			x2 := g.inI("x2", []int64{2, 3}, []int32{1, 1, 3, 0, 2, 2})
			g.out(g.op("bc", "Bincount", []string{x, g.cs("n", 5), w}, nil), g.op("bc0", "Bincount", []string{x, g.cs("n0", 5), g.c("e", []int64{0}, nil)}, nil),
				g.op("dbc", "DenseBincount", []string{x2, g.cs("n2", 4), g.c("e2", []int64{0}, nil)}, attrs{"binary_output": aB(true), "T": F, "Tidx": I}))
		}},
		{name: "nmsv2", ops: []string{"NonMaxSuppressionV2"}, build: func(g *gm) {
			b := g.in("b", []int64{4, 4}, []float32{0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 2, 1, 3, 0, 0.9, 1, 1.9})
			s := g.in("s", []int64{4}, []float32{0.9, 0.8, 0.7, 0.95})
			g.out(g.op("y", "NonMaxSuppressionV2", []string{b, s, g.cs("m", 3), g.cf("iou", 0.5)}, nil))
		}},
	}
}

func convRows() []opRow {
	conv := func(pad string, s int64) attrs {
		return attrs{"strides": aInts(1, s, s, 1), "padding": aS(pad), "data_format": aS("NHWC"), "dilations": aInts(1, 1, 1, 1)}
	}
	return []opRow{
		{name: "conv2dbackpropinput", ops: []string{"Conv2DBackpropInput"}, tol: 1e-4, build: func(g *gm) {
			dy := g.in("dy", []int64{1, 3, 3, 4}, vals(36, -1, 1, 3))
			w := g.c("w", []int64{3, 3, 2, 4}, vals(72, -1, 1, 4))
			g.out(g.op("same", "Conv2DBackpropInput", []string{g.ci1("s1", 1, 6, 6, 2), w, dy}, conv("SAME", 2)),
				g.op("same_odd", "Conv2DBackpropInput", []string{g.ci1("s2", 1, 5, 5, 2), w, dy}, conv("SAME", 2)),
				g.op("valid", "Conv2DBackpropInput", []string{g.ci1("s3", 1, 8, 8, 2), w, dy}, conv("VALID", 2)),
				g.op("valid1", "Conv2DBackpropInput", []string{g.ci1("s4", 1, 5, 5, 2), w, dy}, conv("VALID", 1)),
				// input_sizes packed from the batch size, as a free batch writes it.
				g.op("packed", "Conv2DBackpropInput", []string{g.op("sizes", "Pack", []string{
					g.op("batch", "StridedSlice", []string{g.op("shape", "Shape", []string{dy}, attrs{"out_type": aT("DT_INT32")}), g.ci1("b0", 0), g.ci1("e0", 1), g.ci1("st0", 1)}, attrs{"shrink_axis_mask": aI(1)}),
					g.cs("h", 6), g.cs("w6", 6), g.cs("c", 2)}, attrs{"N": aI(4), "axis": aI(0)}), w, dy}, conv("SAME", 2)))
		}},
		{name: "conv1d", ops: []string{"Conv1D"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 7, 3}, vals(42, -1, 1, 3))
			w := g.c("w", []int64{3, 3, 2}, vals(18, -1, 1, 4))
			g.out(g.op("same", "Conv1D", []string{x, w}, attrs{"stride": aI(2), "padding": aS("SAME"), "data_format": aS("NWC"), "dilation": aI(1)}),
				g.op("valid", "Conv1D", []string{x, w}, attrs{"stride": aI(1), "padding": aS("VALID"), "data_format": aS("NWC"), "dilation": aI(2)}))
		}},
		{name: "conv3d_pool3d", ops: []string{"Conv3D", "AvgPool3D", "MaxPool3D"}, tol: 1e-4, build: func(g *gm) {
			x := g.in("x", []int64{1, 4, 5, 5, 2}, vals(200, -1, 1, 3))
			w := g.c("w", []int64{2, 3, 3, 2, 3}, vals(108, -1, 1, 4))
			p3 := func(pad string) attrs {
				return attrs{"ksize": aInts(1, 2, 2, 3, 1), "strides": aInts(1, 1, 2, 2, 1), "padding": aS(pad), "data_format": aS("NDHWC")}
			}
			g.out(g.op("conv", "Conv3D", []string{x, w}, attrs{"strides": aInts(1, 1, 2, 1, 1), "padding": aS("SAME"), "data_format": aS("NDHWC"), "dilations": aInts(1, 1, 1, 1, 1)}),
				g.op("avg", "AvgPool3D", []string{x}, p3("SAME")), g.op("max", "MaxPool3D", []string{x}, p3("VALID")))
		}},
		// TF.js 4.22's CPU maxPoolWithArgmax labels its indexes int32
		// but fills them with float32 values: their bits are read back
		// as float32 before comparing.
		{name: "maxpoolwithargmax", ops: []string{"MaxPoolWithArgmax"}, check: func(t *testing.T, out string, got, want *canonical.Tensor) {
			if strings.HasSuffix(out, "_1") && want.DataType == canonical.Int32 {
				raw, _ := want.Bytes()
				want = canonical.NewTensor(want.Name, canonical.Float, want.Dims, raw)
			}
			compareValues(t, out, got, want, 1e-5, true)
		}, build: func(g *gm) {
			x := g.in("x", []int64{2, 4, 4, 3}, vals(96, -1, 1, 3))
			for _, b := range []bool{false, true} {
				m := g.op(fmt.Sprintf("mp_%v", b), "MaxPoolWithArgmax", []string{x}, attrs{"ksize": aInts(1, 2, 2, 1), "strides": aInts(1, 2, 2, 1), "padding": aS("VALID"), "include_batch_in_index": aB(b), "Targmax": aT("DT_INT32")})
				g.out(m, m+":1")
			}
		}},
		{name: "lrn", ops: []string{"LRN"}, tol: 1e-4, build: func(g *gm) {
			x := g.in("x", []int64{1, 3, 3, 6}, vals(54, -1, 1, 3))
			g.out(g.op("y", "LRN", []string{x}, attrs{"depth_radius": aI(2), "bias": aF(1.5), "alpha": aF(0.3), "beta": aF(0.75)}))
		}},
		{name: "spacetobatch", ops: []string{"SpaceToBatchND", "BatchToSpaceND"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 4, 3, 2}, vals(48, -1, 1, 3))
			stb := g.op("stb", "SpaceToBatchND", []string{x, g.ci1("b", 2, 2), g.ci("p", []int64{2, 2}, 0, 0, 1, 0)}, nil)
			g.out(stb, g.op("bts", "BatchToSpaceND", []string{stb, g.ci1("b2", 2, 2), g.ci("c", []int64{2, 2}, 1, 1, 0, 1)}, nil))
		}},
		{name: "cropandresize", ops: []string{"CropAndResize"}, tol: 1e-4, build: func(g *gm) {
			x := g.in("x", []int64{2, 5, 6, 2}, vals(120, -1, 1, 3))
			boxes := g.in("boxes", []int64{3, 4}, []float32{0, 0, 1, 1, 0.2, 0.1, 0.7, 0.9, -0.2, 0.3, 0.6, 1.3})
			ind := g.ci1("ind", 0, 1, 1)
			g.out(g.op("bil", "CropAndResize", []string{x, boxes, ind, g.ci1("cs", 3, 4)}, attrs{"method": aS("bilinear"), "extrapolation_value": aF(-5)}),
				g.op("one", "CropAndResize", []string{x, boxes, ind, g.ci1("cs1", 1, 2)}, attrs{"method": aS("bilinear"), "extrapolation_value": aF(0)}))
		}},
		{name: "dilation2d", ops: []string{"Dilation2D"}, build: func(g *gm) {
			x := g.in("x", []int64{1, 5, 6, 2}, vals(60, -1, 1, 3))
			w := g.c("w", []int64{2, 3, 2}, vals(12, -0.5, 0.5, 4))
			g.out(g.op("same", "Dilation2D", []string{x, w}, attrs{"strides": aInts(1, 1, 1, 1), "rates": aInts(1, 1, 1, 1), "padding": aS("SAME")}),
				g.op("valid", "Dilation2D", []string{x, w}, attrs{"strides": aInts(1, 1, 1, 1), "rates": aInts(1, 2, 1, 1), "padding": aS("VALID")}),
				g.op("same_s2", "Dilation2D", []string{x, w}, attrs{"strides": aInts(1, 2, 2, 1), "rates": aInts(1, 1, 1, 1), "padding": aS("SAME")}),
				g.op("valid_s2", "Dilation2D", []string{x, w}, attrs{"strides": aInts(1, 2, 3, 1), "rates": aInts(1, 1, 2, 1), "padding": aS("VALID")}))
		}},
		{name: "pad_computed", ops: []string{"Pad", "PadV2", "MirrorPad"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3}, vals(6, -1, 1, 1))
			p := g.inI("p", []int64{2, 2}, []int32{1, 0, 2, 1})
			g.out(g.op("pad", "Pad", []string{x, p}, nil), g.op("padv2", "PadV2", []string{x, p, g.cf("cv", 7)}, nil),
				g.op("reflect", "MirrorPad", []string{x, p}, attrs{"mode": aS("REFLECT")}))
		}},
	}
}

// sameDistribution compares the values of a random op's output with
// TF.js's draw: same shape, both inside [lo, hi], means within 6
// standard errors and standard deviations within 4% of each other (the
// generators differ, so values cannot match).
func sameDistribution(lo, hi float64) func(t *testing.T, out string, got, want *canonical.Tensor) {
	return func(t *testing.T, out string, got, want *canonical.Tensor) {
		t.Helper()
		if fmt.Sprint(got.Dims) != fmt.Sprint(want.Dims) {
			t.Fatalf("%s: shape %v, TF.js %v", out, got.Dims, want.Dims)
		}
		stats := func(v []float64) (float64, float64) {
			m, s := 0.0, 0.0
			for _, x := range v {
				m += x
			}
			m /= float64(len(v))
			for _, x := range v {
				s += (x - m) * (x - m)
			}
			return m, math.Sqrt(s / float64(len(v)))
		}
		g, w := asFloat64(t, got), asFloat64(t, want)
		for _, x := range g {
			if x < lo || x > hi || math.IsNaN(x) {
				t.Fatalf("%s: value %g outside [%g, %g]", out, x, lo, hi)
			}
		}
		mg, sg := stats(g)
		mw, sw := stats(w)
		se := sw / math.Sqrt(float64(len(w)))
		if math.Abs(mg-mw) > 6*se*math.Sqrt2 || math.Abs(sg-sw) > 0.04*sw {
			t.Errorf("%s: mean %.4f std %.4f, TF.js mean %.4f std %.4f", out, mg, sg, mw, sw)
		}
		t.Logf("%s: mean %.4f std %.4f, TF.js mean %.4f std %.4f (%d values)", out, mg, sg, mw, sw, len(w))
	}
}

func randomRows() []opRow {
	F := aT("DT_FLOAT")
	I := aT("DT_INT32")
	return []opRow{
		{name: "random_uniform", ops: []string{"RandomUniform"}, check: sameDistribution(-2, 3), build: func(g *gm) {
			g.out(g.op("u", "RandomUniform", []string{g.ci1("s", 100, 100)}, attrs{"dtype": F, "minval": aF(-2), "maxval": aF(3), "seed": aI(0), "T": I}))
		}},
		{name: "random_normal", ops: []string{"RandomStandardNormal"}, check: sameDistribution(-10, 10), build: func(g *gm) {
			g.out(g.op("n", "RandomStandardNormal", []string{g.ci1("s", 100, 100)}, attrs{"dtype": F, "seed": aI(0), "T": I}))
		}},
		{name: "truncated_normal", ops: []string{"TruncatedNormal"}, check: sameDistribution(1-2*0.5, 1+2*0.5), build: func(g *gm) {
			g.out(g.op("n", "TruncatedNormal", []string{g.ci1("s", 100, 100)}, attrs{"dtype": F, "seed": aI(0), "T": I, "means": aF(1), "stddev": aF(0.5)}))
		}},
		{name: "random_uniform_int", ops: []string{"RandomUniformInt"}, check: sameDistribution(3, 11), build: func(g *gm) {
			g.out(g.op("u", "RandomUniformInt", []string{g.ci1("s", 100, 100), g.cs("lo", 3), g.cs("hi", 12)}, attrs{"minval": aI(3), "maxval": aI(12), "seed": aI(0), "Tout": I, "T": I}))
		}},
		{name: "multinomial", ops: []string{"Multinomial"}, check: sameDistribution(0, 3), build: func(g *gm) {
			l := g.c("l", []int64{2, 4}, []float32{0, 1, 2, -1, 1, 1, 0.5, -3})
			g.out(g.op("m", "Multinomial", []string{l, g.cs("k", 5000)}, attrs{"seed": aI(0), "seed2": aI(0), "T": F, "output_dtype": I}))
		}},
		{name: "complex_fft", ops: []string{"Complex", "Real", "Imag", "ComplexAbs", "FFT", "IFFT"}, tol: 1e-4, build: func(g *gm) {
			re := g.in("re", []int64{2, 8}, vals(16, -1, 1, 3))
			im := g.in("im", []int64{2, 8}, vals(16, -1, 1, 4))
			z := g.op("z", "Complex", []string{re, im}, attrs{"T": F, "Tout": aT("DT_COMPLEX64")})
			f := g.op("f", "FFT", []string{z}, attrs{"Tcomplex": aT("DT_COMPLEX64")})
			fi := g.op("fi", "IFFT", []string{f}, attrs{"Tcomplex": aT("DT_COMPLEX64")})
			g.out(g.op("f_re", "Real", []string{f}, attrs{"Tout": F}), g.op("f_im", "Imag", []string{f}, attrs{"Tout": F}),
				g.op("abs", "ComplexAbs", []string{z}, attrs{"Tout": F}), g.op("back", "Real", []string{fi}, attrs{"Tout": F}), g.op("back_im", "Imag", []string{fi}, attrs{"Tout": F}))
		}},
		// TF.js 4.22 ignores fft_length (RFFT transforms the whole
		// innermost axis, IRFFT returns 2·(m−1) values), so the rows use
		// the lengths it implies.
		{name: "rfft", ops: []string{"RFFT", "IRFFT"}, tol: 1e-4, build: func(g *gm) {
			x := g.in("x", []int64{2, 8}, vals(16, -1, 1, 3))
			r := g.op("r", "RFFT", []string{x, g.ci1("n", 8)}, attrs{"Treal": F, "Tcomplex": aT("DT_COMPLEX64")})
			x6 := g.in("x6", []int64{3, 6}, vals(18, -1, 1, 5))
			r6 := g.op("r6", "RFFT", []string{x6, g.ci1("n6", 6)}, attrs{"Treal": F, "Tcomplex": aT("DT_COMPLEX64")})
			g.out(g.op("r_re", "Real", []string{r}, attrs{"Tout": F}), g.op("r_im", "Imag", []string{r}, attrs{"Tout": F}),
				g.op("r6_abs", "ComplexAbs", []string{r6}, attrs{"Tout": F}),
				g.op("ir", "IRFFT", []string{r, g.ci1("m", 8)}, attrs{"Treal": F, "Tcomplex": aT("DT_COMPLEX64")}),
				g.op("ir6", "IRFFT", []string{r6, g.ci1("m6", 6)}, attrs{"Treal": F, "Tcomplex": aT("DT_COMPLEX64")}))
		}},
		// TF.js runs FakeQuantWithMinMaxVars as an identity (its
		// executor says the op is ignored): the row feeds values on
		// the quantization grid inside the range, where TF's
		// quantization leaves them unchanged too.
		{name: "fakequant", ops: []string{"FakeQuantWithMinMaxVars"}, tol: 1e-5, build: func(g *gm) {
			v := make([]float32, 12)
			for i := range v {
				v[i] = float32(i*20-100) * 6 / 255
			}
			x := g.in("x", []int64{12}, v)
			g.out(g.op("q", "FakeQuantWithMinMaxVars", []string{x, g.cf("lo", -6), g.cf("hi", 6)}, attrs{"min": aF(-6), "max": aF(6), "num_bits": aI(8)}))
		}},
	}
}

func listRows() []opRow {
	F := aT("DT_FLOAT")
	I := aT("DT_INT32")
	el := attrs{"element_dtype": F, "shape_type": I}
	return []opRow{
		// A TF2 loop over a TensorList: while i < 5, item i of the list
		// made from x is set as item 4−i of a reserved list, and its
		// doubled sum added to an accumulator; the list is stacked after
		// the loop. (TF.js 4.22 disposes every tensor a While body
		// computes, so the items stored are the ones read, not new ones.)
		{name: "tensorlist_while", ops: []string{"TensorListReserve", "TensorListFromTensor", "TensorListGetItem", "TensorListSetItem", "TensorListStack", "TensorListLength", "StatelessWhile", "While"}, build: func(g *gm) {
			x := g.in("x", []int64{5, 3}, vals(15, -1, 1, 3))
			es := g.ci1("es", 3)
			res := g.op("res", "TensorListReserve", []string{es, g.cs("n", 5)}, el)
			xs := g.op("xs", "TensorListFromTensor", []string{x, es}, el)
			args := [][2]string{{"i", "DT_INT32"}, {"l", "DT_VARIANT"}, {"s", "DT_VARIANT"}, {"acc", "DT_FLOAT"}}
			cond := g.fn(g.n("cond"), args, func() [][3]string {
				lt := g.op("lt", "Less", []string{"i", g.cs("five", 5) + ":output:0"}, attrs{"T": I})
				return [][3]string{{"out", lt + ":z:0", "DT_BOOL"}}
			})
			body := g.fn(g.n("body"), args, func() [][3]string {
				item := g.op("item", "TensorListGetItem", []string{"s", "i", g.ci1("shape", 3) + ":output:0"}, el)
				at := g.op("at", "Sub", []string{g.cs("four", 4) + ":output:0", "i"}, attrs{"T": I})
				set := g.op("set", "TensorListSetItem", []string{"l", at + ":z:0", item + ":item:0"}, el)
				dbl := g.op("dbl", "Mul", []string{item + ":item:0", g.cf("two", 2) + ":output:0"}, attrs{"T": F})
				sum := g.op("sum", "Sum", []string{dbl + ":z:0", g.cs("ax", 0) + ":output:0"}, attrs{"T": F, "keep_dims": aB(false)})
				acc := g.op("accn", "AddV2", []string{"acc", sum + ":output:0"}, attrs{"T": F})
				next := g.op("next", "AddV2", []string{"i", g.cs("one", 1) + ":output:0"}, attrs{"T": I})
				return [][3]string{{"i_out", next + ":z:0", "DT_INT32"}, {"l_out", set + ":output_handle:0", "DT_VARIANT"}, {"s_out", "s", "DT_VARIANT"}, {"acc_out", acc + ":z:0", "DT_FLOAT"}}
			})
			T := aTypes("DT_INT32", "DT_VARIANT", "DT_VARIANT", "DT_FLOAT")
			w := g.op("w", "StatelessWhile", []string{g.cs("i0", 0), res, xs, g.cf("acc0", 0.5)}, attrs{"T": T, "cond": aFunc(cond), "body": aFunc(body), "parallel_iterations": aI(10)})
			w2 := g.op("w2", "While", []string{g.cs("i1", 2), res, xs, g.cf("acc1", 0)}, attrs{"T": T, "cond": aFunc(cond), "body": aFunc(body), "parallel_iterations": aI(10)})
			g.out(g.op("stack", "TensorListStack", []string{w + ":1", es}, attrs{"element_dtype": F, "num_elements": aI(-1)}),
				g.op("len", "TensorListLength", []string{w + ":1"}, nil), w, w+":3", w2+":3")
		}},
		{name: "tensorlist_ops", ops: []string{"EmptyTensorList", "TensorListPushBack", "TensorListGather", "TensorListScatter", "TensorListScatterV2", "TensorListSplit", "TensorListConcat", "TensorListConcatV2", "TensorListResize"}, build: func(g *gm) {
			x := g.in("x", []int64{4, 2}, vals(8, -1, 1, 3))
			es := g.ci1("es", 2)
			e := g.op("e", "EmptyTensorList", []string{es, g.cs("max", -1)}, el)
			a := g.op("a", "TensorListPushBack", []string{e, g.op("x0", "StridedSlice", []string{x, g.ci1("b0", 0), g.ci1("e0", 1), g.ci1("s0", 1)}, attrs{"shrink_axis_mask": aI(1), "Index": I})}, el)
			b := g.op("b", "TensorListPushBack", []string{a, g.op("x3", "StridedSlice", []string{x, g.ci1("b3", 3), g.ci1("e3", 4), g.ci1("s3", 1)}, attrs{"shrink_axis_mask": aI(1), "Index": I})}, el)
			sc := g.op("sc", "TensorListScatter", []string{x, g.ci1("idx", 2, 0, 3, 1), es}, el)
			sc2 := g.op("sc2", "TensorListScatterV2", []string{x, g.ci1("idx2", 3, 1, 0, 2), es, g.cs("ne", 4)}, el)
			sp := g.op("sp", "TensorListSplit", []string{x, g.ci1("es0", 2), g.ci1("lens", 1, 1, 1, 1)}, el)
			rs := g.op("rs", "TensorListResize", []string{sc, g.cs("size", 2)}, nil)
			g.out(g.op("pushed", "TensorListStack", []string{b, es}, attrs{"element_dtype": F, "num_elements": aI(-1)}), g.op("len_b", "TensorListLength", []string{b}, nil),
				g.op("gather", "TensorListGather", []string{sc, g.ci1("gi", 3, 0), es}, el),
				g.op("stack2", "TensorListStack", []string{sc2, es}, attrs{"element_dtype": F, "num_elements": aI(-1)}),
				g.op("cat", "TensorListConcat", []string{sc}, attrs{"element_dtype": F, "element_shape": aShape(2)}),
				g.op("cat2", "TensorListConcatV2", []string{sc2, g.ci1("es2", 2), g.cs("lz", 0)}, attrs{"element_dtype": F, "shape_type": I, "element_shape": aShape(2)}),
				// TF.js gives a split list the element shape of one row
				// and cannot read its items back (it reshapes them to
				// it): the row compares the list's length only.
				g.op("split_len", "TensorListLength", []string{sp}, nil),
				g.op("resized", "TensorListStack", []string{rs, es}, attrs{"element_dtype": F, "num_elements": aI(-1)}))
		}},
		// TF1 TensorArrays, written and read outside a loop: the flow
		// orders reads after writes.
		{name: "tensorarray", ops: []string{"TensorArrayV3", "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayGatherV3", "TensorArrayScatterV3", "TensorArrayConcatV3", "TensorArraySplitV3", "TensorArraySizeV3", "TensorArrayCloseV3"}, build: func(g *gm) {
			x := g.in("x", []int64{3, 2}, vals(6, -1, 1, 3))
			y := g.in("y", []int64{2}, vals(2, -1, 1, 4))
			ta := g.op("ta", "TensorArrayV3", []string{g.cs("n", 4)}, attrs{"dtype": F, "element_shape": aShape(2), "dynamic_size": aB(false), "clear_after_read": aB(false), "identical_element_shapes": aB(true), "tensor_array_name": aS("")})
			sc := g.op("sc", "TensorArrayScatterV3", []string{ta, g.ci1("idx", 2, 0, 1), x, ta + ":1"}, attrs{"T": F})
			wr := g.op("wr", "TensorArrayWriteV3", []string{ta, g.cs("three", 3), y, sc}, attrs{"T": F})
			rd := g.op("rd", "TensorArrayReadV3", []string{ta, g.cs("zero", 0), wr}, attrs{"dtype": F})
			ga := g.op("ga", "TensorArrayGatherV3", []string{ta, g.ci1("gi", 3, 2, 0), wr}, attrs{"dtype": F, "element_shape": aShape(2)})
			sz := g.op("sz", "TensorArraySizeV3", []string{ta, wr}, nil)
			ta2 := g.op("ta2", "TensorArrayV3", []string{g.cs("n2", 2)}, attrs{"dtype": F, "element_shape": aShape(-1, 2), "dynamic_size": aB(false), "clear_after_read": aB(false), "identical_element_shapes": aB(false), "tensor_array_name": aS("")})
			spl := g.op("spl", "TensorArraySplitV3", []string{ta2, x, g.ci1("lens", 2, 1), ta2 + ":1"}, attrs{"T": F})
			cat := g.op("cat", "TensorArrayConcatV3", []string{ta2, spl}, attrs{"dtype": F, "element_shape_except0": aShape(2)})
			neg := g.op("neg", "Neg", []string{rd}, nil)
			cl := g.op("close", "TensorArrayCloseV3", []string{ta, "^" + neg, "^" + ga, "^" + sz}, nil)
			g.out(neg, ga, g.op("size", "Identity", []string{sz, "^" + cl}, nil), cat)
		}},
		// Lists and TensorArrays with no item, of a known element shape,
		// gather to zero rows (issue 40: the TF1 loop after a
		// NonMaxSuppression that kept no box); ONNX's ConcatFromSequence
		// refuses an empty sequence. (TF.js 4.22's TensorListStack of an
		// empty list fails, "Pass at least one tensor to tf.stack", where
		// TF gives zero rows, as the mapping does.)
		{name: "empty_lists", ops: []string{"TensorArrayV3", "TensorArrayGatherV3", "EmptyTensorList", "TensorListGather"}, build: func(g *gm) {
			x := g.in("x", []int64{3, 2}, vals(6, -1, 1, 5))
			es := g.ci1("es", 2)
			none := g.ci("none", []int64{0})
			ta := g.op("ta", "TensorArrayV3", []string{g.cs("n", 0)}, attrs{"dtype": F, "element_shape": aShape(2), "dynamic_size": aB(false), "clear_after_read": aB(true), "identical_element_shapes": aB(true), "tensor_array_name": aS("")})
			ga := g.op("ga", "TensorArrayGatherV3", []string{ta, none, ta + ":1"}, attrs{"dtype": F, "element_shape": aShape(2)})
			e := g.op("e", "EmptyTensorList", []string{es, g.cs("max", -1)}, el)
			lg := g.op("lg", "TensorListGather", []string{e, none, es}, el)
			g.out(ga, lg, g.op("cat", "ConcatV2", []string{x, ga, lg, g.cs("axis", 0)}, attrs{"N": aI(3)}))
		}},
	}
}

// tf1Loop adds a TF1 while frame (tf.while_loop with control flow v1):
// i, acc = 0, x; while i < limit: i, acc = i + 1, tanh(acc @ w); with a
// TensorArray written at i each iteration (its flow a loop variable),
// stacked after the loop.
func tf1Loop(g *gm, x string, limit int32, withCond bool) []string {
	I, F := aT("DT_INT32"), aT("DT_FLOAT")
	frame := aS(g.n("while/while_context"))
	enter := func(name, in string, constant bool, t map[string]any) string {
		return g.op(name, "Enter", []string{in}, attrs{"T": t, "frame_name": frame, "is_constant": aB(constant), "parallel_iterations": aI(10)})
	}
	w := g.c("w", []int64{3, 3}, vals(9, -0.9, 0.9, 7))
	ta := g.op("ta", "TensorArrayV3", []string{g.cs("ta_size", limit)}, attrs{"dtype": F, "element_shape": aShape(-1, 3), "dynamic_size": aB(false), "clear_after_read": aB(true), "identical_element_shapes": aB(true), "tensor_array_name": aS("")})
	e0 := enter("while/Enter", g.cs("i0", 0), false, I)
	e1 := enter("while/Enter_1", x, false, F)
	e2 := enter("while/Enter_2", w, true, F)
	e3 := enter("while/Enter_3", g.cs("limit", limit), true, I)
	e4 := enter("while/Enter_4", ta+":1", false, F)
	e5 := enter("while/Enter_5", ta, true, aT("DT_RESOURCE"))
	m0 := g.op("while/Merge", "Merge", []string{e0, g.n("while/NextIteration")}, attrs{"T": I, "N": aI(2)})
	m1 := g.op("while/Merge_1", "Merge", []string{e1, g.n("while/NextIteration_1")}, attrs{"T": F, "N": aI(2)})
	m2 := g.op("while/Merge_2", "Merge", []string{e4, g.n("while/NextIteration_2")}, attrs{"T": F, "N": aI(2)})
	less := g.op("while/Less", "Less", []string{m0, e3}, attrs{"T": I})
	lc := g.op("while/LoopCond", "LoopCond", []string{less}, nil)
	s0 := g.op("while/Switch", "Switch", []string{m0, lc}, attrs{"T": I})
	s1 := g.op("while/Switch_1", "Switch", []string{m1, lc}, attrs{"T": F})
	s2 := g.op("while/Switch_2", "Switch", []string{m2, lc}, attrs{"T": F})
	id0 := g.op("while/Identity", "Identity", []string{s0 + ":1"}, attrs{"T": I})
	id1 := g.op("while/Identity_1", "Identity", []string{s1 + ":1"}, attrs{"T": F})
	id2 := g.op("while/Identity_2", "Identity", []string{s2 + ":1"}, attrs{"T": F})
	one := g.op("while/add/y", "Const", []string{"^" + id0}, attrs{"dtype": I, "value": {"tensor": map[string]any{"dtype": "DT_INT32", "tensorShape": map[string]any{}}}})
	g.weights = append(g.weights, map[string]any{"name": one, "shape": []int64{}, "dtype": "int32"})
	g.data = append(g.data, []byte{1, 0, 0, 0})
	add := g.op("while/add", "AddV2", []string{id0, one}, attrs{"T": I})
	mm := g.op("while/MatMul", "MatMul", []string{id1, e2}, attrs{"T": F, "transpose_a": aB(false), "transpose_b": aB(false)})
	th := g.op("while/Tanh", "Tanh", []string{mm}, attrs{"T": F})
	if withCond {
		// acc = i < 2 ? tanh(acc @ w) : 0.5·acc + 1, a TF1 conditional
		// in the body; the else branch's constants hang on its pivot.
		two := g.op("while/cond/two", "Const", []string{"^" + id0}, attrs{"dtype": I, "value": {"tensor": map[string]any{"dtype": "DT_INT32", "tensorShape": map[string]any{}}}})
		g.weights = append(g.weights, map[string]any{"name": two, "shape": []int64{}, "dtype": "int32"})
		g.data = append(g.data, []byte{2, 0, 0, 0})
		pred := g.op("while/cond/pred", "Less", []string{id0, two}, attrs{"T": I})
		swT := g.op("while/cond/Switch", "Switch", []string{th, pred}, attrs{"T": F})
		swA := g.op("while/cond/Switch_1", "Switch", []string{id1, pred}, attrs{"T": F})
		pf := g.op("while/cond/switch_f", "Identity", []string{swA}, attrs{"T": F})
		half := g.op("while/cond/half", "Const", []string{"^" + pf}, attrs{"dtype": F, "value": {"tensor": map[string]any{"dtype": "DT_FLOAT", "tensorShape": map[string]any{}}}})
		g.weights = append(g.weights, map[string]any{"name": half, "shape": []int64{}, "dtype": "float32"})
		g.data = append(g.data, []byte{0, 0, 0, 0x3f})
		onef := g.op("while/cond/one", "Const", []string{"^" + pf}, attrs{"dtype": F, "value": {"tensor": map[string]any{"dtype": "DT_FLOAT", "tensorShape": map[string]any{}}}})
		g.weights = append(g.weights, map[string]any{"name": onef, "shape": []int64{}, "dtype": "float32"})
		g.data = append(g.data, []byte{0, 0, 0x80, 0x3f})
		els := g.op("while/cond/else", "AddV2", []string{g.op("while/cond/scaled", "Mul", []string{swA, half}, attrs{"T": F}), onef}, attrs{"T": F})
		th = g.op("while/cond/Merge", "Merge", []string{els, swT + ":1"}, attrs{"T": F, "N": aI(2)})
	}
	wr := g.op("while/TensorArrayWrite", "TensorArrayWriteV3", []string{e5, id0, th, id2}, attrs{"T": F})
	g.op("while/NextIteration", "NextIteration", []string{add}, attrs{"T": I})
	g.op("while/NextIteration_1", "NextIteration", []string{th}, attrs{"T": F})
	g.op("while/NextIteration_2", "NextIteration", []string{wr}, attrs{"T": F})
	x0 := g.op("while/Exit", "Exit", []string{s0}, attrs{"T": I})
	x1 := g.op("while/Exit_1", "Exit", []string{s1}, attrs{"T": F})
	x2 := g.op("while/Exit_2", "Exit", []string{s2}, attrs{"T": F})
	st := g.op("stacked", "TensorArrayGatherV3", []string{ta, g.op("range", "Range", []string{g.cs("r0", 0), g.op("size", "TensorArraySizeV3", []string{ta, x2}, nil), g.cs("r1", 1)}, attrs{"Tidx": I}), x2}, attrs{"dtype": F, "element_shape": aShape(-1, 3)})
	return []string{g.op("count", "Identity", []string{x0}, attrs{"T": I}), g.op("y", "Identity", []string{x1}, attrs{"T": F}), st}
}

// tf1Cond adds a TF1 conditional: exp(x)·c if sum(x) > 0 else −x, c a
// constant of the then branch (anchored by a control input, as tf.cond
// writes them).
func tf1Cond(g *gm, x string) []string {
	F := aT("DT_FLOAT")
	sum := g.op("cond/sum", "Sum", []string{x, g.ci1("cond/axes", 0, 1)}, attrs{"T": F, "keep_dims": aB(false)})
	pred := g.op("cond/pred", "Greater", []string{sum, g.cf("cond/zero", 0)}, attrs{"T": F})
	sw := g.op("cond/Switch", "Switch", []string{x, pred}, attrs{"T": F})
	pt := g.op("cond/switch_t", "Identity", []string{sw + ":1"}, attrs{"T": F})
	c := g.op("cond/c", "Const", []string{"^" + pt}, attrs{"dtype": F, "value": {"tensor": map[string]any{"dtype": "DT_FLOAT", "tensorShape": map[string]any{}}}})
	g.weights = append(g.weights, map[string]any{"name": c, "shape": []int64{}, "dtype": "float32"})
	g.data = append(g.data, []byte{0, 0, 0x40, 0x40}) // 3.0
	t := g.op("cond/then", "Mul", []string{g.op("cond/exp", "Exp", []string{sw + ":1"}, attrs{"T": F}), c}, attrs{"T": F})
	e := g.op("cond/else", "Neg", []string{sw}, attrs{"T": F})
	m := g.op("cond/Merge", "Merge", []string{e, t}, attrs{"T": F, "N": aI(2)})
	return []string{m} // TF.js gives Merge no value_index output
}

func tf1Rows() []opRow {
	return []opRow{
		{name: "tf1_while", ops: []string{"Enter", "Merge", "Switch", "LoopCond", "NextIteration", "Exit", "TensorArrayWriteV3"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3}, []float32{0.3, -0.2, 0.9, 1.5, 0.01, -0.7})
			g.out(tf1Loop(g, x, 3, false)...)
		}},
		{name: "tf1_while_cond", ops: []string{"Enter", "Merge", "Switch", "LoopCond", "NextIteration", "Exit"}, build: func(g *gm) {
			x := g.in("x", []int64{2, 3}, []float32{0.3, -0.2, 0.9, 1.5, 0.01, -0.7})
			g.out(tf1Loop(g, x, 4, true)...)
		}},
		{name: "tf1_cond_then", ops: []string{"Switch", "Merge"}, build: func(g *gm) {
			g.out(tf1Cond(g, g.in("x", []int64{2, 3}, vals(6, -0.5, 1, 3)))...)
		}},
		{name: "tf1_cond_else", ops: []string{"Switch", "Merge"}, build: func(g *gm) {
			g.out(tf1Cond(g, g.in("x", []int64{2, 3}, vals(6, -1, 0.2, 3)))...)
		}},
	}
}

func sparseRows() []opRow {
	return []opRow{
		{name: "sparsesegment", ops: []string{"SparseSegmentSum", "SparseSegmentMean"}, build: func(g *gm) {
			d := g.in("d", []int64{4, 3}, vals(12, -1, 1, 3))
			idx := g.ci1("idx", 0, 1, 3, 2, 1)
			seg := g.ci1("seg", 0, 0, 2, 2, 3)
			g.out(g.op("sum", "SparseSegmentSum", []string{d, idx, seg}, nil), g.op("mean", "SparseSegmentMean", []string{d, idx, seg}, nil))
		}},
		{name: "sparsereshape", ops: []string{"SparseReshape"}, build: func(g *gm) {
			idx := g.inI("idx", []int64{3, 2}, []int32{0, 0, 1, 2, 2, 3})
			r := g.op("r", "SparseReshape", []string{idx, g.ci1("s", 3, 4), g.ci1("ns", 2, -1)}, nil)
			r2 := g.op("r2", "SparseReshape", []string{idx, g.ci1("s2", 3, 4), g.ci1("ns2", 2, 3, 2)}, nil)
			g.out(r, r+":1", r2)
		}},
	}
}

func tableRows() []opRow {
	I := aT("DT_INT32")
	F := aT("DT_FLOAT")
	table := func(g *gm, name, op string, vt map[string]any) string {
		return g.op(name, op, nil, attrs{"shared_name": aS(g.n(name)), "use_node_name_sharing": aB(false), "key_dtype": I, "value_dtype": vt})
	}
	return []opRow{
		// A TF2 table (V2 ops) filled in the modelInitializer graph, as
		// tensorflowjs_converter writes one.
		{name: "hashtable_v2", ops: []string{"HashTableV2", "LookupTableImportV2", "LookupTableFindV2", "LookupTableSizeV2"}, build: func(g *gm) {
			g.initGraph(func() {
				t := table(g, "table", "HashTableV2", F)
				g.op("import", "LookupTableImportV2", []string{t, g.ci1("keys", 3, 7, -2, 10), g.c("values", []int64{4}, []float32{0.5, -1, 2.5, 9})}, attrs{"Tin": I, "Tout": F})
			})
			t := table(g, "table", "HashTableV2", F)
			// 1-D keys: TF.js flattens the result (TF keeps the keys' shape).
			k := g.inI("k", []int64{6}, []int32{7, 3, 4, 10, -2, 0})
			g.out(g.op("find", "LookupTableFindV2", []string{t, k, g.cf("default", -7)}, attrs{"Tin": I, "Tout": F}), g.op("size", "LookupTableSizeV2", []string{t}, nil))
		}},
		// A TF1 table (V1 ops) filled in the graph itself, as a frozen
		// GraphDef holds it.
		{name: "hashtable_v1", ops: []string{"HashTable", "InitializeTable", "LookupTableFind", "LookupTableSize", "InitializeTableV2", "LookupTableImport"}, build: func(g *gm) {
			t := table(g, "table", "HashTable", I)
			in := g.op("init", "InitializeTable", []string{t, g.ci1("keys", 1, 2, 5), g.ci1("values", 10, 20, 50)}, attrs{"Tkey": I, "Tval": I})
			t2 := table(g, "table2", "HashTable", I)
			in2 := g.op("init2", "InitializeTableV2", []string{t2, g.ci1("keys2", 4, 6), g.ci1("values2", 40, 60)}, attrs{"Tkey": I, "Tval": I})
			t3 := table(g, "table3", "HashTable", I)
			in3 := g.op("init3", "LookupTableImport", []string{t3, g.ci1("keys3", 8), g.ci1("values3", 80)}, attrs{"Tin": I, "Tout": I})
			k := g.inI("k", []int64{5}, []int32{5, 1, 3, 2, 6})
			g.out(g.op("find", "LookupTableFind", []string{t, k, g.cs("default", -1), "^" + in}, attrs{"Tin": I, "Tout": I}),
				g.op("find2", "LookupTableFind", []string{t2, k, g.cs("default2", 0), "^" + in2}, attrs{"Tin": I, "Tout": I}),
				g.op("find3", "LookupTableFind", []string{t3, k, g.cs("default3", 0), "^" + in3}, attrs{"Tin": I, "Tout": I}),
				g.op("size", "LookupTableSize", []string{t, "^" + in}, nil))
		}},
	}
}

func raggedRows() []opRow {
	I := aT("DT_INT32")
	F := aT("DT_FLOAT")
	return []opRow{
		// The ragged ops: TF.js 4.22's Node bundle does not dispatch them
		// in graph models, so tfjs-core's kernels (tf.raggedRange, …) on
		// the same values are the reference.
		{name: "raggedrange", ops: []string{"RaggedRange"}, jsRef: `
			const r = tf.raggedRange(tf.tensor1d([0, 5, 2], 'int32'), tf.tensor1d([3, 5, 8], 'int32'), tf.tensor1d([1, 1, 3], 'int32'));
			const f = tf.raggedRange(tf.scalar(0.5), tf.tensor1d([2, 3.1]), tf.scalar(0.5));
			return [r.rtNestedSplits, r.rtDenseValues, f.rtNestedSplits, f.rtDenseValues];`, build: func(g *gm) {
			r := g.op("r", "RaggedRange", []string{g.ci1("st", 0, 5, 2), g.ci1("lim", 3, 5, 8), g.ci1("d", 1, 1, 3)}, attrs{"T": I, "Tsplits": I})
			st := g.in("st_f", []int64{}, []float32{0.5})
			rf := g.op("rf", "RaggedRange", []string{st, g.c("lim_f", []int64{2}, []float32{2, 3.1}), g.cf("d_f", 0.5)}, attrs{"T": F, "Tsplits": I})
			g.out(r, r+":1", rf, rf+":1")
		}},
		{name: "raggedtotensor", ops: []string{"RaggedTensorToTensor"}, jsRef: `
			const v = tf.tensor1d([1, 2, 3, 4, 5, 6]);
			const s = tf.tensor1d([0, 2, 2, 5, 6], 'int32');
			return [
				tf.raggedTensorToTensor(tf.tensor1d([-1, -1], 'int32'), v, tf.scalar(0), [s], ['ROW_SPLITS']),
				tf.raggedTensorToTensor(tf.tensor1d([5, 4], 'int32'), v, tf.scalar(-1), [s], ['ROW_SPLITS']),
				tf.raggedTensorToTensor(tf.tensor1d([-1, 3], 'int32'), v, tf.scalar(9), [tf.scalar(4, 'int32'), tf.tensor1d([0, 0, 2, 2, 2, 3], 'int32')], ['FIRST_DIM_SIZE', 'VALUE_ROWIDS'])];`, build: func(g *gm) {
			v := g.in("v", []int64{6}, []float32{1, 2, 3, 4, 5, 6})
			a := attrs{"T": F, "Tindex": I, "Tshape": I, "num_row_partition_tensors": aI(1), "row_partition_types": aStrs("ROW_SPLITS")}
			a2 := attrs{"T": F, "Tindex": I, "Tshape": I, "num_row_partition_tensors": aI(2), "row_partition_types": aStrs("FIRST_DIM_SIZE", "VALUE_ROWIDS")}
			g.out(g.op("t", "RaggedTensorToTensor", []string{g.ci1("s", -1, -1), v, g.cf("dv", 0), g.ci1("splits", 0, 2, 2, 5, 6)}, a),
				g.op("t2", "RaggedTensorToTensor", []string{g.ci1("s2", 5, 4), v, g.cf("dv2", -1), g.ci1("splits2", 0, 2, 2, 5, 6)}, a),
				g.op("t3", "RaggedTensorToTensor", []string{g.ci1("s3", -1, 3), v, g.cf("dv3", 9), g.cs("nrows", 4), g.ci1("rowids", 0, 0, 2, 2, 2, 3)}, a2))
		}},
		{name: "raggedgather", ops: []string{"RaggedGather"}, jsRef: `
			const r = tf.raggedGather([tf.tensor1d([0, 2, 2, 5, 6], 'int32')], tf.tensor1d([1, 2, 3, 4, 5, 6]), tf.tensor1d([3, 0, 2, 1], 'int32'), 1);
			return [r.outputNestedSplits[0], r.outputDenseValues];`, build: func(g *gm) {
			v := g.in("v", []int64{6}, []float32{1, 2, 3, 4, 5, 6})
			r := g.op("r", "RaggedGather", []string{g.ci1("splits", 0, 2, 2, 5, 6), v, g.ci1("idx", 3, 0, 2, 1)}, attrs{"Tvalues": F, "Tindices": I, "Tsplits": I, "PARAMS_RAGGED_RANK": aI(1), "OUTPUT_RAGGED_RANK": aI(1)})
			g.out(r, r+":1")
		}},
		{name: "sparsefillemptyrows", ops: []string{"SparseFillEmptyRows"}, build: func(g *gm) {
			v := g.in("v", []int64{4}, []float32{1, 2, 3, 4})
			r := g.op("r", "SparseFillEmptyRows", []string{g.ci("idx", []int64{4, 2}, 0, 1, 0, 3, 2, 2, 2, 0), v, g.ci1("shape", 4, 4), g.cf("dv", -1)}, attrs{"T": F})
			g.out(r, r+":1", r+":2", r+":3")
		}},
		{name: "imageprojectivetransform", ops: []string{"ImageProjectiveTransformV3"}, tol: 1e-4, build: func(g *gm) {
			// One image: TF.js 4.22's CPU kernel returns after the first
			// image of a batch (the others keep the fill value).
			x := g.in("x", []int64{1, 5, 6, 2}, vals(60, -1, 1, 3))
			tr := g.in("tr", []int64{1, 8}, []float32{1.1, 0.2, -0.4, 0.1, 0.9, 0.3, 0.01, 0.02})
			for _, m := range []string{"BILINEAR", "NEAREST"} {
				for _, f := range []string{"CONSTANT", "NEAREST"} {
					g.out(g.op(m+"_"+f, "ImageProjectiveTransformV3", []string{x, tr, g.ci1("os"+m+f, 4, 5), g.cf("fill"+m+f, 0.5)}, attrs{"interpolation": aS(m), "fill_mode": aS(f), "dtype": F}))
				}
			}
		}},
	}
}
