package batch

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
)

// MergedSchemaVersion is the version of the merged JSON report.
const MergedSchemaVersion = 1

// Totals count a merge's jobs by status.
type Totals struct {
	Jobs    int `json:"jobs"`
	Pass    int `json:"pass"`
	Fail    int `json:"fail"`
	Error   int `json:"error"`
	Missing int `json:"missing"`
	Cached  int `json:"cached"`
	// DurationMS sums the jobs' durations (the machine time they took).
	DurationMS float64 `json:"duration_ms"`
}

// Merged is the union of the records of one or more output folders.
type Merged struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          string    `json:"tool"`
	Time          time.Time `json:"time"`
	Dirs          []string  `json:"dirs"`
	Totals        Totals    `json:"totals"`
	// Shards lists the plans found ("0/4", ...).
	Shards []string `json:"shards"`
	// Duplicates counts records of a job found in more than one folder
	// (the first folder given wins); Conflicts lists the jobs whose
	// duplicates disagree on the outcome.
	Duplicates int      `json:"duplicates"`
	Conflicts  []string `json:"conflicts"`
	// Jobs are sorted failures first (error, fail, missing, then pass),
	// then by ID.
	Jobs []*Record `json:"jobs"`
}

// Failed tells whether any job failed, errored or is missing, or
// duplicates disagree.
func (m *Merged) Failed() bool {
	t := m.Totals
	return t.Fail+t.Error+t.Missing > 0 || len(m.Conflicts) > 0
}

// MergeError is an output folder that cannot be read.
type MergeError struct {
	Dir string
	Err error
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("merge %s: %v", e.Dir, e.Err)
}
func (e *MergeError) Unwrap() error { return e.Err }

// Merge reads the records and plans of the output folders dirs. A job a
// plan lists without a record anywhere is Missing. A folder without
// records or plans is a *MergeError.
func Merge(dirs []string) (*Merged, error) {
	m := &Merged{SchemaVersion: MergedSchemaVersion, Tool: "onnxconv batch", Time: time.Now().UTC(), Dirs: dirs,
		Shards: []string{}, Conflicts: []string{}, Jobs: []*Record{}}
	byID := map[string]*Record{}
	planned := map[string]string{} // job ID -> shard
	var order []string
	for _, dir := range dirs {
		recs, err := filepath.Glob(filepath.Join(dir, jobsDir, "*.json"))
		if err != nil {
			return nil, &MergeError{Dir: dir, Err: err}
		}
		plans, err := filepath.Glob(filepath.Join(dir, plansDir, "*.json"))
		if err != nil {
			return nil, &MergeError{Dir: dir, Err: err}
		}
		if len(recs) == 0 && len(plans) == 0 {
			return nil, &MergeError{Dir: dir, Err: fmt.Errorf("no job records (%s/*.json) or plans: not the output folder of 'onnxconv batch'", jobsDir)}
		}
		sort.Strings(plans)
		for _, p := range plans {
			var pl Plan
			b, err := os.ReadFile(p)
			if err == nil {
				err = json.Unmarshal(b, &pl)
			}
			if err != nil {
				return nil, &MergeError{Dir: dir, Err: fmt.Errorf("plan %s: %w", p, err)}
			}
			m.Shards = append(m.Shards, pl.Shard)
			for _, id := range pl.Jobs {
				if _, ok := planned[id]; !ok {
					planned[id] = pl.Shard
				}
			}
		}
		sort.Strings(recs)
		for _, p := range recs {
			r, err := ReadRecord(p)
			if err != nil {
				return nil, &MergeError{Dir: dir, Err: err}
			}
			r.Dir = dir
			if prev, ok := byID[r.ID]; ok {
				m.Duplicates++
				if prev.Outcome() != r.Outcome() {
					m.Conflicts = append(m.Conflicts, r.ID)
				}
				continue
			}
			byID[r.ID] = r
			order = append(order, r.ID)
		}
	}
	for id, shard := range planned {
		if _, ok := byID[id]; !ok {
			byID[id] = &Record{SchemaVersion: RecordSchemaVersion, ID: id, Status: StatusMissing, Kind: "missing", Shard: shard,
				Message: fmt.Sprintf("no result: shard %s did not finish this job; run that shard again (it resumes)", shard)}
			order = append(order, id)
		}
	}
	sort.Strings(m.Conflicts)
	for _, id := range order {
		r := byID[id]
		m.Jobs = append(m.Jobs, r)
		t := &m.Totals
		t.Jobs++
		t.DurationMS += r.DurationMS
		if r.Cached {
			t.Cached++
		}
		switch r.Status {
		case StatusPass:
			t.Pass++
		case StatusFail:
			t.Fail++
		case StatusMissing:
			t.Missing++
		default:
			t.Error++
		}
	}
	sort.SliceStable(m.Jobs, func(a, b int) bool {
		ra, rb := statusRank(m.Jobs[a].Status), statusRank(m.Jobs[b].Status)
		if ra != rb {
			return ra < rb
		}
		return m.Jobs[a].ID < m.Jobs[b].ID
	})
	return m, nil
}

