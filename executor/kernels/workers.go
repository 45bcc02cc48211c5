package kernels

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Fork-join on persistent workers.
//
// A Context with more than one thread keeps Threads()−1 helper goroutines
// (started on its first parallel call). A parallel call publishes a job of
// n chunks; the caller claims chunks from its front and the helpers from
// its back (one atomic word) until none is left, so a helper that is slow to start (a parked
// OS thread takes tens of microseconds to wake on a virtual machine) only
// does fewer chunks instead of holding up the caller. After a job a
// helper polls for the next one for spinWait before parking, so that the
// back-to-back kernels of a model run find it awake; while a caller holds
// the Context (Hold: a model run is in progress) the helpers do not park
// at all.
//
// Which goroutine runs a chunk never changes what the chunk computes: the
// results of a kernel depend on its chunk boundaries only, and those
// depend on the shapes, never on the thread count or the timing.

// spinWait is how long an idle helper polls for the next job before it
// parks (polling costs CPU time; parking costs a wake-up of tens of µs).
const spinWait = 100 * time.Microsecond

// heldEndWait is how long a caller polls for the helpers' last chunks of
// a call before it blocks while the team is held (a model run is in
// progress). A blocked caller took 0.5–1 ms to run again after the last
// chunk ended (a parked thread's wake-up on a virtual machine and the
// scheduler's hand-off), and with spinWait the two-thread runs of the
// big-GEMM nets blocked in 3–20 calls a run, where one thread's chunks
// end more than 100 µs after the other's (`onnxconv-bench --scaling 1,2`,
// "blocked/run" and "µs/blocked wake"; docs/speed.md "two threads, the
// time outside the chunks"). 2 ms covers nearly all of them.
const heldEndWait = 2 * time.Millisecond

// Contention: when other processes (or other Contexts of this one) keep
// the machine's cores busy, a helper often has no CPU when a call is
// published, and every call of a run waits for it: two processes each
// running a two-thread GoogLeNet on two cores made 21 runs/s each, where
// one thread each makes 32 (docs/speed.md "two threads on a busy
// machine"). So a held run counts its calls in which the caller's own
// chunks took soloCall or more (a polling helper claims a chunk within a
// microsecond; of a shorter call the caller may run every chunk before
// it does), once a helper has run a chunk in the run (a parked helper
// wakes up after Hold), and those of them in which the helpers ran no
// chunk. Under contention 95–100 % of them are such; on a quiet machine
// none, or in a rare run up to all of them (something else took the
// helper's CPU for a moment), about one run in 300, and not seen in
// soloRuns runs in a row. When at least one in soloShare were, of
// soloMinCalls or more, in soloRuns held runs in a row, the Context's
// next Holds are solo for soloPeriod: their calls run every chunk on the
// caller (the same chunks, the same bits), and the helpers park. Then a
// Hold runs on the helpers again as a probe; each probe that finds them
// absent again doubles the period, up to soloPeriod·2^(soloMaxStreak−1).
const (
	soloShare     = 2
	soloCall      = 20 * time.Microsecond
	soloMinCalls  = 8
	soloRuns      = 3
	soloPeriod    = 100 * time.Millisecond
	soloMaxStreak = 5
)

// job is one parallel call: chunks 0..n−1 of f.
type job struct {
	f func(i int)
	n int64
	// ends holds the chunks not yet claimed, [lo, hi), as lo | hi<<32:
	// the caller claims from the front, the helpers from the back, so
	// that with two threads each takes a contiguous run of chunks, the
	// same part of every kernel's output, whatever the timing (the
	// next kernel's chunks then find their inputs in their own core's
	// cache more often).
	ends atomic.Uint64
	done atomic.Int64 // chunks finished
	// finished is closed by whoever finishes the last chunk.
	finished chan struct{}
	// panicked holds the first panic of a chunk, raised again on the
	// caller's goroutine once every chunk has returned.
	panicked atomic.Pointer[any]
	// timed: the call is profiled; finishedAt is then the wall time
	// (UnixNano) its last chunk finished, for the latency of a blocked
	// caller's wake-up.
	timed      bool
	finishedAt atomic.Int64
}

// claim takes the next unclaimed chunk from the front (or the back);
// false when none is left.
func (j *job) claim(back bool) (int, bool) {
	for {
		e := j.ends.Load()
		lo, hi := e&0xffffffff, e>>32
		if lo >= hi {
			return 0, false
		}
		i, ne := lo, e+1
		if back {
			i, ne = hi-1, e-1<<32
		}
		if j.ends.CompareAndSwap(e, ne) {
			return int(i), true
		}
	}
}

