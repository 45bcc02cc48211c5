package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// transformFlags are the flags optimize, fp16 and quantize share.
type transformFlags struct {
	inputs  string
	samples int
	seed    uint64
	report  string
	force   bool
}

func (f *transformFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&f.inputs, "inputs", "", "folder of verification input samples (input_N.pb, NAME.npy, test_data_set_N/...); default: generated")
	cmd.Flags().IntVar(&f.samples, "samples", 2, "number of generated verification samples")
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "seed of generated verification inputs")
	cmd.Flags().StringVar(&f.report, "report", "", "write the "+what+" report as JSON to FILE")
	cmd.Flags().BoolVar(&f.force, "force", false, "let OUT replace IN")
}

// load reads IN, refusing an OUT that would replace it without --force.
func (f *transformFlags) load(in, out string) (*canonical.Model, error) {
	if !f.force && sameFile(in, out) {
		return nil, badInput(fmt.Errorf("%s: the output would overwrite the input; choose another output, or pass --force", out))
	}
	m, err := pipeline.Load(in, pipeline.LoadOptions{})
	if err != nil {
		return nil, pipelineError(err)
	}
	return m, nil
}

// check returns the verification setup for m.
func (f *transformFlags) check(m *canonical.Model) (*passes.Check, error) {
	c := &passes.Check{Samples: f.samples, Gen: verify.GenOptions{Seed: f.seed}}
	if f.inputs != "" {
		s, err := tensorio.LoadSamples(f.inputs, "input", verify.GraphInputs(m), false)
		if err != nil {
			return nil, badInput(fmt.Errorf("inputs: %w", err))
		}
		c.Inputs = s
	}
	return c, nil
}

func (f *transformFlags) writeReport(v any) error {
	if f.report == "" {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return badInput(fmt.Errorf("report: %w", err))
	}
	if err := canonical.WriteFileAtomic(f.report, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return badInput(fmt.Errorf("report: %w", err))
	}
	return nil
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// newOptimizeCmd returns `onnxconv optimize IN OUT`.
func newOptimizeCmd() *cobra.Command {
	var (
		tf        transformFlags
		list      string
		check     bool
		foldLimit int64
		opsetMax  int64
	)
	cmd := &cobra.Command{
		Use:   "optimize IN OUT",
		Short: "Simplify a model with passes that keep its numbers, each checked by the executor",
		Long: `Apply graph passes to IN and write the result to OUT. Each pass runs on a
copy of the model; with --verify (the default) the copy is run by the
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
			m, err := tf.load(args[0], args[1])
			if err != nil {
				return err
			}
			defer func() { _ = m.Close() }()
			opts := passes.RunOptions{
				Options: passes.Options{FoldLimit: foldLimit, Opset: opsetMax},
				Logf: func(format string, a ...any) {
					fmt.Fprintf(cmd.ErrOrStderr(), "  "+format+"\n", a...)
				},
			}
			if check {
				if opts.Check, err = tf.check(m); err != nil {
					return err
				}
			}
			res, rep, err := passes.Run(cmd.Context(), m, ps, opts)
			if err != nil {
				return invalid(fmt.Errorf("optimize %s: %w", args[0], err))
			}
			defer func() { _ = res.Close() }()
			if err := tf.writeReport(rep); err != nil {
				return err
			}
			if rep.Final != nil && !rep.Final.Equivalent {
				return invalid(fmt.Errorf("optimize %s: the result is not equivalent to the input: %s; nothing was written", args[0], rep.Final.Summary))
			}
			if err := pipeline.Save(args[1], res, pipeline.SaveOptions{}); err != nil {
				return pipelineError(err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s: nodes %d -> %d, initializer bytes %d -> %d\n", args[1], rep.Before.Nodes, rep.After.Nodes, rep.Before.Bytes, rep.After.Bytes)
			if rep.MaxAbs >= 0 {
				fmt.Fprintf(w, "verified against %s: max abs error %.3g, max rel error %.3g\n", args[0], rep.MaxAbs, rep.MaxRel)
			}
			for _, p := range rep.RolledBack() {
				fmt.Fprintf(w, "rolled back %s: %s\n", p.Name, p.Reason)
			}
			return nil
		},
	}
	tf.add(cmd, "per-pass")
	cmd.Flags().StringVar(&list, "passes", "", "comma-separated passes to run, in order (default: all)")
	cmd.Flags().BoolVar(&check, "verify", true, "check every pass on the executor and roll back those that change an output (--verify=false: apply unchecked)")
	cmd.Flags().Int64Var(&foldLimit, "fold-limit", passes.DefaultFoldLimit, "largest tensor in bytes that constant folding writes")
	cmd.Flags().Int64Var(&opsetMax, "max-opset", 0, "highest ai.onnx opset the fusions may use ops of (default: the model's)")
	return cmd
}

func passList() string {
	var b strings.Builder
	for _, p := range passes.Builtin() {
		fmt.Fprintf(&b, "  %-24s %s\n", p.Name, p.Doc)
	}
	return b.String()
}
