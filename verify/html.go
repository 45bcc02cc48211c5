package verify

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// The HTML report is one self-contained file: inline CSS and SVG, no
// scripts, no external resources.

const htmlCSS = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.verdict{display:inline-block;padding:4px 10px;border-radius:6px;font-weight:600;color:#fff}
.ok{background:#1a7f37}.bad{background:#cf222e}
table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:right}
th{background:#f6f8fa}td.l,th.l{text-align:left}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.pass{color:#1a7f37;font-weight:600}.fail{color:#cf222e;font-weight:600}.muted{color:#57606a;font-size:13px}
.plots{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}figcaption{font-size:12px;color:#57606a}
h3{font-size:15px;margin:16px 0 6px}ul.warn li{color:#9a6700}
.notrun{border:1px solid #9a6700;background:#fff8c5;padding:6px 10px;border-radius:6px}
details.legend{font-size:13px;margin:8px 0}details.legend dt{font-weight:600;margin-top:4px}details.legend dd{margin:0 0 0 16px;color:#57606a}`

func esc(s string) string { return html.EscapeString(s) }

// WriteHTML writes r as a self-contained HTML page with inline SVG plots:
// per-output tolerance bars, an error histogram per float output, and the
// bisection path.
func WriteHTML(w io.Writer, r *Report) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`)
	fmt.Fprintf(&b, "<title>%s</title><style>%s</style></head><body>\n", esc(r.Title()), htmlCSS)
	cls, word := "ok", "EQUIVALENT"
	if !r.Equivalent {
		cls, word = "bad", "NOT EQUIVALENT"
	}
	fmt.Fprintf(&b, "<h1>%s <span class=\"verdict %s\">%s</span></h1>\n", esc(r.Title()), cls, word)
	fmt.Fprintf(&b, "<p>%s</p>\n", esc(r.Summary))
	if c := r.Conversion; c != nil && c.NotRunIn != "" {
		fmt.Fprintf(&b, "<p class=\"notrun\">The result was NOT run in its target runtime: %s</p>\n", esc(c.NotRunIn))
	}
	b.WriteString("<p class=\"muted\">")
	for i, f := range provenanceFacts(r.Provenance) {
		if i > 0 {
			b.WriteString(" &nbsp; ")
		}
		fmt.Fprintf(&b, "%s: %s", esc(f.Label), htmlFactValue(f))
	}
	b.WriteString("</p>\n")
	fmt.Fprintf(&b, "<p class=\"muted\">A: <code>%s</code> (%s%s) &nbsp; B: <code>%s</code> (%s%s) &nbsp; %d sample(s), inputs %s, profile %s, %.0f ms</p>\n",
		esc(r.A.Name), esc(r.A.Kind), opsetText(r.A), esc(r.B.Name), esc(r.B.Kind), opsetText(r.B),
		r.Samples, esc(r.Options.InputSource), esc(r.Options.Profile), r.DurationMS)
	writeHTMLSides(&b, r)
	writeHTMLConversion(&b, r.Conversion)

	b.WriteString("<h2>Outputs</h2>\n<table><tr><th class=\"l\">output</th><th class=\"l\">dtype</th><th class=\"l\">shape</th><th class=\"l\">result</th><th>max abs</th><th>max rel</th><th>mean abs</th><th>RMSE</th><th>cosine</th><th>max ULP</th><th>mismatched</th><th class=\"l\">tolerance</th></tr>\n")
	for _, o := range r.Outputs {
		res := `<span class="pass">pass</span>`
		if !o.Pass {
			res = `<span class="fail">FAIL</span> ` + esc(o.Reason)
		}
		tol := fmt.Sprintf("%s rtol %g atol %s", o.Tolerance.Profile, o.Tolerance.RTol, o.Tolerance.atolText())
		if e := o.Exact; e != nil && e.Steps != nil {
			fmt.Fprintf(&b, "<tr><td class=\"l\"><code>%s</code></td><td class=\"l\">%s</td><td class=\"l\">%v</td><td class=\"l\">%s</td><td>%d step(s)</td><td></td><td>%.3g step(s)</td><td></td><td></td><td></td><td>%d / %d</td><td class=\"l\">%s</td></tr>\n",
				esc(o.Name), esc(o.DType), o.Shape, res, e.MaxAbs, e.MeanAbs, o.Mismatched, o.Elements, esc(fmt.Sprintf("%d step(s); steps %s", o.Tolerance.IntATol, e.stepsText())))
		} else if f := o.Float; f != nil {
			fmt.Fprintf(&b, "<tr><td class=\"l\"><code>%s</code></td><td class=\"l\">%s</td><td class=\"l\">%v</td><td class=\"l\">%s</td><td>%.3g</td><td>%.3g</td><td>%.3g</td><td>%.3g</td><td>%.6f</td><td>%.0f</td><td>%d / %d</td><td class=\"l\">%s</td></tr>\n",
				esc(o.Name), esc(o.DType), o.Shape, res, f.MaxAbs, f.MaxRel, f.MeanAbs, f.RMSE, f.Cosine, f.MaxULP, o.Mismatched, o.Elements, esc(tol))
		} else {
			eq := ""
			if o.Exact != nil {
				eq = fmt.Sprintf("%d / %d equal", o.Exact.Equal, o.Exact.Total)
			}
			fmt.Fprintf(&b, "<tr><td class=\"l\"><code>%s</code></td><td class=\"l\">%s</td><td class=\"l\">%v</td><td class=\"l\">%s</td><td colspan=\"6\">%s</td><td>%d / %d</td><td class=\"l\">exact</td></tr>\n",
				esc(o.Name), esc(o.DType), o.Shape, res, eq, o.Mismatched, o.Elements)
		}
	}
	for _, n := range r.Unmatched {
		fmt.Fprintf(&b, "<tr><td class=\"l\"><code>%s</code></td><td colspan=\"11\" class=\"l\"><span class=\"fail\">FAIL</span> no counterpart in B</td></tr>\n", esc(n))
	}
	b.WriteString("</table>\n")
	b.WriteString("<details class=\"legend\"><summary>What the figures mean</summary><dl>")
	for _, l := range legend {
		fmt.Fprintf(&b, "<dt>%s</dt><dd>%s</dd>", esc(l.Term), esc(l.Meaning))
	}
	b.WriteString("</dl></details>\n")

	if len(r.Outputs) > 0 {
		b.WriteString("<h2>Error relative to tolerance</h2>\n<figure>")
		b.WriteString(ratioBars(r.Outputs))
		b.WriteString("<figcaption>Worst element per output: |B−A| / (atol + rtol·|A|), log scale; the dashed line at 1 is the tolerance. Integer and string outputs show the mismatched fraction.</figcaption></figure>\n")
	}

	var hists []string
	for i, o := range r.Outputs {
		if o.Float == nil || i >= 24 {
			continue
		}
		hists = append(hists, "<figure>"+histogramSVG(o)+"<figcaption>|B−A| of <code>"+esc(o.Name)+"</code>, elements per decade</figcaption></figure>")
	}
	if len(hists) > 0 {
		b.WriteString("<h2>Error histograms</h2>\n<div class=\"plots\">" + strings.Join(hists, "\n") + "</div>\n")
	}

	var drift []string
	for _, o := range r.Outputs {
		if d := o.Drift; d != nil && !d.Degenerate {
			drift = append(drift, fmt.Sprintf("<tr><td class=\"l\"><code>%s</code></td><td>%.6f</td><td>%.3g</td><td>%.6f</td><td>%d</td></tr>", esc(o.Name), d.Slope, d.Intercept, d.R2, d.Points))
		}
	}
	if len(drift) > 0 {
		b.WriteString("<h2>Drift fit</h2>\n<p class=\"muted\">Least squares B = slope·A + intercept. A slope away from 1 or an intercept away from 0 with R² near 1 is a systematic scale or offset error; R² well below 1 is noise.</p>\n")
		b.WriteString("<table><tr><th class=\"l\">output</th><th>slope</th><th>intercept</th><th>R²</th><th>points</th></tr>\n" + strings.Join(drift, "\n") + "</table>\n")
	}
	var cl []string
	for _, o := range r.Outputs {
		if c := o.Classifier; c != nil {
			t5 := "n/a"
			if c.Top5 != nil {
				t5 = fmt.Sprintf("%.4f", *c.Top5)
			}
			cl = append(cl, fmt.Sprintf("<tr><td class=\"l\"><code>%s</code></td><td>%d</td><td>%d</td><td>%.4f</td><td>%s</td></tr>", esc(o.Name), c.Rows, c.Classes, c.Top1, t5))
		}
	}
	if len(cl) > 0 {
		b.WriteString("<h2>Classifier agreement</h2>\n<table><tr><th class=\"l\">output</th><th>rows</th><th>classes</th><th>top-1</th><th>top-5</th></tr>\n" + strings.Join(cl, "\n") + "</table>\n")
	}

	writeHTMLMap(&b, r.Map)
	if bi := r.Bisect; bi != nil {
		b.WriteString("<h2>Bisection</h2>\n")
		if bi.First == nil {
			fmt.Fprintf(&b, "<p>Checked %d of %d nodes (%d without a counterpart in B) in %d capture run(s): no node diverges.</p>\n", bi.NodesChecked, bi.NodesTotal, bi.NodesSkipped, bi.Runs)
		} else {
			f := bi.First
			fmt.Fprintf(&b, "<p>Checked %d of %d nodes in %d capture run(s). First divergent node: <code>%s</code> (%s), number %d in topological order.</p>\n",
				bi.NodesChecked, bi.NodesTotal, bi.Runs, esc(f.Node), esc(f.OpType), f.Index)
			types := map[string]InputDiff{}
			if f.Diff != nil {
				for _, in := range f.Diff.Inputs {
					if _, dup := types[in.Name]; in.Name != "" && !dup {
						types[in.Name] = in
					}
				}
			}
			b.WriteString("<table><tr><th class=\"l\">input</th><th class=\"l\">kind</th><th class=\"l\">status</th><th>max abs</th><th class=\"l\">type in A</th><th class=\"l\">type in B</th><th class=\"l\">first differing element</th></tr>\n")
			for _, in := range f.Inputs {
				st := esc(in.Status)
				if in.Status == "differs" {
					st = `<span class="fail">differs</span>`
				}
				t := types[in.Name]
				tb := esc(t.B)
				if t.BName != t.Name && t.BName != "" {
					tb = "<code>" + esc(t.BName) + "</code> " + tb
				}
				if t.Differs {
					tb = `<span class="fail">` + tb + `</span>`
				}
				fmt.Fprintf(&b, "<tr><td class=\"l\"><code>%s</code></td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%.3g</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td></tr>\n",
					esc(in.Name), esc(in.Kind), st, in.MaxAbs, esc(t.A), tb, esc(t.FirstDiff))
			}
			b.WriteString("</table>\n")
			writeHTMLNodeDiff(&b, f.Node, f.Diff)
		}
		if len(bi.Path) > 0 {
			b.WriteString("<figure>" + bisectSVG(bi) + "<figcaption>Compared nodes in topological order of A (green: agrees, red: first divergence); the bar under each node is its worst error relative to tolerance.</figcaption></figure>\n")
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("<h2>Notes</h2><ul>")
		for _, n := range r.Notes {
			b.WriteString("<li>" + esc(n) + "</li>")
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func opsetText(s SideInfo) string {
	if s.Opset == 0 {
		return ""
	}
	return fmt.Sprintf(", opset %d, %d nodes", s.Opset, s.Nodes)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ratioOf maps an output to its worst error relative to tolerance.
func ratioOf(o *OutputResult) float64 {
	if o.Float != nil {
		return o.Float.WorstRatio
	}
	if o.Exact != nil && o.Exact.Steps != nil {
		return o.Exact.WorstRatio
	}
	if o.Elements > 0 {
		return float64(o.Mismatched) / float64(o.Elements) * 1e3 // any mismatch shows above the line
	}
	return 0
}

// ratioBars draws one horizontal bar per output on a log10 axis from 1e-6
// to 1e6.
func ratioBars(outs []*OutputResult) string {
	const lo, hi = -6.0, 6.0
	n := min(len(outs), 40)
	rowH, left, width := 22, 190, 560
	h := n*rowH + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="error relative to tolerance per output">`, left+width+80, h, left+width+80, h)
	x := func(v float64) float64 {
		if v <= 0 {
			return float64(left)
		}
		l := math.Max(lo, math.Min(hi, math.Log10(v)))
		return float64(left) + (l-lo)/(hi-lo)*float64(width)
	}
	for e := lo; e <= hi; e += 2 {
		xx := x(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="10" x2="%.1f" y2="%d" stroke="#eaeef2"/><text x="%.1f" y="%d" font-size="10" text-anchor="middle" fill="#57606a">1e%d</text>`, xx, xx, h-24, xx, h-10, int(e))
	}
	for i, o := range outs[:n] {
		y := 12 + i*rowH
		v := ratioOf(o)
		color := "#1a7f37"
		if !o.Pass {
			color = "#cf222e"
		}
		w := x(v) - float64(left)
		if v > 0 && w < 2 {
			w = 2
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end" fill="#1b1f24">%s</text>`, left-6, y+13, esc(truncate(o.Name, 28)))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %.3g</title></rect>`, left, y+2, w, rowH-6, color, esc(o.Name), v)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" fill="#57606a">%.2g</text>`, float64(left)+w+4, y+13, v)
	}
	one := x(1)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="6" x2="%.1f" y2="%d" stroke="#1b1f24" stroke-dasharray="4 3"/>`, one, one, h-24)
	b.WriteString("</svg>")
	return b.String()
}

// histogramSVG draws the decade histogram of |B-A| of one float output.
func histogramSVG(o *OutputResult) string {
	hist := o.Float.Histogram
	const W, H, left, bottom = 420, 200, 40, 40
	bw := float64(W-left-10) / float64(len(hist))
	var maxc int64 = 1
	for _, h := range hist {
		maxc = max(maxc, h.Count)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="error histogram">`, W, H, W, H)
	plotH := float64(H - bottom - 10)
	fmt.Fprintf(&b, `<line x1="%d" y1="10" x2="%d" y2="%d" stroke="#8c959f"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#8c959f"/>`, left, left, H-bottom, left, H-bottom, W-10, H-bottom)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="10" text-anchor="end" fill="#57606a">%d</text><text x="%d" y="%d" font-size="10" text-anchor="end" fill="#57606a">0</text>`, left-4, maxc, left-4, H-bottom)
	// The tolerance decade: bins at or above atol are shaded.
	for i, h := range hist {
		x := float64(left) + float64(i)*bw
		bh := plotH * float64(h.Count) / float64(maxc)
		color := "#0969da"
		if h.Lo >= o.Tolerance.ATol && o.Tolerance.ATol > 0 && h.Lo > 0 {
			color = "#bf8700"
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d</title></rect>`, x+1, float64(H-bottom)-bh, bw-2, bh, color, esc(h.Label), h.Count)
		fmt.Fprintf(&b, `<text transform="translate(%.1f,%d) rotate(-45)" font-size="9" text-anchor="end" fill="#57606a">%s</text>`, x+bw/2, H-bottom+12, esc(h.Label))
	}
	b.WriteString("</svg>")
	return b.String()
}

