//go:build cgo

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/onnxconv/onnxconv/bench"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/executor/kernels"
	"github.com/onnxconv/onnxconv/runtimes/ort"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// parseThreadList parses --scaling: thread counts separated by commas.
func parseThreadList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--scaling %q: want thread counts >= 1 separated by commas", s)
		}
		out = append(out, n)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("--scaling %q: want at least two thread counts", s)
	}
	return out, nil
}

// scalingRow is one model on one thread count.
type scalingRow struct {
	threads       int
	p50, min, cpu time.Duration
	runsPerSec    float64
	// critical is the critical path of a run and serial the caller's
	// thread CPU time outside parallel kernel calls (profiled runs, see
	// kernels.ParallelProfile); zero where thread CPU time is unknown.
	critical, serial time.Duration
	// sync: ParallelProfile.Sync (zero on one thread); syncRun the
	// part of critical that is synchronization.
	syncCaller, syncHelper, syncEnd, syncRun time.Duration
	// imbalance: ParallelProfile.Imbalance per run.
	imbalance time.Duration
	// ortP50, ortMin, ortCPU: ONNX Runtime alone with as many intra-op
	// threads (zero without ONNX Runtime).
	ortP50, ortMin, ortCPU time.Duration
	// acct: where a profiled run's wall and CPU time go.
	acct account
	// ceiling: the machine's ceiling at threads (ceiling.go), a turn
	// of its probe after each round of the timed runs; 1 on one thread.
	ceiling float64
	// solo: the timed runs that were solo (kernels.ParallelProfile.SoloHolds:
	// the kernel threads were absent in the runs before).
	solo int
	// inlineP50, inlineMin (--inline, counts above one): the same plan
	// with every chunk on the caller (kernels.ParallelProfile.SetInline,
	// not started), timed in the same rounds; zero otherwise.
	inlineP50, inlineMin time.Duration
	// steps (--steps, counts above one): the plan's steps' median wall
	// times at one thread, this count and inline.
	steps []stepRow
}

// inlineRatios (steps.go) of the row's p50s against one's (the first
// count's): the split and the efficiency, 0 without --inline. The p50
// speed-up over one thread is threads × efficiency / split.
func (r scalingRow) inlineRatios(one scalingRow) (split, eff float64) {
	return inlineRatios(one.p50, r.p50, r.inlineP50, r.threads)
}

// account is where a profiled run's time goes, per run: its process CPU
// time split into the caller's serial time, the chunks' thread CPU time,
// the callers' waits for helpers' last chunks, the helpers' polling, the
// Go runtime's GC (an estimate: runtime/metrics), and the helpers'
// wake-ups from parked. The wall side is the critical path's (serial,
// chunks / threads, imbalance, sync) beside the p50.
//
// The threads' own CPU times (Linux: /proc/self/task/*/schedstat) split
// the process's further: the caller's thread (serial, its chunks, its
// waits, the rest of its time in the calls: publishing a job, the
// profile's bookkeeping), the threads that ran helpers' chunks (their
// chunks, their polling, the rest: claiming, the scheduler, GC work
// that ran there) and the process's other threads (sysmon, the GC's
// workers, idle Ms looking for work).
type account struct {
	cpu, chunks, callerChunks, wait, spin, gc time.Duration
	callerThread, helperThreads, otherThreads time.Duration
	gcCycles, wakes, blocked                  float64
	wakeLag                                   time.Duration // mean per wake-up
	blockedLag                                time.Duration // mean per blocked wait
}

// callerRest is the caller's thread CPU time in the calls outside its
// chunks and waits.
func (a account) callerRest(serial time.Duration) time.Duration {
	return a.callerThread - serial - a.callerChunks - a.wait
}

// helperRest is the helpers' threads' CPU time outside their chunks and
// polling.
func (a account) helperRest() time.Duration {
	return a.helperThreads - (a.chunks - a.callerChunks) - a.spin
}

