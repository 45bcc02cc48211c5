package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

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
			writeSummary(out, path, s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func writeSummary(w io.Writer, path string, s canonical.Summary) {
	fmt.Fprintf(w, "model:       %s\n", path)
	fmt.Fprintf(w, "ir_version:  %d\n", s.IRVersion)
	if s.ProducerName != "" || s.ProducerVersion != "" {
		fmt.Fprintf(w, "producer:    %s %s\n", s.ProducerName, s.ProducerVersion)
	}
	if s.Domain != "" || s.ModelVersion != 0 {
		fmt.Fprintf(w, "domain:      %s (model version %d)\n", s.Domain, s.ModelVersion)
	}
	var ops []string
	for _, o := range s.Opsets {
		d := o.Domain
		if d == "" {
			d = "ai.onnx"
		}
		ops = append(ops, fmt.Sprintf("%s %d", d, o.Version))
	}
	fmt.Fprintf(w, "opsets:      %s\n", strings.Join(ops, ", "))
	fmt.Fprintf(w, "inputs:\n")
	for _, v := range s.Inputs {
		note := ""
		if v.Initializer {
			note = "  (has a default: initializer)"
		}
		fmt.Fprintf(w, "  %-24s %s%s\n", v.Name, v.Type, note)
	}
	fmt.Fprintf(w, "outputs:\n")
	for _, v := range s.Outputs {
		fmt.Fprintf(w, "  %-24s %s\n", v.Name, v.Type)
	}
	fmt.Fprintf(w, "nodes:       %d", s.Nodes)
	if s.Functions > 0 {
		fmt.Fprintf(w, " (functions: %d)", s.Functions)
	}
	fmt.Fprintln(w)
	for _, o := range s.Ops {
		name := o.Op
		if o.Domain != "" {
			name = o.Domain + "." + o.Op
		}
		fmt.Fprintf(w, "  %-24s %d\n", name, o.Count)
	}
	consts := ""
	if s.ConstantTensors > 0 {
		consts = fmt.Sprintf(" and %d Constant nodes", s.ConstantTensors)
	}
	fmt.Fprintf(w, "parameters:  %d in %d initializers%s, %s\n", s.Parameters, s.Initializers, consts, humanBytes(s.ParameterBytes))
	if len(s.ExternalFiles) > 0 {
		fmt.Fprintf(w, "external data:\n")
		for _, f := range s.ExternalFiles {
			fmt.Fprintf(w, "  %-24s %d tensors, %s\n", f.Location, f.Tensors, humanBytes(f.Bytes))
		}
	}
}

// humanBytes formats a byte count (canonical.HumanBytes).
func humanBytes(n int64) string { return canonical.HumanBytes(n) }
