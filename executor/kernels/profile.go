package kernels

import (
	"slices"
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
// Two corrections make it a model of the wall time rather than of the
// work alone:
//   - The clock's own cost is taken out of each chunk's time: reading a
//     thread's CPU time is a system call (≈ 0.5 µs on a virtual machine,
//     where the vDSO cannot answer it), and a chunk of a few µs timed
//     with it would look 10–30 % longer than it runs unprofiled. The
//     cost is calibrated once, in SetProfile (ClockCost).
//   - A call's synchronization is added: its helpers start late (the
//     job's publication reaching a polling helper, or a parked helper's
//     wake-up), the caller starts its own chunks after publishing the
//     job, and sees the helpers' last chunk finish late. These are wall
//     times (time.Now, cheap), measured per call. On a loaded machine a
//     helper or the caller is off its CPU (another process's turn) in
//     many calls — at load 5–10 on 2 CPUs the medians of all calls were
//     up to 2 ms, even the least of them up to 100 µs in some runs —
//     which is the load, not the synchronization. So a delay counts
//     only when the threads involved ran all the while: the helper's
//     thread CPU time since its last chunk grew with the wall time
//     (it was polling for this job), the caller's likewise since its
//     own last chunk (it was polling for the helper's). The model uses
//     the lower quartile of those (Sync; delays.estimate); when no call
//     was undisturbed, the least of all, which then still holds some of
//     the load.
//     A parked helper's wake-up counts only when it is undisturbed too:
//     parked is off the CPU, so on a quiet machine the model leaves
//     wake-ups out (a lower bound there).
//
// Thread CPU time is measured on Linux only; elsewhere every figure is
// zero. The record of each call is kept until Reset (a few words per
// chunk).
type ParallelProfile struct {
	on atomic.Bool
	mu sync.Mutex
	// calls is the number of parallel calls; caller the caller's thread
	// CPU time inside them; chunks the thread CPU time of all chunks.
	calls          int
	caller, chunks time.Duration
	// callerChunks: the chunks' time run on the caller's thread.
	callerChunks time.Duration
	// recs: each call's chunks; callerStart, helperStart, endLag: each
	// call's wall-time delays (those observed; see record).
	recs                             []callRec
	callerStart, helperStart, endLag delays
	// lastEnd: each helper thread at the end of its last chunk.
	lastEnd   map[int]threadMark
	threads   int
	clockCost time.Duration
	// The step breakdown (profile_steps.go): stepsOn, inline (SetSteps,
	// SetInline), the steps recorded, the current one (−1: none) and the
	// caller's thread and CPU time at its start.
	stepsOn, inline bool
	steps           []StepCost
	cur             int
	stepTid         int
	stepCPU         time.Duration
	// The threads' time outside the chunks (Idle), added to by the
	// helpers as they go: spin the helpers' thread CPU time polling for a
	// job, wakes and wakeLag the wake-ups of parked helpers and their
	// latencies (token sent → helper running, wall time), wait the
	// callers' thread CPU time in calls after their own last chunk
	// (waiting for the helpers' last chunks), blocked the calls in which
	// that wait ended blocked.
	spin, wakes, wakeLag, wait, blocked atomic.Int64
	// blockedLag: the blocked waits' wake-up latencies (the last chunk's
	// end → the caller running).
	blockedLag atomic.Int64
	// soloHolds counts the Context's solo Holds (soloShare), started or
	// not, never reset.
	soloHolds atomic.Int64
}

// IdleTimes is the threads' time outside the chunks recorded since Reset
// (ParallelProfile.Idle).
type IdleTimes struct {
	// Spin is the helpers' thread CPU time polling for a job (between
	// calls: the caller's serial work, its waits, the run's end).
	Spin time.Duration
	// Wait is the callers' thread CPU time in the calls after their own
	// last chunk (the helpers' last chunks, the synchronization):
	// polling, then blocked in Blocked of the calls.
	Wait    time.Duration
	Blocked int
	// BlockedLag is the total latency of the Blocked waits' wake-ups
	// (the call's last chunk finished → the caller running again).
	BlockedLag time.Duration
	// Wakes is the number of wake-ups of parked helpers and WakeLag their
	// total latency (the wake token sent → the helper running).
	Wakes   int
	WakeLag time.Duration
}

// CallerChunks is the part of Totals' chunks run on the callers'
// threads.
func (p *ParallelProfile) CallerChunks() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.callerChunks
}

// HelperThreads returns the OS thread ids (Linux) on which helpers ran
// chunks since Reset.
func (p *ParallelProfile) HelperThreads() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []int
	for t := range p.lastEnd {
		ids = append(ids, t)
	}
	slices.Sort(ids)
	return ids
}

