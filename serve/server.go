// Package serve runs onnxconv jobs behind an HTTP API: a client uploads a
// model (or a folder packed as zip or tar) with a spec in the vocabulary
// of a batch manifest entry; the job is kept in an embedded store (bbolt)
// and run by a bounded pool of workers through package batch (so through
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
	"os"
	"path/filepath"
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
	Data string
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
}

// Server is a running job service. New opens it; Start runs its workers;
// Handler serves its API; Shutdown stops it so that a restart resumes.
type Server struct {
	cfg     Config
	store   *store
	metrics *metrics
	scrub   *scrubber
	queue   chan string

	mu sync.Mutex
	// queued counts the jobs waiting and the submissions being received
	// (each takes its place in the queue before its upload is read).
	queued  int
	cancels map[string]context.CancelFunc // running jobs
	// active counts each token's jobs queued or running (and being
	// received), stored the bytes its jobs keep: the quotas.
	active map[string]int
	stored map[string]int64
	// unpacks bounds the archives unpacked at once.
	unpacks chan struct{}
	// stopping is closed by Shutdown: workers take no new job.
	stopping chan struct{}
	workers  sync.WaitGroup
	webhooks sync.WaitGroup
	ready    bool
}

// New opens the store in cfg.Data and queues again every job a previous
// server left queued or running.
func New(cfg Config) (*Server, error) {
	if cfg.Data == "" {
		return nil, errors.New("serve: give the data folder")
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
	st, err := openStore(filepath.Join(cfg.Data, "jobs.db"))
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s := &Server{cfg: cfg, store: st, metrics: newMetrics(), scrub: scrub, cancels: map[string]context.CancelFunc{}, stopping: make(chan struct{}),
		active: map[string]int{}, stored: map[string]int64{}, unpacks: make(chan struct{}, cfg.Workers)}
	jobs, err := st.list()
	if err != nil {
		_ = st.close()
		return nil, fmt.Errorf("serve: reading the job store: %w", err)
	}
	var resume []string
	known := map[string]bool{}
	for _, j := range jobs {
		known[j.ID] = true
		s.metrics.seen(j)
		s.stored[j.Token] += j.Stored
		if !j.State.Final() {
			resume = append(resume, j.ID)
			s.active[j.Token]++
		}
	}
	if err := removeOrphans(filepath.Join(cfg.Data, "jobs"), known); err != nil {
		_ = st.close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	// Room for every resumed job plus a full queue of new ones.
	s.queue = make(chan string, len(resume)+cfg.QueueSize+cfg.Workers)
	for _, id := range resume {
		if _, err := st.update(id, func(j *Job) error { j.State = StateQueued; return nil }); err != nil {
			_ = st.close()
			return nil, fmt.Errorf("serve: %w", err)
		}
		s.queued++
		s.queue <- id
	}
	s.metrics.queueDepth.Set(float64(s.queued))
	return s, nil
}

// removeOrphans deletes the folders under jobs that no job of the store
// owns: uploads cut off by a crash before their job was stored.
func removeOrphans(jobs string, known map[string]bool) error {
	ents, err := os.ReadDir(jobs)
	if err != nil {
		return fmt.Errorf("reading the jobs folder: %w", err)
	}
	for _, e := range ents {
		if !known[e.Name()] {
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
	if s.cfg.Keep > 0 {
		s.workers.Add(1)
		go s.sweepEvery(ctx, min(s.cfg.Keep/10, time.Hour))
	}
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
}

// Shutdown stops taking jobs, interrupts the running ones (they stay
// "running" in the store with the records they wrote, and the next start
// resumes them where they stopped), waits for the workers and pending
// webhooks (until ctx ends) and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	select {
	case <-s.stopping:
	default:
		close(s.stopping)
	}
	s.ready = false
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

// work runs queued jobs one at a time.
func (s *Server) work(ctx context.Context) {
	defer s.workers.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stopping:
			return
		case id := <-s.queue:
			s.mu.Lock()
			s.queued--
			s.metrics.queueDepth.Set(float64(s.queued))
			s.mu.Unlock()
			s.run(ctx, id)
		}
	}
}

// run runs job id through batch into its folder.
func (s *Server) run(parent context.Context, id string) {
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
	queued, err := s.store.get(id)
	if err != nil {
		s.fail(id, err)
		return
	}
	dir := s.jobDir(id)
	m, err := batch.ParseManifest(mustManifest(queued), dir)
	if err != nil {
		s.fail(id, err)
		return
	}
	// The batch jobs are known before the first runs: done/total counts
	// from the start.
	planned, err := m.Expand()
	if err != nil {
		s.fail(id, err)
		return
	}
	_, err = s.store.update(id, func(j *Job) error {
		if j.State != StateQueued {
			return errSkip
		}
		j.State, j.Started = StateRunning, time.Now().UTC()
		j.Total = len(planned)
		j.Attempts++
		return nil
	})
	if errors.Is(err, errSkip) {
		return // canceled while queued
	}
	if err != nil {
		s.fail(id, err)
		return
	}
	s.metrics.running.Inc()
	defer s.metrics.running.Dec()
	out := filepath.Join(dir, "out")
	opts := batch.Options{Out: out, Jobs: 1, Cache: s.cfg.Cache, Env: s.cfg.Env, Plugins: s.cfg.Plugins,
		Command: []string{"onnxconv", "serve", "job", id}, Tool: s.cfg.Tool,
		Progress: func(e batch.Event) {
			_, _ = s.store.update(id, func(j *Job) error { j.Done, j.Total = e.Done, e.Total; return nil })
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
		return // DELETE: the handler has marked it canceled
	}
	if runErr != nil {
		if ctx.Err() != nil {
			runErr = fmt.Errorf("time limit %s exceeded: %w", s.cfg.JobTimeout, runErr)
		}
		s.fail(id, runErr)
		return
	}
	if err := s.scrub.files(out); err != nil {
		s.fail(id, err)
		return
	}
	merged, err := batch.Merge([]string{out})
	if err != nil {
		s.fail(id, err)
		return
	}
	size := dirSize(dir)
	var grew int64
	done, err := s.store.update(id, func(j *Job) error {
		if j.State != StateRunning {
			return errSkip
		}
		grew, j.Stored = size-j.Stored, size
		j.State, j.Finished = StateDone, time.Now().UTC()
		j.Records, j.Artifacts = merged.Jobs, artifacts(merged.Jobs)
		j.Done, j.Total = len(merged.Jobs), len(merged.Jobs)
		j.Verdict = verdict(merged.Jobs)
		return nil
	})
	if err != nil {
		return
	}
	s.mu.Lock()
	s.stored[done.Token] += grew
	s.mu.Unlock()
	s.ended(done)
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

// ended counts a job that reached an end state: metrics and its token's
// jobs in flight.
func (s *Server) ended(j *Job) {
	s.metrics.finished(j)
	s.mu.Lock()
	s.active[j.Token]--
	s.mu.Unlock()
}

// sweepEvery deletes the jobs finished longer than Keep ago, now and
// then every period.
func (s *Server) sweepEvery(ctx context.Context, period time.Duration) {
	defer s.workers.Done()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		s.sweep(time.Now().Add(-s.cfg.Keep))
		select {
		case <-ctx.Done():
			return
		case <-s.stopping:
			return
		case <-t.C:
		}
	}
}

// sweep deletes every job that finished before cutoff.
func (s *Server) sweep(cutoff time.Time) {
	jobs, err := s.store.list()
	if err != nil {
		return
	}
	for _, j := range jobs {
		if j.State.Final() && j.Finished.Before(cutoff) {
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
	s.mu.Lock()
	s.stored[j.Token] -= j.Stored
	s.mu.Unlock()
	return nil
}

// fail ends job id as failed with err's message.
func (s *Server) fail(id string, err error) {
	j, uerr := s.store.update(id, func(j *Job) error {
		if j.State.Final() {
			return errSkip
		}
		j.State, j.Finished, j.Error, j.Verdict = StateFailed, time.Now().UTC(), s.scrub.text(err.Error()), batch.StatusError
		return nil
	})
	if uerr == nil {
		s.ended(j)
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

// artifacts names the files of the records: the kept model and each
// report, prefixed with the action when the job has more than one.
func artifacts(recs []*batch.Record) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		prefix := ""
		if len(recs) > 1 {
			prefix = safeName(label(r)) + "."
		}
		if r.Output != "" {
			out[prefix+filepath.Base(r.Output)] = r.Output
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
