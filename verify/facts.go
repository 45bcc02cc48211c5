package verify

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// unknown is shown for provenance or conversion facts nobody recorded.
const unknown = "unknown"

func orUnknown(s string) string {
	if s == "" {
		return unknown
	}
	return s
}

// fact is one labelled line of provenance or conversion facts, shared by
// the Markdown, HTML and JUnit writers. Key is the JUnit property name.
type fact struct {
	Key, Label, Value string
	// Code marks values shown as code (paths, command lines).
	Code bool
}

// toolVersion is "onnxconv 1.4.0 (rev 1a2b3c4d)", "onnxconv unknown" when
// the version is not known.
func toolVersion(p *Provenance) string {
	if p == nil {
		return "onnxconv " + unknown
	}
	s := orUnknown(p.Tool)
	if p.Tool == "" {
		s = "onnxconv"
	}
	s += " " + orUnknown(p.Version)
	if p.Revision != "" {
		s += " (rev " + p.Revision + ")"
	}
	return s
}

// commandLine joins the command with shell quoting where needed.
func commandLine(p *Provenance) string {
	if p == nil || len(p.Command) == 0 {
		return unknown
	}
	parts := make([]string, len(p.Command))
	for i, a := range p.Command {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:=,+@%", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

func runTime(p *Provenance) string {
	if p == nil || p.Time.IsZero() {
		return unknown
	}
	return p.Time.UTC().Format(time.RFC3339)
}

// provenanceFacts are the facts of the run; a nil Provenance gives
// "unknown" values.
func provenanceFacts(p *Provenance) []fact {
	return []fact{
		{Key: "version", Label: "tool", Value: toolVersion(p)},
		{Key: "command", Label: "command", Value: commandLine(p), Code: p != nil && len(p.Command) > 0},
		{Key: "time", Label: "time", Value: runTime(p)},
	}
}

func beforeAfter(a, b int64) string {
	if a == b {
		return strconv.FormatInt(a, 10) + " (unchanged)"
	}
	return fmt.Sprintf("%d → %d", a, b)
}

// timingsText is "import 12 ms, convert 3.1 ms".
func timingsText(ts []Timing) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Step + " " + fmtMS(t.MS) + " ms"
	}
	return strings.Join(parts, ", ")
}

func fmtMS(ms float64) string {
	switch {
	case ms >= 100:
		return strconv.FormatFloat(ms, 'f', 0, 64)
	case ms >= 1:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	}
	return strconv.FormatFloat(ms, 'g', 2, 64)
}

// conversionFacts are the scalar conversion facts (Applied, Warnings and
// Timings are lists the writers show on their own).
func conversionFacts(c *Conversion) []fact {
	out := fmt.Sprintf("%s → %s", orUnknown(c.Source), orUnknown(c.Output))
	if c.Output == "" {
		out = orUnknown(c.Source) + " (no output written)"
	}
	fs := []fact{
		{Key: "conversion.source", Label: "source → output", Value: out, Code: true},
		{Key: "conversion.format", Label: "format / importer", Value: orUnknown(c.SourceFormat) + " / " + orUnknown(c.Importer)},
		{Key: "conversion.target", Label: "target", Value: orNone(c.Target)},
	}
	if c.NotVerified != "" {
		fs = append(fs, fact{Key: "conversion.not_verified", Label: "NOT VERIFIED against the source", Value: c.NotVerified})
	} else if c.Reference != "" {
		fs = append(fs, fact{Key: "conversion.reference", Label: "source computed by", Value: c.Reference})
	}
	switch {
	case c.RanIn != "":
		fs = append(fs, fact{Key: "conversion.ran_in", Label: "result run in", Value: c.RanIn})
	case c.NotRunIn != "":
		fs = append(fs, fact{Key: "conversion.not_run_in", Label: "result NOT run in its target runtime", Value: c.NotRunIn})
	}
	fs = append(fs, fact{Key: "conversion.opset", Label: "opset", Value: beforeAfter(c.OpsetBefore, c.OpsetAfter)})
	if c.MLOpsetBefore != 0 || c.MLOpsetAfter != 0 {
		fs = append(fs, fact{Key: "conversion.ml_opset", Label: "ai.onnx.ml opset", Value: beforeAfter(c.MLOpsetBefore, c.MLOpsetAfter)})
	}
	fs = append(fs, fact{Key: "conversion.ir", Label: "IR version", Value: beforeAfter(c.IRBefore, c.IRAfter)})
	if c.SourceSHA256 != "" {
		fs = append(fs, fact{Key: "conversion.source_sha256", Label: "source SHA-256", Value: c.SourceSHA256, Code: true})
	}
	if c.OutputSHA256 != "" {
		fs = append(fs, fact{Key: "conversion.output_sha256", Label: "output SHA-256", Value: c.OutputSHA256, Code: true})
	}
	return fs
}
