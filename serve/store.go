package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/onnxconv/onnxconv/batch"
)

// State is where a job is in its life.
type State string

// The states. A job is queued, then running, then one of the three final
// states. A server that stops while a job runs leaves it running in the
// store; the next start queues it again and it resumes from the records
// it had written.
const (
	// StateReceiving is a submission whose upload is being received: it
	// holds its place in the queue and in its token's quota, so that
	// every replica counts it, and no client sees it. One left by a crash
	// is removed once older than a request may take.
	StateReceiving State = "receiving"
	StateQueued    State = "queued"
	StateRunning   State = "running"
	StateDone      State = "done"     // every batch job of it has a record
	StateFailed    State = "failed"   // it could not run (bad spec, unreadable upload)
	StateCanceled  State = "canceled" // DELETE before it finished
)

// Final tells whether s is an end state.
func (s State) Final() bool { return s == StateDone || s == StateFailed || s == StateCanceled }

// Job is one request: a model and what to do with it, and what happened.
// It is the JSON of GET /v1/jobs/{id}.
type Job struct {
	ID    string `json:"id"`
	State State  `json:"state"`
	// Spec is the request's spec: a batch manifest entry without
	// "models" (see docs/serve.md).
	Spec json.RawMessage `json:"spec"`
	// Model is the uploaded file's name as stored (sanitized; never the
	// client's path); Bytes its size; ModelSHA256 its content hash.
	Model       string `json:"model"`
	Bytes       int64  `json:"bytes"`
	ModelSHA256 string `json:"model_sha256"`
	// Token is the ID of the token that submitted the job ("" without
	// authentication).
	Token    string    `json:"token,omitempty"`
	Created  time.Time `json:"created"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	// Done of Total batch jobs have a record (progress).
	Done  int `json:"done"`
	Total int `json:"total"`
	// Verdict is pass when every batch job passed, fail when one failed
	// (not equivalent, blocked, invalid), error when one could not run;
	// "" until the job is done.
	Verdict batch.Status `json:"verdict,omitempty"`
	// Records are the batch records of the job, one per action.
	Records []*batch.Record `json:"records,omitempty"`
	// Artifacts are the files GET /v1/jobs/{id}/artifacts/{name} serves,
	// by name, with their paths inside the job's output folder.
	Artifacts map[string]string `json:"artifacts,omitempty"`
	// Error says why a failed job could not run.
	Error   string `json:"error,omitempty"`
	Webhook string `json:"webhook,omitempty"`
	// Attempts counts the starts (more than one after a restart, or
	// after its replica died and another took it again).
	Attempts int `json:"attempts"`
	// Replica is the opaque ID of the server that runs (or ran) the job
	// (Config.Replica; its start line names its host).
	Replica string `json:"replica,omitempty"`
	// Stored is the bytes the job's folder holds (upload, unpacked
	// folder, results): what counts against its token's --quota-bytes.
	Stored int64 `json:"stored_bytes"`
}

// jobStore keeps the jobs and hands each queued one to one worker of one
// server. boltStore (one server per file, the default) and pgStore
// (replicas sharing one PostgreSQL) implement it.
type jobStore interface {
	put(j *Job) error
	// get returns job id, or errNoJob.
	get(id string) (*Job, error)
	// update reads job id, applies f and writes it back, atomically; an
	// error of f leaves the job as it was and is returned.
	update(id string, f func(*Job) error) (*Job, error)
	remove(id string) error
	// list returns every job, oldest first.
	list() ([]*Job, error)
	// claim takes the oldest job that is queued (or running on a replica
	// whose lease ran out) for replica: running, its Attempts counted,
	// held until now+lease unless renewed. errNoJob: there is none.
	claim(replica string, lease time.Duration) (*Job, error)
	// renew extends replica's lease on the jobs ids and returns those it
	// no longer holds: canceled, or taken by another replica after the
	// lease ran out. Their runs are to stop.
	renew(replica string, ids []string, lease time.Duration) (lost []string, err error)
	// usage is the jobs waiting in all (queued or being received), and
	// token's jobs receiving, queued or running and the bytes they keep
	// (the queue and the quotas).
	usage(token string) (queued, active int, stored int64, err error)
	// reserve stores j (a submission being received) if admit, given the
	// usage of j's token at that moment, returns nil; admissions are
	// serialized, so that two never both take the last place.
	reserve(j *Job, admit func(queued, active int, stored int64) error) error
	// shared tells whether other servers use the store at once (and the
	// data folder with it).
	shared() bool
	close() error
}

// errNoJob is a job ID the store does not hold (or no job to claim).
var errNoJob = errors.New("no such job")

// openStore opens the store cfg.Store names: a postgres:// URL, or ""
// for the bbolt file DATA/jobs.db.
func openStore(cfg *Config) (jobStore, error) {
	if strings.HasPrefix(cfg.Store, "postgres://") || strings.HasPrefix(cfg.Store, "postgresql://") {
		return openPG(cfg.Store)
	}
	if cfg.Store != "" {
		return nil, fmt.Errorf("--store %q: give a postgres:// URL, or nothing for DATA/jobs.db", cfg.Store)
	}
	return openBolt(filepath.Join(cfg.Data, "jobs.db"))
}

// lost is the ids of held that are not in kept.
func lost(held, kept []string) []string {
	var out []string
	for _, id := range held {
		if !slices.Contains(kept, id) {
			out = append(out, id)
		}
	}
	return out
}

var jobsBucket = []byte("jobs")

// boltStore keeps the jobs in a bbolt file, so that a restart loses
// nothing. The file has one writer, so at open every job left running
// (by a server that stopped or crashed) is queued again.
type boltStore struct{ db *bolt.DB }

func openBolt(path string) (*boltStore, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening the job store %s: %w", path, err)
	}
	s := &boltStore{db: db}
	if err := db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(jobsBucket)
		if err != nil {
			return err
		}
		return bk.ForEach(func(k, v []byte) error {
			j := new(Job)
			if err := json.Unmarshal(v, j); err != nil {
				return err
			}
			if j.State != StateRunning {
				return nil
			}
			j.State = StateQueued
			nb, err := json.Marshal(j)
			if err != nil {
				return err
			}
			return bk.Put(k, nb)
		})
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("job store %s: %w", path, err)
	}
	return s, nil
}

func (s *boltStore) close() error { return s.db.Close() }

func (s *boltStore) shared() bool { return false }

func (s *boltStore) put(j *Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", j.ID, err)
	}
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(jobsBucket).Put([]byte(j.ID), b) })
}

func (s *boltStore) get(id string) (*Job, error) {
	var j *Job
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		j, err = boltGet(tx, id)
		return err
	})
	return j, err
}

func (s *boltStore) update(id string, f func(*Job) error) (*Job, error) {
	var j *Job
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		j, err = boltUpdate(tx.Bucket(jobsBucket), []byte(id), f)
		return err
	})
	return j, err
}

// boltUpdate applies f to job key of bk.
func boltUpdate(bk *bolt.Bucket, key []byte, f func(*Job) error) (*Job, error) {
	b := bk.Get(key)
	if b == nil {
		return nil, errNoJob
	}
	j := new(Job)
	if err := json.Unmarshal(b, j); err != nil {
		return nil, err
	}
	if err := f(j); err != nil {
		return nil, err
	}
	nb, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return j, bk.Put(key, nb)
}

func (s *boltStore) remove(id string) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(jobsBucket).Delete([]byte(id)) })
}

func (s *boltStore) list() ([]*Job, error) {
	var out []*Job
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(jobsBucket).ForEach(func(_, v []byte) error {
			j := new(Job)
			if err := json.Unmarshal(v, j); err != nil {
				return err
			}
			out = append(out, j)
			return nil
		})
	})
	sort.Slice(out, func(a, b int) bool { return out[a].Created.Before(out[b].Created) })
	return out, err
}

// claim: the file has one server, so a lease never runs out and only
// queued jobs are taken.
func (s *boltStore) claim(replica string, _ time.Duration) (*Job, error) {
	var j *Job
	err := s.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(jobsBucket)
		var first []byte
		var created time.Time
		if err := bk.ForEach(func(k, v []byte) error {
			var q struct {
				State   State
				Created time.Time
			}
			if err := json.Unmarshal(v, &q); err != nil {
				return err
			}
			if q.State == StateQueued && (first == nil || q.Created.Before(created)) {
				first, created = slices.Clone(k), q.Created
			}
			return nil
		}); err != nil {
			return err
		}
		if first == nil {
			return errNoJob
		}
		var err error
		j, err = boltUpdate(bk, first, func(j *Job) error { start(j, replica); return nil })
		return err
	})
	return j, err
}

// start marks j running on replica, one more attempt.
func start(j *Job, replica string) {
	j.State, j.Replica, j.Started = StateRunning, replica, time.Now().UTC()
	j.Attempts++
}

func (s *boltStore) renew(replica string, ids []string, _ time.Duration) ([]string, error) {
	var kept []string
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, id := range ids {
			if j, err := boltGet(tx, id); err == nil && j.State == StateRunning && j.Replica == replica {
				kept = append(kept, id)
			}
		}
		return nil
	})
	return lost(ids, kept), err
}

func boltGet(tx *bolt.Tx, id string) (*Job, error) {
	b := tx.Bucket(jobsBucket).Get([]byte(id))
	if b == nil {
		return nil, errNoJob
	}
	j := new(Job)
	return j, json.Unmarshal(b, j)
}

func (s *boltStore) usage(token string) (queued, active int, stored int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		queued, active, stored, err = boltUsage(tx, token)
		return err
	})
	return queued, active, stored, err
}

func (s *boltStore) reserve(j *Job, admit func(queued, active int, stored int64) error) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", j.ID, err)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		queued, active, stored, err := boltUsage(tx, j.Token)
		if err != nil {
			return err
		}
		if err := admit(queued, active, stored); err != nil {
			return err
		}
		return tx.Bucket(jobsBucket).Put([]byte(j.ID), b)
	})
}

// boltUsage is usage in tx.
func boltUsage(tx *bolt.Tx, token string) (queued, active int, stored int64, err error) {
	err = tx.Bucket(jobsBucket).ForEach(func(_, v []byte) error {
		var j struct {
			State  State
			Token  string
			Stored int64 `json:"stored_bytes"`
		}
		if err := json.Unmarshal(v, &j); err != nil {
			return err
		}
		if j.State == StateQueued || j.State == StateReceiving {
			queued++
		}
		if j.Token == token {
			stored += j.Stored
			if !j.State.Final() {
				active++
			}
		}
		return nil
	})
	return queued, active, stored, err
}
