package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// newConvertCmd returns `onnxconv convert IN OUT`, a thin shell over
// pipeline.Convert.
func newConvertCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var (
		from, target string
		importOpts   []string
		allowViol    bool
		rawScore     bool
		quiet        bool
		verbose      bool
		optimize     bool
		passList     []string
		fp16, bf16   bool
		keepIOTypes  bool
		quantMode    string
		calibration  string
		perChannel   bool
		calibMethod  string
		layout       string
		keepNCHW     bool
		setDims      []string
		dynamic      []string
		renames      []string
		of           opsetFlags
		vf           verifyFlags
		wf           writeFlags
	)
	cmd := &cobra.Command{
		Use: "convert IN OUT",
		// OUT ending in .tflite (or --target tflite, tflite-float32,
		// tflite-float16) writes TFLite instead of ONNX.
		Short: "Convert a model to ONNX (from ONNX, TFLite, XGBoost or a plugin's format), optionally for a target runtime",
		Long: `Read IN in any format an importer reads (see 'onnxconv formats'), found by its
magic bytes, else its extension (or named with --from), and write OUT as
binary protobuf (.onnx) or ONNX text syntax (.onnxtxt), chosen by
extension, or as a TFLite flatbuffer (.tflite, or --target tflite,
tflite-float32, tflite-float16: NHWC inside, inputs of convolutions NHWC
unless --keep-nchw-io; verified in Google's TFLite interpreter). Importers
other than ONNX's run out of process, as plugins.

--opset N (and --ml-opset N) move the model to another opset with the
version converter; --target PROFILE fits it to a target runtime (opset,
operators, IR version; see 'onnxconv targets').

Every convert is verified unless --no-verify: the result is compared with
the SOURCE as its own framework computes it (a direct predictor for tree
models, the format's reference runtime, for ONNX ONNX Runtime), per output,
on generated inputs or --inputs DIR, and also with stored outputs given by
--reference DIR. A result that is not equivalent is not written (exit 1;
--keep-failed keeps it); when nothing computes the source the summary says
NOT VERIFIED (exit 3). docs/verify.md says, per format, what computes each
side and what every figure means. An ONNX model with test_data_set_N folders
beside it (the ONNX backend tests) is verified on their inputs, with their
outputs as a second reference, unless --inputs or --reference is given.

OUT is written atomically, and only when everything passed: a failed run
leaves no output. OUT may not be IN unless --force; an OUT that is a
folder, or whose extension names no format onnxconv writes, is refused
before any work. Exit codes: 0 done (and verified), 1 not equivalent (or
the model does not fit the target / opset, or the result does not run), 2
bad usage or unreadable input, 3 written but NOT VERIFIED against the
source, 4 the model uses something onnxconv does not support (every such
part is listed).

With --external-data, every tensor of at least --external-threshold bytes is
moved to one data file beside OUT (OUT's name + ".data" unless
--external-file is given), aligned to 4096 bytes. That is also done without
the flag when IN had external data or when OUT's protobuf would exceed
2 GiB; --no-external-data writes every tensor inside OUT instead (a model
over 2 GiB is then refused).

` + importerOptionsHelp(),
		Example: `  onnxconv convert model.tflite model.onnx --verify --inputs data/ --reference data/
  onnxconv convert booster.json booster.onnx --opset 13
  onnxconv convert model.onnx ort.onnx --target onnxruntime-1.17 --report verify.html --bisect`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			// Every convert changes the model (format, opset, target,
			// precision or layout): it verifies unless --no-verify.
			vo, err := vf.options(true)
			if err != nil {
				return badInput(fmt.Errorf("convert: %w", err))
			}
			iopts, err := pipeline.ParseImportOptions(importOpts)
			if err != nil {
				return badInput(fmt.Errorf("convert: %w", err))
			}
			if rawScore {
				iopts["raw_score"] = "true"
			}
			if layout != "" {
				iopts["layout"] = layout
			}
			// An interrupt cancels the run, so that plugin processes are
			// stopped and temporary files removed.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			env, err := newEnv(ctx, builtins)
			if err != nil {
				return badInput(fmt.Errorf("convert: %w", err))
			}
			pr := cmdProgress(stderr, quiet)
			defer pr.close()
			if vo != nil {
				vo.Progress = pr.samples
			}
			if passList != nil {
				optimize = true
			}
			sd, err := pipeline.ParseDims(setDims)
			if err != nil {
				return badInput(fmt.Errorf("convert: --set-dim: %w", err))
			}
			dyn, err := pipeline.ParseDynamic(dynamic)
			if err != nil {
				return badInput(fmt.Errorf("convert: %w", err))
			}
			ren, err := pipeline.ParseRenames(renames)
			if err != nil {
				return badInput(fmt.Errorf("convert: %w", err))
			}
			opts := pipeline.Options{
				SetDims: sd, Dynamic: dyn, Rename: ren,
				Optimize: optimize, OptimizePasses: passList, Calibration: calibration, KeepIOLayout: keepNCHW,
				From: from, ImportOptions: iopts, Env: env,
				Opset: of.opset, MLOpset: of.mlOpset, Target: target, AllowViolations: allowViol,
				Verify: vo, Reports: vf.reports, KeepFailed: vf.keepFailed, Force: wf.force,
				Save: wf.save(pr.bytes), Verbose: verbose,
			}
			if fp16 || bf16 {
				opts.FP16 = &passes.FP16Options{BF16: bf16, KeepIOTypes: keepIOTypes}
			}
			switch quantMode {
			case "":
			case string(passes.Static), string(passes.Dynamic):
				opts.Quantize = &passes.QuantOptions{Mode: passes.QuantMode(quantMode), PerChannel: perChannel, Method: passes.CalibMethod(calibMethod)}
			default:
				return badInput(fmt.Errorf("convert: --quantize %q: use static or dynamic", quantMode))
			}
			if !quiet {
				opts.Log = pr.logf
			}
			res, err := pipeline.Convert(ctx, args[0], args[1], opts)
			printConvertResult(cmd.OutOrStdout(), res)
			if err != nil {
				return convertError(err)
			}
			return notVerified(res)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "format (or importer plugin) of IN, instead of detecting it")
	fl.StringVar(&target, "target", "", "fit the model to a target runtime profile (see 'onnxconv targets')")
	fl.BoolVar(&allowViol, "allow-violations", false, "with --target, write the model even when the target does not support all of it")
	fl.BoolVar(&rawScore, "raw-score", false, "tree models: output the raw margin (before the link function), as -O raw_score=true")
	fl.StringArrayVarP(&importOpts, "option", "O", nil, "importer option KEY=VALUE (repeatable), e.g. -O keep_nhwc=true for tflite; the help's last section and 'onnxconv formats --json' list them")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress lines on standard error")
	fl.BoolVar(&verbose, "verbose", false, "say the whole error of a reference runtime that failed (a C++ backtrace), not only its first line")
	fl.BoolVar(&optimize, "optimize", false, "run the graph passes after import (each checked on the executor, rolled back if it changes an output)")
	fl.StringSliceVar(&passList, "passes", nil, "with --optimize: the passes to run, comma separated (see 'onnxconv optimize --help')")
	fl.BoolVar(&fp16, "fp16", false, "convert weights and compute to float16 after adaptation (nodes that diverge stay float32)")
	fl.BoolVar(&bf16, "bf16", false, "as --fp16, to bfloat16")
	fl.BoolVar(&keepIOTypes, "keep-io-types", false, "with --fp16/--bf16: keep float32 graph inputs and outputs")
	fl.StringVar(&quantMode, "quantize", "", "int8 QDQ quantization after adaptation: static or dynamic")
	fl.StringVar(&calibration, "calibration", "", "with --quantize static: folder of calibration input samples (default: 32 generated)")
	fl.BoolVar(&perChannel, "per-channel", false, "with --quantize: per-channel weights")
	fl.StringVar(&calibMethod, "calibration-method", "minmax", "with --quantize static: minmax, percentile or entropy")
	fl.StringVar(&layout, "layout", "", "TF.js and Keras sources: nchw makes image inputs and outputs channels-first (as -O layout=nchw)")
	fl.BoolVar(&keepNCHW, "keep-nchw-io", false, "TFLite output: keep the ONNX (NCHW) layout of inputs and outputs")
	fl.StringArrayVar(&setDims, "set-dim", nil, "write a fixed size for a symbolic dim of the inputs and outputs, NAME=N (repeatable; verified at that size)")
	fl.StringArrayVar(&dynamic, "dynamic", nil, "make a dim of an input or output symbolic, NAME:AXIS or NAME:AXIS=PARAM (repeatable)")
	fl.StringArrayVar(&renames, "rename", nil, "rename an input or output of the result, OLD=NEW (repeatable; verified by position)")
	of.register(fl)
	vf.register(fl)
	wf.register(fl)
	return cmd
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
	if isUnsupported(err) {
		return &exitError{code: exitUnsupported, err: err}
	}
	if pipeline.KindOf(err) == pipeline.KindInvalid {
		return invalid(err)
	}
	return badInput(err)
}

