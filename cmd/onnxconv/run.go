package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/executor/onnxio"
	"github.com/onnxconv/onnxconv/verify/backendtest"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// newRunCmd returns `onnxconv run MODEL --inputs DIR -o DIR`.
func newRunCmd() *cobra.Command {
	var inDir, outDir, backend string
	cmd := &cobra.Command{
		Use:   "run MODEL --inputs DIR -o DIR",
		Short: "Run a model with the built-in executor",
		Long: `Run MODEL on the inputs in DIR and write output_N.pb (TensorProto, in
graph-output order) to the output folder. Inputs are input_N.pb files in
graph-input order (TensorProto, SequenceProto or OptionalProto as the input
type says) or NAME.npy files named after the graph inputs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if inDir == "" || outDir == "" {
				return badInput(fmt.Errorf("run: --inputs and -o are required"))
			}
			m, err := onnxio.LoadModel(args[0])
			if err != nil {
				return badInput(err)
			}
			defer m.Close()
			ex, err := executor.New(m, executor.Options{Backend: backend})
			if err != nil {
				return invalid(err)
			}
			defer ex.Close()
			ins, err := readRunInputs(inDir, ex.Inputs())
			if err != nil {
				return badInput(err)
			}
			outs, err := ex.RunValues(cmd.Context(), ins)
			if err != nil {
				return invalid(fmt.Errorf("run %s: %w", args[0], err))
			}
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				return badInput(fmt.Errorf("run: %w", err))
			}
			for i, o := range outs {
				p := filepath.Join(outDir, "output_"+strconv.Itoa(i)+".pb")
				if o.Tensor == nil {
					return invalid(fmt.Errorf("run: output %d is a sequence or optional; only tensors can be written", i))
				}
				if err := onnxio.WriteTensorFile(p, o.Tensor); err != nil {
					return badInput(err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d outputs to %s\n", len(outs), outDir)
			return nil
		},
	}
	cmd.Flags().StringVar(&inDir, "inputs", "", "folder of input_N.pb or NAME.npy files")
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "folder to write output_N.pb to")
	cmd.Flags().StringVar(&backend, "backend", "", "GoMLX backend (default: go, or $"+executor.BackendEnv+")")
	return cmd
}

func readRunInputs(dir string, inputs []*canonical.Value) ([]*executor.Value, error) {
	vals := make([]*executor.Value, len(inputs))
	for i, v := range inputs {
		pb := filepath.Join(dir, "input_"+strconv.Itoa(i)+".pb")
		npy := filepath.Join(dir, safeName(v.Name)+".npy")
		switch {
		case fileExists(pb):
			x, err := backendtest.ReadValue(pb, v.Type)
			if err != nil {
				return nil, err
			}
			vals[i] = x
		case fileExists(npy):
			t, err := tensorio.ReadNpyFile(npy)
			if err != nil {
				return nil, err
			}
			vals[i] = executor.TensorValue(t)
		default:
			return nil, fmt.Errorf("run: no input for %q: neither %s nor %s exists", v.Name, pb, npy)
		}
	}
	return vals, nil
}

func safeName(s string) string {
	return strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(s)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
