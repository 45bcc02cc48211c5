package executor

import (
	"context"
	"sync/atomic"

	"github.com/onnxconv/onnxconv/canonical"
)

// Fused epilogues. In a plan, a MatMul, Gemm or Conv kernel step is often
// followed by host elementwise steps over its output: a bias Add, an
// activation (Relu, Clip, HardSigmoid, HardSwish) and a residual Add.
// fuseSteps merges such a chain into one fusedStep when each intermediate
// value is read by the next step alone and is neither a graph output nor
// kept (captured): on replay the elementwise kernels then write into the
// buffer the matrix kernel allocated (lctx.inPlace) instead of a new
// tensor each, and the chain is one step. The elementwise kernels are the
// same functions, on the same float32 values in the same order, so the
// results are bit-identical to the unfused steps. The first run of a
// plan (the build) runs the steps unfused.

// fusedStep runs a kernel step and its elementwise epilogue steps, each
// epilogue overwriting the previous step's output.
type fusedStep struct {
	steps []*hostStep
	// in[k] is the input of steps[k] (k ≥ 1) that steps[k-1] wrote.
	in []int
	// split: the chain split work over the kernel threads last time.
	split atomic.Bool
	// epilogue: the tail ran as the head's epilogue last time
	// (fuse_epilogue.go).
	epilogue atomic.Bool
}

func (st *fusedStep) exec(ctx context.Context, e *Executor, en *env) (bool, error) {
	defer wakeDone(e, &st.split, wakeFor(e, &st.split))
	return st.execArena(ctx, e, en, nil)
}

// execArena is exec with the head kernel's output taken from ar
// (lctx.newOut; fuse_concat.go).
func (st *fusedStep) execArena(ctx context.Context, e *Executor, en *env, ar *outArena) (bool, error) {
	if handled, ok, err := st.execEpilogue(ctx, e, en, ar); handled || err != nil {
		return ok, err
	}
	for k, h := range st.steps {
		c, err := newHostCtx(ctx, e, en, h.n, h.impl, h.ver)
		if err != nil {
			return false, err
		}
		if k > 0 {
			c.inPlace = st.in[k] + 1
		} else {
			c.arena, c.conv, c.nhwc, c.shareIn, c.scale = ar, &h.conv, h.nhwc, h.shareIn, h.scale
		}
		if err := callKernel(c, h.impl.host); err != nil {
			return false, err
		}
		if err := c.storeOutputs(false, false); err != nil {
			return false, err
		}
	}
	return true, nil
}

// fuseHead and fuseTail name the ops a fused chain starts with and those
// its epilogue may hold.
// A head's kernel always writes a new tensor (never a view of an input).
func fuseHead(op string) bool {
	switch op {
	case "MatMul", "Gemm", "Conv", "ConvTranspose", "BatchNormalization", "InstanceNormalization", "LayerNormalization",
		"Concat", "MaxPool", "AveragePool", "GlobalAveragePool",
		// The steps of a decomposed LayerNormalization (ReduceMean, Sub,
		// Pow, ReduceMean, Add, Sqrt, Div, Mul, Add): their kernels write
		// a new tensor unless told to work in place.
		"ReduceMean", "Sub", "Div", "Pow", "Sqrt":
		return true
	}
	return false
}

func fuseTail(op string) bool {
	switch op {
	case "Add", "Mul", "Sub", "Div", "Relu", "Clip", "HardSigmoid", "HardSwish", "Swish", "Sigmoid", "Tanh", "BatchNormalization", "Gelu", "Erf", "Sqrt",
		"Pow", "Softmax", "LayerNormalization", "InstanceNormalization":
		return true
	}
	return false
}

// fuseSteps merges kernel steps with the elementwise kernel steps right
// after them (see fusedStep).
func fuseSteps(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	readers := usesOf(steps).readers
	// fusable reports the input of next that is cur's only output and may
	// be overwritten, or -1.
	fusable := func(cur, next *hostStep) int {
		if !next.packs || !fuseTail(next.n.OpType) || next.n.Domain != "" && next.n.Domain != "ai.onnx" || len(cur.n.Outputs) != 1 {
			return -1
		}
		v := cur.n.Outputs[0]
		if v == nil || !gi.defs[v] || keep[v] || gi.lastUse[v] == outputUse || readers[v] != 1 || len(next.n.OuterValues()) != 0 {
			return -1
		}
		at := -1
		for i, in := range next.n.Inputs {
			if in == v {
				if at >= 0 {
					return -1 // Add(v, v)
				}
				at = i
			}
		}
		if at > 0 && !binaryOp(next.n.OpType) {
			return -1 // Clip's bounds, BatchNormalization's statistics
		}
		return at
	}
	var out []step
	for i := 0; i < len(steps); i++ {
		h, ok := steps[i].(*hostStep)
		if !ok || !h.packs || !fuseHead(h.n.OpType) || h.n.Domain != "" && h.n.Domain != "ai.onnx" {
			out = append(out, steps[i])
			continue
		}
		f := &fusedStep{steps: []*hostStep{h}, in: []int{-1}}
		// statics: the staticSteps between the chain's steps (Constant
		// nodes, such as the bounds of torch's Clip at opset 11 and later,
		// placed between the Conv and its Clip), which read nothing and go
		// before the fused step.
		var statics []step
		for i+1 < len(steps) {
			j := afterStatics(steps, i+1)
			if j == len(steps) {
				break
			}
			next, ok := steps[j].(*hostStep)
			if !ok {
				break
			}
			at := fusable(f.steps[len(f.steps)-1], next)
			if at < 0 {
				break
			}
			statics = append(statics, steps[i+1:j]...)
			f.steps, f.in = append(f.steps, next), append(f.in, at)
			i = j
		}
		if len(f.steps) == 1 {
			out = append(out, h)
			continue
		}
		out = append(append(out, statics...), f)
	}
	return out
}

// afterStatics is the index of the first step from j on that is not a
// staticStep (len(steps) when there is none).
func afterStatics(steps []step, j int) int {
	for j < len(steps) {
		if _, ok := steps[j].(*staticStep); !ok {
			break
		}
		j++
	}
	return j
}

func binaryOp(op string) bool { return op == "Add" || op == "Mul" || op == "Sub" || op == "Div" }
