package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/infer"
	"github.com/onnxconv/onnxconv/pipeline"
)

// newInferCmd returns `onnxconv infer MODEL -o OUT`: type and shape
// inference, writing the model with value_info for every value whose type
// could be inferred.
func newInferCmd() *cobra.Command {
	var (
		out      string
		strict   bool
		symbolic bool
		wf       writeFlags
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "infer MODEL -o OUT",
		Short: "Infer the type and shape of every value and write them as value_info",
		Long: `Run type and shape inference over MODEL (main graph, subgraphs and
model-local functions) and write the result to OUT with a value_info entry
for every value whose type was inferred. Symbolic dims (a batch dim named N)
are kept; shapes that depend on constant values (Reshape targets, Slice
bounds, Shape->Gather->Concat chains, ...) are resolved by constant
evaluation.

OUT is written as convert writes: with external data when MODEL had it or
OUT would exceed 2 GiB (--no-external-data keeps every tensor inside).

Nodes whose output could not be inferred, and inferred types that conflict
with declared ones, are listed on stderr. With --strict a conflict is an
error (exit code 1) and nothing is written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return badInput(fmt.Errorf("infer: -o OUT is required"))
			}
			m, err := canonical.Load(args[0], canonical.LoadOptions{})
			if err != nil {
				return badInput(fmt.Errorf("infer: %w", err))
			}
			defer m.Close()
			res, err := infer.Infer(m, infer.Options{Strict: strict, SymbolicNames: symbolic})
			if err != nil {
				return invalid(fmt.Errorf("infer %s: %w", args[0], err))
			}
			if err := pipeline.Save(out, m, wf.save(nil)); err != nil {
				return badInput(fmt.Errorf("infer: writing %s: %w", out, err))
			}
			if !quiet {
				errw := cmd.ErrOrStderr()
				for _, is := range res.Issues {
					fmt.Fprintf(errw, "warning: %s: %s\n", args[0], is)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d values with full type and shape, %d with a partial type, %d untyped; %d value_info entries added\n",
					out, res.Typed, res.Partial, len(res.Untyped), res.Added)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the model with inferred value_info (required)")
	cmd.Flags().BoolVar(&strict, "strict", false, "fail when an inferred type conflicts with a declared one")
	cmd.Flags().BoolVar(&symbolic, "symbolic-names", false, "name new unknown dims unk__0, unk__1, ... instead of leaving them unnamed")
	wf.registerExternal(cmd.Flags())
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print nothing on success")
	return cmd
}
