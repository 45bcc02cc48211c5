//go:build cgo

package main

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

func TestParseSettle(t *testing.T) {
	for in, want := range map[string]time.Duration{"auto": -1, "": -1, "0": 0, "5ms": 5 * time.Millisecond, " 1.5ms ": 1500 * time.Microsecond} {
		got, err := parseSettle(in)
		if err != nil || got != want {
			t.Errorf("parseSettle(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-1ms", "soon", "5"} {
		if _, err := parseSettle(in); err == nil {
			t.Errorf("parseSettle(%q): no error", in)
		}
	}
}

func TestTailEnd(t *testing.T) {
	ms := time.Millisecond
	// A thread spinning for 3 ms, then the sampler's own few %.
	s := []cpuSample{{0, 0}, {1 * ms, 1 * ms}, {2 * ms, 2 * ms}, {3 * ms, 2900 * time.Microsecond}, {4 * ms, 2950 * time.Microsecond}, {5 * ms, 3 * ms}}
	if got := tailEnd(s, 0.5); got != 3*ms {
		t.Errorf("tailEnd = %v, want 3ms", got)
	}
	// Two threads spinning (2 CPUs), a quiet interval, one more burst:
	// the last burst counts.
	s = []cpuSample{{0, 0}, {1 * ms, 2 * ms}, {2 * ms, 2 * ms}, {3 * ms, 2600 * time.Microsecond}, {4 * ms, 2600 * time.Microsecond}}
	if got := tailEnd(s, 0.5); got != 3*ms {
		t.Errorf("tailEnd = %v, want 3ms", got)
	}
	if got := tailEnd([]cpuSample{{0, 0}, {ms, 10 * time.Microsecond}}, 0.5); got != 0 {
		t.Errorf("tailEnd of a quiet process = %v, want 0", got)
	}
	if got := tailEnd(nil, 0.5); got != 0 {
		t.Errorf("tailEnd(nil) = %v", got)
	}
}

func TestCPUTailQuiet(t *testing.T) {
	// The garbage of the tests before (the probes' buffers) collected
	// first: a collection running in the window is a tail of theirs (a
	// CI run saw a 4.3 ms median), not of the empty run's.
	runtime.GC()
	// A run that leaves no thread behind: (almost) no tail.
	med, most, err := cpuTail(func() error { return nil }, 3, 5*time.Millisecond, 250*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if med > 2*time.Millisecond || most < med {
		t.Errorf("cpuTail of an empty run: median %v, most %v", med, most)
	}
	// A run that leaves a goroutine spinning for 10 ms.
	med, _, err = cpuTail(func() error {
		go func() {
			for t0 := time.Now(); time.Since(t0) < 10*time.Millisecond; {
			}
		}()
		return nil
	}, 3, 20*time.Millisecond, 250*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if med < 5*time.Millisecond {
		t.Logf("cpuTail of a 10 ms spin: median %v (a loaded machine preempts the spinner)", med)
	}
}

func TestSettleFor(t *testing.T) {
	ms := time.Millisecond
	for in, want := range map[time.Duration]time.Duration{0: ms, 100 * time.Microsecond: ms, 30 * ms: 45 * ms, time.Second: 100 * ms} {
		if got := settleFor(in); got != want {
			t.Errorf("settleFor(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestScalingTable(t *testing.T) {
	ms := time.Millisecond
	rows := []scalingRow{
		{threads: 1, p50: 4 * ms, min: 3 * ms, cpu: 4 * ms, runsPerSec: 250, ceiling: 1, critical: 4 * ms, serial: 4 * ms, ortP50: 3 * ms, ortMin: 3 * ms, ortCPU: 3 * ms},
		{threads: 2, p50: 2 * ms, min: 2 * ms, cpu: 5 * ms, runsPerSec: 500, ceiling: 1.875, critical: 2500 * time.Microsecond, serial: ms,
			syncCaller: 500 * time.Nanosecond, syncHelper: 700 * time.Nanosecond, syncEnd: 300 * time.Nanosecond, imbalance: 250 * time.Microsecond, ortP50: 2 * ms, ortMin: 1500 * time.Microsecond, ortCPU: 4 * ms},
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 2, 0, 2, ' ', 0)
	writeScalingHeader(tw, true, false)
	writeScalingRows(tw, "m", rows, true, false)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for _, col := range []string{"ORT p50 ms", "ORT speed-up p50", "ratio p50", "speed-up critical", "ceiling"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("header lacks %q: %s", col, lines[0])
		}
	}
	f := strings.Fields(lines[2])
	// model threads runs/s p50 min CPU sp-p50 sp-min ceiling CPU-ratio critical serial sp-crit sync-ms sync-µs ORT-p50 ORT-min ORT-CPU ORT-sp ratio
	want := []string{"m", "2", "500.0", "2.000", "2.000", "5.000", "2.00", "1.50", "1.88", "1.25", "2.500", "1.000", "1.60", "0.000", "0.5/0.7/0.3", "0.250", "2.000", "1.500", "4.000", "1.50", "1.00"}
	if strings.Join(f, " ") != strings.Join(want, " ") {
		t.Errorf("row\n got %v\nwant %v", f, want)
	}
	// Without ONNX Runtime: no ORT columns.
	b.Reset()
	tw = tabwriter.NewWriter(&b, 2, 0, 2, ' ', 0)
	writeScalingHeader(tw, false, false)
	writeScalingRows(tw, "m", rows[:1], false, false)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "ORT") || len(strings.Fields(strings.Split(b.String(), "\n")[1])) != 16 {
		t.Errorf("without ORT:\n%s", b.String())
	}
	// --inline: the 2-thread plan inline took 5 ms against one thread's
	// 4 (split 1.25) and 2 threads 2 ms of its 5 / 2 (efficiency 1.25);
	// one thread has no inline runs.
	rows[1].inlineP50 = 5 * ms
	b.Reset()
	tw = tabwriter.NewWriter(&b, 2, 0, 2, ' ', 0)
	writeScalingHeader(tw, false, true)
	writeScalingRows(tw, "m", rows, false, true)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	for _, col := range []string{"inline p50 ms", "split", "efficiency"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("header lacks %q: %s", col, lines[0])
		}
	}
	if f := strings.Fields(lines[1]); strings.Join(f[len(f)-3:], " ") != "- - -" {
		t.Errorf("one thread's inline columns %v, want - - -", f[len(f)-3:])
	}
	if f := strings.Fields(lines[2]); strings.Join(f[len(f)-3:], " ") != "5.000 1.25 1.25" {
		t.Errorf("two threads' inline columns %v, want 5.000 1.25 1.25", f[len(f)-3:])
	}
}

// TestAccountTable: the account row splits the wall time (p50 − the
// critical path is "wall other") and the CPU time by thread: the
// caller's less serial, its chunks and its waits is "caller rest", the
// helpers' less their chunks and polling "helper rest".
func TestAccountTable(t *testing.T) {
	ms := time.Millisecond
	r := scalingRow{threads: 2, p50: 6 * ms, critical: 5 * ms, serial: ms, imbalance: ms / 2, syncRun: ms / 4,
		acct: account{cpu: 12 * ms, chunks: 7 * ms, callerChunks: 3 * ms, wait: ms / 2, spin: ms, gc: ms / 4, gcCycles: 0.5, wakes: 2, blocked: 1, wakeLag: 20 * time.Microsecond, blockedLag: 30 * time.Microsecond,
			callerThread: 5 * ms, helperThreads: 6 * ms, otherThreads: ms}}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 2, 0, 2, ' ', 0)
	writeAccountHeader(tw)
	writeAccountRows(tw, "m", []scalingRow{r})
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	// model threads p50 critical serial chunks/threads imbalance sync wall-other
	// CPU caller-thr helper-thr other-thr chunks wait caller-rest spin helper-rest GC GCs wakes µs/wake blocked µs/blocked-wake
	want := []string{"m", "2", "6.000", "5.000", "1.000", "3.500", "0.500", "0.250", "1.000",
		"12.000", "5.000", "6.000", "1.000", "7.000", "0.500", "0.500", "1.000", "1.000", "0.250", "0.50", "2.0", "20.0", "1.0", "30.0"}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != strings.Join(want, " ") {
		t.Errorf("row\n got %v\nwant %v", f, want)
	}
	if h := strings.Fields(lines[0]); len(h) < len(want) {
		t.Errorf("header %q: fewer columns than the row", lines[0])
	}
}

// TestScaleModelInline: --scaling --inline --steps on a fixture: the
// inline executor's outputs are checked like the counts' (the stored
// outputs, the same bits as one thread), and only the count above one
// gets inline times and step rows.
func TestScaleModelInline(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	dir := filepath.Join("..", "..", "fixtures", "models", "resnet_small")
	cfg := config{warmup: 1, reps: 3, rtol: 1e-3, atol: 1e-4, inline: true, steps: 5}
	rows, err := scaleModel(cfg, dir, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].inlineP50 != 0 || rows[1].inlineP50 <= 0 || rows[1].inlineMin > rows[1].inlineP50 {
		t.Fatalf("rows %+v", rows)
	}
	if sp, ef := rows[1].inlineRatios(rows[0]); sp <= 0 || ef <= 0 {
		t.Errorf("split %v, efficiency %v", sp, ef)
	}
	// --steps: every step of the plan, timed on each side.
	if len(rows[0].steps) != 0 || len(rows[1].steps) < 3 {
		t.Fatalf("steps: %d and %d", len(rows[0].steps), len(rows[1].steps))
	}
	for _, s := range rows[1].steps {
		if s.one <= 0 || s.many <= 0 || s.inl <= 0 {
			t.Errorf("step %s: %v / %v / %v", s.label, s.one, s.many, s.inl)
		}
	}
}