// work claims and runs chunks until none is left; c is how many it ran.
func (j *job) work(back bool) (c int) {
	for ; ; c++ {
		i, ok := j.claim(back)
		if !ok {
			return c
		}
		j.runRecover(i)
		if j.done.Add(1) == j.n {
			if j.timed {
				j.finishedAt.Store(time.Now().UnixNano())
			}
			close(j.finished)
		}
	}
}

func (j *job) runRecover(i int) {
	defer func() {
		if r := recover(); r != nil {
			j.panicked.CompareAndSwap(nil, &r)
		}
	}()
	j.f(i)
}

// helper is one persistent worker goroutine.
type helper struct {
	job    atomic.Pointer[job]
	parked atomic.Bool
	wake   chan struct{} // capacity 1
	// woken is the wall time (UnixNano) a wake token was last sent to
	// the parked helper, for the profile's wake-up latency.
	woken atomic.Int64
}

// team is the helpers of a Context. Its goroutines reference the team,
// never the Context, so that an unreachable Context can stop them.
type team struct {
	// busy is held by the caller whose job the helpers run; a parallel
	// call that finds it held (a concurrent or nested call) runs its
	// chunks on its own goroutine.
	busy    sync.Mutex
	helpers []*helper
	stop    atomic.Bool
	// held counts the callers holding the helpers awake (Hold).
	held atomic.Int32
	// The contention check (soloShare): the calls of the current holds
	// and those whose helpers ran no chunk; solo counts the solo holds,
	// soloUntil (UnixNano) ends them, streak counts the periods in a
	// row, period is soloPeriod (tests shorten it).
	heldCalls, heldAbsent atomic.Int64
	awake                 atomic.Bool // a helper ran a chunk since the holds began
	solo                  atomic.Int32
	soloUntil             atomic.Int64
	streak                atomic.Int32
	period                time.Duration
	// exited is done when every helper goroutine has returned (after
	// close).
	exited sync.WaitGroup
	// prof is the Context's profile (nil: none): the helpers add their
	// polling and wake-ups to it while it is started.
	prof *ParallelProfile
}

func newTeam(n int, prof *ParallelProfile) *team {
	tm := &team{helpers: make([]*helper, n), prof: prof, period: soloPeriod}
	for i := range tm.helpers {
		h := &helper{wake: make(chan struct{}, 1)}
		tm.helpers[i] = h
		tm.exited.Add(1)
		go func() {
			defer tm.exited.Done()
			h.loop(tm)
		}()
	}
	return tm
}

func (h *helper) loop(tm *team) {
	stop := &tm.stop
	for {
		if j := h.job.Load(); j != nil {
			j.work(true)
			// Drop the finished job (and what its chunks reference),
			// unless a new one replaced it meanwhile.
			h.job.CompareAndSwap(j, nil)
			continue
		}
		if stop.Load() {
			return
		}
		if !h.poll(tm) {
			h.parked.Store(true)
			// Re-check after announcing the park: a job published
			// before this point is seen here, one published after it
			// finds parked set and sends a wake token.
			if h.job.Load() == nil && !stop.Load() {
				<-h.wake
				if p := tm.prof; p != nil && p.on.Load() {
					p.addWake(h.woken.Load())
				}
			}
			h.parked.Store(false)
		}
	}
}

// poll waits for a job, up to spinWait unless the team is held; false
// when none came.
func (h *helper) poll(tm *team) bool {
	start := time.Now()
	// A profiled poll adds its thread CPU time to the profile's (a
	// polling helper keeps its CPU busy: CPU time outside the chunks).
	pp, tid0, c0 := tm.prof.idleClock()
	for n := 1; ; n++ {
		if h.job.Load() != nil || tm.stop.Load() {
			pp.addSpin(tid0, c0, start)
			return true
		}
		if n%64 == 0 && tm.held.Load() == 0 && time.Since(start) > spinWait {
			pp.addSpin(tid0, c0, start)
			return false
		}
		if n%1024 == 0 {
			// Let the goroutines queued on this P (the GC's, a timer's)
			// run.
			runtime.Gosched()
		}
	}
}

// post hands j to the helper.
func (h *helper) post(j *job) {
	h.job.Store(j)
	if h.parked.Load() {
		h.sendWake()
	}
}

