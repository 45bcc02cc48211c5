package batch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	schemacheck "github.com/onnxconv/onnxconv/canonical/check"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/pipeline"
)

// execute runs j through the pipeline and fills rec; logf, when set,
// receives the pipeline's progress lines. A panic in a job is the job's
// internal error, not the run's end.
func (r *runner) execute(ctx context.Context, j *Job, rec *Record, logf func(string, ...any)) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			rec.Status, rec.Kind, rec.Message = StatusError, "internal", fmt.Sprintf("internal error (please report it): %v", p)
		}
		rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	}()
	switch j.Action {
	case ActionPlan:
		r.plan(ctx, j, rec)
	case ActionCheck:
		r.check(j, rec)
	case ActionBench:
		r.bench(ctx, j, rec)
	default:
		r.convert(ctx, j, rec, logf)
	}
}

// plan is opset --dry-run.
func (r *runner) plan(ctx context.Context, j *Job, rec *Record) {
	p, err := pipeline.Plan(ctx, j.File, j.Opset, j.MLOpset, pipeline.LoadOptions{Importers: r.opts.Env.Importers})
	if err != nil {
		setError(rec, err)
		return
	}
	rec.Figures.OpsetBefore, rec.Figures.OpsetAfter, rec.Figures.Blockers = p.From, int64(p.To), len(p.Blockers)
	rec.Status = StatusPass
	if len(p.Blockers) > 0 {
		rec.Status, rec.Kind, rec.Message = StatusFail, "blocked", p.String()
		for i, b := range p.Blockers {
			if i == 5 {
				rec.Notes = append(rec.Notes, fmt.Sprintf("… %d more", len(p.Blockers)-5))
				break
			}
			rec.Notes = append(rec.Notes, b.String())
		}
	}
}

// check is onnxconv check: the structure and every node's schema.
func (r *runner) check(j *Job, rec *Record) {
	m, err := pipeline.Load(j.File, pipeline.LoadOptions{Importers: r.opts.Env.Importers})
	if err != nil {
		setError(rec, err)
		return
	}
	defer m.Close()
	probs := canonical.Validate(m)
	if len(m.OpsetImports) > 0 {
		probs = append(probs, schemacheck.Schema(m)...)
	}
	rec.Figures.OpsetBefore, rec.Figures.IRBefore, rec.Figures.Problems = m.Opset(""), m.IRVersion, len(probs)
	rec.Status = StatusPass
	if len(probs) > 0 {
		rec.Status, rec.Kind, rec.Message = StatusFail, "invalid", fmt.Sprintf("%d problem(s); the first: %v", len(probs), probs[0])
	}
}

// convert runs the opset, target and reference jobs.
func (r *runner) convert(ctx context.Context, j *Job, rec *Record, logf func(string, ...any)) {
	key := j.Key()
	var out string
	if j.KeepOutputs {
		dir := filepath.Join(r.opts.Out, outputsDir, key)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			setError(rec, err)
			return
		}
		out = filepath.Join(dir, "model.onnx")
	} else {
		out = filepath.Join(r.opts.Out, workDir, key+".onnx")
		defer os.Remove(out)
	}
	s := j.Spec
	opts := pipeline.Options{From: s.From, Opset: j.Opset, MLOpset: j.MLOpset, Target: j.Target,
		Env: r.opts.Env, Command: r.opts.Command, Force: false,
		Optimize: s.Optimize, Calibration: j.Calibration, Log: logf}
	if s.Precision != "" {
		opts.FP16 = &passes.FP16Options{BF16: s.Precision == "bf16", KeepIOTypes: s.KeepIOTypes}
	}
	if s.Quantize != "" {
		method := s.CalibrationMethod
		if method == "" {
			method = "minmax"
		}
		opts.Quantize = &passes.QuantOptions{Mode: passes.QuantMode(s.Quantize), PerChannel: s.PerChannel, Method: passes.CalibMethod(method)}
	}
	if s.Verify {
		opts.Verify = &pipeline.VerifyOptions{Inputs: j.Inputs, Reference: j.Reference, Samples: s.Samples, Seed: s.Seed,
			Profile: s.Profile, RTol: s.RTol, ATol: s.ATol, Bisect: s.Bisect}
		dir := filepath.Join(r.opts.Out, reportsDir, key)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			setError(rec, err)
			return
		}
		for _, f := range j.Reports {
			opts.Reports = append(opts.Reports, filepath.Join(dir, "report."+f))
		}
	}
	var res *pipeline.Result
	var err error
	if j.Action == ActionOpset {
		res, err = pipeline.Opset(ctx, j.File, out, opts)
	} else {
		res, err = pipeline.Convert(ctx, j.File, out, opts)
	}
	if res != nil {
		r.facts(res, rec)
	}
	if err != nil {
		setError(rec, err)
		return
	}
	rec.Status = StatusPass
	if j.KeepOutputs {
		rec.Output = filepath.ToSlash(filepath.Join(outputsDir, key, "model.onnx"))
	}
}

