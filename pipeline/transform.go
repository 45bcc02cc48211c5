package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/opset/convert"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/errmap"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// TransformOptions are the options Optimize, Float16 and Quantize share.
type TransformOptions struct {
	// Inputs is a folder of verification input samples; "" generates
	// Samples of them from Seed.
	Inputs  string
	Samples int
	Seed    uint64
	// Unchecked applies the transform without checking it on the
	// executor (Optimize and Float16) and writes a quantized result that
	// is not equivalent (Quantize).
	Unchecked bool
	// Report, when set, receives the transform's report as JSON.
	Report string
	// Force lets out replace in.
	Force bool
	// Dims sets the symbolic dims of generated inputs (NAME or
	// INPUT:AXIS); unset ones are 1 (64 rows for a tabular input).
	Dims map[string]int64
	// Importers name the format of an input that is not ONNX (see
	// LoadOptions); Exporters, when set, the file formats Convert writes,
	// for the refusal of an output in one of them.
	Importers *importers.Registry
	Exporters *exporters.Registry
	// Runtimes are the reference runtimes; QuantizedForm verifies in its
	// ONNX Runtime (nil: none).
	Runtimes *runtimes.Set
	// Map builds the error map of a checked result against the input
	// (both on the executor, the first sample, the check's tolerance)
	// into the report's Map: every intermediate tensor compared, a
	// quantized one in steps against the input's float quantized alike.
	Map bool
}

// gen returns the options of m's generated inputs.
func (o TransformOptions) gen(m *canonical.Model) verify.GenOptions {
	return verify.GenOptions{Seed: o.Seed, Dims: defaultDims(m, o.Dims, func(string, ...any) {})}
}

// Optimize runs the graph passes ps over the model in and writes the
// result to out: each pass checked on the executor against the model
// before it and rolled back when it changes an output (unless
// o.Unchecked). A result not equivalent to in is not written.
func Optimize(ctx context.Context, in, out string, ps []passes.Pass, ro passes.RunOptions, o TransformOptions) (*passes.Report, error) {
	return transform(in, out, o, func(m *canonical.Model) (*canonical.Model, *passes.Report, error) {
		if !o.Unchecked {
			c, err := o.check(m)
			if err != nil {
				return nil, nil, err
			}
			ro.Check = c
		}
		res, rep, err := passes.Run(ctx, m, ps, ro)
		if err != nil {
			return nil, nil, invalidErr(fmt.Errorf("optimize %s: %w", in, err))
		}
		if rep.Map, err = o.errorMap(ctx, m, res, rep.Final); err != nil {
			_ = res.Close()
			return nil, nil, fmt.Errorf("optimize %s: %w", in, err)
		}
		if err := o.writeReport(rep); err != nil {
			return res, nil, err
		}
		if rep.Final != nil && !rep.Final.Equivalent {
			return res, rep, invalidErr(fmt.Errorf("optimize %s: the result is not equivalent to the input: %s; nothing was written", in, rep.Final.Summary))
		}
		return res, rep, nil
	})
}

// Float16 converts the model in to float16 (or bfloat16) with the
// automatic float32 fallback (unless o.Unchecked) and writes it to out;
// nodes ONNX Runtime's CPU kernels (profiles.Default) do not run in the
// low type stay float32 unless fo.Runs says otherwise. A
// result still not within tolerance is not written; its report is
// returned with the error.
func Float16(ctx context.Context, in, out string, fo passes.FP16Options, o TransformOptions) (*passes.FP16Report, error) {
	return transform(in, out, o, func(m *canonical.Model) (*canonical.Model, *passes.FP16Report, error) {
		if !o.Unchecked {
			c, err := o.check(m)
			if err != nil {
				return nil, nil, err
			}
			fo.Check = c
		}
		if fo.Runs == nil {
			runs, err := kernelRuns("")
			if err != nil {
				return nil, nil, err
			}
			fo.Runs = runs
		}
		res, rep, err := passes.Float16(ctx, m, fo)
		if err != nil {
			return nil, nil, invalidErr(fmt.Errorf("fp16 %s: %w", in, err))
		}
		if rep.Map, err = o.errorMap(ctx, m, res, rep.Final); err != nil {
			_ = res.Close()
			return nil, nil, fmt.Errorf("fp16 %s: %w", in, err)
		}
		if err := o.writeReport(rep); err != nil {
			return res, nil, err
		}
		if !rep.Equivalent {
			return res, rep, invalidErr(fmt.Errorf("fp16 %s: still not within tolerance after %d rounds: %s; nothing was written", in, rep.Rounds, rep.Final.Summary))
		}
		return res, rep, nil
	})
}

