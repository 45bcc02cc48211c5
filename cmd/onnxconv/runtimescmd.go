package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/runtimes/discover"
)

// newRuntimesCmd returns `onnxconv runtimes [install]`.
func newRuntimesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runtimes",
		Short: "List the reference runtimes verification uses: where each was found, its version",
		Long: `List each reference runtime that computes a source for verification —
Google's TFLite interpreter, TF.js and ONNX Runtime (npm's onnxruntime-node)
under Node, and libtorch through its plugin (the cgo plugin for ONNX
Runtime too, when built) — where it was found and its version, or what is
missing and the one command that installs it. 'onnxconv runtimes install'
puts the Node packages into the onnxconv data folder ($XDG_DATA_HOME/onnxconv,
else ~/.local/share/onnxconv), where every command finds them from any
working folder, and builds the libtorch plugin when it can.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for _, r := range discover.List(discover.Options{PluginDirs: pluginDirs()}) {
				if r.Missing != "" {
					fmt.Fprintf(w, "%-20s MISSING  %s\n", r.Name, r.Missing)
					continue
				}
				v := r.Version
				if v == "" {
					v = "-"
				}
				fmt.Fprintf(w, "%-20s %-8s %s\n%-20s          %s\n", r.Name, v, r.Where, "", r.What)
			}
			return nil
		},
	}
	var dir string
	install := &cobra.Command{
		Use:   "install",
		Short: "Install the Node runtimes (TFLite, TF.js, ONNX Runtime) with npm into the onnxconv data folder, and build the libtorch plugin",
		Long: `Run 'npm install --ignore-scripts' of the pinned releases (` + fmt.Sprint(discover.Packages()) + `)
into the onnxconv data folder ($XDG_DATA_HOME/onnxconv, else
~/.local/share/onnxconv; --dir another), where every command finds them
from any working folder. No package script runs. Needs Node.js and npm.
Then, when Debian's libtorch-dev, g++, a Go toolchain and the onnxconv
source (a checkout at or above the working folder) are there, build the
libtorch plugin (go build -tags libtorch, with cgo) into the user plugins
folder; otherwise say what is missing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			d, err := discover.Install(ctx, dir, cmd.ErrOrStderr(), cmd.ErrOrStderr())
			if err != nil {
				return badInput(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed into %s\n", d)
			if dir != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "set ONNXCONV_NODE_MODULES=%s for onnxconv to use them\n", filepath.Join(d, "node_modules"))
			}
			p, err := discover.InstallLibtorch(ctx, "", discover.LibtorchOptions{}, cmd.ErrOrStderr(), cmd.ErrOrStderr())
			var lm *discover.LibtorchMissingError
			switch {
			case errors.As(err, &lm):
				fmt.Fprintf(cmd.OutOrStdout(), "libtorch: %v\n", lm)
			case err != nil:
				return badInput(err)
			default:
				fmt.Fprintf(cmd.OutOrStdout(), "built the libtorch plugin: %s\n", p)
			}
			return nil
		},
	}
	install.Flags().StringVar(&dir, "dir", "", "install here instead of the onnxconv data folder")
	cmd.AddCommand(install)
	return cmd
}

// pluginDirs are the folders plugins are looked for in: $ONNXCONV_PLUGIN_PATH
// and the user plugins folder.
func pluginDirs() []string {
	dirs := filepath.SplitList(os.Getenv("ONNXCONV_PLUGIN_PATH"))
	if u, err := plugins.UserDir(); err == nil {
		dirs = append(dirs, u)
	}
	return dirs
}
