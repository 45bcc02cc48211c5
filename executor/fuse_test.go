package executor

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// planSteps counts the steps and the fused steps of every plan of e.
func planSteps(e *Executor) (steps, fused, fusedOps int) {
	steps, fused, fusedOps, _ = planStepsEpi(e)
	return
}

// planStepsEpi is planSteps with the number of fused steps whose tail ran
// as their head's epilogue on the last run.
func planStepsEpi(e *Executor) (steps, fused, fusedOps, epi int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.plans {
		steps += len(p.steps)
		for _, st := range p.steps {
			if f, ok := st.(*fusedStep); ok {
				fused++
				fusedOps += len(f.steps)
				if f.epilogue.Load() {
					epi++
				}
			}
		}
	}
	return
}

// nodeAdder returns a function that adds a node of op to g with one
// output, both named for the node's place in g.
func nodeAdder(t *testing.T, g *canonical.Graph) func(op string, ins []*canonical.Value, attrs ...*canonical.Attribute) *canonical.Value {
	return func(op string, ins []*canonical.Value, attrs ...*canonical.Attribute) *canonical.Value {
		t.Helper()
		n, err := g.AddNode(fmt.Sprintf("%s%d", op, len(g.Nodes)), "", op, ins, []string{fmt.Sprintf("v%d", len(g.Nodes))}, attrs...)
		if err != nil {
			t.Fatal(err)
		}
		return n.Outputs[0]
	}
}

// hasHostStep reports whether a plan of e runs op as a kernel step.
func hasHostStep(e *Executor, op string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.plans {
		for _, st := range p.steps {
			if h, ok := st.(*hostStep); ok && h.packs && h.n.OpType == op {
				return true
			}
		}
	}
	return false
}

// TestFusedEpilogues runs fixture models with and without the fused
// epilogues (fuse.go): the outputs of the build and of two replays are
// bit-identical to the unfused executor's, and on the CNNs the fusion
// happened (fewer steps).
func TestFusedEpilogues(t *testing.T) {
	for _, name := range []string{"resnet_small", "squeezenet", "transformer_encoder", "transformer_block_opset21", "mlp_opset17"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "fixtures", "models", name)
			m, ins := loadModelDir(t, dir)
			var outs [4][][]byte
			var steps, fused, epi [4]int
			for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}, {Threads: 3}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				for r := 0; r < 3; r++ {
					res, err := ex.Run(context.Background(), ins)
					if err != nil {
						t.Fatal(err)
					}
					for _, o := range res {
						b, err := o.Bytes()
						if err != nil {
							t.Fatal(err)
						}
						outs[k] = append(outs[k], b)
					}
				}
				steps[k], fused[k], _, epi[k] = planStepsEpi(ex)
				ex.Close()
			}
			for k := 1; k < len(outs); k++ {
				if len(outs[0]) != len(outs[k]) {
					t.Fatalf("%d outputs unfused, %d fused", len(outs[0]), len(outs[k]))
				}
				for i := range outs[0] {
					if !bytes.Equal(outs[0][i], outs[0][0:][i%(len(outs[0])/3)]) || !bytes.Equal(outs[0][i], outs[k][i]) {
						t.Fatalf("output %d (run %d) differs between fused (%d threads) and unfused runs", i%(len(outs[0])/3), i/(len(outs[0])/3), k)
					}
				}
			}
			t.Logf("steps: %d unfused, %d fused (%d fused steps, %d with an epilogue)", steps[0], steps[1], fused[1], epi[1])
			if (name == "resnet_small" || name == "squeezenet") && epi[1] == 0 {
				t.Fatalf("no fused step ran its tail as an epilogue")
			}
			if fused[0] != 0 {
				t.Fatalf("DisableFusion: %d fused steps", fused[0])
			}
			if name == "resnet_small" || name == "squeezenet" {
				if fused[1] == 0 || steps[1] >= steps[0] {
					t.Fatalf("no fusion: %d steps unfused, %d fused, %d fused steps", steps[0], steps[1], fused[1])
				}
			}
		})
	}
}

