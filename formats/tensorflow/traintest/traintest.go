// Package traintest writes small TF1 training graphs for tests: a meta
// graph (model.meta) beside the variables bundle of
// ../shared/models/tf_checkpoint/tf2onnx_regression (scalar float32
// variables W and b), with Placeholders, a loss, gradient nodes and an
// optimizer update, as tf.train.Saver writes a checkpoint of a graph that
// trains. TensorFlow is not needed: the graphs are written with the
// protos (formats/tensorflow/tfpb).
package traintest

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
)

// Write writes gd as model.meta in a new temp folder beside a copy of the
// bundle in src (model.index, model.data-00000-of-00001) and returns the
// folder. It skips the test when src is not there.
func Write(t testing.TB, src string, gd *tfpb.GraphDef) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"model.index", "model.data-00000-of-00001"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Skipf("the checkpoint bundle is not there: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := proto.Marshal(&tfpb.MetaGraphDef{MetaInfoDef: &tfpb.MetaGraphDef_MetaInfoDef{}, GraphDef: gd})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.meta"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

var (
	f32   = &tfpb.AttrValue{Value: &tfpb.AttrValue_Type{Type: tfpb.DataType_DT_FLOAT}}
	i64   = &tfpb.AttrValue{Value: &tfpb.AttrValue_Type{Type: tfpb.DataType_DT_INT64}}
	ti32  = &tfpb.AttrValue{Value: &tfpb.AttrValue_Type{Type: tfpb.DataType_DT_INT32}}
	rows3 = shape(-1, 3)
)

func shape(dims ...int64) *tfpb.AttrValue {
	s := &tfpb.TensorShapeProto{}
	for _, d := range dims {
		s.Dim = append(s.Dim, &tfpb.TensorShapeProto_Dim{Size: d})
	}
	return &tfpb.AttrValue{Value: &tfpb.AttrValue_Shape{Shape: s}}
}

func node(name, op string, ins ...string) *tfpb.NodeDef {
	return &tfpb.NodeDef{Name: name, Op: op, Input: ins, Attr: map[string]*tfpb.AttrValue{"T": f32}}
}

func placeholder(name string, s *tfpb.AttrValue) *tfpb.NodeDef {
	return &tfpb.NodeDef{Name: name, Op: "Placeholder", Attr: map[string]*tfpb.AttrValue{"dtype": f32, "shape": s}}
}

func scalar(name string, v float32) *tfpb.NodeDef {
	return &tfpb.NodeDef{Name: name, Op: "Const", Attr: map[string]*tfpb.AttrValue{"dtype": f32,
		"value": {Value: &tfpb.AttrValue_Tensor{Tensor: &tfpb.TensorProto{Dtype: tfpb.DataType_DT_FLOAT, TensorShape: &tfpb.TensorShapeProto{}, FloatVal: []float32{v}}}}}}
}

func axes(name string, v ...int32) *tfpb.NodeDef {
	return &tfpb.NodeDef{Name: name, Op: "Const", Attr: map[string]*tfpb.AttrValue{"dtype": ti32,
		"value": {Value: &tfpb.AttrValue_Tensor{Tensor: &tfpb.TensorProto{Dtype: tfpb.DataType_DT_INT32,
			TensorShape: &tfpb.TensorShapeProto{Dim: []*tfpb.TensorShapeProto_Dim{{Size: int64(len(v))}}}, IntVal: v}}}}}
}

// variables are W and b of the bundle, each read through Identity, as
// tf.Variable writes them (initializers and their Assign included).
func variables() []*tfpb.NodeDef {
	var out []*tfpb.NodeDef
	for _, v := range []string{"W", "b"} {
		out = append(out,
			scalar(v+"/initial_value", 0.5),
			&tfpb.NodeDef{Name: v, Op: "VariableV2", Attr: map[string]*tfpb.AttrValue{"dtype": f32, "shape": shape()}},
			node(v+"/Assign", "Assign", v, v+"/initial_value"),
			node(v+"/read", "Identity", v))
	}
	return out
}

// trains appends gradient nodes reading the forward graph and the
// optimizer's update of W and b (what makes the graph one that trains).
func trains(nodes []*tfpb.NodeDef, reads ...string) []*tfpb.NodeDef {
	nodes = append(nodes, scalar("gradients/grad_ys_0", 1), scalar("GradientDescent/learning_rate", 0.01))
	for i, r := range reads {
		g := "gradients/g" + string(rune('0'+i))
		nodes = append(nodes, node(g, "Mul", "gradients/grad_ys_0", r))
	}
	nodes = append(nodes,
		node("GradientDescent/update_W/ApplyGradientDescent", "ApplyGradientDescent", "W", "GradientDescent/learning_rate", "gradients/g0"),
		node("GradientDescent/update_b/ApplyGradientDescent", "ApplyGradientDescent", "b", "GradientDescent/learning_rate", "gradients/g0"),
		&tfpb.NodeDef{Name: "GradientDescent", Op: "NoOp", Input: []string{"^GradientDescent/update_W/ApplyGradientDescent", "^GradientDescent/update_b/ApplyGradientDescent"}},
		&tfpb.NodeDef{Name: "init", Op: "NoOp", Input: []string{"^W/Assign", "^b/Assign"}})
	return nodes
}

// TwoHeads is a training graph with two heads on X [N, 3]: pred = X·W + b
// against Y1 by mean squared error, and logits = tanh(X)·W against the
// one-hot Y2 by softmax cross entropy (Y2 through StopGradient, as
// tf.nn.softmax_cross_entropy_with_logits_v2 writes it), plus an L2
// regularizer of W and an accuracy metric (ArgMax(logits) = ArgMax(Y2)).
// Its inference part: input X, outputs pred and logits.
func TwoHeads() *tfpb.GraphDef {
	n := append([]*tfpb.NodeDef{placeholder("X", rows3), placeholder("Y1", rows3), placeholder("Y2", rows3)}, variables()...)
	n = append(n,
		node("Mul", "Mul", "X", "W/read"),
		node("Add", "Add", "Mul", "b/read"),
		node("pred", "Identity", "Add"),
		node("Tanh", "Tanh", "X"),
		node("Mul_1", "Mul", "Tanh", "W/read"),
		node("logits", "Identity", "Mul_1"),
		node("sub", "Sub", "pred", "Y1"),
		node("Square", "Square", "sub"),
		axes("Const", 0, 1),
		node("mse", "Mean", "Square", "Const"),
		node("labels_stop", "StopGradient", "Y2"),
		node("xent", "SoftmaxCrossEntropyWithLogits", "logits", "labels_stop"),
		axes("Const_1", 0),
		node("ce", "Mean", "xent", "Const_1"),
		node("L2Loss", "L2Loss", "W/read"),
		scalar("reg/scale", 0.01),
		node("reg", "Mul", "reg/scale", "L2Loss"),
		node("loss", "AddN", "mse", "ce", "reg"),
		axes("ArgMax/dimension", 1),
		&tfpb.NodeDef{Name: "ArgMax", Op: "ArgMax", Input: []string{"logits", "ArgMax/dimension"}, Attr: map[string]*tfpb.AttrValue{"T": f32, "output_type": i64}},
		&tfpb.NodeDef{Name: "ArgMax_1", Op: "ArgMax", Input: []string{"Y2", "ArgMax/dimension"}, Attr: map[string]*tfpb.AttrValue{"T": f32, "output_type": i64}},
		&tfpb.NodeDef{Name: "Equal", Op: "Equal", Input: []string{"ArgMax", "ArgMax_1"}, Attr: map[string]*tfpb.AttrValue{"T": i64}},
		node("Cast", "Cast", "Equal"),
		node("accuracy", "Mean", "Cast", "Const_1"),
	)
	return &tfpb.GraphDef{Node: trains(n, "sub", "xent:1")}
}

// KeepProb is a training graph whose second Placeholder scales the hidden
// layer before b is added (as a dropout's keep_prob divides it): it is
// an input, not a label. Its inference part: inputs X and keep_prob,
// output pred.
func KeepProb() *tfpb.GraphDef {
	n := append([]*tfpb.NodeDef{placeholder("X", rows3), placeholder("keep_prob", shape()), placeholder("Y", rows3)}, variables()...)
	n = append(n,
		node("Mul", "Mul", "X", "W/read"),
		node("dropout", "RealDiv", "Mul", "keep_prob"),
		node("Add", "Add", "dropout", "b/read"),
		node("pred", "Identity", "Add"),
		node("sub", "Sub", "pred", "Y"),
		node("Square", "Square", "sub"),
		axes("Const", 0, 1),
		node("loss", "Mean", "Square", "Const"),
	)
	return &tfpb.GraphDef{Node: trains(n, "sub")}
}

// Symmetric is a training graph whose two Placeholders both meet the
// weights first (loss = (X·W − Y·W)²): neither is a label.
func Symmetric() *tfpb.GraphDef {
	n := append([]*tfpb.NodeDef{placeholder("X", rows3), placeholder("Y", rows3)}, variables()...)
	n = append(n,
		node("Mul", "Mul", "X", "W/read"),
		node("Mul_1", "Mul", "Y", "W/read"),
		node("sub", "Sub", "Mul", "Mul_1"),
		node("Square", "Square", "sub"),
		axes("Const", 0, 1),
		node("loss", "Mean", "Square", "Const"),
	)
	return &tfpb.GraphDef{Node: trains(n, "sub")}
}

// ConstantFit is a training graph that fits W to its one Placeholder
// (loss = (W − Y)²): there is no input.
func ConstantFit() *tfpb.GraphDef {
	n := append([]*tfpb.NodeDef{placeholder("Y", rows3), placeholder("Z", rows3)}, variables()...)
	n = append(n,
		node("sub", "Sub", "W/read", "Y"),
		node("sub_1", "Sub", "b/read", "Z"),
		node("Square", "Square", "sub"),
		node("Square_1", "Square", "sub_1"),
		node("add", "Add", "Square", "Square_1"),
		axes("Const", 0, 1),
		node("loss", "Mean", "add", "Const"),
	)
	return &tfpb.GraphDef{Node: trains(n, "sub")}
}
