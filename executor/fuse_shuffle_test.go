package executor

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestConcatTransposeFused: ShuffleNet's channel shuffle (Concat of two
// branches, Reshape to [N, 2, C/2, H, W], Transpose [0, 2, 1, 3, 4],
// Reshape back, then the halves Sliced) runs with the Concat and the
// first Reshape folded into the Transpose step, on 1 and 2 threads, with
// outputs bit-identical to the unfused plan's over a build and replays;
// a batch of 2 (the Concat's inputs not one run each) and a shape with a
// 0 and a −1 go through the same step.
func TestConcatTransposeFused(t *testing.T) {
	for _, cs := range []struct {
		n     int
		shape []int64
	}{{1, []int64{1, 2, 6, 5, 4}}, {2, []int64{2, 2, 6, 5, 4}}, {1, []int64{0, 2, -1, 5, 4}}} {
		t.Run(fmt.Sprintf("n%d_%v", cs.n, cs.shape), func(t *testing.T) {
			r := rand.New(rand.NewSource(47))
			m, g := newModel(13)
			a := must(g.AddInput("a", nil))
			b := must(g.AddInput("b", nil))
			fa, _ := f16Tensor(t, "a", canonical.Float, []int{cs.n, 6, 5, 4}, r)
			fb, _ := f16Tensor(t, "b", canonical.Float, []int{cs.n, 6, 5, 4}, r)
			// The branches: a Relu each (kernel steps), as a unit's.
			ra := must(g.AddNode("ra", "", "Relu", []*canonical.Value{a}, []string{"ra"}))
			rb := must(g.AddNode("rb", "", "Relu", []*canonical.Value{b}, []string{"rb"}))
			cat := must(g.AddNode("cat", "", "Concat", []*canonical.Value{ra.Outputs[0], rb.Outputs[0]}, []string{"cat"}, canonical.IntAttr("axis", 1)))
			s1 := must(g.AddInitializer(i64Tensor("s1", []int64{5}, cs.shape...)))
			rs1 := must(g.AddNode("rs1", "", "Reshape", []*canonical.Value{cat.Outputs[0], s1}, []string{"rs1"}))
			tr := must(g.AddNode("tr", "", "Transpose", rs1.Outputs, []string{"tr"}, canonical.IntsAttr("perm", 0, 2, 1, 3, 4)))
			s2 := must(g.AddInitializer(i64Tensor("s2", []int64{4}, int64(cs.n), -1, 5, 4)))
			rs2 := must(g.AddNode("rs2", "", "Reshape", []*canonical.Value{tr.Outputs[0], s2}, []string{"rs2"}))
			st := must(g.AddInitializer(i64Tensor("st", []int64{1}, 6)))
			en := must(g.AddInitializer(i64Tensor("en", []int64{1}, 12)))
			ax := must(g.AddInitializer(i64Tensor("ax", []int64{1}, 1)))
			half := must(g.AddNode("half", "", "Slice", []*canonical.Value{rs2.Outputs[0], st, en, ax}, []string{"y"}))
			out := must(g.AddNode("out", "", "Relu", half.Outputs, []string{"z"}))
			g.Outputs = append(g.Outputs, out.Outputs[0], rs2.Outputs[0])
			var got [3][][]float32
			for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}} {
				var ex *Executor
				ex, got[k] = runPlan(t, m, opts, []*canonical.Tensor{fa, fb}, 3)
				if fused := hasConcatTranspose(ex); fused != (k > 0) {
					t.Fatalf("%+v: Concat folded into the Transpose: %v", opts, fused)
				}
				ex.Close()
			}
			for k := 1; k < 3; k++ {
				for o := range got[0] {
					for i, v := range got[0][o] {
						if math.Float32bits(got[k][o][i]) != math.Float32bits(v) {
							t.Fatalf("plan %d output %d [%d] = %v, unfused %v", k, o, i, got[k][o][i], v)
						}
					}
				}
			}
			// The shuffle itself: output channel 2i+j is input channel
			// j·6 + i of the concatenation (a's then b's).
			plane := 5 * 4
			for n := 0; n < cs.n; n++ {
				for c := 0; c < 12; c++ {
					src := fa
					sc := (c%2)*6 + c/2
					if sc >= 6 {
						src, sc = fb, sc-6
					}
					want := floats(t, src)[(n*6+sc)*plane]
					if want < 0 {
						want = 0
					}
					if g := got[1][1][(n*12+c)*plane]; g != want {
						t.Fatalf("image %d channel %d starts with %v, want %v", n, c, g, want)
					}
				}
			}
		})
	}
}

// hasConcatTranspose reports whether a plan of e holds a Transpose step
// reading a Concat's inputs (fuseConcatTranspose) and no Concat step.
func hasConcatTranspose(e *Executor) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	fused := false
	for _, p := range e.plans {
		for _, st := range p.steps {
			if h, ok := st.(*hostStep); ok {
				switch {
				case h.n.OpType == "Concat":
					return false
				case h.n.OpType == "Transpose" && len(h.n.Inputs) > 1:
					fused = true
				}
			}
		}
	}
	return fused
}

// TestShuffleRowsNHWC checks the channels-last channel shuffle
// (shuffleSources, shuffleRows) against the shuffle's definition — output
// channel j·g + i of a pixel is the concatenation's channel i·C/g + j —
// for parts of equal and unequal widths and 2 to 4 groups, pixels split
// in two ranges, each part dense or a window of wider rows (a Slice's
// view, lds > widths).
func TestShuffleRowsNHWC(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, cs := range []struct {
		widths, pads []int
		g            int
	}{{[]int{6, 6}, []int{0, 0}, 2}, {[]int{3, 5}, []int{0, 0}, 2}, {[]int{6, 6}, []int{0, 0}, 3}, {[]int{4, 4, 4}, []int{0, 0, 0}, 4}, {[]int{20, 20}, []int{0, 0}, 2},
		{[]int{20, 20}, []int{20, 0}, 2}, {[]int{58, 58}, []int{58, 58}, 2}, {[]int{9, 9}, []int{3, 0}, 2}, {[]int{3, 5}, []int{5, 3}, 2}, {[]int{4, 4, 4}, []int{1, 0, 8}, 4}} {
		const px = 13
		ch := 0
		parts := make([][]float32, len(cs.widths))
		lds := make([]int, len(cs.widths))
		for i, w := range cs.widths {
			lds[i] = w + cs.pads[i]
			parts[i] = make([]float32, (px-1)*lds[i]+w)
			for k := range parts[i] {
				parts[i][k] = r.Float32()
			}
			ch += w
		}
		y := make([]float32, px*ch)
		src := shuffleSources(cs.widths, cs.g)
		shuffleRows(parts, cs.widths, lds, cs.g, src, y, 0, 5)
		shuffleRows(parts, cs.widths, lds, cs.g, src, y, 5, px)
		for p := range px {
			cat := []float32{}
			for i, w := range cs.widths {
				cat = append(cat, parts[i][p*lds[i]:p*lds[i]+w]...)
			}
			per := ch / cs.g
			for j := range per {
				for i := range cs.g {
					if got, want := y[p*ch+j*cs.g+i], cat[i*per+j]; got != want {
						t.Fatalf("widths %v, %d groups: pixel %d channel %d = %v, want %v", cs.widths, cs.g, p, j*cs.g+i, got, want)
					}
				}
			}
		}
	}
}
