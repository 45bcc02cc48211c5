package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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
	StateQueued   State = "queued"
	StateRunning  State = "running"
	StateDone     State = "done"     // every batch job of it has a record
	StateFailed   State = "failed"   // it could not run (bad spec, unreadable upload)
	StateCanceled State = "canceled" // DELETE before it finished
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
	// Attempts counts the starts (more than one after a restart).
	Attempts int `json:"attempts"`
	// Stored is the bytes the job's folder holds (upload, unpacked
	// folder, results): what counts against its token's --quota-bytes.
	Stored int64 `json:"stored_bytes"`
}

var jobsBucket = []byte("jobs")

// store keeps the jobs in a bbolt file, so that a restart loses nothing.
type store struct{ db *bolt.DB }

func openStore(path string) (*store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening the job store %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(jobsBucket)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("job store %s: %w", path, err)
	}
	return &store{db: db}, nil
}

func (s *store) close() error { return s.db.Close() }

// errNoJob is a job ID the store does not hold.
var errNoJob = errors.New("no such job")

func (s *store) put(j *Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", j.ID, err)
	}
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(jobsBucket).Put([]byte(j.ID), b) })
}

func (s *store) get(id string) (*Job, error) {
	var j *Job
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(jobsBucket).Get([]byte(id))
		if b == nil {
			return errNoJob
		}
		j = new(Job)
		return json.Unmarshal(b, j)
	})
	return j, err
}

// update reads job id, applies f and writes it back, in one transaction.
func (s *store) update(id string, f func(*Job) error) (*Job, error) {
	var j *Job
	err := s.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(jobsBucket)
		b := bk.Get([]byte(id))
		if b == nil {
			return errNoJob
		}
		j = new(Job)
		if err := json.Unmarshal(b, j); err != nil {
			return err
		}
		if err := f(j); err != nil {
			return err
		}
		nb, err := json.Marshal(j)
		if err != nil {
			return err
		}
		return bk.Put([]byte(id), nb)
	})
	return j, err
}

// remove deletes job id from the store.
func (s *store) remove(id string) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(jobsBucket).Delete([]byte(id)) })
}

// list returns every job, oldest first.
func (s *store) list() ([]*Job, error) {
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
