package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/reduce"
)

// newReduceCmd returns `onnxconv reduce MODEL -o BUNDLE`.
func newReduceCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var (
		inputs, profile, dist, against, out string
		threads, maxTests                   int
		seed                                uint64
		rtol, atol                          float64
		dims                                []string
		quiet                               bool
	)
	cmd := &cobra.Command{
		Use:   "reduce MODEL -o BUNDLE",
		Short: "Shrink a model on which two runtimes disagree to a small repro bundle",
		Long: `Run MODEL on two sides, ONNX Runtime (--against, the reference) and the
built-in executor, on one sample (the first of --inputs, else generated), and
shrink it to the smallest subgraph on which they still diverge beyond
tolerance, or that the side that fails on MODEL still fails to load or run
while the other runs it. The search is delta debugging over the nodes: a
value a kept node reads from a dropped node becomes a graph input fed with
the value the reference computed on the whole model; nodes nothing kept
needs are dropped. When the sides diverge, it starts from the first
diverging node (as --bisect finds it) alone.

BUNDLE (a new or empty folder) receives model.onnx, test_data_set_0/
(input_N.pb and the reference's output_N.pb), outputs_b/ (B's outputs),
reduce.json (the command, tool and runtime versions, the nodes kept, the
comparison, SHA-256 of the files), SHA256SUMS and a README.md that says how
to replay it with 'onnxconv verify'.

Exit codes: 0 a bundle was written, 2 error (also when the sides agree on
MODEL: nothing to reduce).`,
		Example: `  onnxconv reduce model.onnx -o bug/                     # executor against ONNX Runtime
  onnxconv reduce model.onnx --inputs samples/ -o bug/ && cat bug/README.md`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			opts := pipeline.ReduceOptions{
				VerifyOptions: pipeline.VerifyOptions{Inputs: inputs, Seed: seed, Distribution: dist, Profile: profile},
				Against:       against, RuntimeThreads: threads, Bundle: out, MaxTests: maxTests,
			}
			if cmd.Flags().Changed("rtol") {
				opts.RTol = &rtol
			}
			if cmd.Flags().Changed("atol") {
				opts.ATol = &atol
			}
			var err error
			if opts.Dims, err = pipeline.ParseDims(dims); err != nil {
				return badInput(fmt.Errorf("reduce: %w", err))
			}
			if opts.Env, err = newEnv(cmd.Context(), builtins); err != nil {
				return badInput(fmt.Errorf("reduce: %w", err))
			}
			if !quiet {
				opts.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, "reduce: "+format+"\n", a...) }
			}
			res, err := pipeline.Reduce(cmd.Context(), args[0], opts)
			if err != nil {
				return pipelineError(err)
			}
			defer res.Close()
			if !quiet {
				printReduced(stdout, args[0], out, res)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "folder of the bundle (new or empty)")
	f.StringVar(&against, "against", "onnxruntime", "runtime of the reference side (A); B is the built-in executor")
	f.StringVar(&inputs, "inputs", "", "folder (or .npz) of inputs; the first sample is used")
	f.Uint64Var(&seed, "seed", 0, "seed of the generated inputs")
	f.StringVar(&dist, "dist", "normal", "distribution of generated float inputs: normal or uniform")
	f.StringArrayVar(&dims, "dim", nil, "symbolic dim value, NAME=N (repeatable)")
	f.Float64Var(&rtol, "rtol", 0, "relative tolerance (overrides the profile)")
	f.Float64Var(&atol, "atol", 0, "absolute tolerance (overrides the profile)")
	f.StringVar(&profile, "profile", "", "tolerance profile: "+strings.Join(verify.ProfileNames(), ", ")+" (default: by output type)")
	f.IntVar(&maxTests, "max-tests", reduce.DefaultMaxTests, "most candidate models tried")
	f.IntVar(&threads, "runtime-threads", 0, "intra-op threads of the reference runtime (0: it chooses)")
	f.BoolVarP(&quiet, "quiet", "q", false, "print nothing; the exit code tells")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

// printReduced says what the bundle holds.
func printReduced(w io.Writer, model, dir string, res *reduce.Result) {
	ops := make([]string, len(res.Nodes))
	for i, n := range res.Nodes {
		ops[i] = n.OpType
		if n.Name != "" {
			ops[i] += " " + n.Name
		}
	}
	fmt.Fprintf(w, "reduced %s from %d nodes to %d (%s) in %d candidate(s)\n", model, res.NodesBefore, len(res.Nodes), strings.Join(ops, ", "), res.Tests)
	switch res.Mode {
	case reduce.Fails:
		fmt.Fprintf(w, "side %s still fails: %s\n", "AB"[res.Failing:res.Failing+1], res.Error)
	default:
		for _, o := range res.Report.Outputs {
			if !o.Pass {
				fmt.Fprintf(w, "still diverges: %s: %s\n", o.Name, o.Reason)
			}
		}
	}
	if res.Stopped {
		fmt.Fprintf(w, "the search stopped at --max-tests: a smaller model may exist\n")
	}
	fmt.Fprintf(w, "bundle: %s (its README.md says how to replay it)\n", dir)
}