// runScaling times the executor of each model with each thread count of
// counts, in one process: one Executor per count, the counts taking turns
// run by run (GOMAXPROCS set to the count before each run), so that a
// change in the machine's load hits every count alike. It checks the
// outputs against the stored ones and that every count gives the same
// bits, and prints runs/s, p50, min and CPU time per run with the
// speed-up over the first count, and the machine's ceiling at each count
// (ceiling.go: a turn of its probe after each round of the timed runs,
// and nine turns before and after all the models). Then it profiles as many runs of each
// count for their critical path (criticalPaths): the wall time with a CPU
// for each thread and no other load, and its serial part — the parallel
// structure, measurable on a busy machine too. The critical path counts
// each parallel call's synchronization (the least delays seen, printed
// as "sync µs": the caller's before its first chunk, a helper's before
// its first, and the caller's in seeing a helper's last chunk end) and
// takes the clock's own cost out of each chunk (kernels.ParallelProfile).
// Unless --no-ort, it then times ONNX Runtime alone with each count
// (scaleORT): ONNX Runtime's own speed-up.
func runScaling(cfg config, counts []int) error {
	dirs, err := modelDirs(cfg.models, cfg.only)
	if err != nil {
		return err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	fmt.Printf("executor scaling: threads %v, SGEMM kernel %s, %d CPUs, %d reps per count (alternating), load average %s\n",
		counts, kernels.KernelName(), runtime.NumCPU(), cfg.reps, bench.LoadAverage())
	if err := printCeilings(counts, "before"); err != nil {
		return err
	}
	var rt *ort.Runtime
	if !cfg.noORT {
		if rt, err = ort.OpenDefault(1); err != nil {
			return fmt.Errorf("opening ONNX Runtime (--no-ort to time the executor only): %w", err)
		}
		defer rt.Close()
		fmt.Printf("ONNX Runtime %s alone too, one session per thread count, after the executor's runs\n", rt.Version())
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
	writeScalingHeader(tw, rt != nil, cfg.inline)
	failed := false
	// Per count after the first: the models' p50 and critical-path
	// speed-ups, for their geometric means, and ONNX Runtime's p50 ones.
	sp50 := make([][]float64, len(counts))
	spCrit := make([][]float64, len(counts))
	spORT := make([][]float64, len(counts))
	ceil := make([][]float64, len(counts))
	split := make([][]float64, len(counts))
	eff := make([][]float64, len(counts))
	type modelRows struct {
		model string
		rows  []scalingRow
	}
	var accts []modelRows
	for _, d := range dirs {
		rows, err := scaleModel(cfg, d, counts)
		if err == nil && rt != nil {
			err = scaleORT(cfg, rt, d, rows)
		}
		for _, r := range rows {
			if r.solo > 0 {
				fmt.Fprintf(os.Stderr, "%s: %d threads: %d of %d timed runs were solo (every chunk on the caller: the kernel threads had been absent, other work had the cores; docs/speed.md \"two threads on a busy machine\")\n",
					filepath.Base(d), r.threads, r.solo, cfg.reps)
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(d), err)
			failed = true
			continue
		}
		for i, r := range rows {
			sp50[i] = append(sp50[i], float64(rows[0].p50)/float64(r.p50))
			if r.critical > 0 {
				spCrit[i] = append(spCrit[i], float64(rows[0].critical)/float64(r.critical))
			}
			if r.ortP50 > 0 {
				spORT[i] = append(spORT[i], float64(rows[0].ortP50)/float64(r.ortP50))
			}
			ceil[i] = append(ceil[i], r.ceiling)
			if r.inlineP50 > 0 {
				sp, ef := r.inlineRatios(rows[0])
				split[i], eff[i] = append(split[i], sp), append(eff[i], ef)
			}
		}
		writeScalingRows(tw, filepath.Base(d), rows, rt != nil, cfg.inline)
		accts = append(accts, modelRows{filepath.Base(d), rows})
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(accts) > 0 {
		fmt.Println("\nwhere a run's time goes (profiled runs, ms per run): wall = serial + chunks/threads + imbalance + sync + other;")
		fmt.Println("CPU = caller thread (serial + its chunks + wait + rest) + helper threads (their chunks + spin + rest) + other threads; GC: runtime/metrics' estimate, in any of them")
		writeAccountHeader(tw)
		for _, a := range accts {
			writeAccountRows(tw, a.model, a.rows)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if cfg.steps > 0 {
		fmt.Println("\nwhere the threads' wall time goes, step by step (--steps; split = inline / 1 thread, efficiency = inline / threads / the count's time)")
		for _, a := range accts {
			for _, r := range a.rows {
				if len(r.steps) > 0 {
					writeStepRows(tw, a.model, r.threads, r.steps, cfg.steps)
				}
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for i := 1; i < len(counts); i++ {
		fmt.Printf("%d threads: geometric mean speed-up over %d: p50 %.2f, critical path %.2f",
			counts[i], counts[0], bench.GeoMean(sp50[i]), bench.GeoMean(spCrit[i]))
		if len(spORT[i]) > 0 {
			fmt.Printf("; ONNX Runtime p50 %.2f", bench.GeoMean(spORT[i]))
		}
		fmt.Printf("; the machine's ceiling during the models' runs %.2f", bench.GeoMean(ceil[i]))
		if len(split[i]) > 0 {
			fmt.Printf("; inline: split %.2f, efficiency %.2f", bench.GeoMean(split[i]), bench.GeoMean(eff[i]))
		}
		fmt.Println()
	}
	fmt.Printf("load average after: %s\n", bench.LoadAverage())
	if err := printCeilings(counts, "after"); err != nil {
		return err
	}
	if failed {
		return fmt.Errorf("some models failed (see above)")
	}
	return nil
}

// writeScalingHeader writes the header of --scaling's table; withORT
// adds ONNX Runtime's columns.
func writeScalingHeader(w io.Writer, withORT, withInline bool) {
	h := "model\tthreads\truns/s\tp50 ms\tmin ms\tCPU ms/run\tspeed-up p50\tspeed-up min\tceiling\tCPU ratio\tcritical ms\tserial ms\tspeed-up critical\tsync ms\tsync µs\timbalance ms\t"
	if withInline {
		h += "inline p50 ms\tsplit\tefficiency\t"
	}
	if withORT {
		h += "ORT p50 ms\tORT min ms\tORT CPU ms/run\tORT speed-up p50\tratio p50\t"
	}
	fmt.Fprintln(w, h)
}

// writeScalingRows writes one model's rows of --scaling's table (the
// speed-ups over rows[0]); withInline adds the inline runs' columns
// (split, efficiency), withORT ONNX Runtime's and the executor's p50 over
// ONNX Runtime's at the same count.
func writeScalingRows(w io.Writer, model string, rows []scalingRow, withORT, withInline bool) {
	ratio := func(a, b time.Duration) float64 {
		if b <= 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	for _, r := range rows {
		crit := 0.0
		if r.critical > 0 {
			crit = ratio(rows[0].critical, r.critical)
		}
		sync := "-"
		if r.threads > 1 {
			sync = fmt.Sprintf("%.1f/%.1f/%.1f", usf(r.syncCaller), usf(r.syncHelper), usf(r.syncEnd))
		}
		fmt.Fprintf(w, "%s\t%d\t%.1f\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%.3f\t%.3f\t%.2f\t%.3f\t%s\t%.3f\t", model, r.threads, r.runsPerSec,
			msf(r.p50), msf(r.min), msf(r.cpu), ratio(rows[0].p50, r.p50), ratio(rows[0].min, r.min), r.ceiling,
			ratio(r.cpu, rows[0].cpu), msf(r.critical), msf(r.serial), crit, msf(r.syncRun), sync, msf(r.imbalance))
		if withInline {
			if r.inlineP50 > 0 {
				sp, ef := r.inlineRatios(rows[0])
				fmt.Fprintf(w, "%.3f\t%.2f\t%.2f\t", msf(r.inlineP50), sp, ef)
			} else {
				fmt.Fprint(w, "-\t-\t-\t")
			}
		}
		if withORT {
			fmt.Fprintf(w, "%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t", msf(r.ortP50), msf(r.ortMin), msf(r.ortCPU),
				ratio(rows[0].ortP50, r.ortP50), ratio(r.p50, r.ortP50))
		}
		fmt.Fprintln(w)
	}
}

// writeAccountHeader writes the header of the account table.
func writeAccountHeader(w io.Writer) {
	fmt.Fprintln(w, "model\tthreads\tp50 ms\tcritical ms\tserial ms\tchunks/threads ms\timbalance ms\tsync ms\twall other ms\tCPU ms\tcaller thr ms\thelper thr ms\tother thr ms\tchunks ms\twait ms\tcaller rest ms\tspin ms\thelper rest ms\tGC ms\tGCs/run\twakes/run\tµs/wake\tblocked/run\tµs/blocked wake\t")
}

// writeAccountRows writes one model's rows of the account table.
func writeAccountRows(w io.Writer, model string, rows []scalingRow) {
	for _, r := range rows {
		a := r.acct
		perThread := a.chunks / time.Duration(max(r.threads, 1))
		fmt.Fprintf(w, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", model, r.threads,
			msf(r.p50), msf(r.critical), msf(r.serial), msf(perThread), msf(r.imbalance), msf(r.syncRun), msf(r.p50-r.critical),
			msf(a.cpu), msf(a.callerThread), msf(a.helperThreads), msf(a.otherThreads), msf(a.chunks), msf(a.wait), msf(a.callerRest(r.serial)),
			msf(a.spin), msf(a.helperRest()), msf(a.gc), a.gcCycles, a.wakes, usf(a.wakeLag), a.blocked, usf(a.blockedLag))
	}
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func usf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

func scaleModel(cfg config, dir string, counts []int) ([]scalingRow, error) {
	_, m, want, err := loadFolder(dir)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	// Executor i < len(counts) runs counts[i] threads; with --inline,
	// executor len(counts)+j runs the plan of counts[of[j]] threads with
	// every chunk on the caller (rows[of[j]].inlineP50).
	procs := slices.Clone(counts)
	var of []int
	if cfg.inline {
		for i, t := range counts {
			if t > 1 {
				procs, of = append(procs, t), append(of, i)
			}
		}
	}
	exs := make([]*executor.Executor, len(procs))
	profs := make([]*kernels.ParallelProfile, len(procs))
	times := make([]*executor.StepTimes, len(procs))
	for i, t := range procs {
		profs[i] = &kernels.ParallelProfile{}
		profs[i].SetInline(i >= len(counts))
		if cfg.steps > 0 {
			times[i] = &executor.StepTimes{}
		}
		if exs[i], err = executor.New(m, executor.Options{Backend: cfg.backend, Threads: t, KernelProfile: profs[i], StepTimes: times[i]}); err != nil {
			return nil, err
		}
		defer exs[i].Close()
	}
	name := func(i int) string {
		if i >= len(counts) {
			return fmt.Sprintf("%d threads inline", procs[i])
		}
		return fmt.Sprintf("%d threads", procs[i])
	}
	sets, err := tensorio.LoadSamples(filepath.Join(dir, "test_data_set_0"), "input", exs[0].Inputs(), false)
	if err != nil {
		return nil, fmt.Errorf("inputs: %w", err)
	}
	if len(sets) != 1 {
		return nil, fmt.Errorf("test_data_set_0 holds %d samples, want 1", len(sets))
	}
	ins := sets[0]
	ctx := context.Background()
	run := func(i int) ([]*canonical.Tensor, error) { return exs[i].Run(ctx, ins) }
	// setProcs sets GOMAXPROCS for count i and runs it once untimed: the
	// change stops the world and leaves the runtime's per-P caches cold,
	// which would show in a sub-millisecond model's timed run.
	setProcs := func(i int) error {
		runtime.GOMAXPROCS(procs[i])
		_, err := run(i)
		return err
	}
	// Warm up; check the outputs, that they are the same bits for every
	// count, and that a plan's replays give its first run's (the build,
	// which runs every convolution in NCHW: docs/architecture.md).
	var first [][]byte
	for i := range procs {
		var outs, built []*canonical.Tensor
		runtime.GOMAXPROCS(procs[i])
		for w := 0; w <= max(cfg.warmup, 1); w++ {
			if outs, err = run(i); err != nil {
				return nil, fmt.Errorf("%s: %w", name(i), err)
			}
			if w == 0 {
				built = outs
			}
		}
		for o, t := range outs {
			b, err := t.Bytes()
			if err != nil {
				return nil, err
			}
			bb, err := built[o].Bytes()
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(b, bb) {
				return nil, fmt.Errorf("output %d on %s: the plan's replays are not bit-identical to its first run", o, name(i))
			}
		}
		if err := compare(outs, want, cfg.rtol, cfg.atol); err != nil {
			return nil, fmt.Errorf("%s: output differs from the stored output: %w", name(i), err)
		}
		for o, t := range outs {
			b, err := t.Bytes()
			if err != nil {
				return nil, err
			}
			if i == 0 {
				first = append(first, b)
			} else if !bytes.Equal(b, first[o]) {
				return nil, fmt.Errorf("output %d on %s is not bit-identical to %d threads", o, name(i), counts[0])
			}
		}
	}
	wall := make([][]time.Duration, len(procs))
	cpu := make([][]time.Duration, len(procs))
	total := make([]time.Duration, len(procs))
	solo := make([]int, len(procs))
	// The machine's ceiling (ceiling.go) at each count, a turn of its
	// probe after each round of the counts' runs: it moves on a shared
	// host, so the model's speed-up is read beside the ceiling of the
	// same minutes.
	probeOne := make([][]time.Duration, len(counts))
	probeAll := make([][]time.Duration, len(counts))
	for r := 0; r < cfg.reps; r++ {
		for k := range procs {
			i := k
			if r%2 == 1 { // alternate the order too
				i = len(procs) - 1 - k
			}
			if err := setProcs(i); err != nil {
				return nil, fmt.Errorf("%s: %w", name(i), err)
			}
			s0 := profs[i].SoloHolds()
			if times[i] != nil {
				times[i].Start()
			}
			c0, t0 := bench.ProcessCPU(), time.Now()
			_, err := run(i)
			d := time.Since(t0)
			if times[i] != nil {
				times[i].Stop()
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name(i), err)
			}
			if profs[i].SoloHolds() != s0 {
				solo[i]++
			}
			wall[i], cpu[i], total[i] = append(wall[i], d), append(cpu[i], bench.ProcessCPU()-c0), total[i]+d
		}
		for i, t := range counts {
			if t <= 1 {
				continue
			}
			d1, dn, err := ceilingTurn(t)
			if err != nil {
				return nil, err
			}
			probeOne[i], probeAll[i] = append(probeOne[i], d1), append(probeAll[i], dn)
		}
	}
	crit, serial, accts, err := criticalPaths(cfg.reps, profs[:len(counts)], setProcs, run)
	if err != nil {
		return nil, err
	}
	rows := make([]scalingRow, len(counts))
	for i, t := range counts {
		w := sorted(wall[i])
		rows[i] = scalingRow{threads: t, p50: w[len(w)/2], min: w[0], cpu: sorted(cpu[i])[len(w)/2],
			runsPerSec: float64(len(w)) / total[i].Seconds(), critical: crit[i], serial: serial[i]}
		rows[i].syncCaller, rows[i].syncHelper, rows[i].syncEnd = profs[i].Sync()
		rows[i].syncRun = profs[i].SyncSpan() / time.Duration(cfg.reps)
		rows[i].imbalance = profs[i].Imbalance() / time.Duration(cfg.reps)
		rows[i].acct = accts[i]
		rows[i].solo = solo[i]
		rows[i].ceiling = 1
		if t > 1 {
			rows[i].ceiling = throughputRatio(probeOne[i], probeAll[i], t)
		}
	}
	for j, i := range of {
		w := sorted(wall[len(counts)+j])
		rows[i].inlineP50, rows[i].inlineMin = w[len(w)/2], w[0]
		if cfg.steps > 0 {
			if rows[i].steps, err = stepRows(times[0].Steps(), times[i].Steps(), times[len(counts)+j].Steps(), counts[i]); err != nil {
				return nil, err
			}
		}
	}
	return rows, nil
}

// criticalPaths runs run(i) reps times for each count i (after
// setProcs(i)), the counts
// taking turns as in the timed runs, on this goroutine locked to its
// thread with profs[i] started, and returns for each count the mean
// critical path of a run and the mean thread CPU time outside parallel
// calls (see kernels.ParallelProfile), and the account of a run's CPU
// time.
func criticalPaths(reps int, profs []*kernels.ParallelProfile, setProcs func(i int) error, run func(i int) ([]*canonical.Tensor, error)) (critical, serial []time.Duration, accts []account, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := len(profs)
	for _, p := range profs {
		p.Reset()
	}
	main := make([]time.Duration, n)
	accts = make([]account, n)
	gcm := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
	gcRead := func() (time.Duration, uint64) {
		metrics.Read(gcm)
		var cpu time.Duration
		if gcm[0].Value.Kind() == metrics.KindFloat64 {
			cpu = time.Duration(gcm[0].Value.Float64() * 1e9)
		}
		var cyc uint64
		if gcm[1].Value.Kind() == metrics.KindUint64 {
			cyc = gcm[1].Value.Uint64()
		}
		return cpu, cyc
	}
	gcCycles := make([]uint64, n)
	tid := gettid()
	// Per count: each thread's CPU time over the profiled runs.
	thr := make([]map[int]time.Duration, n)
	for i := range thr {
		thr[i] = map[int]time.Duration{}
	}
	for r := 0; r < reps; r++ {
		for k := range n {
			i := k
			if r%2 == 1 {
				i = n - 1 - k
			}
			if err := setProcs(i); err != nil {
				return nil, nil, nil, err
			}
			g0, y0 := gcRead()
			t0 := threadTimes()
			p0 := bench.ProcessCPU()
			profs[i].Start()
			c0 := kernels.ThreadCPUTime()
			_, err := run(i)
			profs[i].Stop()
			if err != nil {
				return nil, nil, nil, err
			}
			main[i] += kernels.ThreadCPUTime() - c0
			accts[i].cpu += bench.ProcessCPU() - p0
			for t, d := range threadTimes() {
				thr[i][t] += d - t0[t] // a thread started meanwhile: all its time
			}
			g1, y1 := gcRead()
			accts[i].gc += g1 - g0
			gcCycles[i] += y1 - y0
		}
	}
	critical, serial = make([]time.Duration, n), make([]time.Duration, n)
	for i, p := range profs {
		calls, caller, _, span := p.Totals()
		// Each profiled call reads the thread's CPU time once more
		// outside its caller time (before it and after it): take it out.
		serial[i] = max(main[i]-caller-time.Duration(calls)*p.ClockCost(), 0) / time.Duration(reps)
		critical[i] = serial[i] + span/time.Duration(reps)
		_, _, chunks, _ := p.Totals()
		idle := p.Idle()
		r := time.Duration(reps)
		a := &accts[i]
		a.cpu, a.gc = a.cpu/r, a.gc/r
		a.chunks, a.wait, a.spin = chunks/r, idle.Wait/r, idle.Spin/r
		a.callerChunks = p.CallerChunks() / r
		a.callerThread = main[i] / r
		helpers := map[int]bool{}
		for _, t := range p.HelperThreads() {
			helpers[t] = t != tid
		}
		for t, d := range thr[i] {
			switch {
			case t == tid:
				// (ThreadCPUTime below: reading the other threads'
				// times costs the caller's thread CPU time.)
			case helpers[t]:
				a.helperThreads += d / r
			default:
				a.otherThreads += d / r
			}
		}
		a.gcCycles = float64(gcCycles[i]) / float64(reps)
		a.wakes, a.blocked = float64(idle.Wakes)/float64(reps), float64(idle.Blocked)/float64(reps)
		if idle.Wakes > 0 {
			a.wakeLag = idle.WakeLag / time.Duration(idle.Wakes)
		}
		if idle.Blocked > 0 {
			a.blockedLag = idle.BlockedLag / time.Duration(idle.Blocked)
		}
	}
	return critical, serial, accts, nil
}

func sorted(ds []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}