// Idle returns the threads' time outside the chunks recorded since
// Reset.
func (p *ParallelProfile) Idle() IdleTimes {
	return IdleTimes{Spin: time.Duration(p.spin.Load()), Wait: time.Duration(p.wait.Load()),
		Blocked: int(p.blocked.Load()), BlockedLag: time.Duration(p.blockedLag.Load()), Wakes: int(p.wakes.Load()), WakeLag: time.Duration(p.wakeLag.Load())}
}

// addWake adds a wake-up of a parked helper whose token was sent at sent
// (UnixNano; 0: none recorded).
func (p *ParallelProfile) addWake(sent int64) {
	p.wakes.Add(1)
	if sent > 0 {
		p.wakeLag.Add(max(time.Now().UnixNano()-sent, 0))
	}
}

// idleClock starts the measure of a poll or a wait: p and the calling
// thread's id and CPU clock while p is started, else nil (addSpin and
// addWait on a nil profile do nothing).
func (p *ParallelProfile) idleClock() (*ParallelProfile, int, time.Duration) {
	if p == nil || !p.on.Load() {
		return nil, 0, 0
	}
	tid, c := threadClock()
	return p, tid, c
}

// addWait adds a caller's wait for the helpers' last chunks of a call:
// its thread's CPU time since c0 on thread tid0 (nothing when it moved to
// another thread meanwhile). A nil p records nothing.
//
// A blocked wait adds woke, the wall time from the last chunk's end to
// the caller running again (its wake-up).
func (p *ParallelProfile) addWait(tid0 int, c0 time.Duration, blocked bool, woke time.Duration) {
	if p == nil {
		return
	}
	if tid, c := threadClock(); tid == tid0 {
		p.wait.Add(int64(max(c-c0-p.clockCost, 0)))
	}
	if blocked {
		p.blocked.Add(1)
		p.blockedLag.Add(int64(woke))
	}
}

// addSpin adds a helper's polling since start: its thread's CPU time
// since c0 on thread tid0, or the wall time when the helper moved to
// another thread meanwhile (its Gosched); nothing when p was stopped
// meanwhile (a poll that outlasts the run). The clock is read at the
// poll's ends only: reading it more often (two system calls on a
// virtual machine) would cost the polling helper as much as its
// polling. A nil p records nothing.
func (p *ParallelProfile) addSpin(tid0 int, c0 time.Duration, start time.Time) {
	if p == nil || !p.on.Load() {
		return
	}
	if tid, c := threadClock(); tid == tid0 {
		p.spin.Add(int64(max(c-c0-p.clockCost, 0)))
	} else {
		p.spin.Add(int64(time.Since(start)))
	}
}

// callRec is one profiled call: each chunk's thread CPU time (the
// clock's cost taken out).
type callRec struct{ times []time.Duration }

// SetProfile makes x record its parallel calls in p (while p is started).
// Call it before x's first kernel. It calibrates the clock's cost.
func (x *Context) SetProfile(p *ParallelProfile) {
	if x != nil {
		p.threads = x.Threads()
		p.clockCost = clockCost()
		p.cur = -1
		x.prof = p
	}
}

// clockCost is the least thread CPU time a chunk doing nothing is
// measured to take, timed as record times a chunk.
func clockCost() time.Duration {
	best := time.Duration(-1)
	w0 := time.Now()
	for range 64 {
		tid0, c0 := threadClock()
		_ = time.Since(w0)
		tid, c := threadClock()
		if tid == tid0 && (best < 0 || c-c0 < best) {
			best = c - c0
		}
	}
	return max(best, 0)
}

// ClockCost is the clock's cost taken out of each chunk's time.
func (p *ParallelProfile) ClockCost() time.Duration { return p.clockCost }

// SoloHolds is the number of the Context's Holds that were solo (its
// helpers absent in the runs before: other work had the cores), whether
// the profile was started or not.
func (p *ParallelProfile) SoloHolds() int64 { return p.soloHolds.Load() }

// Start starts recording (adding to the figures recorded so far).
func (p *ParallelProfile) Start() { p.on.Store(true) }

// Stop stops recording.
func (p *ParallelProfile) Stop() { p.on.Store(false) }

// Reset clears the figures.
func (p *ParallelProfile) Reset() {
	p.mu.Lock()
	p.calls, p.caller, p.chunks, p.callerChunks = 0, 0, 0, 0
	p.recs, p.callerStart, p.helperStart, p.endLag, p.lastEnd = nil, delays{}, delays{}, delays{}, nil
	p.steps, p.cur = nil, -1
	p.mu.Unlock()
	for _, a := range []*atomic.Int64{&p.spin, &p.wakes, &p.wakeLag, &p.wait, &p.blocked, &p.blockedLag} {
		a.Store(0)
	}
}

