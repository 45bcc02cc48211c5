package verify

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/verify/errmap"
)

// SchemaVersion is the version of the JSON report (report.schema.json).
const SchemaVersion = 1

// Report is the result of Compare. Its JSON form is documented in
// docs/verify.md and verify/report.schema.json.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"`
	// Provenance says which run of which build made the report; set by
	// the caller (pipeline), nil when unknown.
	Provenance *Provenance `json:"provenance,omitempty"`
	// Conversion holds the conversion facts when the report verifies a
	// conversion's result; nil for a plain comparison.
	Conversion *Conversion `json:"conversion,omitempty"`
	A          SideInfo    `json:"a"`
	B          SideInfo    `json:"b"`
	// Equivalent is the verdict: every output of A has a counterpart in
	// B and every pair passed.
	Equivalent bool            `json:"equivalent"`
	Summary    string          `json:"summary"`
	Options    OptionsInfo     `json:"options"`
	Samples    int             `json:"samples"`
	Inputs     []InputInfo     `json:"inputs"`
	Outputs    []*OutputResult `json:"outputs"`
	// Unmatched lists outputs of A without a counterpart in B.
	Unmatched []string   `json:"unmatched"`
	Bisect    *Bisection `json:"bisect,omitempty"`
	// Decode says how a decoder with a KV cache was verified; nil for
	// single calls.
	Decode *DecodeInfo `json:"decode,omitempty"`
	// Map is the whole-graph error map (Options.Map).
	Map        *errmap.Map `json:"map,omitempty"`
	Notes      []string    `json:"notes"`
	DurationMS float64     `json:"duration_ms"`
}

// SideInfo describes one side of the comparison.
type SideInfo struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // "model" or "outputs"
	Opset int64  `json:"opset,omitempty"`
	Nodes int    `json:"nodes,omitempty"`
	// ComputedBy says what computed this side's outputs: the built-in
	// executor, a reference runtime, a direct predictor, stored outputs.
	ComputedBy string `json:"computed_by,omitempty"`
}

// OptionsInfo records the options that shaped the result.
type OptionsInfo struct {
	InputSource  string   `json:"input_source"` // "generated" or a folder
	Seed         uint64   `json:"seed"`
	Distribution string   `json:"distribution"`
	Profile      string   `json:"profile"`
	RTol         *float64 `json:"rtol"`
	ATol         *float64 `json:"atol"`
	ByOrder      bool     `json:"by_order"`
	Bisect       bool     `json:"bisect"`
	Map          bool     `json:"map,omitempty"`
}

// InputInfo describes one input as fed to both models.
type InputInfo struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// OutputResult is the comparison of one pair of outputs over all samples.
type OutputResult struct {
	Name   string  `json:"name"`
	BName  string  `json:"b_name"`
	Kind   string  `json:"kind"` // float, int, bool, string
	DType  string  `json:"dtype"`
	BDType string  `json:"b_dtype"`
	Shape  []int64 `json:"shape"`
	BShape []int64 `json:"b_shape"`
	Pass   bool    `json:"pass"`
	// Reason says why the output failed (empty when it passed).
	Reason     string    `json:"reason,omitempty"`
	Tolerance  Tolerance `json:"tolerance"`
	Elements   int64     `json:"elements"`
	Mismatched int64     `json:"mismatched"`
	// Ratio is the worst difference relative to the tolerance (<= 1
	// passes for floats, < 1 for integers): how far from, or how much
	// beyond, the tolerance the output is.
	Ratio      float64            `json:"ratio"`
	Float      *FloatMetrics      `json:"float,omitempty"`
	Exact      *ExactMetrics      `json:"exact,omitempty"`
	Classifier *ClassifierMetrics `json:"classifier,omitempty"`
	Drift      *Drift             `json:"drift,omitempty"`
}

// Tool names, as the report's "tool" field gives them.
const (
	ToolVerify  = "onnxconv verify"
	ToolConvert = "onnxconv convert"
)

