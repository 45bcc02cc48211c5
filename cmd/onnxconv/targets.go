package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/exporters/profiles"
)

// newTargetsCmd returns `onnxconv targets [NAME] [--json]`: the target
// runtime profiles, or everything about one.
func newTargetsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "targets [NAME]",
		Short: "List target runtime profiles, or show what one supports",
		Long: `Without NAME, list every target profile (onnxruntime-1.13 ... onnxruntime-1.30,
tensorrt-10, openvino-2025, onnxruntime-web-wasm, onnxruntime-web-webgpu and
the generic onnx-opset7 ... onnx-opsetN) with its opset range and highest IR
version. With NAME, show the profile: opsets, IR version, operators per
domain with the versions implemented, type restrictions, notes and the
sources its data comes from. 'onnxconv convert --target NAME' adapts a
model to a profile.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				all, err := profiles.All()
				if err != nil {
					return fmt.Errorf("targets: %w", err)
				}
				if asJSON {
					return writeJSON(out, all)
				}
				return profiles.WriteTable(out, all)
			}
			p, err := profiles.Get(args[0])
			if err != nil {
				return badInput(fmt.Errorf("targets: %w", err))
			}
			if asJSON {
				return writeJSON(out, p)
			}
			return p.WriteText(out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON instead of text")
	return cmd
}
