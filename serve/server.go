// Package serve runs onnxconv jobs behind an HTTP API: a client uploads a
// model (or a folder packed as zip or tar) with a spec in the vocabulary
// of a batch manifest entry; the job is kept in an embedded store (bbolt),
// or in PostgreSQL shared by replicas (--store postgres://…, each job
// handed to one replica under a lease), and run by a bounded pool of
// workers through package batch (so through
// package pipeline, with imports in plugin processes under memory and time
// limits) into the job's folder; its record, reports and converted model
// are served back. The content-hash cache is batch's, shared with
// `onnxconv batch` runs that name the same folder.
//
// serve converts nothing itself: it decides what runs when, keeps the
// state, and guards the door (upload limits, a bounded queue, timeouts,
// bearer tokens, an audit line per request).
package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onnxconv/onnxconv/batch"
	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/verify"
)

// Config is a server's settings. The zero values of the limits take the
// defaults below.
type Config struct {
	// Data is the folder of everything the server keeps: jobs.db (the
	// store), jobs/ID/ (each job's upload and results), cache/ (batch's
	// content-hash cache). Nothing is read or written outside it.
	// Replicas on one Store share it (a shared file system).
	Data string
	// Store is where the jobs are kept: "" for the bbolt file
	// DATA/jobs.db (one server), or a postgres:// URL that replicas
	// share: each queued job goes to one replica, which holds it under
	// a lease it renews; when a replica dies, another takes its jobs
	// once their lease runs out, and they resume from their records.
	Store string
	// Replica names this server in the store and, as a job's
	// "replica", to clients: an opaque ID (default: 12 random hex
	// digits, told with the host name by the command's start line), so
	// that no host name reaches a client. Lease is how long a replica
	// holds a job without renewing it (default 30 s; renewed every
	// third).
	Replica string
	Lease   time.Duration
	// Cache is the cache folder ("": Data/cache); point it at a batch
	// run's --cache to share results.
	Cache string
	// Workers run jobs at once (default 2).
	Workers int
	// MaxUpload bounds an upload's body in bytes (default 1 GiB): more
	// is 413.
	MaxUpload int64
	// MaxUnpacked bounds what an uploaded archive unpacks to (default
	// 4 GiB) and MaxFiles its files (default 10,000).
	MaxUnpacked int64
	MaxFiles    int
	// QueueSize bounds the jobs waiting to run (default 64): more is 429
	// with Retry-After.
	QueueSize int
	// JobTimeout bounds one job (default 30 min).
	JobTimeout time.Duration
	// QuotaJobs bounds one token's jobs queued or running (0: only the
	// queue bounds them): more is 429. QuotaBytes bounds the bytes one
	// token's jobs keep on disk (0: no bound): an upload or archive that
	// would cross it is cut there and refused with 413.
	QuotaJobs  int
	QuotaBytes int64
	// Keep is how long a finished job is kept before the sweep deletes it
	// and its files (default 7 days; negative: forever).
	Keep time.Duration
	// Tokens, when set, are required on every /v1 request
	// (Authorization: Bearer TOKEN).
	Tokens *Tokens
	// WebhookHosts are the host[:port]s a job's completion webhook may
	// name; a spec naming another is refused (400). Empty: no webhooks.
	WebhookHosts []string
	// Env is passed to batch (zero: builtinenv.New, the built-ins in process;
	// the command line passes the Env around its plugin host, so that
	// imports run in plugin processes with limits); Plugins is where
	// bench jobs find runtime plugins.
	Env     pipeline.Env
	Plugins plugins.Options
	// BenchCommand is the onnxconv program bench jobs run in, each in a
	// process of its own under Plugins' memory limit (batch.Options.
	// BenchCommand; nil: in the server's process).
	BenchCommand []string
	// UnpackHook, when set, is called as each archive upload asks for one
	// of the Workers places to unpack in, and again once it holds one:
	// its unpacking starts when that call returns. Tests hold unpacks
	// with it and see how many run at once.
	UnpackHook func(UnpackState)
	// Audit receives one JSON line per request (nil: none).
	Audit io.Writer
	// Version is the tool version the cache keys carry (zero: this
	// build's).
	Tool batch.Tool
}

