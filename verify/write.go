package verify

import (
	_ "embed"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// ReportSchema is the JSON Schema (draft 2020-12) of the JSON report.
//
//go:embed report.schema.json
var reportSchema []byte

// ReportSchema returns the JSON Schema of the JSON report.
func ReportSchema() []byte { return append([]byte(nil), reportSchema...) }

// Formats lists the report file extensions WriteReport understands.
func Formats() []string { return []string{".json", ".md", ".html", ".xml"} }

// WriteReport writes r to path in the format its extension names (.json,
// .md, .html, .xml for JUnit XML), atomically (canonical.WriteFileAtomic):
// a failed write leaves any earlier file in place. An unknown extension is
// a *ReportPathError.
func WriteReport(path string, r *Report) error {
	var write func(io.Writer, *Report) error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		write = WriteJSON
	case ".md", ".markdown":
		write = WriteMarkdown
	case ".html", ".htm":
		write = WriteHTML
	case ".xml":
		write = WriteJUnit
	default:
		return &ReportPathError{Path: path, Reason: ReportPathFormat, Dir: filepath.Dir(path)}
	}
	if err := canonical.WriteFileAtomic(path, func(w io.Writer) error { return write(w, r) }); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if r.Map != nil && strings.EqualFold(filepath.Ext(path), ".json") {
		// Beside the JSON report: the map as Model Explorer's per-node
		// data.
		return WriteModelExplorer(ModelExplorerPath(path), r)
	}
	return nil
}

// ModelExplorerPath is where WriteReport puts the error map as Model
// Explorer's per-node data, beside a JSON report: report.json gives
// report.modelexplorer.json.
func ModelExplorerPath(report string) string {
	return strings.TrimSuffix(report, filepath.Ext(report)) + ".modelexplorer.json"
}

// WriteModelExplorer writes r's error map as Model Explorer's per-node
// data JSON (errmap.ModelExplorer).
func WriteModelExplorer(path string, r *Report) error {
	if r.Map == nil {
		return fmt.Errorf("writing %s: the report has no error map", path)
	}
	data, err := errmap.ModelExplorer(r.Map)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := canonical.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return fmt.Errorf("writing the error map for Model Explorer: %w", err)
	}
	return nil
}

// WriteJSON writes r as indented JSON (see report.schema.json).
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	return nil
}

