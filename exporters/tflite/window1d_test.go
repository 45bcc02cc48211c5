package tflite

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestConv1D exports one-op (or few-op) ONNX models of 1-D convolutions
// and pools ([N,C,W] inputs: CONV_2D / DEPTHWISE_CONV_2D / the 2-D pools on
// the [N,1,W,C] view), runs each in the TFLite interpreter and compares it
// with the ONNX source on the executor (checkInInterpreter; the file is
// also re-imported), and checks which builtins were written.
func TestConv1D(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		inits map[string][]int64
		x     []int64
		ops   map[string]int // builtins the file must have (count)
	}{
		{"plain/stride2_dilation2_pads", `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,20] x) => (float[2,5,10] y) {
  y = Conv <strides: ints = [2], dilations: ints = [2], pads: ints = [2,1]> (x, w, b)
}`, map[string][]int64{"w": {5, 3, 3}, "b": {5}}, []int64{2, 3, 20}, map[string]int{"CONV_2D": 1, "PAD": 1, "TRANSPOSE": 0}},
		{"plain/same_upper_relu", `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1,32] x) => (float[1,4,16] y) {
  c = Conv <auto_pad: string = "SAME_UPPER", strides: ints = [2]> (x, w)
  y = Relu (c)
}`, map[string][]int64{"w": {4, 1, 5}}, []int64{1, 1, 32}, map[string]int{"CONV_2D": 1, "RELU": 0}},
		{"depthwise/mult2_stride_dilation", `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4,17] x) => (float[2,8,8] y) {
  y = Conv <group: int = 4, strides: ints = [2], dilations: ints = [2], pads: ints = [1,1]> (x, w, b)
}`, map[string][]int64{"w": {8, 1, 3}, "b": {8}}, []int64{2, 4, 17}, map[string]int{"DEPTHWISE_CONV_2D": 1}},
		{"depthwise/valid", `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,6,12] x) => (float[1,6,8] y) {
  y = Conv <group: int = 6> (x, w)
}`, map[string][]int64{"w": {6, 1, 5}}, []int64{1, 6, 12}, map[string]int{"DEPTHWISE_CONV_2D": 1}},
		{"grouped/2", `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4,10] x) => (float[1,6,10] y) {
  y = Conv <group: int = 2, pads: ints = [1,1]> (x, w, b)
}`, map[string][]int64{"w": {6, 2, 3}, "b": {6}}, []int64{1, 4, 10}, map[string]int{"SPLIT": 1, "CONV_2D": 2, "CONCATENATION": 1}},
		{"chain/conv_relu_maxpool_avgpool", `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,24] x) => (float[2,4,6] y) {
  c = Conv <pads: ints = [1,1]> (x, w, b)
  r = Relu (c)
  p = MaxPool <kernel_shape: ints = [3], strides: ints = [2], pads: ints = [1,1]> (r)
  y = AveragePool <kernel_shape: ints = [2], strides: ints = [2]> (p)
}`, map[string][]int64{"w": {4, 3, 3}, "b": {4}}, []int64{2, 3, 24}, map[string]int{"CONV_2D": 1, "MAX_POOL_2D": 1, "AVERAGE_POOL_2D": 1, "TRANSPOSE": 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := parseModel(t, c.src)
			fillInits(t, m, 0.8, c.inits)
			n, _ := canonical.NumElements(c.x)
			f := make([]float64, n)
			for i := range f {
				f[i] = math.Sin(float64(i)*1.37) * 2
			}
			rep := checkInInterpreter(t, m, []*canonical.Tensor{f32Tensor("x", c.x, f)}, 1e-5)
			for op, want := range c.ops {
				if got := rep.Ops[op]; got != want {
					t.Errorf("%s: %d in the file, want %d (ops %v)", op, got, want, rep.Ops)
				}
			}
		})
	}
}

// TestConv1DInt8: a 1-D conv + depthwise conv + max pool model exported
// full-integer (calibrated on 32 generated samples) and run in the
// interpreter on 4 held samples, against the float model on the executor
// (max error relative to the largest output <= 0.05):
// the RESHAPEs around the 2-D ops share their quantization.
func TestConv1DInt8(t *testing.T) {
	env := tfliteEnv(t)
	m := parseModel(t, `<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,32] x) => (float[1,8,16] y) {
  c = Conv <pads: ints = [1,1]> (x, w, b)
  r = Relu (c)
  d = Conv <group: int = 8, pads: ints = [2,2], dilations: ints = [2]> (r, wd)
  y = MaxPool <kernel_shape: ints = [2], strides: ints = [2]> (d)
}`)
	fillInits(t, m, 0.8, map[string][]int64{"w": {8, 3, 3}, "b": {8}, "wd": {8, 1, 3}})
	m2, err := canonical.FromProto(mustProto(t, m), "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Export(context.Background(), m2, Options{Int8: true, Calibration: genSamples(t, m2, 0, 32)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", res.Report.Summary())
	if res.Report.Int8 == nil || len(res.Report.Int8.Float) != 0 {
		t.Errorf("int8 report %+v, want every op int8", res.Report.Int8)
	}
	path := filepath.Join(t.TempDir(), "m.tflite")
	if err := os.WriteFile(path, res.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	held := genSamples(t, m2, 1000, 4)
	got := runTFLiteMany(t, env, path, res.Report, held)
	for i, s := range held {
		want := runExec(t, m2, s)[0]
		e := maxRel(t, got[i], floatsOf(t, want))
		t.Logf("sample %d: max error %.3g relative to the largest output", i, e)
		if e > 0.05 {
			t.Errorf("sample %d: max relative error %.3g > 0.05 (int8)", i, e)
		}
	}
}
