package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
)

// newVerifyCmd returns `onnxconv verify A B`.
func newVerifyCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var (
		inputs, profile, dist, backend string
		execThreads                    int
		runtimeList                    string
		samples, bisectBatch, threads  int
		decodeSteps                    int
		kvCache                        []string
		seed                           uint64
		rtol, atol                     float64
		dims, reports                  []string
		byOrder, bisect, errMap, quiet bool
	)
	cmd := &cobra.Command{
		Use:   "verify A [B]",
		Short: "Check that two models compute the same outputs",
		Long: `Run A (the reference) and B (the candidate) on the same inputs and compare
every output: floats by max abs / max rel / mean abs / RMSE / cosine / max ULP
and NaN/Inf positions, integers, bools and strings exactly, 2-D [N, C] float
outputs also by top-1/top-5 agreement, with a drift fit B = slope*A + intercept.

B may also be a folder of stored outputs (output_N.pb or NAME.npy, or
test_data_set_N folders of them); their inputs come from --inputs, or from
the same folder when it holds them.

Inputs come from --inputs (a folder of input_N.pb, NAME.pb, NAME.npy or an
.npz, or test_data_set_N folders of them) or are generated from the input
types, deterministically from --seed; symbolic dims need --dim NAME=N.

Tolerances: per output element type (fp32 rtol 1e-4 atol 1e-5, fp16, bf16,
...); --profile picks a looser one for models converted inside (fp16, bf16,
int8); --rtol/--atol override. See docs/verify.md.

Runtimes: both models run on the built-in executor unless --runtime says
otherwise: one runtime for both sides, or two separated by a comma (A's,
then B's). "executor" is the built-in executor; "onnxruntime" is ONNX
Runtime, served by the plugin onnxconv-plugin-onnxruntime (built with cgo,
installed in the user plugins folder or $ONNXCONV_PLUGIN_PATH). With two
runtimes B may be left out: A is compared with itself across runtimes.

Exit codes: 0 equivalent, 1 not equivalent, 2 error.`,
		Example: `  onnxconv verify model.onnx converted.onnx --bisect --report out.html --report out.json
  onnxconv verify model.onnx fixtures/models/mlp_opset9/test_data_set_0
  onnxconv verify a.onnx b.onnx --dim batch=4 --samples 8 --profile fp16
  onnxconv verify --runtime onnxruntime,executor model.onnx     # our executor against ONNX Runtime
  onnxconv verify --runtime onnxruntime model.onnx converted.onnx`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			rtNames, err := runtimes.Parse(runtimeList)
			if err != nil {
				return badInput(fmt.Errorf("verify: %w", err))
			}
			opts := pipeline.CompareOptions{
				VerifyOptions: pipeline.VerifyOptions{
					Inputs: inputs, Samples: samples, Seed: seed, Distribution: dist,
					Profile: profile, ByOrder: byOrder, Bisect: bisect, BisectBatch: bisectBatch, Map: errMap, Backend: backend, Threads: execThreads,
				},
				Runtimes: rtNames, RuntimeThreads: threads,
				Reports: reports,
			}
			if len(rtNames) > 0 {
				if opts.Env, err = newEnv(cmd.Context(), builtins); err != nil {
					return badInput(fmt.Errorf("verify: %w", err))
				}
			} else {
				opts.Env = builtinenv.New() // names a file that is not ONNX
			}
			if cmd.Flags().Changed("rtol") {
				if rtol < 0 {
					return badInput(fmt.Errorf("verify: --rtol must not be negative"))
				}
				opts.RTol = &rtol
			}
			if cmd.Flags().Changed("atol") {
				if atol < 0 {
					return badInput(fmt.Errorf("verify: --atol must not be negative"))
				}
				opts.ATol = &atol
			}
			if opts.Dims, err = pipeline.ParseDims(dims); err != nil {
				return badInput(fmt.Errorf("verify: %w", err))
			}
			if err := setDecode(&opts.VerifyOptions, decodeSteps, kvCache); err != nil {
				return badInput(fmt.Errorf("verify: %w", err))
			}
			pr := cmdProgress(stderr, quiet)
			defer pr.close()
			opts.Progress, opts.LoadProgress = pr.samples, pr.bytes
			b := ""
			if len(args) == 2 {
				b = args[1]
			}
			rep, err := pipeline.Verify(cmd.Context(), args[0], b, opts)
			if err != nil {
				return pipelineError(fmt.Errorf("verify: %w", err))
			}
			if !quiet {
				if err := rep.WriteText(stdout); err != nil {
					return err
				}
			}
			if !rep.Equivalent {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&inputs, "inputs", "", "folder (or .npz) of inputs: input_N.pb, NAME.pb, NAME.npy, test_data_set_N/")
	f.IntVar(&samples, "samples", 2, "number of generated input samples")
	f.Uint64Var(&seed, "seed", 0, "seed of the generated inputs")
	f.StringVar(&dist, "dist", "normal", "distribution of generated float inputs: normal or uniform")
	f.Float64Var(&rtol, "rtol", 0, "relative tolerance (overrides the profile)")
	f.Float64Var(&atol, "atol", 0, "absolute tolerance (overrides the profile)")
	f.StringVar(&profile, "profile", "", "tolerance profile: "+strings.Join(verify.ProfileNames(), ", ")+" (default: by output type)")
	f.StringArrayVar(&dims, "dim", nil, "symbolic dim value, NAME=N (repeatable); INPUT:AXIS=N for unnamed dims")
	f.BoolVar(&byOrder, "by-order", false, "match outputs and inputs by position instead of name")
	f.BoolVar(&bisect, "bisect", false, "find the first node of A whose output diverges")
	f.IntVar(&bisectBatch, "bisect-batch", 64, "values captured per run while bisecting or mapping")
	f.BoolVar(&errMap, "map", false, "compare every intermediate tensor of B with A's and rank the nodes by where the error starts (in the reports)")
	f.StringArrayVar(&reports, "report", nil, "write a report: .json, .md, .html or .xml (JUnit); repeatable")
	f.StringVar(&backend, "backend", "", "GoMLX backend of the built-in executor")
	f.IntVar(&execThreads, "threads", 0, "built-in executor kernel threads (0: all cores; results do not depend on it)")
	f.StringVar(&runtimeList, "runtime", "", "runtime of both sides, or A's and B's separated by a comma: executor (default), onnxruntime, or any runtime plugin")
	f.IntVar(&threads, "runtime-threads", 0, "intra-op threads of plugin runtimes (0: the runtime chooses)")
	f.BoolVarP(&quiet, "quiet", "q", false, "print nothing; the exit code tells")
	registerDecode(f, &decodeSteps, &kvCache)
	return cmd
}
