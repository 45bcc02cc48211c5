package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestParallelRunsEveryChunkOnce: every chunk runs exactly once, for
// concurrent callers sharing a Context and for nested calls (which run
// on the caller's goroutine).
func TestParallelRunsEveryChunkOnce(t *testing.T) {
	for _, th := range []int{1, 2, 3, 4} {
		x := NewContext(th)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, n := range []int{0, 1, 2, 3, 7, 64} {
					counts := make([]atomic.Int32, n*5)
					x.parallel(n, func(i int) {
						counts[i*5].Add(1)
						x.parallel(4, func(k int) { counts[i*5+1+k].Add(1) })
					})
					for i := range counts {
						if c := counts[i].Load(); c != 1 {
							t.Errorf("%d threads, %d chunks: chunk %d ran %d times", th, n, i, c)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		x.Close()
	}
}

// TestJobClaimEnds: the caller's claims take chunks from the front, the
// helpers' from the back, each chunk once, concurrent claims included.
func TestJobClaimEnds(t *testing.T) {
	j := &job{n: 5}
	j.ends.Store(5 << 32)
	var got []int
	for _, back := range []bool{false, true, true, false, false, true} {
		i, ok := j.claim(back)
		if !ok {
			got = append(got, -1)
			continue
		}
		got = append(got, i)
	}
	if want := []int{0, 4, 3, 1, 2, -1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("claims %v, want %v", got, want)
	}
	for _, n := range []int{1, 2, 3, 100, 10000} {
		j := &job{n: int64(n)}
		j.ends.Store(uint64(n) << 32)
		seen := make([]atomic.Int32, n)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i, ok := j.claim(g%2 == 1)
					if !ok {
						return
					}
					seen[i].Add(1)
				}
			}()
		}
		wg.Wait()
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("%d chunks: chunk %d claimed %d times", n, i, c)
			}
		}
	}
}

// TestParallelPanic: a panic in a chunk is raised on the caller once
// every chunk has returned, and the Context stays usable.
func TestParallelPanic(t *testing.T) {
	x := NewContext(2)
	defer x.Close()
	for round := 0; round < 20; round++ {
		var ran atomic.Int32
		got := func() (r any) {
			defer func() { r = recover() }()
			x.parallel(8, func(i int) {
				ran.Add(1)
				if i == round%8 {
					panic(fmt.Sprintf("chunk %d", i))
				}
			})
			return nil
		}()
		if got != fmt.Sprintf("chunk %d", round%8) {
			t.Fatalf("round %d: recovered %v", round, got)
		}
		if n := ran.Load(); n != 8 {
			t.Fatalf("round %d: %d chunks ran, want 8", round, n)
		}
	}
	var sum atomic.Int32
	x.parallel(5, func(i int) { sum.Add(int32(i)) })
	if sum.Load() != 10 {
		t.Fatalf("after panics: sum %d, want 10", sum.Load())
	}
}

// TestCloseStopsHelpers: Close ends the helper goroutines; the Context
// then runs parallel calls on the caller's goroutine.
func TestCloseStopsHelpers(t *testing.T) {
	x := NewContext(4)
	var ran atomic.Int32
	x.parallel(64, func(int) { ran.Add(1) })
	if len(x.team.helpers) != 3 || ran.Load() != 64 {
		t.Fatalf("%d helpers, %d chunks ran; want 3 and 64", len(x.team.helpers), ran.Load())
	}
	x.Close()
	exited := make(chan struct{})
	go func() {
		x.team.exited.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("helpers still running 10 s after Close")
	}
	var sum atomic.Int32
	x.parallel(5, func(i int) { sum.Add(int32(i)) })
	if sum.Load() != 10 {
		t.Fatalf("after Close: sum %d, want 10", sum.Load())
	}
}

// TestCloseUnused: closing a Context that never split a call starts no
// helpers, and the Context still runs parallel calls (on the caller).
func TestCloseUnused(t *testing.T) {
	x := NewContext(3)
	x.Close()
	if len(x.team.helpers) != 0 {
		t.Fatalf("%d helpers started by Close", len(x.team.helpers))
	}
	var sum atomic.Int32
	x.parallel(5, func(i int) { sum.Add(int32(i)) })
	x.Wake()
	if sum.Load() != 10 {
		t.Fatalf("after Close: sum %d, want 10", sum.Load())
	}
}

