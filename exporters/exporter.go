// Package exporters defines what an exporter is: the one interface every
// target format satisfies (exporters/onnx for ONNX runtime profiles,
// exporters/tflite for TFLite flatbuffers), and the Registry that finds the
// exporter of a target or an output file. The built-ins are listed, one
// line each, in exporters/builtin; pipeline names no format and reaches
// every target through this interface.
package exporters

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// FormatONNX is Description.Format of exporters whose result is an ONNX
// model (Result.Model), written by the caller.
const FormatONNX = "onnx"

// Description describes an exporter.
type Description struct {
	// Name identifies the exporter ("onnx", "tflite").
	Name string
	// Format is what it writes: FormatONNX (Result.Model) or the name of a
	// file format (Result.Bytes), such as "tflite".
	Format string
	// Targets are the target names it serves ("onnxruntime-1.17",
	// "tflite-float16"); DefaultTarget is used when the output file's
	// extension picked the exporter.
	Targets       []string
	DefaultTarget string
	// Extensions are the output file suffixes (with the dot) of a file
	// format; an output with one of them picks the exporter.
	Extensions []string
	// Calibrated are the targets whose export takes calibration samples
	// (Options.Calibration): int8 quantization.
	Calibrated []string
	// FuseOpsets are, per target, the ai.onnx opset whose operators the
	// optimization passes fuse into and the target runs in a faster form
	// of its own (ONNX Runtime's contrib ops: 23). For a model below it,
	// convert --optimize fuses on a copy at that opset, fits that copy
	// to the target there and then moves it back down.
	FuseOpsets map[string]int
}

// Options tune an export.
type Options struct {
	// Opset and MLOpset ask for those opsets within the target's range
	// (0: the target's choice).
	Opset, MLOpset int
	// AllowViolations exports even when the target does not support all
	// of the model (the result's warnings list the violations).
	AllowViolations bool
	// KeepIOLayout keeps the ONNX layout of a layout-changing target's
	// inputs and outputs.
	KeepIOLayout bool
	// Calibration are input samples of the model for a target that
	// quantizes (Description.Calibrated).
	Calibration [][]*canonical.Tensor
}

// IOLayout is how an input or output of an exported file (or of a source
// model) relates to the model's: the file's tensor is the model's
// transposed by Perm (nil: the same layout).
type IOLayout struct {
	Name string `json:"name"`
	Perm []int  `json:"perm,omitempty"`
}

// Result is an export.
type Result struct {
	// Model is the exported model of an ONNX exporter (the caller closes
	// it); Bytes the file of any other.
	Model *canonical.Model
	Bytes []byte
	// Applied are the facts of the export, one line each (what was
	// adapted, fused, folded); Warnings what the user should know.
	Applied, Warnings []string
	// Summary is one line for progress logs.
	Summary string
	// Inputs and Outputs give the layout of Bytes' inputs and outputs, in
	// the file's order, named as the model's.
	Inputs, Outputs []IOLayout
	// Runtime names the reference runtime that runs Bytes ("tflite"), ""
	// when none.
	Runtime string
	// Profile is the verification tolerance profile the export implies
	// ("fp16", "int8"), "" for none.
	Profile string
	// ExternalData asks the caller to save Model with external data.
	ExternalData bool
	// CalibrationUnused is set when a calibrated target did not use the
	// calibration samples (the model was already quantized and keeps its
	// own scales).
	CalibrationUnused bool
}

// Exporter writes a canonical model for a target. Implementations are safe
// for concurrent use and never change the model they are given.
type Exporter interface {
	Describe() Description
	// Export exports m for target (one of Describe().Targets). A model
	// the target cannot express is an error wrapping an *UnfitError.
	Export(ctx context.Context, m *canonical.Model, target string, opts Options) (*Result, error)
}

// UnfitError is a model that does not fit a target (an op it lacks, an
// opset out of its range): the model is valid, the target is the problem.
type UnfitError struct {
	Target string
	Err    error
}

func (e *UnfitError) Error() string { return e.Err.Error() }

func (e *UnfitError) Unwrap() error { return e.Err }

// Registry is an ordered set of exporters.
type Registry struct {
	list []Exporter
}

// NewRegistry returns a registry of exps; two exporters of the same name
// are an error.
func NewRegistry(exps ...Exporter) (*Registry, error) {
	r := &Registry{}
	for _, e := range exps {
		name := e.Describe().Name
		for _, x := range r.list {
			if strings.EqualFold(x.Describe().Name, name) {
				return nil, fmt.Errorf("exporters: two exporters named %q", name)
			}
		}
		r.list = append(r.list, e)
	}
	return r, nil
}

// All returns the exporters in order.
func (r *Registry) All() []Exporter { return slices.Clone(r.list) }

// Extensions lists the output file suffixes of the exporters that write a
// format other than ONNX, in order.
func (r *Registry) Extensions() []string {
	var out []string
	for _, e := range r.list {
		if d := e.Describe(); d.Format != FormatONNX {
			out = append(out, d.Extensions...)
		}
	}
	return out
}

// UsageError is a target or output path that no exporter (or two
// disagreeing ones) serve.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Find returns the exporter and the target for an output path and a
// target ("" for none): the exporter serving target, else the file-format
// exporter claiming out's extension (with its default target). It returns
// nil, "" when neither asks for an exporter (ONNX out, no target). A
// target whose exporter writes another kind of file than out names is a
// *UsageError.
func (r *Registry) Find(out, target string) (Exporter, string, error) {
	ext := strings.ToLower(filepath.Ext(out))
	var byExt Exporter
	for _, e := range r.list {
		if d := e.Describe(); d.Format != FormatONNX && slices.Contains(d.Extensions, ext) {
			byExt = e
			break
		}
	}
	if target == "" {
		if byExt == nil {
			return nil, "", nil
		}
		return byExt, byExt.Describe().DefaultTarget, nil
	}
	for _, e := range r.list {
		d := e.Describe()
		if !slices.Contains(d.Targets, target) {
			continue
		}
		switch {
		case d.Format == FormatONNX && byExt != nil:
			bd := byExt.Describe()
			return nil, "", &UsageError{fmt.Sprintf("%s is a %s file, but the target %s is an ONNX runtime: drop --target, or name a %s target (%s)",
				out, bd.Format, target, bd.Format, strings.Join(bd.Targets, ", "))}
		case d.Format != FormatONNX && !slices.Contains(d.Extensions, ext):
			return nil, "", &UsageError{fmt.Sprintf("target %s writes a %s file: name the output %s", target, d.Format, strings.Join(d.Extensions, " or "))}
		}
		return e, target, nil
	}
	return nil, "", nil
}

// FuseOpset is the opset at which the passes' fusions have the target's
// own form (Description.FuseOpsets), 0 for none.
func FuseOpset(e Exporter, target string) int { return e.Describe().FuseOpsets[target] }

// Calibrated tells whether the export for target takes calibration
// samples.
func Calibrated(e Exporter, target string) bool {
	return slices.Contains(e.Describe().Calibrated, target)
}
