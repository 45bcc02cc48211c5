package verify

import (
	"encoding/json"
	"time"
)

// Provenance says which tool run made a report: every report (JSON,
// Markdown, HTML, JUnit) shows it.
type Provenance struct {
	// Tool is "onnxconv".
	Tool string `json:"tool"`
	// Version and Revision come from the build (package version).
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	// Command is the command line (os.Args) of the run, or a description
	// of the library call that made the report.
	Command []string `json:"command,omitempty"`
	// Time is when the run started.
	Time time.Time `json:"time"`
}

// Conversion is what a conversion did before its result was verified: the
// facts a reader of the report needs to judge it.
type Conversion struct {
	// Source is the input file, Output the file written (or to be
	// written).
	Source string `json:"source"`
	Output string `json:"output,omitempty"`
	// SourceFormat is the format the input was read as; Importer the
	// importer that read it.
	SourceFormat string `json:"source_format"`
	Importer     string `json:"importer"`
	// Target is the runtime profile the result was fitted to, if any.
	Target string `json:"target,omitempty"`
	// Reference says what computed the source the result was compared
	// with ("xgboost trees, direct Go predictor", "onnxruntime 1.30.0",
	// "the source ONNX model on the built-in executor").
	Reference string `json:"reference,omitempty"`
	// NotVerified, when set, says why the result was not compared with
	// its source ("no reference runtime for format csvgraph; install …"):
	// the result was only run once and checked for NaN, Inf and missing
	// outputs.
	NotVerified string `json:"not_verified,omitempty"`
	// RanIn names the runtime the result itself was run in where it will
	// run ("onnxruntime 1.30.0 (…)"), and NotRunIn says why it was not
	// (the runtime is not installed, the target is another runtime): a
	// report never shows a verdict without saying whether the result was
	// ever loaded by its target.
	RanIn    string `json:"ran_in,omitempty"`
	NotRunIn string `json:"not_run_in,omitempty"`
	// Opsets and IR versions before (as imported) and after.
	OpsetBefore   int64 `json:"opset_before"`
	OpsetAfter    int64 `json:"opset_after"`
	MLOpsetBefore int64 `json:"ml_opset_before,omitempty"`
	MLOpsetAfter  int64 `json:"ml_opset_after,omitempty"`
	IRBefore      int64 `json:"ir_before"`
	IRAfter       int64 `json:"ir_after"`
	// Applied lists every adapter and expansion applied, one line each
	// ("Gelu \"blk.gelu\": expanded into Erf/Mul/Add (opset 17 lacks Gelu)").
	Applied []string `json:"applied"`
	// Warnings are the importer's and the adaptation's warnings.
	Warnings []string `json:"warnings"`
	// Timings are the steps of the run with their durations.
	Timings []Timing `json:"timings"`
	// SourceSHA256 and OutputSHA256 are the SHA-256 of the source file
	// and of the file written (Output), hex; empty when not a single
	// file or not written.
	SourceSHA256 string `json:"source_sha256,omitempty"`
	OutputSHA256 string `json:"output_sha256,omitempty"`
}

// Timing is one step of a run and how long it took.
type Timing struct {
	Step string  `json:"step"`
	MS   float64 `json:"ms"`
}

// conversionJSON is Conversion without its methods, for MarshalJSON.
type conversionJSON Conversion

// MarshalJSON writes nil lists as empty arrays, as the schema requires.
func (c Conversion) MarshalJSON() ([]byte, error) {
	x := conversionJSON(c)
	if x.Applied == nil {
		x.Applied = []string{}
	}
	if x.Warnings == nil {
		x.Warnings = []string{}
	}
	if x.Timings == nil {
		x.Timings = []Timing{}
	}
	return json.Marshal(x)
}
