package verify

import (
	"fmt"
	"io"
	"strings"

	"github.com/onnxconv/onnxconv/verify/errmap"
)

// WriteText writes the report for people, as 'onnxconv verify' prints it:
// the summary, every output with its metrics, drift and classifier
// agreement, unmatched outputs, the bisection and the notes.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintln(&b, r.Summary)
	for _, o := range r.Outputs {
		res := "pass"
		if !o.Pass {
			res = "FAIL " + o.Reason
		}
		fmt.Fprintf(&b, "  %s [%s %v]: %s\n", o.Name, o.DType, o.Shape, res)
		switch {
		case o.Float != nil:
			f := o.Float
			fmt.Fprintf(&b, "    max_abs %.3g  max_rel %.3g  mean_abs %.3g  rmse %.3g  cosine %.6f  max_ulp %.0f  (%s rtol %g atol %s)  ratio %.3g\n",
				f.MaxAbs, f.MaxRel, f.MeanAbs, f.RMSE, f.Cosine, f.MaxULP, o.Tolerance.Profile, o.Tolerance.RTol, o.Tolerance.atolText(), o.Ratio)
			if d := o.Drift; d != nil && !d.Degenerate {
				fmt.Fprintf(&b, "    drift: B = %.6f*A %+.3g (R2 %.6f)\n", d.Slope, d.Intercept, d.R2)
			}
			if c := o.Classifier; c != nil {
				fmt.Fprintf(&b, "    top-1 agreement %.4f", c.Top1)
				if c.Top5 != nil {
					fmt.Fprintf(&b, ", top-5 %.4f", *c.Top5)
				}
				fmt.Fprintln(&b)
			}
		case o.Exact != nil:
			fmt.Fprintf(&b, "    %d of %d equal\n", o.Exact.Equal, o.Exact.Total)
			if o.Exact.Steps != nil {
				fmt.Fprintf(&b, "    max %d step(s), mean %.3g (tolerance %d step(s), ratio %.3g); steps: %s\n",
					o.Exact.MaxAbs, o.Exact.MeanAbs, o.Tolerance.IntATol, o.Ratio, o.Exact.stepsText())
			}
			if c := o.Classifier; c != nil {
				fmt.Fprintf(&b, "    top-1 agreement %.4f\n", c.Top1)
			}
		}
	}
	for _, n := range r.Unmatched {
		fmt.Fprintf(&b, "  %s: FAIL no counterpart in B\n", n)
	}
	r.Bisect.writeText(&b)
	writeMapText(&b, r.Map)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSummary writes the short equivalence summary of one comparison, as
// 'onnxconv convert' prints it: "verify WHAT: EQUIVALENT (...)", one line
// per output, unmatched outputs, the bisection and the notes.
func (r *Report) WriteSummary(w io.Writer, what string) error {
	var b strings.Builder
	verdict := "EQUIVALENT"
	if !r.Equivalent {
		verdict = "NOT EQUIVALENT"
	}
	fmt.Fprintf(&b, "verify %s: %s (%d output(s), %d sample(s)%s)\n", what, verdict, len(r.Outputs), r.Samples, r.Decode.phrase())
	if r.Samples == 1 && r.Options.InputSource == "generated" {
		fmt.Fprintf(&b, "  warning: one sample only: a single input can agree by chance; use --samples N (or --inputs with more)\n")
	}
	if r.A.ComputedBy != "" || r.B.ComputedBy != "" {
		// Stored outputs are always B: they are then the reference and
		// the model run is the result.
		ra, rb := "A (reference)", "B (result)   "
		if r.B.Kind == "outputs" {
			ra, rb = "A (result)   ", "B (reference)"
		}
		fmt.Fprintf(&b, "  %s %s: computed by %s\n  %s %s: computed by %s\n", ra, r.A.Name, r.A.ComputedBy, rb, r.B.Name, r.B.ComputedBy)
	}
	for _, o := range r.Outputs {
		res := "pass"
		if !o.Pass {
			res = "FAIL"
			if o.Reason != "" {
				res += " " + o.Reason
			}
		}
		switch {
		case o.Float != nil:
			fmt.Fprintf(&b, "  %-16s %s %v  max_abs %.3g  max_rel %.3g  (rtol %g atol %s)  ratio %.3g  %s\n",
				o.Name, o.DType, o.Shape, o.Float.MaxAbs, o.Float.MaxRel, o.Tolerance.RTol, o.Tolerance.atolText(), o.Ratio, res)
		case o.Exact != nil && o.Exact.Steps != nil:
			fmt.Fprintf(&b, "  %-16s %s %v  %d of %d equal, max %d step(s) (tolerance %d)  ratio %.3g  %s\n", o.Name, o.DType, o.Shape,
				o.Exact.Equal, o.Exact.Total, o.Exact.MaxAbs, o.Tolerance.IntATol, o.Ratio, res)
			if !o.Pass {
				fmt.Fprintf(&b, "    steps: %s\n", o.Exact.stepsText())
			}
		case o.Exact != nil:
			fmt.Fprintf(&b, "  %-16s %s %v  %d of %d equal  %s\n", o.Name, o.DType, o.Shape, o.Exact.Equal, o.Exact.Total, res)
		default:
			fmt.Fprintf(&b, "  %-16s %s %v  %s\n", o.Name, o.DType, o.Shape, res)
		}
	}
	for _, n := range r.Unmatched {
		fmt.Fprintf(&b, "  %-16s FAIL no counterpart\n", n)
	}
	r.Bisect.writeText(&b)
	writeMapText(&b, r.Map)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRunOnceSummary writes the checks of a report made by RunOnce (a
// result that nothing computes the source of): the summary and, per
// output, whether it was produced without NaN or Inf.
func (r *Report) WriteRunOnceSummary(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintln(&b, r.Summary)
	for _, o := range r.Outputs {
		res := "ok (produced, no NaN or Inf)"
		if !o.Pass {
			res = "FAIL " + o.Reason
		}
		fmt.Fprintf(&b, "  %-16s %s %v  %s\n", o.Name, o.DType, o.Shape, res)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes where two models first diverge, in the lines
// Report.WriteText and WriteSummary use; nothing for a nil Bisection.
func (bi *Bisection) WriteText(w io.Writer) error {
	var b strings.Builder
	bi.writeText(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (bi *Bisection) writeText(b *strings.Builder) {
	if bi == nil {
		return
	}
	if bi.First == nil {
		fmt.Fprintf(b, "bisect: %d of %d nodes checked, none diverges\n", bi.NodesChecked, bi.NodesTotal)
		return
	}
	fmt.Fprintf(b, "bisect: %d of %d nodes checked; first divergent node %q (%s)\n", bi.NodesChecked, bi.NodesTotal, bi.First.Node, bi.First.OpType)
	for _, in := range bi.First.Inputs {
		fmt.Fprintf(b, "    input %s (%s): %s\n", in.Name, in.Kind, in.Status)
	}
}

// atolText is the absolute tolerance as used: "1e-05", or with a scaled
// one "0.00096 (1e-05 x scale 96)".
func (t Tolerance) atolText() string {
	if t.ATolScale > 0 && t.EffectiveATol > t.ATol {
		return fmt.Sprintf("%.3g (%g x scale %.3g)", t.EffectiveATol, t.ATolScale, t.Scale)
	}
	return fmt.Sprintf("%g", t.ATol)
}

// stepsText is the per-step histogram in one line: "0:812 1:40 2:3".
func (e *ExactMetrics) stepsText() string { return errmap.StepsText(e.Steps) }
