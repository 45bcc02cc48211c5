package passes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// Check configures how Run proves each pass: the model after the pass is
// run on Inputs (or Samples generated inputs) and compared with the model
// before it.
type Check struct {
	// Inputs are the verification samples, each in the order of the
	// model's graph inputs; nil generates Samples samples (default 2)
	// with Gen.
	Inputs  [][]*canonical.Tensor
	Samples int
	Gen     verify.GenOptions
	// Profile names the tolerance profile ("" = per element type: fp32
	// rtol 1e-4 atol 1e-5); RTol and ATol override it.
	Profile    string
	RTol, ATol *float64
	// Backend is the executor's GoMLX backend ("" default).
	Backend string
	// NoBisect skips the search for the diverging node of a rolled-back
	// pass.
	NoBisect bool
}

// RunOptions configure Run.
type RunOptions struct {
	Options
	// Check proves every pass; nil applies the passes unchecked.
	Check *Check
	// Logf, when set, receives one line per pass.
	Logf func(format string, args ...any)
}

// PassReport is what one pass did.
type PassReport struct {
	Name string `json:"name"`
	// Changed: the pass rewrote something. Kept: the rewrite is in the
	// result (changed, and the check passed or there was none).
	Changed bool `json:"changed"`
	Kept    bool `json:"kept"`
	// RolledBack is set with Reason when the pass was undone.
	RolledBack bool   `json:"rolled_back"`
	Reason     string `json:"reason,omitempty"`
	Before     Stats  `json:"before"`
	After      Stats  `json:"after"`
	// MaxAbs and MaxRel are the largest differences the pass introduced
	// over the float outputs (against the model before it); -1 when not
	// checked.
	MaxAbs float64 `json:"max_abs"`
	MaxRel float64 `json:"max_rel"`
	// Diverging is the first node of the model before the pass whose value
	// differs in the model after it (rolled-back passes).
	Diverging *verify.DivergentNode `json:"diverging,omitempty"`
	// Comparison is the check's report (nil when unchecked or unchanged).
	Comparison *verify.Report `json:"-"`
	DurationMS float64        `json:"duration_ms"`
}

// Report is what Run did.
type Report struct {
	Before Stats        `json:"before"`
	After  Stats        `json:"after"`
	Passes []PassReport `json:"passes"`
	// Final compares the result with the input model (nil when
	// unchecked or when nothing changed).
	Final *verify.Report `json:"-"`
	// Map is the error map of the result against the input on the first
	// sample, every intermediate tensor compared (pipeline's
	// TransformOptions.Map); nil unless asked for.
	Map *errmap.Map `json:"map,omitempty"`
	// MaxAbs and MaxRel are the result's largest differences from the
	// input model; -1 when unchecked.
	MaxAbs float64 `json:"max_abs"`
	MaxRel float64 `json:"max_rel"`
}

// RolledBack returns the passes that were undone.
func (r *Report) RolledBack() []PassReport {
	var out []PassReport
	for _, p := range r.Passes {
		if p.RolledBack {
			out = append(out, p)
		}
	}
	return out
}

