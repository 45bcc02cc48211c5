package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/pipeline"
)

// newOpsetCmd returns `onnxconv opset MODEL [OUT] --opset N`, a thin shell
// over pipeline.Opset and pipeline.Plan. It speaks convert's vocabulary:
// --opset, --ml-opset, the verification flags, --force.
func newOpsetCmd() *cobra.Command {
	var (
		out            string
		dryRun, asJSON bool
		quiet          bool
		of             opsetFlags
		vf             verifyFlags
		wf             writeFlags
	)
	cmd := &cobra.Command{
		Use:   "opset MODEL [OUT] --opset N [--ml-opset N] [--dry-run]",
		Short: "Upgrade or downgrade a model's ai.onnx (and ai.onnx.ml) opset",
		Long: `opset moves an ONNX model to another ai.onnx opset (7..28) and, with
--ml-opset, another ai.onnx.ml opset (1..5), one operator version step at a
time, and writes it to OUT (or -o OUT). It is 'onnxconv convert' for ONNX
input, with the same flags: the result is verified against the source on
the built-in executor (--no-verify turns that off; --inputs, --reference,
--report, --bisect, --map, --keep-failed as for convert), and OUT may not be
MODEL unless --force.

--dry-run converts nothing: it lists every node that blocks the target and
why, and exits 1 when anything blocks. --to and --to-ml are older names of
--opset and --ml-opset.`,
		Example: `  onnxconv opset model.onnx model-13.onnx --opset 13
  onnxconv opset model.onnx --opset 7 --dry-run --json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if of.opset == 0 && of.mlOpset == 0 {
				return badInput(errors.New("opset: give the target with --opset N (ai.onnx) and/or --ml-opset N (ai.onnx.ml)"))
			}
			if len(args) == 2 {
				if out != "" && out != args[1] {
					return badInput(fmt.Errorf("opset: two outputs: %s and -o %s", args[1], out))
				}
				out = args[1]
			}
			w := cmd.OutOrStdout()
			if dryRun {
				if out != "" {
					return badInput(errors.New("opset: --dry-run writes nothing; drop OUT"))
				}
				plan, err := pipeline.Plan(cmd.Context(), args[0], of.opset, of.mlOpset, pipeline.LoadOptions{Importers: builtin.Registry()})
				if err != nil {
					return pipelineError(err)
				}
				if asJSON {
					enc := json.NewEncoder(w)
					enc.SetIndent("", "  ")
					if err := enc.Encode(plan); err != nil {
						return err
					}
				} else if err := plan.WriteText(w); err != nil {
					return err
				}
				if len(plan.Blockers) > 0 {
					return silentExit(exitInvalid)
				}
				return nil
			}
			if asJSON {
				return badInput(errors.New("opset: --json goes with --dry-run"))
			}
			if out == "" {
				return badInput(errors.New("opset: give the output file (OUT or -o OUT), or use --dry-run"))
			}
			vo, err := vf.options(true)
			if err != nil {
				return badInput(fmt.Errorf("opset: %w", err))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			pr := cmdProgress(cmd.ErrOrStderr(), quiet)
			defer pr.close()
			if vo != nil {
				vo.Progress = pr.samples
			}
			opts := pipeline.Options{
				Env:   builtinenv.New(), // ONNX in, in process
				Opset: of.opset, MLOpset: of.mlOpset,
				Verify: vo, Reports: vf.reports, KeepFailed: vf.keepFailed, Force: wf.force,
				Save: wf.save(pr.bytes),
			}
			if !quiet {
				opts.Log = pr.logf
			}
			res, err := pipeline.Opset(ctx, args[0], out, opts)
			printConvertResult(w, res)
			if err != nil {
				return convertError(err)
			}
			cv := res.Conversion
			fmt.Fprintf(w, "%s: opset %d -> %d, written to %s\n", args[0], cv.OpsetBefore, cv.OpsetAfter, out)
			return nil
		},
	}
	fl := cmd.Flags()
	of.register(fl)
	fl.IntVar(&of.opset, "to", 0, "older name of --opset")
	fl.IntVar(&of.mlOpset, "to-ml", 0, "older name of --ml-opset")
	_ = fl.MarkHidden("to")
	_ = fl.MarkHidden("to-ml")
	fl.StringVarP(&out, "output", "o", "", "output model (.onnx or .onnxtxt); or give it as OUT")
	fl.BoolVar(&dryRun, "dry-run", false, "list what blocks the target instead of converting")
	fl.BoolVar(&asJSON, "json", false, "with --dry-run, print the blockers as JSON")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress lines on standard error")
	vf.register(fl)
	wf.register(fl)
	return cmd
}