// TestSgemmSplitsIdentical: the parallel SGEMM (column chunks with A
// packed once and shared, row chunks with B packed once and shared,
// either operand packed beforehand, transposed, beta ≠ 0, a GEMV) is
// bit-identical to one thread for 2, 3 and 4 threads.
func TestSgemmSplitsIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 1))
	type tc struct {
		m, n, k      int
		ta, tb       bool
		packA, packB bool
		alpha, beta  float32
	}
	cases := []tc{
		{m: 64, n: 3136, k: 576, alpha: 1},                              // columns, A shared
		{m: 70, n: 1000, k: 300, ta: true, alpha: 0.5, beta: -1.5},      // columns, transposed A shared
		{m: 64, n: 3136, k: 576, packA: true, alpha: 1},                 // columns, A packed
		{m: 517, n: 49, k: 700, alpha: 1},                               // rows, B shared
		{m: 300, n: 77, k: 520, tb: true, alpha: 2, beta: 1},            // rows, transposed B shared
		{m: 300, n: 77, k: 520, packB: true, alpha: 1, beta: 0.5},       // rows, B packed
		{m: 1, n: 1000, k: 1024, alpha: 1},                              // GEMV
		{m: 2048, n: 5, k: 513, ta: true, tb: true, alpha: 1, beta: -1}, // rows, both transposed
		{m: 16, n: 3025, k: 64, packA: true, alpha: 1},                  // columns (rows 12 + 4 were uneven), A packed
		{m: 16, n: 3025, k: 128, alpha: 1},                              // columns, A shared
		{m: 64, n: 3025, k: 16, packA: true, alpha: 1, beta: 1},         // columns, short k
		{m: 1024, n: 49, k: 464, packA: true, alpha: 1},                 // rows (columns would stream A twice), B shared
		{m: 232, n: 49, k: 232, packA: true, alpha: 1, beta: 1},         // rows, B shared
	}
	for _, c := range cases {
		lda, ldb := c.k+1, c.n+2
		ar, br := c.m, c.k
		if c.ta {
			lda, ar = c.m+3, c.k
		}
		if c.tb {
			ldb, br = c.k+2, c.n
		}
		a, b, c0 := randSlice(r, ar*lda), randSlice(r, br*ldb), randSlice(r, c.m*c.n)
		var pa, pb *Packed
		var err error
		alpha := c.alpha
		if c.packA {
			if pa, err = PackA(c.ta, c.m, c.k, c.alpha, a, lda); err != nil {
				t.Fatal(err)
			}
			alpha = 1
		}
		if c.packB {
			if pb, err = PackB(c.tb, c.k, c.n, b, ldb); err != nil {
				t.Fatal(err)
			}
		}
		var ref []float32
		for _, th := range []int{1, 2, 3, 4} {
			x := NewContext(th)
			y := append([]float32{}, c0...)
			if err := x.SgemmPacked(c.ta, c.tb, c.m, c.n, c.k, alpha, a, lda, pa, b, ldb, pb, c.beta, y, c.n); err != nil {
				t.Fatal(err)
			}
			x.Close()
			if ref == nil {
				ref = y
				continue
			}
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%+v: %d threads differ from 1 at %d: %g vs %g", c, th, i, y[i], ref[i])
				}
			}
		}
	}
}

