package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
)

// importerOptionsHelp is the -O section of convert's help, generated from
// the option specs of the built-in importers' descriptions (the ones
// 'onnxconv formats --json' lists, with those of third-party plugins).
func importerOptionsHelp() string {
	var ds []importers.Description
	for _, imp := range builtin.Importers() {
		ds = append(ds, imp.Describe())
	}
	return optionsHelp(ds)
}

// optionsHelp lists the options of ds, format by format: KEY=VALUES
// (default) and what the option does.
func optionsHelp(ds []importers.Description) string {
	var b strings.Builder
	b.WriteString("Importer options (-O KEY=VALUE, repeatable; 'onnxconv formats --json' lists them,\nwith those of third-party plugins):")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, d := range ds {
		if len(d.Options) == 0 {
			fmt.Fprintf(tw, "\n  %s: none", d.Name)
			continue
		}
		fmt.Fprintf(tw, "\n  %s:", d.Name)
		for _, o := range d.Options {
			fmt.Fprintf(tw, "\n    %s=%s\t%s", o.Name, o.Synopsis(), o.Doc)
		}
	}
	_ = tw.Flush() // a strings.Builder does not fail
	return b.String()
}
