package tfjs

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes"
)

const shared = "../../../shared/models"

func f32(name string, dims []int64, v ...float32) *onnxpb.TensorProto {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: dims, RawData: b}
}

func values(tp *onnxpb.TensorProto) []float32 {
	raw := tp.GetRawData()
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func env(t *testing.T) Env {
	node, modules := testpaths.Node(t, Package, WASMPackage)
	return Env{Node: node, Modules: modules}
}

func near(t *testing.T, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-6+1e-5*math.Abs(float64(want[i])) {
			t.Errorf("[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}

// The runtime computes what the upstream TF.js e2e test states
// (load_predict_test.ts): a graph model by name, a layers model by position.
func TestRunUpstreamValues(t *testing.T) {
	e := env(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, e, filepath.Join(shared, "tfjs_graph/tfjs_e2e_graph_model/model.json"),
		[]*onnxpb.TensorProto{f32("Placeholder", []int64{2, 2}, 1, 1, 1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "graph-model" || res.Version != PackageVersion || res.Backend != "wasm" || res.Outputs[0].GetName() != "MatMul" {
		t.Errorf("result %+v", res)
	}
	near(t, values(res.Outputs[0]), []float32{0.7567615509033203, -0.18349379301071167, 0.7567615509033203, -0.18349379301071167})

	res, err = Run(ctx, e, filepath.Join(shared, "tfjs_layers/tfjs_e2e_embedding_gru/model.json"),
		[]*onnxpb.TensorProto{f32("whatever", []int64{1, 10}, 86, 11, 62, 40, 36, 75, 82, 94, 67, 75)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "layers-model" || res.Method != "predict" {
		t.Errorf("result %+v", res)
	}
	near(t, values(res.Outputs[0]), []float32{-0.003578941337764263, 0.0028922036290168762, -0.002957976423203945, 0.00955402385443449})
}

// TF.js's own failures come back as *RunError with TF.js's message; an
// ONNX file is a *NotTFJSError.
func TestRunErrors(t *testing.T) {
	e := env(t)
	ctx := context.Background()
	_, err := Run(ctx, e, filepath.Join(shared, "tfjs_layers/tfjs_e2e_embedding_gru/model.json"),
		[]*onnxpb.TensorProto{f32("x", []int64{1, 3}, 1, 2, 3)})
	var re *RunError
	if !errors.As(err, &re) || !strings.Contains(re.Detail, "shape") {
		t.Errorf("wrong shape: %v", err)
	}
	onnx := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(onnx, []byte("\x08\x07"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, e, onnx, nil)
	var ne *NotTFJSError
	if !errors.As(err, &ne) {
		t.Errorf("onnx file: %v", err)
	}
}

// A missing node or TF.js is a *MissingError whose message is the one
// install command.
func TestMissing(t *testing.T) {
	noNode := FindOptions{
		Getenv:   func(string) string { return "" },
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
	}
	_, err := Find(noNode)
	var me *MissingError
	if !errors.As(err, &me) || me.What != "node" || !strings.Contains(err.Error(), InstallCommand) {
		t.Errorf("no node: %v", err)
	}
	empty := t.TempDir()
	noPkg := FindOptions{
		Getenv: func(k string) string {
			if k == EnvNodeModules {
				return empty
			}
			return ""
		},
		LookPath: func(string) (string, error) { return "/usr/bin/node", nil },
	}
	_, err = Find(noPkg)
	if !errors.As(err, &me) || me.What != Package || !strings.Contains(err.Error(), InstallCommand) || !strings.Contains(err.Error(), empty) {
		t.Errorf("no package: %v", err)
	}
	rt := New(noPkg)
	if i := rt.Info(); i.Name != RuntimeName || i.Version != "unknown" {
		t.Errorf("runtime %+v", i)
	}
	if _, err := rt.Open(context.Background(), "model.json", runtimes.OpenOptions{}); !errors.As(err, &me) {
		t.Errorf("open without TF.js: %v", err)
	}
}