// TestBalance: the chunk count balance picks finishes within 1/16 of the
// best count's time (in units, the threads taking chunks in turn), and
// no larger count does as well.
func TestBalance(t *testing.T) {
	sim := func(u, c, th int) int {
		free := make([]int, th)
		parts := split(u, c, 1)
		for i := 0; i+1 < len(parts); i++ {
			j := 0
			for q := range free {
				if free[q] < free[j] {
					j = q
				}
			}
			free[j] += parts[i+1] - parts[i]
		}
		m := 0
		for _, f := range free {
			m = max(m, f)
		}
		return m
	}
	for th := 1; th <= 3; th++ {
		for u := 2; u <= 60; u++ {
			for maxc := 1; maxc <= min(u, 12); maxc++ {
				c, span := balance(u, maxc, th)
				best := u
				for k := 1; k <= maxc; k++ {
					best = min(best, sim(u, k, th))
				}
				if c < 1 || c > maxc || span != sim(u, c, th) || span > best+best/16 {
					t.Fatalf("balance(%d, %d, %d) = %d chunks, span %d (simulated %d, best %d)", u, maxc, th, c, span, sim(u, c, th), best)
				}
				for k := c + 1; k <= maxc; k++ {
					if sim(u, k, th) <= best+best/16 {
						t.Fatalf("balance(%d, %d, %d) = %d chunks, but %d chunks are as fast", u, maxc, th, c, k)
					}
				}
			}
		}
	}
}

// TestParallelProfile: a profiled parallel call records its chunks'
// thread CPU time (Linux), and its span lies between the longest chunk
// and the sum of all chunks; nothing is recorded once stopped.
func TestParallelProfile(t *testing.T) {
	runtime.LockOSThread() // the caller's thread CPU time is read across each call
	defer runtime.UnlockOSThread()
	x := NewContext(2)
	defer x.Close()
	var p ParallelProfile
	x.SetProfile(&p)
	burn := func() {
		s := float32(0)
		for i := 0; i < 2_000_000; i++ {
			s += float32(i)
		}
		if s == 0 {
			t.Error("no work")
		}
	}
	p.Start()
	x.parallel(2, func(int) { burn() })
	p.Reset()
	x.parallel(4, func(int) { burn() })
	x.parallel(3, func(int) { burn() })
	p.Stop()
	x.parallel(4, func(int) { burn() })
	calls, caller, chunks, span := p.Totals()
	if calls != 2 {
		t.Fatalf("%d calls recorded, want 2", calls)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if chunks <= 0 || caller <= 0 || span <= 0 {
		t.Fatalf("caller %v, chunks %v, span %v: want positive thread CPU times", caller, chunks, span)
	}
	if p.ClockCost() <= 0 {
		t.Fatalf("clock cost %v: want the calibrated cost of reading the thread's CPU time", p.ClockCost())
	}
	// 7 chunks on 2 threads: at least the 4 of the longer of the two
	// calls' halves, at most all of them — without the synchronization
	// delays (on a loaded machine a helper may get no CPU for ms).
	sync := p.SyncSpan()
	if work := span - sync; sync < 0 || work > chunks || work < chunks*2/7 {
		t.Fatalf("span %v (%v of it synchronization) against %v of chunks", span, sync, chunks)
	}
}

// TestProfileIdle: a started profile records the helpers' polling
// between calls (the caller's serial work) and the caller's wait for a
// helper's longer chunk; wake-ups of parked helpers are counted; Reset
// clears them and a stopped profile adds nothing.
func TestProfileIdle(t *testing.T) {
	x, p := profiledPair(t)
	x.parallel(2, func(int) {}) // start the helper
	// On a loaded machine (CI's two cores run test packages side by
	// side) either thread may lose its CPU for whole ms: the helper may
	// be off its CPU when a job is posted, and the caller then runs both
	// chunks. Each part is counted on its own, so the attempts add up:
	// across at most ten, each part must show.
	var spin, wait, wakeLag time.Duration
	var blocked, wakes int
	for range 10 {
		time.Sleep(5 * time.Millisecond) // the helper parks
		p.Reset()
		p.Start()
		release := x.Hold() // wakes the parked helper: it polls from here on
		for range 5 {
			// The helper's chunk (the back one) is 4 ms longer than the
			// caller's: the caller waits for it, longer than heldEndWait.
			// The caller's chunk (2 ms) gives a helper that lost its
			// CPU time to claim its own.
			x.parallel(2, func(i int) {
				spinFor(time.Duration(2+4*i) * time.Millisecond)
			})
			spinFor(time.Millisecond) // serial work: the helper polls
		}
		release()
		p.Stop()
		idle := p.Idle()
		spin, wait, wakeLag = max(spin, idle.Spin), max(wait, idle.Wait), max(wakeLag, idle.WakeLag)
		blocked, wakes = max(blocked, idle.Blocked), max(wakes, idle.Wakes)
		if spin > 0 && wait > 0 && blocked >= 1 && wakes >= 1 && wakeLag > 0 {
			break
		}
	}
	if spin <= 0 || wait <= 0 || blocked < 1 {
		t.Errorf("spin %v, wait %v, %d waits blocked: want some of each (5 × 1 ms of serial work, 5 waits of 4 ms)", spin, wait, blocked)
	}
	if wakes < 1 || wakeLag <= 0 {
		t.Errorf("%d wake-ups, %v: want the parked helper's", wakes, wakeLag)
	}
	time.Sleep(time.Millisecond) // a helper's last addition under way at Stop
	p.Reset()
	x.parallel(2, func(int) { spinFor(time.Millisecond) })
	if idle := p.Idle(); idle != (IdleTimes{}) {
		t.Errorf("after Reset, stopped: %+v, want nothing", idle)
	}
}

// profiledPair returns a Context of two threads with a profile, the
// test's goroutine locked to its thread (the profile reads its CPU time)
// until the test ends; it skips the test where thread CPU time is not
// measured.
func profiledPair(t *testing.T) (*Context, *ParallelProfile) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("thread CPU time is measured on Linux only")
	}
	runtime.LockOSThread()
	x := NewContext(2)
	p := new(ParallelProfile)
	x.SetProfile(p)
	t.Cleanup(func() {
		x.Close()
		runtime.UnlockOSThread()
	})
	return x, p
}

