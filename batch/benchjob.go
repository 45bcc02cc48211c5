package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onnxconv/onnxconv/bench"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// BenchSide is one side of a benchmark (the executor, or the runtime
// timed beside it), in milliseconds.
type BenchSide struct {
	Name string `json:"name"`
	// Runs counts the timed runs.
	Runs   int     `json:"runs"`
	MinMS  float64 `json:"min_ms"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	MeanMS float64 `json:"mean_ms"`
	// ThroughputPerS is timed runs per second of wall time.
	ThroughputPerS float64 `json:"throughput_per_s"`
	// CPUMS is the median process CPU time per run (above P50MS when the
	// side used more than one core; 0 for a runtime out of process).
	CPUMS float64 `json:"cpu_ms,omitempty"`
}

// BenchFigures are what a bench job measured (package bench): a record's
// Bench. Speed is recorded, never judged: a bench job passes whenever
// the model runs.
type BenchFigures struct {
	// Reps, Warmup and Threads are the job's settings (Threads 0: all
	// cores).
	Reps    int `json:"reps"`
	Warmup  int `json:"warmup"`
	Threads int `json:"threads"`
	// Executor is the built-in executor's side; LoadMS its set-up and
	// first (compiling) run.
	Executor BenchSide `json:"executor"`
	LoadMS   float64   `json:"load_ms"`
	// PeakRSSBytes is the process's peak resident memory while the
	// executor loaded and ran (0 where the system does not tell).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// Runtime is the side timed beside the executor (bench.runtime), Ratio
	// the executor's p50 over the runtime's, MaxAbsDiff the largest
	// difference between their first outputs.
	Runtime    *BenchSide `json:"runtime,omitempty"`
	Ratio      float64    `json:"ratio,omitempty"`
	MaxAbsDiff *float64   `json:"max_abs_diff,omitempty"`
	// CPUs, Kernel (the executor's SGEMM kernel) and LoadAverage describe
	// the machine when it ran.
	CPUs        int    `json:"cpus"`
	Kernel      string `json:"sgemm_kernel"`
	LoadAverage string `json:"load_average,omitempty"`
}

// bench times the model (onnxconv bench). Bench jobs run alone in the
// process (see runner.exclusive), so that neither the timings nor the
// peak memory include other jobs.
func (r *runner) bench(ctx context.Context, j *Job, rec *Record) {
	b := j.Spec.Bench
	if b == nil {
		rec.Status, rec.Kind, rec.Message = StatusError, "internal", "internal error (please report it): a bench job without settings"
		return
	}
	if len(r.opts.BenchCommand) > 0 {
		r.benchProcess(ctx, j, rec)
		return
	}
	m, err := pipeline.Load(j.File, pipeline.LoadOptions{Importers: r.opts.Env.Importers})
	if err != nil {
		setError(rec, err)
		return
	}
	defer m.Close()
	rec.Figures.OpsetBefore, rec.Figures.IRBefore = m.Opset(""), m.IRVersion
	var other bench.Runner
	side := ""
	if b.Runtime != "" {
		host, err := plugins.NewHost(ctx, r.opts.Plugins)
		if err != nil {
			setBenchError(rec, fmt.Errorf("bench: finding runtime plugins: %w", err))
			return
		}
		rr, err := host.OpenRuntime(ctx, b.Runtime, j.File, graphInputNames(m), plugins.RunOptions{Threads: b.Threads})
		if err != nil {
			setBenchError(rec, fmt.Errorf("bench: %w", err))
			return
		}
		// One plugin process serves every run of the model.
		defer rr.Close()
		other, side = rr, b.Runtime+" (plugin)"
	}
	inputs := j.Inputs
	if inputs == "" {
		inputs = j.Reference
	}
	res, err := bench.Run(ctx, j.File, m, bench.Options{Inputs: inputs, Threads: b.Threads, Warmup: b.Warmup, Reps: b.Reps, Runtime: side}, other)
	if err != nil {
		setBenchError(rec, err)
		return
	}
	r.benchDone(j, rec, res)
}

// benchDone records a benchmark that ran.
func (r *runner) benchDone(j *Job, rec *Record, res *bench.Result) {
	rec.Bench = benchFigures(j.Spec.Bench, res)
	rec.Status = StatusPass
	if err := r.writeBenchReports(j, rec, res); err != nil {
		rec.Notes = append(rec.Notes, "the bench reports could not be written: "+err.Error())
	}
}

// benchProcess times the model in a process of its own (Options.
// BenchCommand): `onnxconv bench MODEL --json [--runtime R]` under the
// plugins' memory limit and with their folders (plugins.RunProcess), so
// that the executor and the runtime plugin run there, and a model that
// takes too much memory ends that process, not this one. A failure the
// process classified (its {"error": …} answer) is recorded as that class;
// one it could not tell (it crashed, ran out of memory, was killed) as a
// model that does not run.
func (r *runner) benchProcess(ctx context.Context, j *Job, rec *Record) {
	b := j.Spec.Bench
	argv := append(slices.Clone(r.opts.BenchCommand), "bench", j.File, "--json",
		"--threads", strconv.Itoa(b.Threads), "--warmup", strconv.Itoa(b.Warmup), "--reps", strconv.Itoa(b.Reps))
	inputs := j.Inputs
	if inputs == "" {
		inputs = j.Reference
	}
	if inputs != "" {
		argv = append(argv, "--inputs", inputs)
	}
	if b.Runtime != "" {
		argv = append(argv, "--runtime", b.Runtime)
	}
	out, err := plugins.RunProcess(ctx, r.opts.Plugins, "onnxconv bench", "bench", j.Model, argv)
	if err != nil {
		var answer struct {
			Error *BenchError `json:"error"`
		}
		if json.Unmarshal(out, &answer) == nil && answer.Error.valid() {
			err = answer.Error
		} else {
			var pe *plugins.PluginError
			if errors.As(err, &pe) {
				// The model's path on this machine stays out of the record.
				pe.Path = ""
			}
			err = &BenchError{Status: StatusFail, Kind: "does_not_run", Message: err.Error()}
		}
		setBenchError(rec, err)
		rec.Message = strings.ReplaceAll(rec.Message, j.File, j.Model)
		return
	}
	var res []*bench.Result
	if err := json.Unmarshal(out, &res); err != nil || len(res) != 1 {
		rec.Status, rec.Kind = StatusError, "internal"
		rec.Message = fmt.Sprintf("internal error (please report it): onnxconv bench printed no result for %s (%v)", j.Model, err)
		return
	}
	rec.Figures.OpsetBefore, rec.Figures.IRBefore = res[0].Opset, res[0].IRVersion
	r.benchDone(j, rec, res[0])
}

// writeBenchReports writes the job's reports: the result as `onnxconv
// bench` (bench.txt) and `onnxconv bench --json` (bench.json) print it.
func (r *runner) writeBenchReports(j *Job, rec *Record, res *bench.Result) error {
	dir := filepath.Join(r.opts.Out, reportsDir, j.Key())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The report names the model as the manifest does, not by the
	// absolute path of this machine.
	shown := *res
	shown.Model = j.Model
	writers := map[string]func(io.Writer) error{
		"bench.txt": func(w io.Writer) error { return bench.WriteTable(w, []*bench.Result{&shown}) },
		"bench.json": func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(&shown)
		},
	}
	for _, name := range []string{"bench.txt", "bench.json"} {
		if err := canonical.WriteFileAtomic(filepath.Join(dir, name), writers[name]); err != nil {
			return err
		}
		rec.Reports = append(rec.Reports, filepath.ToSlash(filepath.Join(reportsDir, j.Key(), name)))
	}
	return nil
}

