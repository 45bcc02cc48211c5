package kernels

import (
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Step breakdown. With SetSteps(true) a ParallelProfile also records, for
// each step of a model run (BeginStep, EndStep: the executor's plan
// steps), the caller's thread CPU time over the step and, of the parallel
// calls made inside it, the caller's time in them and their chunks' thread
// CPU time, by call site (the kernel function and line that split the
// work). On one thread a step's CPU time is all its work; on more, the
// step's serial time plus its chunks' time is the same work done split:
// the difference, step by step and site by site, is what splitting costs
// (work every chunk repeats, chunks' fixed costs, caches).
//
// With SetInline(true) every parallel call runs all its chunks on the
// caller, one after the other, cut as for Threads() threads: the chunks'
// time then holds what the split repeats but not what running on two
// cores at once costs (inputs in the other core's cache, shared memory
// bandwidth). It holds whether or not the profile is started (unstarted,
// nothing is recorded: the wall time of such runs is the split's own cost
// without the profiler's clock reads), and the Context then starts no
// helpers (Hold and Wake do nothing).

// StepCost is one step's figures summed over the runs recorded.
type StepCost struct {
	// Label names the step (BeginStep's label).
	Label string
	// Runs is the number of times the step ran.
	Runs int
	// CPU is the caller's thread CPU time from BeginStep to EndStep, the
	// clock's cost taken out; Caller its part inside parallel calls.
	CPU, Caller time.Duration
	// Calls is the number of parallel calls, Chunks their chunks' thread
	// CPU time.
	Calls  int
	Chunks time.Duration
	// Sites: chunk thread CPU time and calls by call site.
	Sites map[string]SiteCost
}

// Serial is the step's caller time outside parallel calls.
func (s StepCost) Serial() time.Duration { return max(s.CPU-s.Caller, 0) }

// SiteCost is the chunks' thread CPU time and calls of one call site.
type SiteCost struct {
	Calls, Chunks int
	Time          time.Duration
}

// SetSteps turns the step breakdown on or off (before Start).
func (p *ParallelProfile) SetSteps(on bool) { p.stepsOn = on }

// StepsOn reports whether the step breakdown is on and recording.
func (p *ParallelProfile) StepsOn() bool { return p != nil && p.stepsOn && p.on.Load() }

// SetInline makes parallel calls run every chunk on the caller (see
// above; before the Context's first call).
func (p *ParallelProfile) SetInline(on bool) { p.inline = on }

// inlined reports whether p (nil: none) runs its Context's parallel
// calls on the caller (SetInline).
func (p *ParallelProfile) inlined() bool { return p != nil && p.inline }

// BeginStep starts step k (label is called the first time k is seen).
// The caller must stay on its thread until EndStep.
func (p *ParallelProfile) BeginStep(k int, label func() string) {
	p.mu.Lock()
	for len(p.steps) <= k {
		p.steps = append(p.steps, StepCost{})
	}
	if p.steps[k].Sites == nil {
		p.steps[k].Label = label()
		p.steps[k].Sites = map[string]SiteCost{}
	}
	p.cur = k
	p.mu.Unlock()
	p.stepTid, p.stepCPU = threadClock()
}

// EndStep ends the step BeginStep started.
func (p *ParallelProfile) EndStep() {
	tid, c := threadClock()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := &p.steps[p.cur]
	s.Runs++
	if tid == p.stepTid {
		s.CPU += max(c-p.stepCPU-p.clockCost, 0)
	}
	p.cur = -1
}

// Steps returns the step breakdown recorded since Reset, in step order.
func (p *ParallelProfile) Steps() []StepCost {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]StepCost, len(p.steps))
	for i, s := range p.steps {
		out[i] = s
		out[i].Sites = make(map[string]SiteCost, len(s.Sites))
		for k, v := range s.Sites {
			out[i].Sites[k] = v
		}
	}
	return out
}

// addStepLocked adds a call of the current step (if any).
func (p *ParallelProfile) addStepLocked(site string, caller time.Duration, times []time.Duration) {
	if p.cur < 0 || p.cur >= len(p.steps) {
		return
	}
	s := &p.steps[p.cur]
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	s.Calls++
	s.Caller += caller + p.clockCost // the call's clock readings outside caller
	s.Chunks += sum
	sc := s.Sites[site]
	sc.Calls++
	sc.Chunks += len(times)
	sc.Time += sum
	s.Sites[site] = sc
}

// callSite names the kernel that made a parallel call: the function and
// line of the first caller outside the splitting helpers.
func callSite() string {
	var pcs [12]uintptr
	n := runtime.Callers(3, pcs[:])
	fr := runtime.CallersFrames(pcs[:n])
	for {
		f, more := fr.Next()
		name := f.Function
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		switch name {
		case "kernels.(*Context).parallel", "kernels.(*Context).rangeWork", "kernels.(*Context).Range",
			"kernels.(*ParallelProfile).record":
		default:
			return name + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return "?"
		}
	}
}
