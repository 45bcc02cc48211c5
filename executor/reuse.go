package executor

import (
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Output buffers reused across runs of a plan.
//
// A replayed host kernel takes its float32 output from its run's
// runBufs (lctx.newH): a buffer of the same length that the previous run
// of the plan made and that did not escape it, cleared, or a new one. At
// the end of a run (runGraph) every buffer handed out in it goes back to
// the free list unless its memory overlaps a tensor the env still holds
// when the run ends (graph outputs and kept values handed to the caller,
// and views of them, whatever step made the view). Nothing else outlives
// a run: packed weights are cached only for static values, static and
// guard values are made (or copied) while building, and GoMLX segments
// copy their inputs and outputs.
//
// A runBufs belongs to one run at a time (bufPool hands it out and takes
// it back), so runs of one Executor from several goroutines never share
// a buffer.

// runBufs is the free list of one run of a plan.
type runBufs struct {
	free map[int][][]float32 // by length
	got  [][]float32         // handed out in the current run
	// kern clears large reused buffers on the kernel threads (nil: on
	// the caller).
	kern *kernels.Context
	// poison: fill the buffers handed out unzeroed with NaN (tests:
	// a kernel that does not write every element shows).
	poison bool
	// live, maxHi: recycle's scratch.
	live  []span
	maxHi []uintptr
}

// clearRow is the number of elements per row of a parallel clear, and
// clearUnit its work in kernels.Range's units (a clear writes about 16
// elements in the time an elementwise kernel computes one; 2 per
// element).
const (
	clearRow  = 4096
	clearUnit = clearRow / 16
)

// zero clears s, on the kernel threads when it is large.
func (rb *runBufs) zero(s []float32) {
	if rb.kern == nil || len(s) < 4*clearRow {
		clear(s)
		return
	}
	rows := (len(s) + clearRow - 1) / clearRow
	rb.kern.Range(rows, clearUnit, func(lo, hi int) {
		clear(s[lo*clearRow : min(hi*clearRow, len(s))])
	})
}

// take returns a zeroed float32 buffer of n elements.
func (rb *runBufs) take(n int) []float32 { return rb.takeAs(n, true) }

// takeAs returns a float32 buffer of n elements, zeroed if zero (else
// with any contents: for kernels that write every element).
func (rb *runBufs) takeAs(n int, zero bool) []float32 {
	var s []float32
	if l := rb.free[n]; len(l) > 0 {
		s = l[len(l)-1]
		l[len(l)-1] = nil
		rb.free[n] = l[:len(l)-1]
		switch {
		case zero:
			rb.zero(s)
		case rb.poison:
			for i := range s {
				s[i] = float32(math.NaN())
			}
		}
	} else {
		s = make([]float32, n)
	}
	rb.got = append(rb.got, s)
	return s
}

// span is the address range of a slice's memory.
type span struct{ lo, hi uintptr }

func spanOf(b []byte) span {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return span{lo, lo + uintptr(len(b))}
}

// recycle returns the buffers handed out in this run to the free list,
// except those overlapping a tensor that en (the run's env, at the end
// of the run) still holds.
func (rb *runBufs) recycle(en *env) { rb.release(en, true) }

// releaseDead returns to the free list, in the middle of a run, the
// buffers handed out so far that no tensor en still holds overlaps: those
// of the values the plan dropped (no later step reads them), so that the
// next steps write their outputs into memory that is still in cache
// instead of a buffer last touched a whole run ago. The others stay
// handed out.
func (rb *runBufs) releaseDead(en *env) { rb.release(en, false) }

// releaseMinBytes: a replay frees buffers within the run (releaseDead)
// after a step that drops a value of at least this size. What it gains
// is the cache for the next large outputs; on a small value it would
// cost more (the overlap test over the env's tensors) than a cold buffer
// of a few KiB does (transformer_encoder's fixture, one thread: 93 → 122
// µs when released after every step).
const releaseMinBytes = 64 << 10

// release is recycle (final: buffers still overlapping a tensor of en are
// forgotten, they escaped the run) and releaseDead (not final: they stay
// handed out).
func (rb *runBufs) release(en *env, final bool) {
	if len(rb.got) == 0 {
		return
	}
	live := rb.live[:0]
	add := func(h *htensor) {
		if h == nil || h.data == nil {
			return
		}
		if _, ok := h.data.([]string); ok {
			return
		}
		if b := sliceBytes(h.data); len(b) > 0 {
			live = append(live, spanOf(b))
		}
	}
	for _, s := range en.dyn {
		if s == nil || s.valStatic {
			continue // static values (initializers) are never run buffers
		}
		add(s.h)
		for _, h := range s.seq {
			add(h)
		}
	}
	slices.SortFunc(live, func(a, b span) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	// maxHi[i]: the largest end among live[:i+1] (spans may nest).
	maxHi := slices.Grow(rb.maxHi[:0], len(live))[:len(live)]
	rb.live, rb.maxHi = live, maxHi
	var m uintptr
	for i, s := range live {
		m = max(m, s.hi)
		maxHi[i] = m
	}
	if rb.free == nil {
		rb.free = map[int][][]float32{}
	}
	kept := 0
	for i, s := range rb.got {
		rb.got[i] = nil
		if len(s) == 0 {
			continue
		}
		g := spanOf(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4))
		// Spans starting before g's end: the last of them is j-1; any
		// of live[:j] ending after g's start overlaps g.
		j, _ := slices.BinarySearchFunc(live, g.hi, func(a span, t uintptr) int {
			if a.lo < t {
				return -1
			}
			return 1
		})
		if j > 0 && maxHi[j-1] > g.lo {
			if !final {
				rb.got[kept] = s // still in use
				kept++
			}
			continue // escaped this run (final) or still in use
		}
		rb.free[len(s)] = append(rb.free[len(s)], s)
	}
	rb.got = rb.got[:kept]
}

// bufPool holds a plan's runBufs between runs.
type bufPool struct {
	mu   sync.Mutex
	sets []*runBufs
}

// maxPooledSets bounds the runBufs a plan keeps (one per run that ran
// concurrently with others).
const maxPooledSets = 2

func (p *bufPool) get() *runBufs {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.sets); n > 0 {
		rb := p.sets[n-1]
		p.sets = p.sets[:n-1]
		return rb
	}
	return &runBufs{}
}

