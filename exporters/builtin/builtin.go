// Package builtin lists the exporters built into onnxconv, one line each in
// Exporters: a new target format costs one exporter package and one line
// here.
package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/exporters"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	onnxexp "github.com/onnxconv/onnxconv/exporters/onnx"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/exporters/tflite"
)

// Exporters returns the built-in exporters.
func Exporters() []exporters.Exporter {
	return []exporters.Exporter{
		onnxExporter{},
		tfliteExporter{},
	}
}

// Registry returns a registry of the built-in exporters (their names
// differ, so none is refused).
func Registry() *exporters.Registry {
	r, err := exporters.NewRegistry(Exporters()...)
	if err != nil {
		return &exporters.Registry{}
	}
	return r
}

// onnxExporter fits a model to an ONNX runtime profile (exporters/onnx).
type onnxExporter struct{}

// Describe decodes the embedded profiles once (profiles.All): asking
// profiles.Get for each name decoded all of them again per name, which
// was most of the CLI's start-up CPU and its garbage collections (the
// registry describes each exporter more than once). Profile names are
// unique without regard to case, so each profile is the one Get finds
// by its name.
func (onnxExporter) Describe() exporters.Description {
	all, _ := profiles.All() // the profiles are embedded: no error
	names := make([]string, len(all))
	fuse := map[string]int{}
	for i, p := range all {
		names[i] = p.Name
		if c := adapt.ContribOpset(p); c > 0 {
			fuse[p.Name] = c
		}
	}
	return exporters.Description{Name: "onnx", Format: exporters.FormatONNX, Targets: names, FuseOpsets: fuse}
}

func (onnxExporter) Export(ctx context.Context, m *canonical.Model, target string, o exporters.Options) (*exporters.Result, error) {
	r, err := onnxexp.Export(ctx, m, target, adapt.Options{Opset: o.Opset, MLOpset: o.MLOpset, AllowViolations: o.AllowViolations})
	res := &exporters.Result{}
	if r != nil && r.Report != nil {
		res.Applied, res.Warnings = r.Report.Facts()
		rep := r.Report
		res.Summary = fmt.Sprintf("target %s: opset %d -> %d, IR %d -> %d", target, rep.FromOpset, rep.ToOpset, rep.FromIRVersion, rep.ToIRVersion)
		res.ExternalData = rep.ExternalData
		res.Profile = rep.Tolerance
	}
	if err != nil {
		// a target's violations and a blocked conversion are both the one
		// unsupported-op shape
		var ue *unsupported.OpsError
		if errors.As(err, &ue) {
			err = &exporters.UnfitError{Target: target, Err: err}
		}
		return res, err
	}
	res.Model = r.Model
	return res, nil
}

// tfliteExporter writes TFLite flatbuffers (exporters/tflite), NHWC inside.
type tfliteExporter struct{}

func (tfliteExporter) Describe() exporters.Description {
	return exporters.Description{
		Name: tflite.Target, Format: "tflite",
		Targets:       append([]string{tflite.Target}, tflite.Profiles...),
		DefaultTarget: tflite.Target,
		Extensions:    []string{".tflite"},
		Calibrated:    []string{"tflite-int8"},
	}
}

func (tfliteExporter) Export(ctx context.Context, m *canonical.Model, target string, o exporters.Options) (*exporters.Result, error) {
	topts, err := tflite.OptionsForProfile(target)
	if err != nil {
		return nil, err
	}
	topts.KeepNCHWIO = o.KeepIOLayout
	topts.Calibration = o.Calibration
	r, err := tflite.Export(ctx, m, topts)
	if err != nil {
		return nil, &exporters.UnfitError{Target: target, Err: err}
	}
	rep := r.Report
	res := &exporters.Result{Bytes: r.Data, Runtime: "tflite", Summary: "tflite: " + rep.Summary()}
	res.Applied = append(res.Applied, "tflite: "+rep.Summary())
	res.Applied = append(res.Applied, rep.Fused...)
	for _, n := range rep.Notes {
		res.Applied = append(res.Applied, "note: "+n)
	}
	for _, io := range rep.Inputs {
		res.Inputs = append(res.Inputs, exporters.IOLayout{Name: io.Name, Perm: io.Perm})
	}
	for _, io := range rep.Outputs {
		res.Outputs = append(res.Outputs, exporters.IOLayout{Name: io.Name, Perm: io.Perm})
	}
	switch {
	case topts.Float16:
		res.Profile = "fp16"
	case topts.Int8 || rep.Int8 != nil: // calibrated, or a QDQ model's own quantization
		res.Profile = "int8"
	}
	res.CalibrationUnused = rep.Int8 != nil && rep.Int8.FromModel
	return res, nil
}
