package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
)

// newInspectCmd returns `onnxconv inspect MODEL [--json]`.
func newInspectCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect MODEL",
		Short: "Describe a model: versions, opsets, inputs and outputs, ops, parameters",
		Long: `Print MODEL's IR version, producer, imported opsets, graph inputs and
outputs with their types and shapes, the histogram of operators (subgraphs
and functions included), the parameter count and bytes, and the external
data files it uses. --json prints the same as one JSON object.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			// inspect reads no tensor data: it describes models whose
			// data is missing or damaged too (check reports those).
			m, err := loadModelOpts(path, cmd.ErrOrStderr(), canonical.LoadOptions{SkipDataChecks: true})
			if err != nil {
				return err
			}
			defer m.Close()
			s := canonical.Summarize(m)
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					File string `json:"file"`
					canonical.Summary
				}{path, s}); err != nil {
					return fmt.Errorf("%s: writing JSON: %w", path, err)
				}
				return nil
			}
			return s.WriteText(out, path)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