// Quantize quantizes the model in to int8 QDQ and writes it to out. The
// calibration samples of static mode come from the folder calibration, or
// are calibSamples generated ones from o.Seed; held samples from
// o.Inputs (default: the calibration samples).
func Quantize(ctx context.Context, in, out string, qo passes.QuantOptions, calibration string, calibSamples int, o TransformOptions) (*passes.QuantReport, error) {
	// Unchecked also skips measuring the accuracy change: that run holds
	// float copies of the weights (issue 39).
	qo.Unmeasured = qo.Unmeasured || o.Unchecked
	return transform(in, out, o, func(m *canonical.Model) (*canonical.Model, *passes.QuantReport, error) {
		var err error
		if qo.Mode == passes.Int4 {
			return quantizeInt4(ctx, in, m, qo, o)
		}
		if calibration != "" {
			if qo.Calibration, err = tensorio.LoadSamples(calibration, "input", verify.GraphInputs(m), false); err != nil {
				return nil, nil, inputErr(fmt.Errorf("quantize: --calibration: %w", err))
			}
		} else if qo.Mode == passes.Static || !qo.Unmeasured {
			// Dynamic mode calibrates nothing: its samples only measure.
			for s := range calibSamples {
				in, err := verify.GenerateInputs(m, o.gen(m), s)
				if err != nil {
					return nil, nil, inputErr(fmt.Errorf("quantize: generating calibration inputs: %w", err))
				}
				qo.Calibration = append(qo.Calibration, in)
			}
		}
		if o.Inputs != "" {
			if qo.Held, err = tensorio.LoadSamples(o.Inputs, "input", verify.GraphInputs(m), false); err != nil {
				return nil, nil, inputErr(fmt.Errorf("quantize: --inputs: %w", err))
			}
		}
		return quantized(ctx, in, m, qo, o, "int8")
	})
}

// quantized runs the quantizer, writes its report and refuses a result
// that is not equivalent within profile (unless unchecked).
func quantized(ctx context.Context, in string, m *canonical.Model, qo passes.QuantOptions, o TransformOptions, profile string) (*canonical.Model, *passes.QuantReport, error) {
	res, rep, err := passes.Quantize(ctx, m, qo)
	if err != nil {
		return nil, nil, invalidErr(fmt.Errorf("quantize %s: %w", in, err))
	}
	if rep.Map, err = o.errorMap(ctx, m, res, rep.Final); err != nil {
		_ = res.Close()
		return nil, nil, fmt.Errorf("quantize %s: %w", in, err)
	}
	if err := o.writeReport(rep); err != nil {
		return res, rep, err
	}
	if !o.Unchecked && rep.Final != nil && !rep.Final.Equivalent {
		return res, rep, invalidErr(fmt.Errorf("quantize %s: the result is not equivalent to the input within the %s profile: %s; nothing was written (--no-verify writes it anyway)", in, profile, rep.Final.Summary))
	}
	return res, rep, nil
}

