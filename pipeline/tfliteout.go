package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	tfliteexp "github.com/onnxconv/onnxconv/exporters/tflite"
	tfliteimp "github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// isTFLiteTarget tells whether target names the TFLite exporter.
func isTFLiteTarget(target string) bool {
	return target == tfliteexp.Target || strings.HasPrefix(target, tfliteexp.Target+"-")
}

func tfliteTargets() []string { return append([]string{tfliteexp.Target}, tfliteexp.Profiles...) }

// toTFLite exports result as a TFLite flatbuffer, verifies the file in the
// TFLite runtime against the source (or, without the runtime, by reading
// it back with onnxconv's TFLite importer, reported NOT VERIFIED), and
// writes it to the output atomically.
func (c *converter) toTFLite(ctx context.Context, imported, result *canonical.Model) error {
	cv := &c.res.Conversion
	topts := c.tfliteOpts
	if topts.Int8 && topts.Calibration == nil {
		calib, err := c.tfliteCalibration(result)
		if err != nil {
			return err
		}
		topts.Calibration = calib
	}
	r, err := tfliteexp.Export(ctx, result, topts)
	if err != nil {
		return invalidErr(fmt.Errorf("%s: %w\nnothing was written", c.in, err))
	}
	c.timed("export")
	rep := r.Report
	cv.Applied = append(cv.Applied, "tflite: "+rep.Summary())
	cv.Applied = append(cv.Applied, rep.Fused...)
	for _, n := range rep.Notes {
		cv.Applied = append(cv.Applied, "note: "+n)
	}
	c.logf("tflite: %s", rep.Summary())
	if c.tfliteOpts.Float16 {
		c.defaultProfile("fp16")
	}
	if c.tfliteOpts.Int8 {
		c.defaultProfile("int8")
	}
	if c.opts.Verify != nil {
		dir, err := os.MkdirTemp("", "onnxconv-tflite-*")
		if err != nil {
			return inputErr(fmt.Errorf("verifying the TFLite file: %w", err))
		}
		defer os.RemoveAll(dir)
		tmp := filepath.Join(dir, filepath.Base(c.out))
		if err := os.WriteFile(tmp, r.Data, 0o600); err != nil {
			return inputErr(fmt.Errorf("verifying the TFLite file: %w", err))
		}
		cand, err := c.tfliteSide(ctx, tmp, result, rep)
		if err != nil {
			return err
		}
		if err := c.verify(ctx, imported, result, cand); err != nil {
			return err
		}
		if !c.res.Equivalent {
			if c.opts.KeepFailed {
				kept := keptName(c.out)
				if err := writeBytes(kept, r.Data); err != nil {
					return inputErr(fmt.Errorf("keeping the failed result: %w", err))
				}
				c.res.Kept = kept
			}
			return &Error{Kind: KindInvalid, Err: &NotEquivalentError{Input: c.in, Output: c.out, Kept: c.res.Kept, Result: c.res}}
		}
	}
	if err := writeBytes(c.out, r.Data); err != nil {
		return inputErr(err)
	}
	c.timed("write")
	c.res.Written = c.out
	c.logf("wrote %s (TFLite, %d bytes)", c.out, len(r.Data))
	return nil
}

// tfliteCalibration returns the samples that calibrate an int8 export:
// the --calibration folder, else 32 generated samples (as --quantize
// static does).
func (c *converter) tfliteCalibration(m *canonical.Model) ([][]*canonical.Tensor, error) {
	if dir := c.opts.Calibration; dir != "" {
		s, err := tensorio.LoadSamples(dir, "input", verify.GraphInputs(m), false)
		if err != nil {
			return nil, inputErr(fmt.Errorf("calibration: %w", err))
		}
		c.res.Conversion.Applied = append(c.res.Conversion.Applied, fmt.Sprintf("tflite int8: calibrated on %d sample(s) from %s", len(s), dir))
		return s, nil
	}
	gen := verify.GenOptions{Dims: c.genDims(m)}
	var out [][]*canonical.Tensor
	for k := range 32 {
		s, err := verify.GenerateInputs(m, gen, 1000+k)
		if err != nil {
			return nil, inputErr(fmt.Errorf("%s: tflite int8: generating calibration samples: %w (give a calibration folder: --calibration DIR)", c.in, err))
		}
		out = append(out, s)
	}
	c.res.Conversion.Applied = append(c.res.Conversion.Applied, "tflite int8: calibrated on 32 generated samples (no --calibration folder)")
	return out, nil
}

