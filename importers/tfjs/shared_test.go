package tfjs_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/tfjs"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// shared is ../shared/models beside the repository.
const shared = "../../../shared/models"

// importDetected imports path through the built-in registry's detection
// (no --from), as convert does.
func importDetected(t testing.TB, path string) *canonical.Model {
	t.Helper()
	imp, conf, err := builtin.Registry().Detect(path)
	if err != nil {
		t.Fatalf("detect %s: %v", path, err)
	}
	if imp.Describe().Name != tfjs.Name {
		t.Fatalf("detect %s: importer %s (%.2f), want %s", path, imp.Describe().Name, conf, tfjs.Name)
	}
	res, err := imp.Import(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	t.Cleanup(func() { res.Model.Close() })
	return res.Model
}

func runExecutor(t testing.TB, m *canonical.Model, ins []*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	defer ex.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	outs, err := ex.Run(ctx, ins)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return outs
}

func floats(t testing.TB, tt *canonical.Tensor) []float32 {
	t.Helper()
	v, err := tt.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// maxRelErr compares got with want as numpy's allclose with rtol and an
// absolute tolerance of rtol times the output's largest magnitude (float32
// sums in another order differ by that much on values near zero), and
// returns the largest error relative to that bound's scale:
// max |got−want| / (|want| + max|want|).
func maxRelErr(t testing.TB, what string, got, want []float32, rtol float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(float64(w)))
	}
	atol := rtol * math.Max(scale, 1e-6)
	worst := 0.0
	bad := 0
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(float64(got[i])) != math.IsNaN(float64(want[i])) {
			d = math.Inf(1)
		}
		worst = math.Max(worst, d/(math.Abs(float64(want[i]))+math.Max(scale, 1e-6)))
		if d > atol+rtol*math.Abs(float64(want[i])) {
			if bad < 5 {
				t.Errorf("%s[%d] = %g, TF.js %g (|diff| %.3g > %.3g)", what, i, got[i], want[i], d, atol+rtol*math.Abs(float64(want[i])))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values off by more than rtol %g (atol %.3g)", what, bad, len(got), rtol, atol)
	}
	return worst
}

// The human_* graph models against the outputs TF.js 4.22.0 computed
// (tfjs_reference/: input_0.npy, output_N.npy in TF.js's output order).
func TestGraphModelsStoredReference(t *testing.T) {
	cases := []struct{ dir, file string }{
		{"human_blazeface", "blazeface.json"},
		{"human_emotion", "emotion.json"},
		{"human_facemesh", "facemesh.json"},
		{"human_iris", "iris.json"},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join(shared, "tfjs_graph", tc.dir)
			m := importDetected(t, filepath.Join(dir, tc.file))
			in, err := tensorio.ReadNpyFile(filepath.Join(dir, "tfjs_reference", "input_0.npy"))
			if err != nil {
				t.Fatal(err)
			}
			outs := runExecutor(t, m, []*canonical.Tensor{in})
			worst := 0.0
			for i, o := range outs {
				want, err := tensorio.ReadNpyFile(filepath.Join(dir, "tfjs_reference", fmt.Sprintf("output_%d.npy", i)))
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(o.Dims) != fmt.Sprint(want.Dims) {
					t.Errorf("output %d: shape %v, TF.js %v", i, o.Dims, want.Dims)
				}
				worst = math.Max(worst, maxRelErr(t, fmt.Sprintf("output %d (%s)", i, m.Graph.Outputs[i].Name), floats(t, o), floats(t, want), 1e-4))
			}
			t.Logf("%s: %d nodes, max rel err %.3g", tc.dir, len(m.Graph.Nodes), worst)
		})
	}
}

func f32Tensor(name string, dims []int64, v []float32) *canonical.Tensor {
	return canonical.Float32Tensor(name, dims, v)
}

// The models whose TF.js outputs the upstream test (load_predict_test.ts,
// tensorflow/tfjs e2e) states as literal values.
func TestStoredLiteralValues(t *testing.T) {
	graphWant := []float32{0.7567615509033203, -0.18349379301071167, 0.7567615509033203, -0.18349379301071167}
	cases := []struct {
		path string
		in   *canonical.Tensor
		want []float32
	}{
		{"tfjs_graph/tfjs_e2e_graph_model/model.json", f32Tensor("Placeholder", []int64{2, 2}, []float32{1, 1, 1, 1}), graphWant},
		{"tfjs_graph/tfjs_e2e_graph_model/model_new.json", f32Tensor("Placeholder", []int64{2, 2}, []float32{1, 1, 1, 1}), graphWant},
		// tfjs-inference's test data: the same weights, fed data.json ([1,1,1,1] of shape [2,2]).
		{"tfjs_graph/tfjs_inference_test_data/model.json", f32Tensor("Placeholder", []int64{2, 2}, []float32{1, 1, 1, 1}), graphWant},
		{"tfjs_graph/tfjs_inference_test_data/model_structured_outputs.json", f32Tensor("Placeholder", []int64{2, 2}, []float32{1, 1, 1, 1}), graphWant},
		{"tfjs_layers/tfjs_e2e_embedding_gru/model.json",
			f32Tensor("x", []int64{1, 10}, []float32{86, 11, 62, 40, 36, 75, 82, 94, 67, 75}),
			[]float32{-0.003578941337764263, 0.0028922036290168762, -0.002957976423203945, 0.00955402385443449}},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			m := importDetected(t, filepath.Join(shared, tc.path))
			outs := runExecutor(t, m, []*canonical.Tensor{tc.in})
			if len(outs) != 1 {
				t.Fatalf("%d outputs, want 1", len(outs))
			}
			worst := maxRelErr(t, "output", floats(t, outs[0]), tc.want, 1e-4)
			t.Logf("%s: %d nodes, max rel err %.3g", tc.path, len(m.Graph.Nodes), worst)
		})
	}
}

func toProtos(t testing.TB, ins []*canonical.Tensor) []*onnxpb.TensorProto {
	t.Helper()
	var out []*onnxpb.TensorProto
	for _, in := range ins {
		tp, err := canonical.TensorToProto(in)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tp)
	}
	return out
}
