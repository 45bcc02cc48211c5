// Package onnx is the ONNX exporter: it fits a canonical model to a target
// runtime profile (exporters/adapt, exporters/profiles) and writes it as
// .onnx, with external data when the model needs it.
//
// Export works on a model in memory and never changes its argument (it
// adapts a clone). ExportFile is load, Export, save: the one place where
// that sequence lives; the built-in "onnx-export" plugin (Plugin) and any
// file-based caller use it.
package onnx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/options"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// Name is the name of the built-in exporter plugin.
const Name = "onnx-export"

// largeModel is the size of tensor data from which the model is saved with
// external data (the protobuf limit is 2 GiB - 1; leave room for the graph).
const largeModel = canonical.MaxProtoSize - 64<<20

// Result is an exported model and what the adaptation did.
type Result struct {
	// Model is the adapted model, a new model (m is unchanged). The
	// caller closes it. It is nil when Export fails.
	Model *canonical.Model
	// Report says what was done and what the target does not support;
	// it is set whenever the model was examined, also on error.
	Report *adapt.Report
}

// Export adapts a copy of m to the target profile named target and returns
// it; m itself is not modified. It decides whether the result needs
// external data (Report.ExternalData: forced by opts.ExternalData, or
// tensor data over opts.ExternalAbove, by default just under the 2 GB
// protobuf limit).
//
// When the target does not support the adapted model the error wraps an
// *adapt.UnsupportedError (errors.As) and the Result, still returned,
// holds the Report but no Model, unless opts.AllowViolations is set and
// the conversion went through: then the model is returned with a nil
// error and the Report lists the violations. An unknown target is an
// *profiles.UnknownTargetError.
func Export(ctx context.Context, m *canonical.Model, target string, opts adapt.Options) (*Result, error) {
	if m == nil || m.Graph == nil {
		return nil, errors.New("export: model has no graph")
	}
	p, err := profiles.Get(target)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("export for %s: %w", p.Name, err)
	}
	c, err := m.Clone()
	if err != nil {
		return nil, fmt.Errorf("export for %s: copying the model: %w", p.Name, err)
	}
	r, err := adapt.Adapt(c, p, opts)
	if err == nil {
		err = ctx.Err() // Adapt does not watch ctx: honour a cancellation after it
	}
	if err != nil {
		var ue *adapt.UnsupportedError
		if !errors.As(err, &ue) || !opts.AllowViolations || r == nil || !r.Converted {
			c.Close()
			if r == nil {
				return nil, fmt.Errorf("export for %s: %w", p.Name, err)
			}
			return &Result{Report: r}, fmt.Errorf("export for %s: %w", p.Name, err)
		}
	}
	decideExternalData(r, c, opts)
	return &Result{Model: c, Report: r}, nil
}

// decideExternalData sets r.ExternalData.
func decideExternalData(r *adapt.Report, m *canonical.Model, opts adapt.Options) {
	limit := opts.ExternalAbove
	if limit <= 0 {
		limit = largeModel
	}
	size := dataSize(m)
	if size > limit {
		r.ExternalData = true
		r.Notes = append(r.Notes, fmt.Sprintf("tensor data is %d bytes, over %d (the 2 GB protobuf limit less room for the graph): saved with external data", size, limit))
	} else if opts.ExternalData {
		r.ExternalData = true
	}
}

// dataSize is the number of bytes of the initializers of m and of its
// subgraphs.
func dataSize(m *canonical.Model) int64 {
	var total int64
	_ = canonical.WalkGraphs(m.Graph, func(g *canonical.Graph, _ string) error {
		for _, v := range g.Initializers {
			if v.Const == nil {
				continue
			}
			if n, err := v.Const.ByteSize(); err == nil {
				total += n
			}
		}
		return nil
	})
	return total
}

// Option keys of ParseOptions, ExportFile and the plugin.
const (
	OptOpset           = "opset"            // force the ai.onnx opset (int)
	OptMLOpset         = "ml_opset"         // force the ai.onnx.ml opset (int)
	OptAllowViolations = "allow_violations" // write even when the target does not support everything (bool)
	OptExternalData    = "external_data"    // save tensor data in a file beside the model (bool)
)

// optionSet is every option of the exporter, with its parser (the one
// declarative option machinery of importers).
func optionSet() options.Set[adapt.Options] {
	return options.Set[adapt.Options]{Name: Name, Exporter: true, Options: []options.Option[adapt.Options]{
		options.Int(OptOpset, "", "force the ai.onnx opset (default: the target's)", func(o *adapt.Options) *int { return &o.Opset }),
		options.Int(OptMLOpset, "", "force the ai.onnx.ml opset (default: the target's)", func(o *adapt.Options) *int { return &o.MLOpset }),
		options.Bool(OptAllowViolations, "false", "write even when the target does not support everything", func(o *adapt.Options) *bool { return &o.AllowViolations }),
		options.Bool(OptExternalData, "false", "save tensor data in a file beside the model", func(o *adapt.Options) *bool { return &o.ExternalData }),
	}}
}