// quantizeInt4 is Quantize in int4 mode: weight-only, so nothing is
// calibrated; an int4 QDQ result needs opset 21, to which a model below it
// is converted first.
func quantizeInt4(ctx context.Context, in string, m *canonical.Model, qo passes.QuantOptions, o TransformOptions) (*canonical.Model, *passes.QuantReport, error) {
	var err error
	if o.Inputs != "" {
		if qo.Held, err = tensorio.LoadSamples(o.Inputs, "input", verify.GraphInputs(m), false); err != nil {
			return nil, nil, inputErr(fmt.Errorf("quantize: --inputs: %w", err))
		}
	}
	if qo.Format == passes.Int4QDQ && m.Opset("") > 0 && m.Opset("") < int4QDQOpset {
		up, err := m.Clone()
		if err != nil {
			return nil, nil, fmt.Errorf("quantize %s: %w", in, err)
		}
		defer func() { _ = up.Close() }()
		if _, err := adapt.Opset(up, convert.Options{To: int4QDQOpset}); err != nil {
			return nil, nil, invalidErr(fmt.Errorf("quantize %s: int4 QDQ needs opset %d: %w", in, int4QDQOpset, err))
		}
		m = up
	}
	return quantized(ctx, in, m, qo, o, "int4")
}

// int4QDQOpset is the opset of INT4 and blockwise DequantizeLinear.
const int4QDQOpset = 21

// transform loads in (refusing an out that would replace it without
// Force), runs fn and saves its result to out when fn succeeds, with
// external data when in had it.
func transform[R any](in, out string, o TransformOptions, fn func(*canonical.Model) (*canonical.Model, R, error)) (R, error) {
	var zero R
	if !o.Force && sameExistingFile(in, out) {
		return zero, inputErr(&OverwriteError{Path: out})
	}
	if _, _, err := outputFormat(out, o.Exporters); err != nil {
		return zero, err
	}
	if err := checkOutputPath(out); err != nil {
		return zero, err
	}
	m, err := Load(in, LoadOptions{Importers: o.Importers})
	if err != nil {
		return zero, err
	}
	defer func() { _ = m.Close() }()
	// The result keeps the input's external data: a rewritten weight
	// (fp16, int8) is in memory, so Save alone would write it inline.
	hadExternal := canonical.HasExternalData(m)
	res, rep, err := fn(m)
	if res != nil {
		defer func() { _ = res.Close() }()
	}
	if err != nil {
		return rep, err
	}
	if err := checkResult(out, res); err != nil {
		return rep, err
	}
	return rep, Save(out, res, SaveOptions{ExternalData: hadExternal})
}

// check returns the verification setup for m.
func (o TransformOptions) check(m *canonical.Model) (*passes.Check, error) {
	c := &passes.Check{Samples: o.Samples, Gen: o.gen(m)}
	if o.Inputs != "" {
		s, err := tensorio.LoadSamples(o.Inputs, "input", verify.GraphInputs(m), false)
		if err != nil {
			return nil, inputErr(fmt.Errorf("inputs: %w", err))
		}
		c.Inputs = s
	}
	return c, nil
}

// writeReport writes v as indented JSON to o.Report, atomically.
func (o TransformOptions) writeReport(v any) error {
	if o.Report == "" {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return inputErr(fmt.Errorf("report: %w", err))
	}
	if err := canonical.WriteFileAtomic(o.Report, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return inputErr(fmt.Errorf("report: %w", err))
	}
	return nil
}

// sameExistingFile reports whether a and b are the same existing file.
func sameExistingFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// errorMap builds the error map of res against m when o.Map and the
// result was checked (final, the check's last comparison, gives the
// tolerance): both on the executor, on the first verification sample.
func (o TransformOptions) errorMap(ctx context.Context, m, res *canonical.Model, final *verify.Report) (*errmap.Map, error) {
	if !o.Map || final == nil || res == nil {
		return nil, nil
	}
	in, err := firstSample(m, o.Inputs, o.gen(m))
	if err != nil {
		return nil, err
	}
	vo := verify.Options{Inputs: [][]*canonical.Tensor{in}, Map: true, RTol: final.Options.RTol, ATol: final.Options.ATol}
	if p := final.Options.Profile; p != "auto" {
		vo.Profile = p
	}
	rep, err := verify.Compare(ctx, verify.ModelSide("input", m), verify.ModelSide("result", res), vo)
	if err != nil {
		return nil, fmt.Errorf("error map: %w", err)
	}
	if rep.Map == nil {
		return nil, fmt.Errorf("no error map: %s", strings.Join(rep.Notes, "; "))
	}
	return rep.Map, nil
}
