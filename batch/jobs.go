package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Action is what a job does with its model.
type Action string

// The actions.
const (
	// ActionOpset converts to Job.Opset (and MLOpset) and verifies the
	// result against the source (pipeline.Opset).
	ActionOpset Action = "opset"
	// ActionConvert converts the model to ONNX as it is
	// (pipeline.Convert with no opset or target).
	ActionConvert Action = "convert"
	// ActionTarget fits the model to Job.Target (pipeline.Convert).
	ActionTarget Action = "target"
	// ActionPlan lists what blocks Job.Opset (pipeline.Plan).
	ActionPlan Action = "plan"
	// ActionCheck checks the model's structure and schemas.
	ActionCheck Action = "check"
	// ActionReference compares the model with its stored outputs.
	ActionReference Action = "reference"
	// ActionBench times the model on the executor (package bench), and
	// on Job.Bench.Runtime side by side when set.
	ActionBench Action = "bench"
)

// Job is one unit of work: one model, one action.
type Job struct {
	// ID names the job in results and reports, stably across runs:
	// "[name:]MODEL ACTION" ("models/a/model.onnx opset=11").
	ID string `json:"id"`
	// Model is the model's path as the manifest matched it
	// (slash-separated, relative to the manifest's folder), File the
	// path to open.
	Model string `json:"model"`
	File  string `json:"-"`
	// Size is the model file's size in bytes (the shard balance weight).
	Size   int64  `json:"size"`
	Action Action `json:"action"`
	// Opset is the target opset (opset, plan); Target the profile.
	Opset   int    `json:"opset,omitempty"`
	MLOpset int    `json:"ml_opset,omitempty"`
	Target  string `json:"target,omitempty"`
	// Spec holds the settings that shape the result (the cache key).
	Spec Spec `json:"spec"`
	// Reference, Inputs and Calibration are the resolved folders (""
	// for none).
	Reference   string `json:"-"`
	Inputs      string `json:"-"`
	Calibration string `json:"-"`
	// Reports are the formats of the job's own report ("html", ...).
	Reports     []string `json:"-"`
	KeepOutputs bool     `json:"-"`
}

// Spec is what a job's result depends on besides the model's bytes and
// the tool's version.
type Spec struct {
	Action  Action   `json:"action"`
	Opset   int      `json:"opset,omitempty"`
	MLOpset int      `json:"ml_opset,omitempty"`
	Target  string   `json:"target,omitempty"`
	From    string   `json:"from,omitempty"`
	Verify  bool     `json:"verify"`
	Samples int      `json:"samples,omitempty"`
	Seed    uint64   `json:"seed,omitempty"`
	Profile string   `json:"profile,omitempty"`
	RTol    *float64 `json:"rtol,omitempty"`
	ATol    *float64 `json:"atol,omitempty"`
	Bisect  bool     `json:"bisect,omitempty"`
	// Reference and Inputs are the folder names as the manifest gives
	// them; their contents are hashed into the key too.
	Reference string   `json:"reference,omitempty"`
	Inputs    string   `json:"inputs,omitempty"`
	Reports   []string `json:"reports,omitempty"`
	// Bench holds a bench job's settings (defaults filled in).
	Bench *BenchSpec `json:"bench,omitempty"`
	// Transforms of a conversion's result (see Entry).
	Optimize          bool   `json:"optimize,omitempty"`
	Precision         string `json:"precision,omitempty"` // "fp16", "bf16"
	KeepIOTypes       bool   `json:"keep_io_types,omitempty"`
	Quantize          string `json:"quantize,omitempty"`
	PerChannel        bool   `json:"per_channel,omitempty"`
	CalibrationMethod string `json:"calibration_method,omitempty"`
	Calibration       string `json:"calibration,omitempty"`
}

// transforms is the label suffix of a job whose result is transformed
// ("+optimize+fp16").
func (s Spec) transforms() string {
	var b strings.Builder
	if s.Optimize {
		b.WriteString("+optimize")
	}
	if s.Precision != "" {
		b.WriteString("+" + s.Precision)
	}
	if s.Quantize != "" {
		b.WriteString("+int8-" + s.Quantize)
	}
	return b.String()
}

