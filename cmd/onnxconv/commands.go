package main

import (
	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/pipeline"
)

// commands lists the subcommands; each lives in its own file.
func commands() []*cobra.Command {
	builtins := pipeline.BuiltinPlugins()
	return []*cobra.Command{
		newOpsCmd(), newTargetsCmd(),
		newInspectCmd(), newCheckCmd(), newConvertCmd(builtins),
		newOpsetCmd(), newInferCmd(),
		newRunCmd(), newTestCmd(), newTestWorkerCmd(),
		newVerifyCmd(builtins),
		newBatchCmd(builtins),
		newBenchCmd(),
		newOptimizeCmd(), newFP16Cmd(), newQuantizeCmd(),
		newFormatsCmd(builtins), newPluginsCmd(builtins), newPluginServeCmd(builtins),
		newRuntimesCmd(),
	}
}
