package tflite

import (
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestExportOps exports one-op (or few-op) ONNX models, runs each in the
// TFLite interpreter and compares every output with the ONNX source on the
// executor (checkInInterpreter; the file is also re-imported).
func TestExportOps(t *testing.T) {
	type input struct {
		name string
		dims []int64
	}
	cases := []struct {
		name  string
		src   string
		inits map[string][]int64
		ins   []input
	}{
		{"InstanceNormalization/after_conv", `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,8,8] x) => (float[1,4,8,8] y) {
  c = Conv <pads: ints = [1,1,1,1]> (x, w)
  y = InstanceNormalization <epsilon: float = 0.001> (c, s, b)
}`, map[string][]int64{"w": {4, 3, 3, 3}, "s": {4}, "b": {4}}, []input{{"x", []int64{1, 3, 8, 8}}}},
		{"InstanceNormalization/rank3", `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,10] x) => (float[2,3,10] y) {
  y = InstanceNormalization (x, s, b)
}`, map[string][]int64{"s": {3}, "b": {3}}, []input{{"x", []int64{2, 3, 10}}}},
		{"GroupNormalization", `<ir_version: 10, opset_import: ["" : 21]>
g (float[1,6,5,5] x) => (float[1,6,5,5] y) {
  y = GroupNormalization <num_groups: int = 3, epsilon: float = 0.0001> (x, s, b)
}`, map[string][]int64{"s": {6}, "b": {6}}, []input{{"x", []int64{1, 6, 5, 5}}}},
		{"ConvTranspose/output_padding_unet", `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4,5,6] x) => (float[1,3,10,12] y) {
  y = ConvTranspose <strides: ints = [2,2], pads: ints = [1,1,1,1], output_padding: ints = [1,1]> (x, w, b)
}`, map[string][]int64{"w": {4, 3, 3, 3}, "b": {3}}, []input{{"x", []int64{1, 4, 5, 6}}}},
		{"ConvTranspose/output_padding_no_pads", `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,4,3] x) => (float[1,3,10,7] y) {
  y = ConvTranspose <strides: ints = [2,2], output_padding: ints = [1,0]> (x, w)
}`, map[string][]int64{"w": {2, 3, 3, 3}}, []input{{"x", []int64{1, 2, 4, 3}}}},
		{"Split/sizes", `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,10] x) => (float[2,3] a, float[2,7] b) {
  sp = Constant <value: tensor = int64[2] {3, 7}> ()
  a, b = Split <axis: int = 1> (x, sp)
}`, nil, []input{{"x", []int64{2, 10}}}},
		{"Split/equal_after_conv", `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,6,6] x) => (float[1,2,6,6] a, float[1,2,6,6] b) {
  c = Conv <pads: ints = [1,1,1,1]> (x, w)
  a, b = Split <axis: int = 1> (c)
}`, map[string][]int64{"w": {4, 3, 3, 3}}, []input{{"x", []int64{1, 3, 6, 6}}}},
		{"TopK", `<ir_version: 8, opset_import: ["" : 17]>
g (float[3,12] x) => (float[3,4] v, int64[3,4] i) {
  k = Constant <value: tensor = int64[1] {4}> ()
  v, i = TopK (x, k)
}`, nil, []input{{"x", []int64{3, 12}}}},
		{"Where/Greater", `<ir_version: 8, opset_import: ["" : 17]>
g (float[4,5] x, float[4,5] z) => (float[4,5] y) {
  c = Greater (x, z)
  y = Where (c, x, z)
}`, nil, []input{{"x", []int64{4, 5}}, {"z", []int64{4, 5}}}},
		{"Where/broadcast_const", `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4,4] x) => (float[2,4,4] y) {
  m = Constant <value: tensor = bool[4,4] {0,1,1,1, 0,0,1,1, 0,0,0,1, 0,0,0,0}> ()
  f = Constant <value: tensor = float {-1000}> ()
  y = Where (m, f, x)
}`, nil, []input{{"x", []int64{2, 4, 4}}}},
		{"Expand", `<ir_version: 8, opset_import: ["" : 17]>
g (float[3,1] x) => (float[2,3,4] y) {
  s = Constant <value: tensor = int64[3] {2, 1, 4}> ()
  y = Expand (x, s)
}`, nil, []input{{"x", []int64{3, 1}}}},
		{"Tile", `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[4,9] y) {
  r = Constant <value: tensor = int64[2] {2, 3}> ()
  y = Tile (x, r)
}`, nil, []input{{"x", []int64{2, 3}}}},
		{"Cast/float_int32_float", `<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4] x) => (float[3,4] y) {
  s = Mul (x, k)
  i = Cast <to: int = 6> (s)
  y = Cast <to: int = 1> (i)
}`, map[string][]int64{"k": {}}, []input{{"x", []int64{3, 4}}}},
		{"CumSum", `<ir_version: 8, opset_import: ["" : 17]>
g (float[3,6] x) => (float[3,6] a, float[3,6] b) {
  ax = Constant <value: tensor = int64 {1}> ()
  a = CumSum (x, ax)
  b = CumSum <exclusive: int = 1, reverse: int = 1> (x, ax)
}`, nil, []input{{"x", []int64{3, 6}}}},
		{"GatherND", `<ir_version: 8, opset_import: ["" : 17]>
g (float[4,5,3] x) => (float[3,3] y) {
  i = Constant <value: tensor = int64[3,2] {0,1, 3,4, 2,0}> ()
  y = GatherND (x, i)
}`, nil, []input{{"x", []int64{4, 5, 3}}}},
		{"ArgMax/keepdims", `<ir_version: 8, opset_import: ["" : 17]>
g (float[3,7] x) => (int64[3,1] a, int64[7] b) {
  a = ArgMax <axis: int = 1> (x)
  b = ArgMin <axis: int = 0, keepdims: int = 0> (x)
}`, nil, []input{{"x", []int64{3, 7}}}},
		{"Sum", `<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4] x, float[3,4] z) => (float[3,4] y) {
  y = Sum (x, z, k)
}`, map[string][]int64{"k": {4}}, []input{{"x", []int64{3, 4}}, {"z", []int64{3, 4}}}},
		{"Comparisons/logical", `<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4] x, float[3,4] z) => (bool[3,4] y) {
  a = Less (x, z)
  b = GreaterOrEqual (x, k)
  c = Equal (a, b)
  d = Or (a, b)
  e = And (c, d)
  y = Not (e)
}`, map[string][]int64{"k": {4}}, []input{{"x", []int64{3, 4}}, {"z", []int64{3, 4}}}},
		{"Einsum/common_forms", `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x, float[2,4,5] z, float[2,6,3,4] q, float[2,6,5,4] k) => (float[2,3,5] a, float[2,6,3,5] b, float[3,2] c, float[4,2,3] d, float[2,3] e) {
  a = Einsum <equation: string = "bij,bjk->bik"> (x, z)
  b = Einsum <equation: string = "bhid,bhjd->bhij"> (q, k)
  c = Einsum <equation: string = "bij,j->ib"> (x, v)
  d = Einsum <equation: string = "bij->jbi"> (x)
  e = Einsum <equation: string = "bij->bi"> (x)
}`, map[string][]int64{"v": {4}}, []input{{"x", []int64{2, 3, 4}}, {"z", []int64{2, 4, 5}}, {"q", []int64{2, 6, 3, 4}}, {"k", []int64{2, 6, 5, 4}}}},
		{"Erf/torch_gelu", `<ir_version: 8, opset_import: ["" : 17]>
g (float[4,8] x) => (float[4,8] y) {
  a = Div (x, r2)
  e = Erf (a)
  p = Add (e, one)
  m = Mul (x, p)
  y = Mul (m, half)
}`, nil, []input{{"x", []int64{4, 8}}}},
		{"Reduce/L1_L2_SumSquare_LogSum_LogSumExp", `<ir_version: 8, opset_import: ["" : 18]>
g (float[3,5,4] x) => (float[3,1,4] a, float[3,4] b, float[3,5,1] c, float[1,1,4] d, float[3,4] e) {
  ax = Constant <value: tensor = int64[1] {1}> ()
  a = ReduceL1 (x, ax)
  b = ReduceL2 <keepdims: int = 0> (x, ax)
  ax2 = Constant <value: tensor = int64[1] {2}> ()
  c = ReduceSumSquare (x, ax2)
  sq = Mul (x, x)
  ax01 = Constant <value: tensor = int64[2] {0, 1}> ()
  d = ReduceLogSum (sq, ax01)
  e = ReduceLogSumExp <keepdims: int = 0> (x, ax)
}`, nil, []input{{"x", []int64{3, 5, 4}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := parseModel(t, c.src)
			fillInits(t, m, 0.8, c.inits)
			if c.name == "Erf/torch_gelu" {
				for name, v := range map[string]float64{"r2": math.Sqrt2, "one": 1, "half": 0.5} {
					if _, err := m.Graph.AddInitializer(f32Tensor(name, nil, []float64{v})); err != nil {
						t.Fatal(err)
					}
				}
			}
			var ins []*canonical.Tensor
			for k, in := range c.ins {
				n, _ := canonical.NumElements(in.dims)
				f := make([]float64, n)
				for i := range f {
					f[i] = math.Sin(float64(i)*1.37+float64(k)*0.5) * 2
				}
				ins = append(ins, f32Tensor(in.name, in.dims, f))
			}
			checkInInterpreter(t, m, ins, 1e-5)
		})
	}
}
