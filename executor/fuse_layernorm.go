package executor

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// LayerNormalization exported before opset 17 is nine nodes: m =
// ReduceMean(x, axes=[-1]); d = Sub(x, m); p = Pow(d, 2); v =
// ReduceMean(p, axes=[-1]); s = Sqrt(Add(v, eps)); y = Add(Mul(Div(d, s),
// gamma), beta). When the plan runs them as consecutive kernel steps and
// nothing else reads the intermediate values, they become one step that
// makes y row by row (kernels.LayerNormDecomposedRow), with the same
// float32 (and float64 for the sums) operations as the nine kernels:
// bit-identical but for the last bits of the float64 sums, which SIMD
// adds in 8 lanes, without eight intermediate tensors and eight steps.

// lnDecomposedOps is the op sequence matched.
var lnDecomposedOps = [9]string{"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add"}

// fuseLayerNorm replaces each matched run of steps by one.
func fuseLayerNorm(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	readers := usesOf(steps).readers
	// Values computed at build time (Constant nodes, Identity of weights).
	static := map[*canonical.Value]*htensor{}
	for _, st := range steps {
		if s, ok := st.(*staticStep); ok && s.s != nil && s.s.h != nil {
			static[s.v] = s.s.h
		}
	}
	var out []step
	for i := 0; i < len(steps); i++ {
		// The next nine steps but the staticSteps among them (which put
		// the Constants in the env, and stay in the plan before the run).
		var run, statics []step
		j := i
		for ; j < len(steps) && len(run) < 9; j++ {
			if _, ok := steps[j].(*staticStep); ok && len(run) > 0 {
				statics = append(statics, steps[j])
				continue
			}
			run = append(run, steps[j])
		}
		if len(run) == 9 {
			if st := matchLayerNorm(gi, run, readers, keep, static); st != nil {
				out = append(append(out, statics...), st)
				i = j - 1
				continue
			}
		}
		out = append(out, steps[i])
	}
	return out
}

// matchLayerNorm returns the fused step for steps, or nil.
func matchLayerNorm(gi *graphInfo, steps []step, readers map[*canonical.Value]int, keep map[*canonical.Value]bool, static map[*canonical.Value]*htensor) step {
	var n [9]*canonical.Node
	for k, st := range steps {
		h, ok := st.(*hostStep)
		if !ok || !h.packs || h.n.OpType != lnDecomposedOps[k] || !plainDomain(h.n) || len(h.n.Outputs) != 1 || h.n.Outputs[0] == nil {
			return nil
		}
		n[k] = h.n
	}
	out := func(k int) *canonical.Value { return n[k].Outputs[0] }
	in := func(k, i int) *canonical.Value {
		if i < len(n[k].Inputs) {
			return n[k].Inputs[i]
		}
		return nil
	}
	x := in(0, 0)
	constant := func(v *canonical.Value) *htensor {
		if v == nil {
			return nil
		}
		if h := static[v]; h != nil {
			return h
		}
		if v.Const != nil {
			if h, err := fromCanonical(v.Const); err == nil {
				return h
			}
		}
		return nil
	}
	scalar := func(v *canonical.Value, want float64) bool {
		h := constant(v)
		if h == nil || h.dt != canonical.Float || h.size() != 1 {
			return false
		}
		got := float64(h.data.([]float32)[0])
		return math.IsNaN(want) || got == want
	}
	// Wiring; the scalar operands, gamma and beta are constants.
	switch {
	case x == nil || len(n[0].Inputs) != 1 || len(n[3].Inputs) != 1,
		in(1, 0) != x || in(1, 1) != out(0),
		in(2, 0) != out(1) || !scalar(in(2, 1), 2),
		in(3, 0) != out(2),
		in(4, 0) != out(3) || !scalar(in(4, 1), math.NaN()),
		in(5, 0) != out(4),
		in(6, 0) != out(1) || in(6, 1) != out(5),
		in(7, 0) != out(6) || constant(in(7, 1)) == nil,
		in(8, 0) != out(7) || constant(in(8, 1)) == nil:
		return nil
	}
	for _, k := range []int{0, 3} {
		axes := n[k].AttrInts("axes", nil)
		if len(axes) != 1 || axes[0] != -1 || n[k].AttrInt("keepdims", 1) != 1 {
			return nil
		}
	}
	// Intermediate values: read only inside the run (d by Pow and Div).
	for k := 0; k < 8; k++ {
		v, want := out(k), 1
		if k == 1 {
			want = 2
		}
		if readers[v] != want || keep[v] || !gi.defs[v] || gi.lastUse[v] == outputUse {
			return nil
		}
	}
	last := steps[8].(*hostStep)
	node := *last.n
	node.OpType = "LayerNormalization (decomposed)"
	node.Inputs = []*canonical.Value{x, in(7, 1), in(8, 1), in(4, 1)}
	return &hostStep{n: &node, impl: &opImpl{host: kernelLayerNormDecomposed}, ver: last.ver, packs: true}
}

// kernelLayerNormDecomposed: inputs x, gamma, beta (1-D over x's last
// axis) and eps (a scalar); the nine kernels' operations per row.
func kernelLayerNormDecomposed(c *lctx) error {
	var hs [4]*htensor
	for i := range hs {
		h, err := c.H(i)
		if err != nil {
			return err
		}
		if h.released {
			if h, err = c.unreleased(i); err != nil {
				return fmt.Errorf("LayerNormalization: %w", err)
			}
		}
		if h.dt != canonical.Float {
			return fmt.Errorf("LayerNormalization (decomposed): input %d is %v, not float32", i, h.dt)
		}
		hs[i] = h
	}
	x, _ := f32(hs[0])
	gamma, _ := f32(hs[1])
	beta, _ := f32(hs[2])
	epsv, _ := f32(hs[3])
	r := len(hs[0].shape)
	if r == 0 || len(epsv) != 1 {
		return fmt.Errorf("LayerNormalization (decomposed): shapes %v and eps %v", hs[0].shape, hs[3].shape)
	}
	inner := hs[0].shape[r-1]
	if inner == 0 || len(gamma) != inner || len(beta) != inner || len(hs[1].shape) != 1 || len(hs[2].shape) != 1 {
		return fmt.Errorf("LayerNormalization (decomposed): x %v, gamma %v, beta %v", hs[0].shape, hs[1].shape, hs[2].shape)
	}
	eps := epsv[0]
	y := c.newH(canonical.Float, hs[0].shape)
	yd, _ := f32(y)
	c.e.kern.Range(len(x)/inner, inner, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			kernels.LayerNormDecomposedRow(x[row*inner:(row+1)*inner], yd[row*inner:(row+1)*inner], gamma, beta, eps)
		}
	})
	roundOut(y)
	c.OutH(0, y)
	return nil
}
