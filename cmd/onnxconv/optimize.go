package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	expbuiltin "github.com/onnxconv/onnxconv/exporters/builtin"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// transformFlags are the flags optimize, fp16 and quantize share.
type transformFlags struct {
	// verify, noVerify: the one --verify/--no-verify vocabulary of
	// convert and opset; verification is the default.
	verify, noVerify bool
	inputs           string
	dims             []string
	samples          int
	seed             uint64
	report           string
	force            bool
	errMap           bool
}

func (f *transformFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&f.inputs, "inputs", "", "folder of verification input samples (input_N.pb, NAME.npy, test_data_set_N/...); default: generated")
	cmd.Flags().IntVar(&f.samples, "samples", 2, "number of generated verification samples")
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "seed of generated verification inputs")
	cmd.Flags().StringVar(&f.report, "report", "", "write the "+what+" report as JSON to FILE")
	cmd.Flags().BoolVar(&f.force, "force", false, "let OUT replace IN")
	cmd.Flags().StringArrayVar(&f.dims, "dim", nil, "symbolic dim value for generated inputs, NAME=N or INPUT:AXIS=N (repeatable)")
	cmd.Flags().BoolVar(&f.verify, "verify", false, "check the result against IN on the executor and refuse it when not equivalent (the default)")
	cmd.Flags().BoolVar(&f.noVerify, "no-verify", false, "apply unchecked (the summary says NOT VERIFIED)")
	cmd.Flags().BoolVar(&f.errMap, "map", false, "compare every intermediate tensor of the result with IN's on the first sample and rank the nodes by where the error starts (a quantized tensor in steps; in the summary and the --report JSON)")
}

// options returns the library options of the flags.
func (f *transformFlags) options() (pipeline.TransformOptions, error) {
	if f.verify && f.noVerify {
		return pipeline.TransformOptions{}, errors.New("--verify and --no-verify contradict each other")
	}
	if f.errMap && f.noVerify {
		return pipeline.TransformOptions{}, errors.New("--map needs the check that --no-verify skips: drop one of them")
	}
	dims, err := pipeline.ParseDims(f.dims)
	if err != nil {
		return pipeline.TransformOptions{}, err
	}
	return pipeline.TransformOptions{Inputs: f.inputs, Samples: f.samples, Seed: f.seed, Report: f.report, Force: f.force, Unchecked: f.noVerify, Dims: dims, Map: f.errMap,
		Importers: builtin.Registry(), Exporters: expbuiltin.Registry()}, nil
}

// printVerdict prints the verification verdict of a transform: the
// summary of its last comparison (what computed each side), or NOT
// VERIFIED when unchecked; then the error map when there is one (--map).
func printVerdict(w io.Writer, final *verify.Report, m *errmap.Map, in string, unchecked bool) {
	switch {
	case unchecked:
		fmt.Fprintln(w, "verify: NOT VERIFIED (--no-verify): the result was written unchecked")
	case final != nil:
		_ = final.WriteSummary(w, "against "+in)
	default:
		fmt.Fprintln(w, "verify: nothing changed, nothing to compare")
	}
	if m != nil {
		fmt.Fprint(w, m.Text(5))
	}
}

// newOptimizeCmd returns `onnxconv optimize IN OUT`.
func newOptimizeCmd() *cobra.Command {
	var (
		tf        transformFlags
		list      string
		foldLimit int64
		opsetMax  int64
	)
	cmd := &cobra.Command{
		Use:   "optimize IN OUT",
		Short: "Simplify a model with passes that keep its numbers, each checked by the executor",
		Long: `Apply graph passes to IN and write the result to OUT. Each pass runs on a
copy of the model; unless --no-verify the copy is run by the
built-in executor on the verification inputs and compared with the model
before the pass (fp32: rtol 1e-4, atol 1e-5). A pass that changes an
output beyond tolerance is rolled back and named, with the first diverging
node. Per pass the report gives nodes and bytes before and after and the
error it introduced.

Passes (default: all, in this order):
` + passList(),
		Example: `  onnxconv optimize model.onnx model.opt.onnx
  onnxconv optimize model.onnx out.onnx --passes fold-constants,eliminate-dead --report passes.json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			if list != "" {
				names = strings.Split(list, ",")
			}
			ps, err := passes.Lookup(names)
			if err != nil {
				return badInput(fmt.Errorf("optimize: --passes: %w", err))
			}
			ro := passes.RunOptions{
				Options: passes.Options{FoldLimit: foldLimit, Opset: opsetMax},
				Logf: func(format string, a ...any) {
					fmt.Fprintf(cmd.ErrOrStderr(), "  "+format+"\n", a...)
				},
			}
			o, err := tf.options()
			if err != nil {
				return badInput(fmt.Errorf("optimize: %w", err))
			}
			rep, err := pipeline.Optimize(cmd.Context(), args[0], args[1], ps, ro, o)
			if rep != nil {
				printVerdict(cmd.OutOrStdout(), rep.Final, rep.Map, args[0], o.Unchecked)
			}
			if err != nil {
				return pipelineError(err)
			}
			return rep.WriteText(cmd.OutOrStdout(), args[0], args[1])
		},
	}
	tf.add(cmd, "per-pass")
	cmd.Flags().StringVar(&list, "passes", "", "comma-separated passes to run, in order (default: all)")
	cmd.Flags().Int64Var(&foldLimit, "fold-limit", passes.DefaultFoldLimit, "largest tensor in bytes that constant folding writes")
	cmd.Flags().Int64Var(&opsetMax, "max-opset", 0, "highest ai.onnx opset the fusions may use ops of (default: the model's)")
	return cmd
}

func passList() string {
	var b strings.Builder
	_ = passes.WriteList(&b)
	return b.String()
}
