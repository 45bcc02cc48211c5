package keras_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	kfile "github.com/onnxconv/onnxconv/formats/keras"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/keras"
	"github.com/onnxconv/onnxconv/importers/keraslayers"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// customFixtures is fixtures/custom: a model with the custom layer class
// MultiplyBeta (y = x · beta) as TF.js saves it and as Keras 2 writes it
// (make.js, make_keras.py), TF.js's output for it (TF.js running the
// class registered), and the user's ONNX definition multiply_beta.onnx.
const customFixtures = "../../fixtures/custom"

// A Keras 2 file and a TF.js layers model with a custom layer class are
// refused with an error that names the class and says how to supply it;
// given -O custom=multiply_beta.onnx they convert, and the executor
// computes what TF.js computed with the class registered.
func TestCustomLayerFromONNXFunction(t *testing.T) {
	def := filepath.Join(customFixtures, "multiply_beta.onnx")
	x := npyAt(t, filepath.Join(customFixtures, "multiply_beta_data", "x.npy"))
	want := f32s(t, npyAt(t, filepath.Join(customFixtures, "multiply_beta_data", "multiply_beta.npy")))
	for _, tc := range []struct{ file, importer string }{
		{"multiply_beta.json", "keras"},
		{"multiply_beta_tfjs/model.json", "tfjs"},
	} {
		t.Run(tc.importer, func(t *testing.T) {
			path := filepath.Join(customFixtures, tc.file)
			imp, _, err := builtin.Registry().Detect(path)
			if err != nil || imp.Describe().Name != tc.importer {
				t.Fatalf("detect %s: %v", path, err)
			}
			_, err = imp.Import(context.Background(), path, nil)
			var ce *kfile.CustomLayerError
			var le *keraslayers.LayerError
			if !(errors.As(err, &ce) && ce.Classes[0] == "MultiplyBeta") && !(errors.As(err, &le) && le.Unsupported && le.Class == "MultiplyBeta") {
				t.Fatalf("without a definition: %v, want a refusal of MultiplyBeta", err)
			}
			if !strings.Contains(err.Error(), "-O custom=FILE.onnx") {
				t.Errorf("the refusal does not say how to supply the layer: %v", err)
			}
			res, err := imp.Import(context.Background(), path, importers.Options{"custom": def})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Model
			defer m.Close()
			if len(m.Functions) != 1 || m.Functions[0].Name != "MultiplyBeta" || m.Opset("custom") != 1 {
				t.Fatalf("functions %v, opset custom %d: want the MultiplyBeta function", m.Functions, m.Opset("custom"))
			}
			in := *x
			in.Name = m.Graph.Inputs[0].Name
			got := f32s(t, runExecutor(t, m, []*canonical.Tensor{&in})[0])
			t.Logf("max rel err vs TF.js %.3g", maxRelErr(t, tc.importer, got, want, 1e-6))
		})
	}
	// A definitions file that is not ONNX is named in the error.
	bad := filepath.Join(customFixtures, "multiply_beta_data", "x.npy")
	_, _, err := keras.ImportFile(context.Background(), filepath.Join(customFixtures, "multiply_beta.json"), keras.Options{Custom: bad})
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a custom file that is not ONNX: %v", err)
	}
}

func npyAt(t *testing.T, path string) *canonical.Tensor {
	t.Helper()
	x, err := tensorio.ReadNpyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
