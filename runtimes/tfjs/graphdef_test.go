package tfjs

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/formats/tensorflow"
	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func typed(name string, dt onnxpb.TensorProto_DataType, dims []int64, v ...int64) *onnxpb.TensorProto {
	var b []byte
	for _, x := range v {
		switch dt {
		case onnxpb.TensorProto_INT64:
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		case onnxpb.TensorProto_INT32:
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		case onnxpb.TensorProto_UINT8:
			b = append(b, byte(x))
		}
	}
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(dt)), Dims: dims, RawData: b}
}

func int32s(tp *onnxpb.TensorProto) []int64 {
	raw := tp.GetRawData()
	out := make([]int64, len(raw)/4)
	for i := range out {
		out[i] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	return out
}

// TensorFlow SavedModel folders (TF2, tf.function signatures, variables
// in the bundle) run in TF.js as graph models written from their frozen
// GraphDef, and compute what TensorFlow itself computed for tfjs-node's
// tests (tfjs_node_saved_model_test.ts.expected_values: the C library's
// outputs on the inputs there), outputs in the signature's order.
func TestTensorFlowSavedModelsMatchTensorFlow(t *testing.T) {
	e := env(t)
	i32 := onnxpb.TensorProto_INT32
	cases := []struct {
		dir    string
		inputs []*onnxpb.TensorProto
		want   [][]float32
	}{
		{"tfjs_node_times_three_float", []*onnxpb.TensorProto{f32("x", []int64{3}, 1, 2, 3)}, [][]float32{{3, 6, 9}}},
		{"tfjs_node_module_with_multiple_signatures", []*onnxpb.TensorProto{f32("x", []int64{3}, 1, 2, 3)}, [][]float32{{3, 6, 9}}},
		{"tfjs_node_times_two_int", []*onnxpb.TensorProto{typed("x", i32, []int64{3}, 1, 2, 3)}, [][]float32{{2, 4, 6}}},
		{"tfjs_node_int64_multiply", []*onnxpb.TensorProto{typed("x", onnxpb.TensorProto_INT64, []int64{2}, 3, 4)}, [][]float32{{18, 24}}},
		{"tfjs_node_uint8_multiply", []*onnxpb.TensorProto{typed("x", onnxpb.TensorProto_UINT8, []int64{}, 3)}, [][]float32{{18}}},
		{"tfjs_node_model_single_input_multi_output", []*onnxpb.TensorProto{typed("x", i32, []int64{3}, 1, 2, 3)}, [][]float32{{2, 4, 6}, {1, 2, 3}}},
		{"tfjs_node_model_multi_output", []*onnxpb.TensorProto{typed("x", i32, []int64{3}, 1, 2, 3), typed("y", i32, []int64{3}, 1, 2, 3)}, [][]float32{{2, 4, 6}, {1, 2, 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			dir := testpaths.Shared(t, "models", "tf_savedmodel", tc.dir)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := Run(ctx, e, dir, tc.inputs)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != "graph-model" || len(res.Outputs) != len(tc.want) {
				t.Fatalf("%s with %d outputs, want a graph model with %d", res.Kind, len(res.Outputs), len(tc.want))
			}
			for k, o := range res.Outputs {
				var got []float32
				if o.GetDataType() == int32(onnxpb.TensorProto_FLOAT) {
					got = values(o)
				} else {
					for _, v := range int32s(o) {
						got = append(got, float32(v))
					}
				}
				near(t, got, tc.want[k])
			}
		})
	}
}

// The graph the importer chose is the one TF.js runs: the SavedModel's
// "timestwo" signature (recorded in the imported model's metadata under
// tensorflow.OptionsKey) computes what TensorFlow computed for it in
// tfjs-node's test, [1,2,3] -> [2,4,6], where serving_default triples.
func TestTensorFlowSignatureChosen(t *testing.T) {
	e := env(t)
	dir := testpaths.Shared(t, "models", "tf_savedmodel", "tfjs_node_module_with_multiple_signatures")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for sig, want := range map[string][]float32{"timestwo": {2, 4, 6}, "": {3, 6, 9}} {
		opts, err := tensorflow.MarshalOptions(tensorflow.Options{Signature: sig})
		if err != nil {
			t.Fatal(err)
		}
		s, err := open(ctx, e, dir, graphChoice{options: opts})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(ctx, []*onnxpb.TensorProto{f32("x", []int64{3}, 1, 2, 3)})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		near(t, values(res.Outputs[0]), want)
	}
}

// The same TF1 regression model (pred = W*X + b) as tf2onnx's tests hold
// it three ways: the frozen GraphDef TensorFlow wrote (W and b folded into
// constants by TensorFlow), the SavedModel folder and the TF1 checkpoint
// (W and b read from their tensor bundles, the checkpoint's graph cut at
// the tensors named, or at its inference part when none are: it has no
// signature and trains). TF.js computes the same outputs from all three
// on tf2onnx's ramp input.
func TestTensorFlowRegressionThreeWays(t *testing.T) {
	e := env(t)
	x := f32("X", []int64{4}, 0, 0.25, 0.5, 0.75)
	run := func(path string, in, out []string) []float32 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		s, err := open(ctx, e, path, graphChoice{inputs: in, outputs: out})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.Run(ctx, []*onnxpb.TensorProto{x})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Outputs) != 1 {
			t.Fatalf("%s: %d outputs", path, len(res.Outputs))
		}
		return values(res.Outputs[0])
	}
	frozen := run(testpaths.Shared(t, "models", "tf_graphdef", "tf2onnx_regression", "frozen.pb"), nil, nil)
	saved := run(testpaths.Shared(t, "models", "tf_savedmodel", "tf2onnx_regression"), nil, nil)
	ckpt := run(testpaths.Shared(t, "models", "tf_checkpoint", "tf2onnx_regression", "model.meta"), []string{"X"}, []string{"pred"})
	if frozen[0] == frozen[1] {
		t.Fatalf("frozen graph outputs %v do not depend on X", frozen)
	}
	near(t, saved, frozen)
	near(t, ckpt, frozen)
	// Without the tensors named, the checkpoint's graph, which trains,
	// gives its inference part (X → pred): the same outputs.
	near(t, run(testpaths.Shared(t, "models", "tf_checkpoint", "tf2onnx_regression", "model.meta"), nil, nil), frozen)
}

