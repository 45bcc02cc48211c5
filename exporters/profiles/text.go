package profiles

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable writes one line per profile, as 'onnxconv targets' lists
// them: name, ai.onnx opset range, ai.onnx.ml opset range, highest IR
// version and description.
func WriteTable(w io.Writer, all []*Profile) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOPSET\tML OPSET\tMAX IR\tDESCRIPTION")
	for _, p := range all {
		fmt.Fprintf(tw, "%s\t%d-%d\t%s\t%d\t%s\n", p.Name, p.MinOpset, p.MaxOpset, p.mlRange(), p.MaxIRVersion, p.Description)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the target table: %w", err)
	}
	return nil
}

// mlRange is the ai.onnx.ml opset range as text, "-" when the profile
// has none.
func (p *Profile) mlRange() string {
	if p.MLMaxOpset == 0 {
		return "-"
	}
	return fmt.Sprintf("%d-%d", p.MLMinOpset, p.MLMaxOpset)
}

// WriteText writes everything about the profile, as 'onnxconv targets
// NAME' shows it: opsets, IR version, type restrictions, the operators per
// domain with their versions and restrictions, notes and sources.
func (p *Profile) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "name:         %s\n", p.Name)
	fmt.Fprintf(&b, "description:  %s\n", p.Description)
	fmt.Fprintf(&b, "ai.onnx:      opset %d-%d\n", p.MinOpset, p.MaxOpset)
	fmt.Fprintf(&b, "ai.onnx.ml:   %s\n", p.mlRange())
	fmt.Fprintf(&b, "max IR:       %d\n", p.MaxIRVersion)
	if p.Fallback {
		b.WriteString("fallback:     operators it lacks run on a fallback provider (warnings)\n")
	}
	if p.Types != nil {
		if len(p.Types.Unsupported) > 0 {
			fmt.Fprintf(&b, "types:        unsupported %s\n", strings.Join(p.Types.Unsupported, ", "))
		}
		for _, t := range sortedKeys(p.Types.Limited) {
			fmt.Fprintf(&b, "              %s: %s\n", t, p.Types.Limited[t])
		}
	}
	for _, d := range sortedKeys(p.Ops) {
		s := p.Ops[d]
		if s.All {
			fmt.Fprintf(&b, "operators %s: all", d)
			if len(s.Except) > 0 {
				fmt.Fprintf(&b, " except %s", strings.Join(s.Except, ", "))
			}
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "operators %s (%d):\n", d, len(s.Ops))
		for _, op := range sortedKeys(s.Ops) {
			fmt.Fprintf(&b, "  %-28s %s", op, s.Ops[op])
			if r := s.Restrictions[op]; r != "" {
				fmt.Fprintf(&b, "  (%s)", r)
			}
			b.WriteString("\n")
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, s := range p.Source {
		fmt.Fprintf(&b, "source: %s", s.URL)
		if s.Version != "" {
			fmt.Fprintf(&b, " [%s]", s.Version)
		}
		if s.Note != "" {
			fmt.Fprintf(&b, " - %s", s.Note)
		}
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing target %s: %w", p.Name, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