// sendWake sends the parked helper a wake token (none if one is pending).
func (h *helper) sendWake() {
	h.woken.Store(time.Now().UnixNano())
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Wake makes parked helpers poll for a job again (for spinWait): a
// caller about to run a parallel kernel after some serial work (say,
// allocating the kernel's output) calls it first, so that the helpers'
// wake-up (tens of µs on a virtual machine) overlaps that work.
func (x *Context) Wake() {
	if x == nil || x.threads <= 1 || x.prof.inlined() {
		return
	}
	for _, h := range x.getTeam().helpers {
		if h.parked.Load() {
			h.sendWake()
		}
	}
}

// inline reports whether the team's parallel calls run on the caller
// alone: it is closed, or in a solo hold (Hold) that no other Hold
// overlaps.
func (tm *team) inline() bool {
	return tm.stop.Load() || tm.solo.Load() > 0 && tm.held.Load() == 0
}

// cut is the thread count kernels cut their work for: Threads(), or 1
// while the helpers cannot run chunks (team.inline), so that a solo run
// is cut as a one-thread run is, without the split's own cost. Chunks
// compute the same chains whatever the cut, so the bits do not change.
func (x *Context) cut() int {
	t := x.Threads()
	if t > 1 && !x.prof.inlined() && x.getTeam().inline() {
		return 1
	}
	return t
}

// Hold keeps the helpers polling for jobs instead of parking until
// release is called (a model run holds them for its whole run: its
// serial steps are short, and a parked helper's wake-up costs more than
// the split saves). It wakes parked helpers. Holds may nest and overlap.
// After soloRuns held runs in which the helpers were often absent (other
// work had the cores), Holds are solo for a while: their calls run on
// the caller alone (soloShare).
func (x *Context) Hold() (release func()) {
	if x == nil || x.threads <= 1 || x.prof.inlined() {
		return func() {}
	}
	tm := x.getTeam()
	var once sync.Once
	if time.Now().UnixNano() < tm.soloUntil.Load() {
		if x.prof != nil {
			x.prof.soloHolds.Add(1)
		}
		tm.solo.Add(1)
		return func() { once.Do(func() { tm.solo.Add(-1) }) }
	}
	if tm.held.Add(1) == 1 {
		tm.awake.Store(false)
	}
	x.Wake()
	return func() {
		once.Do(func() {
			if tm.held.Add(-1) == 0 {
				tm.judge(tm.heldCalls.Swap(0), tm.heldAbsent.Swap(0), time.Now())
			}
		})
	}
}

// judge reads the calls of the holds just ended, absent of them without
// a helper's chunk: when at least one in soloShare was, in this run and
// the soloRuns − 1 before, the next Holds before now +
// period·2^(streak−soloRuns) are solo (soloShare).
func (tm *team) judge(calls, absent int64, now time.Time) {
	if calls < soloMinCalls {
		return
	}
	if absent*soloShare < calls {
		tm.streak.Store(0)
		return
	}
	streak := min(tm.streak.Add(1), soloRuns+soloMaxStreak-1)
	tm.streak.Store(streak)
	if streak >= soloRuns {
		tm.soloUntil.Store(now.Add(tm.period << (streak - soloRuns)).UnixNano())
	}
}

// Calls is the number of calls x has split over its threads so far (a
// caller can tell whether a kernel used the helpers, to Wake them before
// its next run).
func (x *Context) Calls() uint64 {
	if x == nil {
		return 0
	}
	return x.calls.Load()
}

func (tm *team) close() {
	tm.stop.Store(true)
	for _, h := range tm.helpers {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

// getTeam returns the Context's helpers, starting them on first use.
func (x *Context) getTeam() *team {
	x.teamOnce.Do(func() {
		tm := newTeam(x.threads-1, x.prof)
		x.team = tm
		runtime.AddCleanup(x, func(tm *team) { tm.close() }, tm)
	})
	return x.team
}

// Close stops the Context's helper goroutines. The Context stays usable
// (parallel calls then run on the caller's goroutine only); an unreachable
// Context stops its helpers without Close.
func (x *Context) Close() {
	if x == nil || x.threads <= 1 {
		return
	}
	// A Context that never split a call gets a stopped team without
	// helpers instead of starting them.
	x.teamOnce.Do(func() { x.team = &team{} })
	x.team.close()
}

// parallel runs f(0), …, f(n−1), each exactly once, on the caller's
// goroutine and the Context's helpers; it returns when all have returned.
// A panic in f is raised again on the caller's goroutine.
func (x *Context) parallel(n int, f func(i int)) {
	if n <= 1 || n > math.MaxUint32 || x.Threads() <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	if p := x.prof; p.inlined() {
		// Every chunk on the caller, timed if the profile is started
		// (SetInline).
		if p.on.Load() {
			var done func()
			f, done = p.record(n, f)
			defer done()
		}
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	tm := x.getTeam()
	if tm.inline() || !tm.busy.TryLock() {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	defer tm.busy.Unlock()
	x.calls.Add(1)
	if p := x.prof; p != nil && p.on.Load() {
		var done func()
		f, done = p.record(n, f)
		defer done()
	}
	j := &job{f: f, n: int64(n), finished: make(chan struct{}), timed: x.prof != nil && x.prof.on.Load()}
	j.ends.Store(uint64(n) << 32)
	for _, h := range tm.helpers[:min(len(tm.helpers), n-1)] {
		h.post(j)
	}
	held := tm.held.Load() > 0
	var t0 time.Time
	if held {
		t0 = time.Now()
	}
	c := j.work(false)
	// The chunks still running on helpers are short: poll for them for
	// a while, then block (a helper may have lost its CPU to another
	// process: polling would keep that CPU busy) — for heldEndWait
	// during a model run (Hold), else spinWait.
	pp, tid0, c0 := x.prof.idleClock()
	start := time.Now()
	if held {
		switch {
		case !tm.awake.Load():
			// (A parked helper's wake-up, after Hold, takes tens of µs
			// to ms on a virtual machine: its absence until then is not
			// counted.)
			tm.awake.Store(c < n)
		case start.Sub(t0) >= soloCall:
			tm.heldCalls.Add(1)
			if c == n {
				tm.heldAbsent.Add(1)
			}
		}
	}
	blocked := false
	wait := spinWait
	if held {
		wait = heldEndWait
	}
	for k := 1; j.done.Load() < j.n; k++ {
		if k%64 == 0 && time.Since(start) > wait {
			<-j.finished
			blocked = true
			break
		}
	}
	var woke time.Duration
	if blocked && j.timed {
		woke = time.Duration(max(time.Now().UnixNano()-j.finishedAt.Load(), 0))
	}
	pp.addWait(tid0, c0, blocked, woke)
	if p := j.panicked.Load(); p != nil {
		panic(*p)
	}
}

// chunks is the number of chunks to cut work (an estimate of the
// operations, see minWork) made of units equal indivisible units into:
// one when the work is below 2·minWork or there is one thread; else the
// count, at most units, work/minWork and chunksPerThread per thread, whose
// chunks (cut by split) the threads finish soonest taking them in turn
// (the largest such count: several chunks per thread even out a helper
// that starts late or shares its CPU). span is that time in units.
func (x *Context) chunks(work, units int) (c, span int) {
	return x.chunksMin(work, units, minWork)
}

// chunksMin is chunks with minw in place of minWork.
func (x *Context) chunksMin(work, units, minw int) (c, span int) {
	t := x.cut()
	if t <= 1 || work < 2*minw || units < 2 {
		return 1, units
	}
	return balance(units, min(units, work/minw, chunksPerThread*t), t)
}

// balance returns the count c ≤ maxc of chunks of u units, as split cuts
// them, with which t threads taking chunks in turn finish soonest, or
// nearly (within 1/16): the largest such c. span is that time in units.
func balance(u, maxc, t int) (c, span int) {
	spans := make([]int, maxc+1)
	free := make([]int, t)
	best := u
	for k := 1; k <= maxc; k++ {
		clear(free)
		for i := 0; i < k; i++ {
			j := 0
			for q := range free {
				if free[q] < free[j] {
					j = q
				}
			}
			free[j] += u*(i+1)/k - u*i/k
		}
		spans[k] = slices.Max(free)
		best = min(best, spans[k])
	}
	c = 1
	for k := maxc; k > 1; k-- {
		if spans[k] <= best+best/16 {
			c = k
			break
		}
	}
	return c, spans[c]
}

// minWork is the work estimate below which a chunk is not worth handing
// to another thread: about 7 µs, in units of one SIMD multiply-add of
// the SGEMM (≈ 13 ps).
const minWork = 1 << 19

// minRangeWork is minWork for the row-independent kernels of Range and
// rangeWork (elementwise, depthwise, pools, copies): their chunks need no
// packing or shared operand, so a chunk pays off from about 2 µs (4 Ki
// elements of a memory-bound elementwise kernel) when a helper is polling.
const minRangeWork = minWork / 4

// tapWork is the work estimate of one tap of a depthwise convolution or
// a pool (scalar or short-vector steps, far slower per tap than the
// SGEMM's multiply-adds).
const tapWork = 32

// chunksPerThread bounds the chunks per thread of one parallel call. Two
// rather than four since the helpers stay awake for a whole run (Hold):
// a late helper no longer needs small chunks to even out, and each chunk
// costs a claim and a cache-cold start (`--scaling 1,2`, 2 rounds, 9 CNNs:
// geometric mean 1.67 → 1.70; the first convolution of the mobile nets
// alone: ≈100 µs with 4 chunks against ≈120 µs with 8).
const chunksPerThread = 2
