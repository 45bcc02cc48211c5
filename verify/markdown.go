package verify

import (
	"fmt"
	"io"
	"strings"
)

// mdEscape escapes the characters that break a Markdown table cell.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "`", "'", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`)
	return r.Replace(s)
}

func mdCode(s string) string {
	return "`" + strings.NewReplacer("`", "'", "\n", " ", "|", `\|`).Replace(s) + "`"
}

// WriteMarkdown writes r as Markdown for a pull-request comment.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	mark := "✅"
	if !r.Equivalent {
		mark = "❌"
	}
	fmt.Fprintf(&b, "### %s onnxconv verify: %s\n\n", mark, mdEscape(r.Summary))
	fmt.Fprintf(&b, "**A** %s (%s", mdCode(r.A.Name), r.A.Kind)
	if r.A.Opset > 0 {
		fmt.Fprintf(&b, ", opset %d, %d nodes", r.A.Opset, r.A.Nodes)
	}
	fmt.Fprintf(&b, ") vs **B** %s (%s", mdCode(r.B.Name), r.B.Kind)
	if r.B.Opset > 0 {
		fmt.Fprintf(&b, ", opset %d, %d nodes", r.B.Opset, r.B.Nodes)
	}
	fmt.Fprintf(&b, "); %d sample(s), inputs %s", r.Samples, mdEscape(r.Options.InputSource))
	if r.Options.InputSource == "generated" {
		fmt.Fprintf(&b, " (seed %d, %s)", r.Options.Seed, r.Options.Distribution)
	}
	b.WriteString(".\n\n")

	b.WriteString("| output | dtype | shape | result | max abs | max rel | RMSE | cosine | max ULP | mismatched | tolerance |\n")
	b.WriteString("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, o := range r.Outputs {
		res := "pass"
		if !o.Pass {
			res = "**FAIL**"
		}
		tol := fmt.Sprintf("%s (rtol %g, atol %g)", o.Tolerance.Profile, o.Tolerance.RTol, o.Tolerance.ATol)
		if o.Float != nil {
			f := o.Float
			fmt.Fprintf(&b, "| %s | %s | %v | %s | %.3g | %.3g | %.3g | %.6f | %.0f | %d / %d | %s |\n",
				mdCode(o.Name), o.DType, o.Shape, res, f.MaxAbs, f.MaxRel, f.RMSE, f.Cosine, f.MaxULP, o.Mismatched, o.Elements, tol)
		} else {
			eq := ""
			if o.Exact != nil {
				eq = fmt.Sprintf("%d / %d equal", o.Exact.Equal, o.Exact.Total)
			}
			fmt.Fprintf(&b, "| %s | %s | %v | %s | %s | | | | | %d / %d | exact |\n",
				mdCode(o.Name), o.DType, o.Shape, res, eq, o.Mismatched, o.Elements)
		}
	}
	for _, name := range r.Unmatched {
		fmt.Fprintf(&b, "| %s | | | **FAIL** | no counterpart in B | | | | | | |\n", mdCode(name))
	}
	b.WriteString("\n")

	var fails, drift, cls []string
	for _, o := range r.Outputs {
		if !o.Pass {
			fails = append(fails, fmt.Sprintf("- %s: %s", mdCode(o.Name), mdEscape(o.Reason)))
		}
		if d := o.Drift; d != nil && !d.Degenerate {
			drift = append(drift, fmt.Sprintf("| %s | %.6f | %.3g | %.6f | %d |", mdCode(o.Name), d.Slope, d.Intercept, d.R2, d.Points))
		}
		if c := o.Classifier; c != nil {
			t5 := "n/a"
			if c.Top5 != nil {
				t5 = fmt.Sprintf("%.4f", *c.Top5)
			}
			cls = append(cls, fmt.Sprintf("| %s | %d | %d | %.4f | %s |", mdCode(o.Name), c.Rows, c.Classes, c.Top1, t5))
		}
	}
	if len(fails) > 0 {
		b.WriteString("**Failures**\n\n" + strings.Join(fails, "\n") + "\n\n")
	}
	if len(drift) > 0 {
		b.WriteString("<details><summary>Drift fit (B = slope·A + intercept)</summary>\n\n")
		b.WriteString("| output | slope | intercept | R² | points |\n| --- | ---: | ---: | ---: | ---: |\n")
		b.WriteString(strings.Join(drift, "\n") + "\n\n</details>\n\n")
	}
	if len(cls) > 0 {
		b.WriteString("| classifier output | rows | classes | top-1 agreement | top-5 agreement |\n| --- | ---: | ---: | ---: | ---: |\n")
		b.WriteString(strings.Join(cls, "\n") + "\n\n")
	}
	if bi := r.Bisect; bi != nil {
		b.WriteString("**Bisection** ")
		if bi.First == nil {
			fmt.Fprintf(&b, "checked %d of %d nodes (%d without a counterpart in B): no node diverges.\n\n", bi.NodesChecked, bi.NodesTotal, bi.NodesSkipped)
		} else {
			f := bi.First
			fmt.Fprintf(&b, "checked %d of %d nodes; the first divergent node is %s (%s), number %d in topological order.\n\n",
				bi.NodesChecked, bi.NodesTotal, mdCode(f.Node), f.OpType, f.Index)
			for _, o := range f.Outputs {
				fmt.Fprintf(&b, "- output %s: %s\n", mdCode(o.Name), mdEscape(outputLine(o)))
			}
			for _, in := range f.Inputs {
				fmt.Fprintf(&b, "- input %s (%s): %s", mdCode(in.Name), strings.ReplaceAll(in.Kind, "_", " "), strings.ReplaceAll(in.Status, "_", " "))
				if in.Status == "differs" {
					fmt.Fprintf(&b, ", max abs %.3g", in.MaxAbs)
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "> %s\n", mdEscape(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