// spinFor keeps its thread busy for d (wall time).
func spinFor(d time.Duration) {
	for s := time.Now(); time.Since(s) < d; {
	}
}

// TestHeldCallerPolls: during a held run a caller whose helper finishes
// its chunk 0.7 ms after the caller's polls for it (heldEndWait) instead
// of blocking after spinWait.
func TestHeldCallerPolls(t *testing.T) {
	x, p := profiledPair(t)
	release := x.Hold()
	defer release()
	x.parallel(2, func(int) {}) // start the helper
	// A helper off its CPU for 2 ms (a loaded machine, such as CI's two
	// cores running test packages side by side) blocks a held caller
	// too, or lets the caller run both chunks (no wait at all): a few
	// attempts of 10 calls each, one of which must show the policy. A
	// caller that blocks after spinWait (100 µs) blocks in every call of
	// every attempt.
	var idle IdleTimes
	for range 5 {
		p.Reset()
		p.Start()
		for range 10 {
			// Chunk 0 (the caller's) 0.3 ms, chunk 1 (the helper's) 1 ms.
			x.parallel(2, func(i int) { spinFor(time.Duration(3+7*i) * time.Millisecond / 10) })
		}
		p.Stop()
		if idle = p.Idle(); idle.Blocked <= 3 && idle.Wait > 0 {
			return
		}
	}
	t.Errorf("10 held calls, 5 attempts: the last had %d blocked waits (want ≤ 3), %v of waits (want some)", idle.Blocked, idle.Wait)
}

// TestProfileSchedule: a profiled call's time on the threads counts the
// caller's delay before its first chunk, the helpers' delay before
// theirs, and the caller's delay in seeing a helper's last chunk end; a
// helper that would start after the caller has done every chunk takes
// none (nor adds its end delay).
func TestProfileSchedule(t *testing.T) {
	for _, c := range []struct {
		times      []time.Duration
		t          int
		cs, hs, el time.Duration
		want       time.Duration
	}{
		{[]time.Duration{3, 3, 3}, 2, 0, 0, 0, 6},
		{[]time.Duration{3, 3, 3}, 2, 1, 2, 1, 7},
		{[]time.Duration{3, 3}, 2, 1, 2, 1, 6},
		{[]time.Duration{2, 2, 2}, 2, 1, 10, 5, 7},
		{[]time.Duration{4}, 3, 1, 2, 9, 5},
		{[]time.Duration{5, 1, 1, 1}, 3, 0, 1, 1, 5},
	} {
		if got := schedule(c.times, c.t, c.cs, c.hs, c.el); got != c.want {
			t.Errorf("schedule(%v, %d threads, %v, %v, %v) = %v, want %v", c.times, c.t, c.cs, c.hs, c.el, got, c.want)
		}
	}
}

