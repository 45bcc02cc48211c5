package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/version"
)

// Options tune Run.
type Options struct {
	// Out is the output folder: OUT/jobs/KEY.json (one record per job),
	// OUT/reports/KEY/ (each job's reports), OUT/plans/ (each shard's job
	// list), OUT/outputs/KEY/ (kept models). Shards may share it or each
	// have their own (Merge reads any number of them).
	Out string
	// Shard is the part to run (zero value: all of it).
	Shard Shard
	// Jobs is how many jobs run at once (0: 1).
	Jobs int
	// Cache is a folder of results shared between runs (""; none).
	Cache string
	// Env is passed to the pipeline (zero: builtinenv.New, the built-in
	// formats in process).
	Env pipeline.Env
	// Plugins is where bench jobs find runtime plugins.
	Plugins plugins.Options
	// BenchCommand, when set, is the onnxconv program (and arguments
	// before `bench`) that bench jobs run in: a process of its own per
	// job, `BenchCommand... bench MODEL --json [--runtime R] ...`, under
	// Plugins' memory limit, with Plugins' folders and limits for the
	// runtime plugin it starts, and killed when the run is canceled
	// (serve sets it to its own executable). Unset, they run in this
	// process.
	BenchCommand []string
	// Command is recorded in the jobs' reports (nil: os.Args).
	Command []string
	// Tool is the version recorded and keyed in the cache (zero: the
	// running build's).
	Tool Tool
	// Progress, when set, is called after each job of the shard (also
	// the ones already done by an earlier run), one call at a time.
	Progress func(Event)
	// Step, when set, is called as each job that runs starts and with
	// each progress line of its pipeline ("verifying …"), one call at a
	// time; with Jobs > 1 the steps of several jobs interleave.
	Step func(Step)
}

// Step is one step of a running job.
type Step struct {
	Job *Job
	// Index is the job's place in the shard (from 1), of Total.
	Index, Total int
	// Line is what the job is doing; Elapsed is how long it has run.
	Line    string
	Elapsed time.Duration
}

// Event is one finished job.
type Event struct {
	Job    *Job
	Record *Record
	// Done of Total jobs of the shard have a record.
	Done, Total int
	// Resumed: the record was made by an earlier run; Cached: it came
	// from the cache.
	Resumed bool
}

// Summary is what Run did.
type Summary struct {
	Shard Shard `json:"shard"`
	// Total is the number of jobs in the manifest, Assigned this shard's.
	Total    int `json:"total"`
	Assigned int `json:"assigned"`
	// Resumed jobs already had a record; Cached ones came from the cache;
	// Executed lists the IDs of the jobs run by this call.
	Resumed  int      `json:"resumed"`
	Cached   int      `json:"cached"`
	Executed []string `json:"executed"`
	// Pass, Fail and Error count the shard's records.
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Error int `json:"error"`
	// DurationMS is the wall time of the call.
	DurationMS float64 `json:"duration_ms"`
}

// Failed tells whether a job of the shard failed.
func (s *Summary) Failed() bool { return s.Fail+s.Error > 0 }

// RunError is a run that could not go on: the output folder or the cache
// cannot be written, or the run was cancelled. The records written so
// far stay, and a later run resumes from them.
type RunError struct {
	Op  string
	Err error
}

func (e *RunError) Error() string { return "batch: " + e.Op + ": " + e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// Plan is a shard's list of jobs, written to OUT/plans/ when it starts,
// so that Merge can tell the jobs a shard did not finish.
type Plan struct {
	Manifest string   `json:"manifest"`
	Shard    string   `json:"shard"`
	Total    int      `json:"total"`
	Jobs     []string `json:"jobs"`
	Tool     Tool     `json:"tool"`
}

// Run runs shard opts.Shard of the manifest's jobs. A job whose record is
// already in opts.Out (with the same cache key) is not run again; one
// found in opts.Cache is copied from it. A job's failure is in its
// record, not in the error: the error is a *RunError (or a
// *ManifestError from expanding the manifest), and the summary is valid
// up to it.
func Run(ctx context.Context, m *Manifest, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.Shard.Count == 0 {
		opts.Shard = Shard{Index: 0, Count: 1}
	}
	if opts.Jobs <= 0 {
		opts.Jobs = 1
	}
	if opts.Tool.Version == "" {
		v := version.Get()
		opts.Tool = Tool{Version: v.Short(), Revision: v.Revision}
	}
	if opts.Out == "" {
		return nil, &RunError{Op: "options", Err: errors.New("give the output folder")}
	}
	if opts.Env == (pipeline.Env{}) {
		opts.Env = builtinenv.New()
	}
	all, err := m.Expand()
	if err != nil {
		return nil, err
	}
	mine := Select(all, opts.Shard)
	sum := &Summary{Shard: opts.Shard, Total: len(all), Assigned: len(mine), Executed: []string{}}
	for _, d := range []string{jobsDir, reportsDir, plansDir, workDir} {
		if err := os.MkdirAll(filepath.Join(opts.Out, d), 0o755); err != nil {
			return sum, &RunError{Op: "output folder", Err: err}
		}
	}
	if err := writePlan(opts, m, len(all), mine); err != nil {
		return sum, err
	}
	host, _ := os.Hostname()
	r := &runner{opts: opts, runID: fmt.Sprintf("%s-%d-%d", host, os.Getpid(), start.UnixNano()), sum: sum, total: len(mine)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < opts.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := r.do(ctx, &mine[i], i+1); err != nil {
					r.fail(err)
					cancel()
				}
			}
		}()
	}
