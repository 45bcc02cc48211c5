package main

// Plugin commands: `onnxconv plugins [--json]` and the hidden
// `onnxconv __plugin serve NAME`, by which onnxconv starts itself to run a
// built-in importer or exporter out of process (see plugins/README.md and
// docs/architecture.md). The built-ins are builtinPlugins; the host options
// and the importer registry come from package plugins.

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// pluginServeArgs start a built-in plugin when followed by its name.
var pluginServeArgs = []string{"__plugin", "serve"}

// newPluginServeCmd returns the hidden `__plugin serve NAME` command, which
// serves the built-in plugin NAME of builtins over the plugin protocol. It
// is run by onnxconv itself, never by users.
func newPluginServeCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	root := &cobra.Command{
		Use:    pluginServeArgs[0],
		Short:  "Internal: serve a built-in plugin",
		Hidden: true,
	}
	root.AddCommand(&cobra.Command{
		Use:   pluginServeArgs[1] + " NAME",
		Short: "Serve the built-in plugin NAME on the plugin protocol (started by onnxconv)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mk, ok := builtins[args[0]]
			if !ok {
				return badInput(fmt.Errorf("no built-in plugin %q (built-ins: %s)", args[0], strings.Join(plugins.BuiltinNames(builtins), ", ")))
			}
			if err := sdk.Run(mk()); err != nil {
				return badInput(fmt.Errorf("serving built-in plugin %q: %w", args[0], err))
			}
			return nil
		},
	})
	return root
}

// newPluginsCmd returns `onnxconv plugins [--json]`, which lists the
// built-in and third-party plugins.
func newPluginsCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List the importer and exporter plugins",
		Long: `List the built-in plugins and the third-party plugins: executables named
onnxconv-plugin-NAME in the folders of $ONNXCONV_PLUGIN_PATH (separated by
colons) and in the user plugins folder ($XDG_CONFIG_HOME/onnxconv/plugins, ~/Library/Application Support/onnxconv/plugins, or %AppData%\onnxconv\plugins).
A built-in wins over a third-party plugin of the same name, and an earlier
folder over a later one. A plugin that does not start or answer is listed
as broken, with the reason.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, err := plugins.Discover(cmd.Context(), pluginHostOptions(builtins))
			if err != nil {
				return badInput(fmt.Errorf("listing plugins: %w", err))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), plugins.List(infos))
			}
			return plugins.WriteTable(cmd.OutOrStdout(), infos)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// pluginHostOptions returns the plugins.Options for this binary: its
// built-ins, described without starting them, served by
// `onnxconv __plugin serve NAME`.
func pluginHostOptions(builtins map[string]func() sdk.Plugin) plugins.Options {
	return plugins.BuiltinOptions(builtins, pluginServeArgs)
}

// newEnv returns the Env of a command-line run, around one plugin host
// (whose built-ins are described without being started; see
// builtinenv.Hosted): built-in importers detected in this process and
// imported through their plugin processes, third-party importer plugins,
// the built-in exporters and runtimes, and the host's runtime plugins.
func newEnv(ctx context.Context, builtins map[string]func() sdk.Plugin) (pipeline.Env, error) {
	h, err := plugins.NewHost(ctx, pluginHostOptions(builtins))
	if err != nil {
		return pipeline.Env{}, fmt.Errorf("starting the plugin host: %w", err)
	}
	return builtinenv.Hosted(h)
}
