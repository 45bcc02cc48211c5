package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/opset/convert"
)

func newOpsetCmd() *cobra.Command {
	var (
		to, toML int
		out      string
		dryRun   bool
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "opset MODEL --to N -o OUT [--dry-run]",
		Short: "Upgrade or downgrade a model's ai.onnx (and ai.onnx.ml) opset",
		Long: `opset moves a model to another ai.onnx opset (7..27) and, with --to-ml,
another ai.onnx.ml opset (1..5), one operator version step at a time.

--dry-run converts nothing: it lists every node that blocks the target and
why, and exits 1 when anything blocks.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == 0 && toML == 0 {
				return badInput(errors.New("give the target with --to N (ai.onnx) and/or --to-ml N (ai.onnx.ml)"))
			}
			if !dryRun && out == "" {
				return badInput(errors.New("give the output file with -o OUT (or use --dry-run)"))
			}
			in := args[0]
			m, err := canonical.Load(in, canonical.LoadOptions{})
			if err != nil {
				return badInput(err)
			}
			defer m.Close()
			opts := convert.Options{To: to, ToML: toML}
			w := cmd.OutOrStdout()
			if dryRun {
				blockers, err := convert.Plan(m, opts)
				if err != nil {
					return badInput(fmt.Errorf("%s: %w", in, err))
				}
				if asJSON {
					enc := json.NewEncoder(w)
					enc.SetIndent("", "  ")
					if blockers == nil {
						blockers = []convert.Blocker{}
					}
					if err := enc.Encode(map[string]any{"model": in, "from": m.Opset(""), "to": to, "blockers": blockers}); err != nil {
						return err
					}
				} else if len(blockers) == 0 {
					fmt.Fprintf(w, "%s: nothing blocks opset %d\n", in, to)
				} else {
					fmt.Fprintf(w, "%s: %d node(s) block opset %d:\n", in, len(blockers), to)
					for _, b := range blockers {
						fmt.Fprintf(w, "  %s\n", b)
					}
				}
				if len(blockers) > 0 {
					return silentExit(exitInvalid)
				}
				return nil
			}
			res, err := convert.Convert(m, opts)
			var be *convert.BlockedError
			if errors.As(err, &be) {
				return invalid(fmt.Errorf("%s: %w\nnothing was written; run with --dry-run to list the blockers", in, err))
			}
			if err != nil {
				return badInput(fmt.Errorf("%s: %w", in, err))
			}
			if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
				return badInput(err)
			}
			fmt.Fprintf(w, "%s: opset %d -> %d, %d node(s) rewritten, written to %s\n", in, res.FromOpset, res.ToOpset, res.Rewritten, out)
			return nil
		},
	}
	cmd.Flags().IntVar(&to, "to", 0, "target ai.onnx opset (7..27)")
	cmd.Flags().IntVar(&toML, "to-ml", 0, "target ai.onnx.ml opset (1..5)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output model (.onnx)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what blocks the target instead of converting")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --dry-run, print the blockers as JSON")
	return cmd
}
