package executor

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestTransposeIntoMatMul builds Transpose → MatMul models (attention's
// Q·Kᵀ and ·V layouts at rank 4 and 3, one or both operands transposed,
// broadcast batches, a rank-1 operand) and checks that the fused plan
// drops the Transpose steps it can (and keeps those it cannot: a perm
// that is no matrix view, a transposed value that is also an output),
// that its outputs are bit-identical to the unfused plan's on 1 and 2
// threads, and within float32 rounding of the reference path.
func TestTransposeIntoMatMul(t *testing.T) {
	type operand struct {
		shape []int
		perm  []int64 // nil: no Transpose
	}
	cases := []struct {
		name       string
		a, b       operand
		folded     bool // the Transposes go from the plan
		alsoOutput bool // the transposed A is a graph output too
		outPerm    []int64
	}{
		{"qk_rank4", operand{[]int{1, 16, 4, 8}, []int64{0, 2, 1, 3}}, operand{[]int{1, 16, 4, 8}, []int64{0, 2, 3, 1}}, true, false, nil},
		{"encoder_rank3", operand{[]int{5, 3, 4}, []int64{1, 0, 2}}, operand{[]int{6, 3, 4}, []int64{1, 2, 0}}, true, false, nil},
		{"v_only", operand{[]int{2, 3, 5, 7}, nil}, operand{[]int{2, 7, 3, 4}, []int64{0, 2, 1, 3}}, true, false, nil},
		{"broadcast_weight", operand{[]int{3, 5, 7}, []int64{0, 2, 1}}, operand{[]int{5, 4}, nil}, true, false, nil},
		{"rank1_b", operand{[]int{4, 6}, []int64{1, 0}}, operand{[]int{4}, nil}, true, false, nil},
		{"unit_axes_only", operand{[]int{1, 5, 3}, []int64{1, 0, 2}}, operand{[]int{3, 4}, nil}, true, false, nil},
		{"not_a_view", operand{[]int{4, 2, 3, 5}, []int64{3, 1, 2, 0}}, operand{[]int{5, 2, 4, 6}, nil}, false, false, nil},
		{"also_output", operand{[]int{1, 6, 2, 3}, []int64{0, 2, 1, 3}}, operand{[]int{1, 2, 3, 5}, nil}, false, true, nil},
		// A Transpose of the output.
		{"heads_out", operand{[]int{1, 4, 6, 5}, nil}, operand{[]int{1, 4, 5, 3}, nil}, true, false, []int64{0, 2, 1, 3}},
		{"encoder_out", operand{[]int{4, 6, 5}, nil}, operand{[]int{4, 5, 3}, nil}, true, false, []int64{1, 0, 2}},
		{"qkv_in_and_out", operand{[]int{2, 6, 4, 5}, []int64{0, 2, 1, 3}}, operand{[]int{2, 5, 4, 3}, []int64{0, 2, 1, 3}}, true, false, []int64{0, 2, 1, 3}},
		{"out_rows_not_contiguous", operand{[]int{2, 3, 6, 5}, nil}, operand{[]int{2, 3, 5, 4}, nil}, false, false, []int64{0, 1, 3, 2}},
		{"rank1_out", operand{[]int{3, 4, 5}, nil}, operand{[]int{5}, nil}, true, false, []int64{0, 1}},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(46))
			m, g := newModel(17)
			var feeds []*canonical.Tensor
			var mmIns []*canonical.Value
			var extra []*canonical.Value
			for i, op := range []operand{cs.a, cs.b} {
				name := fmt.Sprintf("x%d", i)
				v := must(g.AddInput(name, nil))
				ct, _ := f16Tensor(t, name, canonical.Float, op.shape, r)
				feeds = append(feeds, ct)
				if op.perm != nil {
					n, err := g.AddNode(fmt.Sprintf("t%d", i), "", "Transpose", []*canonical.Value{v}, []string{fmt.Sprintf("xt%d", i)},
						canonical.IntsAttr("perm", op.perm...))
					if err != nil {
						t.Fatal(err)
					}
					v = n.Outputs[0]
					if i == 0 && cs.alsoOutput {
						extra = append(extra, v)
					}
				}
				mmIns = append(mmIns, v)
			}
			mm, err := g.AddNode("mm", "", "MatMul", mmIns, []string{"y"})
			if err != nil {
				t.Fatal(err)
			}
			outs := mm.Outputs
			if cs.outPerm != nil {
				tn, err := g.AddNode("tout", "", "Transpose", mm.Outputs, []string{"z"}, canonical.IntsAttr("perm", cs.outPerm...))
				if err != nil {
					t.Fatal(err)
				}
				outs = tn.Outputs
			}
			g.Outputs = append(outs, extra...)
			var got [4][][]float32
			for k, opts := range []Options{{DisableKernels: true}, {Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				for run := 0; run < 3; run++ { // build, then replays
					res, err := ex.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					got[k] = nil
					for _, o := range res {
						got[k] = append(got[k], append([]float32{}, hostValues(t, o)...))
					}
				}
				if k >= 2 {
					if has := hasHostStep(ex, "Transpose"); has == cs.folded {
						t.Fatalf("%+v: Transpose step in the plan: %v, want %v", opts, has, !cs.folded)
					}
				}
				ex.Close()
			}
			for o := range got[0] {
				for i, v := range got[0][o] {
					if d := math.Abs(float64(got[1][o][i]) - float64(v)); d > 1e-5*(1+math.Abs(float64(v))) {
						t.Fatalf("output %d value %d = %v, reference %v", o, i, got[1][o][i], v)
					}
				}
				for k := 2; k < 4; k++ {
					if len(got[k][o]) != len(got[1][o]) {
						t.Fatalf("output %d: %d values fused, %d unfused", o, len(got[k][o]), len(got[1][o]))
					}
					for i, v := range got[1][o] {
						if math.Float32bits(got[k][o][i]) != math.Float32bits(v) {
							t.Fatalf("output %d value %d: fused (run %d) %v, unfused %v", o, i, k, got[k][o][i], v)
						}
					}
				}
			}
		})
	}
}

