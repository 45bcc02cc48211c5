package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	kerasimp "github.com/onnxconv/onnxconv/importers/keras"
	tfjsimp "github.com/onnxconv/onnxconv/importers/tfjs"
	tfliteimp "github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/importers/torchscript"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/plugins"
	rtbuiltin "github.com/onnxconv/onnxconv/runtimes/builtin"
	"github.com/onnxconv/onnxconv/runtimes/node"
	"github.com/onnxconv/onnxconv/runtimes/ortnode"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// plantInResult converts the transformer block to opset 17 and scales the
// weight of the n-th MatMul of the result by 1.5: the planted bug. It
// returns the planted file and the node's name.
func plantInResult(t *testing.T, n int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "block17.onnx")
	if _, err := Opset(context.Background(), blockModel, out, Options{Env: builtins(), Opset: 17}); err != nil {
		t.Fatal(err)
	}
	m, err := canonical.Load(out, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	order, err := m.Graph.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	var node string
	for _, nd := range order {
		if nd.OpType != "MatMul" || nd.Inputs[1].Const == nil {
			continue
		}
		if n--; n > 0 {
			continue
		}
		w := nd.Inputs[1].Const
		raw, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		w.SetBytes(scaled(raw, 1.5))
		node = nd.Name
		break
	}
	if node == "" {
		t.Fatal("the block has too few MatMul nodes with a constant weight")
	}
	planted := filepath.Join(dir, "planted.onnx")
	if err := canonical.Save(planted, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	return planted, node
}

// An opset conversion (21 -> 17) whose result has one MatMul weight
// changed: --map ranks that MatMul first, on the executor against the
// executor and on ONNX Runtime (the source) against the executor (the
// result).
func TestMapPlantedOpsetConversion(t *testing.T) {
	planted, want := plantInResult(t, 2)
	for _, rts := range [][]string{nil, {"onnxruntime", "executor"}} {
		name := "executor-executor"
		if rts != nil {
			name = "onnxruntime-executor"
		}
		t.Run(name, func(t *testing.T) {
			if rts != nil {
				_, modules := testpaths.Node(t, ortnode.Package)
				t.Setenv(node.EnvNodeModules, modules)
			}
			rep, err := Verify(context.Background(), blockModel, planted, CompareOptions{
				VerifyOptions: VerifyOptions{Samples: 1, Map: true}, Runtimes: rts, Env: builtins()})
			if err != nil {
				t.Fatal(err)
			}
			m := rep.Map
			if m == nil {
				t.Fatalf("no map: %q", rep.Notes)
			}
			if rep.Equivalent {
				t.Errorf("the planted weight left the result equivalent: %s", rep.Summary)
			}
			first := m.Nodes[m.Ranked[0]]
			if first.Node != want || !first.Jump {
				t.Fatalf("ranked first %s (%s, jump %v), want %s: %s", first.Node, first.OpType, first.Jump, want, m.Summary())
			}
			if m.Compared < 20 {
				t.Errorf("%d nodes compared (%d without a counterpart): the names of the converted graph were not matched", m.Compared, m.Unmatched)
			}
			t.Logf("%s; %d compared, %d unmatched; A %s", m.Summary(), m.Compared, m.Unmatched, rep.A.ComputedBy)
		})
	}
}

// scaled returns the float32 data raw multiplied by f.
func scaled(raw []byte, f float32) []byte {
	out := make([]byte, len(raw))
	for i := 0; i+4 <= len(raw); i += 4 {
		binary.LittleEndian.PutUint32(out[i:], math.Float32bits(f*math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
	}
	return out
}

// plantingImporter is an importer with a bug planted: it scales by 1.5
// the weight of the n-th Conv of the model it imports, and names in
// planted the node the map should find: the Conv, or when its output has
// no source tensor (a Keras Conv2D layer's output is its bias Add or its
// activation) the first node after it that has one.
type plantingImporter struct {
	importers.Importer
	n       int
	planted *string
}

func (p plantingImporter) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	r, err := p.Importer.Import(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	m := r.Model
	prov, err := canonical.SourceTensors(m)
	if err != nil {
		return nil, err
	}
	order, err := m.Graph.TopoSort()
	if err != nil {
		return nil, err
	}
	n := p.n
	for _, nd := range order {
		if nd.OpType != "Conv" || len(nd.Inputs) < 2 || nd.Inputs[1].Const == nil {
			continue
		}
		if n--; n > 0 {
			continue
		}
		for at := nd; at != nil; {
			if _, ok := prov[at.Outputs[0].Name]; ok {
				*p.planted = at.Name
				break
			}
			uses := at.Outputs[0].Uses()
			at = nil
			if len(uses) == 1 {
				at = uses[0].Node
			}
		}
		if *p.planted == "" {
			break
		}
		w := nd.Inputs[1].Const
		raw, err := w.Bytes()
		if err != nil {
			return nil, err
		}
		w.SetBytes(scaled(raw, 1.5))
		return r, nil
	}
	m.Close()
	return nil, fmt.Errorf("%s: no Conv number %d followed by a value with a source tensor", path, p.n)
}

// mapPlantedSource converts src with the importer imp planting a bug
// (plantingImporter, the n-th Conv) and checks that convert --map, against
// the source's own runtime (the tensors of the source's own nodes or
// layers, laid back from NHWC by the provenance the importer recorded),
// ranks the planted Conv first, with the result on the executor and in
// ONNX Runtime.
func mapPlantedSource(t *testing.T, src string, imp importers.Importer, n, minCompared int, pkgs ...string) {
	t.Helper()
	_, modules := testpaths.Node(t, pkgs...)
	t.Setenv(node.EnvNodeModules, modules)
	mapPlanted(t, src, imp, n, minCompared, builtins(), nil)
}

// mapPlanted is mapPlantedSource in env, with the importer options io.
func mapPlanted(t *testing.T, src string, imp importers.Importer, n, minCompared int, env Env, io importers.Options) {
	t.Helper()
	var planted string
	reg, err := importers.NewRegistry(plantingImporter{Importer: imp, n: n, planted: &planted})
	if err != nil {
		t.Fatal(err)
	}
	env.Importers = reg
	out := filepath.Join(t.TempDir(), "planted.onnx")
	res, err := Convert(context.Background(), src, out, Options{Env: env, ImportOptions: io, Verify: &VerifyOptions{Samples: 1, Map: true}})
	// (A classifier's output may stay within tolerance: the map still
	// finds the planted weight inside.)
	var ne *NotEquivalentError
	if err != nil && !errors.As(err, &ne) {
		t.Fatalf("err %v (planted %q)", err, planted)
	}
	for _, cmp := range res.Comparisons {
		mp := cmp.Report.Map
		if mp == nil {
			t.Errorf("%s: no map: %q", cmp.What, cmp.Report.Notes)
			continue
		}
		first := mp.Nodes[mp.Ranked[0]]
		if first.Node != planted || !first.Jump {
			t.Errorf("%s: ranked first %s (%s, jump %v), want %s: %s", cmp.What, first.Node, first.OpType, first.Jump, planted, mp.Summary())
		}
		// Upstream of it, the source and the result agree on every
		// compared tensor, layouts undone.
		for _, x := range mp.Nodes[:first.Index] {
			if x.Status == "diverged" {
				t.Errorf("%s: %s (%s), upstream of the planted node, diverged: ratio %g", cmp.What, x.Node, x.OpType, x.Ratio)
			}
		}
		if mp.Compared < minCompared {
			t.Errorf("%s: %d nodes compared, %d unmatched: the source tensors were not followed", cmp.What, mp.Compared, mp.Unmatched)
		}
		t.Logf("%s: %s; %d compared, %d unmatched", cmp.What, mp.Summary(), mp.Compared, mp.Unmatched)
	}
}

// A TF.js graph model (the emotion classifier of vladmandic/human, 26
// nodes), its third Conv weight scaled by 1.5, against TF.js.
func TestMapPlantedTFJS(t *testing.T) {
	mapPlantedSource(t, testpaths.Shared(t, "models", "tfjs_graph", "human_emotion", "emotion.json"), tfjsimp.New(), 3, 15, "@tensorflow/tfjs")
}

// A Keras model (hls4ml's conv2d model, architecture JSON and weights),
// its Conv weight scaled by 1.5, against TF.js running the Keras
// layers (each layer's output by a model of the same inputs).
func TestMapPlantedKeras(t *testing.T) {
	mapPlantedSource(t, testpaths.Shared(t, "models", "keras_h5", "hls4ml_KERAS_conv2d_model", "KERAS_conv2d_model.json"), kerasimp.New(), 1, 3, "@tensorflow/tfjs")
}

// A TFLite model (fixtures/tflite/cnn.tflite: Conv2D, DepthwiseConv2D,
// MaxPool, FullyConnected, Softmax), its second Conv weight scaled by 1.5, against the TFLite
// interpreter (every tensor the importer recorded handed out by a copy of
// the flatbuffer with them as outputs, laid back from NHWC).
func TestMapPlantedTFLite(t *testing.T) {
	mapPlantedSource(t, filepath.Join("..", "fixtures", "tflite", "cnn.tflite"), tfliteimp.New(), 2, 5, tflite.Package)
}

// quantize --map on resnet_small: every activation the result quantizes
// is compared in steps with the float model's tensor quantized with the
// node's own scale and zero point (the input exactly: 0 steps on every
// element); then a planted bug, one int8 Conv weight of the result
// changed, is ranked first by verify --map, the float model on the
// executor and on ONNX Runtime.
func TestMapQuantize(t *testing.T) {
	src := "../fixtures/models/resnet_small/model.onnx"
	dir := t.TempDir()
	out := filepath.Join(dir, "int8.onnx")
	rep, err := Quantize(context.Background(), src, out, passes.QuantOptions{Mode: passes.Static}, "", 4,
		TransformOptions{Samples: 1, Map: true, Importers: builtins().Importers})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Map
	if m == nil {
		t.Fatal("no map")
	}
	quantized := 0
	for _, ne := range m.Nodes {
		if ne.OpType != "QuantizeLinear" {
			continue
		}
		if !ne.Quantized || len(ne.Steps) == 0 || ne.Status == "unmatched" {
			t.Errorf("%s: not compared in steps (%s, %s)", ne.Node, ne.Status, ne.Detail)
			continue
		}
		quantized++
		if ne.SourceTensor == "input" && (ne.MaxAbs != 0 || ne.Steps[0].Count != ne.Source.Shape[0]*ne.Source.Shape[1]*ne.Source.Shape[2]*ne.Source.Shape[3]) {
			t.Errorf("the graph input, quantized: %g steps apart (%s)", ne.MaxAbs, errmap.StepsText(ne.Steps))
		}
	}
	if quantized < 10 {
		t.Errorf("%d QuantizeLinear nodes compared in steps", quantized)
	}
	t.Logf("%s; %d quantized tensors in steps", m.Summary(), quantized)

	// The planted bug: the int8 weight of the 3rd Conv, +40 steps.
	q, err := canonical.Load(out, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	order, err := q.Graph.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	var want string
	n := 3
	for _, nd := range order {
		if nd.OpType != "Conv" {
			continue
		}
		dq, _ := nd.Inputs[1].Producer()
		if dq == nil || dq.OpType != "DequantizeLinear" || dq.Inputs[0].Const == nil || dq.Inputs[0].Const.DataType != canonical.Int8 {
			continue
		}
		if n--; n > 0 {
			continue
		}
		w := dq.Inputs[0].Const
		raw, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		moved := make([]byte, len(raw))
		for i, b := range raw {
			moved[i] = byte(int8(max(-128, min(127, int(int8(b))+40))))
		}
		w.SetBytes(moved)
		want = nd.Name
		break
	}
	if want == "" {
		t.Fatal("no Conv with an int8 weight")
	}
	planted := filepath.Join(dir, "planted.onnx")
	if err := canonical.Save(planted, q, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, rts := range [][]string{nil, {"onnxruntime", "executor"}} {
		if rts != nil {
			_, modules := testpaths.Node(t, ortnode.Package)
			t.Setenv(node.EnvNodeModules, modules)
		}
		vr, err := Verify(context.Background(), src, planted, CompareOptions{
			VerifyOptions: VerifyOptions{Samples: 1, Map: true, Profile: "int8"}, Runtimes: rts, Env: builtins()})
		if err != nil {
			t.Fatal(err)
		}
		if vr.Map == nil {
			t.Fatalf("%v: no map: %q", rts, vr.Notes)
		}
		first := vr.Map.Nodes[vr.Map.Ranked[0]]
		if first.Node != want || !first.Jump {
			t.Errorf("%v: ranked first %s (%s, jump %v), want %s: %s", rts, first.Node, first.OpType, first.Jump, want, vr.Map.Summary())
		}
		t.Logf("%v: %s; A %s", rts, vr.Map.Summary(), vr.A.ComputedBy)
	}
}

// A TorchScript archive (torchvision's ShuffleNet v2 x0.5, traced), its
// first Conv weight scaled by 1.5, against libtorch: the plugin hands out
// the results of the top-level submodule calls the importer recorded
// ("conv1:0", "stage2:0", …) from a copy of forward's graph that returns
// them.
func TestMapPlantedTorchScript(t *testing.T) {
	host, err := plugins.NewHost(context.Background(), plugins.Options{PluginPath: testpaths.LibtorchPlugin(t), UserDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	env := builtins()
	env.Runtimes = rtbuiltin.Set(host)
	mapPlanted(t, filepath.Join("..", "fixtures", "torchscript", "shufflenet_v2_x0_5_traced", "model.pt"), torchscript.New(), 1, 5,
		env, importers.Options{"shapes": "1x3x64x64"})
}

// fp16 --map and optimize --map: the map of the checked result against
// the input (fp16: every node of resnet_small compared, within the fp16
// profile, no node where the error starts).
func TestMapTransforms(t *testing.T) {
	src := "../fixtures/models/resnet_small/model.onnx"
	o := TransformOptions{Samples: 1, Map: true, Importers: builtins().Importers}
	rep, err := Float16(context.Background(), src, filepath.Join(t.TempDir(), "fp16.onnx"), passes.FP16Options{}, o)
	if err != nil {
		t.Fatal(err)
	}
	if m := rep.Map; m == nil || m.Compared < 40 || m.First >= 0 {
		t.Fatalf("fp16 map %+v", rep.Map)
	}
	t.Logf("fp16: %s", rep.Map.Summary())
	ps, err := passes.Lookup(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The transformer block, which the passes shrink from 49 nodes: the
	// nodes they keep are compared, every one within tolerance.
	orep, err := Optimize(context.Background(), blockModel, filepath.Join(t.TempDir(), "opt.onnx"), ps, passes.RunOptions{}, o)
	if err != nil {
		t.Fatal(err)
	}
	if m := orep.Map; m == nil || m.Compared < 10 || m.First >= 0 {
		t.Fatalf("optimize map %+v", orep.Map)
	}
	t.Logf("optimize: %s", orep.Map.Summary())
}

// int8Planter is an importer with a bug planted in an int8 model: every
// element of the initializer named weight, int8 values (the exact integer
// path holds them as float32), moves by 40 steps, saturated.
type int8Planter struct {
	importers.Importer
	weight string
}

func (p int8Planter) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	r, err := p.Importer.Import(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	v := r.Model.Graph.Lookup(p.weight)
	if v == nil || v.Const == nil || v.Const.DataType != canonical.Float {
		r.Model.Close()
		return nil, fmt.Errorf("%s: no float32 initializer %q", path, p.weight)
	}
	raw, err := v.Const.Bytes()
	if err != nil {
		return nil, err
	}
	moved := make([]byte, len(raw))
	for i := 0; i+4 <= len(raw); i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))
		binary.LittleEndian.PutUint32(moved[i:], math.Float32bits(max(-128, min(127, x+40))))
	}
	v.Const.SetBytes(moved)
	return r, nil
}

// An int8 TFLite model (fixtures/tflite/qcnn.tflite), its convolution's
// int8 weights moved by 40 steps, against the TFLite interpreter: the map
// compares the quantized tensors in steps, the quantized input 0 steps
// apart, and ranks the convolution's output (conv/Relu) first.
func TestMapPlantedTFLiteInt8(t *testing.T) {
	_, modules := testpaths.Node(t, tflite.Package)
	t.Setenv(node.EnvNodeModules, modules)
	reg, err := importers.NewRegistry(int8Planter{Importer: tfliteimp.New(), weight: "conv/weights_oihw_int"})
	if err != nil {
		t.Fatal(err)
	}
	env := builtins()
	env.Importers = reg
	res, err := Convert(context.Background(), filepath.Join("..", "fixtures", "tflite", "qcnn.tflite"), filepath.Join(t.TempDir(), "q.onnx"),
		Options{Env: env, Verify: &VerifyOptions{Samples: 1, Map: true}})
	var ne *NotEquivalentError
	if err != nil && !errors.As(err, &ne) {
		t.Fatal(err)
	}
	for _, cmp := range res.Comparisons {
		m := cmp.Report.Map
		if m == nil {
			t.Fatalf("%s: no map: %q", cmp.What, cmp.Report.Notes)
		}
		first := m.Nodes[m.Ranked[0]]
		if first.Node != "conv/Relu" || !first.Jump || !first.Integer {
			t.Errorf("%s: ranked first %s (%s, jump %v, integer %v), want conv/Relu in steps: %s", cmp.What, first.Node, first.OpType, first.Jump, first.Integer, m.Summary())
		}
		for _, x := range m.Nodes {
			if x.Node == "input_int8" && (!x.Integer || x.MaxAbs != 0 || len(x.Steps) == 0) {
				t.Errorf("%s: the quantized input: integer %v, %g steps (%s)", cmp.What, x.Integer, x.MaxAbs, errmap.StepsText(x.Steps))
			}
		}
		t.Logf("%s: %s; conv/Relu steps %s", cmp.What, m.Summary(), errmap.StepsText(first.Steps))
	}
}