// Run applies passes to a clone of m in order and returns the result (a
// new model: close it when m came from Load) and the report. m is not
// changed. A pass that fails, or (with opts.Check) changes an output beyond
// tolerance, is rolled back and reported; Run goes on with the next pass.
// The error is for what stops the whole run: a cancelled context, a model
// that cannot be cloned, or an input model the executor cannot run.
func Run(ctx context.Context, m *canonical.Model, passes []Pass, opts RunOptions) (*canonical.Model, *Report, error) {
	if m == nil || m.Graph == nil {
		return nil, nil, fmt.Errorf("passes: the model has no graph")
	}
	cur, err := m.Clone()
	if err != nil {
		return nil, nil, fmt.Errorf("passes: %w", err)
	}
	rep := &Report{Before: StatsOf(m), MaxAbs: -1, MaxRel: -1}
	var ck *checker
	if opts.Check != nil {
		if ck, err = newChecker(ctx, m, opts.Check); err != nil {
			_ = cur.Close()
			return nil, nil, err
		}
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	for _, p := range passes {
		if err := ctx.Err(); err != nil {
			_ = cur.Close()
			return nil, nil, fmt.Errorf("passes: %w", err)
		}
		start := time.Now()
		pr, next, err := runOne(ctx, cur, p, opts.Options, ck)
		if err != nil {
			_ = cur.Close()
			return nil, nil, err
		}
		pr.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		if next != cur {
			_ = cur.Close()
			cur = next
		}
		logf("%s", pr.line())
		rep.Passes = append(rep.Passes, pr)
	}
	rep.After = StatsOf(cur)
	if ck != nil {
		changed := false
		for _, p := range rep.Passes {
			changed = changed || p.Kept
		}
		rep.MaxAbs, rep.MaxRel = 0, 0
		if changed {
			final, err := ck.compare(ctx, m, ck.original, cur, false)
			if err != nil {
				_ = cur.Close()
				return nil, nil, fmt.Errorf("passes: comparing the result with the input: %w", err)
			}
			rep.Final = final
			rep.MaxAbs, rep.MaxRel = errorOf(final)
		}
	}
	return cur, rep, nil
}

// line is the one-line summary of a pass.
func (p PassReport) line() string {
	switch {
	case p.RolledBack:
		s := fmt.Sprintf("%s: rolled back: %s", p.Name, p.Reason)
		return s
	case !p.Changed:
		return fmt.Sprintf("%s: nothing to do", p.Name)
	}
	s := fmt.Sprintf("%s: nodes %d -> %d, bytes %d -> %d", p.Name, p.Before.Nodes, p.After.Nodes, p.Before.Bytes, p.After.Bytes)
	if p.MaxAbs >= 0 {
		s += fmt.Sprintf(", max abs error %.3g (rel %.3g)", p.MaxAbs, p.MaxRel)
	}
	return s
}

// runOne applies p to a clone of cur and returns the report and the model
// to go on with (the clone when kept, cur otherwise).
func runOne(ctx context.Context, cur *canonical.Model, p Pass, opts Options, ck *checker) (PassReport, *canonical.Model, error) {
	pr := PassReport{Name: p.Name, Before: StatsOf(cur), MaxAbs: -1, MaxRel: -1}
	pr.After = pr.Before
	cand, err := cur.Clone()
	if err != nil {
		return pr, nil, fmt.Errorf("passes: %s: %w", p.Name, err)
	}
	rollback := func(reason string) (PassReport, *canonical.Model, error) {
		_ = cand.Close()
		pr.RolledBack, pr.Reason, pr.Kept = true, reason, false
		pr.After = pr.Before
		return pr, cur, nil
	}
	changed, err := safeRun(p, cand, opts)
	pr.Changed = changed
	if err != nil {
		return rollback(fmt.Sprintf("the pass failed: %v", err))
	}
	if !changed {
		_ = cand.Close()
		return pr, cur, nil
	}
	order, err := cand.Graph.TopoSort()
	if err != nil {
		return rollback(fmt.Sprintf("the pass left a graph that is not a DAG: %v", err))
	}
	cand.Graph.Nodes = order
	pruneValueInfo(cand)
	pr.After = StatsOf(cand)
	if ck == nil {
		pr.Kept = true
		return pr, cand, nil
	}
	rep, err := ck.compare(ctx, cur, ck.ref, cand, true)
	if err != nil {
		if ctx.Err() != nil {
			_ = cand.Close()
			return pr, nil, fmt.Errorf("passes: %w", ctx.Err())
		}
		return rollback(fmt.Sprintf("the result does not run: %v", err))
	}
	pr.Comparison = rep
	pr.MaxAbs, pr.MaxRel = errorOf(rep)
	if !rep.Equivalent {
		reason := "an output changed beyond tolerance: " + rep.Summary
		if !ck.opts.NoBisect {
			if d := ck.diverging(ctx, cur, cand); d != nil {
				pr.Diverging = d
				reason += fmt.Sprintf("; first diverging node %s (%s)", d.Node, d.OpType)
			}
		}
		r, m, err := rollback(reason)
		r.MaxAbs, r.MaxRel = pr.MaxAbs, pr.MaxRel
		r.Comparison = rep
		return r, m, err
	}
	ck.ref = ck.last
	pr.Kept = true
	return pr, cand, nil
}

// safeRun runs a pass, turning a panic inside it into an error: a faulty
// pass is rolled back like a wrong one.
func safeRun(p Pass, m *canonical.Model, opts Options) (changed bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			changed, err = true, fmt.Errorf("panic: %v", r)
		}
	}()
	return p.Run(m, opts)
}

// errorOf returns the largest float differences of a comparison.
func errorOf(rep *verify.Report) (maxAbs, maxRel float64) {
	for _, o := range rep.Outputs {
		if o.Float != nil {
			maxAbs = math.Max(maxAbs, o.Float.MaxAbs)
			maxRel = math.Max(maxRel, o.Float.MaxRel)
		}
	}
	return maxAbs, maxRel
}

