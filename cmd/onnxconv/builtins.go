package main

// The built-in plugins of onnxconv. Each runs out of process, served by
// `onnxconv __plugin serve NAME` (see plugin.go and plugins/README.md).

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	onnxexp "github.com/onnxconv/onnxconv/exporters/onnx"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	tfjsruntime "github.com/onnxconv/onnxconv/runtimes/tfjs"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
	"github.com/onnxconv/onnxconv/version"
)

// builtinVersion is the version the built-in plugins report: onnxconv's.
func builtinVersion() string { return version.Get().Short() }

// builtinPlugins returns the built-in plugins by name: every built-in
// importer (importers/builtin), served through sdk.ImporterFrom, and the
// ONNX exporter.
func builtinPlugins() map[string]func() sdk.Plugin {
	m := map[string]func() sdk.Plugin{
		onnxexp.Name:             func() sdk.Plugin { return sdk.Plugin{Exporter: onnxexp.Plugin(builtinVersion())} },
		tfliteruntime.PluginName: func() sdk.Plugin { return tfliteruntime.Plugin(tfliteruntime.FindOptions{}) },
		tfjsruntime.PluginName:   func() sdk.Plugin { return tfjsruntime.Plugin(tfjsruntime.FindOptions{}) },
	}
	for _, imp := range builtin.Importers() {
		m[imp.Describe().Name] = func() sdk.Plugin { return sdk.Plugin{Importer: sdk.ImporterFrom(imp, builtinVersion())} }
	}
	return m
}

// newFormatsCmd returns `onnxconv formats [--json]`: the formats convert
// reads, from the built-in and third-party importer plugins.
func newFormatsCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "formats",
		Short: "List the model formats convert reads (importer plugins)",
		Long: `List the formats convert reads: one line per importer plugin, built-in or
third-party (see 'onnxconv plugins'), with the extensions and whether it
recognizes files by magic bytes. Detection tries magic bytes first, then
the extension; --from FORMAT names the format instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, err := plugins.Discover(cmd.Context(), pluginHostOptions(builtins))
			if err != nil {
				return badInput(fmt.Errorf("listing formats: %w", err))
			}
			type format struct {
				Format      string   `json:"format"`
				Plugin      string   `json:"plugin"`
				Extensions  []string `json:"extensions"`
				Magic       bool     `json:"magic"`
				Description string   `json:"description,omitempty"`
			}
			list := []format{}
			for _, p := range infos {
				if p.Err != nil || p.Importer == nil {
					continue
				}
				list = append(list, format{Format: p.Importer.Format, Plugin: p.Name, Extensions: append([]string{}, p.Importer.Extensions...),
					Magic: len(p.Importer.Magic) > 0, Description: p.Importer.Description})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "FORMAT\tPLUGIN\tEXTENSIONS\tMAGIC\tDESCRIPTION")
			for _, f := range list {
				magic := "no"
				if f.Magic {
					magic = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Format, f.Plugin, orDash(strings.Join(f.Extensions, " ")), magic, f.Description)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
