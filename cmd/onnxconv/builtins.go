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
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), plugins.Formats(infos))
			}
			return plugins.WriteFormatTable(cmd.OutOrStdout(), plugins.Formats(infos))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