// Expand lists the manifest's jobs, sorted by ID. A pattern that matches
// no file, or two entries giving one model the same action, is a
// *ManifestError.
func (m *Manifest) Expand() ([]Job, error) {
	var jobs []Job
	seen := map[string]int{}
	for ei, e := range m.Jobs {
		field := "/jobs/" + strconv.Itoa(ei)
		models, err := m.models(e)
		if err != nil {
			return nil, &ManifestError{Path: m.Path, Field: field + "/models", Err: err}
		}
		for _, model := range models {
			file := model
			if !path.IsAbs(model) {
				file = filepath.Join(m.Dir, filepath.FromSlash(model))
			}
			if err := confined(m.Dir, file, model, m.AllowOutside); err != nil {
				return nil, &ManifestError{Path: m.Path, Field: field + "/models", Err: err}
			}
			st, err := os.Stat(file)
			if err != nil {
				return nil, &ManifestError{Path: m.Path, Field: field + "/models", Err: err}
			}
			ref, inputs, calib, err := m.folders(e, file, field)
			if err != nil {
				return nil, err
			}
			for _, j := range entryJobs(e, model) {
				j.File, j.Size = file, st.Size()
				j.Reference, j.Inputs = ref, inputs
				if j.Spec.Calibration != "" {
					j.Calibration = calib
				}
				if prev, dup := seen[j.ID]; dup {
					return nil, &ManifestError{Path: m.Path, Field: field, Err: fmt.Errorf("job %q is also made by /jobs/%d: give the entries different names", j.ID, prev)}
				}
				seen[j.ID] = ei
				jobs = append(jobs, j)
			}
		}
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].ID < jobs[b].ID })
	return jobs, nil
}

