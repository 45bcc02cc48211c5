package tensorflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/formats/tensorflow/traintest"
)

const shared = "../../../shared/models"

// A TF2 SavedModel folder loads frozen: its variable a Const holding the
// bundle's value, its calls inlined (no PartitionedCall left, no
// ReadVariableOp), its output resolved through them.
func TestLoadSavedModelFrozen(t *testing.T) {
	dir := filepath.Join(shared, "tf_savedmodel", "tfjs_node_times_three_float")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/models not found")
	}
	g, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Kind != KindSavedModel || len(g.Inputs) != 1 || len(g.Outputs) != 1 || len(g.Variables) != 1 {
		t.Fatalf("kind %s, inputs %v, outputs %v, variables %v", g.Kind, g.Inputs, g.Outputs, g.Variables)
	}
	for _, n := range g.Nodes {
		switch n.GetOp() {
		case "PartitionedCall", "StatefulPartitionedCall", "ReadVariableOp", "VarHandleOp":
			t.Errorf("node %s is still %s", n.GetName(), n.GetOp())
		}
	}
	// A checkpoint has no signature, and its graph trains: its inference
	// part is taken (Y meets the prediction only in the loss: a label;
	// the output is where the prediction enters the loss), and Chosen
	// says so.
	g, err = Load(context.Background(), filepath.Join(shared, "tf_checkpoint", "tf2onnx_regression", "model.meta"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Kind != KindCheckpoint || !slices.Equal(ioTensors(g.Inputs), []string{"X:0"}) || !slices.Equal(ioTensors(g.Outputs), []string{"pred:0"}) ||
		!strings.Contains(g.Chosen, "labels Y: Y meets pred at sub (Sub)") {
		t.Errorf("training checkpoint: inputs %v, outputs %v, chosen %q", g.Inputs, g.Outputs, g.Chosen)
	}
	for _, n := range g.Nodes {
		if strings.HasPrefix(n.GetName(), "gradients/") || n.GetName() == "Y" || n.GetName() == "sub" {
			t.Errorf("node %s of the training part kept", n.GetName())
		}
	}
}

// TestCheckpointInferenceGraph: a TF1 checkpoint whose graph does not
// train (the regression checkpoint's meta graph less its loss, gradients
// and optimizer, as tf.train.Saver writes an inference graph) loads
// without -O: its Placeholder is the input and the prediction, which
// nothing reads but the saver and initializer, the output.
func TestCheckpointInferenceGraph(t *testing.T) {
	src := filepath.Join(shared, "tf_checkpoint", "tf2onnx_regression")
	data, err := os.ReadFile(filepath.Join(src, "model.meta"))
	if err != nil {
		t.Skip("../shared/models not found")
	}
	var mg tfpb.MetaGraphDef
	if err := proto.Unmarshal(data, &mg); err != nil {
		t.Fatal(err)
	}
	loss := map[string]bool{"Y": true, "sub": true, "Pow": true, "Pow/y": true, "Rank": true, "range": true, "range/start": true,
		"range/delta": true, "Sum": true, "truediv": true, "truediv/y": true}
	gd := mg.GetGraphDef()
	var kept []*tfpb.NodeDef
	for _, n := range gd.GetNode() {
		name := n.GetName()
		if !loss[name] && !strings.HasPrefix(name, "gradients/") && !strings.HasPrefix(name, "GradientDescent") {
			kept = append(kept, n)
		}
	}
	gd.Node = kept
	delete(mg.GetCollectionDef(), "train_op")
	dir := t.TempDir()
	out, err := proto.Marshal(&mg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.meta"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"model.index", "model.data-00000-of-00001"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := Load(context.Background(), filepath.Join(dir, "model.meta"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Kind != KindCheckpoint || len(g.Inputs) != 1 || g.Inputs[0].Tensor != "X:0" || len(g.Outputs) != 1 || g.Outputs[0].Tensor != "pred:0" {
		t.Errorf("kind %s, inputs %v, outputs %v; want X:0 and pred:0", g.Kind, g.Inputs, g.Outputs)
	}
}

// FuzzLoad: any bytes as a saved_model.pb (beside a real bundle), a
// frozen .pb or a .meta load or are refused, never a panic or a hang.
func FuzzLoad(f *testing.F) {
	src := filepath.Join(shared, "tf_savedmodel", "tfjs_node_times_three_float")
	sm, err1 := os.ReadFile(filepath.Join(src, "saved_model.pb"))
	idx, err2 := os.ReadFile(filepath.Join(src, "variables", "variables.index"))
	shard, err3 := os.ReadFile(filepath.Join(src, "variables", "variables.data-00000-of-00001"))
	if err := errors.Join(err1, err2, err3); err != nil {
		f.Skip("../shared/models not found")
	}
	f.Add(sm, uint8(0), true)
	f.Add(idx, uint8(1), false)
	// Training graphs as a checkpoint's .meta: their inference part is
	// derived (inferenceIO) before any variable is read.
	if meta, err := os.ReadFile(filepath.Join(shared, "tf_checkpoint", "tf2onnx_regression", "model.meta")); err == nil {
		f.Add(meta, uint8(2), false)
	}
	for _, gd := range []*tfpb.GraphDef{traintest.TwoHeads(), traintest.KeepProb(), traintest.Symmetric()} {
		if b, err := proto.Marshal(&tfpb.MetaGraphDef{MetaInfoDef: &tfpb.MetaGraphDef_MetaInfoDef{}, GraphDef: gd}); err == nil {
			f.Add(b, uint8(2), false)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, kind uint8, named bool) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "variables"), 0o755); err != nil {
			t.Fatal(err)
		}
		name := []string{"saved_model.pb", "frozen.pb", "model.meta"}[kind%3]
		_ = os.WriteFile(filepath.Join(dir, name), data, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "variables", "variables.index"), idx, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "variables", "variables.data-00000-of-00001"), shard, 0o644)
		var o Options
		if named {
			o = Options{Inputs: []IO{{Name: "x", Tensor: "serving_default_x:0"}}, Outputs: []IO{{Name: "y", Tensor: "StatefulPartitionedCall:0"}}}
		}
		_, _ = Load(context.Background(), filepath.Join(dir, name), o)
	})
}