// Totals returns the figures recorded since Reset: the number of parallel
// calls, the caller's thread CPU time inside them, all chunks' thread CPU
// time, and the calls' time on Threads() CPUs including their
// synchronization (see ParallelProfile; Sync).
func (p *ParallelProfile) Totals() (calls int, caller, chunks, span time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs, hs, el := p.syncLocked()
	for _, r := range p.recs {
		span += schedule(r.times, p.threads, cs, hs, el)
	}
	return p.calls, p.caller, p.chunks, span
}

// SyncSpan is the part of Totals' span that is the calls'
// synchronization: the span less that of the same chunks with no delays.
func (p *ParallelProfile) SyncSpan() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs, hs, el := p.syncLocked()
	var d time.Duration
	for _, r := range p.recs {
		d += schedule(r.times, p.threads, cs, hs, el) - schedule(r.times, p.threads, 0, 0, 0)
	}
	return d
}

// Sync returns the estimates (delays.estimate: the lower quartile of the
// calls whose threads stayed on their CPUs) of the caller's delay before its
// first chunk (allocating and publishing the job), a helper's delay
// before its first chunk (from the publication), and the delay between a
// helper finishing a call's last chunk and the caller going on — each
// less the clock's cost, which every one of these wall-time delays
// includes once (a chunk's start is read after its first clock reading,
// its end reported after its second).
func (p *ParallelProfile) Sync() (callerStart, helperStart, endLag time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.syncLocked()
}

func (p *ParallelProfile) syncLocked() (cs, hs, el time.Duration) {
	return p.callerStart.estimate(p.clockCost), p.helperStart.estimate(p.clockCost), p.endLag.estimate(p.clockCost)
}

// schedule is the time chunks of the given times take on t threads,
// claimed as parallel claims them (claimRun: the caller, thread 0, from
// the front, the helpers from the back, each as soon as it is free), the
// caller free from cs, the helpers from hs, the caller going on el after
// the last helper chunk it waits for.
func schedule(times []time.Duration, t int, cs, hs, el time.Duration) time.Duration {
	free := make([]time.Duration, t)
	used := make([]bool, t)
	for q := range free {
		free[q] = hs
	}
	free[0] = cs
	claimRun(times, free, used)
	span := free[0]
	for q := 1; q < t; q++ {
		if used[q] {
			span = max(span, free[q]+el)
		}
	}
	return span
}

// claimRun adds chunks of the given times to the threads' free times as
// parallel hands them out: the thread free first (the lowest index of
// those free together) claims the next chunk, thread 0 (the caller) from
// the front, the others (the helpers) from the back. used marks the
// threads that ran a chunk.
func claimRun[T int | time.Duration](times []T, free []T, used []bool) {
	lo, hi := 0, len(times)
	for lo < hi {
		j := 0
		for q := range free {
			if free[q] < free[j] {
				j = q
			}
		}
		if j == 0 {
			free[0] += times[lo]
			lo++
		} else {
			hi--
			free[j] += times[hi]
		}
		used[j] = true
	}
}