// facts copies a conversion's figures, notes and reports into rec.
func (r *runner) facts(res *pipeline.Result, rec *Record) {
	c := res.Conversion
	f := &rec.Figures
	f.OpsetBefore, f.OpsetAfter, f.IRBefore, f.IRAfter, f.Applied = c.OpsetBefore, c.OpsetAfter, c.IRBefore, c.IRAfter, len(c.Applied)
	rec.Timings = c.Timings
	rec.Notes = append(append(rec.Notes, c.Warnings...), res.Notes...)
	f.Comparisons = len(res.Comparisons)
	var maxAbs, maxRel float64
	var hasFloat, nonFinite bool
	for _, cmp := range res.Comparisons {
		rep := cmp.Report
		f.Samples = rep.Samples
		for _, o := range rep.Outputs {
			f.Outputs++
			if !o.Pass {
				f.FailedOutputs++
			}
			if o.Float == nil {
				continue
			}
			if !finite(o.Float.MaxAbs) || !finite(o.Float.MaxRel) {
				nonFinite = true
				continue
			}
			hasFloat = true
			maxAbs, maxRel = math.Max(maxAbs, o.Float.MaxAbs), math.Max(maxRel, o.Float.MaxRel)
		}
		f.FailedOutputs += len(rep.Unmatched)
	}
	if hasFloat {
		f.MaxAbs, f.MaxRel = &maxAbs, &maxRel
	}
	if nonFinite {
		rec.Notes = append(rec.Notes, "an output differs by NaN or Inf (see the report)")
	}
	for _, p := range res.ReportFiles {
		if rel, err := filepath.Rel(r.opts.Out, p); err == nil {
			rec.Reports = append(rec.Reports, filepath.ToSlash(rel))
		}
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// setError classifies a pipeline error into rec: a result that is not
// equivalent, blocked (opset conversion) or using operators a step cannot
// map (*unsupported.OpsError of any stage), or an invalid model
// fails the job; unreadable input or a bad option is an error.
func setError(rec *Record, err error) {
	rec.Message = err.Error()
	var ne *pipeline.NotEquivalentError
	var ue *unsupported.OpsError
	switch {
	case errors.As(err, &ne):
		rec.Status, rec.Kind = StatusFail, "not_equivalent"
	case errors.As(err, &ue) && ue.Stage == unsupported.StageConvert:
		rec.Status, rec.Kind = StatusFail, "blocked"
		rec.Figures.Blockers = ue.Nodes()
	case errors.As(err, &ue):
		rec.Status, rec.Kind = StatusFail, "unsupported"
	case pipeline.KindOf(err) == pipeline.KindInvalid:
		rec.Status, rec.Kind = StatusFail, "invalid"
	case pipeline.KindOf(err) == pipeline.KindUsage:
		rec.Status, rec.Kind = StatusError, "usage"
	default:
		rec.Status, rec.Kind = StatusError, "input"
	}
}
