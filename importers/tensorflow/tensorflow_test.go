package tensorflow

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func run(t *testing.T, path string, opts map[string]string, ins ...*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	res, err := New().Import(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	ex, err := executor.New(res.Model, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	outs, err := ex.Run(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

func f32(name string, dims []int64, v ...float32) *canonical.Tensor {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return canonical.NewTensor(name, canonical.Float, dims, raw)
}

func floats(t *testing.T, x *canonical.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTimesThree: the SavedModel's name and the tfjs-node test say
// output_0 = 3*x. Its serving_default signature declares x a scalar.
func TestTimesThree(t *testing.T) {
	p := testpaths.Shared(t, "models", "tf_savedmodel", "tfjs_node_times_three_float")
	for _, x := range []float32{1, 2, -4.5} {
		outs := run(t, p, nil, f32("x", nil, x))
		if got := floats(t, outs[0]); len(got) != 1 || got[0] != float64(3*x) {
			t.Errorf("times_three(%g) = %v, want %g", x, got, 3*x)
		}
	}
}

func TestImportAll(t *testing.T) {
	for _, p := range []string{
		"tf_graphdef/tf2onnx_regression/frozen.pb", "tf_graphdef/tf2onnx_fc-layers/frozen.pb", "tf_graphdef/tf2onnx_ae0/frozen.pb",
		"tf_savedmodel/tf2onnx_regression", "tf_savedmodel/tfjs_node_times_three_float", "tf_savedmodel/tfjs_node_times_two_int",
		"tf_savedmodel/tfjs_node_model_multi_output", "tf_savedmodel/tfjs_node_int64_multiply", "tf_savedmodel/tfjs_node_uint8_multiply",
		"tf_savedmodel/tfjs_node_model_single_input_multi_output", "tf_savedmodel/tfjs_node_module_with_multiple_signatures",
	} {
		res, err := New().Import(context.Background(), testpaths.Shared(t, "models", p), nil)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		t.Logf("%s: %d nodes", p, len(res.Model.Graph.Nodes))
		res.Model.Close()
	}
}