// TestRowSpanShortLastChunk: with edge kernels the row chunks' time
// counts their rows, so 16 rows in two chunks (12 + 4) take 12 rows'
// time, more than the column chunks of a wide product, and gemm cuts
// its columns; without edge kernels a chunk counts whole tiles.
func TestRowSpanShortLastChunk(t *testing.T) {
	edge := microKernel{mr: 12, nr: 32, edge: make([]tileFunc, 12)}
	whole := microKernel{mr: 12, nr: 32}
	for _, c := range []struct {
		mk             microKernel
		m, nc, t, want int
	}{
		{edge, 16, 2, 2, 12},
		{whole, 16, 2, 2, 12},
		{edge, 64, 2, 2, 36},
		{edge, 64, 4, 2, 40},   // chunks 12, 24, 12, 16: 12+12+16 | 24
		{edge, 100, 1, 2, 100}, // one chunk
		{whole, 100, 1, 2, 108},
		{edge, 48, 4, 2, 24},
	} {
		if got := rowSpan(c.mk, c.m, c.nc, c.t); got != c.want {
			t.Errorf("rowSpan(mr %d edge %v, m %d, %d chunks, %d threads) = %d, want %d", c.mk.mr, c.mk.edge != nil, c.m, c.nc, c.t, got, c.want)
		}
	}
}

// TestGemmSplitWeights: a product with large weights (A) and few columns
// is cut into row chunks, not column chunks that would each stream all of
// A (shufflenet_v2's last 1×1 convolution); wide products with small
// weights are still cut by columns; a product whose row chunks would each
// stream a B above cachedB, or a B with at least as many rows as C
// (m ≤ kb), is cut by columns (mobilenet_v2's 24-channel projections,
// densenet121's bottlenecks), unless B is a convolution's input read in
// place, whose streamed rows are its channels (kb); with m ≤ kb and an A
// below smallA, whose reads are not counted, by columns too
// (shufflenet_v2's 1×1 convolutions); an expansion (m > kb)
// with a B below cachedB keeps row chunks; one thread does not cut. The split
// is a function of the micro-kernel's tile: the AVX-512 one's (12×32
// with edge kernels) is given, so the test means the same under
// ONNXCONV_SGEMM_KERNEL=avx2 or generic.
func TestGemmSplitWeights(t *testing.T) {
	x := NewContext(2)
	defer x.Close()
	best := microKernel{name: "12×32 with edge kernels", mr: 12, nr: 32, edge: make([]tileFunc, 12)}
	for _, c := range []struct {
		m, n, k, kb int
		byCols      bool
	}{
		{1024, 49, 464, 464, false},
		// A below smallA with m ≤ kb: its reads by every column chunk
		// are free, B's by every row chunk are not (shufflenet_v2's 1×1
		// convolutions).
		{232, 49, 232, 232, true},
		{116, 196, 116, 116, true},
		{58, 784, 58, 58, true},
		// A above smallA with m ≤ kb: counted.
		{232, 49, 464, 464, false},
		{64, 3136, 576, 576, true},
		{16, 3025, 128, 128, true},
		{1, 1000, 1024, 1024, true},
		{24, 3136, 144, 144, true},
		{128, 784, 480, 480, true},
		// m ≤ kb: B's reads counted whatever its size (densenet121's
		// bottlenecks at 28² and 14², resnet50's 3×3 at 28²).
		{128, 784, 320, 320, true},
		{128, 196, 992, 992, true},
		{128, 848, 1152, 128, true},
		// Expansions (m > kb) with B below cachedB: rows, which keep
		// each channel's output on the core a depthwise step after
		// them reads it from (efficientnet_b0's, mnasnet's).
		{144, 3136, 24, 24, false},
		{240, 784, 40, 40, false},
		{96, 12544, 16, 16, false},
		// A convolution's input read in place streams its channels
		// (kb), not the im2col rows (k): below cachedB.
		{256, 848, 1152, 128, false},
		{256, 848, 1152, 1152, true},
	} {
		byCols, nc := x.gemmSplit(best, c.m, c.n, c.k, c.kb)
		if nc < 2 || byCols != c.byCols {
			t.Errorf("%d×%d×%d, B streamed %d×%d (%s): columns %v, %d chunks; want columns %v", c.m, c.n, c.k, c.kb, c.n, best.name, byCols, nc, c.byCols)
		}
	}
	if _, nc := NewContext(1).gemmSplit(best, 1024, 49, 464, 464); nc != 1 {
		t.Errorf("one thread: %d chunks", nc)
	}
}

