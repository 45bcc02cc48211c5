package batch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify"
)

// RecordSchemaVersion is the version of a job record's JSON form.
const RecordSchemaVersion = 1

// Status is a job's outcome.
type Status string

// The statuses. Fail and Error (and Missing, in a merge) count as
// failures.
const (
	// StatusPass: converted and equivalent, nothing blocks, or valid.
	StatusPass Status = "pass"
	// StatusFail: not equivalent, blocked, unsupported by the target, or
	// an invalid model (Kind says which).
	StatusFail Status = "fail"
	// StatusError: the job could not run (unreadable input, bad option).
	StatusError Status = "error"
	// StatusMissing: a merge found no record for a planned job (its
	// shard did not finish).
	StatusMissing Status = "missing"
)

// Failed tells whether s counts as a failure.
func (s Status) Failed() bool { return s != StatusPass }

// Figures are the numbers a job produced.
type Figures struct {
	OpsetBefore int64 `json:"opset_before,omitempty"`
	OpsetAfter  int64 `json:"opset_after,omitempty"`
	IRBefore    int64 `json:"ir_before,omitempty"`
	IRAfter     int64 `json:"ir_after,omitempty"`
	// Applied counts the adapter and expansion lines of the conversion.
	Applied int `json:"applied,omitempty"`
	// Comparisons, Outputs and FailedOutputs count the verifications
	// made and their outputs; Samples the samples per comparison.
	Comparisons   int `json:"comparisons,omitempty"`
	Outputs       int `json:"outputs,omitempty"`
	FailedOutputs int `json:"failed_outputs,omitempty"`
	Samples       int `json:"samples,omitempty"`
	// MaxAbs and MaxRel are the worst float differences found.
	MaxAbs *float64 `json:"max_abs,omitempty"`
	MaxRel *float64 `json:"max_rel,omitempty"`
	// Blockers counts the nodes blocking a plan; Problems the check's.
	Blockers int `json:"blockers,omitempty"`
	Problems int `json:"problems,omitempty"`
}

// Tool is the build that ran a job.
type Tool struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
}

// Record is one job's result: one JSON line in OUT/jobs/KEY.json.
type Record struct {
	SchemaVersion int    `json:"schema_version"`
	ID            string `json:"id"`
	Model         string `json:"model"`
	Action        Action `json:"action"`
	Opset         int    `json:"opset,omitempty"`
	MLOpset       int    `json:"ml_opset,omitempty"`
	Target        string `json:"target,omitempty"`
	Status        Status `json:"status"`
	// Kind refines a fail or error: not_equivalent, blocked,
	// unsupported, invalid, input, usage, internal.
	Kind    string  `json:"kind,omitempty"`
	Message string  `json:"message,omitempty"`
	Figures Figures `json:"figures"`
	// Bench holds a bench job's measurements (action bench only). They
	// are not part of the Outcome: speed varies from run to run.
	Bench *BenchFigures `json:"bench,omitempty"`
	// Notes are the pipeline's remarks and warnings.
	Notes []string `json:"notes,omitempty"`
	// Reports are the job's own reports, relative to the output folder.
	Reports []string `json:"reports,omitempty"`
	// Output is the converted model kept (keep_outputs), relative to the
	// output folder.
	Output string `json:"output,omitempty"`
	// ModelSHA256 is the model file's hash; CacheKey the job's key in the
	// cache (model, spec, tool version); Cached whether the result came
	// from the cache rather than from running the job.
	ModelSHA256 string `json:"model_sha256"`
	CacheKey    string `json:"cache_key"`
	Cached      bool   `json:"cached,omitempty"`
	// Shard ran the job ("I/N"); Run identifies the process.
	Shard string `json:"shard"`
	Run   string `json:"run"`
	Tool  Tool   `json:"tool"`
	// Started is when the job began; DurationMS how long it ran (for a
	// cached result: how long it ran when it was computed); Timings the
	// pipeline's steps.
	Started    time.Time       `json:"started"`
	DurationMS float64         `json:"duration_ms"`
	Timings    []verify.Timing `json:"timings,omitempty"`

	// Dir is the output folder the record was read from (Merge).
	Dir string `json:"-"`
}

// Outcome is the part of a record that does not depend on where, when or
// how fast the job ran: two runs of the same job must agree on it.
type Outcome struct {
	ID      string
	Status  Status
	Kind    string
	Figures string
	// Bench is what a bench job measured, less the figures that vary
	// with speed: the settings and the runs counted per side.
	Bench string
}

// Outcome returns r's outcome.
func (r *Record) Outcome() Outcome {
	f, _ := json.Marshal(r.Figures)
	o := Outcome{ID: r.ID, Status: r.Status, Kind: r.Kind, Figures: string(f)}
	if b := r.Bench; b != nil {
		o.Bench = fmt.Sprintf("reps %d warmup %d threads %d; executor %d runs", b.Reps, b.Warmup, b.Threads, b.Executor.Runs)
		if b.Runtime != nil {
			o.Bench += fmt.Sprintf("; %s %d runs", b.Runtime.Name, b.Runtime.Runs)
		}
	}
	return o
}

// writeRecord writes r as one JSON line to path, atomically.
func writeRecord(path string, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the record of %s: %w", r.ID, err)
	}
	return canonical.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadRecord reads one job record.
func ReadRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a job record: %w", path, err)
	}
	if r.SchemaVersion != RecordSchemaVersion {
		return nil, fmt.Errorf("%s: record schema version %d, this build reads %d", path, r.SchemaVersion, RecordSchemaVersion)
	}
	return &r, nil
}

// Layout of an output folder.
const (
	jobsDir    = "jobs"
	reportsDir = "reports"
	outputsDir = "outputs"
	plansDir   = "plans"
	workDir    = "work"
)

func recordPath(out string, j *Job) string {
	return filepath.Join(out, jobsDir, j.Key()+".json")
}
