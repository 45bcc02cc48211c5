package keras_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	kfile "github.com/onnxconv/onnxconv/formats/keras"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/keras"
	"github.com/onnxconv/onnxconv/importers/keraslayers"
	"github.com/onnxconv/onnxconv/verify"
)

// shared is ../shared/models beside the repository.
const shared = "../../../shared/models"

// convertible are the Keras files of ../shared/models made of built-in
// layers.
var convertible = []string{
	"keras_h5/hls4ml_KERAS_1layer/KERAS_1layer.json",
	"keras_h5/hls4ml_KERAS_3layer/KERAS_3layer.json",
	"keras_h5/hls4ml_KERAS_3layer_batch_norm/KERAS_3layer_batch_norm.json",
	"keras_h5/hls4ml_KERAS_conv1d_small/KERAS_conv1d_small.json",
	"keras_h5/hls4ml_KERAS_conv2d_model/KERAS_conv2d_model.json",
	"keras_v3/flownet_25-06_model/model.keras",
}

// custom are the Keras files with custom layers, and the classes the
// refusal must name.
var custom = []struct {
	path    string
	library string
	classes []string
}{
	{"keras_h5/hls4ml_hgq_jet_classifier/hgq_jet_classifier.h5", "HGQ", []string{"FixedPointQuantizer"}},
	{"keras_h5/hls4ml_qkeras_3layer/qkeras_3layer.json", "QKeras", []string{"QDense", "QActivation"}},
	{"keras_v3/hls4ml_qkeras_v3_3layer/qkeras-v3_3layer.keras", "QKeras", []string{"QDense", "QActivation"}},
}

// importDetected imports path through the built-in registry's detection
// (no --from), as convert does.
func importDetected(t testing.TB, path string) *canonical.Model {
	t.Helper()
	imp, conf, err := builtin.Registry().Detect(path)
	if err != nil {
		t.Fatalf("detect %s: %v", path, err)
	}
	if imp.Describe().Name != keras.Name {
		t.Fatalf("detect %s: importer %s (%.2f), want %s", path, imp.Describe().Name, conf, keras.Name)
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	outs, err := ex.Run(ctx, ins)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return outs
}

// fixedInputs makes deterministic inputs for m: batch 3, values spread
// over [-2, 2].
func fixedInputs(t testing.TB, m *canonical.Model) ([]*canonical.Tensor, []wireTensor) {
	t.Helper()
	var out []*canonical.Tensor
	var wire []wireTensor
	for k, v := range verify.GraphInputs(m) {
		_, shape, err := verify.InputShape(v, map[string]int64{"N": 3})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := canonical.NumElements(shape)
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(2 * math.Sin(float64(i)*0.37+float64(k)*1.3+0.1))
		}
		out = append(out, canonical.Float32Tensor(v.Name, shape, vals))
		wire = append(wire, wireTensor{Shape: shape, Data: vals})
	}
	return out, wire
}

// Every Keras file of ../shared/models made of built-in layers converts
// without --from and computes what TF.js 4.22.0 computes running the same
// architecture and weights (exported to TF.js layers format by the test
// helper), within 1e-4 relative, in outputs named as the TF.js runtime
// names them.
func TestEveryModelMatchesTFJS(t *testing.T) {
	var rows []string
	for _, p := range convertible {
		t.Run(p, func(t *testing.T) {
			path := filepath.Join(shared, p)
			m := importDetected(t, path)
			ins, wire := fixedInputs(t, m)
			got := runExecutor(t, m, ins)
			src, err := kfile.Load(context.Background(), path, "")
			if err != nil {
				t.Fatal(err)
			}
			want := runTFJS(t, src, wire)
			if len(want) != len(got) {
				t.Fatalf("%d outputs, TF.js %d", len(got), len(want))
			}
			worst, worstAbs := 0.0, 0.0
			for i, o := range got {
				// The runtime names its outputs as the importer names
				// the ONNX outputs.
				if name := m.Graph.Outputs[i].Name; name != want[i].Name {
					t.Errorf("output %d: named %q, TF.js runtime %q", i, name, want[i].Name)
				}
				if fmt.Sprint(o.Dims) != fmt.Sprint(want[i].Shape) {
					t.Errorf("output %d: shape %v, TF.js %v", i, o.Dims, want[i].Shape)
					continue
				}
				g, err := o.Float32s()
				if err != nil {
					t.Fatal(err)
				}
				worst = math.Max(worst, maxRelErr(t, fmt.Sprintf("output %d", i), g, want[i].Data, 1e-4))
				for j := range g {
					worstAbs = math.Max(worstAbs, math.Abs(float64(g[j]-want[i].Data[j])))
				}
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %.2g | %.2g |", p, src.Kind, len(m.Graph.Nodes), worstAbs, worst))
		})
	}
	if p := os.Getenv("ONNXCONV_KERAS_TABLE"); p != "" {
		_ = os.WriteFile(p, []byte(strings.Join(rows, "\n")+"\n"), 0o644)
	}
	t.Logf("\n%s", strings.Join(rows, "\n"))
}

// maxRelErr compares got with want as numpy's allclose with rtol and an
// absolute tolerance of rtol times the output's largest magnitude, and
// returns max |got−want| / (|want| + max|want|).
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
				t.Errorf("%s[%d] = %g, TF.js %g (|diff| %.3g)", what, i, got[i], want[i], d)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values off by more than rtol %g", what, bad, len(got), rtol)
	}
	return worst
}

// The files with QKeras and HGQ layers are detected as Keras and refused
// with an error that names every custom class and its library.
func TestCustomLayersRefused(t *testing.T) {
	for _, tc := range custom {
		t.Run(tc.path, func(t *testing.T) {
			path := filepath.Join(shared, tc.path)
			imp, _, err := builtin.Registry().Detect(path)
			if err != nil || imp.Describe().Name != keras.Name {
				t.Fatalf("detect: %v %v", imp, err)
			}
			_, err = imp.Import(context.Background(), path, nil)
			var ce *kfile.CustomLayerError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *kfile.CustomLayerError", err)
			}
			if fmt.Sprint(ce.Classes) != fmt.Sprint(tc.classes) || ce.Library != tc.library {
				t.Errorf("classes %v from %q, want %v from %q", ce.Classes, ce.Library, tc.classes, tc.library)
			}
			for _, c := range tc.classes {
				if !strings.Contains(err.Error(), c) || !strings.Contains(err.Error(), path) {
					t.Errorf("message %q does not name %s and the file", err, c)
				}
			}
		})
	}
}

// Keras 3 configs are marked Keras 3; the weights come by position.
func TestDescription(t *testing.T) {
	d := keras.New().Describe()
	if d.Runtime != "tfjs" || d.Name != "keras" {
		t.Errorf("description %+v", d)
	}
	m, err := kfile.Load(context.Background(), filepath.Join(shared, convertible[5]), "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != kfile.KerasV3 || m.KerasVersion != "3.9.2" {
		t.Errorf("kind %s version %q", m.Kind, m.KerasVersion)
	}
	ws, err := m.Weights.LayerWeights([]string{"dense_1"})
	if err != nil || len(ws) != 2 || fmt.Sprint(ws[0].Tensor.Dims) != "[64 128]" || ws[0].Name != "" {
		t.Errorf("dense_1 weights %v %v", ws, err)
	}
	var _ keraslayers.Weights = m.Weights
}