// checker runs the verification of each pass. It keeps the outputs of the
// model accepted so far, so that each check runs only the candidate.
type checker struct {
	opts     *Check
	inputs   [][]*canonical.Tensor
	original [][]*canonical.Tensor // outputs of the input model
	ref      [][]*canonical.Tensor // outputs of the model accepted so far
	last     [][]*canonical.Tensor // outputs of the last candidate run
}

func newChecker(ctx context.Context, m *canonical.Model, c *Check) (*checker, error) {
	ck := &checker{opts: c, inputs: c.Inputs}
	if ck.inputs == nil {
		k := c.Samples
		if k <= 0 {
			k = 2
		}
		for s := range k {
			in, err := verify.GenerateInputs(m, c.Gen, s)
			if err != nil {
				return nil, fmt.Errorf("passes: generating verification inputs: %w", err)
			}
			ck.inputs = append(ck.inputs, in)
		}
	}
	outs, err := RunModel(ctx, m, ck.inputs, c.Backend)
	if err != nil {
		return nil, fmt.Errorf("passes: the input model does not run on the executor: %w", err)
	}
	ck.original, ck.ref = outs, outs
	return ck, nil
}

// RunModel runs m on every sample with the built-in executor.
func RunModel(ctx context.Context, m *canonical.Model, samples [][]*canonical.Tensor, backend string) ([][]*canonical.Tensor, error) {
	ex, err := executor.New(m, executor.Options{Backend: backend})
	if err != nil {
		return nil, err
	}
	defer func() { _ = ex.Close() }()
	var out [][]*canonical.Tensor
	for i, in := range samples {
		y, err := ex.Run(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		out = append(out, y)
	}
	return out, nil
}

func (c *checker) verifyOptions() verify.Options {
	return verify.Options{Inputs: c.inputs, Profile: c.opts.Profile, RTol: c.opts.RTol, ATol: c.opts.ATol, Backend: c.opts.Backend}
}

// compare runs cand on the inputs and compares it with refModel, whose
// outputs refOut are known. With record, cand's outputs become c.last.
func (c *checker) compare(ctx context.Context, refModel *canonical.Model, refOut [][]*canonical.Tensor, cand *canonical.Model, record bool) (*verify.Report, error) {
	ex, err := executor.New(cand, executor.Options{Backend: c.opts.Backend})
	if err != nil {
		return nil, err
	}
	defer func() { _ = ex.Close() }()
	rec := &recorder{r: ex}
	a := &verify.Side{Name: "before", Model: refModel, Runner: &replay{outs: refOut}, ComputedBy: "the built-in executor"}
	b := &verify.Side{Name: "after", Model: cand, Runner: rec, ComputedBy: "the built-in executor"}
	rep, err := verify.Compare(ctx, a, b, c.verifyOptions())
	if err != nil {
		return nil, err
	}
	if record {
		c.last = rec.outs
	}
	return rep, nil
}

// diverging bisects before against after on the first sample and returns
// the first diverging node, or nil when bisection finds none or fails.
func (c *checker) diverging(ctx context.Context, before, after *canonical.Model) *verify.DivergentNode {
	o := c.verifyOptions()
	o.Inputs = c.inputs[:1]
	o.Bisect = true
	rep, err := verify.Compare(ctx, verify.ModelSide("before", before), verify.ModelSide("after", after), o)
	if err != nil || rep.Bisect == nil {
		return nil
	}
	return rep.Bisect.First
}

// replay is a Runner that hands out stored outputs, one sample per call in
// order (verify.Compare runs the samples in order, once each).
type replay struct {
	outs [][]*canonical.Tensor
	k    int
}

var errReplayDone = errors.New("passes: more samples asked for than recorded")

func (r *replay) Run(_ context.Context, _ []*canonical.Tensor) ([]*canonical.Tensor, error) {
	if r.k >= len(r.outs) {
		return nil, errReplayDone
	}
	y := r.outs[r.k]
	r.k++
	return y, nil
}

// recorder is a Runner that keeps what it returned.
type recorder struct {
	r    verify.Runner
	outs [][]*canonical.Tensor
}

func (r *recorder) Run(ctx context.Context, in []*canonical.Tensor) ([]*canonical.Tensor, error) {
	y, err := r.r.Run(ctx, in)
	if err == nil {
		r.outs = append(r.outs, y)
	}
	return y, err
}