func benchFigures(b *BenchSpec, res *bench.Result) *BenchFigures {
	f := &BenchFigures{Reps: b.Reps, Warmup: b.Warmup, Threads: b.Threads, Executor: benchSide(&res.Executor),
		LoadMS: msOf(res.Executor.Load), PeakRSSBytes: res.PeakRSS, CPUs: res.CPUs, Kernel: res.Kernel, LoadAverage: res.LoadAvg}
	if res.Other != nil {
		s := benchSide(res.Other)
		f.Runtime, f.Ratio = &s, res.Ratio
		d := res.MaxAbsDiff
		f.MaxAbsDiff = &d
	}
	return f
}

func benchSide(s *bench.Stats) BenchSide {
	return BenchSide{Name: s.Name, Runs: s.Runs, MinMS: msOf(s.Min), P50MS: msOf(s.P50), P90MS: msOf(s.P90), P99MS: msOf(s.P99),
		MeanMS: msOf(s.Mean), ThroughputPerS: s.ThroughputRPS, CPUMS: msOf(s.CPU)}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// graphInputNames are the graph inputs that are not initializers, in
// order (what a runtime plugin is fed).
func graphInputNames(m *canonical.Model) []string {
	init := map[*canonical.Value]bool{}
	for _, v := range m.Graph.Initializers {
		init[v] = true
	}
	var names []string
	for _, v := range m.Graph.Inputs {
		if !init[v] {
			names = append(names, v.Name)
		}
	}
	return names
}

// BenchError is a failed benchmark as the process that ran it classified
// it (Status and Kind as a record's): `onnxconv bench --json` prints it
// as {"error": …} when it cannot time a model, so that a bench job run in
// a process of its own (Options.BenchCommand) is recorded as it would
// have been in this one.
type BenchError struct {
	Status  Status `json:"status"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (e *BenchError) Error() string { return e.Message }

// valid tells whether e is a failure class a bench job records (an
// answer from another process is data to check).
func (e *BenchError) valid() bool {
	if e == nil || e.Message == "" {
		return false
	}
	switch e.Kind {
	case "does_not_run", "not_equivalent", "blocked", "unsupported", "invalid":
		return e.Status == StatusFail
	case "usage", "input", "runtime":
		return e.Status == StatusError
	}
	return false
}

// BenchFailure classifies err, the failure of a benchmark (loading the
// model, opening the runtime, timing it), as a bench job records it.
func BenchFailure(err error) *BenchError {
	var rec Record
	setBenchError(&rec, err)
	return &BenchError{Status: rec.Status, Kind: rec.Kind, Message: rec.Message}
}

// setBenchError classifies a failed benchmark into rec. A model that
// does not run (on the executor, or refused by the runtime) fails the
// job with kind does_not_run; bad settings, inputs that cannot be read,
// and a runtime plugin that is missing or cannot be started are errors.
// A model that cannot be loaded is classified as the pipeline does
// (setError); a failure classified by the process that ran the benchmark
// (*BenchError) keeps its class.
func setBenchError(rec *Record, err error) {
	var be *BenchError
	if errors.As(err, &be) {
		rec.Status, rec.Kind, rec.Message = be.Status, be.Kind, be.Message
		return
	}
	if pipeline.KindOf(err) != 0 {
		setError(rec, err)
		return
	}
	rec.Message = err.Error()
	var ue *bench.UsageError
	var pe *plugins.PluginError
	var missing *tensorio.MissingTensorError
	var extra *tensorio.ExtraTensorError
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &ue), errors.Is(err, plugins.ErrNotFound), errors.Is(err, plugins.ErrUnsupported):
		rec.Status, rec.Kind = StatusError, "usage"
	case errors.As(err, &pe) && !errors.Is(err, plugins.ErrFailed):
		rec.Status, rec.Kind = StatusError, "runtime"
	case errors.As(err, &missing), errors.As(err, &extra), errors.As(err, &pathErr):
		rec.Status, rec.Kind = StatusError, "input"
	default:
		rec.Status, rec.Kind = StatusFail, "does_not_run"
	}
}
