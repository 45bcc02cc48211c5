package tensorflow

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfjsrt "github.com/onnxconv/onnxconv/runtimes/tfjs"
)

// The frozen graphs of tf2onnx's tests compute what TF.js 4.22.0 computes
// running the same GraphDef as a graph model, on tf2onnx's ramp input
// (get_ramp: 0, 1, 2, ... scaled here to [0, 1)) and on a sine input.
func TestFrozenGraphsMatchTFJS(t *testing.T) {
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	env := tfjsrt.Env{Node: node, Modules: modules}
	cases := []struct {
		dir  string
		dims []int64
	}{
		{"tf2onnx_regression", []int64{5}},
		{"tf2onnx_fc-layers", []int64{2, 784}},
		{"tf2onnx_ae0", []int64{2, 784}},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			pb := testpaths.Shared(t, "models", "tf_graphdef", tc.dir, "frozen.pb")
			n, _ := canonical.NumElements(tc.dims)
			for _, input := range []string{"ramp", "sine"} {
				v := make([]float32, n)
				for i := range v {
					if input == "ramp" {
						v[i] = float32(i) / float32(n)
					} else {
						v[i] = float32(math.Sin(float64(i) * 0.3))
					}
				}
				x := f32("X", tc.dims, v...)
				got := run(t, pb, nil, x)
				tp, err := canonical.TensorToProto(x)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				res, err := tfjsrt.Run(ctx, env, pb, []*onnxpb.TensorProto{tp})
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Outputs) != len(got) {
					t.Fatalf("%d outputs, TF.js %d", len(got), len(res.Outputs))
				}
				worst := 0.0
				for i, o := range got {
					want, err := canonical.TensorFromProto(res.Outputs[i])
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(o.Dims) != fmt.Sprint(want.Dims) {
						t.Errorf("output %d: shape %v, TF.js %v", i, o.Dims, want.Dims)
						continue
					}
					g, w := floats(t, o), floats(t, want)
					scale := 0.0
					for _, x := range w {
						scale = math.Max(scale, math.Abs(x))
					}
					for j := range g {
						d := math.Abs(g[j] - w[j])
						worst = math.Max(worst, d/(math.Abs(w[j])+scale))
						if d > 1e-4*(math.Abs(w[j])+scale) || math.IsNaN(g[j]) {
							t.Errorf("%s output %d[%d] = %g, TF.js %g", input, i, j, g[j], w[j])
							break
						}
					}
				}
				t.Logf("%s, %s input: %s/%s, max rel err %.2g", tc.dir, input, res.Kind, res.Method, worst)
			}
		})
	}
}