// JUnit XML types (the common Jenkins / GitLab / GitHub subset).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes r as JUnit XML: one testcase per output of A (an
// output without counterpart in B is a failed testcase). The testsuite's
// properties hold the provenance, the conversion facts and the first
// divergent node with its diff; failures and system-out repeat the
// bisection in words.
func WriteJUnit(w io.Writer, r *Report) error {
	secs := fmt.Sprintf("%.3f", r.DurationMS/1000)
	bis := bisectText(r.Bisect)
	s := junitSuite{
		Name: r.Title(), Time: secs,
		Properties: junitProperties(r),
		SystemOut:  r.Summary + "\n" + runLine(r) + "\n" + conversionText(r.Conversion) + bis,
	}
	class := "verify." + sanitizeClass(r.A.Name)
	for _, o := range r.Outputs {
		c := junitCase{Name: o.Name, Classname: class, Time: "0", SystemOut: outputLine(o)}
		if !o.Pass {
			c.Failure = &junitFailure{Message: o.Reason, Type: "NotEquivalent", Text: outputDetail(o) + bis}
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	for _, name := range r.Unmatched {
		s.Cases = append(s.Cases, junitCase{Name: name, Classname: class, Time: "0",
			Failure: &junitFailure{Message: "output has no counterpart in " + r.B.Name, Type: "MissingOutput"}})
		s.Failures++
	}
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: r.ToolName(), Tests: s.Tests, Failures: s.Failures, Time: secs, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitProperties lists the provenance ("unknown" when not recorded), the
// comparison's settings, the conversion facts and the bisection result.
func junitProperties(r *Report) []junitProperty {
	p := r.Provenance
	if p == nil {
		p = &Provenance{}
	}
	ps := []junitProperty{
		{"tool", r.ToolName()}, {"title", r.Title()},
		{"version", orUnknown(p.Version)}, {"revision", orUnknown(p.Revision)},
		{"command", commandLine(r.Provenance)}, {"time", runTime(r.Provenance)},
		{"a", r.A.Name}, {"b", r.B.Name}, {"samples", fmt.Sprint(r.Samples)},
		{"profile", r.Options.Profile}, {"equivalent", fmt.Sprint(r.Equivalent)},
	}
	if c := r.Conversion; c != nil {
		num := func(v int64) string { return strconv.FormatInt(v, 10) }
		ps = append(ps,
			junitProperty{"conversion.source", c.Source}, junitProperty{"conversion.output", c.Output},
			junitProperty{"conversion.source_format", orUnknown(c.SourceFormat)}, junitProperty{"conversion.importer", orUnknown(c.Importer)},
			junitProperty{"conversion.target", c.Target},
			junitProperty{"conversion.opset_before", num(c.OpsetBefore)}, junitProperty{"conversion.opset_after", num(c.OpsetAfter)})
		if c.MLOpsetBefore != 0 || c.MLOpsetAfter != 0 {
			ps = append(ps, junitProperty{"conversion.ml_opset_before", num(c.MLOpsetBefore)}, junitProperty{"conversion.ml_opset_after", num(c.MLOpsetAfter)})
		}
		ps = append(ps, junitProperty{"conversion.ir_before", num(c.IRBefore)}, junitProperty{"conversion.ir_after", num(c.IRAfter)})
		for i, a := range c.Applied {
			ps = append(ps, junitProperty{fmt.Sprintf("conversion.applied.%d", i+1), a})
		}
		for i, wn := range c.Warnings {
			ps = append(ps, junitProperty{fmt.Sprintf("conversion.warning.%d", i+1), wn})
		}
		for _, t := range c.Timings {
			ps = append(ps, junitProperty{"conversion.timing_ms." + t.Step, strconv.FormatFloat(t.MS, 'f', -1, 64)})
		}
	}
	if bi := r.Bisect; bi != nil && bi.First != nil {
		f := bi.First
		ps = append(ps, junitProperty{"bisect.first_node", f.Node}, junitProperty{"bisect.op_type", f.OpType})
		if d := f.Diff; d != nil {
			if d.Counterpart {
				ps = append(ps, junitProperty{"bisect.b_node", d.BNode}, junitProperty{"bisect.b_op_type", qualifiedOp(d.DomainB, d.OpTypeB)})
			} else {
				ps = append(ps, junitProperty{"bisect.b_node", ""}, junitProperty{"bisect.note", d.Note})
			}
			for _, a := range d.Attrs {
				ps = append(ps, junitProperty{"bisect.attr." + a.Name, a.A + " vs " + a.B})
			}
			for _, in := range d.Inputs {
				ps = append(ps, junitProperty{fmt.Sprintf("bisect.input.%d", in.Index), inputDiffText(in)})
			}
		}
	}
	return ps
}

// runLine is "onnxconv 1.4.0 (rev 1a2b) at 2025-01-02T03:04:05Z: onnxconv convert …".
func runLine(r *Report) string {
	return fmt.Sprintf("%s at %s: %s", toolVersion(r.Provenance), runTime(r.Provenance), commandLine(r.Provenance))
}

// conversionText lists the conversion facts, one a line ("" when nil).
func conversionText(c *Conversion) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, f := range conversionFacts(c) {
		fmt.Fprintf(&b, "%s: %s\n", f.Label, f.Value)
	}
	for _, a := range c.Applied {
		fmt.Fprintf(&b, "applied: %s\n", a)
	}
	for _, wn := range c.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wn)
	}
	if len(c.Timings) > 0 {
		fmt.Fprintf(&b, "timings: %s\n", timingsText(c.Timings))
	}
	return b.String()
}

// inputDiffText is "x: float[4,64] vs B y: float[4,64]".
func inputDiffText(in InputDiff) string {
	s := orNone(in.Name) + ": " + orNone(in.A) + " vs "
	if in.BName != in.Name {
		s += "B " + orNone(in.BName) + ": "
	}
	s += orNone(in.B)
	if in.Differs {
		s += " (differs)"
	}
	if in.FirstDiff != "" {
		s += "; values differ first at " + in.FirstDiff
	}
	return s
}

