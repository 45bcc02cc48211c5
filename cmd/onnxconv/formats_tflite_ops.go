package main

// `onnxconv formats tflite --ops [--json]`: the one TFLite op table of
// formats/tflite, both directions.

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
)

// writeTFLiteOps prints the TFLite op table ('formats tflite --ops').
func writeTFLiteOps(w io.Writer, args []string, ops, asJSON bool) error {
	if len(args) != 1 || !ops {
		return badInput(fmt.Errorf("formats: give a format and --ops, as in 'onnxconv formats tflite --ops'"))
	}
	if args[0] != "tflite" {
		return badInput(fmt.Errorf("formats: no op table for %q; the formats with one: tflite", args[0]))
	}
	table := formats.Ops()
	if asJSON {
		return writeJSON(w, table)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUILTIN\tIMPORT (ONNX built)\tEXPORT (ONNX ops written with it)")
	imported, exported := 0, 0
	for _, o := range table {
		imp, exp := o.Import, strings.Join(o.Export, ", ")
		if imp == "" {
			imp = "-"
		} else {
			imported++
		}
		if exp == "" {
			exp = "-"
		} else {
			exported++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", o.Name, imp, exp)
	}
	fmt.Fprintf(tw, "\n%d builtins: %d imported, %d written by the exporter\n", len(table), imported, exported)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the op table: %w", err)
	}
	return nil
}
