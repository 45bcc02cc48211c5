package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/formats/tensorflow/traintest"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// TestConvertTensorFlowVerifiedByTFJS: a frozen GraphDef, a SavedModel
// folder (TF1 and TF2) and a TF1 checkpoint of ../shared convert and
// verify EQUIVALENT against TF.js running their graph as a TF.js graph
// model (exit 0, the summary naming tfjs as what computed the source).
// The regression model's input has no shape in the file (unknown rank),
// and only elementwise ops with scalar weights read it: it runs on a
// generated 1-D input (verify's free-rank shape), or on tf2onnx's ramp
// input given with --inputs. The checkpoint has no signature and its
// graph trains: a plain convert takes its inference part (the summary
// says which inputs and outputs and why), -O inputs=/outputs= name
// others, as tf2onnx's --inputs and --outputs do; so do two training
// graphs written here (traintest): two heads (mean squared error and
// softmax cross entropy, a regularizer, an accuracy metric) and a
// dropout-like keep_prob input.
func TestConvertTensorFlowVerifiedByTFJS(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	inputs := t.TempDir()
	if err := tensorio.SaveSamples(inputs, [][]*canonical.Tensor{{canonical.Float32Tensor("X", []int64{4}, []float32{0, 0.25, 0.5, 0.75})}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   []string
		args []string
		note string // a line of the summary
	}{
		{"frozen GraphDef", []string{"tf_graphdef", "tf2onnx_fc-layers", "frozen.pb"}, nil, ""},
		{"frozen GraphDef, unknown rank", []string{"tf_graphdef", "tf2onnx_regression", "frozen.pb"}, nil, ""},
		{"frozen GraphDef, unknown rank, given inputs", []string{"tf_graphdef", "tf2onnx_regression", "frozen.pb"}, []string{"--inputs", inputs}, ""},
		{"TF1 SavedModel folder", []string{"tf_savedmodel", "tf2onnx_regression"}, nil, ""},
		{"TF2 SavedModel folder", []string{"tf_savedmodel", "tfjs_node_model_multi_output"}, nil, ""},
		{"TF2 SavedModel folder, another signature", []string{"tf_savedmodel", "tfjs_node_module_with_multiple_signatures"}, []string{"-O", "signature=timestwo"}, ""},
		{"TF1 checkpoint of a training graph", []string{"tf_checkpoint", "tf2onnx_regression", "model.meta"}, nil,
			"tensorflow: the graph trains, so its inference part was taken: inputs X:0, outputs pred:0 (labels Y: Y meets pred at sub (Sub);"},
		{"TF1 checkpoint, tensors given", []string{"tf_checkpoint", "tf2onnx_regression", "model.meta"}, []string{"-O", "inputs=X:0", "-O", "outputs=pred:0"}, ""},
		{"TF1 checkpoint of a two-head training graph", nil, nil,
			"inputs X:0, outputs pred:0, logits:0 (labels Y1, Y2: Y1 meets pred at sub (Sub); Y2 meets logits at xent (SoftmaxCrossEntropyWithLogits)"},
		{"TF1 checkpoint of a training graph with a keep_prob", nil, nil, "inputs X:0, keep_prob:0, outputs pred:0 (labels Y:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.onnx")
			var in string
			switch {
			case tc.in != nil:
				in = testpaths.Shared(t, append([]string{"models"}, tc.in...)...)
			case strings.Contains(tc.name, "two-head"):
				in = filepath.Join(traintest.Write(t, testpaths.Shared(t, "models", "tf_checkpoint", "tf2onnx_regression"), traintest.TwoHeads()), "model.meta")
			default:
				in = filepath.Join(traintest.Write(t, testpaths.Shared(t, "models", "tf_checkpoint", "tf2onnx_regression"), traintest.KeepProb()), "model.meta")
			}
			code, stdout, stderr := execCmd(t, append([]string{"convert", in, out}, tc.args...)...)
			if !strings.Contains(stdout, tc.note) {
				t.Errorf("the summary does not say %q:\n%s", tc.note, stdout)
			}
			if code != 0 || !strings.Contains(stdout, "verify against the source (tfjs ") || !strings.Contains(stdout, ": EQUIVALENT") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "computed by tfjs 4.22.0") {
				t.Errorf("the summary does not say TF.js computed the source:\n%s", stdout)
			}
			if _, err := os.Stat(out); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestConvertTensorFlowOpsTFJSLacks: a GraphDef whose op TF.js has no
// kernel for (PreventGradient, which the importer maps to Identity) is
// converted and written, but NOT VERIFIED (exit 3) with the op named.
func TestConvertTensorFlowOpsTFJSLacks(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	f := &tfpb.AttrValue{Value: &tfpb.AttrValue_Type{Type: tfpb.DataType_DT_FLOAT}}
	shape := &tfpb.AttrValue{Value: &tfpb.AttrValue_Shape{Shape: &tfpb.TensorShapeProto{Dim: []*tfpb.TensorShapeProto_Dim{{Size: 2}, {Size: 3}}}}}
	gd := &tfpb.GraphDef{Node: []*tfpb.NodeDef{
		{Name: "x", Op: "Placeholder", Attr: map[string]*tfpb.AttrValue{"dtype": f, "shape": shape}},
		{Name: "g", Op: "PreventGradient", Input: []string{"x"}, Attr: map[string]*tfpb.AttrValue{"T": f}},
		{Name: "y", Op: "Relu", Input: []string{"g"}, Attr: map[string]*tfpb.AttrValue{"T": f}},
	}}
	b, err := proto.Marshal(gd)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "frozen.pb")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.onnx")
	code, stdout, stderr := execCmd(t, "convert", in, out)
	if code != 3 || !strings.Contains(stdout, "NOT VERIFIED against the source: the reference runtime tfjs cannot compute the source") ||
		!strings.Contains(stdout, `PreventGradient (node "g")`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// TestTensorFlowFolderInput: a SavedModel folder is an input wherever a
// file is (inspect names its format), and a folder holding no model file
// is refused naming the files looked for.
func TestTensorFlowFolderInput(t *testing.T) {
	sm := testpaths.Shared(t, "models", "tf_savedmodel", "tfjs_node_times_three_float")
	code, _, stderr := execCmd(t, "inspect", sm)
	if code != 2 || !strings.Contains(stderr, "it is in the tensorflow format; convert it first") {
		t.Errorf("inspect %s: exit %d, stderr %s", sm, code, stderr)
	}
	empty := t.TempDir()
	code, _, stderr = execCmd(t, "convert", empty, filepath.Join(t.TempDir(), "out.onnx"))
	if code != 2 || !strings.Contains(stderr, "is a folder holding no model file onnxconv reads (looked for model.json, config.json, saved_model.pb)") {
		t.Errorf("convert of an empty folder: exit %d, stderr %s", code, stderr)
	}
}

// TestTFJSAndKerasFolderInput: a TF.js model folder converts as its
// model.json, and the folder a .keras file was unpacked into as its
// config.json, each verified EQUIVALENT against TF.js.
func TestTFJSAndKerasFolderInput(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	dir := testpaths.Shared(t, "models", "tfjs_graph", "tfjs_e2e_graph_model")
	code, stdout, stderr := execCmd(t, "convert", dir, filepath.Join(t.TempDir(), "out.onnx"))
	if code != 0 || !strings.Contains(stdout, "model.json (tfjs): computed by tfjs") || !strings.Contains(stdout, ": EQUIVALENT") {
		t.Fatalf("TF.js folder: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	kdir := testpaths.Unzip(t, testpaths.Shared(t, "models", "keras_v3", "flownet_25-06_model", "model.keras"))
	code, stdout, stderr = execCmd(t, "convert", kdir, filepath.Join(t.TempDir(), "out.onnx"))
	if code != 0 || !strings.Contains(stdout, "config.json (tfjs): computed by tfjs") || !strings.Contains(stdout, ": EQUIVALENT") {
		t.Fatalf("unpacked .keras folder: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}