// record wraps f to time its chunks; done adds the call to p.
func (p *ParallelProfile) record(n int, f func(i int)) (timed func(i int), done func()) {
	// The caller's time in the call starts before the profile's own
	// allocations (and the step breakdown's call site): they are the
	// profile's cost, not the run's serial time.
	tid0, c0 := threadClock()
	times := make([]time.Duration, n)
	// Per chunk: the thread that ran it and its CPU time at the start
	// and end (raw clock readings), the wall offsets from w0 of its start
	// and end, whether it moved between threads.
	tids := make([]int, n)
	cpuS, cpuE := make([]time.Duration, n), make([]time.Duration, n)
	starts, ends := make([]time.Duration, n), make([]time.Duration, n)
	moved := make([]bool, n)
	site := ""
	if p.stepsOn {
		site = callSite()
	}
	w0 := time.Now()
	timed = func(i int) {
		tidS, cS := threadClock()
		starts[i] = time.Since(w0)
		f(i)
		ends[i] = time.Since(w0)
		tid, c := threadClock()
		tids[i], cpuS[i], cpuE[i] = tidS, cS, c
		if tid != tidS {
			// The goroutine moved to another thread (preempted, say,
			// for a GC stack scan): its time is unknown (its wall time
			// counts the time it waited for a thread, milliseconds on
			// a loaded machine); done estimates it.
			moved[i] = true
			c, cS = ends[i]-starts[i], 0
		} else {
			c -= p.clockCost
		}
		times[i] = max(c-cS, 0)
	}
	done = func() {
		lag := time.Since(w0)
		tid, c := threadClock()
		caller := c - c0
		if tid != tid0 {
			// The caller is not locked to its thread and moved.
			caller = time.Since(w0)
		}
		// A chunk that moved between threads counts as the mean of the
		// call's others (the chunks of a call are cut to take about as
		// long), or its wall time when all moved.
		var known, nk time.Duration
		for i, d := range times {
			if !moved[i] {
				known, nk = known+d, nk+1
			}
		}
		if nk > 0 {
			for i := range times {
				if moved[i] {
					times[i] = known / nk
				}
			}
		}
		var sum, own time.Duration
		// The caller's first and last chunk, and each helper thread's.
		cFirst, cLast := -1, -1
		hFirst := map[int]int{}
		hLast := map[int]int{}
		lastH := time.Duration(-1)
		for i, d := range times {
			sum += d
			if tids[i] == tid0 {
				own += d
				if cFirst < 0 {
					cFirst = i
				}
				if cLast < 0 || ends[i] > ends[cLast] {
					cLast = i
				}
				continue
			}
			if j, ok := hFirst[tids[i]]; !ok || starts[i] < starts[j] {
				hFirst[tids[i]] = i
			}
			if j, ok := hLast[tids[i]]; !ok || ends[i] > ends[j] {
				hLast[tids[i]] = i
			}
			lastH = max(lastH, ends[i])
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.calls++
		p.caller += caller
		p.chunks += sum
		p.callerChunks += own
		p.recs = append(p.recs, callRec{times: times})
		if p.stepsOn {
			p.addStepLocked(site, caller, times)
		}
		if cFirst >= 0 {
			p.callerStart.add(starts[cFirst], true)
		}
		if p.lastEnd == nil {
			p.lastEnd = map[int]threadMark{}
		}
		for t, i := range hFirst {
			// A helper's delay is the synchronization's when its thread
			// ran all the while since its last chunk (polling for this
			// job), not when it was off its CPU (another process's
			// turn, or parked).
			prev, ok := p.lastEnd[t]
			p.helperStart.add(starts[i], ok && onCPU(cpuS[i]-prev.cpu, w0.Add(starts[i]).Sub(prev.wall)))
		}
		for t, i := range hLast {
			p.lastEnd[t] = threadMark{wall: w0.Add(ends[i]), cpu: cpuE[i]}
		}
		if lastH >= 0 && (cLast < 0 || lastH > ends[cLast]) {
			// The caller waited for a helper's chunk: running all the
			// while since its own last chunk (polling), or not.
			run := cLast >= 0 && tid == tid0 && onCPU(c-cpuE[cLast], lag-ends[cLast])
			p.endLag.add(lag-lastH, run)
		}
		// This bookkeeping is the profile's cost, not the run's serial
		// time: count it in the caller's time inside the call.
		if tidE, cE := threadClock(); tidE == tid && tid == tid0 {
			p.caller += cE - c
			if p.stepsOn && p.cur >= 0 && p.cur < len(p.steps) {
				p.steps[p.cur].Caller += cE - c
			}
		}
	}
	return timed, done
}

// onCPU reports whether a thread whose CPU time grew by cpu over wall
// time ran nearly all of it.
func onCPU(cpu, wall time.Duration) bool { return cpu >= wall-wall/8 }

// threadMark is a thread's wall time and CPU time at the end of its last
// chunk.
type threadMark struct {
	wall time.Time
	cpu  time.Duration
}

// delays are the observed delays of one kind: those observed with the
// threads involved on their CPUs all the while (quiet), and all.
type delays struct{ quiet, all []time.Duration }

func (d *delays) add(v time.Duration, quiet bool) {
	d.all = append(d.all, v)
	if quiet {
		d.quiet = append(d.quiet, v)
	}
}

// estimate is the lower quartile of the quiet delays, or the least of
// all when none was quiet, less cost (each delay includes a clock
// reading); 0 when none was observed. The quartile rather than the
// median: the check of the threads' CPU times misses some disturbances
// (a helper preempted between its chunk's end and reporting it; a
// helper goroutine moved to another thread by its own Gosched), and at
// load 10 those made the quiet medians 1–5 ms of a run in a third of
// the runs; the undisturbed delays are a few µs apart.
func (d *delays) estimate(cost time.Duration) time.Duration {
	if len(d.quiet) > 0 {
		s := slices.Clone(d.quiet)
		slices.Sort(s)
		return max(s[len(s)/4]-cost, 0)
	}
	if len(d.all) == 0 {
		return 0
	}
	return max(slices.Min(d.all)-cost, 0)
}

// Imbalance is the part of the calls' time recorded since Reset (their
// synchronization left out) by which their chunks did not share the
// threads evenly: each call's span on Threads() threads less its
// chunks' thread CPU time / Threads(), summed. (A kernel call of one
// chunk is no parallel call: it is in the caller's serial time.)
func (p *ParallelProfile) Imbalance() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var imb time.Duration
	for _, r := range p.recs {
		var sum time.Duration
		for _, d := range r.times {
			sum += d
		}
		imb += schedule(r.times, p.threads, 0, 0, 0) - sum/time.Duration(max(p.threads, 1))
	}
	return imb
}
