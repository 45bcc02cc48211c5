package kernels

import (
	"sync"
	"sync/atomic"
	"time"
)

// ParallelProfile records the thread CPU time of a Context's parallel
// calls while it is started: the time of each chunk, whichever thread ran
// it, and the caller's own time inside the call (its chunks and its wait
// for the helpers'). With the caller's thread CPU time over a whole run
// (ThreadCPUTime, on a goroutine locked to its thread) it gives the run's
// critical path: the caller's time outside parallel calls plus, for each
// call, the time its chunks take on Threads() CPUs when each thread
// claims the next chunk as soon as it is free. That is what the wall
// time would be with a CPU for each thread and no other load, whatever
// the machine's load while measuring (as far as CPU time is unaffected
// by it).
//
// Thread CPU time is measured on Linux only; elsewhere every figure is
// zero.
type ParallelProfile struct {
	on atomic.Bool
	mu sync.Mutex
	// calls is the number of parallel calls; caller the caller's thread
	// CPU time inside them; chunks the thread CPU time of all chunks;
	// span the sum over calls of their chunks' time on the threads.
	calls                int
	caller, chunks, span time.Duration
	threads              int
}

// SetProfile makes x record its parallel calls in p (while p is started).
// Call it before x's first kernel.
func (x *Context) SetProfile(p *ParallelProfile) {
	if x != nil {
		p.threads = x.Threads()
		x.prof = p
	}
}

// Start starts recording (adding to the figures recorded so far).
func (p *ParallelProfile) Start() { p.on.Store(true) }

// Stop stops recording.
func (p *ParallelProfile) Stop() { p.on.Store(false) }

// Reset clears the figures.
func (p *ParallelProfile) Reset() {
	p.mu.Lock()
	p.calls, p.caller, p.chunks, p.span = 0, 0, 0, 0
	p.mu.Unlock()
}

// Totals returns the figures recorded since Reset: the number of parallel
// calls, the caller's thread CPU time inside them, all chunks' thread CPU
// time, and the calls' time on Threads() CPUs (see ParallelProfile).
func (p *ParallelProfile) Totals() (calls int, caller, chunks, span time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls, p.caller, p.chunks, p.span
}

// record wraps f to time its chunks; done adds the call to p.
func (p *ParallelProfile) record(n int, f func(i int)) (timed func(i int), done func()) {
	times := make([]time.Duration, n)
	tid0, c0 := threadClock()
	w0 := time.Now()
	timed = func(i int) {
		tid0, c0 := threadClock()
		w0 := time.Now()
		f(i)
		tid, c := threadClock()
		if tid != tid0 {
			// The goroutine moved to another thread (preempted, say,
			// for a GC stack scan): its wall time instead.
			c, c0 = time.Since(w0), 0
		}
		times[i] = c - c0
	}
	done = func() {
		tid, c := threadClock()
		caller := c - c0
		if tid != tid0 {
			// The caller is not locked to its thread and moved.
			caller = time.Since(w0)
		}
		// Chunks are claimed in index order, each by the first free
		// thread.
		free := make([]time.Duration, p.threads)
		var sum time.Duration
		for _, d := range times {
			j := 0
			for q := range free {
				if free[q] < free[j] {
					j = q
				}
			}
			free[j] += d
			sum += d
		}
		var span time.Duration
		for _, f := range free {
			span = max(span, f)
		}
		p.mu.Lock()
		p.calls++
		p.caller += caller
		p.chunks += sum
		p.span += span
		p.mu.Unlock()
	}
	return timed, done
}