// notVerified is the exit of a conversion that was written but that
// nothing could check against its source: exit code 3, so that CI can
// tell it from a verified result.
func notVerified(res *pipeline.Result) error {
	if res == nil || res.Conversion.NotVerified == "" {
		return nil
	}
	// The reason is in the summary above: said once.
	return &exitError{code: exitNotVerified, err: fmt.Errorf("%s was written, but NOT VERIFIED against its source (the reason is in the summary)", res.Written)}
}

// printConvertResult prints the equivalence summary of every comparison,
// the notes and where a failed result was kept.
func printConvertResult(w io.Writer, res *pipeline.Result) {
	if res == nil {
		return
	}
	for _, cmp := range res.Comparisons {
		if cmp.RunOnce {
			_ = cmp.Report.WriteRunOnceSummary(w)
		} else if cmp.Excused {
			_ = cmp.Report.WriteSummary(w, cmp.What+" [excused: the engines differ here, not the conversion; see the notes]")
		} else {
			_ = cmp.Report.WriteSummary(w, cmp.What)
		}
	}
	if len(res.Comparisons) == 0 && res.Written != "" {
		fmt.Fprintf(w, "verify: NOT VERIFIED (--no-verify): %s was written unchecked\n", res.Written)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, n)
	}
	if res.Kept != "" {
		fmt.Fprintf(w, "kept the result that is not equivalent as %s\n", res.Kept)
	}
}

// isUnsupported tells whether err is a model that uses parts onnxconv
// cannot map: an importer or an exporter met an operator or construct it
// has no mapping for. An opset or target the model does not fit (the
// version converter's or a target's violations: exit 1) and a reference
// runtime that cannot compute a model (not verified: exit 3) are not.
func isUnsupported(err error) bool {
	var ops *unsupported.OpsError
	if !errors.As(err, &ops) {
		return false
	}
	switch ops.Stage {
	case unsupported.StageImport, unsupported.StageExport:
		return true
	}
	return false
}
