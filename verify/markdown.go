package verify

import (
	"fmt"
	"io"
	"strings"

	"github.com/onnxconv/onnxconv/verify/errmap"
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
	fmt.Fprintf(&b, "### %s %s\n\n", mark, mdEscape(r.Title()))
	fmt.Fprintf(&b, "**%s**\n\n", mdEscape(r.Summary))
	pf := provenanceFacts(r.Provenance)
	fmt.Fprintf(&b, "**Run** %s · time %s · command %s\n\n", mdFactValue(pf[0]), mdFactValue(pf[2]), mdFactValue(pf[1]))
	writeMarkdownConversion(&b, r.Conversion)
	if c := r.Conversion; c != nil && c.NotRunIn != "" {
		fmt.Fprintf(&b, "> ⚠️ The result was NOT run in its target runtime: %s\n\n", mdEscape(c.NotRunIn))
	}
	if r.A.ComputedBy != "" || r.B.ComputedBy != "" {
		fmt.Fprintf(&b, "**A** (reference) computed by %s · **B** (result) computed by %s\n\n", mdEscape(orUnknown(r.A.ComputedBy)), mdEscape(orUnknown(r.B.ComputedBy)))
	}
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
		tol := fmt.Sprintf("%s (rtol %g, atol %s)", o.Tolerance.Profile, o.Tolerance.RTol, o.Tolerance.atolText())
		if e := o.Exact; e != nil && e.Steps != nil {
			fmt.Fprintf(&b, "| %s | %s | %v | %s | %d step(s) | | %.3g step(s) mean | | | %d / %d | %s |\n",
				mdCode(o.Name), o.DType, o.Shape, res, e.MaxAbs, e.MeanAbs, o.Mismatched, o.Elements,
				mdEscape(fmt.Sprintf("%d step(s), ratio %.3g; steps %s", o.Tolerance.IntATol, o.Ratio, e.stepsText())))
		} else if o.Float != nil {
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
	b.WriteString("\n<details><summary>What the figures mean</summary>\n\n")
	for _, l := range legend {
		fmt.Fprintf(&b, "- **%s**: %s\n", mdEscape(l.Term), mdEscape(l.Meaning))
	}
	b.WriteString("\n</details>\n\n")

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
	if r.Map != nil {
		b.WriteString("## Error map\n\n" + errmap.Markdown(r.Map, mapTop) + "\n")
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
			types := map[string]InputDiff{}
			if f.Diff != nil {
				for _, in := range f.Diff.Inputs {
					if _, dup := types[in.Name]; in.Name != "" && !dup {
						types[in.Name] = in
					}
				}
			}
			for _, in := range f.Inputs {
				fmt.Fprintf(&b, "- input %s (%s): %s", mdCode(in.Name), strings.ReplaceAll(in.Kind, "_", " "), strings.ReplaceAll(in.Status, "_", " "))
				if in.Status == "differs" {
					fmt.Fprintf(&b, ", max abs %.3g", in.MaxAbs)
				}
				if t, ok := types[in.Name]; ok {
					fmt.Fprintf(&b, "; A %s, B", mdCode(t.A))
					if t.BName != t.Name {
						fmt.Fprintf(&b, " %s", mdCode(orNone(t.BName)))
					}
					fmt.Fprintf(&b, " %s", mdCode(orNone(t.B)))
					if t.FirstDiff != "" {
						fmt.Fprintf(&b, "; first differing element %s", mdEscape(t.FirstDiff))
					}
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
			writeMarkdownNodeDiff(&b, f.Diff)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "> %s\n", mdEscape(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdFactValue renders a fact's value, as code when it is a path or a
// command line.
func mdFactValue(f fact) string {
	if f.Code {
		return mdCode(f.Value)
	}
	return mdEscape(f.Value)
}

// writeMarkdownConversion writes the conversion facts as a table and the
// applied adapters and warnings as lists.
func writeMarkdownConversion(b *strings.Builder, c *Conversion) {
	if c == nil {
		return
	}
	b.WriteString("| conversion | |\n| --- | --- |\n")
	for _, f := range conversionFacts(c) {
		fmt.Fprintf(b, "| %s | %s |\n", f.Label, mdFactValue(f))
	}
	if len(c.Timings) > 0 {
		fmt.Fprintf(b, "| timings | %s |\n", mdEscape(timingsText(c.Timings)))
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "**Applied** (%d)", len(c.Applied))
	if len(c.Applied) == 0 {
		b.WriteString(": nothing; the model was kept as imported.\n\n")
	} else {
		b.WriteString("\n\n")
		for _, a := range c.Applied {
			fmt.Fprintf(b, "- %s\n", mdEscape(a))
		}
		b.WriteString("\n")
	}
	if len(c.Warnings) > 0 {
		fmt.Fprintf(b, "**Warnings** (%d)\n\n", len(c.Warnings))
		for _, w := range c.Warnings {
			fmt.Fprintf(b, "- ⚠️ %s\n", mdEscape(w))
		}
		b.WriteString("\n")
	}
}

// writeMarkdownNodeDiff writes what differs between the divergent node and
// its counterpart in B.
func writeMarkdownNodeDiff(b *strings.Builder, d *NodeDiff) {
	if d == nil {
		return
	}
	if !d.Counterpart {
		fmt.Fprintf(b, "**In B** no node computes this value: %s.\n\n", mdEscape(d.Note))
		return
	}
	fmt.Fprintf(b, "**In B** the value comes from %s, %s; in A from %s.\n\n",
		mdCode(d.BNode), mdEscape(opText(d.DomainB, d.OpTypeB, d.VersionB, d.OpsetB)), mdEscape(opText(d.DomainA, d.OpTypeA, d.VersionA, d.OpsetA)))
	if len(d.Attrs) > 0 {
		b.WriteString("| attribute | A | B |\n| --- | --- | --- |\n")
		for _, a := range d.Attrs {
			fmt.Fprintf(b, "| %s | %s | %s |\n", mdCode(a.Name), mdCode(a.A), mdCode(a.B))
		}
		b.WriteString("\n")
	}
	var only []string
	for _, in := range d.Inputs {
		if in.Differs {
			only = append(only, fmt.Sprintf("- input %d: A %s %s, B %s %s", in.Index, mdCode(orNone(in.Name)), mdCode(orNone(in.A)), mdCode(orNone(in.BName)), mdCode(orNone(in.B))))
		}
	}
	if len(only) > 0 {
		b.WriteString(strings.Join(only, "\n") + "\n\n")
	}
	fmt.Fprintf(b, "> %s\n\n", mdEscape(d.Headline()))
}
