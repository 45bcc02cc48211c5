package tensorflow

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfjsrt "github.com/onnxconv/onnxconv/runtimes/tfjs"
)

// dropoutGraphDef is a frozen graph as TF1 writes y = relu(dropout(x @ W,
// keep_prob)) with tf.nn.dropout left in training mode: a mask
// floor(keep_prob + U[0, 1)) times x @ W / keep_prob. With training it
// also holds an Assert and a summary, which no output reads. With fromH
// the graph starts at h = x @ W (a Placeholder), what cutting at h:0
// leaves.
func dropoutGraphDef(keep float32, training, fromH bool) *tfpb.GraphDef {
	const F = tfpb.DataType_DT_FLOAT
	t := map[string]*tfpb.AttrValue{"T": typeAttr(F)}
	w := make([]float32, 12)
	for k := range w {
		w[k] = float32(math.Sin(float64(k)*0.7) * 0.8)
	}
	ph := func(name string, cols int64) *tfpb.NodeDef {
		return opNode(name, "Placeholder", map[string]*tfpb.AttrValue{"dtype": typeAttr(F), "shape": {Value: &tfpb.AttrValue_Shape{Shape: &tfpb.TensorShapeProto{
			Dim: []*tfpb.TensorShapeProto_Dim{{Size: -1}, {Size: cols}}}}}})
	}
	var nodes []*tfpb.NodeDef
	if fromH {
		nodes = append(nodes, ph("h", 3))
	} else {
		nodes = append(nodes, ph("x", 4), constNode("W", F, []int64{4, 3}, w, nil),
			opNode("h", "MatMul", map[string]*tfpb.AttrValue{"T": typeAttr(F), "transpose_a": {Value: &tfpb.AttrValue_B{}}, "transpose_b": {Value: &tfpb.AttrValue_B{}}}, "x", "W"))
	}
	nodes = append(nodes,
		constNode("dropout/keep_prob", F, nil, []float32{keep}, nil),
		opNode("dropout/Shape", "Shape", map[string]*tfpb.AttrValue{"T": typeAttr(F), "out_type": typeAttr(tfpb.DataType_DT_INT32)}, "h"),
		opNode("dropout/random_uniform/RandomUniform", "RandomUniform", map[string]*tfpb.AttrValue{"T": typeAttr(tfpb.DataType_DT_INT32), "dtype": typeAttr(F),
			"seed": {Value: &tfpb.AttrValue_I{I: 0}}, "seed2": {Value: &tfpb.AttrValue_I{I: 0}}}, "dropout/Shape"),
		opNode("dropout/add", "AddV2", t, "dropout/keep_prob", "dropout/random_uniform/RandomUniform"),
		opNode("dropout/Floor", "Floor", t, "dropout/add"),
		opNode("dropout/div", "RealDiv", t, "h", "dropout/keep_prob"),
		opNode("dropout/mul", "Mul", t, "dropout/div", "dropout/Floor"),
		opNode("y", "Relu", t, "dropout/mul"),
	)
	if training {
		nodes = append(nodes,
			constNode("check/zero", F, nil, []float32{-1e9}, nil),
			opNode("check/all", "Greater", t, "y", "check/zero"),
			opNode("check/Assert", "Assert", map[string]*tfpb.AttrValue{"T": typesAttr(F)}, "check/all", "y"),
			opNode("summary/y", "HistogramSummary", t, "check/zero", "y"),
			opNode("out", "Identity", t, "y", "^check/Assert"),
		)
	} else {
		nodes = append(nodes, opNode("out", "Identity", t, "y"))
	}
	return &tfpb.GraphDef{Node: nodes}
}