// ToolName is the command the report is about: Tool as set, except that a
// report carrying Conversion facts is a "onnxconv convert" report (Compare
// sets "onnxconv verify"; the conversion pipeline adds Conversion later).
func (r *Report) ToolName() string {
	switch {
	case r.Conversion != nil && (r.Tool == "" || r.Tool == ToolVerify):
		return ToolConvert
	case r.Tool == "":
		return ToolVerify
	}
	return r.Tool
}

// Title says what was done: "onnxconv convert: model.tflite → model.onnx"
// when Conversion is set, else "onnxconv verify: a.onnx vs b.onnx".
func (r *Report) Title() string {
	if c := r.Conversion; c != nil {
		t := r.ToolName() + ": " + orUnknown(c.Source)
		if c.Output != "" {
			t += " → " + c.Output
		}
		return t
	}
	return r.ToolName() + ": " + r.A.Name + " vs " + r.B.Name
}

// reportJSON is Report without its methods, for MarshalJSON.
type reportJSON Report

// MarshalJSON writes the report with its derived tool name (see ToolName).
func (r Report) MarshalJSON() ([]byte, error) {
	c := reportJSON(r)
	c.Tool = r.ToolName()
	return json.Marshal(c)
}

func newReport(a, b *Side, o *Options) *Report {
	r := &Report{
		SchemaVersion: SchemaVersion, Tool: ToolVerify,
		A: sideInfo(a), B: sideInfo(b),
		Options: OptionsInfo{
			InputSource: o.InputSource, Seed: o.Gen.Seed, Distribution: o.Gen.Distribution,
			Profile: o.Profile, RTol: o.RTol, ATol: o.ATol, ByOrder: o.ByOrder, Bisect: o.Bisect, Map: o.Map,
		},
		Inputs: []InputInfo{}, Outputs: []*OutputResult{}, Unmatched: []string{}, Notes: []string{},
	}
	if r.Options.Distribution == "" {
		r.Options.Distribution = "normal"
	}
	if r.Options.Profile == "" {
		r.Options.Profile = "auto"
	}
	if r.Options.InputSource == "" && o.Inputs != nil {
		r.Options.InputSource = "given"
	}
	return r
}

func sideInfo(s *Side) SideInfo {
	si := SideInfo{Name: s.Name, Kind: "model", ComputedBy: s.ComputedBy}
	if si.ComputedBy == "" {
		switch {
		case s.Expected != nil || s.ExpectedValues != nil:
			si.ComputedBy = "stored outputs"
		case s.Runner == nil:
			si.ComputedBy = "the built-in executor"
		default:
			si.ComputedBy = "an external runtime"
		}
	}
	if s.Model == nil {
		si.Kind = "outputs"
		return si
	}
	si.Opset = s.Model.Opset("")
	if s.Model.Graph != nil {
		si.Nodes = len(s.Model.Graph.Nodes)
	}
	return si
}

// summary is a one-line verdict.
func (r *Report) summary() string {
	failed := 0
	for _, o := range r.Outputs {
		if !o.Pass {
			failed++
		}
	}
	var b strings.Builder
	if r.Equivalent {
		fmt.Fprintf(&b, "equivalent: %d output(s) within tolerance over %d sample(s)%s", len(r.Outputs), r.Samples, r.Decode.phrase())
	} else {
		fmt.Fprintf(&b, "not equivalent: %d of %d output(s) differ", failed, len(r.Outputs))
		if len(r.Unmatched) > 0 {
			fmt.Fprintf(&b, ", %d without counterpart (%s)", len(r.Unmatched), strings.Join(r.Unmatched, ", "))
		}
	}
	if bi := r.Bisect; bi != nil && bi.First != nil {
		fmt.Fprintf(&b, "; first divergent node %s (%s)", bi.First.Node, bi.First.OpType)
	}
	return b.String()
}

// worstFloat returns the largest max_abs over the float outputs.
func (r *Report) worstFloat() (string, float64) {
	name, w := "", -1.0
	for _, o := range r.Outputs {
		if o.Float != nil && o.Float.MaxAbs > w {
			name, w = o.Name, o.Float.MaxAbs
		}
	}
	return name, w
}
