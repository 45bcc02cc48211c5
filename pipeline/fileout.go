package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// exportFile exports result with the file-format exporter of the target
// (c.exp: TFLite, ...) as the output of the run: its candidate is the file
// run in the runtime it is made for (or, without that runtime, read back
// with the importer of its format, reported NOT VERIFIED), and it is
// written as the exporter made it.
func (c *converter) exportFile(ctx context.Context, result *canonical.Model) (*output, error) {
	d := c.exp.Describe()
	o := exporters.Options{Opset: c.opts.Opset, MLOpset: c.opts.MLOpset, AllowViolations: c.opts.AllowViolations, KeepIOLayout: c.opts.KeepIOLayout}
	var calibrated string
	if exporters.Calibrated(c.exp, c.expTarget) {
		calib, said, err := c.calibration(result, d.Name)
		if err != nil {
			return nil, err
		}
		o.Calibration, calibrated = calib, said
	}
	r, err := c.exp.Export(ctx, result, c.expTarget, o)
	if calibrated != "" && (r == nil || !r.CalibrationUnused) {
		c.res.Conversion.Applied = append(c.res.Conversion.Applied, calibrated)
	}
	if r != nil {
		c.exportFacts(r)
	}
	if err != nil {
		return nil, classifyExport(c.in, err)
	}
	c.timed("export")
	c.logf("%s", r.Summary)
	if r.Profile != "" {
		c.defaultProfile(r.Profile)
	}
	candidate := func(ctx context.Context) (*verify.Side, error) {
		dir, err := os.MkdirTemp("", "onnxconv-export-*")
		if err != nil {
			return nil, inputErr(fmt.Errorf("verifying the %s file: %w", d.Format, err))
		}
		// Removed with the run, after the runtime that loaded it.
		c.release = append(c.release, func() error { return os.RemoveAll(dir) })
		tmp := filepath.Join(dir, filepath.Base(c.out))
		if err := os.WriteFile(tmp, r.Bytes, 0o600); err != nil {
			return nil, inputErr(fmt.Errorf("verifying the %s file: %w", d.Format, err))
		}
		return c.fileSide(ctx, tmp, result, r, d.Format)
	}
	save := func(path string) error {
		if err := writeBytes(path, r.Bytes); err != nil {
			return inputErr(err)
		}
		return nil
	}
	return &output{candidate: candidate, save: save, what: fmt.Sprintf("%s, %d bytes", d.Format, len(r.Bytes))}, nil
}

// calibration returns the samples that calibrate a quantizing export: the
// --calibration folder, else 32 generated samples (as --quantize static
// does), and the line that says so for the report (the caller adds it when
// the export used them).
func (c *converter) calibration(m *canonical.Model, exporter string) ([][]*canonical.Tensor, string, error) {
	if dir := c.opts.Calibration; dir != "" {
		s, err := tensorio.LoadSamples(dir, "input", verify.GraphInputs(m), false)
		if err != nil {
			return nil, "", inputErr(fmt.Errorf("calibration: %w", err))
		}
		return s, fmt.Sprintf("%s int8: calibrated on %d sample(s) from %s", exporter, len(s), dir), nil
	}
	gen := verify.GenOptions{Dims: c.genDims(m)}
	var out [][]*canonical.Tensor
	for k := range 32 {
		s, err := verify.GenerateInputs(m, gen, 1000+k)
		if err != nil {
			return nil, "", inputErr(fmt.Errorf("%s: %s int8: generating calibration samples: %w (give a calibration folder: --calibration DIR)", c.in, exporter, err))
		}
		out = append(out, s)
	}
	return out, exporter + " int8: calibrated on 32 generated samples (no --calibration folder)", nil
}

func writeBytes(path string, data []byte) error {
	return canonical.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// fileSide is the exported file as the candidate of the comparison: run in
// the runtime it is made for (r.Runtime), its inputs and outputs permuted
// to and from the model's layout (r.Inputs, r.Outputs). Without that
// runtime, the file is read back with the importer of its format and run
// on the executor, and the facts say NOT VERIFIED.
func (c *converter) fileSide(ctx context.Context, path string, result *canonical.Model, r *exporters.Result, format string) (*verify.Side, error) {
	var err error
	if why := c.runtimeMissing(r.Runtime); why != "" {
		err = errors.New(why) // one line, with the install command
	} else if r.Runtime != "" {
		var setup *runtimes.Setup
		setup, err = runtimes.NewSetup([]string{r.Runtime}, 0, c.opts.Env.Runtimes)
		if err == nil {
			c.release = append(c.release, setup.Close)
			var side *verify.Side
			if side, err = setup.Side(0, path, result); err == nil {
				return &verify.Side{Name: c.out + " (" + r.Runtime + ")", Model: result, ComputedBy: setup.DescribeSide(0),
					Runner: newPermuting(side.Runner, nil, r.Inputs, r.Outputs, result.Graph.Outputs)}, nil
			}
		}
	} else {
		err = fmt.Errorf("the %s exporter names no runtime", c.exp.Describe().Name)
	}
	c.res.Notes = append(c.res.Notes, fmt.Sprintf("the %s runtime is not available (%v): the exported file was read back with onnxconv's %s importer and run on the executor", format, err, format))
	back, err2 := c.readBack(ctx, path, format)
	if err2 != nil {
		return nil, invalidErr(fmt.Errorf("%s: the exported %s file does not read back: %w", c.in, format, err2))
	}
	c.closers = append(c.closers, back)
	c.candidateNote = fmt.Sprintf("the %s file was not run in the %s runtime (install it: see 'onnxconv plugins'); it was checked by reading it back with onnxconv's own %s importer", format, format, format)
	return &verify.Side{Name: c.out + " (read back)", Model: back, ComputedBy: fmt.Sprintf("onnxconv's %s importer on the built-in executor (NOT the %s runtime)", format, format),
		Runner: newPermuting(nil, back, r.Inputs, r.Outputs, result.Graph.Outputs)}, nil
}

// readBack imports the exported file at path with the importer of format.
func (c *converter) readBack(ctx context.Context, path, format string) (*canonical.Model, error) {
	imp, err := c.opts.Env.Importers.Lookup(format)
	if err != nil {
		return nil, err
	}
	res, err := imp.Import(ctx, path, nil)
	if err != nil {
		return nil, err
	}
	return res.Model, nil
}