feed:
	for i := range mine {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	sum.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if r.err != nil {
		return sum, r.err
	}
	if err := ctx.Err(); err != nil {
		return sum, &RunError{Op: "cancelled", Err: err}
	}
	return sum, nil
}

// writePlan records the shard's job list.
func writePlan(opts Options, m *Manifest, total int, mine []Job) error {
	p := Plan{Manifest: m.Path, Shard: opts.Shard.String(), Total: total, Jobs: make([]string, len(mine)), Tool: opts.Tool}
	for i, j := range mine {
		p.Jobs[i] = j.ID
	}
	path := filepath.Join(opts.Out, plansDir, fmt.Sprintf("shard-%d-of-%d.json", opts.Shard.Index, opts.Shard.Count))
	if err := canonical.WriteFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	}); err != nil {
		return &RunError{Op: "plan", Err: err}
	}
	return nil
}

// runner is one call of Run.
type runner struct {
	opts  Options
	runID string

	// exclusive lets a bench job run alone: the other jobs hold it for
	// reading while they run, a bench job for writing, so that with
	// --jobs J nothing shares the CPU (or the process's peak memory)
	// with a benchmark.
	exclusive sync.RWMutex

	// stepMu makes the Step calls one at a time.
	stepMu sync.Mutex

	mu    sync.Mutex
	sum   *Summary
	done  int
	total int
	err   error
}

func (r *runner) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// do finishes job index (from 1) of the shard: resumed from its record,
// copied from the cache, or run.
func (r *runner) do(ctx context.Context, j *Job, index int) error {
	if ctx.Err() != nil {
		return nil
	}
	key, modelHash, err := cacheKey(j, r.opts.Tool)
	if err != nil {
		// An unreadable model is the job's error, recorded as such.
		rec := r.newRecord(j, "", "")
		rec.Status, rec.Kind, rec.Message = StatusError, "input", err.Error()
		return r.finish(j, rec, false, false)
	}
	path := recordPath(r.opts.Out, j)
	if old, err := ReadRecord(path); err == nil && old.CacheKey == key {
		return r.finish(j, old, true, false)
	}
	if rec, ok := r.fromCache(j, key, modelHash); ok {
		return r.finish(j, rec, false, true)
	}
	rec := r.newRecord(j, key, modelHash)
	logf := r.stepLog(j, index)
	if j.Action == ActionBench {
		r.exclusive.Lock()
		r.execute(ctx, j, rec, logf)
		r.exclusive.Unlock()
	} else {
		r.exclusive.RLock()
		r.execute(ctx, j, rec, logf)
		r.exclusive.RUnlock()
	}
	if ctx.Err() != nil {
		// Cancelled mid-way: no record, so that the job runs again.
		return nil
	}
	if err := r.toCache(j, rec); err != nil {
		return err
	}
	return r.finish(j, rec, false, false)
}

// stepLog returns the log function of job index's pipeline, which
// reports each line as a Step (nil without opts.Step), and reports the
// job's start.
func (r *runner) stepLog(j *Job, index int) func(string, ...any) {
	if r.opts.Step == nil {
		return nil
	}
	start := time.Now()
	logf := func(format string, args ...any) {
		st := Step{Job: j, Index: index, Total: r.total, Line: fmt.Sprintf(format, args...), Elapsed: time.Since(start)}
		r.stepMu.Lock()
		defer r.stepMu.Unlock()
		r.opts.Step(st)
	}
	logf("started")
	return logf
}

func (r *runner) newRecord(j *Job, key, modelHash string) *Record {
	return &Record{SchemaVersion: RecordSchemaVersion, ID: j.ID, Model: j.Model, Action: j.Action, Opset: j.Opset, MLOpset: j.MLOpset,
		Target: j.Target, ModelSHA256: modelHash, CacheKey: key, Shard: r.opts.Shard.String(), Run: r.runID, Tool: r.opts.Tool,
		Started: time.Now().UTC()}
}

// finish writes a new record and counts it.
func (r *runner) finish(j *Job, rec *Record, resumed, cached bool) error {
	if !resumed {
		if err := writeRecord(recordPath(r.opts.Out, j), rec); err != nil {
			return &RunError{Op: "record", Err: err}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	switch {
	case resumed:
		r.sum.Resumed++
	case cached:
		r.sum.Cached++
	default:
		r.sum.Executed = append(r.sum.Executed, j.ID)
	}
	switch rec.Status {
	case StatusPass:
		r.sum.Pass++
	case StatusFail:
		r.sum.Fail++
	default:
		r.sum.Error++
	}
	if r.opts.Progress != nil {
		r.opts.Progress(Event{Job: j, Record: rec, Done: r.done, Total: r.total, Resumed: resumed})
	}
	return nil
}