// TestJudge: soloRuns held runs in a row whose helpers were absent in at
// least one call in soloShare (of soloMinCalls or more) make the next
// Holds solo for period·2^(streak−soloRuns), up to soloMaxStreak − 1
// doublings; a run with its helpers present resets the streak; a short
// run changes nothing.
func TestJudge(t *testing.T) {
	now := time.Unix(1000, 0)
	tm := &team{period: 100 * time.Millisecond}
	until := func() time.Duration { return time.Duration(tm.soloUntil.Load() - now.UnixNano()) }
	tm.judge(soloMinCalls-1, soloMinCalls-1, now)
	if tm.soloUntil.Load() != 0 || tm.streak.Load() != 0 {
		t.Fatalf("%d calls, all absent: solo until %v, streak %d; want no change", soloMinCalls-1, until(), tm.streak.Load())
	}
	for range soloRuns + 1 {
		tm.judge(10*soloShare, 9, now)
	}
	if tm.soloUntil.Load() != 0 || tm.streak.Load() != 0 {
		t.Fatalf("9 of %d calls absent, %d times: solo until %v, streak %d; want not solo", 10*soloShare, soloRuns+1, until(), tm.streak.Load())
	}
	for i := 1; i < soloRuns; i++ {
		tm.judge(10*soloShare, 10, now)
		if tm.soloUntil.Load() != 0 || tm.streak.Load() != int32(i) {
			t.Fatalf("%d absent runs: solo until %v, streak %d; want not solo, streak %d", i, until(), tm.streak.Load(), i)
		}
	}
	for i, want := range []time.Duration{100, 200, 400, 800, 1600, 1600} {
		tm.judge(10*soloShare, 10, now)
		if got := until(); got != want*time.Millisecond {
			t.Fatalf("absent run %d: solo until now+%v (streak %d), want now+%v", soloRuns+i, got, tm.streak.Load(), want*time.Millisecond)
		}
	}
	tm.judge(10*soloShare, 0, now)
	if tm.streak.Load() != 0 {
		t.Fatalf("helpers present: streak %d, want 0", tm.streak.Load())
	}
	tm.soloUntil.Store(0)
	for range soloRuns - 1 {
		tm.judge(10*soloShare, 10, now)
	}
	if tm.soloUntil.Load() != 0 {
		t.Fatalf("%d absent runs after a present one: solo until now+%v, want not solo", soloRuns-1, until())
	}
	tm.judge(10*soloShare, 10, now)
	if got := until(); got != 100*time.Millisecond {
		t.Fatalf("%d absent runs after a present one: solo until now+%v, want now+100ms", soloRuns, got)
	}
}