func writePB(t *testing.T, gd *tfpb.GraphDef, name string) string {
	t.Helper()
	b, err := proto.Marshal(gd)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// compareTFJS runs the GraphDef ref as a TF.js graph model on in and
// checks got against it within 1e-5.
func compareTFJS(t *testing.T, ref string, in *canonical.Tensor, got []*canonical.Tensor) {
	t.Helper()
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	tp, err := canonical.TensorToProto(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := tfjsrt.Run(ctx, tfjsrt.Env{Node: node, Modules: modules}, ref, []*onnxpb.TensorProto{tp})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 1 || len(got) != 1 {
		t.Fatalf("%d outputs, TF.js %d", len(got), len(res.Outputs))
	}
	want, err := canonical.TensorFromProto(res.Outputs[0])
	if err != nil {
		t.Fatal(err)
	}
	g, w := floats(t, got[0]), floats(t, want)
	if len(g) != len(w) {
		t.Fatalf("%d values, TF.js %d", len(g), len(w))
	}
	for j := range w {
		if d := math.Abs(g[j] - w[j]); d > 1e-5*(1+math.Abs(w[j])) || math.IsNaN(g[j]) {
			t.Errorf("[%d] = %g, TF.js %g", j, g[j], w[j])
		}
	}
	t.Logf("%v (TF.js %v)", g, w)
}

// A frozen graph with training-mode dropout (keep_prob 0.5), an Assert
// and a summary left in converts with warnings that say so, to the
// inference graph: what TF.js computes on the same graph with keep_prob 1
// (floor(1 + U) = 1: no unit dropped, no scaling).
func TestTrainingDropoutIsIdentity(t *testing.T) {
	pb := writePB(t, dropoutGraphDef(0.5, true, false), "dropout.pb")
	res, err := New().Import(context.Background(), pb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	joined := strings.Join(res.Warnings, "\n")
	for _, want := range []string{"dropout/mul", "training mode", "check/Assert", "summary/y"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	for _, n := range res.Model.Graph.Nodes {
		if strings.HasPrefix(n.OpType, "Random") {
			t.Errorf("node %s (%s) is left in", n.Name, n.OpType)
		}
	}
	x := f32("x", []int64{2, 4}, 0.3, -0.2, 0.9, 1.5, 0.01, -0.7, 0.4, 0.8)
	got := run(t, pb, nil, x)
	compareTFJS(t, writePB(t, dropoutGraphDef(1, false, false), "inference.pb"), x, got)
}

// -O inputs=h:0 cuts the graph at h (x and the MatMul are left out) and
// -O outputs=y:0 ends it at y: the result is what TF.js computes on the
// graph that starts at a Placeholder h.
func TestGraphCutting(t *testing.T) {
	pb := writePB(t, dropoutGraphDef(1, false, false), "full.pb")
	opts := map[string]string{"inputs": "h:0", "outputs": "y:0"}
	res, err := New().Import(context.Background(), pb, opts)
	if err != nil {
		t.Fatal(err)
	}
	ins, outs := res.Model.Graph.Inputs, res.Model.Graph.Outputs
	if len(ins) != 1 || ins[0].Name != "h" || len(outs) != 1 || outs[0].Name != "y" {
		t.Errorf("inputs %v, outputs %v: want h and y", ins, outs)
	}
	for _, n := range res.Model.Graph.Nodes {
		if n.OpType == "MatMul" {
			t.Errorf("the MatMul before the cut is left in")
		}
	}
	res.Model.Close()
	h := f32("h", []int64{2, 3}, 0.3, -0.2, 0.9, 1.5, 0.01, -0.7)
	got := run(t, pb, opts, h)
	compareTFJS(t, writePB(t, dropoutGraphDef(1, false, true), "from_h.pb"), h, got)
	for _, bad := range []map[string]string{{"inputs": "^h"}, {"outputs": " , "}, {"inputs": "nowhere:0"}} {
		if _, err := New().Import(context.Background(), pb, bad); err == nil {
			t.Errorf("options %v: no error", bad)
		}
	}
}

// A TF1 checkpoint (model.meta beside its model.index/.data bundle) has
// no signature: it converts with -O inputs= and -O outputs= naming its
// tensors, its variables read from the bundle, and computes what TF.js
// computes on the frozen graph tf2onnx made of the same model; without
// them its graph, which trains, gives its inference part (X → pred) and
// a note for the summary saying so (importers.NoteKey), computing the
// same.
func TestCheckpointMatchesTFJS(t *testing.T) {
	meta := testpaths.Shared(t, "models", "tf_checkpoint", "tf2onnx_regression", "model.meta")
	res, err := New().Import(context.Background(), meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	notes := importers.TakeNotes(res.Model)
	ins, outs := res.Model.Graph.Inputs, res.Model.Graph.Outputs
	if len(ins) != 1 || ins[0].Name != "X" || len(outs) != 1 || outs[0].Name != "pred" || len(notes) != 1 || !strings.Contains(notes[0], "inputs X:0, outputs pred:0") {
		t.Errorf("without inputs and outputs: inputs %v, outputs %v, notes %q", ins, outs, notes)
	}
	res.Model.Close()
	if got := New().Detect(meta, mustHead(t, meta)); got <= 0 {
		t.Errorf("Detect(model.meta) = %v", got)
	}
	frozen := testpaths.Shared(t, "models", "tf_graphdef", "tf2onnx_regression", "frozen.pb")
	x := f32("X", []int64{4, 1}, 0, 0.25, 0.5, 0.75)
	for _, opts := range []map[string]string{{"inputs": "X:0", "outputs": "pred:0"}, nil} {
		got := run(t, meta, opts, x)
		compareTFJS(t, frozen, x, got)
	}
}

func mustHead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 4096 {
		b = b[:4096]
	}
	return b
}

// FuzzCheckpoint: model.meta bytes (beside the real bundle) never panic
// or hang the importer, with or without the tensors named.
func FuzzCheckpoint(f *testing.F) {
	src := "../../../shared/models/tf_checkpoint/tf2onnx_regression"
	meta, err1 := os.ReadFile(filepath.Join(src, "model.meta"))
	idx, err2 := os.ReadFile(filepath.Join(src, "model.index"))
	shard, err3 := os.ReadFile(filepath.Join(src, "model.data-00000-of-00001"))
	if err := errors.Join(err1, err2, err3); err != nil {
		f.Fatalf("fuzz seeds from ../shared/models: %v", err)
	}
	f.Add(meta, true)
	f.Fuzz(func(t *testing.T, data []byte, named bool) {
		dir := t.TempDir()
		p := filepath.Join(dir, "model.meta")
		_ = os.WriteFile(p, data, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "model.index"), idx, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "model.data-00000-of-00001"), shard, 0o644)
		_ = New().Detect(p, data)
		var opts map[string]string
		if named {
			opts = map[string]string{"inputs": "X:0", "outputs": "pred:0"}
		}
		if res, err := New().Import(context.Background(), p, opts); err == nil {
			res.Model.Close()
		}
	})
}
