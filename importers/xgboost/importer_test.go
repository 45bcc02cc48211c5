package xgboost

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/version"
)

// TestImportInterfaceExecutor imports fixtures through importers.Importer
// (from their files) and checks the built-in executor's outputs against
// the predictions xgboost stored with them.
func TestImportInterfaceExecutor(t *testing.T) {
	man := loadManifest(t)
	imp := New()
	for _, fm := range man.Models {
		for _, ext := range []string{".json", ".ubj"} {
			for _, output := range []string{OutputPredict, OutputMargin} {
				t.Run(fm.Name+ext+"/"+output, func(t *testing.T) {
					path := filepath.Join(fixtureDir, fm.Name+ext)
					res, err := imp.Import(context.Background(), path, importers.Options{"output": output})
					if err != nil {
						t.Fatal(err)
					}
					m := res.Model
					defer m.Close()
					if m.ProducerName != "onnxconv" || m.ProducerVersion != version.Get().Short() || m.ProducerVersion == "" {
						t.Errorf("producer %q %q", m.ProducerName, m.ProducerVersion)
					}
					ex, err := executor.New(m, executor.Options{})
					if err != nil {
						t.Fatal(err)
					}
					defer ex.Close()
					in := readNpy(t, fm.Name+".input.npy")
					raw := make([]byte, 4*len(in.f))
					for i, v := range in.f {
						binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
					}
					outs, err := ex.Run(context.Background(), []*canonical.Tensor{canonical.NewTensor(inputName, canonical.Float, in.shape, raw)})
					if err != nil {
						t.Fatal(err)
					}
					got := map[string]*canonical.Tensor{}
					for i, o := range outs {
						got[m.Graph.Outputs[i].Name] = o
					}
					if output == OutputMargin {
						if len(outs) != 1 {
							t.Errorf("margin model has %d outputs", len(outs))
						}
						compareExec(t, "margin", got["margin"], readNpy(t, fm.Name+".margin.npy"), false)
						return
					}
					compareExec(t, "predict", got["predict"], readNpy(t, fm.Name+".predict.npy"),
						fm.Objective == "multi:softmax" || fm.Objective == "binary:hinge")
					for _, o := range fm.Outputs {
						switch o {
						case "label":
							compareExec(t, "label", got["label"], readNpy(t, fm.Name+".label.npy"), true)
						case "probabilities":
							compareExec(t, "probabilities", got["probabilities"], readNpy(t, fm.Name+".probabilities.npy"), false)
						}
					}
				})
			}
		}
	}
}

// compareExec checks an executor output against a stored xgboost output.
func compareExec(t *testing.T, what string, got *canonical.Tensor, want npyArray, exact bool) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: output missing", what)
		return
	}
	if len(got.Dims) != len(want.shape) {
		t.Errorf("%s: shape %v, xgboost gives %v", what, got.Dims, want.shape)
		return
	}
	for i := range want.shape {
		if got.Dims[i] != want.shape[i] {
			t.Errorf("%s: shape %v, xgboost gives %v", what, got.Dims, want.shape)
			return
		}
	}
	g, err := got.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(want.f) {
		t.Fatalf("%s: %d values, xgboost gives %d", what, len(g), len(want.f))
	}
	const rt, at = 1e-5, 1e-6
	bad := 0
	for i, w := range want.f {
		ok := g[i] == w
		if !exact {
			ok = math.Abs(g[i]-w) <= at+rt*math.Abs(w)
		}
		if !ok {
			if bad < 3 {
				t.Errorf("%s[%d]: got %.9g, xgboost %.9g", what, i, g[i], w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ", what, bad, len(want.f))
	}
}

func TestOptionErrors(t *testing.T) {
	o, err := ParseOptions(map[string]string{"ml_opset": "3", "opset": "13", "output": "margin"})
	if err != nil || o != (Options{MLOpset: 3, AIOpset: 13, Output: OutputMargin}) {
		t.Fatalf("ParseOptions = %+v, %v", o, err)
	}
	for _, c := range []struct {
		opts     map[string]string
		key      string
		badValue bool
	}{
		{map[string]string{"learning_rate": "1"}, "learning_rate", false},
		{map[string]string{"ml_opset": "x"}, "ml_opset", true},
		{map[string]string{"ml_opset": "6"}, "ml_opset", true},
		{map[string]string{"ml_opset": "0"}, "ml_opset", true},
		{map[string]string{"opset": "8"}, "opset", true},
		{map[string]string{"opset": "99"}, "opset", true},
		{map[string]string{"output": "proba"}, "output", true},
		{map[string]string{"iteration_range": "10"}, "iteration_range", true},
		{map[string]string{"iteration_range": "3:1"}, "iteration_range", true},
		{map[string]string{"zz": "1", "output": "proba"}, "output", true},
	} {
		_, err := ParseOptions(c.opts)
		var oe *importers.OptionError
		if !errors.As(err, &oe) || oe.Importer != "xgboost" || oe.Key != c.key || (oe.Err != nil) != c.badValue {
			t.Errorf("ParseOptions(%v) = %v", c.opts, err)
			continue
		}
		if strings.Join(oe.Known, ",") != "ml_opset,opset,output,raw_score,iteration_range" {
			t.Errorf("Known = %v", oe.Known)
		}
		_, err = New().Import(context.Background(), filepath.Join(fixtureDir, "binary_logistic.json"), c.opts)
		if !errors.As(err, &oe) || oe.Key != c.key {
			t.Errorf("Import with %v: %v", c.opts, err)
		}
	}
}

func TestImportFileErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var nr *importers.NotRegularError
	if _, err := New().Import(ctx, dir, nil); !errors.As(err, &nr) || !strings.Contains(err.Error(), dir) {
		t.Errorf("a folder: %v", err)
	}
	missing := filepath.Join(dir, "nope.json")
	if _, err := New().Import(ctx, missing, nil); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"learner": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New().Import(ctx, bad, nil); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a corrupt file: %v", err)
	}
}