func (p *bufPool) put(rb *runBufs) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sets) < maxPooledSets {
		p.sets = append(p.sets, rb)
	}
}

// newH is newH for a kernel's output: float32 outputs of a replayed step
// come from the run's runBufs.
func (c *lctx) newH(dt canonical.DataType, shape []int) *htensor {
	return c.newHAs(dt, shape, true)
}

// newHAs is newH, with the contents of a reused buffer left as they are
// unless zero: for kernels that write every element of their output.
func (c *lctx) newHAs(dt canonical.DataType, shape []int, zero bool) *htensor {
	if c.b == nil && storageOf(dt) == kF32 {
		if rb := c.en.runBufs(); rb != nil {
			return &htensor{dt: dt, shape: append([]int{}, shape...), data: rb.takeAs(numel(shape), zero)}
		}
	}
	return newH(dt, shape)
}

// runBufs returns the free list of the run en belongs to (nil: none).
func (en *env) runBufs() *runBufs {
	for x := en; x != nil; x = x.parent {
		if x.parent == nil {
			return x.bufs
		}
	}
	return nil
}

// cloneH copies h (a guard's expected contents must not change when the
// value's buffer is reused).
func cloneH(h *htensor) *htensor {
	if h.released {
		return h
	}
	if h.ld != 0 {
		return denseNHWC(h)
	}
	c := newH(h.dt, h.shape)
	c.released, c.nhwc = h.released, h.nhwc
	if s, ok := h.data.([]string); ok {
		copy(c.data.([]string), s)
		return c
	}
	copy(sliceBytes(c.data), sliceBytes(h.data))
	return c
}
