package executor

import (
	"context"
	"sync/atomic"

	"github.com/onnxconv/onnxconv/canonical"
)

// Concat without the copy. When the steps right before a Concat make its
// inputs (a squeezenet fire module's expand 1×1 and 3×3 Conv+Relu
// chains) and nothing else reads them, the plan runs them as one
// concatStep: their head kernels (Conv) take their outputs from one
// buffer, in turn (outArena), so that along a leading Concat axis the
// inputs end up side by side in the Concat's layout, and kernelConcat
// finds them there and returns a view instead of copying. The buffer's
// size is the Concat output's at the previous run; anything that does
// not fit, or a layout that does not line up, takes the ordinary path
// (a fresh tensor, a copy): the values are the same either way.

// outArena hands out consecutive float32 runs of one buffer.
type outArena struct {
	buf []float32
	off int
}

// take returns the next n elements, or nil when they do not fit.
func (a *outArena) take(n int) []float32 {
	if a == nil || n <= 0 || a.off+n > len(a.buf) {
		return nil
	}
	s := a.buf[a.off : a.off+n : a.off+n]
	a.off += n
	return s
}

// adjacent returns the arena's first numel(out) elements when the Concat
// inputs hs (along axis ax, with nothing before it, so each input is one
// block of the output) are consecutive runs of it from its start, in
// order: the Concat's output, without a copy.
func (a *outArena) adjacent(hs []*htensor, out []int, ax int) []float32 {
	total := numel(out)
	if a == nil || numel(out[:ax]) != 1 || total > len(a.buf) {
		return nil
	}
	off := 0
	for _, h := range hs {
		x, _ := f32(h)
		if len(x) == 0 || off+len(x) > total || &x[0] != &a.buf[off] {
			return nil
		}
		off += len(x)
	}
	if off != total {
		return nil
	}
	return a.buf[:total:total]
}

// newOut is newH for a head kernel's output, from the step's arena when
// it has one with room; zero as for newHAs.
func (c *lctx) newOut(dt canonical.DataType, shape []int, zero bool) *htensor {
	if storageOf(dt) == kF32 {
		if s := c.arena.take(numel(shape)); s != nil {
			if zero {
				clear(s) // the arena comes unzeroed (concatStep)
			}
			return &htensor{dt: dt, shape: append([]int{}, shape...), data: s}
		}
	}
	return c.newHAs(dt, shape, zero)
}

// concatStep runs the steps making a Concat's inputs with one output
// arena, then the Concat.
type concatStep struct {
	parts  []step // hostStep or fusedStep
	concat *hostStep
	size   atomic.Int64 // elements of the Concat's output at the last run
}

func (st *concatStep) exec(ctx context.Context, e *Executor, en *env) (bool, error) {
	var ar *outArena
	if n := st.size.Load(); n > 0 {
		if rb := en.runBufs(); rb != nil {
			// Unzeroed: only newOut takes from it, clearing what it
			// hands to a kernel that needs zeros; the Concat reads it
			// only when its inputs cover it exactly (adjacent).
			ar = &outArena{buf: rb.takeAs(int(n), false)}
		} else {
			ar = &outArena{buf: make([]float32, n)}
		}
	}
	for _, p := range st.parts {
		var ok bool
		var err error
		switch p := p.(type) {
		case *hostStep:
			ok, err = p.execArena(ctx, e, en, ar)
		case *fusedStep:
			ok, err = p.execArena(ctx, e, en, ar)
		default:
			ok, err = p.exec(ctx, e, en)
		}
		if err != nil || !ok {
			return ok, err
		}
	}
	ok, err := st.concat.execArena(ctx, e, en, ar)
	if err != nil || !ok {
		return ok, err
	}
	if v := st.concat.n.Outputs[0]; v != nil {
		if s := en.get(v); s != nil && s.h != nil {
			st.size.Store(int64(s.h.size()))
		}
	}
	return true, nil
}

// fuseConcat wraps each Concat kernel step and the steps right before it
// that make its inputs (each the sole reader of its value) in a
// concatStep.
func fuseConcat(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	readers := usesOf(steps).readers
	var out []step
	for _, st := range steps {
		h, ok := st.(*hostStep)
		if !ok || !h.packs || h.n.OpType != "Concat" || !plainDomain(h.n) || len(h.n.Outputs) != 1 {
			out = append(out, st)
			continue
		}
		want := map[*canonical.Value]bool{}
		for _, v := range h.n.Inputs {
			if v == nil || want[v] || readers[v] != 1 || keep[v] || !gi.defs[v] || gi.lastUse[v] == outputUse {
				want = nil
				break
			}
			want[v] = true
		}
		m := len(want)
		if m < 2 || len(out) < m {
			out = append(out, st)
			continue
		}
		parts := out[len(out)-m:]
		for _, p := range parts {
			switch p.(type) {
			case *hostStep, *fusedStep:
			default:
				want = nil
			}
			if want == nil {
				break
			}
			_, w := stepIO(p)
			if len(w) == 0 || !want[w[len(w)-1]] {
				want = nil
				break
			}
			delete(want, w[len(w)-1])
		}
		if want == nil || len(want) != 0 {
			out = append(out, st)
			continue
		}
		cs := &concatStep{parts: append([]step{}, parts...), concat: h}
		out = append(out[:len(out)-m], cs)
	}
	return out
}