// f16Tensor makes a tensor of type dt from values rounded to it; it
// returns the rounded values too.
func f16Tensor(t *testing.T, name string, dt canonical.DataType, shape []int, r *rand.Rand) (*canonical.Tensor, []float64) {
	t.Helper()
	v := make([]float64, numel(shape))
	for i := range v {
		v[i] = r.Float64()*2 - 1
	}
	h := fromF64(dt, shape, v)
	h.roundToType()
	ct, err := h.toCanonical(name)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range h.data.([]float32) {
		v[i] = float64(x)
	}
	return ct, v
}

func hostValues(t *testing.T, ct *canonical.Tensor) []float32 {
	t.Helper()
	h, err := fromCanonical(ct)
	if err != nil {
		t.Fatal(err)
	}
	return h.data.([]float32)
}

// TestHalfKernels runs MatMul, Gemm and Conv on float16 and bfloat16 through
// the float32 kernels (inputs read as float32, one rounding of the
// float32 result): the backend tests hold no float16 or bfloat16 MatMul,
// Gemm or Conv, so the reference is computed here in float64 from the
// same (rounded) inputs and rounded to the type; the kernels must be
// within one unit in the last place of the type of it, and within the
// same of the GoMLX lowering (DisableKernels).
func TestHalfKernels(t *testing.T) {
	type tc struct {
		name       string
		op         string
		xs, ws, bs []int
		attrs      []*canonical.Attribute
		ref        func(x, w, b []float64) []float64
		out        []int
	}
	matmul := func(m, k, n int, transB bool) func(x, w, b []float64) []float64 {
		return func(x, w, b []float64) []float64 {
			y := make([]float64, m*n)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					s := 0.0
					for p := 0; p < k; p++ {
						wv := w[p*n+j]
						if transB {
							wv = w[j*k+p]
						}
						s += x[i*k+p] * wv
					}
					if b != nil {
						s += b[j]
					}
					y[i*n+j] = s
				}
			}
			return y
		}
	}
	conv := func(x, w, b []float64) []float64 {
		// N=1, C=3, 7×9, M=5, 3×3, pads 1, stride 2.
		const C, H, W, M, OH, OW = 3, 7, 9, 5, 4, 5
		y := make([]float64, M*OH*OW)
		for m := 0; m < M; m++ {
			for oh := 0; oh < OH; oh++ {
				for ow := 0; ow < OW; ow++ {
					s := b[m]
					for c := 0; c < C; c++ {
						for kh := 0; kh < 3; kh++ {
							for kw := 0; kw < 3; kw++ {
								ih, iw := oh*2-1+kh, ow*2-1+kw
								if ih >= 0 && ih < H && iw >= 0 && iw < W {
									s += x[(c*H+ih)*W+iw] * w[((m*C+c)*3+kh)*3+kw]
								}
							}
						}
					}
					y[(m*OH+oh)*OW+ow] = s
				}
			}
		}
		return y
	}
	cases := []tc{
		{name: "matmul", op: "MatMul", xs: []int{17, 33}, ws: []int{33, 19}, out: []int{17, 19}, ref: matmul(17, 33, 19, false)},
		{name: "gemm", op: "Gemm", xs: []int{5, 300}, ws: []int{7, 300}, bs: []int{7}, out: []int{5, 7}, ref: matmul(5, 300, 7, true),
			attrs: []*canonical.Attribute{canonical.IntAttr("transB", 1)}},
		{name: "conv", op: "Conv", xs: []int{1, 3, 7, 9}, ws: []int{5, 3, 3, 3}, bs: []int{5}, out: []int{1, 5, 4, 5}, ref: conv,
			attrs: []*canonical.Attribute{canonical.IntsAttr("pads", 1, 1, 1, 1), canonical.IntsAttr("strides", 2, 2)}},
	}
	for _, dt := range []canonical.DataType{canonical.Float16, canonical.BFloat16} {
		ulp := math.Ldexp(1, -10) // float16: 10 fraction bits
		if dt == canonical.BFloat16 {
			ulp = math.Ldexp(1, -7)
		}
		for _, cs := range cases {
			t.Run(cs.name+"_"+dt.String(), func(t *testing.T) {
				r := rand.New(rand.NewSource(1))
				m, g := newModel(17)
				x, _ := g.AddInput("x", nil)
				xt, xv := f16Tensor(t, "x", dt, cs.xs, r)
				wt, wv := f16Tensor(t, "w", dt, cs.ws, r)
				w, _ := g.AddInitializer(wt)
				ins := []*canonical.Value{x, w}
				var bv []float64
				if cs.bs != nil {
					var bt *canonical.Tensor
					bt, bv = f16Tensor(t, "b", dt, cs.bs, r)
					b, _ := g.AddInitializer(bt)
					ins = append(ins, b)
				}
				n, err := g.AddNode("n", "", cs.op, ins, []string{"y"}, cs.attrs...)
				if err != nil {
					t.Fatal(err)
				}
				g.Outputs = []*canonical.Value{n.Outputs[0]}
				want := cs.ref(xv, wv, bv)
				var got [2][]float32
				for k, opts := range []Options{{Threads: 1}, {DisableKernels: true}} {
					ex, err := New(m, opts)
					if err != nil {
						t.Fatal(err)
					}
					for run := 0; run < 2; run++ {
						res, err := ex.Run(context.Background(), []*canonical.Tensor{xt})
						if err != nil {
							t.Fatal(err)
						}
						if res[0].DataType != dt {
							t.Fatalf("output type %v, want %v", res[0].DataType, dt)
						}
						got[k] = hostValues(t, res[0])
					}
					if k == 0 {
						if !hasHostStep(ex, cs.op) {
							t.Fatalf("%s on %v did not run on the kernels", cs.op, dt)
						}
					}
					ex.Close()
				}
				if len(got[0]) != len(want) {
					t.Fatalf("%d values, want %d", len(got[0]), len(want))
				}
				for i, wv := range want {
					tol := ulp * math.Max(math.Abs(wv), 1e-3)
					if d := math.Abs(float64(got[0][i]) - wv); d > tol {
						t.Fatalf("kernel value %d = %v, reference %v (|diff| %g > %g)", i, got[0][i], wv, d, tol)
					}
					if d := math.Abs(float64(got[0][i]) - float64(got[1][i])); d > 2*tol {
						t.Fatalf("kernel value %d = %v, GoMLX lowering %v", i, got[0][i], got[1][i])
					}
				}
			})
		}
	}
}

