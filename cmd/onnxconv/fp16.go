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
		tf           transformFlags
		keepIO, bf16 bool
		block        string
		rounds       int
	)
	cmd := &cobra.Command{
		Use:   "fp16 IN OUT",
		Short: "Convert weights and compute to float16 (or bfloat16), checked, with automatic float32 fallback",
		Long: `Convert IN's float32 weights and compute to float16 (--bf16: bfloat16) and
write OUT. Ops in the block list stay in float32, with Casts between; so do
nodes whose op schema at the model's opset has no such type (Where in
bfloat16 before opset 16) and nodes ONNX Runtime 1.30's CPU kernels do not
run in it (in bfloat16 most arithmetic: MatMul, Add, Div...), so that OUT
loads in ONNX Runtime. --bf16 needs opset 13 or later. The
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
			opts := passes.FP16Options{KeepIOTypes: keepIO, BF16: bf16, MaxRounds: rounds}
			if cmd.Flags().Changed("block") {
				opts.Block = []string{}
				for _, op := range strings.Split(block, ",") {
					if op = strings.TrimSpace(op); op != "" {
						opts.Block = append(opts.Block, op)
					}
				}
			}
			o, err := tf.options()
			if err != nil {
				return badInput(fmt.Errorf("fp16: %w", err))
			}
			rep, err := pipeline.Float16(cmd.Context(), args[0], args[1], opts, o)
			w := cmd.OutOrStdout()
			if rep != nil {
				_ = rep.WriteKept(w)
				printVerdict(w, rep.Final, rep.Map, args[0], o.Unchecked)
			}
			if err != nil {
				return pipelineError(err)
			}
			return rep.WriteText(w, args[0], args[1])
		},
	}
	tf.add(cmd, "fp16")
	cmd.Flags().BoolVar(&keepIO, "keep-io-types", false, "keep float32 graph inputs and outputs")
	cmd.Flags().BoolVar(&bf16, "bf16", false, "convert to bfloat16 instead of float16")
	cmd.Flags().StringVar(&block, "block", "", "comma-separated op types kept in float32 (replaces the default list)")
	cmd.Flags().IntVar(&rounds, "max-rounds", 32, "most fallback rounds")
	return cmd
}
