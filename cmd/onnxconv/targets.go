package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/exporters/profiles"
)

// newTargetsCmd returns `onnxconv targets [NAME] [--json]`: the target
// runtime profiles, or everything about one.
func newTargetsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "targets [NAME]",
		Short: "List target runtime profiles, or show what one supports",
		Long: `Without NAME, list every target profile (onnxruntime-1.13 ... onnxruntime-1.30,
tensorrt-10, openvino-2025, onnxruntime-web-wasm, onnxruntime-web-webgpu and
the generic onnx-opset7 ... onnx-opsetN) with its opset range and highest IR
version. With NAME, show the profile: opsets, IR version, operators per
domain with the versions implemented, type restrictions, notes and the
sources its data comes from. 'onnxconv convert --target NAME' adapts a
model to a profile.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				all, err := profiles.All()
				if err != nil {
					return fmt.Errorf("targets: %w", err)
				}
				if asJSON {
					return writeOpsJSON(out, all)
				}
				return writeTargetTable(out, all)
			}
			p, err := profiles.Get(args[0])
			if err != nil {
				return badInput(fmt.Errorf("targets: %w", err))
			}
			if asJSON {
				return writeOpsJSON(out, p)
			}
			return writeTarget(out, p)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON instead of text")
	return cmd
}

func mlRange(p *profiles.Profile) string {
	if p.MLMaxOpset == 0 {
		return "-"
	}
	return fmt.Sprintf("%d-%d", p.MLMinOpset, p.MLMaxOpset)
}

func writeTargetTable(w io.Writer, all []*profiles.Profile) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOPSET\tML OPSET\tMAX IR\tDESCRIPTION")
	for _, p := range all {
		fmt.Fprintf(tw, "%s\t%d-%d\t%s\t%d\t%s\n", p.Name, p.MinOpset, p.MaxOpset, mlRange(p), p.MaxIRVersion, p.Description)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the target table: %w", err)
	}
	return nil
}

func writeTarget(w io.Writer, p *profiles.Profile) error {
	var b strings.Builder
	fmt.Fprintf(&b, "name:         %s\n", p.Name)
	fmt.Fprintf(&b, "description:  %s\n", p.Description)
	fmt.Fprintf(&b, "ai.onnx:      opset %d-%d\n", p.MinOpset, p.MaxOpset)
	fmt.Fprintf(&b, "ai.onnx.ml:   %s\n", mlRange(p))
	fmt.Fprintf(&b, "max IR:       %d\n", p.MaxIRVersion)
	if p.Fallback {
		b.WriteString("fallback:     operators it lacks run on a fallback provider (warnings)\n")
	}
	if p.Types != nil {
		if len(p.Types.Unsupported) > 0 {
			fmt.Fprintf(&b, "types:        unsupported %s\n", strings.Join(p.Types.Unsupported, ", "))
		}
		for _, t := range sortedNames(p.Types.Limited) {
			fmt.Fprintf(&b, "              %s: %s\n", t, p.Types.Limited[t])
		}
	}
	domains := make([]string, 0, len(p.Ops))
	for d := range p.Ops {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	for _, d := range domains {
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
		for _, op := range sortedNames(s.Ops) {
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

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
