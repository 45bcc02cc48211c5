package kernels

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// TestProfileSteps: the step breakdown puts each parallel call in the
// step that made it, names its call site, counts its chunks, and
// SetInline runs every chunk on the caller's goroutine with the same
// chunk boundaries.
func TestProfileSteps(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, inline := range []bool{false, true} {
		x := NewContext(2)
		p := &ParallelProfile{}
		x.SetProfile(p)
		p.SetSteps(true)
		p.SetInline(inline)
		release := x.Hold()
		p.Start()
		if !p.StepsOn() {
			t.Fatal("StepsOn false after Start")
		}
		y := make([]float32, 1<<18)
		var seen atomic.Int64
		var calls atomic.Int64
		for run := 0; run < 3; run++ {
			p.BeginStep(0, func() string { return "first" })
			x.Range(len(y), 1, func(lo, hi int) {
				seen.Add(int64(hi - lo))
				if run == 0 {
					calls.Add(1)
				}
				for i := lo; i < hi; i++ {
					y[i]++
				}
			})
			p.EndStep()
			p.BeginStep(1, func() string { return "second" })
			p.EndStep()
		}
		p.Stop()
		release()
		x.Close()
		if seen.Load() != 3*int64(len(y)) {
			t.Fatalf("inline %v: chunks covered %d elements, want %d", inline, seen.Load(), 3*len(y))
		}
		steps := p.Steps()
		if len(steps) != 2 || steps[0].Label != "first" || steps[1].Label != "second" {
			t.Fatalf("inline %v: steps %+v", inline, steps)
		}
		s := steps[0]
		if s.Runs != 3 || s.Calls != 3 || len(s.Sites) != 1 {
			t.Fatalf("inline %v: step 0 %d runs, %d calls, sites %v", inline, s.Runs, s.Calls, s.Sites)
		}
		for site, v := range s.Sites {
			if !strings.Contains(site, "TestProfileSteps") {
				t.Errorf("inline %v: call site %q, want this test", inline, site)
			}
			if v.Calls != 3 || v.Chunks != 3*int(calls.Load()) || v.Chunks < 6 {
				t.Errorf("inline %v: site %+v, want 3 calls of %d chunks", inline, v, calls.Load())
			}
		}
		if steps[1].Calls != 0 || steps[1].Runs != 3 {
			t.Errorf("inline %v: step 1 %+v", inline, steps[1])
		}
		if s.Serial() < 0 || s.Chunks <= 0 && ThreadCPUTime() > 0 {
			t.Errorf("inline %v: serial %v chunks %v", inline, s.Serial(), s.Chunks)
		}
		p.Reset()
		if len(p.Steps()) != 0 {
			t.Error("Reset kept steps")
		}
	}
}

// TestInlineUnstarted: SetInline holds before the profile is started —
// every chunk runs on the caller's thread, cut as for the Context's
// threads, nothing is recorded — and the Context starts no helpers.
func TestInlineUnstarted(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := NewContext(2)
	defer x.Close()
	p := &ParallelProfile{}
	x.SetProfile(p)
	p.SetInline(true)
	release := x.Hold()
	x.Wake()
	self, _ := threadClock()
	y := make([]float32, 1<<18)
	var chunks atomic.Int64
	var elsewhere atomic.Int64
	x.Range(len(y), 1, func(lo, hi int) {
		chunks.Add(1)
		if tid, _ := threadClock(); tid != self {
			elsewhere.Add(1)
		}
		for i := lo; i < hi; i++ {
			y[i]++
		}
	})
	release()
	for i, v := range y {
		if v != 1 {
			t.Fatalf("y[%d] = %v, want 1 (each element once)", i, v)
		}
	}
	if chunks.Load() < 2 {
		t.Errorf("%d chunks, want the cut of 2 threads (at least 2)", chunks.Load())
	}
	if elsewhere.Load() != 0 {
		t.Errorf("%d of %d chunks ran on another thread", elsewhere.Load(), chunks.Load())
	}
	if x.team != nil {
		t.Error("an inline Context started its helpers")
	}
	if x.Calls() != 0 || len(p.Steps()) != 0 {
		t.Errorf("an unstarted profile recorded: %d calls, %d steps", x.Calls(), len(p.Steps()))
	}
}
