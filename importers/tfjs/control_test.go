package tfjs_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfjsrt "github.com/onnxconv/onnxconv/runtimes/tfjs"
)

// The graph_control fixture (fixtures/tfjs/make.js: StatelessIf taken both
// ways, a counted StatelessWhile with an If in its body, a While whose trip
// count depends on the input) imports with its function library lowered
// to ONNX If and Loop, and computes what TF.js 4.22.0 computes with
// executeAsync on the same inputs, within 1e-5.
func TestControlFlowMatchesTFJS(t *testing.T) {
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	env := tfjsrt.Env{Node: node, Modules: modules}
	path := filepath.Join(fixtureDir, "graph_control", "model.json")
	m := importDetected(t, path)
	ops := map[string]int{}
	for _, n := range m.Graph.Nodes {
		ops[n.OpType]++
	}
	if ops["If"] != 2 || ops["Loop"] != 2 {
		t.Errorf("top graph has %d If and %d Loop nodes, want 2 and 2", ops["If"], ops["Loop"])
	}
	// Inputs of both signs and sizes: the If takes each branch, the
	// data-dependent loop runs from 2 to 45 times.
	inputs := map[string][]float32{
		"positive": {0.3, -0.2, 0.9, 1.5, 0.01, -0.7},
		"negative": {-0.3, -0.2, 0.4, -1.5, 0.01, -0.7},
		"large":    {4, -9, 2, 8, -3, 6},
		"tiny":     {1e-3, -2e-3, 0, 0, 5e-4, -1e-4},
	}
	for name, v := range inputs {
		t.Run(name, func(t *testing.T) {
			ins := []*canonical.Tensor{f32Tensor("x", []int64{2, 3}, v)}
			got := runExecutor(t, m, ins)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := tfjsrt.Run(ctx, env, path, toProtos(t, ins))
			if err != nil {
				t.Fatal(err)
			}
			if res.Method != "executeAsync" {
				t.Errorf("TF.js ran the model with %s, want executeAsync", res.Method)
			}
			if len(res.Outputs) != len(got) {
				t.Fatalf("%d outputs, TF.js %d", len(got), len(res.Outputs))
			}
			for i, o := range got {
				want, err := canonical.TensorFromProto(res.Outputs[i])
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(o.Dims) != fmt.Sprint(want.Dims) {
					t.Errorf("output %d (%s): shape %v, TF.js %v", i, m.Graph.Outputs[i].Name, o.Dims, want.Dims)
					continue
				}
				g, w := floats(t, o), floats(t, want)
				for j := range w {
					if d := math.Abs(float64(g[j] - w[j])); d > 1e-5*(1+math.Abs(float64(w[j]))) || math.IsNaN(float64(g[j])) {
						t.Errorf("output %d (%s)[%d] = %g, TF.js %g", i, m.Graph.Outputs[i].Name, j, g[j], w[j])
					}
				}
				t.Logf("%s = %v (TF.js %v)", m.Graph.Outputs[i].Name, g, w)
			}
		})
	}
}