// TestSoloHold: a Context whose helper, once awake, ran none of soloRuns
// held runs' chunks (GOMAXPROCS 1: the caller runs them all) makes its next
// Hold solo: its calls run every chunk on the caller (none handed to the
// helper), with the same chunks, and the profile counts it; once the
// period is over, a Hold hands calls to the helper again.
func TestSoloHold(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	x := NewContext(2)
	defer x.Close()
	prof := new(ParallelProfile) // not started: it counts the solo Holds anyway
	x.SetProfile(prof)
	tm := x.getTeam()
	tm.period = time.Hour
	sum := func(d time.Duration) int64 {
		var s atomic.Int64
		x.parallel(4, func(i int) {
			spinFor(d)
			s.Add(int64(1) << (8 * i))
		})
		return s.Load()
	}
	const all = 1 | 1<<8 | 1<<16 | 1<<24
	release := x.Hold()
	// The helper wakes up and runs a chunk (on a loaded machine it may
	// take a while).
	for i := 0; !tm.awake.Load(); i++ {
		if i == 1000 {
			t.Fatal("the helper ran no chunk of 1000 calls")
		}
		sum(time.Millisecond)
	}
	runtime.GOMAXPROCS(1)
	for run := range soloRuns {
		if run > 0 {
			release = x.Hold()
			tm.awake.Store(true) // (the helper cannot run a chunk now)
		}
		for range 2 * soloMinCalls {
			if s := sum(2 * soloCall); s != all {
				t.Fatalf("held: chunks summed %#x, want %#x", s, all)
			}
		}
		release()
	}
	if tm.soloUntil.Load() <= time.Now().UnixNano() {
		t.Fatalf("helper absent from every call: not solo (streak %d)", tm.streak.Load())
	}
	runtime.GOMAXPROCS(2)
	calls := x.Calls()
	if c := x.cut(); c != 2 {
		t.Fatalf("before the solo hold: work cut for %d threads, want 2", c)
	}
	release = x.Hold()
	for range soloMinCalls {
		if s := sum(0); s != all {
			t.Fatalf("solo: chunks summed %#x, want %#x", s, all)
		}
	}
	// A solo run is cut as a one-thread run is.
	if c, _ := x.chunks(64*minWork, 64); x.cut() != 1 || c != 1 {
		t.Fatalf("solo: work cut for %d threads, into %d chunks; want 1, 1", x.cut(), c)
	}
	release()
	if c, _ := x.chunks(64*minWork, 64); x.cut() != 2 || c < 2 {
		t.Fatalf("after the solo hold: work cut for %d threads, into %d chunks; want 2, ≥ 2", x.cut(), c)
	}
	if x.Calls() != calls || tm.held.Load() != 0 || tm.solo.Load() != 0 || prof.SoloHolds() != 1 {
		t.Fatalf("solo hold: %d calls handed to the helper, held %d, solo %d, %d solo Holds counted; want 0, 0, 0, 1", x.Calls()-calls, tm.held.Load(), tm.solo.Load(), prof.SoloHolds())
	}
	tm.soloUntil.Store(time.Now().UnixNano()) // the period is over
	release = x.Hold()
	if tm.held.Load() != 1 {
		t.Fatalf("after the period: held %d, want 1", tm.held.Load())
	}
	sum(0)
	release()
	if x.Calls() != calls+1 || prof.SoloHolds() != 1 {
		t.Fatalf("after the period: %d calls handed to the helper, %d solo Holds counted; want 1, 1", x.Calls()-calls, prof.SoloHolds())
	}
}

