package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	schemacheck "github.com/onnxconv/onnxconv/canonical/check"
)

// newCheckCmd returns `onnxconv check MODEL`: exit 0 when the model is
// structurally valid, 1 listing every problem when it is not, 2 when it
// cannot be read.
func newCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check MODEL",
		Short: "Check that a model is structurally valid",
		Long: `Read MODEL (.onnx or .onnxtxt) and check its structure: ir_version and
opset_import, names defined once, every input defined, no cycle,
topological order, every node with an op_type, tensor data matching dims,
external data inside the model's folder; and every node against its
operator schema at the model's opset: the op exists, arity, attribute
names, types and required ones, type constraints, subgraph scoping.

Exit status: 0 valid, 1 invalid (every problem is listed), 2 unreadable.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			m, err := loadModel(path, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer m.Close()
			probs := canonical.Validate(m)
			if len(m.OpsetImports) > 0 {
				// Without opset_import every node would also fail its
				// schema lookup: the structural problem says it once.
				probs = append(probs, schemacheck.Schema(m)...)
			}
			out := cmd.OutOrStdout()
			if len(probs) == 0 {
				nodes := 0
				if m.Graph != nil {
					nodes = len(m.Graph.Nodes)
				}
				fmt.Fprintf(out, "%s: valid (IR version %d, %d nodes)\n", path, m.IRVersion, nodes)
				return nil
			}
			for _, p := range probs {
				fmt.Fprintf(out, "%s: %v\n", path, p)
			}
			return invalid(fmt.Errorf("%s: the model is invalid: %d problem(s) listed above", path, len(probs)))
		},
	}
}
