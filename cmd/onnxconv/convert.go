package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/verify"
)

// newConvertCmd returns `onnxconv convert IN OUT`, a thin shell over
// pipeline.Convert.
func newConvertCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var (
		from, target string
		importOpts   []string
		allowViol    bool
		quiet        bool
		of           opsetFlags
		vf           verifyFlags
		wf           writeFlags
	)
	cmd := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert a model to ONNX (from ONNX, TFLite, XGBoost or a plugin's format), optionally for a target runtime",
		Long: `Read IN in any format an importer reads (see 'onnxconv formats'), found by its
magic bytes, else its extension (or named with --from), and write OUT as
binary protobuf (.onnx) or ONNX text syntax (.onnxtxt), chosen by
extension. Importers other than ONNX's run out of process, as plugins.

--opset N (and --ml-opset N) move the model to another opset with the
version converter; --target PROFILE fits it to a target runtime (opset,
operators, IR version; see 'onnxconv targets').

Verification is on whenever the model is changed (--opset, --ml-opset,
--target) and with any verification option; --verify asks for it,
--no-verify turns it off. It runs the result and the source on the same
inputs with the built-in executor: the source model itself when IN is ONNX,
otherwise the imported model before adaptation. With --reference DIR it
also compares the result with stored expected outputs (NAME.npy, NAME.pb or
output_N.pb/.npy; outputs without a file are not compared), computed from
the inputs in --inputs DIR (default: DIR itself). A summary goes to standard
output; --report FILE writes the comparison (the one against --reference
goes to FILE with "-reference" before the extension when both are made).
--bisect names the first diverging node of a result that is not
equivalent; --keep-failed writes such a result next to OUT (OUT's name
with .not-equivalent before the extension) instead of dropping it.

OUT is written atomically, and only when everything passed: a failed run
leaves no output. OUT may not be IN unless --force. Exit codes: 0 done,
1 not equivalent (or the model does not fit the target / opset), 2 bad
usage or unreadable input.

With --external-data, every tensor of at least --external-threshold bytes is
moved to one data file beside OUT (OUT's name + ".data" unless
--external-file is given), aligned to 4096 bytes. Without it, external data
of IN is inlined. A model whose protobuf would exceed 2 GiB is refused:
pass --external-data.`,
		Example: `  onnxconv convert model.tflite model.onnx --verify --inputs data/ --reference data/
  onnxconv convert booster.json booster.onnx --opset 13
  onnxconv convert model.onnx ort.onnx --target onnxruntime-1.17 --report verify.html --bisect`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			vo, err := vf.options(of.opset > 0 || of.mlOpset > 0 || target != "")
			if err != nil {
				return badInput(fmt.Errorf("convert: %w", err))
			}
			iopts, err := parseImportOptions(importOpts)
			if err != nil {
				return badInput(fmt.Errorf("convert: %w", err))
			}
			// An interrupt cancels the run, so that plugin processes are
			// stopped and temporary files removed.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			reg, err := cliRegistry(ctx, builtins)
			if err != nil {
				return badInput(fmt.Errorf("convert: %w", err))
			}
			pr := newProgress(stderr)
			if vo != nil {
				vo.Progress = pr.samples
			}
			opts := pipeline.Options{
				From: from, ImportOptions: iopts, Importers: reg,
				Opset: of.opset, MLOpset: of.mlOpset, Target: target, AllowViolations: allowViol,
				Verify: vo, Reports: vf.reports, KeepFailed: vf.keepFailed, Force: wf.force,
				Save: wf.save(pr.bytes),
			}
			if !quiet {
				opts.Log = logTo(stderr)
			}
			res, err := pipeline.Convert(ctx, args[0], args[1], opts)
			printConvertResult(cmd.OutOrStdout(), res)
			return convertError(err)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "format (or importer plugin) of IN, instead of detecting it")
	fl.StringVar(&target, "target", "", "fit the model to a target runtime profile (see 'onnxconv targets')")
	fl.BoolVar(&allowViol, "allow-violations", false, "with --target, write the model even when the target does not support all of it")
	fl.StringArrayVarP(&importOpts, "option", "O", nil, "importer option KEY=VALUE (repeatable), e.g. -O keep_nhwc=true for tflite; 'onnxconv formats' lists them")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress lines on standard error")
	of.register(fl)
	vf.register(fl)
	wf.register(fl)
	return cmd
}

// parseImportOptions reads -O KEY=VALUE options.
func parseImportOptions(kvs []string) (importers.Options, error) {
	opts := importers.Options{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--option %q: want KEY=VALUE", kv)
		}
		opts[k] = v
	}
	return opts, nil
}

// logTo returns a pipeline log function writing lines to w.
func logTo(w io.Writer) func(string, ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
}

// convertError maps a pipeline error to the exit code: a failed
// verification has already been printed in the summary.
func convertError(err error) error {
	if err == nil {
		return nil
	}
	var ne *pipeline.NotEquivalentError
	if errors.As(err, &ne) {
		return invalid(err)
	}
	return pipelineError(err)
}

// pipelineError maps a pipeline error to its exit code.
func pipelineError(err error) error {
	if err == nil {
		return nil
	}
	if pipeline.KindOf(err) == pipeline.KindInvalid {
		return invalid(err)
	}
	return badInput(err)
}

// printConvertResult prints the equivalence summary of every comparison,
// the notes and where a failed result was kept.
func printConvertResult(w io.Writer, res *pipeline.Result) {
	if res == nil {
		return
	}
	for _, cmp := range res.Comparisons {
		printConvertSummary(w, cmp.What, cmp.Report)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, n)
	}
	if res.Kept != "" {
		fmt.Fprintf(w, "kept the result that is not equivalent as %s\n", res.Kept)
	}
}

// printConvertSummary prints the equivalence summary of one comparison.
func printConvertSummary(w io.Writer, what string, r *verify.Report) {
	verdict := "EQUIVALENT"
	if !r.Equivalent {
		verdict = "NOT EQUIVALENT"
	}
	fmt.Fprintf(w, "verify %s: %s (%d output(s), %d sample(s))\n", what, verdict, len(r.Outputs), r.Samples)
	for _, o := range r.Outputs {
		res := "pass"
		if !o.Pass {
			res = "FAIL"
			if o.Reason != "" {
				res += " " + o.Reason
			}
		}
		switch {
		case o.Float != nil:
			fmt.Fprintf(w, "  %-16s %s %v  max_abs %.3g  max_rel %.3g  (rtol %g atol %g)  %s\n",
				o.Name, o.DType, o.Shape, o.Float.MaxAbs, o.Float.MaxRel, o.Tolerance.RTol, o.Tolerance.ATol, res)
		case o.Exact != nil:
			fmt.Fprintf(w, "  %-16s %s %v  %d of %d equal  %s\n", o.Name, o.DType, o.Shape, o.Exact.Equal, o.Exact.Total, res)
		default:
			fmt.Fprintf(w, "  %-16s %s %v  %s\n", o.Name, o.DType, o.Shape, res)
		}
	}
	for _, n := range r.Unmatched {
		fmt.Fprintf(w, "  %-16s FAIL no counterpart\n", n)
	}
	printBisect(w, r.Bisect)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// cliRegistry returns the importers of the command line: ONNX read in
// process (canonical's checked loader; going out of process would only
// copy the model), every other format through its plugin process, built
// in or third-party.
func cliRegistry(ctx context.Context, builtins map[string]func() sdk.Plugin) (*importers.Registry, error) {
	return pluginRegistry(ctx, builtins)
}
