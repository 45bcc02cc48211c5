package executor

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// bnNode adds an inference BatchNormalization of ch channels on x, with
// random statistics (variance in [0.5, 1.5)).
func bnNode(t *testing.T, g *canonical.Graph, r *rand.Rand, name string, x *canonical.Value, ch int) *canonical.Value {
	t.Helper()
	ins := []*canonical.Value{x}
	for i, p := range []string{"scale", "bias", "mean", "var"} {
		d := make([]float32, ch)
		for j := range d {
			d[j] = float32(r.Float64()*2 - 1)
			if i == 3 {
				d[j] = float32(r.Float64()) + 0.5
			}
		}
		ins = append(ins, must(g.AddInitializer(f32Tensor(name+"_"+p, []int64{int64(ch)}, d...))))
	}
	n := must(g.AddNode(name, "", "BatchNormalization", ins, []string{name}, canonical.FloatAttr("epsilon", 1e-3)))
	return n.Outputs[0]
}

// convNode adds a k×k Conv (padding k/2, no bias) of m output channels.
func convNode(t *testing.T, g *canonical.Graph, r *rand.Rand, name string, x *canonical.Value, c, m, k int) *canonical.Value {
	t.Helper()
	wt, _ := f16Tensor(t, name+"_w", canonical.Float, []int{m, c, k, k}, r)
	w := must(g.AddInitializer(wt))
	p := int64(k / 2)
	n := must(g.AddNode(name, "", "Conv", []*canonical.Value{x, w}, []string{name}, canonical.IntsAttr("pads", p, p, p, p)))
	return n.Outputs[0]
}

func opNode(g *canonical.Graph, name, op string, ins ...*canonical.Value) *canonical.Value {
	return must(g.AddNode(name, "", op, ins, []string{name})).Outputs[0]
}

// TestBatchNormEpilogue: BatchNormalization (and the Relu and residual
// Add after it) run as the epilogue of the Conv before it (a zoo-style
// ResNet block: Conv → BN → Relu, Conv → BN → Add → Relu) and of the
// Concat before it (DenseNet's Concat → BN → Relu → Conv), on shapes whose
// channel blocks the threads' and the Concat's pieces cut in the middle;
// the outputs of a build and four replays are bit-identical to the
// unfused plan's on 1, 2 and 3 threads, and the epilogues ran.
func TestBatchNormEpilogue(t *testing.T) {
	for _, cs := range []struct {
		n, c, h, w int
	}{{1, 6, 30, 29}, {2, 5, 7, 9}, {1, 16, 3, 3}} {
		t.Run(fmt.Sprintf("n%d_c%d_%dx%d", cs.n, cs.c, cs.h, cs.w), func(t *testing.T) {
			r := rand.New(rand.NewSource(47))
			m, g := newModel(13)
			x := must(g.AddInput("x", nil))
			feed, _ := f16Tensor(t, "x", canonical.Float, []int{cs.n, cs.c, cs.h, cs.w}, r)
			c := cs.c
			// ResNet block.
			a := opNode(g, "relu1", "Relu", bnNode(t, g, r, "bn1", convNode(t, g, r, "conv1", x, c, c, 3), c))
			b := bnNode(t, g, r, "bn2", convNode(t, g, r, "conv2", a, c, c, 1), c)
			res := opNode(g, "relu2", "Relu", opNode(g, "add", "Add", b, x))
			// Dense block: two layers of growth 3.
			f1 := convNode(t, g, r, "dconv1", opNode(g, "drelu1", "Relu", bnNode(t, g, r, "dbn1", opNode(g, "cat1", "Concat", res), c)), c, 3, 3)
			cat2 := must(g.AddNode("cat2", "", "Concat", []*canonical.Value{res, f1}, []string{"cat2"}, canonical.IntAttr("axis", 1))).Outputs[0]
			f2 := convNode(t, g, r, "dconv2", opNode(g, "drelu2", "Relu", bnNode(t, g, r, "dbn2", cat2, c+3)), c+3, 3, 3)
			cat3 := must(g.AddNode("cat3", "", "Concat", []*canonical.Value{res, f1, f2}, []string{"cat3"}, canonical.IntAttr("axis", 1))).Outputs[0]
			y := opNode(g, "drelu3", "Relu", bnNode(t, g, r, "dbn3", cat3, c+6))
			g.Outputs = []*canonical.Value{y}
			var got [4][]float32
			for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}, {Threads: 3}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				got[k] = runRepeatable(t, ex, opts, feed, 5)
				_, fused, _, epi := planStepsEpi(ex)
				ex.Close()
				// conv1+bn1+relu1, conv2+bn2+add+relu2, cat+dbn+drelu ×3.
				if k > 0 && epi < 5 {
					t.Fatalf("%+v: %d fused steps, %d ran their tail as an epilogue, want 5", opts, fused, epi)
				}
			}
			for k := 1; k < len(got); k++ {
				for i, v := range got[0] {
					if math.Float32bits(got[k][i]) != math.Float32bits(v) {
						t.Fatalf("y[%d] = %v fused (%d), unfused %v", i, got[k][i], k, v)
					}
				}
			}
		})
	}
}

// runRepeatable runs ex n times on feed and returns its first output's
// values, failing the test when a run's bits differ from the run before.
func runRepeatable(t *testing.T, ex *Executor, opts Options, feed *canonical.Tensor, n int) []float32 {
	t.Helper()
	var prev []float32
	for run := 0; run < n; run++ {
		out, err := ex.Run(context.Background(), []*canonical.Tensor{feed})
		if err != nil {
			t.Fatal(err)
		}
		v := append([]float32{}, hostValues(t, out[0])...)
		for i := range prev {
			if math.Float32bits(v[i]) != math.Float32bits(prev[i]) {
				t.Fatalf("%+v run %d: y[%d] = %v, run 1 %v", opts, run, i, v[i], prev[i])
			}
		}
		prev = v
	}
	return prev
}
