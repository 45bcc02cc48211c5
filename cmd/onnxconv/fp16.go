package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/pipeline"
)

// newFP16Cmd returns `onnxconv fp16 IN OUT`.
func newFP16Cmd() *cobra.Command {
	var (
		tf               transformFlags
		keepIO, bf16, nv bool
		block            string
		rounds           int
	)
	cmd := &cobra.Command{
		Use:   "fp16 IN OUT",
		Short: "Convert weights and compute to float16 (or bfloat16), checked, with automatic float32 fallback",
		Long: `Convert IN's float32 weights and compute to float16 (--bf16: bfloat16) and
write OUT. Ops in the block list stay in float32, with Casts between. The
converted model is run by the built-in executor on the verification inputs
and compared with IN (tolerance profile fp16: rtol 1e-2, atol 1e-3; bf16:
rtol 4e-2, atol 1e-2). While an output diverges, the first diverging node is
found by bisection, kept in float32 and the model converted again; the
report names each kept node and why.

Default block list (--block replaces it; --block "" blocks nothing):
  ` + strings.Join(passes.DefaultFP16Block, ", "),
		Example: `  onnxconv fp16 model.onnx model.fp16.onnx --keep-io-types
  onnxconv fp16 model.onnx model.bf16.onnx --bf16 --block ReduceMean,Softmax`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := tf.load(args[0], args[1])
			if err != nil {
				return err
			}
			defer func() { _ = m.Close() }()
			opts := passes.FP16Options{KeepIOTypes: keepIO, BF16: bf16, MaxRounds: rounds}
			if cmd.Flags().Changed("block") {
				opts.Block = []string{}
				for _, op := range strings.Split(block, ",") {
					if op = strings.TrimSpace(op); op != "" {
						opts.Block = append(opts.Block, op)
					}
				}
			}
			if !nv {
				if opts.Check, err = tf.check(m); err != nil {
					return err
				}
			}
			res, rep, err := passes.Float16(cmd.Context(), m, opts)
			if err != nil {
				return invalid(fmt.Errorf("fp16 %s: %w", args[0], err))
			}
			defer func() { _ = res.Close() }()
			if err := tf.writeReport(rep); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, k := range rep.Kept {
				fmt.Fprintf(w, "kept in float32: %s (%s): %s\n", k.Node, k.OpType, k.Reason)
			}
			if !rep.Equivalent {
				return invalid(fmt.Errorf("fp16 %s: still not within tolerance after %d rounds: %s; nothing was written", args[0], rep.Rounds, rep.Final.Summary))
			}
			if err := pipeline.Save(args[1], res, pipeline.SaveOptions{}); err != nil {
				return pipelineError(err)
			}
			fmt.Fprintf(w, "%s: %s, %d nodes converted, %d blocked, %d kept by the fallback; initializer bytes %d -> %d\n",
				args[1], rep.Type, rep.Converted, rep.Blocked, len(rep.Kept), rep.Before.Bytes, rep.After.Bytes)
			if rep.MaxAbs >= 0 {
				fmt.Fprintf(w, "verified against %s: max abs error %.3g, max rel error %.3g\n", args[0], rep.MaxAbs, rep.MaxRel)
			}
			return nil
		},
	}
	tf.add(cmd, "fp16")
	cmd.Flags().BoolVar(&keepIO, "keep-io-types", false, "keep float32 graph inputs and outputs")
	cmd.Flags().BoolVar(&bf16, "bf16", false, "convert to bfloat16 instead of float16")
	cmd.Flags().StringVar(&block, "block", "", "comma-separated op types kept in float32 (replaces the default list)")
	cmd.Flags().IntVar(&rounds, "max-rounds", 32, "most fallback rounds")
	cmd.Flags().BoolVar(&nv, "no-verify", false, "convert once, unchecked (no fallback)")
	return cmd
}
