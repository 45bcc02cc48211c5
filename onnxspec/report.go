package onnxspec

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// OpSummary describes one operator across its versions: one row of
// `onnxconv ops`.
type OpSummary struct {
	Domain       string `json:"domain"` // spelled out: "ai.onnx", "ai.onnx.ml", ...
	Name         string `json:"name"`
	Latest       int    `json:"latest"`   // highest SinceVersion
	Versions     []int  `json:"versions"` // every SinceVersion, ascending
	Deprecated   bool   `json:"deprecated,omitempty"`
	Experimental bool   `json:"experimental,omitempty"`
}

// Summaries returns one row per operator, sorted by domain and name.
// filter is a domain as a user types it: "" lists every domain, "ai.onnx"
// only the default domain. An unknown domain is an error.
func Summaries(filter string) ([]OpSummary, error) {
	want := ""
	if filter != "" {
		want = NormalizeDomain(filter)
		if _, ok := genMaxOpset[want]; !ok {
			return nil, fmt.Errorf("opset: unknown domain %q (known: %s)", filter, strings.Join(displayDomains(), ", "))
		}
	}
	var out []OpSummary
	for _, d := range Domains() {
		if filter != "" && d != want {
			continue
		}
		for _, name := range Ops(d) {
			vs := index[opKey{d, name}]
			last := vs[len(vs)-1]
			row := OpSummary{
				Domain:       DisplayDomain(d),
				Name:         name,
				Latest:       last.SinceVersion,
				Deprecated:   last.Deprecated,
				Experimental: last.Experimental,
			}
			for _, s := range vs {
				row.Versions = append(row.Versions, s.SinceVersion)
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// WriteSummaryTable writes rows as an aligned text table with the columns
// DOMAIN, OP, LATEST and VERSIONS.
func WriteSummaryTable(w io.Writer, rows []OpSummary) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tOP\tLATEST\tVERSIONS")
	for _, r := range rows {
		vs := make([]string, len(r.Versions))
		for i, v := range r.Versions {
			vs[i] = strconv.Itoa(v)
		}
		name := r.Name
		if r.Deprecated {
			name += " (deprecated)"
		}
		if r.Experimental {
			name += " (experimental)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Domain, name, r.Latest, strings.Join(vs, ", "))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing operator table: %w", err)
	}
	return nil
}

// VersionChange is one version of an operator with what changed since the
// previous version.
type VersionChange struct {
	Schema *Schema `json:"schema"`
	// InForceUntil is the last opset version in which this version is the
	// one in force (the next version's SinceVersion - 1, or the domain's
	// MaxOpset).
	InForceUntil int `json:"in_force_until"`
	// Changes lists the differences from the previous version
	// (ChangesBetween); empty for the first version, and empty for a later
	// one whose change is in semantics or documentation only.
	Changes []string `json:"changes"`
}

// OpHistory is every version of one operator.
type OpHistory struct {
	Domain   string          `json:"domain"` // spelled out
	Name     string          `json:"name"`
	Versions []VersionChange `json:"versions"`
}

// History returns every version of an operator with the changes between
// consecutive versions. domain and name are resolved as by Resolve.
func History(domain, name string) (*OpHistory, error) {
	d, n, err := Resolve(domain, name)
	if err != nil {
		return nil, err
	}
	vs := index[opKey{d, n}]
	h := &OpHistory{Domain: DisplayDomain(d), Name: n}
	for i, s := range vs {
		vc := VersionChange{Schema: s, InForceUntil: MaxOpset(d), Changes: []string{}}
		if i+1 < len(vs) {
			vc.InForceUntil = vs[i+1].SinceVersion - 1
		}
		if i > 0 {
			if c := ChangesBetween(vs[i-1], s); c != nil {
				vc.Changes = c
			}
		}
		h.Versions = append(h.Versions, vc)
	}
	return h, nil
}

// WriteHistory writes h as text: the signature of the first version, the
// changes of each later one, and the signature of the latest.
func WriteHistory(w io.Writer, h *OpHistory) error {
	if h == nil || len(h.Versions) == 0 {
		return fmt.Errorf("opset: empty operator history")
	}
	var b strings.Builder
	since := make([]string, len(h.Versions))
	for i, v := range h.Versions {
		since[i] = strconv.Itoa(v.Schema.SinceVersion)
	}
	fmt.Fprintf(&b, "%s.%s: %d version(s): %s\n", h.Domain, h.Name, len(h.Versions), strings.Join(since, ", "))
	for i, v := range h.Versions {
		s := v.Schema
		fmt.Fprintf(&b, "\n%s-%d", s.Name, s.SinceVersion)
		var notes []string
		if v.InForceUntil > s.SinceVersion {
			notes = append(notes, fmt.Sprintf("opsets %d-%d", s.SinceVersion, v.InForceUntil))
		} else {
			notes = append(notes, fmt.Sprintf("opset %d", s.SinceVersion))
		}
		if s.Deprecated {
			notes = append(notes, "deprecated")
		}
		if s.Experimental {
			notes = append(notes, "experimental")
		}
		fmt.Fprintf(&b, " (%s)\n", strings.Join(notes, ", "))
		if i == 0 {
			writeSignature(&b, s)
			continue
		}
		fmt.Fprintf(&b, "  changes since %d:\n", h.Versions[i-1].Schema.SinceVersion)
		if len(v.Changes) == 0 {
			b.WriteString("    (none in the signature; semantics or documentation only)\n")
		}
		for _, c := range v.Changes {
			fmt.Fprintf(&b, "    - %s\n", c)
		}
	}
	if len(h.Versions) > 1 {
		last := h.Versions[len(h.Versions)-1].Schema
		fmt.Fprintf(&b, "\nlatest signature (%s-%d):\n", last.Name, last.SinceVersion)
		writeSignature(&b, last)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing history of %s.%s: %w", h.Domain, h.Name, err)
	}
	return nil
}

func writeSignature(b *strings.Builder, s *Schema) {
	if s.Summary != "" {
		fmt.Fprintf(b, "  %s\n", s.Summary)
	}
	if s.Deprecated {
		b.WriteString("  (deprecated: the spec gives no signature)\n")
		return
	}
	writeParams := func(kind string, ps []FormalParameter, lo, hi int) {
		fmt.Fprintf(b, "  %s (%s):\n", kind, FormatArity(lo, hi))
		for _, p := range ps {
			fmt.Fprintf(b, "    %s\n", describeParam(p))
		}
	}
	writeParams("inputs", s.Inputs, s.MinInputs, s.MaxInputs)
	writeParams("outputs", s.Outputs, s.MinOutputs, s.MaxOutputs)
	if len(s.Attributes) > 0 {
		b.WriteString("  attributes:\n")
		attrs := append([]Attribute(nil), s.Attributes...)
		sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
		for i := range attrs {
			fmt.Fprintf(b, "    %s: %s\n", attrs[i].Name, describeAttr(&attrs[i]))
		}
	}
	if len(s.TypeConstraints) > 0 {
		b.WriteString("  type constraints:\n")
		for _, tc := range s.TypeConstraints {
			fmt.Fprintf(b, "    %s: %s\n", tc.Param, strings.Join(tc.Allowed, ", "))
		}
	}
}