func (c *Config) defaults() {
	if c.Env == (pipeline.Env{}) {
		c.Env = builtinenv.New()
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.MaxUpload <= 0 {
		c.MaxUpload = 1 << 30
	}
	if c.MaxUnpacked <= 0 {
		c.MaxUnpacked = 4 << 30
	}
	if c.MaxFiles <= 0 {
		c.MaxFiles = 10000
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 64
	}
	if c.JobTimeout <= 0 {
		c.JobTimeout = 30 * time.Minute
	}
	if c.Cache == "" {
		c.Cache = filepath.Join(c.Data, "cache")
	}
	if c.Keep == 0 {
		c.Keep = 7 * 24 * time.Hour
	}
	if c.Replica == "" {
		c.Replica = newID()[:12]
	}
	if c.Lease == 0 {
		c.Lease = 30 * time.Second
	}
}

// UnpackState is what Config.UnpackHook sees: the archives unpacking
// and those waiting for a place (the calling upload among them), and
// whether the call is the upload's start of unpacking (Holding) or of
// waiting.
type UnpackState struct {
	Unpacking, Waiting int
	Holding            bool
}

// Server is a running job service. New opens it; Start runs its workers;
// Handler serves its API; Shutdown stops it so that a restart resumes.
type Server struct {
	cfg     Config
	store   jobStore
	metrics *metrics
	scrub   *scrubber
	// wake tells an idle worker that a job was queued here (replicas
	// find each other's jobs by polling the store).
	wake chan struct{}

	mu      sync.Mutex
	cancels map[string]context.CancelFunc // running jobs
	// unpacks bounds the archives unpacked at once; unpacking and
	// unpackWaiting count them and those waiting (under mu).
	unpacks                  chan struct{}
	unpacking, unpackWaiting int
	// stopping is closed by Shutdown: workers take no new job.
	stopping chan struct{}
	workers  sync.WaitGroup
	webhooks sync.WaitGroup
	ready    bool
}

// New opens the store. A job a previous server of a bbolt store left
// running is queued again; on a shared store, another replica's job is
// taken again once its lease runs out.
func New(cfg Config) (*Server, error) {
	if cfg.Data == "" {
		return nil, errors.New("serve: give the data folder")
	}
	if cfg.Lease < 0 || (cfg.Lease > 0 && cfg.Lease < time.Second) {
		return nil, fmt.Errorf("serve: --lease %s: give at least 1s (a replica renews its lease every third of it)", cfg.Lease)
	}
	cfg.defaults()
	for _, d := range []string{cfg.Data, filepath.Join(cfg.Data, "jobs"), cfg.Cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	scrub, err := newScrubber(cfg.Data, cfg.Cache)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	st, err := openStore(&cfg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s := &Server{cfg: cfg, store: st, metrics: newMetrics(), scrub: scrub, cancels: map[string]context.CancelFunc{}, stopping: make(chan struct{}),
		unpacks: make(chan struct{}, cfg.Workers), wake: make(chan struct{}, cfg.Workers)}
	jobs, err := st.list()
	if err != nil {
		_ = st.close()
		return nil, fmt.Errorf("serve: reading the job store: %w", err)
	}
	known := map[string]bool{}
	queued := 0
	for _, j := range jobs {
		// A submission a crash cut off while it was received: its place
		// is freed and its folder removed (on a shared store, only once
		// older than a request may take: it may be another replica's).
		if j.State == StateReceiving {
			if !st.shared() || time.Since(j.Created) >= receivingTimeout {
				_ = st.remove(j.ID)
			} else {
				known[j.ID] = true
			}
			continue
		}
		known[j.ID] = true
		s.metrics.seen(j)
		if j.State == StateQueued {
			queued++
		}
	}
	// An upload folder of a shared data folder may be another replica's
	// upload in progress: only one older than a request may take is an
	// orphan.
	var age time.Duration
	if st.shared() {
		age = maxRequest
	}
	if err := removeOrphans(filepath.Join(cfg.Data, "jobs"), known, age); err != nil {
		_ = st.close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	s.metrics.queueDepth.Set(float64(queued))
	return s, nil
}

// Replica is the ID this server runs jobs under (a job's "replica").
func (s *Server) Replica() string { return s.cfg.Replica }

// removeOrphans deletes the folders under jobs, older than age, that no
// job of the store owns: uploads cut off by a crash before their job was
// stored.
func removeOrphans(jobs string, known map[string]bool, age time.Duration) error {
	ents, err := os.ReadDir(jobs)
	if err != nil {
		return fmt.Errorf("reading the jobs folder: %w", err)
	}
	for _, e := range ents {
		if known[e.Name()] {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) >= age {
			if err := os.RemoveAll(filepath.Join(jobs, e.Name())); err != nil {
				return fmt.Errorf("removing an orphaned upload: %w", err)
			}
		}
	}
	return nil
}

// Start runs the workers and the retention sweep until ctx ends or
// Shutdown is called.
func (s *Server) Start(ctx context.Context) {
	for range s.cfg.Workers {
		s.workers.Add(1)
		go s.work(ctx)
	}
	// Kept forever, finished jobs stay, but cut-off submissions are
	// still swept.
	period := time.Hour
	if s.cfg.Keep > 0 {
		period = min(s.cfg.Keep/10, time.Hour)
	}
	s.workers.Add(1)
	go s.sweepEvery(ctx, period)
	s.workers.Add(1)
	go s.heartbeat(ctx)
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
}

// Shutdown stops taking jobs, interrupts the running ones (queued again
// in the store with the records they wrote: the next start, or on a
// shared store another replica at once, resumes them where they stopped), waits for the workers and pending
// webhooks (until ctx ends) and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	select {
	case <-s.stopping:
	default:
		close(s.stopping)
	}
	s.ready = false
	interrupted := slices.Collect(maps.Keys(s.cancels))
	for _, cancel := range s.cancels {
		cancel()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.workers.Wait(); s.webhooks.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("serve: shutdown: %w", ctx.Err())
	}
	// Queued again, the interrupted jobs go to another replica at once
	// rather than when their lease runs out (or to the next start).
	for _, id := range interrupted {
		_, _ = s.store.update(id, func(j *Job) error {
			if j.State != StateRunning || j.Replica != s.cfg.Replica {
				return errSkip
			}
			j.State = StateQueued
			return nil
		})
	}
	return s.store.close()
}

// newID returns a random job ID.
func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// jobDir is the folder of job id.
func (s *Server) jobDir(id string) string { return filepath.Join(s.cfg.Data, "jobs", id) }

// work runs queued jobs one at a time: it claims the oldest from the
// store, or waits for a submission here or the next poll.
func (s *Server) work(ctx context.Context) {
	defer s.workers.Done()
	// Alone on its store, a server is woken by its own submissions; the
	// poll is a safety net.
	poll := time.Minute
	if s.store.shared() {
		poll = min(time.Second, s.cfg.Lease/2)
	}
	for s.until(ctx, nil, nil) {
		if j, err := s.store.claim(s.cfg.Replica, s.cfg.Lease); err == nil {
			s.queueDepth()
			s.run(ctx, j)
			continue
		}
		t := time.NewTimer(poll)
		s.until(ctx, t.C, s.wake)
		t.Stop()
	}
}

// until waits for tick or wake and tells whether the server still runs
// (false as soon as ctx ends or Shutdown is called). Without tick nor
// wake it only tells.
func (s *Server) until(ctx context.Context, tick <-chan time.Time, wake <-chan struct{}) bool {
	if tick == nil && wake == nil {
		select {
		case <-ctx.Done():
			return false
		case <-s.stopping:
			return false
		default:
			return true
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.stopping:
		return false
	case <-tick:
	case <-wake:
	}
	return true
}

// queueDepth sets the queue's gauge from the store.
func (s *Server) queueDepth() {
	if queued, _, _, err := s.store.usage(""); err == nil {
		s.metrics.queueDepth.Set(float64(queued))
	}
}

// heartbeat renews the leases of the jobs running here, every third of
// a lease, and stops those this server no longer holds: canceled through
// another replica, or taken by another after a lease ran out.
func (s *Server) heartbeat(ctx context.Context) {
	defer s.workers.Done()
	t := time.NewTicker(s.cfg.Lease / 3)
	defer t.Stop()
	for s.until(ctx, t.C, nil) {
		s.mu.Lock()
		ids := slices.Collect(maps.Keys(s.cancels))
		s.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		lost, err := s.store.renew(s.cfg.Replica, ids, s.cfg.Lease)
		if err != nil {
			continue // the store is away: the next beat tries again
		}
		s.mu.Lock()
		for _, id := range lost {
			if cancel := s.cancels[id]; cancel != nil {
				cancel()
			}
		}
		s.mu.Unlock()
	}
}

// run runs job j, claimed by this server, through batch into its folder.
func (s *Server) run(parent context.Context, j *Job) {
	id, attempt := j.ID, j.Attempts
	ctx, cancel := context.WithTimeout(parent, s.cfg.JobTimeout)
	defer cancel()
	s.mu.Lock()
	select {
	case <-s.stopping:
		s.mu.Unlock()
		return
	default:
	}
	s.cancels[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.cancels, id)
		s.mu.Unlock()
	}()
	// held: the job is still this run's (not canceled, not taken again).
	held := func(j *Job) error {
		if j.State != StateRunning || j.Replica != s.cfg.Replica || j.Attempts != attempt {
			return errSkip
		}
		return nil
	}
	dir := s.jobDir(id)
	m, err := batch.ParseManifest(mustManifest(j), dir)
	if err != nil {
		s.fail(id, held, err)
		return
	}
	// The batch jobs are known before the first runs: done/total counts
	// from the start.
	planned, err := m.Expand()
	if err != nil {
		s.fail(id, held, err)
		return
	}
	_, err = s.store.update(id, func(j *Job) error {
		if err := held(j); err != nil {
			return err
		}
		j.Total = len(planned)
		return nil
	})
	if errors.Is(err, errSkip) {
		return // canceled meanwhile
	}
	if err != nil {
		s.fail(id, held, err)
		return
	}
	s.metrics.running.Inc()
	defer s.metrics.running.Dec()
	out := filepath.Join(dir, "out")
	opts := batch.Options{Out: out, Jobs: 1, Cache: s.cfg.Cache, Env: s.cfg.Env, Plugins: s.cfg.Plugins,
		BenchCommand: s.cfg.BenchCommand,
		Command:      []string{"onnxconv", "serve", "job", id}, Tool: s.cfg.Tool,
		Progress: func(e batch.Event) {
			_, _ = s.store.update(id, func(j *Job) error {
				if err := held(j); err != nil {
					return err
				}
				j.Done, j.Total = e.Done, e.Total
				return nil
			})
		}}
	_, runErr := batch.Run(ctx, m, opts)
	// Interrupted by a shutdown: leave it running in the store; the next
	// start resumes it from its records.
	select {
	case <-s.stopping:
		return
	default:
	}
	if parent.Err() != nil {
		return
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
		return // canceled (the handler has marked it) or taken by another replica
	}
	if runErr != nil {
		if ctx.Err() != nil {
			runErr = fmt.Errorf("time limit %s exceeded: %w", s.cfg.JobTimeout, runErr)
		}
		s.fail(id, held, runErr)
		return
	}
	if err := s.scrub.files(out); err != nil {
		s.fail(id, held, err)
		return
	}
	merged, err := batch.Merge([]string{out})
	if err != nil {
		s.fail(id, held, err)
		return
	}
	size := dirSize(dir)
	done, err := s.store.update(id, func(j *Job) error {
		if err := held(j); err != nil {
			return err
		}
		j.Stored = size
		j.State, j.Finished = StateDone, time.Now().UTC()
		j.Records, j.Artifacts = merged.Jobs, artifacts(out, merged.Jobs)
		j.Done, j.Total = len(merged.Jobs), len(merged.Jobs)
		j.Verdict = verdict(merged.Jobs)
		return nil
	})
	if err != nil {
		return
	}
	s.metrics.finished(done)
	s.notify(done)
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

var errSkip = errors.New("skip")

// sweepEvery deletes the jobs finished longer than Keep ago, now and
// then every period.
func (s *Server) sweepEvery(ctx context.Context, period time.Duration) {
	defer s.workers.Done()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		var cutoff time.Time // forever: nothing finished before it
		if s.cfg.Keep > 0 {
			cutoff = time.Now().Add(-s.cfg.Keep)
		}
		s.sweep(cutoff)
		if !s.until(ctx, t.C, nil) {
			return
		}
	}
}

// receivingTimeout is how long a submission may stay receiving: its
// request's longest time (the body), and as long again to unpack and
// store it. One older was cut off by a crash.
const receivingTimeout = 2 * maxRequest

// sweep deletes every job that finished before cutoff, and every
// submission still receiving after receivingTimeout.
func (s *Server) sweep(cutoff time.Time) {
	jobs, err := s.store.list()
	if err != nil {
		return
	}
	for _, j := range jobs {
		stale := j.State == StateReceiving && time.Since(j.Created) >= receivingTimeout
		if stale || (j.State.Final() && j.Finished.Before(cutoff)) {
			_ = s.deleteJob(j)
		}
	}
}

// deleteJob removes a finished job's files and then its record.
func (s *Server) deleteJob(j *Job) error {
	if err := os.RemoveAll(s.jobDir(j.ID)); err != nil {
		return fmt.Errorf("removing job %s: %w", j.ID, err)
	}
	if err := s.store.remove(j.ID); err != nil {
		return fmt.Errorf("removing job %s: %w", j.ID, err)
	}
	return nil
}

// fail ends job id as failed with err's message, if held (see run) says
// it is still the run's.
func (s *Server) fail(id string, held func(*Job) error, err error) {
	j, uerr := s.store.update(id, func(j *Job) error {
		if err := held(j); err != nil {
			return err
		}
		j.State, j.Finished, j.Error, j.Verdict = StateFailed, time.Now().UTC(), s.scrub.text(err.Error()), batch.StatusError
		return nil
	})
	if uerr == nil {
		s.metrics.finished(j)
		s.notify(j)
	}
}

// verdict is the worst status of the records.
func verdict(recs []*batch.Record) batch.Status {
	v := batch.StatusPass
	for _, r := range recs {
		switch {
		case r.Status == batch.StatusError:
			return batch.StatusError
		case r.Status.Failed():
			v = batch.StatusFail
		}
	}
	return v
}

// artifacts names the files of the records under dir: the kept model
// (with its external data file, when it has one) and each
// report, prefixed with the action when the job has more than one.
func artifacts(dir string, recs []*batch.Record) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		prefix := ""
		if len(recs) > 1 {
			prefix = safeName(label(r)) + "."
		}
		if r.Output != "" {
			out[prefix+filepath.Base(r.Output)] = r.Output
			// Its external data (the source had it, or it is over
			// 2 GiB): the model names it OUT's name + ".data".
			if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(r.Output)+".data")); err == nil && st.Mode().IsRegular() {
				out[prefix+filepath.Base(r.Output)+".data"] = r.Output + ".data"
			}
		}
		for _, rep := range r.Reports {
			out[prefix+filepath.Base(rep)] = rep
		}
	}
	return out
}

