package main

// `onnxconv formats`: the formats of the built-in and third-party importer
// plugins (pipeline.BuiltinPlugins and plugins.Discover).

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// newFormatsCmd returns `onnxconv formats [--json]`: the formats convert
// reads, from the built-in and third-party importer plugins.
func newFormatsCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var asJSON, ops bool
	cmd := &cobra.Command{
		Use:   "formats [FORMAT --ops]",
		Short: "List the model formats convert reads (importer plugins)",
		Long: `List the formats convert reads: one line per importer plugin, built-in or
third-party (see 'onnxconv plugins'), with the extensions and whether it
recognizes files by magic bytes. Detection tries magic bytes first, then
the extension; --from FORMAT names the format instead.

'onnxconv formats tfjs --ops' (or tensorflow) lists every op of TF.js's
graph-model op list and whether the TF-op mapping maps it;
'onnxconv formats tflite --ops' prints the TFLite op table: for each
builtin operator, how it imports and which ONNX ops export to it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ops || len(args) > 0 {
				return writeFormatOps(cmd, args, ops, asJSON)
			}
			infos, err := plugins.Discover(cmd.Context(), pluginHostOptions(builtins))
			if err != nil {
				return badInput(fmt.Errorf("listing formats: %w", err))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), plugins.Formats(infos))
			}
			return plugins.WriteFormatTable(cmd.OutOrStdout(), plugins.Formats(infos))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&ops, "ops", false, "list the ops of FORMAT (tfjs, tensorflow, tflite) and how each is mapped")
	return cmd
}