// TestGemmSplitK: products whose k is at least twice C's shorter side
// (beyond one k-block) run in two halves of k (splitsK), their transposes
// too; the halves give the same bits on 1 to 4 threads, with a bias, a
// ReLU or ReLU6, an epilogue and beta ≠ 0, and C within rounding of a
// float64 product. kBlock cuts a k up to 4·blockK into two blocks, a
// longer one into an even count of near-equal blocks of at most blockK.
func TestGemmSplitK(t *testing.T) {
	for _, c := range []struct {
		m, n, k int
		want    bool
	}{
		{128, 196, 992, true}, // densenet121's bottlenecks at 14²
		{196, 128, 992, true}, // its transposed form
		{96, 196, 576, true},  // a projection after a depthwise step
		{1, 4096, 1024, true}, // a GEMV
		{128, 784, 256, false},
		{128, 729, 288, false}, // squeezenet1_0's expand 3×3 at 27²: k < 3m
		{96, 3000, 288, true},
		{256, 300, 480, false},
		{8, 8, 1024, false}, // too small for two calls
	} {
		if got := splitsK(c.m, c.n, c.k); got != c.want {
			t.Errorf("splitsK(%d, %d, %d) = %v, want %v", c.m, c.n, c.k, got, c.want)
		}
	}
	for k := 1; k <= 5000; k++ {
		kb := kBlock(k)
		nb := (k + kb - 1) / kb
		if k <= blockK && kb != k || k > blockK && k <= 4*blockK && (nb != 2 || kb > 2*blockK) || k > 4*blockK && kb > blockK || k > blockK && (nb%2 != 0 || kb%8 != 0 || (nb-1)*kb >= k) {
			t.Fatalf("kBlock(%d) = %d (%d blocks)", k, kb, nb)
		}
	}
	r := rand.New(rand.NewPCG(46, 1))
	for _, c := range []struct {
		m, n, k   int
		bias      bool
		act       int // 0 none, 1 ReLU, 2 ReLU6
		epi, beta bool
		pad       int // C's rows are n+pad apart (the fold by column ranges)
	}{
		{m: 128, n: 196, k: 992, bias: true, act: 1},
		{m: 96, n: 197, k: 576, bias: true, epi: true},
		{m: 40, n: 3000, k: 300, act: 2},
		{m: 300, n: 77, k: 520, beta: true},
		{m: 1, n: 4096, k: 1024},
		{m: 33, n: 2025, k: 600, bias: true, act: 1, epi: true},
		// More than two k-blocks: the second half in a scratch matrix on
		// one thread too.
		{m: 128, n: 196, k: 1152, bias: true, act: 1},
		{m: 64, n: 500, k: 2100, bias: true, epi: true},
		{m: 70, n: 300, k: 1500, beta: true, act: 2},
		{m: 128, n: 196, k: 992, bias: true, act: 1, epi: true, pad: 5},
		{m: 70, n: 300, k: 1500, beta: true, act: 2, pad: 16},
	} {
		if !splitsK(c.m, c.n, c.k) {
			t.Fatalf("%+v: not split by k", c)
		}
		ldc := c.n + c.pad
		a, b, c0 := randSlice(r, c.m*c.k), randSlice(r, c.k*c.n), randSlice(r, c.m*ldc)
		pa, err := PackA(false, c.m, c.k, 1, a, c.k)
		if err != nil {
			t.Fatal(err)
		}
		var ref []float32
		for _, th := range []int{1, 2, 3, 4} {
			x := NewContext(th)
			y := append([]float32{}, c0...)
			fin := &finish{relu: c.act != 0, six: c.act == 2}
			if c.bias {
				fin.bias = c0[:c.m]
			}
			if c.epi {
				fin.epi = func(off, n int) {
					for i := off; i < off+n; i++ {
						y[i] = y[i]*0.5 + 1
					}
				}
			}
			beta := float32(0)
			if c.beta {
				beta = 0.75
			}
			x.gemm(best, c.m, c.n, c.k, 1, operand{packed: pa}, operand{s: b, ld: c.n}, beta, y, ldc, fin)
			x.Close()
			if ref == nil {
				ref = y
				for i := 0; i < c.m; i++ {
					for j := 0; j < c.n; j++ {
						var v float64
						switch {
						case c.bias:
							v = float64(c0[i])
						case c.beta:
							v = 0.75 * float64(c0[i*ldc+j])
						}
						for p := 0; p < c.k; p++ {
							v += float64(a[i*c.k+p]) * float64(b[p*c.n+j])
						}
						if c.act != 0 {
							v = max(v, 0)
						}
						if c.act == 2 {
							v = min(v, 6)
						}
						if c.epi {
							v = v*0.5 + 1
						}
						if got := float64(y[i*ldc+j]); math.Abs(got-v) > 1e-4*(1+math.Abs(v))*math.Sqrt(float64(c.k)) {
							t.Fatalf("%+v: C[%d,%d] = %v, float64 product %v", c, i, j, got, v)
						}
					}
					for j := c.n; j < ldc; j++ {
						if y[i*ldc+j] != c0[i*ldc+j] {
							t.Fatalf("%+v: C[%d,%d], past the n columns, changed", c, i, j)
						}
					}
				}
				continue
			}
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%+v: %d threads differ from 1 at %d: %g vs %g", c, th, i, y[i], ref[i])
				}
			}
		}
	}
}