// label is a record's action in a file name ("opset-11", "target-x").
func label(r *batch.Record) string {
	switch {
	case r.Opset != 0:
		return fmt.Sprintf("%s-%d", r.Action, r.Opset)
	case r.Target != "":
		return string(r.Action) + "-" + r.Target
	}
	return string(r.Action)
}

// mustManifest is the one-model manifest of a job: its spec (a batch
// entry) with "models" set to the upload and the outputs kept.
func mustManifest(j *Job) []byte {
	var entry map[string]any
	_ = json.Unmarshal(j.Spec, &entry)
	if entry == nil {
		entry = map[string]any{}
	}
	delete(entry, "webhook")
	// Verified as `onnxconv convert` verifies: as many generated samples.
	if _, ok := entry["samples"]; !ok {
		entry["samples"] = verify.DefaultSamples
	}
	entry["models"] = []string{"input/" + j.Model}
	entry["keep_outputs"] = true
	b, _ := json.Marshal(map[string]any{"jobs": []any{entry}})
	return b
}

// ParseKeep reads a --keep value: a Go duration ("36h"), a number of days
// ("7d"), or "forever" (a negative Keep).
func ParseKeep(v string) (time.Duration, error) {
	if v == "forever" {
		return -1, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err == nil && n > 0 && n <= 36500 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("--keep %q: give days (7d), a duration (36h) or forever", v)
}