// BenchmarkFusion times replays of the CNN fixtures with and without the
// fused epilogues (go test ./executor -run '^$' -bench Fusion).
func BenchmarkFusion(b *testing.B) {
	for _, name := range []string{"resnet_small", "squeezenet"} {
		dir := filepath.Join("..", "fixtures", "models", name)
		m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ins := []*canonical.Tensor{readTensorFile(b, filepath.Join(dir, "test_data_set_0", "input_0.pb"))}
		for _, fused := range []bool{false, true} {
			b.Run(name+"/fused="+strconv.FormatBool(fused), func(b *testing.B) {
				ex, err := New(m, Options{Threads: 1, DisableFusion: !fused})
				if err != nil {
					b.Fatal(err)
				}
				defer ex.Close()
				for i := 0; i < b.N+1; i++ {
					if i == 1 {
						b.ResetTimer()
					}
					if _, err := ex.Run(context.Background(), ins); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		m.Close()
	}
}

// runPlan builds an Executor of m with opts and runs it runs times on
// feeds, failing when a replay's outputs are not the bits of the first
// run's; it returns the Executor (open: the caller inspects its plan and
// closes it) and the outputs' float32 values.
func runPlan(t *testing.T, m *canonical.Model, opts Options, feeds []*canonical.Tensor, runs int) (*Executor, [][]float32) {
	t.Helper()
	ex, err := New(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	var first [][]float32
	for run := 0; run < runs; run++ {
		res, err := ex.Run(context.Background(), feeds)
		if err != nil {
			t.Fatal(err)
		}
		var outs [][]float32
		for _, o := range res {
			outs = append(outs, append([]float32{}, hostValues(t, o)...))
		}
		if run == 0 {
			first = outs
			continue
		}
		for o := range outs {
			for i, v := range outs[o] {
				if math.Float32bits(v) != math.Float32bits(first[o][i]) {
					t.Fatalf("%+v: run %d output %d [%d] = %v, first run %v", opts, run, o, i, v, first[o][i])
				}
			}
		}
	}
	return ex, first
}

// TestFuseClipConstantBounds: Conv → Clip whose bounds are Constant nodes
// (MobileNetV2's ReLU6 as torch exports it) runs as one Conv+Clip step:
// the bounds' static steps, which the builder puts between the two, run
// before it. The outputs are the unfused executor's bits on 1 and 2
// threads; with the Clip's input a graph output too the two stay apart.
func TestFuseClipConstantBounds(t *testing.T) {
	for _, expose := range []bool{false, true} {
		r := rand.New(rand.NewSource(64))
		m, g := newModel(13)
		in := must(g.AddInput("in", nil))
		node := nodeAdder(t, g)
		feed, _ := f16Tensor(t, "in", canonical.Float, []int{1, 8, 40, 37}, r)
		wt, _ := f16Tensor(t, "w", canonical.Float, []int{16, 8, 3, 3}, r)
		bt, _ := f16Tensor(t, "b", canonical.Float, []int{16}, r)
		x := node("Conv", []*canonical.Value{in, must(g.AddInitializer(wt)), must(g.AddInitializer(bt))}, canonical.IntsAttr("pads", 1, 1, 1, 1))
		lo := node("Constant", nil, canonical.TensorAttr("value", f32Tensor("lo", nil, -0.25)))
		hi := node("Constant", nil, canonical.TensorAttr("value", f32Tensor("hi", nil, 0.5)))
		g.Outputs = []*canonical.Value{node("Clip", []*canonical.Value{x, lo, hi})}
		if expose {
			g.Outputs = append(g.Outputs, x)
		}
		var got [3][]uint32
		for k, opts := range []Options{{Threads: 1, DisableFusion: true}, {Threads: 1}, {Threads: 2}} {
			ex, outs := runPlan(t, m, opts, []*canonical.Tensor{feed}, 3)
			for _, o := range outs {
				for _, v := range o {
					got[k] = append(got[k], math.Float32bits(v))
				}
			}
			chains, single := planChains(ex)
			ex.Close()
			if k == 0 || expose {
				if len(chains) != 0 || single["Clip"] != 1 {
					t.Fatalf("%+v, conv output exposed %v: chains %v, steps %v, want Conv and Clip apart", opts, expose, chains, single)
				}
				continue
			}
			if len(chains) != 1 || chains[0] != "Conv+Clip" || single["Clip"] != 0 {
				t.Fatalf("%+v: chains %v, steps %v, want the chain Conv+Clip", opts, chains, single)
			}
		}
		for k := 1; k < 3; k++ {
			if len(got[k]) != len(got[0]) {
				t.Fatalf("%d output values, %d unfused", len(got[k]), len(got[0]))
			}
			for i := range got[0] {
				if got[k][i] != got[0][i] {
					t.Fatalf("run %d value %d: %#08x, unfused %#08x", k, i, got[k][i], got[0][i])
				}
			}
		}
	}
}
