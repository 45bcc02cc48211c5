package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/onnxspec"
)

// newOpsCmd returns `onnxconv ops [NAME] [--domain D] [--json]`: the
// operator registry as a table, or every version of one operator with what
// changed between consecutive versions.
func newOpsCmd() *cobra.Command {
	var (
		domain string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "ops [NAME]",
		Short: "List ONNX operators and their versions, or the history of one operator",
		Long: `Without NAME, list every operator (domain, name, latest version, all
since-versions). With NAME, show every version of that operator and what
changed between consecutive versions. NAME may carry its domain as a prefix
(ai.onnx.ml.TreeEnsemble); --domain restricts the search to one domain
(ai.onnx, ai.onnx.ml, ai.onnx.preview, ai.onnx.preview.training).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				rows, err := onnxspec.Summaries(domain)
				if err != nil {
					return badInput(fmt.Errorf("ops: %w", err))
				}
				if asJSON {
					return writeJSON(out, rows)
				}
				return onnxspec.WriteSummaryTable(out, rows)
			}
			h, err := onnxspec.History(domain, args[0])
			if err != nil {
				return badInput(fmt.Errorf("ops %s: %w", args[0], err))
			}
			if asJSON {
				return writeJSON(out, h)
			}
			return onnxspec.WriteHistory(out, h)
		},
	}
	cmd.Flags().StringVar(&domain, "domain", "", "operator domain (default: all domains)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON instead of text")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}
