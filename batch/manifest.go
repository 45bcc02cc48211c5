// Package batch runs onnxconv jobs over model collections: a manifest
// (YAML or JSON) lists models by path or glob and what to do with each;
// the jobs are spread over shards deterministically (a stable hash,
// balanced by file size), with the shard taken from the environment of the
// common schedulers (Kubernetes Indexed Jobs, GitLab parallel jobs, Slurm
// arrays, a GitHub Actions matrix value); each job's result is one JSON
// line written atomically to the output folder, so a shard that is killed
// and restarted resumes where it stopped; a content-hash cache skips work
// already done; Merge joins the output folders of every shard into one
// report (HTML, Markdown, JUnit, JSON).
//
// The work itself is done by package pipeline (Opset, Convert, Plan) and
// the canonical checker: batch only decides what runs where, and records
// what happened. There is no server: every shard is an ordinary process.
package batch

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed manifest.schema.json
var manifestSchema []byte

// ManifestSchema returns the JSON Schema (draft 2020-12) of the manifest
// (docs/batch.schema.json holds the same text).
func ManifestSchema() []byte { return bytes.Clone(manifestSchema) }

// Ints is one integer or a list of them.
type Ints []int

// UnmarshalJSON accepts 11 as well as [11, 17].
func (v *Ints) UnmarshalJSON(b []byte) error {
	var one int
	if err := json.Unmarshal(b, &one); err == nil {
		*v = Ints{one}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*v = many
	return nil
}

// Strings is one string or a list of them.
type Strings []string

// UnmarshalJSON accepts "a" as well as ["a", "b"].
func (v *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*v = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*v = many
	return nil
}

// Entry is one item of the manifest's jobs list (see
// docs/batch.schema.json for every field).
type Entry struct {
	Name    string  `json:"name,omitempty"`
	Models  Strings `json:"models"`
	Exclude Strings `json:"exclude,omitempty"`

	Opset   Ints    `json:"opset,omitempty"`
	MLOpset int     `json:"ml_opset,omitempty"`
	Targets Strings `json:"targets,omitempty"`
	Plan    Ints    `json:"plan,omitempty"`
	Check   bool    `json:"check,omitempty"`
	// Convert converts each model to ONNX as it is (no opset or target
	// change), verified against its source unless Verify is false.
	Convert bool `json:"convert,omitempty"`
	// Optimize, FP16/BF16 and Quantize transform the result of every
	// convert, opset and target job of the entry as onnxconv convert's
	// --optimize, --fp16/--bf16 and --quantize do (an entry with only
	// these converts). Calibration is a folder of samples for static
	// quantization, relative to each model's folder.
	Optimize          bool   `json:"optimize,omitempty"`
	FP16              bool   `json:"fp16,omitempty"`
	BF16              bool   `json:"bf16,omitempty"`
	KeepIOTypes       bool   `json:"keep_io_types,omitempty"`
	Quantize          string `json:"quantize,omitempty"`
	PerChannel        bool   `json:"per_channel,omitempty"`
	CalibrationMethod string `json:"calibration_method,omitempty"`
	Calibration       string `json:"calibration,omitempty"`
	// Bench times each model on the built-in executor (true: the
	// defaults of BenchSpec).
	Bench *BenchSpec `json:"bench,omitempty"`

	// Verify defaults to true.
	Verify    *bool  `json:"verify,omitempty"`
	Reference string `json:"reference,omitempty"`
	Inputs    string `json:"inputs,omitempty"`
	From      string `json:"from,omitempty"`

	Samples int      `json:"samples,omitempty"`
	Seed    uint64   `json:"seed,omitempty"`
	Profile string   `json:"profile,omitempty"`
	RTol    *float64 `json:"rtol,omitempty"`
	ATol    *float64 `json:"atol,omitempty"`
	Bisect  bool     `json:"bisect,omitempty"`

	Reports     []string `json:"reports,omitempty"`
	KeepOutputs bool     `json:"keep_outputs,omitempty"`
}

// BenchSpec is what a bench job measures: Warmup untimed runs (the first
// compiles), then Reps timed runs, on the executor held to Threads kernel
// threads (0: all cores), and on Runtime (a runtime plugin, e.g.
// "onnxruntime") side by side when it is set. The manifest gives it as
// `bench: {reps: 20, warmup: 2, threads: 1}` or `bench: true`.
type BenchSpec struct {
	Reps    int    `json:"reps"`
	Warmup  int    `json:"warmup"`
	Threads int    `json:"threads"`
	Runtime string `json:"runtime,omitempty"`
}

// The settings of `bench: true`, and of the keys a bench object leaves
// out (those of onnxconv bench).
const (
	DefaultBenchReps   = 20
	DefaultBenchWarmup = 2
)

// UnmarshalJSON accepts true (the defaults) as well as an object, whose
// missing keys take the defaults.
func (b *BenchSpec) UnmarshalJSON(data []byte) error {
	var on bool
	if err := json.Unmarshal(data, &on); err == nil {
		if !on {
			return errors.New("bench: false is not an action; leave bench out")
		}
		*b = BenchSpec{Reps: DefaultBenchReps, Warmup: DefaultBenchWarmup}
		return nil
	}
	type plain BenchSpec
	v := plain{Reps: DefaultBenchReps, Warmup: DefaultBenchWarmup}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*b = BenchSpec(v)
	return nil
}

// Manifest is a parsed manifest. Dir is the folder its paths are relative
// to (the manifest file's folder).
type Manifest struct {
	Version int     `json:"version,omitempty"`
	Jobs    []Entry `json:"jobs"`
	Dir     string  `json:"-"`
	// Path is the manifest file ("" when parsed from bytes).
	Path string `json:"-"`
	// AllowOutside lets model patterns, reference and inputs folders
	// lead outside Dir (absolute, "..", or through a symbolic link);
	// otherwise Expand refuses them with an *OutsideError
	// (`onnxconv batch --allow-outside`).
	AllowOutside bool `json:"-"`
}

// ManifestError is a manifest that cannot be read or is not valid. Field
// is the JSON pointer of the offending value ("/jobs/0/opset"), when
// known.
type ManifestError struct {
	Path  string
	Field string
	Err   error
}

func (e *ManifestError) Error() string {
	s := e.Path
	if s == "" {
		s = "manifest"
	}
	if e.Field != "" {
		s += " at " + e.Field
	}
	return s + ": " + e.Err.Error() + " (see docs/batch.schema.json)"
}

func (e *ManifestError) Unwrap() error { return e.Err }

// LoadManifest reads the manifest at path (YAML, or JSON which is YAML
// too), checks it against the schema and returns it with Dir set to its
// folder. Errors are *ManifestError.
func LoadManifest(path string) (*Manifest, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &ManifestError{Path: path, Err: err}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &ManifestError{Path: path, Err: err}
	}
	m, err := ParseManifest(src, filepath.Dir(abs))
	if err != nil {
		var me *ManifestError
		if errors.As(err, &me) {
			me.Path = path
		}
		return nil, err
	}
	m.Path = path
	return m, nil
}

