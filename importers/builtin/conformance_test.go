package builtin

import (
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/importertest"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestConformance runs the conformance suite (importers/importertest) on
// every built-in importer.
func TestConformance(t *testing.T) {
	cases := map[string][]importertest.Case{
		"tflite":  {{Path: filepath.Join(fixtures, "tflite", "cnn.tflite"), MinDetect: 1}},
		"xgboost": {{Path: filepath.Join(fixtures, "xgboost", "binary_hinge.json"), MinDetect: 1}},
		"sklearn": {{Path: filepath.Join(fixtures, "sklearn", "decision_tree_regressor.p4.pkl")}},
		"tfjs":    {{Path: filepath.Join(fixtures, "tfjs", "cnn", "model.json")}},
		"onnx":    {{Path: filepath.Join(fixtures, "models", "mlp_opset17", "model.onnx"), MinDetect: 0.9}},
		// TorchScript inputs have no stored shapes: -O shapes gives them.
		"torchscript": {{Path: filepath.Join(fixtures, "torchscript", "branchy_scripted", "model.pt"), Options: importers.Options{"shapes": "2x16"}}},
		// Third-party models of ../shared.
		"lightgbm":   {{Path: testpaths.Shared(t, "models", "lightgbm", "leaves_breast_cancer_binary", "lg_breast_cancer.txt")}},
		"catboost":   {{Path: testpaths.Shared(t, "models", "catboost", "catboost_cgo", "regressor", "regressor.cbm")}},
		"keras":      {{Path: testpaths.Shared(t, "models", "keras_h5", "hls4ml_KERAS_3layer", "KERAS_3layer.json")}},
		"tensorflow": {{Path: testpaths.Shared(t, "models", "tf_graphdef", "tf2onnx_fc-layers", "frozen.pb")}},
	}
	for _, imp := range Importers() {
		name := imp.Describe().Name
		cs, ok := cases[name]
		if !ok {
			t.Errorf("%s: no conformance fixture: add one here", name)
			continue
		}
		t.Run(name, func(t *testing.T) { importertest.Run(t, imp, cs...) })
	}
}
