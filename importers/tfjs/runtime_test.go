package tfjs_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfjsrt "github.com/onnxconv/onnxconv/runtimes/tfjs"
	"github.com/onnxconv/onnxconv/verify"
)

// fixtureDir holds the layers models made by TF.js (fixtures/tfjs/make.js).
const fixtureDir = "../../fixtures/tfjs"

// everyModel lists every TF.js model of ../shared/models and of
// fixtures/tfjs, with the value range of its inputs (integer ranges for
// embedding indices).
func everyModel() []struct {
	path   string
	lo, hi float64
	ints   bool
} {
	type m = struct {
		path   string
		lo, hi float64
		ints   bool
	}
	return []m{
		{shared + "/tfjs_graph/human_blazeface/blazeface.json", -1, 1, false},
		{shared + "/tfjs_graph/human_emotion/emotion.json", -1, 1, false},
		{shared + "/tfjs_graph/human_facemesh/facemesh.json", 0, 1, false},
		{shared + "/tfjs_graph/human_iris/iris.json", 0, 1, false},
		{shared + "/tfjs_graph/tfjs_e2e_graph_model/model.json", -1, 1, false},
		{shared + "/tfjs_graph/tfjs_e2e_graph_model/model_new.json", -1, 1, false},
		{shared + "/tfjs_graph/tfjs_inference_test_data/model.json", -1, 1, false},
		{shared + "/tfjs_graph/tfjs_inference_test_data/model_structured_outputs.json", -1, 1, false},
		{shared + "/tfjs_graph/tfjs_rn59_graph_model/model.json", -1, 1, false},
		{shared + "/tfjs_layers/tfjs_e2e_custom_module_dense/model.json", -1, 1, false},
		{shared + "/tfjs_layers/tfjs_e2e_embedding_gru/model.json", 0, 99, true},
		{fixtureDir + "/cnn/model.json", -1, 1, false},
		{fixtureDir + "/cnn_uint8/model.json", -1, 1, false},
		{fixtureDir + "/cnn_uint16/model.json", -1, 1, false},
		{fixtureDir + "/cnn_float16/model.json", -1, 1, false},
		{fixtureDir + "/functional/model.json", -1, 1, false},
		{fixtureDir + "/rnn/model.json", -1, 1, false},
		{fixtureDir + "/embed/model.json", 0, 29, true},
		{fixtureDir + "/upconv/model.json", -1, 1, false},
		{fixtureDir + "/wrappers/model.json", -1, 1, false},
		{fixtureDir + "/graph_slicing/model.json", -1, 1, false},
		{fixtureDir + "/graph_create/model.json", -1, 1, false},
		{fixtureDir + "/graph_image/model.json", -1, 1, false},
		{fixtureDir + "/graph_nms/model.json", -1, 1, false},
		{fixtureDir + "/graph_control/model.json", -1, 1, false},
		{fixtureDir + "/graph_tf1_control/model.json", -1, 1, false},
		{fixtureDir + "/graph_tf1_nms_loop/model.json", -1, 1, false},
		{fixtureDir + "/graph_tensorlist/model.json", -1, 1, false},
		{fixtureDir + "/graph_holes/model.json", -1, 1, false},
	}
}

// fixedInputs makes deterministic inputs for m: batch 2 where the batch is
// free, values spread over [lo, hi] (integers when ints).
func fixedInputs(t testing.TB, m *canonical.Model, lo, hi float64, ints bool) []*canonical.Tensor {
	t.Helper()
	var out []*canonical.Tensor
	for k, v := range verify.GraphInputs(m) {
		_, shape, err := verify.InputShape(v, map[string]int64{"N": 2})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := canonical.NumElements(shape)
		vals := make([]float32, n)
		for i := range vals {
			u := 0.5 + 0.5*math.Sin(float64(i)*0.7+float64(k)*1.3+0.1) // in [0, 1]
			x := lo + (hi-lo)*u
			if ints {
				x = math.Floor(x)
			}
			vals[i] = float32(x)
		}
		out = append(out, f32Tensor(v.Name, shape, vals))
	}
	return out
}

// Every TF.js model converts without --from and computes what TF.js 4.22.0
// (CPU backend, in Node, through the tfjs runtime) computes from the same
// file on the same inputs.
func TestEveryModelMatchesTFJS(t *testing.T) {
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	env := tfjsrt.Env{Node: node, Modules: modules}
	var rows []string
	for _, tc := range everyModel() {
		name := strings.TrimPrefix(strings.TrimPrefix(tc.path, shared+"/"), "../../")
		t.Run(name, func(t *testing.T) {
			m := importDetected(t, tc.path)
			ins := fixedInputs(t, m, tc.lo, tc.hi, tc.ints)
			got := runExecutor(t, m, ins)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var tps = toProtos(t, ins)
			res, err := tfjsrt.Run(ctx, env, tc.path, tps)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Outputs) != len(got) {
				t.Fatalf("%d outputs, TF.js %d", len(got), len(res.Outputs))
			}
			worst, worstAbs := 0.0, 0.0
			for i, o := range got {
				want, err := canonical.TensorFromProto(res.Outputs[i])
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(o.Dims) != fmt.Sprint(want.Dims) {
					t.Errorf("output %d: shape %v, TF.js %v", i, o.Dims, want.Dims)
					continue
				}
				if m.Graph.Outputs[i].Name != res.Outputs[i].GetName() && strings.Contains(tc.path, "tfjs_graph") {
					t.Errorf("output %d is %q, TF.js's is %q", i, m.Graph.Outputs[i].Name, res.Outputs[i].GetName())
				}
				g, w := floats(t, o), floats(t, want)
				worst = math.Max(worst, maxRelErr(t, fmt.Sprintf("output %d", i), g, w, 1e-4))
				for j := range g {
					worstAbs = math.Max(worstAbs, math.Abs(float64(g[j]-w[j])))
				}
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %.2g | %.2g |", name, res.Kind, len(m.Graph.Nodes), worstAbs, worst))
		})
	}
	if p := os.Getenv("ONNXCONV_TFJS_TABLE"); p != "" {
		_ = os.WriteFile(p, []byte(strings.Join(rows, "\n")+"\n"), 0o644)
	}
	t.Logf("\n%s", strings.Join(rows, "\n"))
}

// A fixture made by TF.js keeps NHWC at its inputs and outputs and wraps
// its convolution chain in as few Transposes as possible.
func TestFewTransposes(t *testing.T) {
	m := importDetected(t, filepath.Join(fixtureDir, "cnn", "model.json"))
	n := 0
	for _, nd := range m.Graph.Nodes {
		if nd.OpType == "Transpose" {
			n++
		}
	}
	// One into NCHW after the input, one back before Flatten.
	if n != 2 {
		t.Errorf("%d Transposes, want 2", n)
	}
}