func writeBytes(path string, data []byte) error {
	return canonical.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// tfliteSide is the exported file as the candidate of the comparison: run
// in the TFLite runtime, its inputs and outputs permuted back to the ONNX
// layout. Without the runtime, the file is read back with onnxconv's own
// TFLite importer and run on the executor, and the facts say NOT VERIFIED.
func (c *converter) tfliteSide(ctx context.Context, path string, result *canonical.Model, rep *tfliteexp.Report) (*verify.Side, error) {
	setup, err := runtimes.NewSetup(ctx, []string{"tflite"}, 0, c.opts.Plugins)
	if err == nil {
		var side *verify.Side
		if side, err = setup.Side(0, path, result); err == nil {
			return &verify.Side{Name: c.out + " (tflite)", Model: result, Runner: permuted{inner: side.Runner, rep: rep, outs: result.Graph.Outputs}}, nil
		}
	}
	if rt, ok, lerr := localRuntime("tflite"); ok && lerr == nil {
		return &verify.Side{Name: c.out + " (tflite)", Model: result,
			Runner: permuted{inner: localRunner{rt: rt, path: path, m: result}, rep: rep, outs: result.Graph.Outputs}}, nil
	} else if ok {
		err = lerr
	}
	c.res.Notes = append(c.res.Notes, fmt.Sprintf("the TFLite runtime is not available (%v): the exported file was read back with onnxconv's TFLite importer and run on the executor", err))
	back, err2 := tfliteimp.New().Import(ctx, path, nil)
	if err2 != nil {
		return nil, invalidErr(fmt.Errorf("%s: the exported TFLite file does not read back: %w", c.in, err2))
	}
	c.closers = append(c.closers, back.Model)
	c.candidateNote = "the TFLite file was not run in the TFLite runtime (install it: see 'onnxconv plugins'); it was checked by reading it back with onnxconv's own TFLite importer"
	return &verify.Side{Name: c.out + " (read back)", Model: back.Model, Runner: permuted{rep: rep, outs: result.Graph.Outputs, model: back.Model}}, nil
}

// permuted runs a TFLite file whose inputs and outputs may be permuted
// from the ONNX layout (rep.Inputs/Outputs[i].Perm): ONNX-layout inputs in,
// ONNX-layout outputs out, in the ONNX model's output order.
type permuted struct {
	inner verify.Runner // the runtime; nil: model on the executor
	model *canonical.Model
	rep   *tfliteexp.Report
	outs  []*canonical.Value
}

func (p permuted) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	in := make([]*canonical.Tensor, len(inputs))
	for i, t := range inputs {
		in[i] = t
		if i < len(p.rep.Inputs) && p.rep.Inputs[i].Perm != nil {
			x, err := t.Transpose(p.rep.Inputs[i].Perm)
			if err != nil {
				return nil, fmt.Errorf("input %d to the TFLite layout: %w", i, err)
			}
			in[i] = x
		}
	}
	run := p.inner
	if run == nil {
		ex, err := executorFor(p.model)
		if err != nil {
			return nil, err
		}
		defer ex.Close()
		run = ex
	}
	got, err := run.Run(ctx, in)
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	for i, o := range p.rep.Outputs {
		byName[o.Name] = i
	}
	gotByName := map[string]*canonical.Tensor{}
	for _, t := range got {
		if t != nil && t.Name != "" {
			gotByName[t.Name] = t
		}
	}
	out := make([]*canonical.Tensor, len(p.outs))
	for i, v := range p.outs {
		j := i
		if k, ok := byName[v.Name]; ok {
			j = k
		}
		t := gotByName[v.Name]
		if t == nil && j < len(got) {
			t = got[j]
		}
		if t == nil {
			return nil, fmt.Errorf("the TFLite file has no output %q", v.Name)
		}
		if j < len(p.rep.Outputs) && p.rep.Outputs[j].Perm != nil {
			inv := make([]int, len(p.rep.Outputs[j].Perm))
			for a, b := range p.rep.Outputs[j].Perm {
				inv[b] = a
			}
			if t, err = t.Transpose(inv); err != nil {
				return nil, fmt.Errorf("output %q to the ONNX layout: %w", v.Name, err)
			}
		}
		t.Name = v.Name
		out[i] = t
	}
	return out, nil
}