// A graph with ops TF.js has no kernel for is refused before node starts,
// every such op named at once (an *unsupported.OpsError of stage run).
// It needs no Node.
func TestTensorFlowOpsTFJSLacks(t *testing.T) {
	f := &tfpb.AttrValue{Value: &tfpb.AttrValue_Type{Type: tfpb.DataType_DT_FLOAT}}
	gd := &tfpb.GraphDef{Node: []*tfpb.NodeDef{
		{Name: "x", Op: "Placeholder", Attr: map[string]*tfpb.AttrValue{"dtype": f}},
		{Name: "g", Op: "PreventGradient", Input: []string{"x"}, Attr: map[string]*tfpb.AttrValue{"T": f}},
		{Name: "d", Op: "Digamma", Input: []string{"g"}, Attr: map[string]*tfpb.AttrValue{"T": f}},
		{Name: "y", Op: "Relu", Input: []string{"d"}, Attr: map[string]*tfpb.AttrValue{"T": f}},
	}}
	b, err := proto.Marshal(gd)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "frozen.pb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), Env{}, p)
	var ue *unsupported.OpsError
	if !errors.As(err, &ue) || ue.Stage != unsupported.StageRun || len(ue.Ops) != 2 {
		t.Fatalf("got %v, want the two ops TF.js lacks", err)
	}
	if _, ok := ue.ByOp()["PreventGradient"]; !ok {
		t.Errorf("PreventGradient not named: %v", err)
	}
	if _, ok := ue.ByOp()["Digamma"]; !ok {
		t.Errorf("Digamma not named: %v", err)
	}
}

// FuzzTensorFlowAsTFJS: any bytes as a frozen GraphDef, a SavedModel's
// saved_model.pb (beside a real variables/ bundle) or a checkpoint's .meta,
// with any recorded graph choice, are written as a TF.js graph model or
// refused, never a panic or a hang.
func FuzzTensorFlowAsTFJS(f *testing.F) {
	src := filepath.Join(shared, "tf_savedmodel", "tfjs_node_times_three_float")
	sm, err1 := os.ReadFile(filepath.Join(src, "saved_model.pb"))
	idx, err2 := os.ReadFile(filepath.Join(src, "variables", "variables.index"))
	shard, err3 := os.ReadFile(filepath.Join(src, "variables", "variables.data-00000-of-00001"))
	frozen, err4 := os.ReadFile(filepath.Join(shared, "tf_graphdef", "tf2onnx_regression", "frozen.pb"))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		f.Skip("../shared/models not found")
	}
	f.Add(sm, uint8(0), []byte(`{"signature":"serving_default"}`))
	f.Add(frozen, uint8(1), []byte(`{"inputs":[{"name":"X","tensor":"X:0"}],"outputs":[{"name":"pred","tensor":"pred:0"}]}`))
	f.Add(frozen, uint8(2), []byte(nil))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8, opts []byte) {
		dir := t.TempDir()
		name := []string{"saved_model.pb", "frozen.pb", "model.meta"}[kind%3]
		if err := os.MkdirAll(filepath.Join(dir, "variables"), 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(dir, name), data, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "variables", "variables.index"), idx, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "variables", "variables.data-00000-of-00001"), shard, 0o644)
		out := filepath.Join(dir, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = writeTensorFlowAsTFJS(ctx, filepath.Join(dir, name), out, graphChoice{inputs: []string{"X"}, outputs: []string{"pred"}, options: string(opts)})
	})
}
