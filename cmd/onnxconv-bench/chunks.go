//go:build cgo

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/executor/kernels"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// --chunks N: where the chunks' time goes at N threads. Each model runs
// on one thread, on N threads, and on N threads "inline" (every parallel
// call cut as for N threads, its chunks all run by the caller), the three
// taking turns run by run, with the step breakdown of
// kernels.ParallelProfile. Per plan step, the work on one thread (its
// thread CPU time) is set against the same step's serial time plus its
// chunks' thread CPU time at N threads and inline: inline − one thread is
// what the split itself costs (work every chunk repeats, chunks' fixed
// costs), N threads − inline what running the chunks on several cores at
// once costs (inputs the other core wrote, shared caches and memory).
// Steps are summed by the call site that did most of their chunks' work,
// and by the step's ops. These are thread CPU times, a clock read around
// every chunk: where a read is a costly system call (a VM with page-table
// isolation) the split looks larger than it is; --scaling --inline
// measures the split in wall time (docs/threads.md, "Measuring").

// chunkAgg sums steps: their thread CPU time on one thread, their serial
// time and chunks' time at N threads and inline, and the parallel calls
// and chunks at N threads.
type chunkAgg struct {
	steps                int
	one, ser, ch, sI, cI time.Duration
	calls, chunks        int
}

func (g *chunkAgg) add(one, par, inl kernels.StepCost) {
	g.steps++
	g.one += one.CPU
	g.ser += par.Serial()
	g.ch += par.Chunks
	g.sI += inl.Serial()
	g.cI += inl.Chunks
	g.calls += par.Calls
	for _, s := range par.Sites {
		g.chunks += s.Chunks
	}
}

// dominantSite is the call site with the most chunk time of a step
// ("(serial)" when it made no parallel call).
func dominantSite(s kernels.StepCost) string {
	site, best := "(serial)", time.Duration(-1)
	for k, v := range s.Sites {
		if v.Time > best || v.Time == best && k < site {
			site, best = k, v.Time
		}
	}
	return site
}

// chunkTables prints the breakdown of reps runs: one, par and inl are the
// steps recorded on one thread, on N threads and inline (the same plan).
func chunkTables(w io.Writer, model string, reps int, one, par, inl []kernels.StepCost) error {
	n := len(one)
	if len(par) != n || len(inl) != n {
		return fmt.Errorf("%s: %d, %d and %d steps recorded", model, len(one), len(par), len(inl))
	}
	bySite, byOps := map[string]*chunkAgg{}, map[string]*chunkAgg{}
	var tot chunkAgg
	for k := range n {
		if one[k].Label != par[k].Label || one[k].Label != inl[k].Label {
			return fmt.Errorf("%s: step %d is %q, %q and %q", model, k, one[k].Label, par[k].Label, inl[k].Label)
		}
		for _, e := range []struct {
			m   map[string]*chunkAgg
			key string
		}{{bySite, dominantSite(par[k])}, {byOps, one[k].Label}} {
			if e.m[e.key] == nil {
				e.m[e.key] = &chunkAgg{}
			}
			e.m[e.key].add(one[k], par[k], inl[k])
		}
		tot.add(one[k], par[k], inl[k])
	}
	r := time.Duration(max(reps, 1))
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64((d/r).Nanoseconds())/1e6) }
	pm := func(d time.Duration) string { return fmt.Sprintf("%+.3f", float64((d/r).Nanoseconds())/1e6) }
	table := func(title string, m map[string]*chunkAgg) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		extra := func(g *chunkAgg) time.Duration { return g.ser + g.ch - g.one }
		sort.Slice(keys, func(i, j int) bool {
			a, b := extra(m[keys[i]]), extra(m[keys[j]])
			return a > b || a == b && keys[i] < keys[j]
		})
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\tsteps\t1-thread ms\tserial ms\tchunks ms\textra ms\tsplit ms\tcores ms\tcalls\tchunks\t\n", title)
		row := func(k string, g *chunkAgg) {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t\n", k, g.steps, ms(g.one), ms(g.ser), ms(g.ch),
				pm(extra(g)), pm(g.sI+g.cI-g.one), pm(g.ser+g.ch-g.sI-g.cI), g.calls/reps, g.chunks/reps)
		}
		for _, k := range keys {
			row(k, m[k])
		}
		row("total", &tot)
		tw.Flush()
	}
	fmt.Fprintf(w, "%s: per run, %d runs\n", model, reps)
	table("call site", bySite)
	table("step", byOps)
	return nil
}

func runChunks(cfg config, threads int) error {
	if threads < 2 {
		return fmt.Errorf("--chunks %d: want at least 2 threads", threads)
	}
	dirs, err := modelDirs(cfg.models, cfg.only)
	if err != nil {
		return err
	}
	fmt.Printf("columns: the steps' thread CPU time on one thread; at %d threads their serial time and chunks' time; extra = serial + chunks - one thread, of it split = inline - one thread (every chunk on the caller) and cores = %d threads - inline; calls and chunks per run at %d threads\n", threads, threads, threads)
	for _, dir := range dirs {
		if err := chunksModel(cfg, os.Stdout, dir, threads); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(dir), err)
		}
	}
	return nil
}

func chunksModel(cfg config, w io.Writer, dir string, threads int) error {
	_, m, _, err := loadFolder(dir)
	if err != nil {
		return err
	}
	defer m.Close()
	counts := []int{1, threads, threads}
	exs := make([]*executor.Executor, 3)
	profs := make([]*kernels.ParallelProfile, 3)
	for i, t := range counts {
		profs[i] = &kernels.ParallelProfile{}
		if exs[i], err = executor.New(m, executor.Options{Backend: cfg.backend, Threads: t, KernelProfile: profs[i]}); err != nil {
			return err
		}
		defer exs[i].Close()
		profs[i].SetSteps(true)
		profs[i].SetInline(i == 2)
	}
	sets, err := tensorio.LoadSamples(filepath.Join(dir, "test_data_set_0"), "input", exs[0].Inputs(), false)
	if err != nil {
		return fmt.Errorf("inputs: %w", err)
	}
	if len(sets) != 1 {
		return fmt.Errorf("test_data_set_0 holds %d samples, want 1", len(sets))
	}
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for i := range exs {
		runtime.GOMAXPROCS(counts[i])
		for range cfg.warmup + 1 {
			if _, err := exs[i].Run(ctx, sets[0]); err != nil {
				return err
			}
		}
	}
	for r := range cfg.reps {
		for k := range exs {
			i := k
			if r%2 == 1 {
				i = len(exs) - 1 - k
			}
			// An untimed run after the change of GOMAXPROCS (see
			// scaleModel's setProcs).
			runtime.GOMAXPROCS(counts[i])
			if _, err := exs[i].Run(ctx, sets[0]); err != nil {
				return err
			}
			profs[i].Start()
			_, err := exs[i].Run(ctx, sets[0])
			profs[i].Stop()
			if err != nil {
				return err
			}
		}
	}
	return chunkTables(w, strings.TrimSuffix(filepath.Base(dir), "/"), cfg.reps, profs[0].Steps(), profs[1].Steps(), profs[2].Steps())
}
