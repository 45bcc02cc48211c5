package keraslayers

import (
	"errors"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// positional gives weights without names, in Keras's order (as Keras 3
// .keras files store them: vars/0, vars/1).
type positional map[string][]*canonical.Tensor

func (p positional) LayerWeights(path []string) ([]Weight, error) {
	var out []Weight
	for _, t := range p[strings.Join(path, "/")] {
		out = append(out, Weight{Tensor: t})
	}
	return out, nil
}

func f32(dims []int64, n int) *canonical.Tensor {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%5) * 0.1
	}
	return canonical.Float32Tensor("", dims, v)
}

// A Keras 3 functional config (inbound nodes as args with keras_history,
// DTypePolicy objects, batch_shape) converts with positional weights.
func TestKeras3Functional(t *testing.T) {
	cfg := `{"module": "keras", "class_name": "Functional", "config": {"name": "f",
	 "layers": [
	  {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 3], "dtype": "float32", "name": "inp"}, "name": "inp", "inbound_nodes": []},
	  {"module": "keras.layers", "class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "relu", "use_bias": true,
	    "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}}},
	   "name": "d", "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 3], "dtype": "float32", "keras_history": ["inp", 0, 0]}}], "kwargs": {}}]},
	  {"module": "keras.layers", "class_name": "Add", "config": {"name": "sum"},
	   "name": "sum", "inbound_nodes": [{"args": [[{"class_name": "__keras_tensor__", "config": {"keras_history": ["d", 0, 0]}}, {"class_name": "__keras_tensor__", "config": {"keras_history": ["d", 0, 0]}}]], "kwargs": {}}]}
	 ],
	 "input_layers": [["inp", 0, 0]], "output_layers": [["sum", 0, 0]]}}`
	w := positional{"d": {f32([]int64{3, 2}, 6), f32([]int64{2}, 2)}}
	mp, err := convertProto([]byte(cfg), w, Options{File: "config.json"})
	if err != nil {
		t.Fatal(err)
	}
	g := mp.GetGraph()
	if len(g.GetInput()) != 1 || g.GetInput()[0].GetName() != "inp" || len(g.GetOutput()) != 1 || g.GetOutput()[0].GetName() != "sum" {
		t.Errorf("inputs %v outputs %v", g.GetInput(), g.GetOutput())
	}
	var ops []string
	for _, n := range g.GetNode() {
		ops = append(ops, n.GetOpType())
	}
	if got := strings.Join(ops, ","); got != "MatMul,Add,Relu,Add,Identity" {
		t.Errorf("ops %s", got)
	}
}

// An unknown layer class is a *LayerError naming it and the file.
func TestUnknownLayer(t *testing.T) {
	cfg := `{"class_name": "Sequential", "config": {"name": "s", "layers": [
	  {"class_name": "QConv2D", "config": {"name": "q", "batch_input_shape": [null, 4, 4, 1]}}]}}`
	_, err := Convert([]byte(cfg), nil, Options{File: "m.h5"})
	var le *LayerError
	if !errors.As(err, &le) || le.Class != "QConv2D" || !le.Unsupported || !strings.Contains(err.Error(), "m.h5") {
		t.Errorf("%v", err)
	}
}

// WeightMap finds a layer's weights by TF.js and Keras 2 names.
func TestWeightMap(t *testing.T) {
	k := f32([]int64{1}, 1)
	m := WeightMap{"dense_Dense1/kernel": k, "model/conv/kernel:0": k, "dense_Dense10/kernel": k}
	ws, _ := m.LayerWeights([]string{"dense_Dense1"})
	if len(ws) != 1 || ws[0].Name != "kernel" {
		t.Errorf("dense_Dense1: %v", ws)
	}
	ws, _ = m.LayerWeights([]string{"conv"})
	if len(ws) != 1 || ws[0].Name != "kernel" {
		t.Errorf("conv: %v", ws)
	}
}

// convertProto is Convert with the model as a ModelProto, for tests that
// read its encoding.
func convertProto(config []byte, w Weights, opts Options) (*onnxpb.ModelProto, error) {
	m, err := Convert(config, w, opts)
	if err != nil {
		return nil, err
	}
	return m.ToProto()
}
