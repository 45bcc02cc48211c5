package executor

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestTopKKernel runs the TopK kernel on odd shapes and axes, largest and
// smallest, small and large K, on values with many ties, against the
// reference host kernel (DisableKernels): values and indices identical,
// on 1 and 2 threads, and the kernel ran.
func TestTopKKernel(t *testing.T) {
	cases := []struct {
		shape    []int
		axis, k  int64
		largest  int64
		quantize bool
	}{
		{[]int{3, 7, 5}, 1, 3, 1, true},
		{[]int{3, 7, 5}, -1, 5, 0, true},
		{[]int{4, 2}, 0, 2, 1, false},
		{[]int{2, 20, 3}, 1, 12, 1, true},
		{[]int{2, 20, 3}, 1, 20, 0, true},
		{[]int{1, 64}, 1, 5, 1, false},
		{[]int{6}, 0, 0, 1, false},
	}
	for ci, cs := range cases {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			r := rand.New(rand.NewSource(46))
			m, g := newModel(13)
			x := must(g.AddInput("x", nil))
			raw := make([]byte, 8)
			binary.LittleEndian.PutUint64(raw, uint64(cs.k))
			kv := must(g.AddInitializer(canonical.NewTensor("k", canonical.Int64, []int64{1}, raw)))
			n, err := g.AddNode("n", "", "TopK", []*canonical.Value{x, kv}, []string{"values", "indices"},
				canonical.IntAttr("axis", cs.axis), canonical.IntAttr("largest", cs.largest))
			if err != nil {
				t.Fatal(err)
			}
			g.Outputs = n.Outputs
			v := make([]float64, numel(cs.shape))
			for i := range v {
				v[i] = r.Float64()*2 - 1
				if cs.quantize {
					v[i] = math.Round(v[i]*3) / 3
				}
			}
			feed := must(fromF64(canonical.Float, cs.shape, v).toCanonical("x"))
			var got [3][2]string
			for k, opts := range []Options{{DisableKernels: true}, {Threads: 1}, {Threads: 2}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				for run := 0; run < 2; run++ {
					res, err := ex.Run(context.Background(), []*canonical.Tensor{feed})
					if err != nil {
						t.Fatal(err)
					}
					for o, ct := range res {
						h := must(fromCanonical(ct))
						got[k][o] = fmt.Sprint(ct.Dims, h.f64())
					}
				}
				if k > 0 && !hasHostStep(ex, "TopK") {
					t.Fatal("TopK did not run on the kernel")
				}
				ex.Close()
			}
			for k := 1; k < 3; k++ {
				for o := 0; o < 2; o++ {
					if got[k][o] != got[0][o] {
						t.Fatalf("output %d (%d threads): %s, reference %s", o, k, got[k][o], got[0][o])
					}
				}
			}
		})
	}
}
