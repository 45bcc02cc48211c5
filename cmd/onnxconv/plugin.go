package main

// Plugin commands: `onnxconv plugins [--json]` and the hidden
// `onnxconv __plugin serve NAME`, by which onnxconv starts itself to run a
// built-in importer or exporter out of process (see plugins/ and
// ARCHITECTURE.md).
//
// Wiring (cmd/onnxconv owner):
//
//	// one map for the whole binary, built from the importer and exporter
//	// packages; each value returns the sdk.Plugin to serve: importers
//	// come from importers/builtin, served through sdk.ImporterFrom
//	builtins := builtinPlugins()
//
//	// in commands():
//	newPluginServeCmd(builtins), newPluginsCmd(builtins),
//
//	// in convert (and any command that imports or exports):
//	h, err := plugins.NewHost(ctx, pluginHostOptions(builtins))
//	name, format, err := h.Detect(ctx, in)        // unless --from names it
//	warnings, err := h.Import(ctx, name, in, tmpOnnx, opts)
//	warnings, err = h.Export(ctx, exporterName, onnxPath, out, target, opts)
//
// pluginHostOptions describes the built-ins from their sdk.Plugin (they are
// not started to be listed or detected) and leaves time and memory limits
// at their defaults (10 min a call; 3/4 of RAM); set CallTimeout and
// MemoryLimit on the returned Options to change them. Errors from Host are
// *plugins.PluginError values naming the plugin and the input file; treat
// them as exit code 2 (unreadable input) unless errors.Is(err,
// plugins.ErrTimeout) or ErrMemoryLimit calls for a hint to the user.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/protocol"
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
				return badInput(fmt.Errorf("no built-in plugin %q (built-ins: %s)", args[0], strings.Join(builtinNames(builtins), ", ")))
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
colons) and in the user plugins folder (` + userPluginDirHint() + `).
A built-in wins over a third-party plugin of the same name, and an earlier
folder over a later one. A plugin that does not start or answer is listed
as broken, with the reason.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, err := plugins.Discover(cmd.Context(), pluginHostOptions(builtins))
			if err != nil {
				return badInput(fmt.Errorf("listing plugins: %w", err))
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(pluginListJSON(infos))
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tVERSION\tFORMATS\tPATH")
			for _, p := range infos {
				path := p.Path
				if p.Builtin {
					path = "(built-in)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Kind(), orDash(p.Version()), orDash(shortFormats(p.Formats())), path)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, p := range infos {
				if p.Err != nil {
					fmt.Fprintf(out, "\n%s: %v\n", p.Name, p.Err)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// pluginHostOptions returns the plugins.Options for this binary: its
// built-ins, described without starting them, served by
// `onnxconv __plugin serve NAME`.
func pluginHostOptions(builtins map[string]func() sdk.Plugin) plugins.Options {
	opts := plugins.Options{ServeArgs: pluginServeArgs}
	for _, name := range builtinNames(builtins) {
		imp, exp := builtins[name]().Info()
		opts.Builtins = append(opts.Builtins, plugins.Builtin{Name: name, Importer: imp, Exporter: exp})
	}
	return opts
}

// pluginRegistry returns the importers of the command line: every
// built-in importer but ONNX's through its plugin process (this executable,
// `__plugin serve NAME`), in the order of builtin.Importers; then the
// third-party importer plugins in discovery order; then the ONNX importer,
// in process (canonical's checked loader; going out of process would only
// copy the model), last as in builtin.Importers.
func pluginRegistry(ctx context.Context, builtins map[string]func() sdk.Plugin) (*importers.Registry, error) {
	h, err := plugins.NewHost(ctx, pluginHostOptions(builtins))
	if err != nil {
		return nil, fmt.Errorf("starting the plugin host: %w", err)
	}
	r := &importers.Registry{}
	for _, imp := range builtin.Importers() {
		name := imp.Describe().Name
		if name == onnximp.Name {
			continue
		}
		hi, err := h.Importer(name)
		if err != nil {
			return nil, fmt.Errorf("built-in importer %s: %w", name, err)
		}
		if err := r.Add(builtinViaPlugin(imp, hi)); err != nil {
			return nil, err
		}
	}
	for _, imp := range h.Importers() {
		if err := r.Add(imp); err != nil {
			return nil, err
		}
	}
	if err := r.Add(onnximp.New()); err != nil {
		return nil, err
	}
	return r, nil
}

func builtinNames(builtins map[string]func() sdk.Plugin) []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// pluginJSON is one entry of `onnxconv plugins --json`.
type pluginJSON struct {
	Name     string                 `json:"name"`
	Kind     string                 `json:"kind"`
	Version  string                 `json:"version,omitempty"`
	Builtin  bool                   `json:"builtin"`
	Path     string                 `json:"path"`
	Importer *protocol.ImporterInfo `json:"importer,omitempty"`
	Exporter *protocol.ExporterInfo `json:"exporter,omitempty"`
	Error    string                 `json:"error,omitempty"`
}

func pluginListJSON(infos []plugins.PluginInfo) []pluginJSON {
	out := make([]pluginJSON, 0, len(infos))
	for _, p := range infos {
		j := pluginJSON{Name: p.Name, Kind: p.Kind(), Version: p.Version(), Builtin: p.Builtin, Path: p.Path,
			Importer: p.Importer, Exporter: p.Exporter}
		if p.Err != nil {
			j.Error = p.Err.Error()
		}
		out = append(out, j)
	}
	return out
}

func userPluginDirHint() string {
	return "$XDG_CONFIG_HOME/onnxconv/plugins, ~/Library/Application Support/onnxconv/plugins, or %AppData%\\onnxconv\\plugins"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortFormats joins a plugin's formats for the table, summarising long
// lists of export targets (the full list is in --json and 'onnxconv
// targets').
func shortFormats(formats []string) string {
	var targets, other []string
	for _, f := range formats {
		if strings.HasPrefix(f, "→") {
			targets = append(targets, f)
		} else {
			other = append(other, f)
		}
	}
	if len(targets) > 4 {
		other = append(other, fmt.Sprintf("%s, %s … %s (%d targets: onnxconv targets)", targets[0], targets[1], targets[len(targets)-1], len(targets)))
	} else {
		other = append(other, targets...)
	}
	return strings.Join(other, "; ")
}

// builtinViaPlugin is a built-in importer whose Import runs out of process
// (hi) but whose description (options, reference runtime) is the built-in's
// own: the plugin protocol does not carry them. When the built-in computes
// its source directly (importers.Predictor), that runs in this process,
// after the out-of-process import has read the same file.
func builtinViaPlugin(local importers.Importer, hi *plugins.HostImporter) importers.Importer {
	w := pluginImporter{HostImporter: hi, local: local}
	if p, ok := local.(importers.Predictor); ok {
		return predictingPluginImporter{pluginImporter: w, p: p}
	}
	return w
}

type pluginImporter struct {
	*plugins.HostImporter
	local importers.Importer
}

func (w pluginImporter) Describe() importers.Description { return w.local.Describe() }

type predictingPluginImporter struct {
	pluginImporter
	p importers.Predictor
}

func (w predictingPluginImporter) Source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	return w.p.Source(ctx, path, opts)
}
