package tflite

import (
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	rt "github.com/onnxconv/onnxconv/runtimes/tflite"
)

// ONNX int64 tensors (token ids in, ids + 1 and an ArgMax out, as a
// transformer encoder has them) are INT32 in the file, which
// LiteRT.js runs (it refuses INT64: "Element type INT64 is not
// supported"); the runtime casts the int64 inputs. LiteRT.js alone
// computes what the executor computes from the ONNX model.
func TestInt64AsInt32InLiteRT(t *testing.T) {
	testpaths.Node(t, rt.Package, rt.LiteRTPackage)
	m := parseModel(t, `<ir_version: 8, opset_import: ["" : 17]>
g (int64[2,5] ids, float[2,5,4] h) => (float[2,5,4] y, int64[2,5] pos, int64[2] am) {
  e = Gather (tab, ids)
  y = Add (e, h)
  one = Constant <value: tensor = int64 {1}> ()
  pos = Add (ids, one)
  ax = Constant <value: tensor = int64[1] {2}> ()
  s = ReduceSum <keepdims: int = 0> (y, ax)
  am = ArgMax <axis: int = 1, keepdims: int = 0> (s)
}`)
	fillInits(t, m, 0.9, map[string][]int64{"tab": {10, 4}})
	m, err := canonical.FromProto(mustProto(t, m), "")
	if err != nil {
		t.Fatal(err)
	}
	_, path := exportFile(t, m)
	ids := canonical.Int64Tensor("ids", []int64{2, 5}, []int64{3, 0, 9, 4, 4, 1, 7, 2, 8, 5})
	hv := make([]float64, 40)
	for i := range hv {
		hv[i] = float64(i%7)*0.3 - 1
	}
	h := f32Tensor("h", []int64{2, 5, 4}, hv)
	want := runExec(t, m, []*canonical.Tensor{ids, h})
	got, err := runTFLiteWith(t, tfliteEnv(t), path, []*onnxpb.TensorProto{protoOf(t, ids, "ids"), protoOf(t, h, "h")}, rt.Options{Interpreters: []rt.Interpreter{rt.LiteRT}})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		g, err := canonical.TensorFromProto(got.Outputs[i])
		if err != nil {
			t.Fatal(err)
		}
		if e := maxRel(t, floatsOf(t, g), floatsOf(t, w)); e != 0 {
			t.Errorf("output %s: %v, want %v (max rel err %.3g)", w.Name, floatsOf(t, g), floatsOf(t, w), e)
		}
	}
	t.Logf("%s: %d outputs equal to the executor's", got.Build, len(want))
}
