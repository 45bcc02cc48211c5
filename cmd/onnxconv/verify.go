package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// newVerifyCmd returns `onnxconv verify A B`.
func newVerifyCmd() *cobra.Command {
	var (
		inputs, profile, dist, backend string
		runtimes                       string
		samples, bisectBatch, threads  int
		seed                           uint64
		rtol, atol                     float64
		dims, reports                  []string
		byOrder, bisect, quiet         bool
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
			for _, r := range reports {
				if err := verify.CheckReportPath(r); err != nil {
					return badInput(err)
				}
			}
			if dist != "normal" && dist != "uniform" {
				return badInput(fmt.Errorf("verify: --dist %q: use normal or uniform", dist))
			}
			opts := verify.Options{
				Samples: samples, Profile: profile, ByOrder: byOrder, Bisect: bisect,
				BisectBatch: bisectBatch, Backend: backend,
				Gen: verify.GenOptions{Seed: seed, Distribution: dist},
			}
			if profile != "" {
				if _, err := verify.LookupProfile(profile); err != nil {
					return badInput(fmt.Errorf("verify: --profile: %w", err))
				}
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
			var err error
			if opts.Gen.Dims, err = parseDims(dims); err != nil {
				return badInput(err)
			}
			rtNames, err := parseRuntimes(runtimes)
			if err != nil {
				return badInput(err)
			}
			if threads < 0 {
				return badInput(fmt.Errorf("verify: --runtime-threads must not be negative"))
			}
			if len(args) == 1 && len(rtNames) != 2 {
				return badInput(fmt.Errorf("verify: give two models (A B), or one model and two runtimes to compare it across (--runtime onnxruntime,executor A)"))
			}
			pathB := args[0]
			if len(args) == 2 {
				pathB = args[1]
			}
			rts, err := newRuntimeSetup(cmd.Context(), rtNames, threads)
			if err != nil {
				return badInput(err)
			}

			ma, err := loadModel(args[0], stderr)
			if err != nil {
				return err
			}
			a, err := rts.side(0, args[0], ma)
			if err != nil {
				return badInput(err)
			}
			var b *verify.Side
			st, err := os.Stat(pathB)
			if err != nil {
				return badInput(fmt.Errorf("verify: B: %w", err))
			}
			if st.IsDir() {
				if len(rtNames) == 2 {
					return badInput(fmt.Errorf("verify: --runtime %s names a runtime for B, but B (%s) is stored outputs", runtimes, pathB))
				}
				b = &verify.Side{Name: pathB}
				if inputs == "" {
					inputs = pathB
				}
			} else {
				mb := ma
				if len(args) == 2 {
					if mb, err = loadModel(pathB, stderr); err != nil {
						return err
					}
				}
				if b, err = rts.side(1, pathB, mb); err != nil {
					return badInput(err)
				}
			}

			if inputs != "" {
				sets, err := tensorio.SetDirs(inputs)
				if err != nil {
					return badInput(fmt.Errorf("verify: --inputs: %w", err))
				}
				in := verifyValueNames(verify.GraphInputs(ma))
				for _, s := range sets {
					ts, err := tensorio.LoadSet(s, "input", in)
					if err != nil {
						return badInput(fmt.Errorf("verify: inputs: %w", err))
					}
					opts.Inputs = append(opts.Inputs, ts)
				}
				opts.InputSource = inputs
			}
			if st.IsDir() {
				sets, err := tensorio.SetDirs(pathB)
				if err != nil {
					return badInput(fmt.Errorf("verify: B: %w", err))
				}
				out := verifyValueNames(ma.Graph.Outputs)
				for _, s := range sets {
					ts, err := tensorio.LoadSet(s, "output", out)
					if err != nil {
						return badInput(fmt.Errorf("verify: stored outputs: %w", err))
					}
					b.Expected = append(b.Expected, ts)
				}
			}

			total := samples
			if opts.Inputs != nil {
				total = len(opts.Inputs)
			}
			var finish func()
			opts.Progress, finish = sampleBar(stderr, total)
			rep, err := verify.Compare(cmd.Context(), a, b, opts)
			finish()
			if err != nil {
				return badInput(err)
			}
			if rtNames != nil {
				rep.Notes = append(rep.Notes, rts.describe(b))
			}
			for _, p := range reports {
				if err := verify.WriteReport(p, rep); err != nil {
					return badInput(err)
				}
			}
			if !quiet {
				printVerify(stdout, rep)
			}
			if !rep.Equivalent {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&inputs, "inputs", "", "folder (or .npz) of inputs: input_N.pb, NAME.pb, NAME.npy, test_data_set_N/")
	f.IntVar(&samples, "samples", 1, "number of generated input samples")
	f.Uint64Var(&seed, "seed", 0, "seed of the generated inputs")
	f.StringVar(&dist, "dist", "normal", "distribution of generated float inputs: normal or uniform")
	f.Float64Var(&rtol, "rtol", 0, "relative tolerance (overrides the profile)")
	f.Float64Var(&atol, "atol", 0, "absolute tolerance (overrides the profile)")
	f.StringVar(&profile, "profile", "", "tolerance profile: "+strings.Join(verify.ProfileNames(), ", ")+" (default: by output type)")
	f.StringArrayVar(&dims, "dim", nil, "symbolic dim value, NAME=N (repeatable); INPUT:AXIS=N for unnamed dims")
	f.BoolVar(&byOrder, "by-order", false, "match outputs and inputs by position instead of name")
	f.BoolVar(&bisect, "bisect", false, "find the first node of A whose output diverges")
	f.IntVar(&bisectBatch, "bisect-batch", 64, "values captured per run while bisecting")
	f.StringArrayVar(&reports, "report", nil, "write a report: .json, .md, .html or .xml (JUnit); repeatable")
	f.StringVar(&backend, "backend", "", "GoMLX backend of the built-in executor")
	f.StringVar(&runtimes, "runtime", "", "runtime of both sides, or A's and B's separated by a comma: executor (default), onnxruntime, or any runtime plugin")
	f.IntVar(&threads, "runtime-threads", 0, "intra-op threads of plugin runtimes (0: the runtime chooses)")
	f.BoolVarP(&quiet, "quiet", "q", false, "print nothing; the exit code tells")
	return cmd
}

func verifyValueNames(vs []*canonical.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// parseDims reads --dim NAME=N values.
func parseDims(dims []string) (map[string]int64, error) {
	m := map[string]int64{}
	for _, d := range dims {
		k, v, ok := strings.Cut(d, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("verify: --dim %q: want NAME=N", d)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("verify: --dim %q: %q is not a non-negative integer", d, v)
		}
		m[k] = n
	}
	return m, nil
}

// sampleBar draws a progress bar over the samples when stderr is a
// terminal and there are several samples.
func sampleBar(stderr io.Writer, total int) (func(done, total int), func()) {
	f, ok := stderr.(*os.File)
	if !ok || total < 2 || !term.IsTerminal(int(f.Fd())) {
		return nil, func() {}
	}
	pb := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription("verify"),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
	)
	return func(done, _ int) { _ = pb.Set(done) }, func() { _ = pb.Finish() }
}

func printVerify(w io.Writer, r *verify.Report) {
	fmt.Fprintln(w, r.Summary)
	for _, o := range r.Outputs {
		res := "pass"
		if !o.Pass {
			res = "FAIL " + o.Reason
		}
		fmt.Fprintf(w, "  %s [%s %v]: %s\n", o.Name, o.DType, o.Shape, res)
		switch {
		case o.Float != nil:
			f := o.Float
			fmt.Fprintf(w, "    max_abs %.3g  max_rel %.3g  mean_abs %.3g  rmse %.3g  cosine %.6f  max_ulp %.0f  (%s rtol %g atol %g)\n",
				f.MaxAbs, f.MaxRel, f.MeanAbs, f.RMSE, f.Cosine, f.MaxULP, o.Tolerance.Profile, o.Tolerance.RTol, o.Tolerance.ATol)
			if d := o.Drift; d != nil && !d.Degenerate {
				fmt.Fprintf(w, "    drift: B = %.6f*A %+.3g (R2 %.6f)\n", d.Slope, d.Intercept, d.R2)
			}
			if c := o.Classifier; c != nil {
				fmt.Fprintf(w, "    top-1 agreement %.4f", c.Top1)
				if c.Top5 != nil {
					fmt.Fprintf(w, ", top-5 %.4f", *c.Top5)
				}
				fmt.Fprintln(w)
			}
		case o.Exact != nil:
			fmt.Fprintf(w, "    %d of %d equal\n", o.Exact.Equal, o.Exact.Total)
		}
	}
	for _, n := range r.Unmatched {
		fmt.Fprintf(w, "  %s: FAIL no counterpart in B\n", n)
	}
	if bi := r.Bisect; bi != nil {
		if bi.First == nil {
			fmt.Fprintf(w, "bisect: %d of %d nodes checked, none diverges\n", bi.NodesChecked, bi.NodesTotal)
		} else {
			fmt.Fprintf(w, "bisect: %d of %d nodes checked; first divergent node %q (%s)\n", bi.NodesChecked, bi.NodesTotal, bi.First.Node, bi.First.OpType)
			for _, in := range bi.First.Inputs {
				fmt.Fprintf(w, "    input %s (%s): %s\n", in.Name, in.Kind, in.Status)
			}
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
