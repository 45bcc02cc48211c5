package executor

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Expansion → depthwise. A mobile net's inverted-residual block widens
// the channels with a 1×1 convolution (and its activation) and then
// convolves each channel on its own (a depthwise convolution). fuseExpandDw
// pairs such steps (each a Conv kernel step, alone or heading a fused
// chain whose tail runs as its epilogue) into one expandDwStep: the
// expansion's kernel call only records its work (kernels.Defer) and the
// depthwise convolution's runs both in one parallel call over blocks of
// channels (kernels.Conv2DAfter: each block expanded and convolved by one
// thread while it is in that thread's cache, one fork-join instead of
// two). The values are the same bits as the two steps'. When the shapes
// of a run do not allow it (a batch, a strided or grouped expansion, a
// convolution that mixes channels), each step runs on its own as before.

// expandDwStep runs an expansion step and the depthwise convolution step
// that reads its output.
type expandDwStep struct {
	expand, dw step // a *hostStep or a *fusedStep headed by a Conv
	split      atomic.Bool
	// deferred: the expansion was left to the depthwise convolution's
	// kernel last time (kernels.Defer took it).
	deferred atomic.Bool
}

func (st *expandDwStep) exec(ctx context.Context, e *Executor, en *env) (bool, error) {
	defer wakeDone(e, &st.split, wakeFor(e, &st.split))
	en.deferConv = true
	ok, err := execArena(ctx, st.expand, e, en)
	en.deferConv = false
	st.deferred.Store(en.pend.Set())
	if err != nil || !ok {
		en.pend = kernels.Pending{}
		return ok, err
	}
	ok, err = execArena(ctx, st.dw, e, en)
	if en.pend.Set() {
		// The depthwise step did not take the expansion (it failed
		// before its kernel ran).
		en.pend = kernels.Pending{}
		if err == nil {
			return false, fmt.Errorf("executor: the expansion before %s was not computed", headNode(st.dw))
		}
	}
	return ok, err
}

// execArena runs a host or fused step without an output arena.
func execArena(ctx context.Context, st step, e *Executor, en *env) (bool, error) {
	switch st := st.(type) {
	case *hostStep:
		return st.execArena(ctx, e, en, nil)
	case *fusedStep:
		return st.execArena(ctx, e, en, nil)
	}
	return st.exec(ctx, e, en)
}

// headNode is the node of a host step, or the head of a fused one.
func headNode(st step) *canonical.Node {
	switch st := st.(type) {
	case *hostStep:
		return st.n
	case *fusedStep:
		return st.steps[0].n
	}
	return nil
}

// fuseExpandDw pairs each Conv step whose output only a grouped Conv step
// reads (input 0), with nothing but static steps between them, into an
// expandDwStep (see above). The kernels decide on each run's shapes
// whether the pair runs as one.
func fuseExpandDw(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	readers := usesOf(steps).readers
	// conv returns the Conv step st (alone or heading a fused chain) and
	// the value it leaves: the head's output or the chain's last.
	conv := func(st step) (*hostStep, *canonical.Value) {
		var h, last *hostStep
		switch st := st.(type) {
		case *hostStep:
			h, last = st, st
		case *fusedStep:
			h, last = st.steps[0], st.steps[len(st.steps)-1]
		default:
			return nil, nil
		}
		if !h.packs || h.n.OpType != "Conv" || !plainDomain(h.n) || len(h.n.Outputs) != 1 || len(last.n.Outputs) != 1 {
			return nil, nil
		}
		return h, last.n.Outputs[0]
	}
	var out []step
	for i := 0; i < len(steps); i++ {
		h, v := conv(steps[i])
		if h == nil || h.n.AttrInt("group", 1) != 1 || v == nil || !gi.defs[v] || keep[v] || gi.lastUse[v] == outputUse || readers[v] != 1 {
			out = append(out, steps[i])
			continue
		}
		j := afterStatics(steps, i+1)
		if j == len(steps) {
			out = append(out, steps[i])
			continue
		}
		d, _ := conv(steps[j])
		if d == nil || d.n.AttrInt("group", 1) <= 1 || len(d.n.Inputs) < 2 || d.n.Inputs[0] != v {
			out = append(out, steps[i])
			continue
		}
		out = append(append(out, steps[i+1:j]...), &expandDwStep{expand: steps[i], dw: steps[j]})
		i = j
	}
	return out
}