// bisectSVG draws the compared nodes as a wrapped chain of boxes; long
// paths show the first three and the last 29 nodes.
func bisectSVG(bi *Bisection) string {
	steps := bi.Path
	gap := false
	if len(steps) > 32 {
		steps = append(append([]BisectStep{}, steps[:3]...), steps[len(steps)-29:]...)
		gap = true
	}
	const perRow, bwid, bht, dx, dy = 8, 118, 46, 140, 76
	rows := (len(steps) + perRow - 1) / perRow
	W, H := perRow*dx+20, rows*dy+10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="bisection path">`, W, H, W, H)
	for i, s := range steps {
		x, y := 10+(i%perRow)*dx, 8+(i/perRow)*dy
		fill, stroke := "#dafbe1", "#1a7f37"
		if s.Status != "match" {
			fill, stroke = "#ffebe9", "#cf222e"
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s" stroke="%s"><title>#%d %s (%s): max abs %.3g, ratio %.3g</title></rect>`,
			x, y, bwid, bht, fill, stroke, s.Index, esc(s.Node), esc(s.OpType), s.MaxAbs, s.WorstRatio)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" font-weight="600" fill="#1b1f24">#%d %s</text>`, x+6, y+16, s.Index, esc(truncate(s.OpType, 12)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#57606a">%s</text>`, x+6, y+30, esc(truncate(s.Node, 18)))
		// Ratio bar: log10 from 1e-6 to 1e2 over the box width.
		frac := 0.0
		if s.WorstRatio > 0 {
			frac = math.Max(0, math.Min(1, (math.Log10(s.WorstRatio)+6)/8))
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="4" fill="%s"/>`, x+6, y+36, frac*float64(bwid-12), stroke)
		if i+1 < len(steps) && (i+1)%perRow != 0 {
			fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#8c959f" stroke-width="2"/>`, x+bwid, y+bht/2, x+dx, y+bht/2)
		}
		if gap && i == 2 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="16" fill="#57606a">…</text>`, x+bwid+4, y+bht/2-4)
		}
	}
	b.WriteString("</svg>")
	return b.String()
}

func htmlFactValue(f fact) string {
	if f.Code {
		return "<code>" + esc(f.Value) + "</code>"
	}
	return esc(f.Value)
}

// writeHTMLConversion writes the conversion facts, the applied adapters and
// expansions, the warnings and the timings.
func writeHTMLConversion(b *strings.Builder, c *Conversion) {
	if c == nil {
		return
	}
	b.WriteString("<h2>Conversion</h2>\n<table>")
	for _, f := range conversionFacts(c) {
		fmt.Fprintf(b, "<tr><th class=\"l\">%s</th><td class=\"l\">%s</td></tr>", esc(f.Label), htmlFactValue(f))
	}
	if len(c.Timings) > 0 {
		fmt.Fprintf(b, "<tr><th class=\"l\">timings</th><td class=\"l\">%s</td></tr>", esc(timingsText(c.Timings)))
	}
	b.WriteString("</table>\n")
	fmt.Fprintf(b, "<h3>Applied (%d)</h3>\n", len(c.Applied))
	if len(c.Applied) == 0 {
		b.WriteString("<p class=\"muted\">Nothing: the model was kept as imported.</p>\n")
	} else {
		b.WriteString("<ul>")
		for _, a := range c.Applied {
			b.WriteString("<li>" + esc(a) + "</li>")
		}
		b.WriteString("</ul>\n")
	}
	if len(c.Warnings) > 0 {
		fmt.Fprintf(b, "<h3>Warnings (%d)</h3>\n<ul class=\"warn\">", len(c.Warnings))
		for _, w := range c.Warnings {
			b.WriteString("<li>" + esc(w) + "</li>")
		}
		b.WriteString("</ul>\n")
	}
}

// writeHTMLNodeDiff writes the divergent node of A beside its counterpart
// in B: op, version, the attributes that differ and the input types.
func writeHTMLNodeDiff(b *strings.Builder, nodeA string, d *NodeDiff) {
	if d == nil {
		return
	}
	b.WriteString("<h3>The node in A and in B</h3>\n")
	if !d.Counterpart {
		fmt.Fprintf(b, "<p>B has no node computing this value: %s.</p>\n", esc(d.Note))
		return
	}
	cell := func(s string, differs bool) string {
		if differs {
			return `<td class="l"><span class="fail">` + esc(s) + `</span></td>`
		}
		return `<td class="l">` + esc(s) + `</td>`
	}
	b.WriteString("<table><tr><th class=\"l\"></th><th class=\"l\">A</th><th class=\"l\">B</th></tr>\n")
	fmt.Fprintf(b, "<tr><th class=\"l\">node</th><td class=\"l\"><code>%s</code></td><td class=\"l\"><code>%s</code></td></tr>\n", esc(nodeA), esc(d.BNode))
	opDiff := d.OpTypeA != d.OpTypeB || d.DomainA != d.DomainB
	fmt.Fprintf(b, "<tr><th class=\"l\">op</th>%s%s</tr>\n", cell(qualifiedOp(d.DomainA, d.OpTypeA), opDiff), cell(qualifiedOp(d.DomainB, d.OpTypeB), opDiff))
	verDiff := d.VersionA != d.VersionB
	fmt.Fprintf(b, "<tr><th class=\"l\">version</th>%s%s</tr>\n",
		cell(opText(d.DomainA, d.OpTypeA, d.VersionA, d.OpsetA), verDiff), cell(opText(d.DomainB, d.OpTypeB, d.VersionB, d.OpsetB), verDiff))
	for _, a := range d.Attrs {
		fmt.Fprintf(b, "<tr><th class=\"l\">attribute <code>%s</code></th>%s%s</tr>\n", esc(a.Name), cell(a.A, true), cell(a.B, true))
	}
	for _, in := range d.Inputs {
		fmt.Fprintf(b, "<tr><th class=\"l\">input %d</th>%s%s</tr>\n", in.Index,
			cell(strings.TrimSpace(in.Name+" "+in.A), in.Differs), cell(strings.TrimSpace(in.BName+" "+in.B), in.Differs))
	}
	b.WriteString("</table>\n")
	fmt.Fprintf(b, "<p>%s</p>\n", esc(d.Headline()))
}

// writeHTMLSides says what computed each side of the comparison.
func writeHTMLSides(b *strings.Builder, r *Report) {
	if r.A.ComputedBy == "" && r.B.ComputedBy == "" {
		return
	}
	b.WriteString("<table>")
	for _, s := range []struct {
		label string
		side  SideInfo
	}{{"A (reference) computed by", r.A}, {"B (result) computed by", r.B}} {
		fmt.Fprintf(b, "<tr><th class=\"l\">%s</th><td class=\"l\">%s</td></tr>", esc(s.label), esc(orUnknown(s.side.ComputedBy)))
	}
	b.WriteString("</table>\n")
}