// OptionKeys returns the option keys ParseOptions knows, in order.
func OptionKeys() []string { return options.Names(optionSet().Specs()) }

// OptionError is a bad exporter option: an unknown key (Err nil, Known
// lists the keys) or a value that does not parse (Err says why).
type OptionError = options.Error

// ParseOptions reads the exporter options (keys Opt*: opset, ml_opset,
// allow_violations, external_data). An unknown key or a bad value is an
// *OptionError; keys are checked in sorted order, so the error is the
// same from run to run.
func ParseOptions(opts map[string]string) (adapt.Options, error) { return optionSet().Parse(opts) }

// SingleFileError is returned by the plugin's export when the adapted
// model needs external data, which a plugin (writing one file into the
// host's private folder) cannot write.
type SingleFileError struct {
	In, Target string
}

func (e *SingleFileError) Error() string {
	return fmt.Sprintf("%s for target %s: the adapted model needs external data (over the 2 GiB protobuf limit, or asked for); the %s plugin writes one file: export in process (exporters/onnx.ExportFile) or use `onnxconv opset` and `convert --external-data`",
		e.In, e.Target, Name)
}

// ExportFile loads the model at inPath, exports it for target with the
// options of ParseOptions and saves the result atomically at outPath
// (creating its folder), with external data in outPath+".data" beside it
// when needed. It returns the warnings for people: the report's lines (a
// group of nodes on one line), the violations written anyway under
// allow_violations, and a summary line. Nothing is written on error.
func ExportFile(ctx context.Context, inPath, outPath, target string, opts map[string]string) ([]string, error) {
	return exportFile(ctx, inPath, outPath, target, opts, false)
}

func exportFile(ctx context.Context, inPath, outPath, target string, opts map[string]string, oneFile bool) ([]string, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	m, err := canonical.Load(inPath, canonical.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", inPath, err)
	}
	defer m.Close()
	res, err := Export(ctx, m, target, o)
	if err != nil {
		var warnings []string
		if res != nil && res.Report != nil {
			// The error lists the violations: warn about the rest.
			rr := *res.Report
			rr.Violations = nil
			for _, v := range res.Report.Violations {
				if v.Warning {
					rr.Violations = append(rr.Violations, v)
				}
			}
			warnings = rr.Lines()
		}
		return warnings, fmt.Errorf("export %s: %w", inPath, err)
	}
	warnings := Warnings(res.Report)
	defer res.Model.Close()
	r := res.Report
	if r.ExternalData && oneFile {
		return warnings, &SingleFileError{In: inPath, Target: r.Profile}
	}
	so := canonical.SaveOptions{ExternalData: r.ExternalData, ExternalThreshold: o.ExternalThreshold}
	if so.ExternalData {
		so.ExternalFile = filepath.Base(outPath) + ".data"
	}
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err != nil {
		return warnings, fmt.Errorf("export %s: %w", outPath, err)
	}
	if err := canonical.Save(outPath, res.Model, so); err != nil {
		return warnings, fmt.Errorf("export %s for %s: %w", outPath, r.Profile, err)
	}
	return warnings, nil
}

// Warnings are the lines a user sees of r: its Lines (actions, notes,
// warnings and, when the model was written anyway, its violations) and the
// header as the last line ("target X: opset a -> b, IR c -> d").
func Warnings(r *adapt.Report) []string {
	return append(r.Lines(), r.Header())
}

// Plugin returns the exporter served as the built-in plugin "onnx-export"
// (version is the version it reports). Its warnings are ExportFile's,
// through sdk.Warn; it refuses a model that needs external data
// (*SingleFileError).
func Plugin(version string) *sdk.Exporter {
	names, err := profiles.Names()
	if err != nil || len(names) == 0 {
		// Without profiles the exporter still validates; Export reports
		// the cause.
		names = []string{"onnxruntime"}
	}
	return &sdk.Exporter{
		Name: Name, Version: version,
		Description: "ONNX for a target runtime: opset, operators and IR version fitted to the target profile (exporters/onnx)",
		Targets:     names,
		ExportFile: func(ctx context.Context, inPath, outPath, target string, opts map[string]string) error {
			warnings, err := exportFile(ctx, inPath, outPath, target, opts, true)
			for _, w := range warnings {
				sdk.Warn(ctx, "%s", w)
			}
			return err
		},
	}
}
