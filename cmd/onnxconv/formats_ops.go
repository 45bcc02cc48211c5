package main

// `onnxconv formats tfjs --ops [--json]`: every op of TF.js's graph-model
// op list and whether the TF-op mapping (importers/tfops) maps it.

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/importers/tfops"
)

// formatOps is what `formats FORMAT --ops --json` prints.
type formatOps struct {
	Format string             `json:"format"`
	Source string             `json:"source"`
	Total  int                `json:"total"`
	Mapped int                `json:"mapped"`
	Ops    []tfops.OpCoverage `json:"ops"`
}

func writeFormatOps(cmd *cobra.Command, args []string, ops, asJSON bool) error {
	if !ops || len(args) != 1 {
		return badInput(errors.New("formats: list a format's ops with 'onnxconv formats FORMAT --ops' (FORMAT: tfjs, tensorflow or tflite)"))
	}
	switch args[0] {
	case "tfjs", "tensorflow":
	case "tflite":
		return writeTFLiteOps(cmd.OutOrStdout(), args, ops, asJSON)
	default:
		return badInput(fmt.Errorf("formats %s --ops: op lists are known for tfjs, tensorflow (one TF-op mapping serves both) and tflite", args[0]))
	}
	cov := tfops.TFJSCoverage()
	res := formatOps{Format: args[0], Source: "@tensorflow/tfjs-converter " + tfops.TFJSVersion + " op list", Total: len(cov), Ops: cov}
	for _, c := range cov {
		if c.Mapped {
			res.Mapped++
		}
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OP\tCATEGORY\tMAPPED\tNOTE")
	for _, c := range cov {
		m := "no"
		if c.Mapped {
			m = "yes"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Op, c.Category, m, c.Note)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "%d of the %d ops of %s are mapped\n", res.Mapped, res.Total, res.Source)
	return err
}