// models expands an entry's globs, less its exclusions.
func (m *Manifest) models(e Entry) ([]string, error) {
	set := map[string]bool{}
	for _, p := range e.Models {
		if err := localPattern(m.Dir, p, m.AllowOutside); err != nil {
			return nil, err
		}
		got, err := Glob(m.Dir, p)
		if err != nil {
			return nil, err
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("%q matches no file under %s", p, m.Dir)
		}
		for _, g := range got {
			set[g] = true
		}
	}
	var out []string
	for g := range set {
		excluded := false
		for _, x := range e.Exclude {
			if matchSegs(splitSlash(x), splitSlash(g)) {
				excluded = true
			}
		}
		if !excluded {
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out, nil
}

// folders resolves an entry's reference and inputs folders beside the
// model file, refused outside the manifest's folder unless AllowOutside.
func (m *Manifest) folders(e Entry, file, field string) (ref, inputs, calib string, err error) {
	for _, f := range []struct {
		name, key string
		out       *string
	}{{e.Reference, "reference", &ref}, {e.Inputs, "inputs", &inputs}, {e.Calibration, "calibration", &calib}} {
		if f.name == "" {
			continue
		}
		p := filepath.Join(filepath.Dir(file), filepath.FromSlash(f.name))
		if !m.AllowOutside {
			if filepath.IsAbs(f.name) || path.IsAbs(filepath.ToSlash(f.name)) {
				return "", "", "", &ManifestError{Path: m.Path, Field: field + "/" + f.key, Err: &OutsideError{Dir: m.Dir, Name: f.name, Why: "is an absolute path"}}
			}
			if rel, err := filepath.Rel(m.Dir, p); err != nil || !filepath.IsLocal(rel) && rel != "." {
				return "", "", "", &ManifestError{Path: m.Path, Field: field + "/" + f.key, Err: &OutsideError{Dir: m.Dir, Name: f.name, Why: "leaves the folder (..)"}}
			}
			// A folder that does not exist is the job's error later; one
			// that exists must resolve inside.
			if _, err := os.Lstat(p); err == nil {
				if err := confined(m.Dir, p, f.name, false); err != nil {
					return "", "", "", &ManifestError{Path: m.Path, Field: field + "/" + f.key, Err: err}
				}
			}
		}
		*f.out = p
	}
	return ref, inputs, calib, nil
}

func splitSlash(p string) []string { return strings.Split(path.Clean(p), "/") }

// entryJobs is the jobs of one entry for one model (File and Size unset).
func entryJobs(e Entry, model string) []Job {
	verify := e.Verify == nil || *e.Verify
	reports := e.Reports
	if len(reports) == 0 {
		reports = []string{"html"}
	}
	base := Spec{From: e.From, Verify: verify, Samples: e.Samples, Seed: e.Seed, Profile: e.Profile,
		RTol: e.RTol, ATol: e.ATol, Bisect: e.Bisect, Reference: e.Reference, Inputs: e.Inputs, Reports: reports}
	// The transforms apply to the conversions (convert, opset, target).
	tf := Spec{Optimize: e.Optimize, KeepIOTypes: e.KeepIOTypes && (e.FP16 || e.BF16), Quantize: e.Quantize}
	if e.FP16 {
		tf.Precision = "fp16"
	} else if e.BF16 {
		tf.Precision = "bf16"
	}
	if e.Quantize != "" {
		tf.PerChannel, tf.CalibrationMethod, tf.Calibration = e.PerChannel, e.CalibrationMethod, e.Calibration
	}
	transformed := tf.transforms() != ""
	prefix := ""
	if e.Name != "" {
		prefix = e.Name + ":"
	}
	mk := func(a Action, label string, opset int, target string) Job {
		s := base
		s.Action, s.Opset, s.Target = a, opset, target
		if a == ActionOpset || a == ActionTarget || a == ActionConvert {
			s.MLOpset = e.MLOpset
			s.Optimize, s.Precision, s.KeepIOTypes, s.Quantize = tf.Optimize, tf.Precision, tf.KeepIOTypes, tf.Quantize
			s.PerChannel, s.CalibrationMethod, s.Calibration = tf.PerChannel, tf.CalibrationMethod, tf.Calibration
			label += s.transforms()
		}
		if a == ActionPlan || a == ActionCheck {
			// Nothing is run: only the action and its opset matter.
			s = Spec{Action: a, Opset: opset, MLOpset: s.MLOpset}
		}
		if a == ActionReference {
			s.Verify = true
		}
		if a == ActionBench {
			// The model is run as it is, on the inputs given (the
			// folder's contents are hashed into the key too).
			b := *e.Bench
			s = Spec{Action: a, Inputs: e.Inputs, Reference: e.Reference, Bench: &b}
		}
		return Job{ID: prefix + model + " " + label, Model: model, Action: a, Opset: opset, MLOpset: s.MLOpset, Target: target,
			Spec: s, Reports: reports, KeepOutputs: e.KeepOutputs}
	}
	var jobs []Job
	if e.Convert || (transformed && len(e.Opset) == 0 && e.MLOpset == 0 && len(e.Targets) == 0) {
		jobs = append(jobs, mk(ActionConvert, "convert", 0, ""))
	}
	for _, o := range e.Opset {
		label := "opset=" + strconv.Itoa(o)
		if e.MLOpset != 0 {
			label += ",ml=" + strconv.Itoa(e.MLOpset)
		}
		jobs = append(jobs, mk(ActionOpset, label, o, ""))
	}
	if len(e.Opset) == 0 && e.MLOpset != 0 {
		jobs = append(jobs, mk(ActionOpset, "ml_opset="+strconv.Itoa(e.MLOpset), 0, ""))
	}
	for _, t := range e.Targets {
		jobs = append(jobs, mk(ActionTarget, "target="+t, 0, t))
	}
	for _, o := range e.Plan {
		jobs = append(jobs, mk(ActionPlan, "plan="+strconv.Itoa(o), o, ""))
	}
	if e.Check {
		jobs = append(jobs, mk(ActionCheck, "check", 0, ""))
	}
	if len(jobs) == 0 && e.Reference != "" {
		jobs = append(jobs, mk(ActionReference, "reference="+e.Reference, 0, ""))
	}
	if e.Bench != nil {
		jobs = append(jobs, mk(ActionBench, "bench", 0, ""))
	}
	return jobs
}

// Key names a job's files in the output folder: a hash of its ID.
func (j *Job) Key() string {
	h := sha256.Sum256([]byte(j.ID))
	return hex.EncodeToString(h[:10])
}
