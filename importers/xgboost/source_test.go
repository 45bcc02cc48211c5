package xgboost_test

import (
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// TestSourceAgreesWithONNX: for every fixture (JSON and UBJSON, predict
// and margin), the direct Go predictor agrees with the ONNX result on the
// executor, on the inputs xgboost's own predictions were stored for (the
// ONNX result is checked against those in TestImportInterfaceExecutor).
func TestSourceAgreesWithONNX(t *testing.T) {
	files, err := filepath.Glob("../../fixtures/xgboost/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, p := range files {
		if filepath.Base(p) == "manifest.json" {
			continue
		}
		for _, raw := range []string{"false", "true"} {
			t.Run(filepath.Base(p)+"/raw="+raw, func(t *testing.T) {
				imp := treetest.Detect(t, builtin.Registry(), p, "xgboost")
				in := readInput(t, p[:len(p)-len(".json")]+".input.npy")
				opts := importers.Options{"raw_score": raw}
				got := treetest.RunONNX(t, imp, p, opts, in)
				src := treetest.RunSource(t, imp, p, opts, in)
				// The predictor sums in float32 as xgboost does, the executor in

				e := treetest.SameOutputs(t, "predictor vs ONNX", src, got, 1e-6)
				t.Logf("predictor vs ONNX: %.3g", e)
			})
		}
	}
}

func readInput(t *testing.T, path string) *canonical.Tensor {
	t.Helper()
	x, err := tensorio.ReadNpyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Float64s()
	if err != nil || len(x.Dims) != 2 {
		t.Fatalf("%s: %v (dims %v)", path, err, x.Dims)
	}
	f := int(x.Dims[1])
	rows := make([][]float64, x.Dims[0])
	for i := range rows {
		rows[i] = v[i*f : (i+1)*f]
	}
	return treetest.Input(canonical.Float, rows)
}
