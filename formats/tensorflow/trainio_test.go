package tensorflow

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/formats/tensorflow/traintest"
)

// TestTrainingGraphTwoHeads: a training graph with a regression head
// (mean squared error against Y1), a classification head (softmax cross
// entropy against Y2, its labels through StopGradient), an L2 regularizer
// and an accuracy metric (ArgMax(logits) == ArgMax(Y2)) loads with X as
// its input and pred and logits as its outputs: the labels are the
// Placeholders that meet the prediction only in the loss, the metric's
// ArgMax(logits) is left out as computed from logits.
func TestTrainingGraphTwoHeads(t *testing.T) {
	dir := traintest.Write(t, filepath.Join(shared, "tf_checkpoint", "tf2onnx_regression"), traintest.TwoHeads())
	g, err := Load(context.Background(), filepath.Join(dir, "model.meta"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ioTensors(g.Inputs), []string{"X:0"}) || !slices.Equal(ioTensors(g.Outputs), []string{"pred:0", "logits:0"}) {
		t.Errorf("inputs %v, outputs %v; want X:0 and pred:0, logits:0", g.Inputs, g.Outputs)
	}
	for _, want := range []string{"labels Y1, Y2", "Y1 meets pred at sub (Sub)", "Y2 meets logits at xent (SoftmaxCrossEntropyWithLogits)"} {
		if !strings.Contains(g.Chosen, want) {
			t.Errorf("chosen %q does not say %q", g.Chosen, want)
		}
	}
	// -O inputs=/outputs= still choose: the metric's ArgMax.
	g, err = Load(context.Background(), filepath.Join(dir, "model.meta"), Options{Inputs: []IO{{Name: "X", Tensor: "X:0"}}, Outputs: []IO{{Name: "am", Tensor: "ArgMax:0"}}})
	if err != nil || g.Chosen != "" || !slices.Equal(ioTensors(g.Outputs), []string{"ArgMax:0"}) {
		t.Errorf("given tensors: outputs %v, chosen %q, err %v", g.Outputs, g.Chosen, err)
	}
}

// TestTrainingGraphAmbiguous: when no Placeholder is a label (both meet
// the weights first: loss = (X·W − Y·W)², or (W − Y)² + (b − Z)²), the
// graph does not say what it predicts, and Load refuses with the
// SignatureError naming its Placeholders and loss.
func TestTrainingGraphAmbiguous(t *testing.T) {
	for name, gd := range map[string]*tfpb.GraphDef{"symmetric": traintest.Symmetric(), "constant fit": traintest.ConstantFit()} {
		t.Run(name, func(t *testing.T) {
			dir := traintest.Write(t, filepath.Join(shared, "tf_checkpoint", "tf2onnx_regression"), gd)
			_, err := Load(context.Background(), filepath.Join(dir, "model.meta"), Options{})
			var se *SignatureError
			if !errors.As(err, &se) || !se.Training || len(se.Placeholders) < 2 {
				t.Fatalf("want a SignatureError of a training graph, got %v", err)
			}
			if !strings.Contains(err.Error(), "the graph trains") {
				t.Errorf("error %q", err)
			}
		})
	}
}

// TestTrainingGraphKeepProb: a Placeholder that scales the hidden layer
// before b is added (a dropout's keep_prob) meets the prediction before
// a variable is applied again: an input, not a label.
func TestTrainingGraphKeepProb(t *testing.T) {
	dir := traintest.Write(t, filepath.Join(shared, "tf_checkpoint", "tf2onnx_regression"), traintest.KeepProb())
	g, err := Load(context.Background(), filepath.Join(dir, "model.meta"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ioTensors(g.Inputs), []string{"X:0", "keep_prob:0"}) || !slices.Equal(ioTensors(g.Outputs), []string{"pred:0"}) {
		t.Errorf("inputs %v, outputs %v; want X:0, keep_prob:0 and pred:0", g.Inputs, g.Outputs)
	}
}
