package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/pipeline"
)

// newRunCmd returns `onnxconv run MODEL --inputs DIR -o DIR`, a thin shell
// over pipeline.Run.
func newRunCmd() *cobra.Command {
	var inDir, outDir, backend string
	var threads int
	var dims []string
	cmd := &cobra.Command{
		Use:   "run MODEL [--inputs DIR | --dim N=V] -o DIR",
		Short: "Run a model with the built-in executor",
		Long: `Run MODEL on the inputs in DIR and write output_N.pb (TensorProto, in
graph-output order) to the output folder. Inputs are found as verification
inputs are: NAME.pb or NAME.npy named after the graph inputs, else
input_N.pb or input_N.npy in graph-input order; without --inputs they are
generated (symbolic dims from --dim, else 1). Sequence and optional
inputs are input_N.pb files holding a SequenceProto or OptionalProto.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outDir == "" {
				return badInput(fmt.Errorf("run: -o is required"))
			}
			d, err := pipeline.ParseDims(dims)
			if err != nil {
				return badInput(fmt.Errorf("run: %w", err))
			}
			res, err := pipeline.Run(cmd.Context(), args[0], pipeline.RunOptions{Inputs: inDir, OutDir: outDir, Backend: backend, Threads: threads, Dims: d, Importers: builtin.Registry()})
			if err != nil {
				return pipelineError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d outputs to %s\n", len(res.Files), outDir)
			return nil
		},
	}
	cmd.Flags().StringVar(&inDir, "inputs", "", "folder of NAME.pb, NAME.npy, input_N.pb or input_N.npy files (default: generated)")
	cmd.Flags().StringArrayVar(&dims, "dim", nil, "symbolic dim value for generated inputs, NAME=N or INPUT:AXIS=N (repeatable)")
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "folder to write output_N.pb to")
	cmd.Flags().StringVar(&backend, "backend", "", "GoMLX backend (default: go, or $"+executor.BackendEnv+")")
	cmd.Flags().IntVar(&threads, "threads", 0, "executor kernel threads (0: all cores)")
	return cmd
}
