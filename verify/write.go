package verify

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
// .md, .html, .xml for JUnit XML), atomically.
func WriteReport(path string, r *Report) error {
	var buf bytes.Buffer
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		err = WriteJSON(&buf, r)
	case ".md", ".markdown":
		err = WriteMarkdown(&buf, r)
	case ".html", ".htm":
		err = WriteHTML(&buf, r)
	case ".xml":
		err = WriteJUnit(&buf, r)
	default:
		return fmt.Errorf("report %s: unknown format %q (use %s)", path, filepath.Ext(path), strings.Join(Formats(), ", "))
	}
	if err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := writeFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// CheckReportPath reports an error for a report path whose format is
// unknown, before any work is done.
func CheckReportPath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json", ".md", ".markdown", ".html", ".htm", ".xml":
		return nil
	}
	return fmt.Errorf("report %s: unknown format %q (use %s)", path, filepath.Ext(path), strings.Join(Formats(), ", "))
}

func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
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
// output without counterpart in B is a failed testcase).
func WriteJUnit(w io.Writer, r *Report) error {
	secs := fmt.Sprintf("%.3f", r.DurationMS/1000)
	s := junitSuite{
		Name: "onnxconv verify " + r.A.Name + " vs " + r.B.Name, Time: secs,
		Properties: []junitProperty{
			{"a", r.A.Name}, {"b", r.B.Name}, {"samples", fmt.Sprint(r.Samples)},
			{"profile", r.Options.Profile}, {"equivalent", fmt.Sprint(r.Equivalent)},
		},
		SystemOut: r.Summary,
	}
	class := "verify." + sanitizeClass(r.A.Name)
	for _, o := range r.Outputs {
		c := junitCase{Name: o.Name, Classname: class, Time: "0", SystemOut: outputLine(o)}
		if !o.Pass {
			c.Failure = &junitFailure{Message: o.Reason, Type: "NotEquivalent", Text: outputDetail(o)}
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
	doc := junitSuites{Name: "onnxconv verify", Tests: s.Tests, Failures: s.Failures, Time: secs, Suites: []junitSuite{s}}
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