// ParseManifest parses a manifest (YAML or JSON) whose paths are relative
// to dir.
func ParseManifest(src []byte, dir string) (*Manifest, error) {
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, &ManifestError{Err: fmt.Errorf("not YAML or JSON: %w", err)}
	}
	// YAML to the JSON data model: the schema and the struct read that.
	js, err := json.Marshal(jsonValue(doc))
	if err != nil {
		return nil, &ManifestError{Err: fmt.Errorf("not representable as JSON: %w", err)}
	}
	if err := validateSchema(js); err != nil {
		return nil, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, &ManifestError{Err: err}
	}
	m.Dir = dir
	return &m, nil
}

// jsonValue turns what yaml.v3 decodes (map[string]any, map[any]any for
// odd keys) into JSON-marshalable values.
func jsonValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v
}

// validateSchema checks the JSON form of a manifest against the schema.
func validateSchema(js []byte) error {
	sch, err := compiledSchema()
	if err != nil {
		return &ManifestError{Err: fmt.Errorf("the manifest schema does not compile: %w", err)}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return &ManifestError{Err: err}
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			leaf := ve
			for len(leaf.Causes) > 0 {
				leaf = leaf.Causes[0]
			}
			return &ManifestError{Field: "/" + strings.Join(leaf.InstanceLocation, "/"), Err: fmt.Errorf("%s", leaf.ErrorKind.LocalizedString(message.NewPrinter(language.English)))}
		}
		return &ManifestError{Err: err}
	}
	return nil
}

// compiledSchema compiles the embedded schema (cheap; done per manifest,
// so no package state is kept).
func compiledSchema() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(manifestSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "batch.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Glob returns the regular files under dir that pattern matches, sorted,
// as slash-separated paths relative to dir (or absolute when pattern is).
// Pattern segments are path.Match patterns; a "**" segment matches any
// number of folders. A pattern without metacharacters names one file.
func Glob(dir, pattern string) ([]string, error) {
	pattern = filepath.ToSlash(pattern)
	root := dir
	rel := pattern
	if path.IsAbs(pattern) {
		root, rel = "/", strings.TrimPrefix(pattern, "/")
	}
	segs := strings.Split(path.Clean(rel), "/")
	// The literal prefix is walked to directly.
	i := 0
	for i < len(segs)-1 && !hasMeta(segs[i]) {
		i++
	}
	prefix := path.Join(segs[:i]...)
	base := filepath.Join(root, filepath.FromSlash(prefix))
	rest := segs[i:]
	for _, s := range rest {
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	var out []string
	name := func(p string) string {
		r := path.Join(prefix, p)
		if root == "/" {
			return "/" + r
		}
		return r
	}
	if len(rest) == 1 && !hasMeta(rest[0]) {
		p := filepath.Join(base, rest[0])
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.Mode().IsRegular() {
			out = append(out, name(rest[0]))
		}
		return out, nil
	}
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() && p != base && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		r, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		if matchSegs(rest, strings.Split(filepath.ToSlash(r), "/")) {
			out = append(out, name(filepath.ToSlash(r)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[\\") }