// statusRank orders failures first.
func statusRank(s Status) int {
	switch s {
	case StatusError:
		return 0
	case StatusFail:
		return 1
	case StatusMissing:
		return 2
	case StatusPass:
		return 4
	}
	return 3
}

// MergedFormats are the extensions WriteMerged understands.
func MergedFormats() []string { return []string{".html", ".md", ".xml", ".json"} }

// FormatError is a report path whose extension names no format.
type FormatError struct{ Path string }

func (e *FormatError) Error() string {
	return fmt.Sprintf("report %s: unknown format %q: end the name with %s", e.Path, filepath.Ext(e.Path), strings.Join(MergedFormats(), ", "))
}

// CheckMergedPath tells, before any work, whether WriteMerged can write
// path's format (a *FormatError when not).
func CheckMergedPath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm", ".md", ".markdown", ".xml", ".json":
		return nil
	}
	return &FormatError{Path: path}
}

// WriteMerged writes m to path in the format its extension names (.html,
// .md, .xml for JUnit, .json), atomically. Links to the jobs' reports are
// relative to path's folder.
func WriteMerged(path string, m *Merged) error {
	if err := CheckMergedPath(path); err != nil {
		return err
	}
	base := filepath.Dir(path)
	var write func(io.Writer) error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		write = func(w io.Writer) error { return WriteMergedHTML(w, m, base) }
	case ".md", ".markdown":
		write = func(w io.Writer) error { return WriteMergedMarkdown(w, m, base) }
	case ".xml":
		write = func(w io.Writer) error { return WriteMergedJUnit(w, m) }
	default:
		write = func(w io.Writer) error { return WriteMergedJSON(w, m) }
	}
	return canonical.WriteFileAtomic(path, write)
}

// WriteMergedJSON writes m as indented JSON.
func WriteMergedJSON(w io.Writer, m *Merged) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// reportLinks are r's reports as paths relative to base (slash form).
func reportLinks(r *Record, base string) []string {
	var out []string
	for _, rep := range r.Reports {
		p := filepath.Join(r.Dir, filepath.FromSlash(rep))
		if absBase, err := filepath.Abs(base); err == nil {
			if absP, err := filepath.Abs(p); err == nil {
				if rel, err := filepath.Rel(absBase, absP); err == nil {
					p = rel
				}
			}
		}
		out = append(out, filepath.ToSlash(p))
	}
	return out
}

// worst is the record's worst max_abs as text ("" when none).
func worst(r *Record) string {
	if r.Figures.MaxAbs == nil {
		return ""
	}
	return fmt.Sprintf("%.3g", *r.Figures.MaxAbs)
}

// opsets is "13 → 11" for a conversion, "13" for a check.
func opsets(r *Record) string {
	f := r.Figures
	switch {
	case f.OpsetBefore != 0 && f.OpsetAfter != 0:
		return fmt.Sprintf("%d → %d", f.OpsetBefore, f.OpsetAfter)
	case f.OpsetBefore != 0:
		return fmt.Sprint(f.OpsetBefore)
	}
	return ""
}

// what is the job's action in words ("opset 11", "target ort-1.15").
func what(r *Record) string {
	switch r.Action {
	case ActionOpset:
		s := fmt.Sprintf("opset %d", r.Opset)
		if r.MLOpset != 0 {
			s += fmt.Sprintf(" (ml %d)", r.MLOpset)
		}
		return s
	case ActionTarget:
		return "target " + r.Target
	case ActionPlan:
		return fmt.Sprintf("plan opset %d", r.Opset)
	case "":
		return ""
	}
	return string(r.Action)
}
