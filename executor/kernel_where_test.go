package executor

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestWhereKernel runs Where on float32 values with a bool condition
// (same shapes; an attention mask broadcast over heads with a scalar
// −inf; all three broadcast) against the reference path: identical
// values, on 1 and 2 threads, and the kernel ran.
func TestWhereKernel(t *testing.T) {
	cases := []struct {
		cond, x, y []int
		xConst     bool
	}{
		{[]int{2, 3, 5}, []int{2, 3, 5}, []int{2, 3, 5}, false},
		{[]int{1, 1, 4, 4}, []int{}, []int{1, 3, 4, 4}, true},
		{[]int{4, 1}, []int{1, 5}, []int{3, 4, 5}, false},
	}
	for ci, cs := range cases {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			r := rand.New(rand.NewSource(46))
			m, g := newModel(16)
			raw := make([]byte, numel(cs.cond))
			for i := range raw {
				raw[i] = byte(r.Intn(2))
			}
			dims := make([]int64, len(cs.cond))
			for i, d := range cs.cond {
				dims[i] = int64(d)
			}
			cond := must(g.AddInitializer(canonical.NewTensor("c", canonical.Bool, dims, raw)))
			var feeds []*canonical.Tensor
			var x *canonical.Value
			if cs.xConst {
				ct := must(fromF64(canonical.Float, cs.x, []float64{math.Inf(-1)}).toCanonical("x"))
				x = must(g.AddInitializer(ct))
			} else {
				x = must(g.AddInput("x", nil))
				ct, _ := f16Tensor(t, "x", canonical.Float, cs.x, r)
				feeds = append(feeds, ct)
			}
			y := must(g.AddInput("y", nil))
			ct, _ := f16Tensor(t, "y", canonical.Float, cs.y, r)
			feeds = append(feeds, ct)
			n, err := g.AddNode("w", "", "Where", []*canonical.Value{cond, x, y}, []string{"z"})
			if err != nil {
				t.Fatal(err)
			}
			g.Outputs = n.Outputs
			var got [3][]float32
			var shape [3]string
			for k, opts := range []Options{{DisableKernels: true}, {Threads: 1}, {Threads: 2}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				for run := 0; run < 2; run++ {
					res, err := ex.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					got[k], shape[k] = append([]float32{}, hostValues(t, res[0])...), fmt.Sprint(res[0].Dims)
				}
				if k > 0 && !hasHostStep(ex, "Where") {
					t.Fatal("Where did not run on the kernel")
				}
				ex.Close()
			}
			for k := 1; k < 3; k++ {
				if shape[k] != shape[0] || len(got[k]) != len(got[0]) {
					t.Fatalf("shape %s (%d threads), reference %s", shape[k], k, shape[0])
				}
				for i, v := range got[0] {
					if math.Float32bits(got[k][i]) != math.Float32bits(v) {
						t.Fatalf("z[%d] = %v (%d threads), reference %v", i, got[k][i], k, v)
					}
				}
			}
		})
	}
}
