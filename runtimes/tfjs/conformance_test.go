package tfjs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
)

// referenceCase is a TF.js graph model of ../shared/models/tfjs_graph
// with the sample TF.js 4.22 (CPU backend) computed for it
// (tfjs_reference/: input_0.npy, output_N.npy and io.json naming them in
// TF.js's output order, which the session is asked for).
func referenceCase(t *testing.T, name, modelJSON string) runtimetest.Case {
	t.Helper()
	dir := testpaths.Shared(t, "models", "tfjs_graph", name)
	ref := filepath.Join(dir, "tfjs_reference")
	b, err := os.ReadFile(filepath.Join(ref, "io.json"))
	if err != nil {
		t.Fatal(err)
	}
	var io struct {
		Inputs, Outputs []struct{ File, Name string }
	}
	if err := json.Unmarshal(b, &io); err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	c := runtimetest.Case{Name: name, Path: filepath.Join(dir, modelJSON)}
	var ins, outs []string
	for _, x := range io.Inputs {
		c.Options.InputNames = append(c.Options.InputNames, x.Name)
		ins = append(ins, filepath.Join(ref, x.File))
	}
	for _, x := range io.Outputs {
		c.Options.OutputNames = append(c.Options.OutputNames, x.Name)
		outs = append(outs, filepath.Join(ref, x.File))
	}
	c.Samples = []runtimetest.Sample{runtimetest.NpySample(t, ins, outs)}
	return c
}

// TestConformance runs the runtime conformance suite on the tfjs runtime:
// TF.js graph models against the outputs TF.js computed for them (one of
// four outputs; one with a free batch dim, run at batch 1 and 3), and
// TensorFlow SavedModels of int32 tensors against the values TensorFlow
// computed in tfjs-node's tests (tfjs_node_saved_model_test.ts.
// expected_values). A file that is not a model is a *NotTFJSError or
// TF.js's *RunError.
func TestConformance(t *testing.T) {
	e := env(t)
	i32 := func(name string, v ...int32) *canonical.Tensor {
		return canonical.Int32Tensor(name, []int64{int64(len(v))}, v)
	}
	saved := func(name string) string { return testpaths.Shared(t, "models", "tf_savedmodel", name) }
	blazeface := referenceCase(t, "human_blazeface", "blazeface.json")
	// The runtime computes on TF.js's WASM backend, the reference on its
	// CPU backend: they differ by up to 2.4e-5 on outputs up to 115.
	blazeface.ATol = 1e-4
	emotion := referenceCase(t, "human_emotion", "emotion.json")
	emotion.Samples = append(emotion.Samples, runtimetest.Batched(t, emotion.Samples[0], 3))
	cases := []runtimetest.Case{
		emotion,
		blazeface,
		{Path: saved("tfjs_node_times_two_int"), Samples: []runtimetest.Sample{{
			Inputs: []*canonical.Tensor{i32("x", 1, 2, 3)},
			Want:   []*canonical.Tensor{i32("output_0", 2, 4, 6)},
		}}},
		{Path: saved("tfjs_node_model_multi_output"), Samples: []runtimetest.Sample{{
			Inputs: []*canonical.Tensor{i32("x", 1, 2, 3), i32("y", 1, 2, 3)},
			Want:   []*canonical.Tensor{i32("output_0", 2, 4, 6), i32("output_1", 1, 2, 3)},
		}}},
	}
	runtimetest.Run(t, runtimetest.Suite{
		Runtime: New(runtimetest.NodeModules(e.Modules)),
		Cases:   cases,
		BadModel: func(err error) bool {
			var nt *NotTFJSError
			var re *RunError
			return errors.As(err, &nt) || errors.As(err, &re)
		},
	})
}