// bisectText describes the first divergent node and its diff in words
// ("" without bisection).
func bisectText(bi *Bisection) string {
	if bi == nil {
		return ""
	}
	var b strings.Builder
	if bi.First == nil {
		fmt.Fprintf(&b, "bisect: %d of %d nodes checked, none diverges\n", bi.NodesChecked, bi.NodesTotal)
		return b.String()
	}
	f := bi.First
	fmt.Fprintf(&b, "bisect: first divergent node %q (%s), number %d of %d in topological order\n", f.Node, f.OpType, f.Index, bi.NodesTotal)
	for _, in := range f.Inputs {
		fmt.Fprintf(&b, "  input %s (%s): %s", in.Name, strings.ReplaceAll(in.Kind, "_", " "), strings.ReplaceAll(in.Status, "_", " "))
		if in.Status == "differs" {
			fmt.Fprintf(&b, ", max abs %.3g", in.MaxAbs)
		}
		b.WriteString("\n")
	}
	if d := f.Diff; d != nil {
		if !d.Counterpart {
			fmt.Fprintf(&b, "  B: no counterpart (%s)\n", d.Note)
		} else {
			fmt.Fprintf(&b, "  A: %s   B: %q %s\n", opText(d.DomainA, d.OpTypeA, d.VersionA, d.OpsetA), d.BNode, opText(d.DomainB, d.OpTypeB, d.VersionB, d.OpsetB))
		}
		for _, a := range d.Attrs {
			fmt.Fprintf(&b, "  attribute %s: A %s, B %s\n", a.Name, a.A, a.B)
		}
		for _, in := range d.Inputs {
			fmt.Fprintf(&b, "  input %d %s\n", in.Index, inputDiffText(in))
		}
		fmt.Fprintf(&b, "  => %s\n", d.Headline())
	}
	return b.String()
}

// opText is "Gemm (ai.onnx Gemm-13, opset 17)".
func opText(domain, op string, version int, opset int64) string {
	v := "version unknown"
	if version > 0 {
		v = fmt.Sprintf("%s-%d", op, version)
	}
	return fmt.Sprintf("%s (%s %s, opset %d)", op, domain, v, opset)
}

// sanitizeClass makes a JUnit class name from a path: its folder and file
// name (mlp_opset9/model.onnx -> mlp_opset9_model_onnx).
func sanitizeClass(s string) string {
	s = filepath.ToSlash(filepath.Clean(s))
	if parts := strings.Split(s, "/"); len(parts) >= 2 {
		s = parts[len(parts)-2] + "/" + parts[len(parts)-1]
	}
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '/' || r == '\\' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}

// outputLine is a one-line summary of an output's metrics.
func outputLine(o *OutputResult) string {
	switch {
	case o.Float != nil:
		f := o.Float
		return fmt.Sprintf("max_abs=%.3g max_rel=%.3g mean_abs=%.3g rmse=%.3g cosine=%.6f max_ulp=%.0f mismatched=%d/%d",
			f.MaxAbs, f.MaxRel, f.MeanAbs, f.RMSE, f.Cosine, f.MaxULP, o.Mismatched, o.Elements)
	case o.Exact != nil:
		return fmt.Sprintf("equal=%d/%d mismatched=%d", o.Exact.Equal, o.Exact.Total, o.Mismatched)
	}
	return o.Reason
}

// outputDetail is a multi-line description of an output.
func outputDetail(o *OutputResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %v (A) vs %s %v (B), tolerance %s rtol=%g atol=%g\n", o.Name, o.DType, o.Shape, o.BDType, o.BShape,
		o.Tolerance.Profile, o.Tolerance.RTol, o.Tolerance.ATol)
	fmt.Fprintln(&b, outputLine(o))
	if f := o.Float; f != nil && (f.NaNMismatch > 0 || f.InfMismatch > 0) {
		fmt.Fprintf(&b, "NaN positions disagree: %d, Inf positions disagree: %d\n", f.NaNMismatch, f.InfMismatch)
	}
	if d := o.Drift; d != nil && !d.Degenerate {
		fmt.Fprintf(&b, "drift: B = %.6f * A + %.3g (R2 %.6f, %d points)\n", d.Slope, d.Intercept, d.R2, d.Points)
	}
	if c := o.Classifier; c != nil {
		fmt.Fprintf(&b, "top-1 agreement %.4f", c.Top1)
		if c.Top5 != nil {
			fmt.Fprintf(&b, ", top-5 %.4f", *c.Top5)
		}
		b.WriteString("\n")
	}
	return b.String()
}