// TestTransposeIntoDiv builds Transpose → Div(scalar) models (attention's
// Q scaling after the heads' Transpose; the divisor an initializer or a
// Constant node, of rank 0 or 1) and checks that the fused plan drops the
// Transpose step when the Div is its sole reader (and keeps it when not:
// a second reader, a divisor of several values), and that the outputs
// are bit-identical to the unfused plan's on 1, 2 and 3 threads.
func TestTransposeIntoDiv(t *testing.T) {
	cases := []struct {
		name     string
		shape    []int
		perm     []int64
		constant bool // the divisor a Constant node (else an initializer)
		dims     []int64
		second   bool // the transposed value also read by a Relu
		folded   bool
	}{
		{"encoder_q", []int{64, 8, 32}, []int64{1, 0, 2}, true, nil, false, true},
		{"odd_rank4", []int{1, 7, 3, 5}, []int64{0, 2, 1, 3}, false, []int64{1}, false, true},
		{"last_axis_moves", []int{3, 5, 7}, []int64{0, 2, 1}, true, []int64{1}, false, true},
		{"reversed", []int{2, 3, 9}, nil, false, nil, false, true},
		{"rank1", []int{11}, []int64{0}, true, []int64{1}, false, true},
		{"two_readers", []int{4, 3, 5}, []int64{1, 0, 2}, true, nil, true, false},
		{"vector_divisor", []int{4, 3, 5}, []int64{1, 0, 2}, false, []int64{5}, false, false},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(47))
			m, g := newModel(17)
			x := must(g.AddInput("x", nil))
			ct, _ := f16Tensor(t, "x", canonical.Float, cs.shape, r)
			var attrs []*canonical.Attribute
			if cs.perm != nil {
				attrs = append(attrs, canonical.IntsAttr("perm", cs.perm...))
			}
			tn := must(g.AddNode("t", "", "Transpose", []*canonical.Value{x}, []string{"xt"}, attrs...))
			vals := []float32{5.656854}
			if n := numel64(cs.dims); n > 1 {
				vals = make([]float32, n)
				for i := range vals {
					vals[i] = float32(1.5 + r.Float64())
				}
			}
			var d *canonical.Value
			if cs.constant {
				d = must(g.AddNode("c", "", "Constant", nil, []string{"d"}, canonical.TensorAttr("value", f32Tensor("d", cs.dims, vals...)))).Outputs[0]
			} else {
				d = must(g.AddInitializer(f32Tensor("d", cs.dims, vals...)))
			}
			dv := must(g.AddNode("div", "", "Div", []*canonical.Value{tn.Outputs[0], d}, []string{"y"}))
			g.Outputs = dv.Outputs
			if cs.second {
				g.Outputs = append(g.Outputs, must(g.AddNode("relu", "", "Relu", tn.Outputs, []string{"z"})).Outputs[0])
			}
			var got [4][][]float32
			for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}, {Threads: 3}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				for run := 0; run < 3; run++ { // build, then replays
					res, err := ex.Run(context.Background(), []*canonical.Tensor{ct})
					if err != nil {
						t.Fatal(err)
					}
					got[k] = nil
					for _, o := range res {
						got[k] = append(got[k], append([]float32{}, hostValues(t, o)...))
					}
				}
				if k >= 1 {
					if has := hasHostStep(ex, "Transpose"); has == cs.folded {
						t.Fatalf("%+v: Transpose step in the plan: %v, want %v", opts, has, !cs.folded)
					}
				}
				ex.Close()
			}
			for k := 1; k < 4; k++ {
				for o := range got[0] {
					if len(got[k][o]) != len(got[0][o]) {
						t.Fatalf("output %d: %d values fused, %d unfused", o, len(got[k][o]), len(got[0][o]))
					}
					for i, v := range got[0][o] {
						if math.Float32bits(got[k][o][i]) != math.Float32bits(v) {
							t.Fatalf("output %d value %d: fused (%d) %v, unfused %v", o, i, k, got[k][o][i], v)
						}
					}
				}
			}
		})
	}
}
